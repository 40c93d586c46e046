// D (p1 - p2) = 0: two points coincide along directions D (constraints.library.PointsCoincide)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(PointsCoincide, 0, 1, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_PointsCoincide(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
    c.mat(s.D, s.dim, 3, "spec.D", "one unit direction per row");
  }

  void PointsCoincide(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    Vec3 a = Vec3::Zero(); // the drift of p1 - p2 (0.0 without with_drift)
    if (out.rows_stand) // A and Phi of this q stand: the drift alone
    {
      if (out.with_drift)
      {
        a = point_drift(d.frames[s.s1], s.has_p1, s.p1);
        if (s.s2 >= 0)
          a -= point_drift(d.frames[s.s2], s.has_p2, s.p2);
      }
    }
    else
    {
      Vec3 p1, p2, a2 = Vec3::Zero();
      point_terms(d.frames[s.s1], s.has_p1, s.p1, out, p1, d.Jp1_, a);
      const auto Jp = d.Jp1_.leftCols(out.w);
      if (s.s2 >= 0)
      {
        point_terms(d.frames[s.s2], s.has_p2, s.p2, out, p2, d.Jp2_, a2);
        d.Jp1_.leftCols(out.w) -= d.Jp2_.leftCols(out.w);
        a -= a2;
        p1 -= p2;
      }
      else
        p1 -= s.target;
      if (s.D_identity)
      {
        d.A.block(row, out.c0, 3, out.w) = Jp;
        d.phi.segment<3>(hrow) = p1;
      }
      else
      {
        d.A.block(row, out.c0, s.dim, out.w).noalias() = s.D * Jp;
        d.phi.segment(hrow, s.dim).noalias() = s.D * p1;
      }
    }
    if (s.D_identity)
      d.drift.segment<3>(row) = a;
    else
      d.drift.segment(row, s.dim).noalias() = s.D * a;
  }

  void derive_PointsCoincide(KindDerivatives & kd, const Spec & s, int row)
  {
    using DMat = KindDerivatives::DMat;
    kd.point_rows(s, row, s.D_identity ? DMat(Mat3::Identity()) : DMat(s.D), true, true);
  }
} // namespace pfaff::kinds
