// PFAFF_FORCE(JointSpring, 0, 0)
// A spring on one joint coordinate (pfaff.simulate.forces_joint.JointSpring):
// Q_i = -k (q_i - rest),  V = k (q_i - rest)^2 / 2;  dQ_i/d delta_i = -k
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_JointSpring(const Model & mo, const ForceSpec & s, const Check & c)
  {
    c.index(s.iq, mo.model.nq, "spec.iq", "a q index (nq)");
    c.index(s.iv, mo.model.nv, "spec.iv", "a v index (nv)");
  }

  bool JointSpring(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    const double e = x.q(s.iq) - s.rest;
    out.Q(s.iv) -= s.k * e;
    out.V += 0.5 * s.k * e * e;
    return true;
  }

  void partials_JointSpring(const ForceSpec & s, Partials & p) { p.dQq(s.iv, s.iv) -= s.k; }
} // namespace pfaff::force_elements
