// n2 . (p1 - o2) - d = 0: a point of frame 1 on a plane fixed in frame 2, normal n2 and
// point o2 turning with it (constraints.library.PointOnBodyPlane; a contact between two
// moving bodies holds its point so)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(PointOnBodyPlane, 1, 1, 1)
//
// With n = R2 n_local, r = p1 - o2 (o2 = x2 + R2 p2):
//   Phi = n . r - d,  Phi' = n . (v1 - v2(p1)),  A = n^T (J1(p1) - J2(p1))
// (v2(p1) = v_o2 + w2 x r: body 2's material point at p1), and
//   Phi'' = n'' . r + 2 n' . r' + n . r'',  n' = w2 x n,  n'' = al2 x n + w2 x (w2 x n),
// so that, the accelerations' drifts at a = 0 (point_drift),
//   drift = n . (a1 - a2(p1)) - 2 n . (w2 x u),  u = v1 - v2(p1)
// with a2(p1) = a_o2 + al2 x r + w2 x (w2 x r) body 2's material point's acceleration.
#include <cmath>
#include <string>

#include "model/check.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_PointOnBodyPlane(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
    c.index(s.s2, long(mo.frame_slots.size()), "spec.s2",
            "the frame slot of the plane's body (add_frame; a plane fixed in the world is "
            "PointOnPlane)");
    if (!(std::abs(s.n.norm() - 1.0) <= 1e-9))
      c.fail("spec.n must be a unit normal (in frame s2's axes), got norm "
             + std::to_string(s.n.norm()));
  }

  void PointOnBodyPlane(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const FrameKin & f2 = d.frames[std::size_t(s.s2)];
    Vec3 p1, a1 = Vec3::Zero();
    point_terms(d.frames[std::size_t(s.s1)], s.has_p1, s.p1, out, p1, d.Jp1_, a1);
    const Vec3 n = f2.R * s.n;
    const Vec3 o = s.has_p2 ? Vec3(f2.p + f2.R * s.p2) : f2.p;
    d.phi(out.hrow) = n.dot(p1 - o) - s.d;
    // body 2's material point at p1
    const Vec3 r2 = p1 - f2.p;
    const auto J2 = f2.J.middleCols(out.c0, out.w);
    d.Jp1_.leftCols(out.w).noalias() -= J2.topRows<3>();
    d.Jp1_.leftCols(out.w).noalias() += detail::skew(r2) * J2.bottomRows<3>();
    d.A.row(out.row).segment(out.c0, out.w).noalias() = n.transpose() * d.Jp1_.leftCols(out.w);
    if (!out.with_drift)
    {
      d.drift(out.row) = 0.0;
      return;
    }
    const Vec3 u = d.Jp1_.leftCols(out.w) * d.vref_->segment(out.c0, out.w);
    const Vec3 a2 = f2.drift.head<3>() + f2.drift.tail<3>().cross(r2) + f2.w.cross(f2.w.cross(r2));
    d.drift(out.row) = n.dot(a1 - a2) - 2.0 * n.dot(f2.w.cross(u));
  }

  // Phi'' = n'' . r + 2 n' . r' + n . r'' differentiated term by term: along delta_j
  // n moves by g x n (g = J_w2's column j), w2 and al2 by their partials (frame), the
  // points p1 and o2 by their Jacobians' columns, their velocities by the kinematic
  // Hessian's slices (dJ_j v) and their classical accelerations by aq (point_partials);
  // along v_j, w2 by g, al2 by dal_v, r' by (J1 - J_o2)'s column, r'' by av. A's rows
  //   A_c = (J_w2,c x n) . r + n . (J1,c - J_o2,c)
  // move along delta_j by (H_w2,jc x n) . r + (J_w2,c x (g x n)) . r
  //   + (J_w2,c x n) . (J1,j - J_o2,j) + (g x n) . (J1,c - J_o2,c) + n . (H1,jc - H_o2,jc).
  void derive_PointOnBodyPlane(KindDerivatives & kd, const Spec & s, int row)
  {
    const int nv = kd.nv, m = kd.m;
    const VecX & v = *kd.v;
    const double sc = s.scale.size() ? s.scale(0) : 1.0;
    auto & f2 = kd.f2;
    kd.frame(s.s2, f2);
    const Vec3 n = f2.R * s.n, w = f2.w, al = f2.al;
    const Vec3 n1 = w.cross(n), n2 = al.cross(n) + w.cross(w.cross(n));
    auto & dd = kd.dd;
    // a point's position, velocity, classical acceleration, J (linear), the linear rows of
    // its kinematic Hessian (slice j: dJ / d delta_j) and its acceleration's partials
    struct Pt
    {
      Vec3 p, v, a;
      Matrix3x J, aq, av;
      MatX H; // 3 x nv * nv
    };
    auto take = [&](const KindDerivatives::Point & pt, Pt & o) {
      kd.point_partials(pt);
      o.J = kd.aa;
      o.aq = kd.aq;
      o.av = kd.av;
      o.H.resize(3, std::size_t(nv) * std::size_t(nv));
      for (int j = 0; j < nv; ++j)
        for (int c = 0; c < nv; ++c)
          for (int i = 0; i < 3; ++i)
            o.H(i, j * nv + c) = kd.H(i, c, j);
      if (pt.joint == 0)
      {
        o.p = pt.placement.translation();
        o.v.setZero();
        o.a.setZero();
        return;
      }
      o.p = dd.oMi[pt.joint].act(pt.placement.translation());
      const auto & ov = dd.ov[pt.joint];
      const auto & oa = dd.oa[pt.joint];
      o.v = ov.linear() + ov.angular().cross(o.p);
      o.a = oa.linear() + oa.angular().cross(o.p) + ov.angular().cross(o.v);
    };
    Pt P1, P2;
    take(kd.point(s.s1, s.has_p1, s.p1), P1);
    take(kd.point(s.s2, s.has_p2, s.p2), P2);
    const Vec3 r = P1.p - P2.p, rd = P1.v - P2.v, rdd = P1.a - P2.a;
    const Matrix3x Jr = P1.J - P2.J;
    for (int j = 0; j < nv; ++j)
    {
      const Vec3 g = f2.Jw.col(j), dw = f2.dw.col(j), dal = f2.dal.col(j);
      const Vec3 dn = g.cross(n);
      const Vec3 dn1 = dw.cross(n) + w.cross(dn);
      const Vec3 dn2 =
        dal.cross(n) + al.cross(dn) + dw.cross(w.cross(n)) + w.cross(dw.cross(n) + w.cross(dn));
      const Vec3 dr = Jr.col(j);
      const Matrix3x Hr = P1.H.middleCols(j * nv, nv) - P2.H.middleCols(j * nv, nv);
      const Vec3 drd = Hr * v;
      const Vec3 drdd = P1.aq.col(j) - P2.aq.col(j);
      kd.X(row, j) = sc * (dn2.dot(r) + n2.dot(dr) + 2.0 * (dn1.dot(rd) + n1.dot(drd))
                           + dn.dot(rdd) + n.dot(drdd));
      const Vec3 dn1v = g.cross(n);
      const Vec3 dn2v = f2.dal_v.col(j).cross(n) + g.cross(w.cross(n)) + w.cross(g.cross(n));
      kd.X(row, nv + j) = sc * (dn2v.dot(r) + 2.0 * (dn1v.dot(rd) + n1.dot(Jr.col(j)))
                                + n.dot(P1.av.col(j) - P2.av.col(j)));
      auto dA = kd.dAB.row(j * m + row);
      for (int c = 0; c < nv; ++c)
      {
        const Vec3 gc = f2.Jw.col(c);
        const Vec3 Hw = f2.Hw.col(j * nv + c);
        dA(c) = sc * (Hw.cross(n).dot(r) + gc.cross(dn).dot(r) + gc.cross(n).dot(dr)
                      + dn.dot(Jr.col(c)) + n.dot(Hr.col(c)));
      }
    }
  }
} // namespace pfaff::kinds
