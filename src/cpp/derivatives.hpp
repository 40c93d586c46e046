// Derivatives of the projection dynamics at constant rank (pfaff.derivatives is the NumPy
// reference, equation by equation): an algorithm over the System's model and terms with
// workspaces of its own (two pinocchio::Data), so that no pass of the System is disturbed.
#pragma once

#include <limits>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/SVD>
#include <unsupported/Eigen/CXX11/Tensor>

#include "core.hpp"

namespace nanobind
{
  class module_;
}

namespace pfaff
{
  /// pfaff.derivatives.DynamicsDerivatives: the dynamics at (q, v, tau), their derivatives
  /// (columns: tangent directions of q, components of v, of tau), the rank of A, its
  /// singular values and the first-order radius within which the rank stays constant.
  struct DynamicsDerivatives
  {
    VecX a, lam, F, sigma;
    MatX da_dq, da_dv, da_dtau, dlam_dq, dlam_dv, dlam_dtau, dF_dq, dF_dv, dF_dtau;
    int rank = 0;
    double radius = std::numeric_limits<double>::infinity();
  };

  class Differentiator
  {
  public:
    /// refuses (std::invalid_argument) a system with force elements, a held law or a
    /// constraint kind without analytic derivatives here (the NumPy engine takes them)
    explicit Differentiator(System & sys);
    void compute(const VecX & q, const VecX & v, const VecX & tau, DynamicsDerivatives & out);
    System & system() { return sys_; }

  private:
    struct Point
    {
      pinocchio::JointIndex joint;
      pinocchio::SE3 placement;
    };
    /// one term sign * D * point of a spec's rows
    struct Term
    {
      int spec, row, dim, point;
      double sign;
      MatX D; // dim x 3 (scaled rows included)
    };
    /// J (3 x nv) unused; the point's dJ/dq_k into dJ_[k], its classical acceleration's
    /// derivatives into aq_, av_ (LOCAL_WORLD_ALIGNED)
    void point_partials(const Point & p);
    void along(const MatX & dR, const MatX & dtau, const MatX & ddrift, bool with_dA,
               MatX & da, MatX & dF, MatX & dlam);

    System & sys_;
    pinocchio::Data dd_, dk_; // RNEA derivatives at a; kinematics at a = 0
    std::vector<Point> points_;
    std::vector<Term> terms_;
    // per state
    std::vector<MatX> dA_;   // dA_[k] = dA / d delta_k (m x nv)
    MatX ddq_, ddv_;         // d drift / dq, / dv (m x nv)
    std::vector<Matrix3x> dJ_;
    Eigen::Tensor<double, 3> H_;
    Matrix3x vq_, aq_, av_, aa_;
    Eigen::JacobiSVD<MatX> svd_;
    MatX Ap_, V1_, V2_, U1_, U2_;
    Eigen::LLT<MatX> llt_;
    VecX a_, lam_, F_, Qd_;
  };

  void bind_derivatives(nanobind::module_ & m); // bind_derivatives.cpp
} // namespace pfaff
