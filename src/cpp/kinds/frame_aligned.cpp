// rows of log(R_1 R_off R_2^T) along D: two frames aligned (constraints.weld.FrameAligned)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(FrameAligned, 0, 1, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_FrameAligned(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
    c.mat(s.D, s.dim, 3, "spec.D", "one unit direction per row");
  }

  void FrameAligned(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    aligned_rows(d, s, s.R_off, s.R_off.isIdentity(0.0), out, s.D_identity);
  }

  void derive_FrameAligned(KindDerivatives & kd, const Spec & s, int row)
  {
    MatX P = s.D_identity ? MatX(Mat3::Identity()) : s.D;
    if (s.scale.size())
      P = s.scale.asDiagonal() * P;
    kd.aligned(s, row, P, false, s.s2 < 0 ? s.R_right : s.R_off);
  }
} // namespace pfaff::kinds
