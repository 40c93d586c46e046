// The held sets' force problems as plain functions of arrays (algorithms/pushing_forces.hpp),
// for their tests: a push row is (row, sign), a cone (n, t1, mu), each checked here.
#include <string>
#include <tuple>
#include <vector>

#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "algorithms/pushing_forces.hpp"
#include "bindings/bind.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using pfaff::Check;
using pfaff::GMat;
using pfaff::GVec;

namespace
{
  using Rows = std::vector<std::tuple<int, double>>;
  using Cones = std::vector<std::tuple<int, int, double>>;

  // rows and cones within m multipliers: a sign of +-1, a cone's tangential pair inside
  void conditions(const Check & c, long m, const Rows & push, const Cones & cones,
                  std::vector<pfaff::PushRow> & p, std::vector<pfaff::ConeRows> & k)
  {
    for (const auto & [row, sign] : push)
    {
      c.index(row, m, "push row", "a multiplier's index");
      if (sign != 1.0 && sign != -1.0)
        c.fail("push sign " + std::to_string(sign) + ": -1 (pushes with lambda <= 0) or 1");
      p.push_back(pfaff::PushRow{row, sign});
    }
    for (const auto & [n, t1, mu] : cones)
    {
      c.index(n, m, "cone n", "its normal multiplier's index");
      c.index(t1, m - 1, "cone t1", "the first of its two tangential multipliers");
      c.number(mu, "cone mu", 0.0, false);
      k.push_back(pfaff::ConeRows{n, t1, mu});
    }
  }
} // namespace

namespace pfaff
{
  void bind_held_forces(nb::module_ & m)
  {
    m.def(
      "unilateral_forces",
      [](const GMat & S, const GVec & r, const Rows & push, const Cones & cones, double tol) {
        const Check c{"unilateral_forces"};
        c.mat(S, -1, -1, "S", "m x m, A M^-1 A^T");
        c.mat(S, S.x.rows(), S.x.rows(), "S", "square").vec(r, S.x.rows(), "r", "m");
        c.number(tol, "tol", 0.0, true);
        std::vector<PushRow> p;
        std::vector<ConeRows> k;
        conditions(c, long(S.x.rows()), push, cones, p, k);
        VecX lam;
        const bool ok = unilateral_forces(S, r, p, k, tol, lam);
        return std::make_tuple(ok, ok ? lam : VecX());
      },
      "S"_a, "r"_a, "push"_a, "cones"_a, "tol"_a,
      "(solved, lambda): the minimiser of 1/2 lambda^T S lambda - r^T lambda with each push "
      "row (row, sign) pushing (sign lambda >= 0) and each cone (n, t1, mu) holding "
      "(|lambda[t1:t1+2]| <= -mu lambda[n], eight tangent planes); S symmetric PSD");
    m.def(
      "pushing_forces",
      [](const GMat & W, const GVec & lam0, const Rows & push, const Cones & cones,
         double rank_tol, double tol) {
        const Check c{"pushing_forces"};
        c.mat(W, -1, -1, "W", "m x nv, the rows");
        c.vec(lam0, W.x.rows(), "lam0", "m");
        c.number(rank_tol, "rank_tol", 0.0, false).number(tol, "tol", 0.0, true);
        std::vector<PushRow> p;
        std::vector<ConeRows> k;
        conditions(c, long(W.x.rows()), push, cones, p, k);
        VecX lam;
        const bool ok = pushing_forces(W, lam0, p, k, rank_tol, tol, lam);
        return std::make_tuple(ok, ok ? lam : VecX());
      },
      "W"_a, "lam0"_a, "push"_a, "cones"_a, "rank_tol"_a, "tol"_a,
      "(found, lambda): the multipliers nearest lam0 with W^T lambda = W^T lam0 under which "
      "each push row pushes and each cone holds, to tol");
  }
} // namespace pfaff
