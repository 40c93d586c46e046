// The direct dynamics with the three constraint inertia matrices, the constraint force
// and multipliers, a step's start terms and one sample of a state (see core.hpp); the
// row space they take is row_space.cpp's.
#include "model/core.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"
#include "algorithms/householder.hpp"
#include "algorithms/tree_factor.hpp"

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
  using detail::abs_max;
  using detail::kNaN;
  using detail::householder_qr;
  using detail::upper_inverse;

  // -- direct dynamics (dynamics.direct_dynamics, Aghili eq. 22, 27, 29) ------------
  void accel(const Model & mo, Data & d, const VecX & tau, const RowSpace & rs, VecX & a)
  {
    const int n = mo.model.nv;
    if (mo.opt.variant == 0)
    {
      // M_c a = P (tau - h) + M C v' (Aghili eq. 22, 23; M_c = M + P M - (P M)^T) has
      // the solution of M a = f + V1 mu, V1^T a = c (c = -W^T drift; V1^T of the rhs
      // and P times it, as M_c a* = M a* + P f - M (a* - V1 c)): with M's sparse
      // factor M = U D U^T (Pinocchio's cholesky, O(nv depth) per solve) and the r x r
      // G = V1^T M^-1 V1, a = M^-1 f + M^-1 V1 G^-1 (c - V1^T M^-1 f). The NumPy engine
      // solves M_c by LU (dynamics.direct_dynamics); the two witness each other.
      mass_factor(mo, d);
      a = tau - d.h;
      detail::tree_solve(d.data, a);
      if (rs.rank > 0)
      {
        wt(rs, d.drift, d.ya_, -1.0); // c - V1^T M^-1 f, c = -W^T drift
        v1t(rs, a, d.ya_, -1.0, true);
        if (!d.gram_stands(rs)) // else the correction's or the sample's G of rs stands
          metric_gram(mo, d, rs);
        gram_solve(d, rs, d.ya_);
        v1(rs, d.ya_, d.tmp_);
        detail::tree_solve(d.data, d.tmp_);
        a += d.tmp_;
        // a full block's rows fix its a (V1_b c_b; M^-1 does not couple trees, so the
        // other blocks' a is that of the whole solve)
        full_accel(rs, d.drift, a, d.yf_);
      }
      return;
    }
    // M'_c, M''_c (Aghili eq. 27, 29) formed as the paper writes them, solved by LU
    const MatX & M = dense_M(mo, d);
    const MatX & V1 = formed_V1(rs, d.V1f_);
    wt(rs, d.drift, d.y_);
    d.Cv_.noalias() = -(V1 * d.y_);
    d.tmp_ = tau - d.h;
    d.y_.noalias() = V1.transpose() * d.tmp_;
    d.rhs_ = d.tmp_;
    d.rhs_.noalias() -= V1 * d.y_;
    {
      d.P.setIdentity(n, n);
      d.P.noalias() -= V1 * V1.transpose();
      d.Qp = MatX::Identity(n, n) - d.P;
      if (mo.opt.variant == 1)
      {
        d.tmp_.noalias() = M * d.Cv_;
        d.rhs_ += d.tmp_;
        d.rhs_.noalias() -= 2.0 * (d.P * d.tmp_);
        d.PM.noalias() = d.P * M;
        d.Mc.noalias() = d.PM * d.P;
        d.PM.noalias() = d.Qp * M;
        d.Mc.noalias() += d.PM * d.Qp;
      }
      else
      {
        double g = mo.opt.gamma;
        if (!(g > 0.0))
          g = M.selfadjointView<Eigen::Lower>().operatorNorm();
        d.Mc.noalias() = d.P * M;
        d.Mc += g * d.Qp;
        d.rhs_ += g * d.Cv_;
      }
    }
    d.lu_.compute(d.Mc);
    a = d.lu_.solve(d.rhs_);
  }

  // -- constraint force and multipliers (dynamics.constraint_force, eq. 32) ---------
  void forces(
    const Model & mo, Data & d, const VecX & tau, const RowSpace & rs, const VecX & a, VecX & F,
    VecX & lam)
  {
    // F = (I - P)(tau - h - M a) = V1 V1^T (tau - h - M a)
    d.tmp_ = tau - d.h;
    d.tmp_.noalias() -= dense_M(mo, d) * a;
    v1t(rs, d.tmp_, d.y_);
    v1(rs, d.y_, F);
    w(rs, d.y_, lam);
  }

  void System::solve(
    const VecX & q, const VecX & v, const VecX & tau, VecX & a, VecX & F, VecX & lam, int & rank)
  {
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    row_space(mo(), d(), A, true, false, rs_);
    accel(mo(), d(), tau, rs_, a);
    forces(mo(), d(), tau, rs_, a, F, lam);
    rank = rs_.rank;
  }

  void System::acceleration(const VecX & q, const VecX & v, const VecX & tau, VecX & a)
  {
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    if (opt.variant == 0 && well_conditioned_rows(tau, a))
      return;
    row_space(mo(), d(), A, false, true, rs_stage_);
    accel(mo(), d(), tau, rs_stage_, a);
  }

  // One evaluation where A has full row rank and is well conditioned (the QR of A^T
  // certifies the rank; ||R||_F ||R^-1||_F <= 1e4 bounds cond(A)): A^T itself spans the
  // row space V1 = A^T R^-1 spans, so accel solves with V1 = A^T, W = I: a = M^-1 f +
  // M^-1 A^T (A M^-1 A^T)^-1 (-drift - A M^-1 f), without forming the thin Q (the step
  // loop forms it: it needs V1 and W again).
  // Equal to accel's solution to round-off times cond(A)^2 <= 1e8. False (nothing
  // done) otherwise.
  bool System::well_conditioned_rows(const VecX & tau, VecX & a)
  {
    const int mm = m, n = model.nv;
    if (mm == 0 || mm > n)
      return false;
    householder_qr(A.transpose(), QRs_, hcs_);
    upper_inverse(QRs_, mm, Y_);
    const double wn = Y_.norm(), rn = QRs_.topLeftCorner(mm, mm).norm();
    if (!(wn * 2.0 * opt.rank_tol <= 1.0) || !(wn * rn <= 1e4))
      return false;
    // accel's solution with V1 = A^T, W = I (V1^T a = -W^T drift is A a = -drift)
    rs_rows_.V1 = A.transpose();
    rs_rows_.W.setIdentity(mm, mm);
    rs_rows_.n = n;
    rs_rows_.m = mm;
    rs_rows_.rank = mm;
    rs_rows_.stamp = st_.next();
    accel(mo(), d(), tau, rs_rows_, a);
    return true;
  }

  bool take_vel_factor(Data & d, RowSpace & rs)
  {
    // the last correction factored this A (same q, bitwise: A == A_vel_) in this state
    // epoch: its factor, with its stamp, moves into rs (and G of it stands for accel
    // while M's factor is still the one it used: gram_stands)
    const Stamps & st = d.st_;
    if (!(st.vel != 0 && st.vel == d.rs_vel_.stamp && st.vel_epoch == st.epoch
          && d.A.rows() == d.A_vel_.rows() && d.A == d.A_vel_))
      return false;
    std::swap(rs, d.rs_vel_);
    return true;
  }

  // The terms at the step's start state (q, v): M, h, the frames (dynamics_state),
  // A, drift, Phi (evaluate) and the row space rs_ of A, which is the correction's
  // factor rs_vel_ when that A stands (same q, bitwise). A controller sample takes
  // them (with rec: the energies and sigma_min), and the step that follows (run)
  // reuses them while no pass came between (their stamp is the last): only its
  // torque differs.
  void start_terms(const Model & mo, Data & d, const VecX & q, const VecX & v, bool rec)
  {
    if (d.st_.terms != 0 && d.st_.terms == d.st_.pass) // taken by sample() at this state
      return;
    dynamics_state(mo, d, q, v, rec);
    evaluate(mo, d, q, v, true);
    if (take_vel_factor(d, d.rs_))
    {
      if (rec)
        sigma_of_factor(d, d.rs_);
    }
    else
      row_space(mo, d, d.A, rec, true, d.rs_);
    d.st_.terms = d.st_.pass;
  }

  void System::sample(bool with_sensors, Sample & out)
  {
    const int n = model.nv;
    // the certified QR when A has full row rank (sigma_min from R), else the SVD; the
    // step that follows reuses these terms (start_terms)
    start_terms(mo(), d(), q_, v_, true);
    out.q = q_, out.v = v_, out.M = dense_M(mo(), d()), out.h = h;
    out.A = A, out.drift = drift, out.phi = phi;
    const MatX & V1 = formed_V1(rs_, V1f_);
    out.V1 = V1, out.W = formed_W(rs_, Wf_);
    out.rank = rs_.rank;
    out.sigma_min = rs_.sigma_min;
    MatX N = MatX::Identity(n, n);
    if (rs_.rank > 0) // complete V1 to an orthonormal basis (one Householder QR of V1)
    {
      Eigen::HouseholderQR<MatX> qv(V1);
      N.applyOnTheLeft(qv.householderQ());
      N = N.rightCols(n - rs_.rank).eval();
    }
    out.N = N;
    out.F.resize(0), out.lam.resize(0);
    if (with_sensors)
    {
      accel(mo(), d(), tau_, rs_, a_); // llt_ then holds G of rs_ for the step (gram_stands)
      forces(mo(), d(), tau_, rs_, a_, out.F, out.lam);
    }
    // the observed frames: dynamics_state left the RNEA pass of (q_, v_) and the
    // placements of q_ in data
    joint_accelerations(mo(), d(), obs_slots);
    frame_terms(mo(), d(), obs_slots, obs_frames, &v_, true);
    // each row as tables.hpp lays it out (frame_fields: p, R, J row by row, drift)
    out.frames.resize(Eigen::Index(obs_frames.size()), frame_row_width(n));
    const int at_R = frame_field_start(FrameField::R, n);
    const int at_J = frame_field_start(FrameField::J, n);
    for (size_t i = 0; i < obs_frames.size(); ++i)
    {
      const FrameKin & f = obs_frames[i];
      auto row = out.frames.row(Eigen::Index(i));
      row.segment<3>(frame_field_start(FrameField::p, n)) = f.p.transpose();
      for (int r = 0; r < 3; ++r)
        row.segment<3>(at_R + 3 * r) = f.R.row(r);
      for (int r = 0; r < 6; ++r)
        row.segment(at_J + r * n, n) = f.J.row(r);
      row.segment<6>(frame_field_start(FrameField::drift, n)) = f.drift.transpose();
    }
    out.kinetic = kinetic; // start_terms(true): dynamics_state's energies
    // on data_g: data keeps the passes the next step's start reuses (M, its factor)
    out.g = pinocchio::computeGeneralizedGravity(model, data_g, q_);
    out.potential = potential_gravity;
    // the projection's P = I - V1 V1^T and C v = -A^+ drift, A^+ = V1 W^T (eq. 4, 16)
    MatX P = MatX::Identity(n, n);
    P.noalias() -= V1 * V1.transpose();
    out.P = P;
    out.Cv = VecX::Zero(n);
    if (rs_.rank > 0)
    {
      wt(rs_, drift, y_);
      v1(rs_, y_, out.Cv, -1.0);
    }
  }
} // namespace pfaff
