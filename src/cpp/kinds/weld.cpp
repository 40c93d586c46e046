// p_1 - p_2 = 0 and FrameAligned: a rigid grasp, 6 rows (constraints.weld.Weld)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(Weld, 6, 1, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_Weld(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
    if (s.s2 < 0)
      c.fail("spec.s2 = -1: a weld joins two frames");
    c.mat(s.D, 3, 3, "spec.D", "one unit direction per row");
  }

  void Weld(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const bool with_drift = out.with_drift;
    const FrameKin & f1 = d.frames[s.s1];
    const FrameKin & f2 = d.frames[s.s2];
    if (!out.rows_stand) // else A and Phi of this q stand: the drift alone
    {
      d.A.block(row, out.c0, 3, out.w) = f1.J.topRows<3>().middleCols(out.c0, out.w)
                                         - f2.J.topRows<3>().middleCols(out.c0, out.w);
      d.phi.segment<3>(hrow) = f1.p - f2.p;
    }
    d.drift.segment<3>(row) =
      with_drift ? Vec3(f1.drift.head<3>() - f2.drift.head<3>()) : Vec3::Zero();
    // rows 3-5: FrameAligned(frame1, frame2, offset), all three rows
    RowOut rot = out;
    rot.row += 3;
    rot.hrow += 3;
    aligned_rows(d, s, s.R_off, s.R_off.isIdentity(0.0), rot, true);
  }

  // p_1 - p_2 (the frames' origins) and FrameAligned(frame1, frame2, R_off), all three rows
  void derive_Weld(KindDerivatives & kd, const Spec & s, int row)
  {
    MatX P = Mat3::Identity();
    if (s.scale.size())
      P = s.scale.segment<3>(3).asDiagonal() * P;
    kd.aligned(s, row + 3, P, false, s.R_off);
    kd.point_rows(s, row, Mat3::Identity(), false, true);
  }
} // namespace pfaff::kinds
