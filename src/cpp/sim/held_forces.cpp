// The held set's multipliers at a sample of a limited run (friction.hpp): where held
// contact points are redundant the least-norm multipliers the dynamics solve for may pull
// at a point or put a stuck point's friction outside its cone while other multipliers of
// the same motion push inside every cone (a box's four corners under a load off its
// centre: the least-norm split pulls where the centre of pressure leaves the diamond
// of the corners, rigid contact holds it until the edge). Those are the contact forces;
// only where none exist does a point let go or slip (algorithms/pushing_forces.cpp).
#include "algorithms/pushing_forces.hpp"
#include "model/core.hpp"
#include "sim/friction.hpp"
#include "sim/system.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Cholesky>

namespace pfaff
{
  namespace
  {
    // the held rows' conditions in the active rows' numbering: each held row pushes, each
    // stuck point's force lies in its cone
    void held_conditions(
      const Model & mo, const Held & held, std::vector<PushRow> & push,
      std::vector<ConeRows> & cones)
    {
      const int L = int(mo.limits.size());
      for (std::size_t c = 0; c < held.size(); ++c)
      {
        const auto [i, side] = held[c];
        const int r = mo.loop.m + int(c);
        // a contact and a lower stop push with lambda <= 0, an upper stop with lambda >= 0
        push.push_back(PushRow{r, i < L && side == 1 ? 1.0 : -1.0});
        if (i < L)
          continue;
        if (const int t1 = stick_row(mo, held, c); t1 >= 0)
          cones.push_back(ConeRows{r, t1, mo.contact_pairs[std::size_t(i - L)].mu});
      }
    }
  } // namespace

  bool push_held(System & s, const Held & held, double tol)
  {
    const Model & mo = s.mo();
    Data & d = s.d();
    const int L = int(mo.limits.size());
    // with no contact held the least-norm rule stands (a limited run's, as the NumPy
    // reference's)
    if (std::none_of(held.begin(), held.end(), [&](const auto & h) { return h.first >= L; }))
      return false;
    std::vector<PushRow> push;
    std::vector<ConeRows> cones;
    held_conditions(mo, held, push, cones);
    if (push_violation(d.lam_, push, cones) <= tol)
      return false;
    MatX W;
    if (mo.slip.empty())
      W = d.A;
    else // a slipping point's row carries its friction (algorithms/friction.cpp)
      slip_rows(mo, d, s.state().v_, W);
    VecX lam;
    if (!pushing_forces(W, d.lam_, push, cones, mo.opt.rank_tol, tol, lam))
      return false;
    d.lam_ = lam;
    return true;
  }

  std::vector<std::size_t> separating(System & s, const Held & held, double tol)
  {
    const Model & mo = s.mo();
    Data & d = s.d();
    const int L = int(mo.limits.size());
    // a slipping point's friction makes the problem non-symmetric (not built): and with
    // no contact held a limited run keeps its reference's rule (one release at a time)
    if (!mo.slip.empty()
        || std::none_of(held.begin(), held.end(), [&](const auto & h) { return h.first >= L; }))
      return {};
    std::vector<PushRow> push;
    std::vector<ConeRows> cones;
    held_conditions(mo, held, push, cones);
    const Eigen::LLT<MatX> llt(dense_M(mo, d));
    const MatX MiAt = llt.solve(d.A.transpose());
    const MatX S = d.A * MiAt;
    const VecX r = d.A * llt.solve(VecX(s.state().tau_ - d.h)) + d.drift;
    VecX lam;
    if (!unilateral_forces(S, r, push, cones, tol, lam))
      return {};
    const VecX w = r - S * lam; // the rows' accelerations
    // a row lets go where its multiplier is zero and it separates, each to the round-off
    // of the problem's largest term
    const double f_tol = std::max(tol, 1e-9 * lam.cwiseAbs().maxCoeff());
    const double a_tol = 1e-9 * std::max(1.0, r.cwiseAbs().maxCoeff());
    std::vector<std::size_t> out;
    for (std::size_t c = 0; c < held.size(); ++c)
    {
      const PushRow & p = push[c];
      if (std::abs(lam(p.row)) <= f_tol && -p.sign * w(p.row) > a_tol)
        out.push_back(c);
    }
    return out;
  }
} // namespace pfaff
