// n . p - d = 0: a point of a frame on a plane (constraints.library.PointOnPlane)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(PointOnPlane, 1, 1, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_PointOnPlane(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
  }

  void PointOnPlane(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const bool with_drift = out.with_drift;
    Vec3 p1, a1 = Vec3::Zero();
    point_terms(d.frames[s.s1], s.has_p1, s.p1, out, p1, d.Jp1_, a1);
    d.phi(hrow) = s.n.dot(p1) - s.d;
    d.A.row(row).segment(out.c0, out.w).noalias() = s.n.transpose() * d.Jp1_.leftCols(out.w);
    d.drift(row) = with_drift ? s.n.dot(a1) : 0.0;
  }

  void derive_PointOnPlane(KindDerivatives & kd, const Spec & s, int row)
  {
    kd.point_rows(s, row, s.n.transpose(), true, false);
  }
} // namespace pfaff::kinds
