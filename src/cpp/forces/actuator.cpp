// PFAFF_FORCE(Actuator, 0, 0)
// MuJoCo's affine actuator (pfaff.simulate.actuators.ActuatorForce) on a transmission
// s = gear (sum_j c_j q_j + offset), s' = gear sum_j c_j v_j:
//   f = clamp((g0 + g1 s + g2 s') ctrl + b0 + b1 s + b2 s', flo, fhi),  Q_j = gear c_j f,
// its power f s'; ctrl is the one System::set_ctrl set last (ForceSet::set_ctrl, index
// ictrl). Partials: f' = (g1 ctrl + b1) in s, (g2 ctrl + b2) in s' where f is inside its
// range, else 0: dQ_j/d delta_l = gear^2 c_j c_l (g1 ctrl + b1), and in v likewise.
// With activation dynamics (dyn > 0, MuJoCo's dyntype) the gain multiplies the
// activation act(t) instead of ctrl. ctrl is held from t0 (act0 then), so act is the
// exact solution of its linear ODE at the state's time t (u = t - t0, plus early with
// actearly: the run's step dt, MuJoCo's next activation), clamped to [alo, ahi]:
//   integrator  act' = ctrl:              act = act0 + ctrl u
//   filter(exact) act' = (ctrl - act)/tau: act = ctrl + (act0 - ctrl) exp(-u / tau)
// (a monotone solution clamped is the clamped ODE's solution while act0 is in range).
#include <algorithm>
#include <cmath>

#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  namespace
  {
    // the activation u >= 0 seconds after act0 (see above)
    double after(const ForceSpec & s, double u)
    {
      const double act = s.dyn == 1 ? s.act0 + s.ctrl * u
                                    : s.ctrl + (s.act0 - s.ctrl) * std::exp(-u / s.tau_act);
      return std::min(std::max(act, s.alo), s.ahi);
    }

    // what the gain multiplies at time t: ctrl, or the activation then (actearly: one
    // step ahead)
    double input(const ForceSpec & s, double t)
    {
      return s.dyn == 0 ? s.ctrl : after(s, std::max(t - s.t0, 0.0) + s.early);
    }

    // the force at (q, v) for the gain's input u (input(s, t)) before its range is
    // applied, and the transmission's rate s'
    double unclamped(
      const ForceSpec & s, const VecX & q, const VecX & v, double u, double & rate)
    {
      double len = s.offset;
      rate = 0.0;
      for (size_t j = 0; j < s.coefs.size(); ++j)
      {
        len += s.coefs[j] * q(s.iqs[j]);
        rate += s.coefs[j] * v(s.ivs[j]);
      }
      len *= s.gear;
      rate *= s.gear;
      return (s.g0 + s.g1 * len + s.g2 * rate) * u + s.b0 + s.b1 * len + s.b2 * rate;
    }
  } // namespace

  double activation(const ForceSpec & s, double t)
  {
    return s.dyn == 0 ? s.ctrl : after(s, std::max(t - s.t0, 0.0));
  }

  void check_Actuator(const Model & mo, const ForceSpec & s, const Check & c)
  {
    c.index(s.ictrl, 1L << 30, "spec.ictrl", "the actuator's index in ctrl");
    if (s.coefs.empty())
      c.fail("spec.coefs: an actuator needs one joint of its transmission at least");
    check_coordinates(mo, s, c);
    for (const double x : {s.gear, s.offset, s.g0, s.g1, s.g2, s.b0, s.b1, s.b2, s.ctrl})
      c.number(x, "spec.gear, offset, g0, g1, g2, b0, b1, b2, ctrl", -HUGE_VAL, false);
    if (std::isnan(s.flo) || std::isnan(s.fhi) || !(s.flo <= s.fhi))
      c.fail("spec.flo, spec.fhi: a force range lo <= hi (-inf, inf: none)");
    if (s.dyn < 0 || s.dyn > 3)
      c.fail("spec.dyn = " + std::to_string(s.dyn)
             + ": 0 none, 1 integrator, 2 filter, 3 filterexact");
    if (s.dyn > 0)
    {
      c.index(s.iact, 1L << 30, "spec.iact", "the actuator's index in act");
      if (s.dyn > 1)
        c.number(s.tau_act, "spec.tau_act (the filter's time constant [s])", 0.0, true);
      for (const double x : {s.act0, s.t0, s.early})
        c.number(x, "spec.act0, t0, early", -HUGE_VAL, false);
      if (s.early < 0.0)
        c.fail("spec.early: actearly's step dt >= 0 (0: the activation now)");
      if (std::isnan(s.alo) || std::isnan(s.ahi) || !(s.alo <= s.ahi))
        c.fail("spec.alo, spec.ahi: an activation range lo <= hi (-inf, inf: none)");
    }
  }

  bool Actuator(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    double rate;
    const double f =
      std::min(std::max(unclamped(s, x.q, x.v, input(s, x.t), rate), s.flo), s.fhi);
    for (size_t j = 0; j < s.coefs.size(); ++j)
      out.Q(s.ivs[j]) += s.gear * s.coefs[j] * f;
    out.power += f * rate;
    return true;
  }

  void partials_Actuator(const ForceSpec & s, Partials & p)
  {
    double rate;
    const double u = input(s, p.t);
    const double f = unclamped(s, *p.q, *p.v, u, rate);
    if (!(f > s.flo && f < s.fhi))
      return; // clamped: constant in q and v
    const double fs = s.g1 * u + s.b1, fr = s.g2 * u + s.b2;
    for (size_t j = 0; j < s.coefs.size(); ++j)
      for (size_t l = 0; l < s.coefs.size(); ++l)
      {
        const double cc = s.gear * s.gear * s.coefs[j] * s.coefs[l];
        p.dQq(s.ivs[j], s.ivs[l]) += cc * fs;
        p.dQv(s.ivs[j], s.ivs[l]) += cc * fr;
      }
  }
} // namespace pfaff::force_elements

namespace pfaff
{
  void ForceSet::activations(double t, Eigen::VectorXd & act) const
  {
    for (const auto & s : specs)
      if (s.iact >= 0 && s.iact < act.size())
        act(s.iact) = force_elements::activation(s, t);
  }
} // namespace pfaff
