// The helpers the constraint kinds' derivative rows share (KindDerivatives,
// kind_derivatives.hpp; each kind's derive_K is in its file src/cpp/kinds/<name>.cpp): a
// frame's and a point's partials from Pinocchio's RNEA-derivatives pass, the rows
// D (p_1 - p_2) of points fixed in frames (PointOnPlane, PointsCoincide, the position rows
// of Weld and RevoluteClosure), and the orientation rows of Weld, FrameAligned and
// QuatAligned. The NumPy reference differentiates the kinds beyond points and joint rows
// by central differences (pfaff.derivatives.terms, fd_constraints).
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
#include "algorithms/kind_derivatives.hpp"
#include "model/core_detail.hpp"

#include "pinocchio/algorithm/frames-derivatives.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/kinematics-derivatives.hpp"
#include "pinocchio/algorithm/kinematics.hpp"

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

  KindDerivatives::KindDerivatives(
    const Model & mo_, Data & d_, pinocchio::Data & dd_, MatX & dAB_, MatX & X_)
  : mo(mo_)
  , d(d_)
  , dd(dd_)
  , dAB(dAB_)
  , X(X_)
  , m(mo_.m)
  , nv(mo_.model.nv)
  {
    H.resize(6, nv, nv);
    vq.setZero(3, nv);
    aq.setZero(3, nv);
    av.setZero(3, nv);
    aa.setZero(3, nv);
    sup_.resize(size_t(nv));
    col_joint_.resize(size_t(nv));
    for (pinocchio::JointIndex j = 1; j < mo_.model.joints.size(); ++j)
      for (int i = 0; i < mo_.model.nvs[j]; ++i)
        col_joint_[size_t(mo_.model.idx_vs[j] + i)] = int(j);
    w_.resize(3, nv);
    Jp_.resize(3, nv);
  }

  void KindDerivatives::begin(const VecX & q_, const VecX & v_, const VecX & a_)
  {
    q = &q_;
    v = &v_;
    a = &a_;
    hessians_ = false;
  }

  void KindDerivatives::hessians()
  {
    if (hessians_)
      return;
    // from the placements and joint Jacobians of the RNEA derivatives' pass
    pinocchio::computeJointKinematicHessians(mo.model, dd);
    hessians_ = true;
  }

  KindDerivatives::Point KindDerivatives::point(int slot, bool has_off, const Vec3 & off) const
  {
    const auto & f = mo.model.frames[mo.frame_slots[size_t(slot)].id];
    pinocchio::SE3 pl = f.placement;
    if (has_off)
      pl = pl * pinocchio::SE3(Mat3::Identity(), off);
    return {f.parentJoint, pl};
  }

  void KindDerivatives::point_partials(const Point & p)
  {
    // from the RNEA derivatives' pass at (q, v, a): dd holds oMi, ov, oa, J, dJ as
    // computeForwardKinematicsDerivatives would, and the joints' kinematic Hessians
    hessians();
    const auto & model = mo.model;
    H.setZero();
    vq.setZero();
    aq.setZero();
    av.setZero();
    aa.setZero();
    if (p.joint == 0) // a point on the world: fixed
      return;
    pinocchio::getFrameKinematicHessian(
      model, dd, p.joint, p.placement, pinocchio::LOCAL_WORLD_ALIGNED, H);
    pinocchio::getPointClassicAccelerationDerivatives(
      model, dd, p.joint, p.placement, pinocchio::LOCAL_WORLD_ALIGNED, vq, aq, av, aa);
  }

  void KindDerivatives::point_rows(const Spec & s, int row, DMat D, bool offsets, bool both)
  {
    const int k = int(D.rows());
    if (s.scale.size())
      D = s.scale.head(k).asDiagonal() * D;
    const bool eye = k == 3 && D.isIdentity(0.0);
    const Vec3 zero = Vec3::Zero();
    const Point p1 = point(s.s1, offsets && s.has_p1, offsets ? s.p1 : zero);
    if (both && s.s2 >= 0)
      term_difference(row, D, eye, p1, point(s.s2, offsets && s.has_p2, offsets ? s.p2 : zero));
    else
      term(row, D, eye, 1.0, p1);
  }

  // Both points of a difference move with the coordinates they share (their joints'
  // common ancestors: a loop's two sides hang from one chain), and for such a pair (k, c)
  // the two Hessian columns w_k x J_c(p) differ by w_k x (w_c x (p1 - p2)) alone: the
  // first term writes that difference once, the second skips the pair
  void KindDerivatives::term_difference(
    int row, const DMat & D, bool identity, const Point & p1, const Point & p2)
  {
    if (mo.mimic || p1.joint == 0 || p2.joint == 0)
    {
      term(row, D, identity, 1.0, p1);
      term(row, D, identity, -1.0, p2);
      return;
    }
    const auto & model = mo.model;
    const auto & par = dd.parents_fromRow;
    common_.assign(size_t(nv), 0);
    for (int i = model.idx_vs[p1.joint] + model.nvs[p1.joint] - 1; i >= 0; i = par[size_t(i)])
      common_[size_t(i)] = 1;
    for (int i = model.idx_vs[p2.joint] + model.nvs[p2.joint] - 1; i >= 0; i = par[size_t(i)])
      common_[size_t(i)] = char(common_[size_t(i)] == 1 ? 2 : 0);
    for (char & c : common_)
      c = char(c == 2);
    dp_ = (dd.oMi[p1.joint] * p1.placement).translation()
          - (dd.oMi[p2.joint] * p2.placement).translation();
    term(row, D, identity, 1.0, p1, Share::first);
    term(row, D, identity, -1.0, p2, Share::second);
  }

  // sign D p: dA_k += sign D dJ_k (the point's linear Jacobian's partials), X += sign D
  // [aq, av]. Only the point's support (its joint's coordinates and their ancestors',
  // along parents_fromRow) moves it: the other slices and columns are zero, so the loops
  // walk the support alone. Without mimic joints dJ_k's column c comes from the joints'
  // world columns S = (v, w) of data.J and the point p at this q, as Pinocchio's
  // LOCAL_WORLD_ALIGNED kinematic Hessian has it (kinematics-derivatives.hxx) but without
  // its 6 x nv x nv tensor: with J_k = v_k + w_k x p the point's column k,
  //   dJ_c / dq_k = w_c x J_k + [c in k's joint or below it, c != k] (S_k x S_c) at p,
  //   (S_k x S_c) at p = w_k x v_c + v_k x w_c + (w_k x w_c) x p = w_k x J_c - w_c x J_k
  // (v = J - w x p and the Jacobi identity), so that dJ_c / dq_k = w_k x J_c where c is
  // in k's joint or below it and w_c x J_k otherwise: one cross product a pair.
  // The point's classical acceleration partials aq, av come from the same walk, column
  // by column as Pinocchio's getPointClassicAccelerationDerivatives forms them, but in
  // world axes at p (no frame changes, no dispatch over joint types, 1.8 us a point on
  // the biped's knee loops).
  // With mimic joints (rows the tree does not describe) the kinematic Hessian's slices
  // over every coordinate.
  void KindDerivatives::term(
    int row, const DMat & D, bool identity, double sign, const Point & p, Share share)
  {
    if (p.joint == 0) // a point on the world: fixed, no partials
      return;
    const int dim = int(D.rows());
    auto add = [&](int k, int c, const Vec3 & col) {
      auto dA = dAB.col(c).segment(k * m + row, dim);
      if (identity)
        dA += sign * col;
      else
        dA.noalias() += sign * (D * col);
    };
    if (mo.mimic)
    {
      point_partials(p);
      for (int k = nv - 1; k >= 0; --k)
      {
        const double * dJ = H.data() + 6 * size_t(nv) * size_t(k);
        for (int c = nv - 1; c >= 0; --c)
          add(k, c, Eigen::Map<const Vec3>(dJ + 6 * c));
      }
    }
    else
    {
      const auto & model = mo.model;
      aq.setZero();
      av.setZero();
      const pinocchio::SE3 oMp = dd.oMi[p.joint] * p.placement;
      const Vec3 pw = oMp.translation();
      const auto & par = dd.parents_fromRow;
      const auto & start = dd.start_idx_v_fromRow;
      // the point's velocity and classical acceleration (world axes)
      const Vec3 om = dd.ov[p.joint].angular();
      const Vec3 vP = dd.ov[p.joint].linear() + om.cross(pw);
      const Vec3 acc = dd.oa[p.joint].linear() + dd.oa[p.joint].angular().cross(pw) + om.cross(vP);
      // the support's coordinates, last first, with their columns w and J at p and
      // the partials of the point's classical acceleration along them (aq, av)
      int ns = 0;
      for (int i = model.idx_vs[p.joint] + model.nvs[p.joint] - 1; i >= 0; i = par[size_t(i)])
      {
        const auto S = dd.J.col(i);
        const Vec3 w = S.tail<3>();
        const Vec3 J = S.head<3>() + w.cross(pw);
        sup_[size_t(ns)] = i;
        w_.col(ns) = w;
        Jp_.col(ns) = J;
        ++ns;
        const auto dJ = dd.dJ.col(i);
        const Vec3 dJp = dJ.head<3>() + dJ.tail<3>().cross(pw);
        const int parent = int(model.parents[size_t(col_joint_[size_t(i)])]);
        // Pinocchio's getPointClassicAccelerationDerivatives in world axes: with the
        // parent's velocity (om_par, vp_par) and acceleration (al_par, ap_par) at p,
        //   av = (om_par - om) x J + (vp_par - vP) x w + dJ_p + om x J - vP x w
        //   aq = al_par x J + ap_par x w + (om_par - om + om) x vs - (vp_par - vP + vP) x ws
        //        + w x acc, with vs = om_par x J + vp_par x w, ws = om_par x w
        // (the parent's terms vanish below the root's joint)
        Vec3 av_c = dJp + om.cross(J) - vP.cross(w);
        Vec3 aq_c = w.cross(acc);
        if (parent > 0)
        {
          const Vec3 omp = dd.ov[size_t(parent)].angular();
          const Vec3 vpp = dd.ov[size_t(parent)].linear() + omp.cross(pw);
          const Vec3 alp = dd.oa[size_t(parent)].angular();
          const Vec3 app = dd.oa[size_t(parent)].linear() + alp.cross(pw);
          const Vec3 om2 = omp - om, v2 = vpp - vP;
          av_c += om2.cross(J) + v2.cross(w);
          const Vec3 vs = omp.cross(J) + vpp.cross(w), ws = omp.cross(w);
          aq_c += alp.cross(J) + app.cross(w) + om2.cross(vs) + v2.cross(ws) + om.cross(vs)
                  - vP.cross(ws);
        }
        else // the parent's velocity is zero
          av_c -= om.cross(J) + vP.cross(w);
        aq.col(i) = aq_c;
        av.col(i) = av_c;
      }
      // the support is one path (last first): for k above c's joint, dJ_c/dq_k =
      // dJ_k/dq_c = w_k x J_c (the point's Hessian is symmetric), one cross product for
      // both entries; within one joint (a ball's, a free joint's) the two differ
      const int ld = int(dAB.rows());
      double * const base = dAB.data() + size_t(row);
      auto put = [&](int k, int c, const Vec3 & col) __attribute__((always_inline)) {
        double * dst = base + size_t(c) * size_t(ld) + size_t(k) * size_t(m);
        if (identity)
          Eigen::Map<Vec3>(dst) += sign * col;
        else
          Eigen::Map<VecX>(dst, dim).noalias() += sign * (D * col);
      };
      // with a second point (term_difference), the shared coordinates' columns: the
      // first term's are the difference's, w_c x (p1 - p2); the second skips them (a
      // coordinate's ancestors are shared where it is, and so are the coordinates of
      // its joint)
      auto shared = [&](int c) { return share != Share::alone && common_[size_t(c)]; };
      for (int b = 0; b < ns; ++b)
      {
        const int c = sup_[size_t(b)];
        const bool both = shared(c);
        if (both && share == Share::second)
          continue;
        const Vec3 wb = w_.col(b);
        const Vec3 Jb = both ? Vec3(wb.cross(dp_)) : Vec3(Jp_.col(b));
        put(c, c, wb.cross(Jb));
        for (int a = b + 1; a < ns; ++a) // k < c
        {
          const int k = sup_[size_t(a)];
          const Vec3 wk = w_.col(a);
          const Vec3 col = wk.cross(Jb);
          put(k, c, col);
          if (k >= start[size_t(c)]) // k and c in one joint
            put(c, k, wb.cross(both ? Vec3(wk.cross(dp_)) : Vec3(Jp_.col(a))));
          else
            put(c, k, col);
        }
      }
    }
    auto ddqa = X.leftCols(nv), ddv = X.rightCols(nv);
    if (identity)
    {
      ddqa.middleRows(row, 3) += sign * aq;
      ddv.middleRows(row, 3) += sign * av;
    }
    else
    {
      ddqa.middleRows(row, dim) += sign * D.lazyProduct(aq);
      ddv.middleRows(row, dim) += sign * D.lazyProduct(av);
    }
  }

  void KindDerivatives::frame(int slot, FrameDer & f)
  {
    // from the RNEA derivatives' pass at (q, v, a) (dd: oMi, ov, oa, J, dJ) and the
    // kinematic Hessians of that q
    hessians();
    const auto & model = mo.model;
    const auto & fr = model.frames[mo.frame_slots[size_t(slot)].id];
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
    f.R = dd.oMi[j].rotation() * fr.placement.rotation();
    f.w = dd.ov[j].angular();
    f.al = dd.oa[j].angular();
    v6_.setZero(6, nv);
    a6q_.setZero(6, nv);
    a6v_.setZero(6, nv);
    a6a_.setZero(6, nv);
    // in the frame (LOCAL), then turned to world axes: d(R x)/d delta_k = Jw_k x (R x) +
    // R dx/d delta_k. Pinocchio's WORLD and LOCAL_WORLD_ALIGNED acceleration partials
    // miss a term in a spherical joint's own columns ((Jw_k x u) x u, u that joint's
    // world angular velocity; pin 4.1.0); the LOCAL ones agree with differences.
    pinocchio::getFrameAccelerationDerivatives(
      model, dd, j, fr.placement, pinocchio::LOCAL, v6_, a6q_, a6v_, a6a_);
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
    H.setZero();
    pinocchio::getFrameKinematicHessian(
      model, dd, j, fr.placement, pinocchio::LOCAL_WORLD_ALIGNED, H);
    for (int k = 0; k < nv; ++k)
      f.Hw.middleCols(k * nv, nv) =
        Eigen::Map<const Matrix6x>(H.data() + 6 * nv * k, 6, nv).bottomRows<3>();
  }

  void KindDerivatives::aligned(
    const Spec & s, int row, const MatX & P, bool quat, const Mat3 & R_c)
  {
    const int dim = int(P.rows());
    const bool two = s.s2 >= 0;
    frame(s.s1, f1);
    if (two)
      frame(s.s2, f2);
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
      dAB.block(k * m + row, 0, dim, nv).noalias() = P * dA3_;
      X3_.col(k) = Dg * wd + g.G * dwdk + g.D2(gk, w) * w + g.D(dwk) * w + Dw * dwk;
      // in v: w moves by J_w's column k, w' by the accelerations' partials
      Vec3 dwdv = f1.dal_v.col(k) - gk.cross(u2);
      if (two)
        dwdv -= Re * f2.dal_v.col(k) + w.cross(ReJ2.col(k));
      X3_.col(nv + k) = g.G * dwdv + Dg * w + Dw * gk;
    }
    X.middleRows(row, dim).noalias() = P * X3_;
  }
} // namespace pfaff
