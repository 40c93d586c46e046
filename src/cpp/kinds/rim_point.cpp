// A cylinder's rim (radius s.rho about its centre s.p1 in frame s1, across its axis s.p2
// in the frame's axes) touching a still plane of unit normal s.target (world): the rim's
// point nearest the plane, x = c + l (the lever l of model/rim.hpp), is where the rim
// touches, and it moves over the body as the rim rolls. One row along a world direction
// e = s.n of the body's material point at x:
//   A v   = e . v(x) = e . (v_c + w x l),
//   drift = e . (a_c + alpha x l + w x l')                                  (at a = 0),
// a_c = a_o + alpha x r + w x (w x r) the centre's (r = R p1): the derivative of A v along
// the motion, in which x moves by l' over the body (a vertex's drift has w x (w x l)).
// RimOnPlane: e = n, holonomic, Phi = n . x - s.d = n . c - rho sqrt(1 - (n . a)^2) - d
// (A = dPhi/dq: moving x along the rim changes Phi at second order only); RimRolling:
// e a tangent t, a Pfaffian row (the rim rolls without slipping). The NumPy reference is
// pfaff.contact.rim.
// its lines of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(RimOnPlane, 1, 1, 1)
// PFAFF_KIND(RimRolling, 1, 1, 0)
#include <cmath>

#include <unsupported/Eigen/AutoDiff>

#include "model/check.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "model/rim.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  namespace
  {
    void check_rim(const Model & mo, const Spec & s, const Check & c)
    {
      c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
      c.number(s.rho, "spec.rho (the rim's radius) [m]", 0.0, true);
      if (!(std::abs(s.target.norm() - 1.0) < 1e-9))
        c.fail("spec.target (the plane's normal) must be a unit vector");
      if (!(std::abs(s.p2.norm() - 1.0) < 1e-9))
        c.fail("spec.p2 (the rim's axis in the frame's axes) must be a unit vector");
    }

    void rim_row(Data & d, const Spec & s, const RowOut & out, bool holonomic)
    {
      const FrameKin & f = d.frames[std::size_t(s.s1)];
      const Vec3 r = s.has_p1 ? Vec3(f.R * s.p1) : Vec3::Zero();
      Vec3 l, ld;
      rim_lever<double>(f.R * s.p2, f.w, s.target, s.rho, l, ld);
      const Vec3 rc = r + l; // the contact point from the frame's origin
      const auto J = f.J.middleCols(out.c0, out.w);
      auto Jc = d.Jp1_.leftCols(out.w);
      Jc.noalias() = J.topRows<3>() - detail::skew(rc).lazyProduct(J.bottomRows<3>());
      d.A.row(out.row).segment(out.c0, out.w).noalias() = s.n.transpose() * Jc;
      if (holonomic)
        d.phi(out.hrow) = s.target.dot(f.p + rc) - s.d;
      d.drift(out.row) = out.with_drift
                           ? s.n.dot(f.drift.head<3>() + f.drift.tail<3>().cross(rc)
                                     + f.w.cross(f.w.cross(r)) + f.w.cross(ld))
                           : 0.0;
    }

    // A a + drift = e . a_c + m . alpha + e . (w x l'), m = l x e: the centre's rows
    // (point_rows with D = e^T), then m's and l''s. l and l' are functions of the axis
    // a = R a_l and w alone; along delta_k the axis turns by g_k x a (g_k = J_w's column
    // k), w moves by dw_k (along v_k by g_k): their partials by forward automatic
    // differentiation of rim_lever.
    void derive_rim(KindDerivatives & kd, const Spec & s, int row)
    {
      using AD = Eigen::AutoDiffScalar<Eigen::Matrix<double, 6, 1>>;
      const int nv = kd.nv;
      auto & f1 = kd.f1;
      kd.frame(s.s1, f1);
      kd.point_rows(s, row, s.n.transpose(), true, false);
      const Vec3 a = f1.R * s.p2;
      Eigen::Matrix<AD, 3, 1> ax, w, l, ld;
      for (int i = 0; i < 3; ++i)
      {
        ax(i) = AD(a(i), 6, i);
        w(i) = AD(f1.w(i), 6, 3 + i);
      }
      rim_lever<AD>(ax, w, s.target, s.rho, l, ld);
      Vec3 l0, ld0;
      Mat3 La, Lda, Ldw;
      for (int i = 0; i < 3; ++i)
      {
        l0(i) = l(i).value();
        ld0(i) = ld(i).value();
        La.row(i) = l(i).derivatives().head<3>().transpose();
        Lda.row(i) = ld(i).derivatives().head<3>().transpose();
        Ldw.row(i) = ld(i).derivatives().tail<3>().transpose();
      }
      const double sc = s.scale.size() ? s.scale(0) : 1.0;
      const Vec3 & e = s.n;
      const Vec3 m = l0.cross(e);
      for (int k = 0; k < nv; ++k)
      {
        const Vec3 da = f1.Jw.col(k).cross(a);
        const Vec3 dm = (La * da).cross(e);
        kd.dAB.row(k * kd.m + row).noalias() +=
          sc * (m.transpose() * f1.Hw.middleCols(k * nv, nv) + dm.transpose() * f1.Jw);
        const Vec3 dwk = f1.dw.col(k), g = f1.Jw.col(k);
        kd.X(row, k) += sc * (m.dot(f1.dal.col(k)) + dm.dot(f1.al)
                              + e.dot(dwk.cross(ld0) + f1.w.cross(Lda * da + Ldw * dwk)));
        kd.X(row, nv + k) +=
          sc * (m.dot(f1.dal_v.col(k)) + e.dot(g.cross(ld0) + f1.w.cross(Ldw * g)));
      }
    }
  } // namespace

  void check_RimOnPlane(const Model & mo, const Spec & s, const Check & c) { check_rim(mo, s, c); }
  void check_RimRolling(const Model & mo, const Spec & s, const Check & c) { check_rim(mo, s, c); }

  void RimOnPlane(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    rim_row(d, s, out, true);
  }

  void RimRolling(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    rim_row(d, s, out, false);
  }

  void derive_RimOnPlane(KindDerivatives & kd, const Spec & s, int row) { derive_rim(kd, s, row); }
  void derive_RimRolling(KindDerivatives & kd, const Spec & s, int row) { derive_rim(kd, s, row); }
} // namespace pfaff::kinds
