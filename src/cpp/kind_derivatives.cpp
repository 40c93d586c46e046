// Analytic derivative rows of the constraint kinds beyond points on planes, coinciding
// points and joint rows (derivatives.cpp): Weld and FrameAligned (the skew part of a
// relative rotation), QuatAligned (its quaternion's vector part), RevoluteClosure (two
// hinge axes parallel) and PointOnCircle. Each writes, from its spec's first row, dA/d
// delta_k into dAB_ (rows k m + row ..) and into X_ [d(A a + drift)/d delta at the
// state's a, d drift/dv]. The NumPy reference differentiates these kinds by central
// differences (pfaff.derivatives.terms, fd_constraints); the rows follow the kinds'
// files (src/cpp/kinds/*.cpp, terms.cpp: aligned_rows, quat_rows).
//
// Orientation rows r(R_e), R_e = R_1 R_c (world) or R_1 R_off R_2^T, moving as
// R_e' = [w]x R_e, w = J_w v, J_w = J_w1 - R_e J_w2: with G(R_e) = dr along a left
// perturbation (r(exp([x]) R_e) = r + G x + ...), DG[x] its derivative along x and
// D2G[g; x] that of DG[x] along g,
//   A = G J_w,  A a + drift = G w' + DG[w] w,  w' = alpha_1 - R_e alpha_2 - w x (R_e w_2),
// and along delta_k (g = J_w's column k: R_e moves by [g]x R_e)
//   dA_k = DG[g] J_w + G dJ_w,k,  dJ_w,k = H_w1,k - [g]x R_e J_w2 - R_e H_w2,k
//   dX_k = DG[g] w' + G dw'_k + D2G[g; w] w + DG[dw_k] w + DG[w] dw_k.
// Skew part: r = vee(skew(R_e)), G = L(R_e), DG[x] = L([x] R_e), D2G[g; x] = L([x][g] R_e),
// L(B) = (tr(B) I - B) / 2. Quaternion (s, u) of R_e, s >= 0: G = H = (s I - [u]) / 2,
// DG[x] = ((-u.x / 2) I - [H x]) / 2, D2G[g; x] = ((-(H g).x / 2) I - [DG[g] x]) / 2.
#include "derivatives.hpp"
#include "core_detail.hpp"

#include "pinocchio/algorithm/frames-derivatives.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/kinematics-derivatives.hpp"

namespace pfaff
{
  using detail::skew;

  namespace
  {
    /// L(B) = (tr(B) I - B) / 2
    Mat3 half_trace(const Mat3 & B) { return 0.5 * (B.trace() * Mat3::Identity() - B); }

    /// G(R_e) of an orientation row and its derivatives along left perturbations
    struct RowMap
    {
      bool quat;
      Mat3 Re, G;
      double s = 1.0;
      Vec3 u = Vec3::Zero();
      RowMap(bool q, const Mat3 & R)
      : quat(q)
      , Re(R)
      {
        if (!quat)
        {
          G = half_trace(Re);
          return;
        }
        const Eigen::Quaterniond qe(Re);
        s = qe.w();
        u = qe.vec();
        if (s < 0.0)
        {
          s = -s;
          u = -u;
        }
        G = 0.5 * (s * Mat3::Identity() - skew(u));
      }
      Mat3 D(const Vec3 & x) const
      {
        if (!quat)
          return half_trace(skew(x) * Re);
        return 0.5 * ((-0.5 * u.dot(x)) * Mat3::Identity() - skew(G * x));
      }
      Mat3 D2(const Vec3 & g, const Vec3 & x) const
      {
        if (!quat)
          return half_trace(skew(x) * skew(g) * Re);
        return 0.5 * ((-0.5 * (G * g).dot(x)) * Mat3::Identity() - skew(D(g) * x));
      }
    };
  } // namespace

