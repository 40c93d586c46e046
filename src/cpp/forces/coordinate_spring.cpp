// PFAFF_FORCE(CoordinateSpring, 0, 0)
// A spring on a linear combination of joint coordinates
// (pfaff.simulate.forces_joint.CoordinateSpring): s = sum_j c_j q_j - rest,
// Q_j = -k s c_j,  V = k s^2 / 2;  dQ_j/d delta_l = -k c_j c_l
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_CoordinateSpring(const Model & mo, const ForceSpec & s, const Check & c)
  {
    check_coordinates(mo, s, c);
  }

  bool CoordinateSpring(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    double e = -s.rest;
    for (size_t j = 0; j < s.coefs.size(); ++j)
      e += s.coefs[j] * x.q(s.iqs[j]);
    for (size_t j = 0; j < s.coefs.size(); ++j)
      out.Q(s.ivs[j]) -= s.k * e * s.coefs[j];
    out.V += 0.5 * s.k * e * e;
    return true;
  }

  void partials_CoordinateSpring(const ForceSpec & s, Partials & p)
  {
    for (size_t j = 0; j < s.coefs.size(); ++j)
      for (size_t l = 0; l < s.coefs.size(); ++l)
        p.dQq(s.ivs[j], s.ivs[l]) -= s.k * s.coefs[j] * s.coefs[l];
  }
} // namespace pfaff::force_elements
