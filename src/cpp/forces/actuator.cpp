// PFAFF_FORCE(Actuator, 0, 0)
// MuJoCo's affine actuator (pfaff.simulate.actuators.ActuatorForce) on a transmission
// s = gear (sum_j c_j q_j + offset), s' = gear sum_j c_j v_j:
//   f = clamp((g0 + g1 s + g2 s') ctrl + b0 + b1 s + b2 s', flo, fhi),  Q_j = gear c_j f,
// its power f s'; ctrl is the one System::set_ctrl set last (ForceSet::set_ctrl, index
// ictrl). Partials: f' = (g1 ctrl + b1) in s, (g2 ctrl + b2) in s' where f is inside its
// range, else 0: dQ_j/d delta_l = gear^2 c_j c_l (g1 ctrl + b1), and in v likewise.
#include <algorithm>

#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  namespace
  {
    // the force at (q, v) before its range is applied, and the transmission's rate s'
    double unclamped(const ForceSpec & s, const VecX & q, const VecX & v, double & rate)
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
      return (s.g0 + s.g1 * len + s.g2 * rate) * s.ctrl + s.b0 + s.b1 * len + s.b2 * rate;
    }
  } // namespace

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
  }

  bool Actuator(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    double rate;
    const double f = std::min(std::max(unclamped(s, x.q, x.v, rate), s.flo), s.fhi);
    for (size_t j = 0; j < s.coefs.size(); ++j)
      out.Q(s.ivs[j]) += s.gear * s.coefs[j] * f;
    out.power += f * rate;
    return true;
  }

  void partials_Actuator(const ForceSpec & s, Partials & p)
  {
    double rate;
    const double f = unclamped(s, *p.q, *p.v, rate);
    if (!(f > s.flo && f < s.fhi))
      return; // clamped: constant in q and v
    const double fs = s.g1 * s.ctrl + s.b1, fr = s.g2 * s.ctrl + s.b2;
    for (size_t j = 0; j < s.coefs.size(); ++j)
      for (size_t l = 0; l < s.coefs.size(); ++l)
      {
        const double cc = s.gear * s.gear * s.coefs[j] * s.coefs[l];
        p.dQq(s.ivs[j], s.ivs[l]) += cc * fs;
        p.dQv(s.ivs[j], s.ivs[l]) += cc * fr;
      }
  }
} // namespace pfaff::force_elements
