// t . v_c = 0: the material point of a frame at the contact c = p + l (p the frame's
// point s.p1, l = s.target a world vector, -r n for a ball or a capsule of radius r on a
// plane of normal n) has no velocity along the world direction t = s.n. A Pfaffian row:
// c moves over the body as it rolls, so no Phi holds it. Its drift is d(A)/dt v with the
// point p fixed in the frame and l fixed in the world:
//   A v = t . (v_p + w x l),  drift = t . (a_p + alpha x l)  at a = 0,
// a_p = a_o + alpha x r + w x (w x r) (r = R p1): the drift of the body point at c less
// t . w x (w x l), the centripetal term of a point fixed in the body.
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(RollingPoint, 1, 1, 0)
#include "model/check.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_RollingPoint(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
  }

  void RollingPoint(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const FrameKin & f = d.frames[std::size_t(s.s1)];
    const Vec3 r = f.R * s.p1;
    const Vec3 rc = r + s.target; // the contact point from the frame's origin
    const auto J = f.J.middleCols(out.c0, out.w);
    d.A.row(out.row).segment(out.c0, out.w).noalias() =
      s.n.transpose() * (J.topRows<3>() - detail::skew(rc).lazyProduct(J.bottomRows<3>()));
    d.drift(out.row) =
      out.with_drift
        ? s.n.dot(f.drift.head<3>() + f.drift.tail<3>().cross(rc) + f.w.cross(f.w.cross(r)))
        : 0.0;
  }

  // A a + drift = t . a_p + (l x t) . alpha (alpha the frame's angular acceleration at
  // the state's a): the point p's rows (KindDerivatives::point_rows with D = t^T) and
  // (l x t)^T times the frame's angular partials (dJ_w / d delta_k, d alpha / dq, dv)
  void derive_RollingPoint(KindDerivatives & kd, const Spec & s, int row)
  {
    kd.point_rows(s, row, s.n.transpose(), true, false);
    kd.frame(s.s1, kd.f1);
    const Eigen::RowVector3d lt = s.target.cross(s.n).transpose();
    const int nv = kd.nv;
    for (int k = 0; k < nv; ++k)
      kd.dAB.row(k * kd.m + row).noalias() += lt * kd.f1.Hw.middleCols(k * nv, nv);
    kd.X.row(row).head(nv).noalias() += lt * kd.f1.dal;
    kd.X.row(row).tail(nv).noalias() += lt * kd.f1.dal_v;
  }
} // namespace pfaff::kinds
