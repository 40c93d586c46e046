// PFAFF_FORCE(TendonSpring, 0, 0)
// A fixed tendon's spring and damper, as MuJoCo's mj_passive applies them
// (pfaff.simulate.forces_tendon.TendonSpring): the length L = sum_j c_j q_j, the force
// f = -k (L - hi) above the dead band [lo, hi], -k (L - lo) below it, 0 inside, minus
// b Ldot; Q_j = c_j f. Without damping the spring's potential k (L - bound)^2 / 2 is
// its V, with damping the element's power Q . v. Partials: dQ_j/d delta_l = -k c_j c_l
// outside the band (0 inside), dQ_j/dv_l = -b c_j c_l
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_TendonSpring(const Model & mo, const ForceSpec & s, const Check & c)
  {
    check_coordinates(mo, s, c);
    if (s.coefs.empty())
      c.fail("spec.coefs is empty: a tendon has at least one joint");
    c.number(s.lo, "spec.lo", -HUGE_VAL, false);
    c.number(s.hi, "spec.hi", -HUGE_VAL, false);
    if (!(s.lo <= s.hi))
      c.fail("spec.lo = " + std::to_string(s.lo) + " > spec.hi = " + std::to_string(s.hi)
             + ": the dead band is [lo, hi], lo <= hi");
  }

  namespace
  {
    /// the stretch past the dead band: L - hi above it, L - lo below it, 0 inside
    double stretch(const ForceSpec & s, double L)
    {
      return L > s.hi ? L - s.hi : (L < s.lo ? L - s.lo : 0.0);
    }
  } // namespace

  bool TendonSpring(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    double L = 0.0, Ld = 0.0;
    for (size_t j = 0; j < s.coefs.size(); ++j)
    {
      L += s.coefs[j] * x.q(s.iqs[j]);
      Ld += s.coefs[j] * x.v(s.ivs[j]);
    }
    const double e = stretch(s, L);
    const double f = -s.k * e - s.c * Ld;
    for (size_t j = 0; j < s.coefs.size(); ++j)
      out.Q(s.ivs[j]) += s.coefs[j] * f;
    if (s.c == 0.0)
      out.V += 0.5 * s.k * e * e;
    else
      out.power += f * Ld;
    return true;
  }

  void partials_TendonSpring(const ForceSpec & s, Partials & p)
  {
    double L = 0.0;
    for (size_t j = 0; j < s.coefs.size(); ++j)
      L += s.coefs[j] * (*p.q)(s.iqs[j]);
    const double k = (L > s.hi || L < s.lo) ? s.k : 0.0;
    for (size_t j = 0; j < s.coefs.size(); ++j)
      for (size_t l = 0; l < s.coefs.size(); ++l)
      {
        p.dQq(s.ivs[j], s.ivs[l]) -= k * s.coefs[j] * s.coefs[l];
        p.dQv(s.ivs[j], s.ivs[l]) -= s.c * s.coefs[j] * s.coefs[l];
      }
  }
} // namespace pfaff::force_elements