  void Differentiator::frame_der(int slot, FrameDer & f)
  {
    // from the RNEA derivatives' pass at (q, v, a) (dd_: oMi, ov, oa, J, dJ) and the
    // kinematic Hessians of that q
    const auto & model = mo_.model;
    const int nv = model.nv;
    const auto & fr = model.frames[mo_.frame_slots[size_t(slot)].id];
    const pinocchio::JointIndex j = fr.parentJoint;
    f.Jw.setZero(3, nv);
    f.dw.setZero(3, nv);
    f.dal.setZero(3, nv);
    f.dal_v.setZero(3, nv);
    f.Hw.setZero(3, nv * nv);
    if (j == 0) // a frame on the world: fixed
    {
      f.R = fr.placement.rotation();
      f.w.setZero();
      f.al.setZero();
      return;
    }
    f.R = dd_.oMi[j].rotation() * fr.placement.rotation();
    f.w = dd_.ov[j].angular();
    f.al = dd_.oa[j].angular();
    v6_.setZero(6, nv);
    a6q_.setZero(6, nv);
    a6v_.setZero(6, nv);
    a6a_.setZero(6, nv);
    // in the frame (LOCAL), then turned to world axes: d(R x)/d delta_k = Jw_k x (R x) +
    // R dx/d delta_k. Pinocchio's WORLD and LOCAL_WORLD_ALIGNED acceleration partials
    // miss a term in a spherical joint's own columns ((Jw_k x u) x u, u that joint's
    // world angular velocity; pin 4.1.0); the LOCAL ones agree with differences.
    pinocchio::getFrameAccelerationDerivatives(
      model, dd_, j, fr.placement, pinocchio::LOCAL, v6_, a6q_, a6v_, a6a_);
    f.Jw.noalias() = f.R * a6a_.bottomRows<3>();
    f.dw.noalias() = f.R * v6_.bottomRows<3>();
    f.dal.noalias() = f.R * a6q_.bottomRows<3>();
    f.dal_v.noalias() = f.R * a6v_.bottomRows<3>();
    for (int k = 0; k < nv; ++k)
    {
      const Vec3 g = f.Jw.col(k);
      f.dw.col(k) += g.cross(f.w);
      f.dal.col(k) += g.cross(f.al);
    }
    H_.setZero();
    pinocchio::getFrameKinematicHessian(
      model, dd_, j, fr.placement, pinocchio::LOCAL_WORLD_ALIGNED, H_);
    for (int k = 0; k < nv; ++k)
      f.Hw.middleCols(k * nv, nv) =
        Eigen::Map<const Matrix6x>(H_.data() + 6 * nv * k, 6, nv).bottomRows<3>();
  }

  void Differentiator::kind_partials(const VecX & v)
  {
    for (const KindRows & k : kinds_)
    {
      switch (mo_.specs[size_t(k.spec)].kind)
      {
      case Kind::Weld:
        weld_rows(k, v);
        break;
      case Kind::FrameAligned:
        frame_aligned_rows(k, v);
        break;
      case Kind::QuatAligned:
        quat_aligned_rows(k, v);
        break;
      case Kind::RevoluteClosure:
        revolute_closure_rows(k, v);
        break;
      case Kind::PointOnCircle:
        point_on_circle_rows(k, v);
        break;
      default:
        break;
      }
    }
  }

  // rows 3-5 of a weld: FrameAligned(frame1, frame2, R_off), all three rows (its
  // position rows are point terms, derivatives.cpp)
  void Differentiator::weld_rows(const KindRows & k, const VecX & v)
  {
    const Spec & s = mo_.specs[size_t(k.spec)];
    MatX P = Mat3::Identity();
    if (s.scale.size())
      P = s.scale.segment<3>(3).asDiagonal() * P;
    aligned_partials(s, k.row + 3, P, false, s.R_off, v);
  }

  void Differentiator::frame_aligned_rows(const KindRows & k, const VecX & v)
  {
    const Spec & s = mo_.specs[size_t(k.spec)];
    MatX P = s.D_identity ? MatX(Mat3::Identity()) : s.D;
    if (s.scale.size())
      P = s.scale.asDiagonal() * P;
    aligned_partials(s, k.row, P, false, s.s2 < 0 ? s.R_right : s.R_off, v);
  }

  void Differentiator::quat_aligned_rows(const KindRows & k, const VecX & v)
  {
    const Spec & s = mo_.specs[size_t(k.spec)];
    MatX P = Mat3::Identity();
    if (s.scale.size())
      P = s.scale.asDiagonal() * P;
    aligned_partials(s, k.row, P, true, s.R_off, v);
  }

