// The compiled engine: per-state terms, constraint rows, projection, direct dynamics,
// constraint force, RK4 step loop with the drift correction. See core.hpp; the NumPy
// functions each block mirrors are named in its comment.
#include "core.hpp"
#include "check.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "pinocchio/algorithm/cholesky.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/energy.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea.hpp"

namespace pfaff
{
  namespace
  {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

    Mat3 skew(const Vec3 & r)
    {
      Mat3 S;
      S << 0.0, -r.z(), r.y(), r.z(), 0.0, -r.x(), -r.y(), r.x(), 0.0;
      return S;
    }

    double abs_max(const VecX & x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0; }
  } // namespace

  // FrameState.point / point_jacobian / point_drift of a point fixed in a frame
  void kinds::point_terms(
    const FrameKin & f,
    bool has_off,
    const Vec3 & off,
    Vec3 & p,
    Matrix3x & Jp,
    Vec3 & ap,
    bool with_drift)
  {
    if (!has_off)
    {
      p = f.p;
      Jp = f.J.topRows<3>();
      if (with_drift)
        ap = f.drift.head<3>();
      return;
    }
    const Vec3 r = f.R * off;
    p = f.p + r;
    Jp.noalias() = f.J.topRows<3>() - skew(r) * f.J.bottomRows<3>();
    if (with_drift)
      ap = f.drift.head<3>() + f.drift.tail<3>().cross(r) + f.w.cross(f.w.cross(r));
  }

  System::System(const std::string & model_text)
  : model(load_model(model_text))
  , data(model)
  , data_g(model)
  {
    const int nv = model.nv;
    M.setZero(nv, nv);
    h.setZero(nv);
    Jp1_.setZero(3, nv);
    Jp2_.setZero(3, nv);
    Gjw_.setZero(3, nv);
    q_ = pinocchio::neutral(model);
    qs_ = q_;
    q1_ = q_;
    dv_.setZero(nv);
    a0_.setZero(nv);
    v_.setZero(nv);
    tau_.setZero(nv);
    A.setZero(0, nv); // no rows yet: an unconstrained system (engine="core" only)
    A_h.setZero(0, nv);
    drift.setZero(0);
    phi.setZero(0);
    // Runge-Kutta-Munthe-Kaas stages where q lives on a Lie group (nq != nv); the
    // off-diagonal blocks of d integrate / d theta stay zero (dIntegrate sets the
    // joints' diagonal blocks)
    lie_ = model.nq != model.nv;
    Jint_.setZero(nv, nv);
    // d integrate / d theta is block diagonal, one block per joint: the multi-dof
    // joints' blocks get an LU each, the 1-dof joints' blocks are scalars
    for (pinocchio::JointIndex j = 1; j < pinocchio::JointIndex(model.njoints); ++j)
      if (model.nvs[j] > 1)
      {
        lie_blocks_.emplace_back(model.idx_vs[j], model.nvs[j]);
        lu_blocks_.emplace_back(model.nvs[j]);
      }
    d2_.setZero(nv);
    d3_.setZero(nv);
    d4_.setZero(nv);
    th_.setZero(nv);
  }

  FrameKin System::new_frame(const std::string & name, const char * where) const
  {
    if (!model.existFrame(name))
      Check{where}.fail("unknown frame '" + name + "' (the model has "
                        + std::to_string(model.nframes) + " frames)");
    FrameKin f;
    f.id = model.getFrameId(name);
    f.joint = model.frames[f.id].parentJoint;
    f.J.setZero(6, model.nv); // getFrameJacobian writes the supporting columns only
    return f;
  }

  namespace
  {
    int slot_of(std::vector<FrameKin> & fs, FrameKin f)
    {
      for (size_t i = 0; i < fs.size(); ++i)
        if (fs[i].id == f.id)
          return int(i);
      fs.push_back(std::move(f));
      return int(fs.size()) - 1;
    }
  } // namespace

  int System::add_frame(const std::string & name)
  {
    return slot_of(frames, new_frame(name, "System.add_frame"));
  }

  int System::observe(const std::string & name)
  {
    return slot_of(obs_frames, new_frame(name, "System.observe"));
  }

  void System::add(const Spec & s)
  {
    const Check c{"System.add"};
    // the rows each kind writes (kinds.def): fixed for all but the direction kinds
    static const int kind_rows[] = {
#define PFAFF_KIND(K, rows) rows,
#include "kinds.def"
#undef PFAFF_KIND
    };
    // the kind's own checks (src/cpp/kinds/*.cpp), by its position in kinds.def
    using CheckFn = void (*)(const System &, const Spec &, const Check &);
    static const CheckFn checks[] = {
#define PFAFF_KIND(K, rows) &kinds::check_##K,
#include "kinds.def"
#undef PFAFF_KIND
    };
    const int k = static_cast<int>(s.kind);
    if (k < 0 || k >= int(sizeof(kind_rows) / sizeof(int)))
      c.fail("spec.kind = " + std::to_string(k) + " is not a kind of kinds.def");
    const int dim = kind_rows[k] > 0 ? kind_rows[k] : s.dim;
    if (s.dim != dim || s.dim < 1)
      c.fail("spec.dim = " + std::to_string(s.dim) + ": this kind writes "
             + std::to_string(dim) + " row(s)");
    const long nf = long(frames.size());
    c.index(s.s2, nf, "spec.s2", "a frame slot of add_frame, or -1: the world", -1);
    checks[k](*this, s, c);
    if (s.scale.size() != 0)
      c.vec(s.scale, s.dim, "spec.scale", "one row factor per row (dim), or none");
    c.finite(s.p1, "spec.p1").finite(s.p2, "spec.p2").finite(s.n, "spec.n");
    c.finite(s.target, "spec.target").finite(s.R_off, "spec.R_off");
    c.finite(s.R_right, "spec.R_right").finite(s.c, "spec.c");
    c.number(s.d, "spec.d", -HUGE_VAL, false).number(s.value, "spec.value", -HUGE_VAL, false);
    c.number(s.c0, "spec.c0", -HUGE_VAL, false).number(s.c1, "spec.c1", -HUGE_VAL, false);
    specs.push_back(s);
    for (int i = 0; i < s.dim; ++i)
    {
      (holonomic(s) ? hol_rows : pf_rows).push_back(m + i);
      if (s.unilateral)
        uni_rows.push_back(m + i);
    }
    m += s.dim;
    if (holonomic(s))
      m_h += s.dim;
    hh_ws_.setZero(m);
    A.setZero(m, model.nv);
    A_h.setZero(m_h, model.nv);
    drift.setZero(m);
    phi.setZero(m_h);
  }

