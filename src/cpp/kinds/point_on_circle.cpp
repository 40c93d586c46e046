// |p_xy - c| - rho = 0: a point on a circle in the x-y plane (constraints.library.PointOnCircle)
#include <cmath>

#include "../check.hpp"
#include "../core.hpp"

namespace pfaff::kinds
{
  void check_PointOnCircle(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
    c.number(s.rho, "spec.rho", 0.0, true);
  }

  void PointOnCircle(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const bool with_drift = out.with_drift;
    Vec3 p1, a1 = Vec3::Zero();
    point_terms(d.frames[s.s1], s.has_p1, s.p1, out, p1, d.Jp1_, a1);
    const auto Jp = d.Jp1_.leftCols(out.w);
    const Eigen::Vector2d dc = p1.head<2>() - s.c; // from the centre
    const double r = dc.norm();
    const Eigen::Vector2d u = dc / r;
    d.phi(hrow) = r - s.rho;
    d.A.row(row).segment(out.c0, out.w).noalias() = u.transpose() * Jp.topRows<2>();
    if (with_drift)
    {
      const Eigen::Vector2d vp = Jp.topRows<2>() * d.vref_->segment(out.c0, out.w);
      const double uv = u.dot(vp);
      d.drift(row) = u.dot(a1.head<2>()) + (vp.dot(vp) - uv * uv) / r;
    }
    else
      d.drift(row) = 0.0;
  }
} // namespace pfaff::kinds
