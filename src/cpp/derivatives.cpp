// Derivatives of the projection dynamics at constant rank (see derivatives.hpp): the
// NumPy reference is pfaff.derivatives (projection.py: Solver, pseudo_inverse_terms,
// rank_radius; terms.py: the Pinocchio partials), followed equation by equation.
#include "derivatives.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics-derivatives.hpp"
#include "pinocchio/algorithm/rnea-derivatives.hpp"

namespace pfaff
{
  namespace
  {
    const char * kind_name(Kind k)
    {
      switch (k)
      {
#define PFAFF_KIND(K, rows)                                                                 \
  case Kind::K:                                                                             \
    return #K;
#include "kinds.def"
#undef PFAFF_KIND
      }
      return "?";
    }
  } // namespace

  Differentiator::Differentiator(System & sys)
  : sys_(sys)
  , dd_(sys.model)
  , dk_(sys.model)
  {
    const char * where = "Differentiator";
    if (!sys.felems.empty() || !sys.held.empty())
      throw std::invalid_argument(
        std::string(where) + ": the system has force elements; their derivatives are taken "
        "on the NumPy engine (pfaff.derivatives)");
    const auto & model = sys.model;
    auto point = [&](int slot, bool has_off, const Vec3 & off) {
      const auto & f = model.frames[sys.frames[slot].id];
      pinocchio::SE3 pl = f.placement;
      if (has_off)
        pl = pl * pinocchio::SE3(Mat3::Identity(), off);
      points_.push_back({f.parentJoint, pl});
      return int(points_.size()) - 1;
    };
    int row = 0;
    for (std::size_t i = 0; i < sys.specs.size(); ++i)
    {
      const Spec & s = sys.specs[i];
      MatX D;
      switch (s.kind)
      {
      case Kind::LockedJoint:
      case Kind::JointCoupling:
        break; // A constant, drift identically zero
      case Kind::PointOnPlane:
        D = s.n.transpose();
        break;
      case Kind::PointsCoincide:
        D = s.D_identity ? MatX(Mat3::Identity()) : s.D;
        break;
      default:
        throw std::invalid_argument(
          std::string(where) + ": constraint kind " + kind_name(s.kind)
          + " has no analytic derivative in the core; the NumPy engine differentiates it "
          "(pfaff.derivatives)");
      }
      if (D.size())
      {
        if (s.scale.size())
          D = s.scale.asDiagonal() * D;
        terms_.push_back({int(i), row, s.dim, point(s.s1, s.has_p1, s.p1), 1.0, D});
        if (s.kind == Kind::PointsCoincide && s.s2 >= 0)
          terms_.push_back({int(i), row, s.dim, point(s.s2, s.has_p2, s.p2), -1.0, D});
      }
      row += s.dim;
    }
    const int nv = model.nv;
    dA_.assign(nv, MatX::Zero(sys.m, nv));
    dJ_.assign(nv, Matrix3x::Zero(3, nv));
    H_.resize(6, nv, nv);
    vq_.setZero(3, nv);
    aq_.setZero(3, nv);
    av_.setZero(3, nv);
    aa_.setZero(3, nv);
  }

  void Differentiator::point_partials(const Point & p)
  {
    const auto & model = sys_.model;
    const int nv = model.nv;
    H_.setZero();
    pinocchio::getFrameKinematicHessian(
      model, dk_, p.joint, p.placement, pinocchio::LOCAL_WORLD_ALIGNED, H_);
    for (int k = 0; k < nv; ++k)
      for (int i = 0; i < nv; ++i)
        for (int r = 0; r < 3; ++r)
          dJ_[k](r, i) = H_(r, i, k);
    vq_.setZero();
    aq_.setZero();
    av_.setZero();
    aa_.setZero();
    pinocchio::getPointClassicAccelerationDerivatives(
      model, dk_, p.joint, p.placement, pinocchio::LOCAL_WORLD_ALIGNED, vq_, aq_, av_, aa_);
  }

  // projection.py Solver.along: derivatives along the K columns of dR, dtau, ddrift
  // (dA_ along q when with_dA), pseudo_inverse_terms for the dA terms
  void Differentiator::along(
    const MatX & dR, const MatX & dtau, const MatX & ddrift, bool with_dA, MatX & da, MatX & dF,
    MatX & dlam)
  {
    const MatX & M = sys_.M;
    const int K = int(dR.cols());
    MatX r2 = dtau - dR;
    MatX r1 = -Ap_ * ddrift;
    MatX dlamA;
    if (with_dA && sys_.m)
    {
      // the Golub-Pereyra terms in I - A A^+ vanish when A has full row rank (rank == m)
      const bool left_null = U1_.cols() < sys_.m;
      dlamA.setZero(sys_.m, K);
      const VecX Aplam = Ap_ * lam_;
      VecX y(sys_.m), dAtl(sys_.nv()), X(sys_.m);
      for (int k = 0; k < K; ++k)
      {
        const MatX & dA = dA_[k];
        y.noalias() = dA * a_;
        if (left_null)
          y.noalias() += Ap_.transpose() * (dA.transpose() * Qd_);
        r1.col(k).noalias() -= Ap_ * y;
        dAtl.noalias() = dA.transpose() * lam_;
        r2.col(k) -= dAtl;
        dlamA.col(k).noalias() = -Ap_.transpose() * dAtl;
        if (left_null)
        {
          X.noalias() = dA * Aplam;
          dlamA.col(k) += X - U1_ * (U1_.transpose() * X);
        }
      }
    }
    da = r1;
    if (V2_.cols())
      da.noalias() += V2_ * llt_.solve(V2_.transpose() * (r2 - M * r1));
    dF = dtau - dR;
    dF.noalias() -= M * da;
    dlam.noalias() = Ap_.transpose() * dF;
    if (dlamA.size())
      dlam += dlamA;
  }