  int System::add_contact(const Contour & contour, int s_obj, int s_tip, double r)
  {
    const Check ck{"System.add_contact"};
    contour.check(ck.where);
    ck.index(s_obj, long(frames.size()), "s_obj", "the object's frame slot of add_frame");
    ck.index(s_tip, long(frames.size()), "s_tip", "the fingertip's frame slot of add_frame");
    ck.number(r, "r (the fingertip radius) [m]", 0.0, true);
    RollingContact c;
    c.contour = contour;
    c.s_obj = s_obj;
    c.s_tip = s_tip;
    c.r = r;
    c.JQ.setZero(2, model.nv);
    c.Jrot.setZero(model.nv);
    contacts.push_back(std::move(c));
    return int(contacts.size()) - 1;
  }

  // -- per-state terms (PinocchioMechanism.compute) -----------------------------
  void System::frame_terms(
    std::vector<FrameKin> & fs, bool with_velocity, const VecX & v, bool placements)
  {
    for (auto & f : fs)
    {
      if (placements)
      {
        const auto & oMf = pinocchio::updateFramePlacement(model, data, f.id);
        f.p = oMf.translation();
        f.R = oMf.rotation();
        pinocchio::getFrameJacobian(model, data, f.id, pinocchio::LOCAL_WORLD_ALIGNED, f.J);
      }
      if (with_velocity)
      {
        f.drift = pinocchio::getFrameClassicalAcceleration(
                    model, data, f.id, pinocchio::LOCAL_WORLD_ALIGNED)
                    .toVector();
        f.w.noalias() = f.J.bottomRows<3>() * v;
      }
      else
      {
        f.drift.setZero();
        f.w.setZero();
      }
    }
  }

  void System::dynamics_state(const VecX & q, const VecX & v, bool extras)
  {
    // M (upper triangle; CRBA in the WORLD convention also fills the joint Jacobians
    // data.J), h = RNEA at a = 0, then the kinematics at a = 0 for the frames' drift
    // (computeAllTerms does all of it and more: centroidal terms, energies, Jcom)
    const bool fresh = mass_matrix(q);
    pinocchio::nonLinearEffects(model, data, q, v);
    joint_accelerations(frames);
    h = data.nle;
    frame_terms(true, v, fresh); // placements and Jacobians stand with M
    if (!felems.empty()) // force elements: tau + Q - h = tau - (h - Q)
    {
      if (felems.gravity)
        gravity_terms(q);
      if (!felems.evaluate(frames, q, v, g_fe_, Vg_fe_))
        felems.Q(0) = kNaN; // a point spring's points coincide: direction undefined
      h -= felems.Q;
    }
    if (extras)
    {
      kinetic = 0.5 * v.dot(M * v);
      potential_gravity = pinocchio::computePotentialEnergy(model, data, q);
      potential = potential_gravity + felems.V;
    }
  }

  void System::gravity_terms(const VecX & q)
  {
    // on data_g: data keeps the passes of the state (M, h, the frames)
    g_fe_ = pinocchio::computeGeneralizedGravity(model, data_g, q);
    Vg_fe_ = pinocchio::computePotentialEnergy(model, data_g, q);
  }

  void System::joint_accelerations(const std::vector<FrameKin> & fs)
  {
    // RNEA's forward pass leaves a_gf = a - X g (a: acceleration at zero joint
    // acceleration, X the world-to-joint motion transform): a = a_gf + X g, taken
    // for the joints that carry a frame (oMi from the CRBA pass, same q)
    for (const auto & f : fs)
      data.a[f.joint] = data.a_gf[f.joint] + data.oMi[f.joint].actInv(model.gravity);
  }

  bool System::mass_matrix(const VecX & q)
  {
    // the CRBA pass of the last call still stands when q is bitwise the same and no
    // other kinematics ran since (the start of a step after a correction that took
    // no Newton step): M, its factor and data.oMi, data.J are those of q
    if (M_ok_ && q.size() == q_M_.size() && q == q_M_)
      return false;
    pinocchio::crba(model, data, q, pinocchio::Convention::WORLD);
    M.triangularView<Eigen::Upper>() = data.M;
    M.triangularView<Eigen::StrictlyLower>() = data.M.transpose();
    q_M_ = q;
    M_ok_ = true;
    chol_ok_ = false;
    gram_vel_ = false;
    return true;
  }

  void System::mass_factor()
  {
    if (chol_ok_)
      return;
    pinocchio::cholesky::decompose(model, data);
    chol_ok_ = true;
  }

  // G = V1^T M^-1 V1 = Y^T D^-1 Y with Y = U^-1 V1 (M = U D U^T, Pinocchio's sparse
  // factor: one triangular solve per column instead of two), factored into llt_
  void System::metric_gram(const MatX & V1)
  {
    gram_vel_ = false;
    Ya_ = V1;
    pinocchio::cholesky::Uiv(model, data, Ya_);
    Ya_ = data.Dinv.cwiseSqrt().asDiagonal() * Ya_; // D^-1/2 U^-1 V1
    Ga_.setZero(V1.cols(), V1.cols());
    Ga_.selfadjointView<Eigen::Lower>().rankUpdate(Ya_.transpose());
    llt_.compute(Ga_);
  }

  void System::kinematics_state(const VecX & q)
  {
    M_ok_ = false; // data.oMi, data.J move to q; data.M stays
    pinocchio::computeJointJacobians(model, data, q);
    frame_terms(false, v_);
  }