  void Differentiator::aligned_partials(
    const Spec & s, int row, const MatX & P, bool quat, const Mat3 & R_c, const VecX & v)
  {
    const int nv = mo_.model.nv, m = m_, dim = int(P.rows());
    const bool two = s.s2 >= 0;
    FrameDer & f1 = f1_;
    FrameDer & f2 = f2_;
    frame_der(s.s1, f1);
    if (two)
      frame_der(s.s2, f2);
    const Mat3 Re = two ? Mat3(f1.R * R_c * f2.R.transpose()) : Mat3(f1.R * R_c);
    const RowMap g(quat, Re);
    // J_w, w, u2 = R_e w_2, R_e alpha_2, w'
    Matrix3x & Jw = Jw3_;
    Matrix3x & ReJ2 = ReJ2_;
    Matrix3x & dJ = dJ3_;
    Jw = f1.Jw;
    Vec3 u2 = Vec3::Zero(), ra2 = Vec3::Zero();
    if (two)
    {
      ReJ2.noalias() = Re * f2.Jw;
      Jw -= ReJ2;
      u2 = Re * f2.w;
      ra2 = Re * f2.al;
    }
    const Vec3 w = f1.w - u2;
    const Vec3 wd = f1.al - ra2 - w.cross(u2);
    const Mat3 Dw = g.D(w);
    dA3_.resize(3, nv);
    X3_.resize(3, 2 * nv);
    for (int k = 0; k < nv; ++k)
    {
      const Vec3 gk = Jw.col(k);
      const Mat3 Dg = g.D(gk);
      // dJ_w,k
      dJ = f1.Hw.middleCols(k * nv, nv);
      Vec3 dwk = f1.dw.col(k), dwdk = f1.dal.col(k) - gk.cross(ra2);
      if (two)
      {
        dJ.noalias() -= skew(gk) * ReJ2;
        dJ.noalias() -= Re * f2.Hw.middleCols(k * nv, nv);
        const Vec3 Rdw2 = Re * f2.dw.col(k);
        dwk -= gk.cross(u2) + Rdw2;
        const Vec3 du2 = gk.cross(u2) + Rdw2;
        dwdk -= Re * f2.dal.col(k) + dwk.cross(u2) + w.cross(du2);
      }
      dA3_.noalias() = Dg * Jw;
      dA3_.noalias() += g.G * dJ;
      dAB_.block(k * m + row, 0, dim, nv).noalias() = P * dA3_;
      X3_.col(k) = Dg * wd + g.G * dwdk + g.D2(gk, w) * w + g.D(dwk) * w + Dw * dwk;
      // in v: w moves by J_w's column k, w' by the accelerations' partials
      Vec3 dwdv = f1.dal_v.col(k) - gk.cross(u2);
      if (two)
        dwdv -= Re * f2.dal_v.col(k) + w.cross(ReJ2.col(k));
      X3_.col(nv + k) = g.G * dwdv + Dg * w + Dw * gk;
    }
    X_.middleRows(row, dim).noalias() = P * X3_;
  }

