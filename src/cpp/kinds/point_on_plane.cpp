// n . p - d = 0: a point of a frame on a plane (constraints.library.PointOnPlane)
#include <cmath>

#include "../check.hpp"
#include "../core.hpp"

namespace pfaff::kinds
{
  void check_PointOnPlane(const System & sys, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(sys.frames.size()), "spec.s1", "a frame slot of add_frame");
  }

  void PointOnPlane(System & sys, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    const int hrow = out.hrow;
    const bool with_drift = out.with_drift;
    Vec3 p1, a1 = Vec3::Zero();
    point_terms(sys.frames[s.s1], s.has_p1, s.p1, p1, sys.Jp1_, a1, with_drift);
    sys.phi(hrow) = s.n.dot(p1) - s.d;
    sys.A.row(row).noalias() = s.n.transpose() * sys.Jp1_;
    sys.drift(row) = with_drift ? s.n.dot(a1) : 0.0;
  }
} // namespace pfaff::kinds
