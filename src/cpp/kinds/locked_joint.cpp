// q_i - value = 0: a locked joint, an unbounded one by its angle (constraints.library.LockedJoint)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(LockedJoint, 1, 0, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_LockedJoint(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.iq, mo.model.nq, "spec.iq", "a q index (nq)");
    c.index(s.iv, mo.model.nv, "spec.iv", "a v index (nv)");
  }

  void LockedJoint(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const VecX & q = out.q;
    if (s.unbounded)
    {
      const double dd = std::atan2(q(s.iq + 1), q(s.iq)) - s.value;
      const double x = dd + M_PI, T = 2.0 * M_PI;
      d.phi(hrow) = (x - T * std::floor(x / T)) - M_PI; // Python's floor modulo
    }
    else
      d.phi(hrow) = q(s.iq) - s.value;
    d.A.row(row).setZero();
    d.A(row, s.iv) = 1.0;
    d.drift(row) = 0.0;
  }

  // A constant, drift identically zero: no derivative rows
  void derive_LockedJoint(KindDerivatives &, const Spec &, int) {}
} // namespace pfaff::kinds
