// t . (v1(c) - v2(c)) = 0: the material point of frame 1 at the contact c = p + l (p the
// frame's point s.p1, l = -r n for a ball or a capsule of radius r on a plane of normal
// n) has no velocity along the direction t relative to the material point of frame 2 at
// c (s.s2 >= 0: a plane on a moving body, t = R2 s.n and l = R2 s.target turning with
// it) or to the world (s.s2 < 0: t = s.n, l = s.target fixed in the world, v2 = 0). A
// Pfaffian row: c moves over the body as it rolls, so no Phi holds it. Its drift is
// d(A)/dt v with p fixed in frame 1, t and l fixed in frame 2 (c' = v_p + w2 x l):
//   A v = t . u,  u = v1(c) - v2(c) = v_p + w1 x l - (v_o2 + w2 x (c - o2)),
//   drift = t . (a_p + al1 x l + w1 x (w2 x l) - w2 x ((w2 - w1) x l) - a2(c))
//           - 2 t . (w2 x u)                                              at a = 0,
// a_p = a_o + al1 x r + w1 x (w1 x r) (r = R1 p1), a2(c) = a_o2 + al2 x (c - o2)
// + w2 x (w2 x (c - o2)) body 2's material point's. On the world (w2, a2 = 0) it is
// t . (a_p + al1 x l): the drift of the body point at c less t . w1 x (w1 x l), the
// centripetal term a point fixed in the body would have; with l = 0 it is
// PointOnBodyPlane's drift along t.
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
    const long nf = long(mo.frame_slots.size());
    c.index(s.s1, nf, "spec.s1", "a frame slot of add_frame");
    c.index(s.s2, nf, "spec.s2", "the frame slot of the plane's body, or -1: the world", -1);
    if (s.s2 >= 0 && s.s2 == s.s1)
      c.fail("spec.s2 is spec.s1: a body does not roll on itself (-1: on the world)");
  }

  void RollingPoint(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const FrameKin & f = d.frames[std::size_t(s.s1)];
    const FrameKin * f2 = s.s2 >= 0 ? &d.frames[std::size_t(s.s2)] : nullptr;
    const Vec3 t = f2 ? Vec3(f2->R * s.n) : s.n;
    const Vec3 l = f2 ? Vec3(f2->R * s.target) : s.target;
    const Vec3 r = f.R * s.p1;
    const Vec3 rc = r + l; // the contact point from frame 1's origin
    const auto J = f.J.middleCols(out.c0, out.w);
    auto Jc = d.Jp1_.leftCols(out.w); // J1(c) - J2(c)
    Jc.noalias() = J.topRows<3>() - detail::skew(rc).lazyProduct(J.bottomRows<3>());
    Vec3 r2 = Vec3::Zero(); // the contact point from frame 2's origin
    if (f2)
    {
      r2 = f.p + rc - f2->p;
      const auto J2 = f2->J.middleCols(out.c0, out.w);
      Jc.noalias() -= J2.topRows<3>();
      Jc.noalias() += detail::skew(r2) * J2.bottomRows<3>();
    }
    d.A.row(out.row).segment(out.c0, out.w).noalias() = t.transpose() * Jc;
    if (!out.with_drift)
    {
      d.drift(out.row) = 0.0;
      return;
    }
    const Vec3 & w1 = f.w;
    Vec3 acc = f.drift.head<3>() + f.drift.tail<3>().cross(rc) + w1.cross(w1.cross(r));
    double turn = 0.0;
    if (f2)
    {
      const Vec3 & w2 = f2->w;
      const Vec3 u = Jc * d.vref_->segment(out.c0, out.w);
      acc += body2_contact_drift(f, *f2, l, f.p + rc);
      turn = -2.0 * t.dot(w2.cross(u));
    }
    d.drift(out.row) = t.dot(acc) + turn;
  }

  // On the world's plane: A a + drift = t . a_p + (l x t) . alpha (alpha the frame's
  // angular acceleration at the state's a): the point p's rows (KindDerivatives::
  // point_rows with D = t^T) and (l x t)^T times the frame's angular partials
  // (dJ_w / d delta_k, d alpha / dq, dv).
  // On a plane of body 2, u = v1(p) - v2(p) + (w1 - w2) x l gives
  //   A v = t . (v1(p) - v2(p)) + m . (w1 - w2),  m = l x t (fixed in body 2, as t, l):
  // PointOnBodyPlane's row of normal t at p (its derivative rows), plus the angular
  // row m . (w1 - w2), whose A a + drift is m . (al1 - al2) + (w2 x m) . (w1 - w2).
  // Along delta_k m moves by g2 x m (g2 = J_w2's column k), w and al by their partials;
  // along v_k, w by J_w's column, al by dal_v.
  void derive_RollingPoint(KindDerivatives & kd, const Spec & s, int row)
  {
    const int nv = kd.nv;
    auto & f1 = kd.f1;
    kd.frame(s.s1, f1);
    if (s.s2 < 0)
    {
      kd.point_rows(s, row, s.n.transpose(), true, false);
      const Eigen::RowVector3d lt = s.target.cross(s.n).transpose();
      for (int k = 0; k < nv; ++k)
        kd.dAB.row(k * kd.m + row).noalias() += lt * f1.Hw.middleCols(k * nv, nv);
      kd.X.row(row).head(nv).noalias() += lt * f1.dal;
      kd.X.row(row).tail(nv).noalias() += lt * f1.dal_v;
      return;
    }
    Spec plane = s; // t . (v1(p) - v2(p)): p on a plane of body 2 with normal t
    plane.kind = Kind::PointOnBodyPlane;
    plane.has_p1 = true;
    plane.has_p2 = false;
    derive_PointOnBodyPlane(kd, plane, row);
    const auto & f2 = kd.f2; // frame s2's partials, as derive_PointOnBodyPlane left them
    const double sc = s.scale.size() ? s.scale(0) : 1.0;
    const Vec3 m = f2.R * s.target.cross(s.n);
    const Vec3 dw = f1.w - f2.w, dal = f1.al - f2.al, wm = f2.w.cross(m);
    for (int k = 0; k < nv; ++k)
    {
      const Vec3 g = f2.Jw.col(k), gm = g.cross(m);
      auto dA = kd.dAB.row(k * kd.m + row);
      for (int c = 0; c < nv; ++c)
        dA(c) += sc * (gm.dot(f1.Jw.col(c) - f2.Jw.col(c))
                       + m.dot(f1.Hw.col(k * nv + c) - f2.Hw.col(k * nv + c)));
      const Vec3 dwk = f1.dw.col(k) - f2.dw.col(k);
      kd.X(row, k) += sc * (gm.dot(dal) + m.dot(f1.dal.col(k) - f2.dal.col(k))
                            + (f2.dw.col(k).cross(m) + f2.w.cross(gm)).dot(dw) + wm.dot(dwk));
      kd.X(row, nv + k) += sc * (m.dot(f1.dal_v.col(k) - f2.dal_v.col(k)) + gm.dot(dw)
                                 + wm.dot(f1.Jw.col(k) - f2.Jw.col(k)));
    }
  }
} // namespace pfaff::kinds
