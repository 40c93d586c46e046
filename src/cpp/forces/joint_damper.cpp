// PFAFF_FORCE(JointDamper, 0, 0)
// A damper on one joint coordinate (pfaff.simulate.forces_joint.JointDamper):
// Q_i = -c v_i, its power Q_i v_i;  dQ_i/dv_i = -c
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_JointDamper(const Model & mo, const ForceSpec & s, const Check & c)
  {
    c.index(s.iq, mo.model.nq, "spec.iq", "a q index (nq)");
    c.index(s.iv, mo.model.nv, "spec.iv", "a v index (nv)");
  }

  bool JointDamper(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    const double f = -s.c * x.v(s.iv);
    out.Q(s.iv) += f;
    out.power += f * x.v(s.iv);
    return true;
  }

  void partials_JointDamper(const ForceSpec & s, Partials & p) { p.dQv(s.iv, s.iv) -= s.c; }
} // namespace pfaff::force_elements