  // -- constraint rows (constraints.library, constraints.weld) ------------------
  // R_e of an orientation block and the angular-velocity rows Gjw_ of d R_e / dt:
  // against the world R_e = R_1 R_world, Gjw_ = J_w1; between two frames
  // R_e = R_1 R_off R_2^T (R_1 R_2^T when off_identity), Gjw_ = J_w1 - R_e J_w2
  Mat3 System::relative_rotation(
    const Spec & s, const Mat3 & R_world, const Mat3 & R_off, bool off_identity)
  {
    const FrameKin & f1 = frames[s.s1];
    Mat3 Re;
    if (s.s2 < 0)
    {
      Re.noalias() = f1.R * R_world;
      Gjw_ = f1.J.bottomRows<3>();
      return Re;
    }
    const FrameKin & f2 = frames[s.s2];
    if (off_identity)
      Re.noalias() = f1.R * f2.R.transpose();
    else
      Re.noalias() = (f1.R * R_off) * f2.R.transpose();
    Gjw_.noalias() = f1.J.bottomRows<3>() - Re * f2.J.bottomRows<3>();
    return Re;
  }

  void System::aligned_rows(
    const Spec & s, const Mat3 & R_off, bool off_identity, int row, int hrow, bool with_drift)
  {
    const FrameKin & f1 = frames[s.s1];
    const Mat3 Re = relative_rotation(s, s.R_right, R_off, off_identity);
    const double tr = Re.trace();
    const Mat3 G = 0.5 * (tr * Mat3::Identity() - Re);
    const Vec3 e(
      0.5 * (Re(2, 1) - Re(1, 2)), 0.5 * (Re(0, 2) - Re(2, 0)), 0.5 * (Re(1, 0) - Re(0, 1)));
    Vec3 dr = Vec3::Zero();
    if (with_drift)
    {
      // _drift3: G' w + G w', w = J_w v, w' = alpha_1 - R_e alpha_2 - w x (R_e omega_2)
      const Vec3 w = Gjw_ * v_stage_ref();
      Vec3 a = f1.drift.tail<3>();
      if (s.s2 >= 0)
      {
        const FrameKin & f2 = frames[s.s2];
        const Vec3 u = Re * f2.w;
        a -= Re * f2.drift.tail<3>() + w.cross(u);
      }
      const double tr_d = w.x() * (Re(1, 2) - Re(2, 1)) + w.y() * (Re(2, 0) - Re(0, 2))
                          + w.z() * (Re(0, 1) - Re(1, 0));
      const Vec3 c = Re * w;
      dr = 0.5 * (tr_d * w - w.cross(c) + tr * a - Re * a);
    }
    if (s.D_identity)
    {
      A.middleRows(row, 3).noalias() = G * Gjw_;
      drift.segment<3>(row) = dr;
      phi.segment<3>(hrow) = e;
    }
    else
    {
      const int k = int(s.D.rows());
      A.middleRows(row, k).noalias() = (s.D * G) * Gjw_;
      drift.segment(row, k).noalias() = s.D * dr;
      phi.segment(hrow, k).noalias() = s.D * e;
    }
  }

  // QuatAligned.terms: R_e = R_1 R_off R_2^T, q_e = (s, u) with s >= 0, Phi = u,
  // A = H J_w, H = (s I - [u]x) / 2, drift = H' w + H w', H' = (s' I - [u']x) / 2,
  // s' = -u.w / 2, u' = H w, w' = alpha_1 - R_e alpha_2 - w x (R_e omega_2)
  void System::quat_rows(const Spec & s, int row, int hrow, bool with_drift)
  {
    const FrameKin & f1 = frames[s.s1];
    const Mat3 Re = relative_rotation(s, s.R_off, s.R_off, false);
    const Eigen::Quaterniond qe(Re);
    double sc = qe.w();
    Vec3 u = qe.vec();
    if (sc < 0.0)
    {
      sc = -sc;
      u = -u;
    }
    const Mat3 H = 0.5 * (sc * Mat3::Identity() - skew(u));
    A.middleRows(row, 3).noalias() = H * Gjw_;
    phi.segment<3>(hrow) = u;
    if (!with_drift)
    {
      drift.segment<3>(row).setZero();
      return;
    }
    const Vec3 w = Gjw_ * v_stage_ref();
    Vec3 wdot = f1.drift.tail<3>();
    if (s.s2 >= 0)
    {
      const FrameKin & f2 = frames[s.s2];
      const Vec3 o2 = Re * f2.w;
      wdot -= Re * f2.drift.tail<3>();
      wdot -= w.cross(o2);
    }
    const Vec3 du = H * w;
    const Mat3 Hd = 0.5 * ((-0.5 * u.dot(w)) * Mat3::Identity() - skew(du));
    drift.segment<3>(row) = Hd * w + H * wdot;
  }

  void System::write_spec(const Spec & s, int row, int hrow, const VecX & q, bool with_drift)
  {
    // the kind's row writer (src/cpp/kinds/*.cpp), by its position in kinds.def
    using RowFn = void (*)(System &, const Spec &, const RowOut &);
    static const RowFn writers[] = {
#define PFAFF_KIND(K, rows) &kinds::K,
#include "kinds.def"
#undef PFAFF_KIND
    };
    writers[static_cast<int>(s.kind)](*this, s, RowOut{row, hrow, q, with_drift});
    if (s.scale.size()) // Scaled: the rows times constant factors (coupling.Scaled)
    {
      A.middleRows(row, s.dim).array().colwise() *= s.scale.array();
      drift.segment(row, s.dim).array() *= s.scale.array();
      if (holonomic(s))
        phi.segment(hrow, s.dim).array() *= s.scale.array();
    }
  }

  void System::evaluate(const VecX & q, const VecX & v, bool with_drift)
  {
    vref_ = &v;
    ++eval_stamp_;
    int row = 0, hrow = 0;
    for (const auto & s : specs)
    {
      write_spec(s, row, hrow, q, with_drift);
      row += s.dim;
      if (holonomic(s))
        hrow += s.dim;
    }
    for (int i = 0; i < m_h; ++i)
      A_h.row(i) = A.row(hol_rows[i]);
  }

