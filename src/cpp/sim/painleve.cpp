// Painleve's case of a slipping contact point (friction.hpp): Coulomb's force -mu f_n s
// on its normal row makes that row's multiplier pull, while without it the row pushes
// (the slipping rod of Painleve's paradox: no consistent force). The run locates the
// instant its multiplier with friction turns to pull (its first root over the step, as a
// slip's stop is located) and there sticks the point by a tangential impulse
// (friction.cpp's jam: an impact without collision, Genot and Brogliato 1999); so too
// where a step meets the pole between the two, the point's effective normal mass with
// friction passing through zero (pole).
#include "sim/friction.hpp"
#include "model/core.hpp"
#include "sim/limit_detail.hpp"
#include "sim/system.hpp"

#include <cmath>
#include <limits>

namespace pfaff
{
  namespace
  {
    // the System's terms and acceleration at (q, v) (a sample's)
    void accel_at(System & s, const VecX & q, const VecX & v)
    {
      start_terms(s.mo(), s.d(), q, v, false);
      s.d().st_.next();
      accel(s.mo(), s.d(), s.state().tau_, s.d().rs_, s.d().a_);
    }

    // the contact spec of Model::slip's k-th slipping row (its held entry's), -1 if none
    int slip_spec(const Model & mo, const Held & held, std::size_t k)
    {
      const std::size_t c = std::size_t(mo.slip[k].row - mo.loop.m);
      return c < held.size() ? held[c].second : -1;
    }
  } // namespace

  std::vector<int> painleve(const Model & mo, const Data & d, const Held & held, double tol)
  {
    std::vector<int> out;
    if (d.coulomb_lam_.size() != Eigen::Index(mo.slip.size()))
      return out;
    for (std::size_t k = 0; k < mo.slip.size(); ++k)
    {
      const int j = slip_spec(mo, held, k);
      if (j >= 0 && d.coulomb_lam_(Eigen::Index(k)) > tol && d.slip_lam_(mo.slip[k].row) < -tol)
        out.push_back(j);
    }
    return out;
  }

  std::vector<int> painleve_at(System & s, const Held & held, const VecX & q, const VecX & v,
                               double tol)
  {
    if (s.mo().slip.empty()) // no slipping point: no evaluation
      return {};
    accel_at(s, q, v);
    return painleve(s.mo(), s.d(), held, tol);
  }

  double jam_root(System & s, const Held & held, int j,
                  const std::function<bool(double, VecX &, VecX &)> & step, double h,
                  double event_tol)
  {
    const Model & mo = s.mo();
    long k = 0; // j's slipping row among Model::slip
    while (k < long(mo.slip.size()) && slip_spec(mo, held, std::size_t(k)) != j)
      ++k;
    if (k == long(mo.slip.size()))
      return std::numeric_limits<double>::quiet_NaN();
    auto g = [&](double x) { // its multiplier with friction: pushing below zero
      VecX q, v;
      if (!step(x, q, v))
        return -1.0;
      accel_at(s, q, v);
      const double lam = s.d().coulomb_lam_(k);
      return std::isfinite(lam) ? -lam : -1.0;
    };
    return first_root(g, 0.0, h, event_tol);
  }

  // Near the pole the normal force with friction grows as 1 / a_n and stops the slip
  // within a vanishing time: its limit is the jam's tangential impulse. An RK stage next
  // to the pole takes that force as an acceleration (1e7-1e8 m/s^2 on MuJoCo's humanoid)
  // and the step fails; the pole is located to the last step that does not.
  std::pair<int, double> pole(System & s, const Held & held,
                              const std::function<bool(double, VecX &, VecX &)> & step,
                              double x_bad, double event_tol)
  {
    const Model & mo = s.mo();
    VecX q, v, q_lo, v_lo; // the state after the last step that succeeds
    double lo = 0.0, hi = x_bad;
    if (!std::isfinite(x_bad) || !step(lo, q_lo, v_lo))
      return {-1, 0.0};
    while (hi - lo > event_tol)
    {
      const double mid = 0.5 * (lo + hi);
      if (!step(mid, q, v))
        hi = mid;
      else
      {
        lo = mid;
        q_lo.swap(q);
        v_lo.swap(v);
      }
    }
    if (mo.slip.empty())
      return {-1, lo};
    accel_at(s, q_lo, v_lo);
    if (s.d().coulomb_lam_.size() != Eigen::Index(mo.slip.size()))
      return {-1, lo};
    Eigen::Index k = 0;
    s.d().coulomb_lam_.cwiseAbs().maxCoeff(&k);
    return {slip_spec(mo, held, std::size_t(k)), lo};
  }
} // namespace pfaff
