// |p_xy - c| - rho = 0: a point on a circle in the x-y plane (constraints.library.PointOnCircle)
#include <cmath>

#include "../check.hpp"
#include "../core.hpp"

namespace pfaff::kinds
{
  void check_PointOnCircle(const System & sys, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(sys.frames.size()), "spec.s1", "a frame slot of add_frame");
    c.number(s.rho, "spec.rho", 0.0, true);
  }

  void PointOnCircle(System & sys, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const bool with_drift = out.with_drift;
    Vec3 p1, a1 = Vec3::Zero();
    point_terms(sys.frames[s.s1], s.has_p1, s.p1, p1, sys.Jp1_, a1, with_drift);
    const Eigen::Vector2d d = p1.head<2>() - s.c;
    const double r = d.norm();
    const Eigen::Vector2d u = d / r;
    sys.phi(hrow) = r - s.rho;
    sys.A.row(row).noalias() = u.transpose() * sys.Jp1_.topRows<2>();
    if (with_drift)
    {
      const Eigen::Vector2d vp = sys.Jp1_.topRows<2>() * sys.v_stage_ref();
      const double uv = u.dot(vp);
      sys.drift(row) = u.dot(a1.head<2>()) + (vp.dot(vp) - uv * uv) / r;
    }
    else
      sys.drift(row) = 0.0;
  }
} // namespace pfaff::kinds