  // -- projection (linalg.full_row_rank_qr, linalg.row_space, dynamics.projection) ---
  void System::row_space(const MatX & Am, bool want_sigma, bool allow_qr, RowSpace & rs)
  {
    const int mm = int(Am.rows()), n = int(Am.cols());
    const double tol = opt.rank_tol;
    if (mm == 0)
    {
      rs.V1.resize(n, 0);
      rs.W.resize(0, 0);
      rs.rank = 0;
      rs.sigma_min = 0.0;
      return;
    }
    if (allow_qr && mm <= n && rs.deficient && pivoted_rows(Am, rs))
    {
      // rank deficient at the last call: straight to the pivoted QR
      if (want_sigma)
        sigma_of_factor(rs);
      return;
    }
    if (allow_qr && mm <= n)
    {
      // certified QR of A^T: sigma_min(A) >= 1 / ||R^-1||_F >= 2 rank_tol
      qr_.compute(Am.transpose());
      rs.W.setIdentity(mm, mm);
      qr_.matrixQR().topLeftCorner(mm, mm).triangularView<Eigen::Upper>().solveInPlace(rs.W);
      const double nrm = rs.W.norm();
      if (nrm * 2.0 * tol <= 1.0) // false for inf / nan
      {
        thin_q(qr_.matrixQR(), qr_.hCoeffs(), mm, rs.V1);
        rs.rank = mm;
        rs.R.resize(0, 0);
        rs.deficient = false;
        if (want_sigma)
          sigma_of_factor(rs);
        else
          rs.sigma_min = kNaN;
        return;
      }
      if (pivoted_rows(Am, rs))
      {
        if (want_sigma)
          sigma_of_factor(rs);
        return;
      }
    }
    svd_.compute(Am, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const VecX & s = svd_.singularValues();
    int r = 0;
    while (r < s.size() && s(r) >= tol)
      ++r;
    rs.rank = r;
    rs.V1 = svd_.matrixV().leftCols(r);
    rs.W = svd_.matrixU().leftCols(r) * s.head(r).cwiseInverse().asDiagonal();
    rs.sigma_min = mm <= n ? s(s.size() - 1) : 0.0;
    rs.R.resize(0, 0);
    rs.deficient = r < mm;
  }

  // Q_1 = H_0 ... H_{r-1} [I_r; 0] from the first r Householder reflectors of a QR
  // (LAPACK's dorg2r): H_k, applied last to first, touches rows k.. and columns k..
  // only (Eigen's HouseholderSequence applies each reflector to every column)
  void System::thin_q(const MatX & QR, const VecX & hc, int r, MatX & V1)
  {
    const int n = int(QR.rows());
    V1.setIdentity(n, r);
    for (int k = r - 1; k >= 0; --k)
      V1.bottomRightCorner(n - k, r - k)
        .applyHouseholderOnTheLeft(QR.col(k).tail(n - k - 1), hc(k), hh_ws_.data());
  }

  // sigma_min(A) of a QR factorisation: full row rank, A^+ = V1 W^T with W = R^-1,
  // sigma_min = 1 / ||R^-1||_2; certified rank r < m, the singular values of A^T Pi =
  // Q R are those of the m x m triangle R kept by pivoted_rows (values only)
  void System::sigma_of_factor(RowSpace & rs)
  {
    if (rs.rank == 0)
      rs.sigma_min = 0.0;
    else if (rs.R.size() == 0)
      rs.sigma_min =
        1.0 / std::sqrt((rs.W.transpose() * rs.W).selfadjointView<Eigen::Lower>().operatorNorm());
    else
    {
      svd_R_.compute(rs.R);
      rs.sigma_min = svd_R_.singularValues().minCoeff();
    }
  }

  // Rank-deficient rows without the SVD (issue 15: 12 loop rows of rank 8 on 30 dof).
  // Column-pivoted QR of A^T: A^T Pi = Q [R11 R12; 0 R22], R11 r x r. The split is
  // certified for the absolute threshold when
  //   sigma_r(A) >= sigma_min(R11) >= 1 / ||R11^-1||_F >= 2 rank_tol   (interlacing:
  //     the first r columns of A^T Pi are Q_1 R11) and
  //   sigma_{r+1}(A) <= ||R22||_2 <= ||R22||_F <= rank_tol / 2,
  // so the SVD with the absolute rank_tol finds rank r too; the truncated
  // A ~ Pi S^T Q_1^T, S = [R11 R12], differs from the SVD's by O(||R22||) (round-off
  // for exactly dependent rows). Then V1 = Q_1 and A^+ = Q_1 (S^T)^+ Pi^T = V1 W^T
  // (W below). Otherwise (a singular value near rank_tol) the caller takes the SVD.
  // Measured on examples/quadruped.xml (A 12 x 30, rank 8; Eigen 3.4, -O2, this
  // 2-core host under load, min of 40 x 500 calls):
  // JacobiSVD thin U/V 50-90 us, BDCSVD 63-108 us, LAPACK dgesdd (scipy's OpenBLAS)
  // 56-90 us, QR of A^T + JacobiSVD of the 12 x 12 R 62-116 us, QR of A^T alone 3 us.
  bool System::pivoted_rows(const MatX & Am, RowSpace & rs)
  {
    const int mm = int(Am.rows());
    const double tol = opt.rank_tol;
    cpqr_.compute(Am.transpose());
    const MatX & QR = cpqr_.matrixQR();
    int r = 0;
    while (r < mm && std::abs(QR(r, r)) >= tol)
      ++r;
    if (r == 0 || r == mm)
      return false; // full row rank: the full-rank QR (as linalg.full_row_rank_qr) or SVD
    double r22 = 0.0; // ||R22||_F of the (m - r) x (m - r) upper triangle
    for (int j = r; j < mm; ++j)
      r22 += QR.col(j).segment(r, j - r + 1).squaredNorm();
    if (!(std::sqrt(r22) * 2.0 <= tol))
      return false;
    Y_.setIdentity(r, r);
    QR.topLeftCorner(r, r).triangularView<Eigen::Upper>().solveInPlace(Y_);
    if (!(Y_.norm() * 2.0 * tol <= 1.0)) // false for inf / nan
      return false;
    // Q_1 = H_1 ... H_r [I_r; 0]: the reflectors H_k, k > r, are zero on the first r
    // rows and leave [I_r; 0] as it is
    thin_q(QR, cpqr_.hCoeffs(), r, rs.V1);
    // S^T = [R11 R12]^T = [I; K] R11^T, K^T = R11^-1 R12 (the coefficients of the
    // dependent rows, bounded by the pivoting), so (S^T)^+ = R11^-T H^-1 [I K^T]
    // with H = I + K^T K (r x r, eigenvalues >= 1) and W = Pi [I; K] H^-1 R11^-1
    Kt_.noalias() = Y_ * QR.block(0, r, r, mm - r);
    H_.setIdentity(r, r);
    H_.selfadjointView<Eigen::Lower>().rankUpdate(Kt_);
    lltH_.compute(H_);
    S_.resize(mm, r);
    S_.topRows(r) = Y_;
    lltH_.solveInPlace(S_.topRows(r));
    S_.bottomRows(mm - r).noalias() = Kt_.transpose() * S_.topRows(r);
    rs.W.noalias() = cpqr_.colsPermutation() * S_;
    rs.rank = r;
    rs.sigma_min = kNaN;
    rs.deficient = r < mm;
    rs.R = QR.topRows(mm).triangularView<Eigen::Upper>(); // for sigma_of_factor
    return true;
  }

  // -- direct dynamics (dynamics.direct_dynamics, Aghili eq. 22, 27, 29) ------------
  void System::accel(const VecX & tau, const RowSpace & rs, VecX & a, bool gram_ready)
  {
    const int n = model.nv;
    if (opt.variant == 0)
    {
      // M_c a = P (tau - h) + M C v' (Aghili eq. 22, 23; M_c = M + P M - (P M)^T) has
      // the solution of M a = f + V1 mu, V1^T a = c (c = -W^T drift; V1^T of the rhs
      // and P times it, as M_c a* = M a* + P f - M (a* - V1 c)): with M's sparse
      // factor M = U D U^T (Pinocchio's cholesky, O(nv depth) per solve) and the r x r
      // G = V1^T M^-1 V1, a = M^-1 f + M^-1 V1 G^-1 (c - V1^T M^-1 f). The NumPy engine
      // solves M_c by LU (dynamics.direct_dynamics); the two witness each other.
      mass_factor();
      a = tau - h;
      pinocchio::cholesky::solve(model, data, a);
      if (rs.rank > 0)
      {
        ya_.noalias() = -(rs.W.transpose() * drift);
        ya_.noalias() -= rs.V1.transpose() * a;
        if (!gram_ready)
          metric_gram(rs.V1);
        llt_.solveInPlace(ya_);
        tmp_.noalias() = rs.V1 * ya_;
        pinocchio::cholesky::solve(model, data, tmp_);
        a += tmp_;
      }
      return;
    }
    // M'_c, M''_c (Aghili eq. 27, 29) formed as the paper writes them, solved by LU
    Cv_.noalias() = -(rs.V1 * (rs.W.transpose() * drift));
    tmp_ = tau - h;
    y_.noalias() = rs.V1.transpose() * tmp_;
    rhs_ = tmp_;
    rhs_.noalias() -= rs.V1 * y_;
    {
      P.setIdentity(n, n);
      P.noalias() -= rs.V1 * rs.V1.transpose();
      Qp = MatX::Identity(n, n) - P;
      if (opt.variant == 1)
      {
        tmp_.noalias() = M * Cv_;
        rhs_ += tmp_;
        rhs_.noalias() -= 2.0 * (P * tmp_);
        PM.noalias() = P * M;
        Mc.noalias() = PM * P;
        PM.noalias() = Qp * M;
        Mc.noalias() += PM * Qp;
      }
      else
      {
        double g = opt.gamma;
        if (!(g > 0.0))
          g = M.selfadjointView<Eigen::Lower>().operatorNorm();
        Mc.noalias() = P * M;
        Mc += g * Qp;
        rhs_ += g * Cv_;
      }
    }
    lu_.compute(Mc);
    a = lu_.solve(rhs_);
  }

  // -- constraint force and multipliers (dynamics.constraint_force, eq. 32) ---------
  void System::forces(
    const VecX & tau, const RowSpace & rs, const VecX & a, VecX & F, VecX & lam)
  {
    // F = (I - P)(tau - h - M a) = V1 V1^T (tau - h - M a)
    tmp_ = tau - h;
    tmp_.noalias() -= M * a;
    y_.noalias() = rs.V1.transpose() * tmp_;
    F.noalias() = rs.V1 * y_;
    lam.noalias() = rs.W * y_;
  }

  void System::solve(
    const VecX & q, const VecX & v, const VecX & tau, VecX & a, VecX & F, VecX & lam, int & rank)
  {
    start_ok_ = false; // data and rs_ move to (q, v)
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    row_space(A, true, false, rs_);
    accel(tau, rs_, a);
    forces(tau, rs_, a, F, lam);
    rank = rs_.rank;
  }

  void System::acceleration(const VecX & q, const VecX & v, const VecX & tau, VecX & a)
  {
    start_ok_ = false;
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    row_space(A, false, true, rs_stage_);
    accel(tau, rs_stage_, a);
  }

  // The terms at the step's start state (q_, v_): M, h, the frames (dynamics_state),
  // A, drift, Phi (evaluate) and the row space rs_ of A, which is the correction's
  // factor rs_vel_ when that A stands (same q, bitwise). A controller sample takes
  // them (with rec: the energies and sigma_min), and the step that follows (run)
  // reuses them: only its torque differs. Returns whether llt_ already holds
  // G = V1^T M^-1 V1 of rs_.V1.
  bool System::start_terms(bool rec)
  {
    if (start_ok_) // taken by sample() at this state
      return start_gram_ && chol_ok_;
    dynamics_state(q_, v_, rec);
    evaluate(q_, v_, true);
    bool gram = false;
    if (A_vel_ok_ && A == A_vel_)
    {
      // the correction of the last step factored this A (same q, bitwise): reuse it,
      // and its G when M's factor is still the one it used
      std::swap(rs_, rs_vel_);
      A_vel_ok_ = false;
      gram = gram_vel_ && chol_ok_;
      if (rec)
        sigma_of_factor(rs_);
    }
    else
      row_space(A, rec, true, rs_);
    start_ok_ = true;
    start_gram_ = gram;
    return gram;
  }

  void System::sample(bool with_sensors, Sample & out)
  {
    const int n = model.nv;
    // the certified QR when A has full row rank (sigma_min from R), else the SVD; the
    // step that follows reuses these terms (start_terms)
    const bool gram = start_terms(true);
    out.rank = rs_.rank;
    out.sigma_min = rs_.sigma_min;
    MatX N = MatX::Identity(n, n);
    if (rs_.rank > 0) // complete V1 to an orthonormal basis (one Householder QR of V1)
    {
      Eigen::HouseholderQR<MatX> qv(rs_.V1);
      N.applyOnTheLeft(qv.householderQ());
      N = N.rightCols(n - rs_.rank).eval();
    }
    VecX F, lam;
    if (with_sensors)
    {
      accel(tau_, rs_, a_, gram);
      start_gram_ = opt.variant == 0 && rs_.rank > 0; // llt_: G of rs_.V1
      forces(tau_, rs_, a_, F, lam);
    }
    // the observed frames: dynamics_state left the RNEA pass of (q_, v_) and the
    // placements of q_ in data
    joint_accelerations(obs_frames);
    frame_terms(obs_frames, true, v_, true);
    RowMat kin(Eigen::Index(obs_frames.size()), 18 + 6 * n);
    for (size_t i = 0; i < obs_frames.size(); ++i)
    {
      const FrameKin & f = obs_frames[i];
      auto row = kin.row(Eigen::Index(i));
      row.head<3>() = f.p.transpose();
      for (int r = 0; r < 3; ++r)
        row.segment<3>(3 + 3 * r) = f.R.row(r);
      for (int r = 0; r < 6; ++r)
        row.segment(12 + r * n, n) = f.J.row(r);
      row.tail<6>() = f.drift.transpose();
    }
    out.kinetic = kinetic; // start_terms(true): dynamics_state's energies
    // on data_g: data keeps the passes the next step's start reuses (M, its factor)
    const VecX g = pinocchio::computeGeneralizedGravity(model, data_g, q_);
    out.potential = potential_gravity;
    // the projection's P = I - V1 V1^T and C v = -A^+ drift, A^+ = V1 W^T (eq. 4, 16)
    MatX P = MatX::Identity(n, n);
    P.noalias() -= rs_.V1 * rs_.V1.transpose();
    VecX Cv = VecX::Zero(n);
    if (rs_.rank > 0)
      Cv.noalias() = -(rs_.V1 * (rs_.W.transpose() * drift));
    // one array (nanobind would export each small Eigen object through numpy.copy)
    out.blob.resize(q_.size() + v_.size() + M.size() + h.size() + A.size() + drift.size()
                    + phi.size() + rs_.V1.size() + rs_.W.size() + N.size() + P.size()
                    + Cv.size() + F.size() + lam.size() + kin.size() + g.size());
    double * p = out.blob.data();
    auto put = [&p](const auto & X) {
      Eigen::Map<RowMat>(p, X.rows(), X.cols()) = X;
      p += X.size();
    };
    put(q_), put(v_), put(M), put(h), put(A), put(drift), put(phi);
    put(rs_.V1), put(rs_.W), put(N), put(P), put(Cv), put(F), put(lam), put(kin), put(g);
  }

  // -- the step loop (simulate.integrator, simulate.correction) --------------------
  size_t System::record_width(int i) const
  {
    // the rows record() writes: t, q, v, a, tau, F, lambda, A v, Phi, then eight scalars
    // (rank, sigma_min, kinetic, potential, energy, work, correction, Newton iterations)
    const int w[9] = {1, model.nq, model.nv, model.nv, model.nv, model.nv, m, m, m_h};
    return i < 9 ? size_t(w[i]) : 1;
  }

  void System::set_buffers(
    const std::vector<double *> & bufs, const std::vector<size_t> & sizes, int capacity)
  {
    const Check c{"System.set_buffers"};
    if (bufs.size() != 17 || sizes.size() != 17)
      c.fail("buffers has " + std::to_string(bufs.size()) + " arrays: expected 17 record "
             "buffers (t, q, v, a, tau, F, lambda, A v, Phi and eight scalars)");
    c.index(capacity, INT_MAX, "capacity", ">= 0");
    check_buffers(c.where, sizes, capacity);
    bufs_ = bufs;
    buf_sizes_ = sizes;
    capacity_ = capacity;
    recorded = 0;
  }

  void System::check_buffers(
    const char * where, const std::vector<size_t> & sizes, int capacity) const
  {
    for (int i = 0; i < 17; ++i) // refuse a buffer record() would overflow
      if (sizes[size_t(i)] < record_width(i) * size_t(capacity))
        Check{where}.fail(
          "record buffer " + std::to_string(i) + " holds " + std::to_string(sizes[size_t(i)])
          + " values, " + std::to_string(record_width(i) * size_t(capacity))
          + " needed (capacity " + std::to_string(capacity) + " x width "
          + std::to_string(record_width(i)) + ")");
  }

  void System::record(double t)
  {
    if (recorded >= capacity_ || (fbuf_[0] && recorded >= fcap_))
      throw std::runtime_error("record buffers full");
    const int i = recorded++;
    const int nq = model.nq, nv = model.nv;
    auto row = [&](int b, const VecX & x) {
      if (x.size())
        Eigen::Map<VecX>(bufs_[b] + size_t(i) * x.size(), x.size()) = x;
    };
    bufs_[0][i] = t;
    row(1, q_);
    row(2, v_);
    row(3, a_);
    row(4, tau_);
    row(5, F_);
    row(6, lam_);
    tmp_.noalias() = A * v_;
    if (m)
      Eigen::Map<VecX>(bufs_[7] + size_t(i) * m, m) = tmp_;
    row(8, phi);
    bufs_[9][i] = rs_.rank;
    bufs_[10][i] = rs_.sigma_min;
    const double pot = potential - opt.potential_offset;
    bufs_[11][i] = kinetic;
    bufs_[12][i] = pot;
    bufs_[13][i] = kinetic + pot;
    bufs_[14][i] = work;
    bufs_[15][i] = corr;
    bufs_[16][i] = newton_it;
    if (fbuf_[0])
    {
      fbuf_[0][i] = force_work;
      fbuf_[1][i] = felems.V;
    }
    (void)nq;
    (void)nv;
  }

  bool System::finite_or(const char * what, const VecX & x, double t, int step, Status & st)
  {
    for (int i = 0; i < x.size(); ++i)
      if (!std::isfinite(x(i)))
      {
        st.code = 1;
        st.what = what;
        st.index = i;
        st.value = x(i);
        st.t = t;
        st.step = step;
        return false;
      }
    return true;
  }

  void System::stage_rate(const VecX & q, const VecX & theta, const VecX & vi, VecX & out)
  {
    if (!lie_)
    {
      out = vi;
      return;
    }
    pinocchio::dIntegrate(model, q, theta, Jint_, pinocchio::ARG1);
    // block by block (the off-diagonal blocks are zero): as one LU of Jint_, in
    // O(sum nv_j^3) instead of O(nv^3)
    out.array() = vi.array() / Jint_.diagonal().array();
    for (size_t b = 0; b < lie_blocks_.size(); ++b)
    {
      const auto [i, k] = lie_blocks_[b];
      lu_blocks_[b].compute(Jint_.block(i, i, k, k));
      out.segment(i, k).noalias() = lu_blocks_[b].solve(vi.segment(i, k));
    }
  }

  double System::stage(VecX & q, VecX & v, VecX & a)
  {
    if (opt.stage_projection && m > 0)
      correct(q, v, true);
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    row_space(A, false, true, rs_stage_);
    accel(tau_, rs_stage_, a);
    return felems.power; // power of the force elements' dampers at the stage
  }

  void System::check_force(const ForceSpec & f, const char * where) const
  {
    const Check c{where};
    const long nf = long(frames.size());
    const bool point = f.kind == ForceKind::PointSpring || f.kind == ForceKind::PointDamper
                       || f.kind == ForceKind::AnchorSpring || f.kind == ForceKind::AnchorDamper
                       || f.kind == ForceKind::PointForce;
    if (point)
      c.index(f.s1, nf, "spec.s1", "a frame slot of add_frame");
    if (f.kind == ForceKind::PointSpring || f.kind == ForceKind::PointDamper)
      c.index(f.s2, nf, "spec.s2", "a frame slot of add_frame, or -1: the world", -1);
    if (f.kind == ForceKind::JointSpring || f.kind == ForceKind::JointDamper)
    {
      c.index(f.iq, model.nq, "spec.iq", "a q index (nq)");
      c.index(f.iv, model.nv, "spec.iv", "a v index (nv)");
    }
    if (f.iqs.size() != f.coefs.size() || f.ivs.size() != f.coefs.size())
      c.fail("spec.iqs, spec.ivs, spec.coefs: one q index, v index and coefficient each");
    for (size_t i = 0; i < f.iqs.size(); ++i)
    {
      c.index(f.iqs[i], model.nq, "spec.iqs[i]", "a q index (nq)");
      c.index(f.ivs[i], model.nv, "spec.ivs[i]", "a v index (nv)");
      c.number(f.coefs[i], "spec.coefs[i]", -HUGE_VAL, false);
    }
    for (const double x : {f.k, f.L0, f.k3, f.c})
      c.number(x, "spec.k, L0, k3, c", 0.0, false);
    c.number(f.rest, "spec.rest", -HUGE_VAL, false);
    c.finite(f.p1, "spec.p1").finite(f.p2, "spec.p2").finite(f.target, "spec.target");
    c.finite(f.F, "spec.F");
  }

  void System::add_force(const ForceSpec & spec)
  {
    check_force(spec, "System.add_force");
    felems.add(spec);
    felems.resize(model.nv);
  }

  void System::add_held_force(const ForceSpec & spec)
  {
    check_force(spec, "System.add_held_force");
    held.add(spec);
    held.resize(model.nv);
  }

  // Newton-Raphson on the holonomic rows, then the M-metric velocity projection at the
  // corrected q with M before the correction (correction.correct_state). at_stage: an
  // RK4 stage put on the manifold (steppers.rk4_step): no bookkeeping of the step's
  // correction (energy, iterations, the factor the next step reuses)
  Status System::correct(VecX & q, VecX & v, bool at_stage)
  {
    Status st;
    // M (CRBA; its WORLD convention fills the joint Jacobians) and the frames at q:
    // no h, no drift here
    mass_matrix(q);
    frame_terms(false, v);
    evaluate(q, v, false);
    const MatX & Mk = M; // kinematics_state below leaves M untouched
    // correction.newton_project: stopped on the size of the step in q (issue 19), its
    // round-off thresholds scaled by the size of the constraint frames' positions
    // (correction.position_scale): Phi = p1 - p2 of points 100 m from the origin
    // rounds at 100 times the level of a unit-sized mechanism
    double scale = 1.0;
    for (const auto & s : specs)
      for (int k : {s.s1, s.s2})
        if (k >= 0)
          scale = std::max(scale, frames[k].p.cwiseAbs().maxCoeff());
    for (const auto & c : contacts)
      for (int k : {c.s_obj, c.s_tip})
        scale = std::max(scale, frames[k].p.cwiseAbs().maxCoeff());
    const double floor_tol = opt.position_floor * scale;
    const double step_tol = opt.newton_step_tol * scale;
    double err = abs_max(phi);
    // correction.on_manifold: a stage where Newton takes no step keeps its velocity
    // (near a fold, N(A) at a q that Phi no longer resolves is tilted from the branch);
    // and, with Pfaffian rows, where those hold to floor_tol max(1, max |v|)
    bool keep = at_stage && err <= floor_tol;
    if (keep && m != m_h)
    {
      const double vtol = floor_tol * std::max(1.0, v.cwiseAbs().maxCoeff());
      for (int i : pf_rows)
        keep = keep && std::abs(A.row(i).dot(v)) <= vtol;
    }
    if (keep)
    {
      st.value = err;
      return st; // M stands for the stage's dynamics (q unchanged)
    }
    double last = std::numeric_limits<double>::infinity();
    int it = 0;
    bool newton_fresh = false; // rs_newton_ factors A_h at the current q
    while (m_h > 0 && it < opt.max_newton)
    {
      row_space(A_h, false, true, rs_newton_);
      newton_fresh = true;
      dq_.noalias() = rs_newton_.V1 * (rs_newton_.W.transpose() * phi);
      const double step = dq_.size() ? dq_.cwiseAbs().maxCoeff() : 0.0;
      if (!std::isfinite(step))
        break;
      if (err <= floor_tol)
        break; // Phi at its round-off level
      if (err <= opt.position_tol && step <= step_tol)
        break; // on the manifold, to newton_step_tol in q
      if (it && !(step < last))
        break; // no progress: the round-off floor
      dq_ = -dq_;
      pinocchio::integrate(model, q, dq_, qs_);
      q = qs_;
      kinematics_state(q);
      evaluate(q, v, false);
      newton_fresh = false;
      err = abs_max(phi);
      last = step;
      ++it;
    }
    if (!at_stage)
      newton_it = it;
    // velocity: v - M^-1 V1 (V1^T M^-1 V1)^-1 V1^T v  (linalg.metric_projection)
    // (all rows holonomic and Newton stopped after factoring A_h at this q: the same
    // factorisation)
    if (m == m_h && newton_fresh)
      std::swap(rs_vel_, rs_newton_);
    else
      row_space(A, false, true, rs_vel_);
    // the next step starts at this q: run() reuses rs_vel_ where its A is this one
    A_vel_ok_ = !at_stage && m > 0 && m == m_h;
    if (A_vel_ok_)
      A_vel_ = A;
    VecX & vn = vn_;
    vn = v;
    if (rs_vel_.rank > 0)
    {
      // with M's sparse factor at the q before Newton (as Mk; the next step's
      // dynamics reuses it when Newton took no step); linalg.metric_projection, the
      // NumPy engine's, solves with LU
      mass_factor();
      y_.noalias() = rs_vel_.V1.transpose() * v;
      metric_gram(rs_vel_.V1);
      gram_vel_ = !at_stage; // the next step's start reuses it with rs_vel_
      llt_.solveInPlace(y_);
      tmp_.noalias() = rs_vel_.V1 * y_;
      pinocchio::cholesky::solve(model, data, tmp_);
      vn -= tmp_;
    }
    if (!at_stage) // the kinetic energy the correction removed
    {
      tmp_.noalias() = Mk * vn;
      corr += 0.5 * vn.dot(tmp_);
      tmp_.noalias() = Mk * v;
      corr -= 0.5 * v.dot(tmp_);
    }
    v = vn;
    st.value = err;
    st.iterations = it;
    return st;
  }

  Status System::run(int k0, int k1, int n_steps, double t0)
  {
    Status st;
    const double dt = opt.dt;
    const bool check_contact = !uni_rows.empty();
    for (int k = k0; k < k1 && k <= n_steps; ++k)
    {
      const double t = t0 + k * dt;
      const bool rec = (k % opt.record_every == 0) || k == n_steps;
      const bool gram = start_terms(rec);
      start_ok_ = false; // the step moves (q_, v_) and data
      if (held_on_ && !(t < next_ctrl_ - 1e-9 * dt)) // a held law's sample (set_held)
      {
        if (held.gravity)
          gravity_terms(q_);
        held.evaluate(frames, q_, v_, g_fe_, Vg_fe_); // the frames of (q_, v_), with velocity
        tau_ = held.Q;
        next_ctrl_ += control_dt_;
      }
      const double p1 = felems.power;
      accel(tau_, rs_, a_, gram);
      if (!finite_or("acceleration", a_, t, k, st))
        return st;
      if (rec || check_contact)
      {
        forces(tau_, rs_, a_, F_, lam_);
        if (check_contact)
        {
          int worst = -1;
          double fmin = 0.0;
          for (int r : uni_rows)
            if (-lam_(r) < 0.0 && (worst < 0 || -lam_(r) < fmin))
            {
              worst = r;
              fmin = -lam_(r);
            }
          if (worst >= 0)
          {
            st.code = 2;
            st.index = worst;
            st.value = fmin;
            st.t = t;
            st.step = k;
            return st;
          }
        }
      }
      if (rec)
        record(t);
      if (k == n_steps)
        break;
      // RK4, in Runge-Kutta-Munthe-Kaas form on a Lie group (steppers.rk4_step): the
      // stages move along theta in the tangent space at q, q_i = integrate(q, theta_i),
      // theta' = dintegrate_dv(q, theta)^-1 v_i; on nq == nv models theta' = v_i
      const double h2 = 0.5 * dt;
      v2_ = v_ + h2 * a_;
      dv_ = h2 * v_;
      pinocchio::integrate(model, q_, dv_, qs_);
      const double p2 = stage(qs_, v2_, a2_);
      stage_rate(q_, dv_, v2_, d2_);
      v3_ = v_ + h2 * a2_;
      dv_ = h2 * d2_;
      pinocchio::integrate(model, q_, dv_, qs_);
      const double p3 = stage(qs_, v3_, a3_);
      stage_rate(q_, dv_, v3_, d3_);
      v4_ = v_ + dt * a3_;
      dv_ = dt * d3_;
      pinocchio::integrate(model, q_, dv_, qs_);
      const double p4 = stage(qs_, v4_, a4_);
      stage_rate(q_, dv_, v4_, d4_);
      vbar_ = (v_ + 2.0 * d2_ + 2.0 * d3_ + d4_) / 6.0;
      dv_ = dt * vbar_;
      pinocchio::integrate(model, q_, dv_, q1_);
      v1_ = v_ + dt * (a_ + 2.0 * a2_ + 2.0 * a3_ + a4_) / 6.0;
      if (!finite_or("q", q1_, t + dt, k + 1, st) || !finite_or("v", v1_, t + dt, k + 1, st))
        return st;
      work += dt * tau_.dot(vbar_);
      force_work += dt * (p1 + 2.0 * p2 + 2.0 * p3 + p4) / 6.0; // steppers.rk4_step
      Status c = correct(q1_, v1_);
      if (c.value > opt.position_tol)
      {
        ++newton_failures;
        if (!(c.value <= 1e-6))
        {
          st.code = 3;
          st.value = c.value;
          st.iterations = c.iterations;
          st.t = t + dt;
          st.step = k + 1;
          return st;
        }
      }
      q_ = q1_;
      v_ = v1_;
      steps = k + 1;
    }
    return st;
  }
} // namespace pfaff