  // RevoluteClosure's rows 3, 4 (its point rows are point terms, derivatives.cpp):
  //   c_k = e_k x n_b, A_k = c_k^T (J_wa - J_wb),
  //   A_k a + drift_k = ((w_a x e_k) x n_b + e_k x (w_b x n_b)) . (w_a - w_b) + c_k . (al_a - al_b)
  // with e_k' = g_a x e_k, n_b' = g_b x n_b along delta_j (g: the columns j of J_w)
  void Differentiator::revolute_closure_rows(const KindRows & kr, const VecX &)
  {
    const Spec & s = mo_.specs[size_t(kr.spec)];
    const int nv = mo_.model.nv, m = m_;
    FrameDer & fa = f1_;
    FrameDer & fb = f2_;
    frame_der(s.s1, fa);
    frame_der(s.s2, fb);
    const Vec3 nb = fb.R * s.n;
    const Matrix3x Jd = fa.Jw - fb.Jw;
    const Vec3 dw = fa.w - fb.w, dal = fa.al - fb.al;
    const Vec3 wbn = fb.w.cross(nb);
    for (int r = 0; r < 2; ++r)
    {
      const int row = kr.row + 3 + r;
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
        auto dA = dAB_.row(j * m + row);
        dA.noalias() = dc.transpose() * Jd;
        dA.noalias() += c.transpose() * fa.Hw.middleCols(j * nv, nv);
        dA.noalias() -= c.transpose() * fb.Hw.middleCols(j * nv, nv);
        dA *= sc;
        const Vec3 dwa = fa.dw.col(j), dwb = fb.dw.col(j);
        const Vec3 dT = (dwa.cross(e) + fa.w.cross(de)).cross(nb) + we.cross(dn)
                        + de.cross(wbn) + e.cross(dwb.cross(nb) + fb.w.cross(dn));
        X_(row, j) = sc * (dT.dot(dw) + T.dot(dwa - dwb) + dc.dot(dal)
                           + c.dot(fa.dal.col(j) - fb.dal.col(j)));
        // in v: w_a, w_b move by the Jacobians' columns
        const Vec3 dTv = ga.cross(e).cross(nb) + e.cross(gb.cross(nb));
        X_(row, nv + j) =
          sc * (dTv.dot(dw) + T.dot(ga - gb) + c.dot(fa.dal_v.col(j) - fb.dal_v.col(j)));
      }
    }
  }

  // |p_xy - c| - rho: u = (p_xy - c) / r, A = u^T J_xy,
  //   A a + drift = u . p'' + (|p'|^2 - (u . p')^2) / r,  p' = J_xy v, p'' the point's
  // classical acceleration at the state's a; along delta_j u' = (I - u u^T) J_j / r,
  // r' = u . J_j, p'_j = H_j v, p''_j = the acceleration's partial (point_partials)
  void Differentiator::point_on_circle_rows(const KindRows & kr, const VecX & v)
  {
    const Spec & s = mo_.specs[size_t(kr.spec)];
    const auto & model = mo_.model;
    const int nv = model.nv, m = m_, row = kr.row;
    const double sc = s.scale.size() ? s.scale(0) : 1.0;
    const Point & pt = points_[size_t(kr.point)];
    const pinocchio::SE3 oMp = dd_.oMi[pt.joint] * pt.placement;
    const Vec3 p = oMp.translation();
    J6_.setZero(6, nv);
    pinocchio::getFrameJacobian(model, dd_, pt.joint, pt.placement, pinocchio::LOCAL_WORLD_ALIGNED, J6_);
    const Eigen::Matrix<double, 2, Eigen::Dynamic> J = J6_.topRows<2>();
    point_partials(pt);
    // the classical acceleration of the point from the joint's spatial motion (world)
    const auto & ov = dd_.ov[pt.joint];
    const auto & oa = dd_.oa[pt.joint];
    const Vec3 vp3 = ov.linear() + ov.angular().cross(p);
    const Vec3 ap3 = oa.linear() + oa.angular().cross(p) + ov.angular().cross(vp3);
    const Eigen::Vector2d d = p.head<2>() - s.c;
    const double r = d.norm();
    const Eigen::Vector2d u = d / r, vp = vp3.head<2>(), ap = ap3.head<2>();
    const double uv = u.dot(vp), N = vp.dot(vp) - uv * uv;
    for (int j = 0; j < nv; ++j)
    {
      const Eigen::Map<const Matrix6x> dJ(H_.data() + 6 * nv * j, 6, nv);
      const Eigen::Vector2d Jj = J.col(j);
      const Eigen::Vector2d du = (Jj - u * u.dot(Jj)) / r;
      const double dr = u.dot(Jj);
      auto dA = dAB_.row(j * m + row);
      dA.noalias() = du.transpose() * J;
      dA.noalias() += u.transpose() * dJ.topRows<2>();
      dA *= sc;
      const Eigen::Vector2d dvp = dJ.topRows<2>() * v;
      const Eigen::Vector2d dap = aq_.col(j).head<2>();
      X_(row, j) = sc * (du.dot(ap) + u.dot(dap)
                         + (2.0 * vp.dot(dvp) - 2.0 * uv * (du.dot(vp) + u.dot(dvp))) / r
                         - N * dr / (r * r));
      X_(row, nv + j) =
        sc * (u.dot(av_.col(j).head<2>()) + (2.0 * vp.dot(Jj) - 2.0 * uv * u.dot(Jj)) / r);
    }
  }
} // namespace pfaff
