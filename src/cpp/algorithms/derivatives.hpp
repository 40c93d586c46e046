// Derivatives of the projection dynamics at constant rank (pfaff.derivatives is the NumPy
// reference, equation by equation): one more algorithm over a Model and its Data (the
// terms by the same free functions as the dynamics), with workspaces of its own (a
// pinocchio::Data for the derivative passes).
#pragma once

#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <unsupported/Eigen/CXX11/Tensor>

#include "model/core.hpp"
#include "algorithms/dense_product.hpp"
#include "algorithms/force_element.hpp"
#include "algorithms/kind_derivatives.hpp"

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
    /// the derivatives in q, v and tau side by side (nv x 3 nv, m x 3 nv, nv x 3 nv):
    /// the products write each field's three blocks at once, no copy (block(da, 0) is
    /// da_dq, column-major and contiguous, as NumPy views it)
    MatX da, dlam, dF;
    int rank = 0;
    double radius = std::numeric_limits<double>::infinity();
    /// block `which` (0: q, 1: v, 2: tau) of one of the fields, in place
    static Eigen::Map<MatX> block(MatX & f, int which)
    {
      const Eigen::Index n = f.cols() / 3;
      return {f.data() + which * n * f.rows(), f.rows(), n};
    }
  };

  class Differentiator
  {
  public:
    /// every constraint kind's derivative rows are its own (derive_K in its file
    /// src/cpp/kinds/<name>.cpp), so are the force elements' partials
    /// (src/cpp/forces/*.cpp); a mechanism given in closed form (Model::plant) takes
    /// them all by central differences (plant_partials). d is the Data the terms are
    /// computed into. A held control law is no term: its torque, held over the
    /// controller's period, is the caller's tau
    Differentiator(const Model & mo, Data & d);
    /// the derivatives at (q, v, tau) into result() (its storage is reused from call
    /// to call: copy what is kept)
    void compute(const VecX & q, const VecX & v, const VecX & tau);
    const DynamicsDerivatives & result() const { return out_; }
    /// the last compute's derivatives moved out, no copy (the next compute allocates
    /// its fields anew)
    DynamicsDerivatives take() { return std::move(out_); }
    const Model & model() const { return mo_; }

  private:
    using Point = KindDerivatives::Point;
    /// a force element and the points it reads (indices into points_, -1: none)
    struct ForcePoint
    {
      int e, p1 = -1, p2 = -1;
    };
    /// the force elements' dQ/d delta into fq_.dQq, dQ/dv into fq_.dQv, each element's
    /// own (force_derivatives.cpp)
    void force_partials(const VecX & q, const VecX & v);
    /// a point's position, Jacobian (linear rows) and kinematic Hessian at this q
    void point_kin(int point, force_elements::PointKin & k);
    bool needs_hessians() const;
    /// a mechanism given in closed form (plant_derivatives.cpp): RHS_ = d(M a + h -
    /// Q)/d(q, v) at this a, dAB_ and X_ by central differences of the terms the core
    /// evaluates at q +- kPlantStep e_k and v +- kPlantStep max(1, |v|_inf) e_k; the
    /// terms of (q, v) are evaluated again at the end
    void plant_partials(const VecX & q, const VecX & v);
    /// M a + h - Q at (q, v) into fs_, A and drift into Data (plant_partials' sides)
    void terms_at(const VecX & q, const VecX & v);
    /// the central differences' step in q (the NumPy reference's fd_step default)
    static constexpr double kPlantStep = 1e-5;
    /// the factors of A: Bt_ (an orthonormal basis of its row space, r columns), E_ =
    /// Bt_^T A^+ (r x m), V2 (of N(A); null_space forms it where the QR certified the
    /// rank), U1 (of its range, only where rank < m), A^+, the singular values and the
    /// rank
    void factor(const MatX & A);
    /// M^-1 into Minv_ (M's sparse factor where the tree describes M, its dense
    /// Cholesky otherwise) and the range-space factors of the projection: with
    /// G = B M^-1 B^T = L L^T, Yr_ = L^-1 B M^-1, Er_ = L^-1 E_
    void range_space(const MatX & M);
    /// Nm and P (into the result's da_dtau, dF_dtau) in the null-space form, from V2
    void null_space(const MatX & M);
    /// the coordinates from which the range-space form is taken
    static constexpr int kRangeNv = 16;
    /// A's singular values (descending) from the triangle R (m x m) of the QR of A^T
    void sigma_of_R(int m, VecX & sigma);
    /// dst (+)= alpha l r (dense_product.hpp: the FMA kernel where the CPU has one)
    template<class Dst, class L, class R>
    void product(Dst && dst, const L & l, const R & r, double alpha, bool accumulate)
    {
      detail::product(std::forward<Dst>(dst), l, r, alpha, accumulate, Lt_);
    }
    /// the Jacobi SVD of R^T (R: QR_'s m x m triangle) into sigma, Ur_, Vr_
    void svd_of_Rt(int m, VecX & sigma);
    /// a spec's rows of A (from `row`, `dim` of them) and the coordinates that move
    /// them, ascending: a window kind's, its frames' supporting joints' (without mimic
    /// joints), else every coordinate. Its entries of dA_k are 0.0 unless k and the
    /// column are both among them: dAB_ is set to zero once, then only there
    struct RowSupport
    {
      int row, dim;
      std::vector<int> cols;
    };
    /// the kinds' entries of dAB_ to 0.0 (before they add theirs)
    void zero_dA();
    /// DAtl_ = the matrix whose column k is dA_k^T lambda, and ||dA||_F^2 (the rank
    /// radius's), over the supports' entries alone
    double dA_lambda();

    const Model & mo_;
    Data & d_;
    DynamicsDerivatives out_;
    pinocchio::Data dd_; // RNEA derivatives at a, the kinematic Hessians of that q
    std::vector<Point> points_; // the force elements' points
    std::vector<ForcePoint> fpoints_;
    std::vector<RowSupport> supports_;
    bool dense_dA_ = false; // a spec's support is every coordinate: zero dAB_ whole
    Matrix6x J6_;
    force_elements::Partials fq_; // the force elements' partials and their workspaces
    int m_ = 0; // the rows when made
    // per state
    MatX dAB_;        // dA / d delta_k as rows k m .. k m + m - 1 (m nv x nv)
    MatX QR_; // Householder QR of A^T (householder.hpp) where it certifies full row rank
    VecX hc_;
    Eigen::JacobiSVD<MatX> svd_;    // of A where it has more rows than coordinates
    Eigen::JacobiSVD<MatX> svd_R_; // of R^T, with its vectors where R is ill conditioned
    static constexpr int kSvdSmall = 8; // rows up to which that SVD needs no heap
    using SvdMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kSvdSmall, kSvdSmall>;
    SvdMat Rt_small_;
    Eigen::JacobiSVD<SvdMat> svd_small_;
    MatX Ur_, Vr_; // that SVD's vectors
    bool svd_R_full_ = false;
    MatX Vf_; // A's right singular vectors Q [V_R 0; 0 I]
    Eigen::SelfAdjointEigenSolver<MatX> eig_;
    static constexpr int kSmall = 6; // rows up to which R's Gram eigenvalues need no heap
    using SmallMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kSmall, kSmall>;
    SmallMat R_small_;
    Eigen::SelfAdjointEigenSolver<SmallMat> eig_small_;
    Eigen::SelfAdjointEigenSolver<Mat3> eig3_;
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig2_;
    MatX Rinv_, RR_, Ap_, V2_, U1_, U2_, Bt_, E_;
    Eigen::LLT<MatX> llt_, llt_G_; // K's or M's (models with mimic joints), G's
    MatX K_, MV2_, S_, MAp_, Minv_, G_, Yr_, Er_, X_, RHS_;
    MatX Yu_; // the rows of U^-1 (tree_minv)
    MatX Lt_; // a transposed left factor, evaluated for the FMA kernel
    MatX dlamA_, DAtl_, Yq_, UX_, U2A_, UV_; // (UX_ .. UV_: the rank < m products')
    VecX a_, lam_, F_, Qd_, Cv_, res_, Aplam_, y_, z_, x_, ud_;
    bool left_null_ = false; // rank < m: the Golub-Pereyra terms in I - A A^+ stay
    bool qr_rows_ = false;   // the QR of A^T certified full row rank (no SVD taken)
    VecX qs_, vs_, fs_, fp_, dp_; // plant_partials' neighbouring states and their terms
    MatX Ap_s_;
    KindDerivatives kd_; // the kinds' derivative rows into dAB_ and X_
  };

  void bind_derivatives(nanobind::module_ & m); // bind_derivatives.cpp
} // namespace pfaff
