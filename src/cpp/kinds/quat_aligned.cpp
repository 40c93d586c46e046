// vec(q_e) = 0, MuJoCo's weld orientation residual (constraints.quat_aligned)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(QuatAligned, 3, 1, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_QuatAligned(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
  }

  void QuatAligned(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    quat_rows(d, s, out);
  }

  void derive_QuatAligned(KindDerivatives & kd, const Spec & s, int row)
  {
    MatX P = Mat3::Identity();
    if (s.scale.size())
      P = s.scale.asDiagonal() * P;
    kd.aligned(s, row, P, true, s.R_off);
  }
} // namespace pfaff::kinds
