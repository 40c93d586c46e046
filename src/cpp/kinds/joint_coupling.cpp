// q_1 - c_0 - c_1 q_2 = 0 (constraints.coupling.JointCoupling)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(JointCoupling, 1, 0, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_JointCoupling(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.iq, mo.model.nq, "spec.iq", "a q index (nq)");
    c.index(s.iv, mo.model.nv, "spec.iv", "a v index (nv)");
    c.index(s.iq2, mo.model.nq, "spec.iq2", "a q index (nq), or -1: none", -1);
    c.index(s.iv2, mo.model.nv, "spec.iv2", "a v index (nv), or -1: none", -1);
    if ((s.iv2 >= 0) != (s.iq2 >= 0))
      c.fail("spec.iq2 and spec.iv2: both a joint's indices or both -1");
  }

  void JointCoupling(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const VecX & q = out.q;
    const double q2 = s.iq2 >= 0 ? q(s.iq2) : 0.0;
    d.phi(hrow) = q(s.iq) - s.c0 - s.c1 * q2;
    d.A.row(row).setZero();
    d.A(row, s.iv) = 1.0;
    if (s.iv2 >= 0)
      d.A(row, s.iv2) = -s.c1;
    d.drift(row) = 0.0;
  }

  // A constant, drift identically zero: no derivative rows
  void derive_JointCoupling(KindDerivatives &, const Spec &, int) {}
} // namespace pfaff::kinds
