// Two frames joined by a hinge, 5 rows (constraints.revolute.RevoluteClosure):
//   Phi_p = p_a - p_b (3 rows, the joint centre), Phi_k = e_k . n_b (k = 1, 2)
// with e_k = R_a u_k (spec.D's rows u_k: two unit vectors of frame a perpendicular to
// its axis) and n_b = R_b axis_b (spec.n: the axis in frame b);
//   A_k = (e_k x n_b)^T (J_wa - J_wb),
//   drift_k = ((w_a x e_k) x n_b + e_k x (w_b x n_b)) . (w_a - w_b)
//             + (e_k x n_b) . (alpha_a - alpha_b).
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(RevoluteClosure, 5, 1, 1)
#include <cmath>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_RevoluteClosure(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
    if (s.s2 < 0)
      c.fail("spec.s2 = -1: a hinge joins two frames");
    c.mat(s.D, 2, 3, "spec.D", "u_1, u_2: unit vectors of frame 1 normal to the hinge axis");
  }

  void RevoluteClosure(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row, hrow = out.hrow;
    const bool with_drift = out.with_drift;
    const FrameKin & fa = d.frames[s.s1];
    const FrameKin & fb = d.frames[s.s2];
    Vec3 pa, pb, aa = Vec3::Zero(), ab = Vec3::Zero();
    const int c0 = out.c0, nw = out.w;
    point_terms(fa, s.has_p1, s.p1, out, pa, d.Jp1_, aa);
    point_terms(fb, s.has_p2, s.p2, out, pb, d.Jp2_, ab);
    d.A.block(row, c0, 3, nw) = d.Jp1_.leftCols(nw) - d.Jp2_.leftCols(nw);
    d.drift.segment<3>(row) = with_drift ? Vec3(aa - ab) : Vec3::Zero();
    d.phi.segment<3>(hrow) = pa - pb;
    const Vec3 nb = fb.R * s.n;
    // J_wa - J_wb
    d.Gjw_.leftCols(nw) =
      fa.J.bottomRows<3>().middleCols(c0, nw) - fb.J.bottomRows<3>().middleCols(c0, nw);
    const Vec3 dw = fa.w - fb.w, dalpha = fa.drift.tail<3>() - fb.drift.tail<3>();
    const Vec3 wbn = fb.w.cross(nb);
    for (int k = 0; k < 2; ++k)
    {
      const Vec3 e = fa.R * s.D.row(k).transpose();
      const Vec3 c = e.cross(nb);
      d.phi(hrow + 3 + k) = e.dot(nb);
      d.A.row(row + 3 + k).segment(c0, nw).noalias() = c.transpose() * d.Gjw_.leftCols(nw);
      d.drift(row + 3 + k) =
        with_drift ? (fa.w.cross(e).cross(nb) + e.cross(wbn)).dot(dw) + c.dot(dalpha) : 0.0;
    }
  }

  // derivative rows: p_a - p_b (KindDerivatives::point_rows) and rows 3, 4,
  //   c_k = e_k x n_b, A_k = c_k^T (J_wa - J_wb),
  //   A_k a + drift_k = ((w_a x e_k) x n_b + e_k x (w_b x n_b)) . (w_a - w_b) + c_k . (al_a - al_b)
  // with e_k' = g_a x e_k, n_b' = g_b x n_b along delta_j (g: the columns j of J_w)
  void derive_RevoluteClosure(KindDerivatives & kd, const Spec & s, int row0)
  {
    kd.point_rows(s, row0, Mat3::Identity(), true, true);
    const int nv = kd.nv, m = kd.m;
    KindDerivatives::FrameDer & fa = kd.f1;
    KindDerivatives::FrameDer & fb = kd.f2;
    kd.frame(s.s1, fa);
    kd.frame(s.s2, fb);
    const Vec3 nb = fb.R * s.n;
    const Matrix3x Jd = fa.Jw - fb.Jw;
    const Vec3 dw = fa.w - fb.w, dal = fa.al - fb.al;
    const Vec3 wbn = fb.w.cross(nb);
    for (int r = 0; r < 2; ++r)
    {
      const int row = row0 + 3 + r;
      const double sc = s.scale.size() ? s.scale(3 + r) : 1.0;
      const Vec3 e = fa.R * s.D.row(r).transpose();
      const Vec3 c = e.cross(nb);
      const Vec3 we = fa.w.cross(e);
      const Vec3 T = we.cross(nb) + e.cross(wbn);
      for (int j = 0; j < nv; ++j)
      {
        const Vec3 ga = fa.Jw.col(j), gb = fb.Jw.col(j);
        const Vec3 de = ga.cross(e), dn = gb.cross(nb);
        const Vec3 dc = de.cross(nb) + e.cross(dn);
        auto dA = kd.dAB.row(j * m + row);
        dA.noalias() = dc.transpose() * Jd;
        dA.noalias() += c.transpose() * fa.Hw.middleCols(j * nv, nv);
        dA.noalias() -= c.transpose() * fb.Hw.middleCols(j * nv, nv);
        dA *= sc;
        const Vec3 dwa = fa.dw.col(j), dwb = fb.dw.col(j);
        const Vec3 dT = (dwa.cross(e) + fa.w.cross(de)).cross(nb) + we.cross(dn)
                        + de.cross(wbn) + e.cross(dwb.cross(nb) + fb.w.cross(dn));
        kd.X(row, j) = sc * (dT.dot(dw) + T.dot(dwa - dwb) + dc.dot(dal)
                           + c.dot(fa.dal.col(j) - fb.dal.col(j)));
        // in v: w_a, w_b move by the Jacobians' columns
        const Vec3 dTv = ga.cross(e).cross(nb) + e.cross(gb.cross(nb));
        kd.X(row, nv + j) =
          sc * (dTv.dot(dw) + T.dot(ga - gb) + c.dot(fa.dal_v.col(j) - fb.dal_v.col(j)));
      }
    }
  }
} // namespace pfaff::kinds
