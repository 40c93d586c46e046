// PFAFF_FORCE(GravityCompensation, 0, 1)
// Gravity compensation (pfaff.simulate.forces_joint.GravityCompensation): Q = g(q), the
// generalized gravity, V = -V_g(q); dQ/d delta = dg/dq (Pinocchio's derivative pass)
#include "algorithms/force_element.hpp"

#include "pinocchio/algorithm/rnea-derivatives.hpp"

namespace pfaff::force_elements
{
  void check_GravityCompensation(const Model &, const ForceSpec &, const Check &) {}

  bool GravityCompensation(const ForceSpec &, const State & x, ForceTerms & out)
  {
    out.Q += x.g;
    out.V -= x.Vg;
    return true;
  }

  void partials_GravityCompensation(const ForceSpec &, Partials & p)
  {
    const pinocchio::Model & model = *p.model;
    if (!p.gd)
      p.gd = std::make_unique<pinocchio::Data>(model);
    p.dg.setZero(model.nv, model.nv);
    pinocchio::computeGeneralizedGravityDerivatives(model, *p.gd, *p.q, p.dg);
    p.dQq += p.dg;
  }
} // namespace pfaff::force_elements
