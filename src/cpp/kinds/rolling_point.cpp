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
#include <stdexcept>

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

  // A a + drift = t . a_p + (l x t) . alpha (alpha the frame's angular acceleration at
  // the state's a): the point p's rows (KindDerivatives::point_rows with D = t^T) and
  // (l x t)^T times the frame's angular partials (dJ_w / d delta_k, d alpha / dq, dv).
  // On the world's plane only: a plane on a moving body is refused
  void derive_RollingPoint(KindDerivatives & kd, const Spec & s, int row)
  {
    if (s.s2 >= 0)
      throw std::invalid_argument(
        "the derivatives of a RollingPoint on a moving body's plane (spec.s2 >= 0) are not "
        "modelled: a point rolling on a plane fixed in the world (s2 = -1) has them");
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
