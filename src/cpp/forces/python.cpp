// PFAFF_FORCE(Python, 0, 0)
// A force law written in Python (pfaff.simulate.python_law; ForceSpec::law, set by the
// binding's ForceSpec.set_law, which takes the GIL and checks what the law returns):
// Q(t, q, v) and the potential V it returns (a conservative law) or its power Q . v.
// It has no analytic partials: central differences of the law, q perturbed as
// integrate(q, +-h e_k), step h = 1e-6, as the NumPy reference's.
#include "algorithms/force_element.hpp"

#include "pinocchio/algorithm/joint-configuration.hpp"

namespace pfaff::force_elements
{
  void check_Python(const Model &, const ForceSpec & s, const Check & c)
  {
    if (!s.law)
      c.fail("a Python force element needs its law (ForceSpec.set_law)");
  }

  bool Python(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    out.Qe.setZero();
    const double Ve = (*s.law)(x.t, x.q, x.v, out.Qe);
    out.Q += out.Qe;
    if (s.conservative)
      out.V += Ve;
    else
      out.power += out.Qe.dot(x.v);
    return true;
  }

  void partials_Python(const ForceSpec & s, Partials & p)
  {
    const pinocchio::Model & model = *p.model;
    const VecX & q = *p.q;
    const VecX & v = *p.v;
    const int nv = model.nv;
    const double h = 1e-6, t = p.t;
    VecX e = VecX::Zero(nv), qp(model.nq), qm(model.nq), vp = v, vm = v;
    VecX Qp = VecX::Zero(nv), Qm = VecX::Zero(nv);
    for (int k = 0; k < nv; ++k)
    {
      e.setZero();
      e(k) = h;
      pinocchio::integrate(model, q, e, qp);
      pinocchio::integrate(model, q, -e, qm);
      (*s.law)(t, qp, v, Qp);
      (*s.law)(t, qm, v, Qm);
      p.dQq.col(k) += (Qp - Qm) / (2.0 * h);
      vp(k) = v(k) + h;
      vm(k) = v(k) - h;
      (*s.law)(t, q, vp, Qp);
      (*s.law)(t, q, vm, Qm);
      p.dQv.col(k) += (Qp - Qm) / (2.0 * h);
      vp(k) = vm(k) = v(k);
    }
  }
} // namespace pfaff::force_elements
