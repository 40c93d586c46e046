// Derivatives of the projection dynamics at constant rank (pfaff.derivatives is the NumPy
// reference, equation by equation): one more algorithm over a Model and its Data (the
// terms by the same free functions as the dynamics), with workspaces of its own (a
// pinocchio::Data for the derivative passes).
#pragma once

#include <limits>
#include <memory>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <unsupported/Eigen/CXX11/Tensor>

#include "core.hpp"
#include "force_element.hpp"

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
    /// refuses (std::invalid_argument) a held law (held_law) or a constraint kind
    /// without analytic derivatives here (the NumPy engine takes them); the force
    /// elements' partials are their own (src/cpp/forces/*.cpp); d is the Data the
    /// terms are computed into
    Differentiator(const Model & mo, Data & d, bool held_law);
    /// the derivatives at (q, v, tau) into result() (its storage is reused from call
    /// to call: copy what is kept)
    void compute(const VecX & q, const VecX & v, const VecX & tau);
    const DynamicsDerivatives & result() const { return out_; }
    const Model & model() const { return mo_; }

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
      bool identity = false; // D = I (3 x 3): the point's rows as they are
    };
    /// the point's kinematic Hessian into H_ (slice k: dJ/dq_k, 6 x nv), its classical
    /// acceleration's derivatives at the state's a into aq_ (in q), av_ (in v);
    /// LOCAL_WORLD_ALIGNED
    void point_partials(const Point & p);
    /// a force element and the points it reads (indices into points_, -1: none)
    struct ForcePoint
    {
      int e, p1 = -1, p2 = -1;
    };
    /// a spec whose derivative rows kind_derivatives.cpp writes: its first row and
    /// the point its rows read (an index into points_; -1: none)
    struct KindRows
    {
      int spec, row, point = -1;
    };
    /// a frame's rotation, angular velocity w and acceleration al (at the state's a),
    /// angular Jacobian Jw, the angular rows of its kinematic Hessian (Hw: slice k,
    /// dJw/d delta_k, in columns k nv .. k nv + nv - 1) and the partials of w in q (dw)
    /// and of al in q (dal) and v (dal_v); world axes
    struct FrameDer
    {
      Mat3 R;
      Vec3 w, al;
      Matrix3x Jw, dw, dal, dal_v;
      MatX Hw;
    };
    /// the derivative rows of the specs in kinds_ (kind_derivatives.cpp): one function
    /// per kind, each writing its rows of dAB_ and X_
    void kind_partials(const VecX & v);
    void frame_der(int slot, FrameDer & f);
    void weld_rows(const KindRows & k, const VecX & v);
    void frame_aligned_rows(const KindRows & k, const VecX & v);
    void quat_aligned_rows(const KindRows & k, const VecX & v);
    void revolute_closure_rows(const KindRows & k, const VecX & v);
    void point_on_circle_rows(const KindRows & k, const VecX & v);
    /// the orientation rows P r(R_e) of Weld, FrameAligned and QuatAligned (r: the
    /// skew part's vee, or quat: the vector part of R_e's quaternion) from row `row`
    void aligned_partials(const Spec & s, int row, const MatX & P, bool quat,
                          const Mat3 & R_c, const VecX & v);
    /// the force elements' dQ/d delta into fq_.dQq, dQ/dv into fq_.dQv, each element's
    /// own (force_derivatives.cpp)
    void force_partials(const VecX & q, const VecX & v);
    /// a point's position, Jacobian (linear rows) and kinematic Hessian at this q
    void point_kin(int point, force_elements::PointKin & k);
    bool needs_hessians() const;
    /// the factors of A: V2 (an orthonormal basis of N(A)), U1
    /// (of its range, only where rank < m), A^+, the singular values and the rank
    void factor(const MatX & A);
    /// A's singular values (descending) from the triangle R (m x m) of the QR of A^T
    void sigma_of_R(int m, VecX & sigma);

    const Model & mo_;
    Data & d_;
    DynamicsDerivatives out_;
    pinocchio::Data dd_; // RNEA derivatives at a, the kinematic Hessians of that q
    std::vector<Point> points_;
    std::vector<Term> terms_;
    std::vector<ForcePoint> fpoints_;
    std::vector<KindRows> kinds_;
    FrameDer f1_, f2_;
    Matrix6x v6_, a6q_, a6v_, a6a_;
    MatX dA3_, X3_; // a kind's own rows (3 x nv, 3 x 2 nv) before P
    Matrix3x Jw3_, ReJ2_, dJ3_; // aligned_partials' J_w, R_e J_w2, dJ_w,k
    Matrix6x J6_;
    force_elements::Partials fq_; // the force elements' partials and their workspaces
    int m_ = 0; // the rows when made
    // per state
    MatX dAB_;        // dA / d delta_k as rows k m .. k m + m - 1 (m nv x nv)
    Eigen::Tensor<double, 3> H_;
    Matrix3x vq_, aq_, av_, aa_;
    MatX QR_; // Householder QR of A^T (householder.hpp) where it certifies full row rank
    VecX hc_;
    Eigen::JacobiSVD<MatX> svd_;    // of A otherwise (and of R's values)
    Eigen::JacobiSVD<MatX> svd_R_;
    static constexpr int kSmall = 6; // rows up to which R's SVD needs no heap
    using SmallMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kSmall, kSmall>;
    SmallMat R_small_;
    Eigen::JacobiSVD<SmallMat> svd_small_;
    Eigen::SelfAdjointEigenSolver<SmallMat> eig_small_;
    Eigen::SelfAdjointEigenSolver<Mat3> eig3_;
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig2_;
    MatX Rinv_, RR_, Ap_, V2_, U1_, U2_;
    Eigen::LLT<MatX> llt_;
    MatX K_, MV2_, S_, MAp_, NP_, X_, R1_, RHS_, OUT_, dlamA_, DAtl_, Yq_;
    VecX a_, lam_, F_, Qd_, Cv_, res_, Aplam_, y_, z_, x_;
    bool left_null_ = false; // rank < m: the Golub-Pereyra terms in I - A A^+ stay
  };

  void bind_derivatives(nanobind::module_ & m); // bind_derivatives.cpp
} // namespace pfaff