  void Differentiator::compute(
    const VecX & q, const VecX & v, const VecX & tau, DynamicsDerivatives & out)
  {
    System & sys = sys_;
    const auto & model = sys.model;
    const int nv = model.nv, m = sys.m;
    const double tol = sys.opt.rank_tol;
    if (m != int(dA_[0].rows()))
      throw std::invalid_argument("Differentiator.compute: the system has " + std::to_string(m)
                                  + " rows, it had " + std::to_string(dA_[0].rows())
                                  + " when the Differentiator was made: make a new one");
    sys.dynamics_state(q, v, false);
    sys.evaluate(q, v, true);
    const MatX & M = sys.M;
    const VecX & h = sys.h;
    const VecX & drift = sys.drift;

    // projection.py factors: the full SVD of A and the kept rank
    int r = 0;
    if (m)
    {
      svd_.compute(sys.A, Eigen::ComputeFullU | Eigen::ComputeFullV);
      out.sigma = svd_.singularValues();
      while (r < out.sigma.size() && out.sigma(r) >= tol)
        ++r;
      U1_ = svd_.matrixU().leftCols(r);
      U2_ = svd_.matrixU().rightCols(m - r);
      V1_ = svd_.matrixV().leftCols(r);
      V2_ = svd_.matrixV().rightCols(nv - r);
      Ap_.noalias() = V1_ * (out.sigma.head(r).cwiseInverse().asDiagonal() * U1_.transpose());
    }
    else
    {
      out.sigma.resize(0);
      U1_.resize(0, 0);
      U2_.resize(0, 0);
      V1_.resize(nv, 0);
      V2_ = MatX::Identity(nv, nv);
      Ap_.resize(nv, 0);
    }
    out.rank = r;

    // Solver: a = C v + N (N^T M N)^-1 N^T (tau - h - M C v), F, lambda (eq. 16, 22, 32)
    if (V2_.cols())
      llt_.compute(V2_.transpose() * M * V2_);
    const VecX Cv = -Ap_ * drift;
    a_ = Cv;
    if (V2_.cols())
      a_.noalias() += V2_ * llt_.solve(V2_.transpose() * (tau - h - M * Cv));
    const VecX res = tau - h - M * a_;
    F_.noalias() = V1_ * (V1_.transpose() * res);
    lam_.noalias() = Ap_.transpose() * F_;
    Qd_ = drift;
    if (m)
      Qd_.noalias() -= U1_ * (U1_.transpose() * drift);

    // terms.py: Pinocchio's partials (RNEA at a; kinematics at a = 0) and the rows'
    pinocchio::computeRNEADerivatives(model, dd_, q, v, a_);
    for (auto & d : dA_)
      d.setZero();
    ddq_.setZero(m, nv);
    ddv_.setZero(m, nv);
    if (!terms_.empty())
    {
      pinocchio::computeJointKinematicHessians(model, dk_, q);
      pinocchio::computeForwardKinematicsDerivatives(model, dk_, q, v, VecX::Zero(nv));
      for (const Term & t : terms_)
      {
        point_partials(points_[t.point]);
        // tiny products: coefficient-wise (lazyProduct), not through the GEMM kernel
        for (int k = 0; k < nv; ++k)
          dA_[k].middleRows(t.row, t.dim) += t.sign * t.D.lazyProduct(dJ_[k]);
        ddq_.middleRows(t.row, t.dim) += t.sign * t.D.lazyProduct(aq_);
        ddv_.middleRows(t.row, t.dim) += t.sign * t.D.lazyProduct(av_);
      }
    }

    const MatX Z = MatX::Zero(nv, nv);
    along(dd_.dtau_dq, Z, ddq_, true, out.da_dq, out.dF_dq, out.dlam_dq);
    along(dd_.dtau_dv, Z, ddv_, false, out.da_dv, out.dF_dv, out.dlam_dv);
    along(Z, MatX::Identity(nv, nv), MatX::Zero(m, nv), false, out.da_dtau, out.dF_dtau,
          out.dlam_dtau);
    out.a = a_;
    out.F = F_;
    out.lam = lam_;

    // rank_radius: first-order distance to a change of the rank decision
    out.radius = std::numeric_limits<double>::infinity();
    if (m && out.sigma.size())
    {
      double gk = 0.0, gd = 0.0;
      for (const auto & d : dA_)
        gk += d.squaredNorm();
      if (r > 0 && gk > 0)
        out.radius = (out.sigma(r - 1) - tol) / std::sqrt(gk);
      if (U2_.cols() && V2_.cols())
      {
        for (const auto & d : dA_)
          gd += (U2_.transpose() * d * V2_).squaredNorm();
        const double top = r < out.sigma.size() ? out.sigma(r) : 0.0;
        if (gd > 0)
          out.radius = std::min(out.radius, (tol - top) / std::sqrt(gd));
      }
    }
  }
} // namespace pfaff
