// The direct dynamics with the three constraint inertia matrices, the constraint force
// and multipliers, a step's start terms and one sample of a state (see core.hpp); the
// row space they take is row_space.cpp's.
#include "model/core.hpp"
#include "algorithms/kkt.hpp"
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
    if (!mo.slip.empty()) // contact rows that slip with friction (friction.cpp)
    {
      slip_dynamics(mo, d, tau, a, d.slip_lam_, d.slip_F_);
      return;
    }
    if (mo.opt.method == 1) // the KKT baseline (kkt.cpp)
    {
      kkt_accel(mo, d, tau, a);
      return;
    }
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
    if (!mo.slip.empty()) // the non-symmetric system's, solved by accel at this state
    {
      lam = d.slip_lam_;
      F = d.slip_F_;
      return;
    }
    // F = (I - P)(tau - h - M a) = V1 V1^T (tau - h - M a)
    d.tmp_ = tau - d.h;
    d.tmp_.noalias() -= dense_M(mo, d) * a;
    v1t(rs, d.tmp_, d.y_);
    v1(rs, d.y_, F);
    w(rs, d.y_, lam);
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

} // namespace pfaff
