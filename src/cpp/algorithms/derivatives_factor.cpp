// The factors of A for the derivatives of the projection dynamics (Differentiator::factor,
// derivatives.hpp): its rank, singular values and the bases of its row space, null space
// and range, from the Householder QR of A^T where it certifies full row rank, from an SVD
// as the NumPy reference (pfaff.derivatives.projection) takes them otherwise.
#include "algorithms/derivatives.hpp"
#include "algorithms/householder.hpp"

#include <cmath>

namespace pfaff
{
  namespace
  {
    /// sigma (descending) = the square roots of R^T R's eigenvalues: in closed form for
    /// fixed 2 x 2 and 3 x 3, by the iterative solver otherwise
    template<class Solver, class Mat>
    void sigma_from_gram(Solver & es, const Mat & R, VecX & sigma)
    {
      const Mat RtR = R.transpose() * R;
      if constexpr (Mat::RowsAtCompileTime == Eigen::Dynamic)
        es.compute(RtR, Eigen::EigenvaluesOnly);
      else
        es.computeDirect(RtR, Eigen::EigenvaluesOnly);
      sigma = es.eigenvalues().reverse().cwiseMax(0.0).cwiseSqrt();
    }
  } // namespace

  // The singular values of A (descending) from the triangle R of A^T = Q R: where R is
  // well conditioned (sigma_max / sigma_min <= 1e2), the square roots of the eigenvalues
  // of R^T R, whose relative error ~ eps (sigma_max / sigma_i)^2 stays below 1e-12 there,
  // at a tenth of a Jacobi SVD's cost (closed form for 2 and 3 rows); otherwise the
  // Jacobi SVD of R^T with its vectors into Ur_, Vr_ (svd_R_full_), which factor takes
  // for A's own: A = [R^T 0] Q^T = U S (Q [V_R; 0])^T.
  void Differentiator::sigma_of_R(int m, VecX & sigma)
  {
    const auto R = QR_.topLeftCorner(m, m).triangularView<Eigen::Upper>();
    sigma.resize(m);
    svd_R_full_ = false;
    if (m == 1)
    {
      sigma(0) = std::abs(QR_(0, 0));
      return;
    }
    // sigma_min <= min |R_ii| (an eigenvalue of the triangle) and sigma_max >= max |R_ii|
    // (a column's norm bounds its diagonal entry): where those are 1e2 apart the Gram
    // test below fails, so the SVD is taken at once. A rank-deficient A (a loop's
    // redundant rows) is such a case: the diagonal's product is the singular values'
    const auto diag = QR_.diagonal().head(m).cwiseAbs();
    if (diag.minCoeff() * 1e2 < diag.maxCoeff())
    {
      svd_of_Rt(m, sigma);
      return;
    }
    if (m <= kSmall)
    {
      R_small_ = R;
      if (m == 3)
        sigma_from_gram(eig3_, Mat3(R_small_), sigma);
      else if (m == 2)
        sigma_from_gram(eig2_, Eigen::Matrix2d(R_small_), sigma);
      else
        sigma_from_gram(eig_small_, R_small_, sigma);
    }
    else
    {
      Rinv_ = R;
      sigma_from_gram(eig_, Rinv_, sigma);
    }
    if (sigma(m - 1) * 1e2 >= sigma(0))
      return;
    svd_of_Rt(m, sigma);
  }

  void Differentiator::svd_of_Rt(int m, VecX & sigma)
  {
    const auto Rt = QR_.topLeftCorner(m, m).triangularView<Eigen::Upper>().transpose();
    if (m <= kSvdSmall) // the same Jacobi sweeps on storage of fixed capacity
    {
      Rt_small_ = Rt;
      svd_small_.compute(Rt_small_, Eigen::ComputeFullU | Eigen::ComputeFullV);
      sigma = svd_small_.singularValues();
      Ur_ = svd_small_.matrixU();
      Vr_ = svd_small_.matrixV();
    }
    else
    {
      Rinv_ = Rt;
      svd_R_.compute(Rinv_, Eigen::ComputeFullU | Eigen::ComputeFullV);
      sigma = svd_R_.singularValues();
      Ur_ = svd_R_.matrixU();
      Vr_ = svd_R_.matrixV();
    }
    svd_R_full_ = true;
  }


  // projection.py factors: the kept rank and the bases of A's row space, its null space
  // and (rank < m) its range. Where the QR of A^T certifies full row rank (its
  // triangle's smallest singular value, which is A's, clears the threshold twice over),
  // A^T = Q R gives them without the full SVD: V1 = Q_1, V2 = Q_2, A^+ = Q_1 R^-T and no
  // left null space (U1 = I); the SVD decides otherwise, as the NumPy reference does:
  // that of R^T (m x m) where m <= nv, A = U_R S (Q [V_R; 0])^T, the SVD of A beyond.
  // The row space's basis B^T = V1 (Q_1 where the QR certified the rank) and E = B A^+
  // (R^-T, or S^-1 U1^T) are the range-space form's (range_space).
  void Differentiator::factor(const MatX & A)
  {
    const int nv = mo_.nv(), m = mo_.m;
    const double tol = mo_.opt.rank_tol;
    DynamicsDerivatives & out = out_;
    qr_rows_ = false;
    if (m == 0)
    {
      out.sigma.resize(0);
      out.rank = 0;
      left_null_ = false;
      U1_.resize(0, 0);
      U2_.resize(0, 0);
      Bt_.resize(nv, 0);
      E_.resize(0, 0);
      V2_.setIdentity(nv, nv);
      Ap_.resize(nv, 0);
      return;
    }
    if (m <= nv)
    {
      detail::householder_qr(A.transpose(), QR_, hc_);
      sigma_of_R(m, out.sigma);
      if (out.sigma(m - 1) > 2.0 * tol)
      {
        out.rank = m;
        left_null_ = false;
        qr_rows_ = true;
        U2_.resize(m, 0);
        // A^T = Q_1 R, so A^+ = Q_1 R^-T = A^T R^-1 R^-T, B^T = Q_1, E = R^-T
        detail::upper_inverse(QR_, m, Rinv_);
        RR_.noalias() = Rinv_ * Rinv_.transpose();
        product(Ap_, A.transpose(), RR_, 1.0, false);
        if (nv >= kRangeNv) // the range-space form's
        {
          detail::thin_q(QR_, hc_, m, Bt_);
          E_ = Rinv_.transpose();
        }
        return;
      }
    }
    if (m <= nv) // the SVD of R^T (m x m) gives A's: U = U_R, V = Q [V_R 0; 0 I]
    {
      if (!svd_R_full_)
        svd_of_Rt(m, out.sigma);
      int r = 0;
      while (r < m && out.sigma(r) >= tol)
        ++r;
      out.rank = r;
      left_null_ = r < m;
      U1_ = Ur_.leftCols(r);
      U2_ = Ur_.rightCols(m - r);
      Vf_.setZero(nv, nv);
      Vf_.topLeftCorner(m, m) = Vr_;
      Vf_.bottomRightCorner(nv - m, nv - m).setIdentity();
      detail::apply_q(QR_, hc_, m, Vf_);
      V2_ = Vf_.rightCols(nv - r);
      E_.noalias() = out.sigma.head(r).cwiseInverse().asDiagonal() * U1_.transpose();
      Ap_.noalias() = Vf_.leftCols(r).lazyProduct(E_); // V1 S^-1 U1^T
      if (nv >= kRangeNv)
        Bt_ = Vf_.leftCols(r);
      return;
    }
    svd_.compute(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
    out.sigma = svd_.singularValues();
    int r = 0;
    while (r < out.sigma.size() && out.sigma(r) >= tol)
      ++r;
    out.rank = r;
    left_null_ = r < m;
    U1_ = svd_.matrixU().leftCols(r);
    U2_ = svd_.matrixU().rightCols(m - r);
    V2_ = svd_.matrixV().rightCols(nv - r);
    E_.noalias() = out.sigma.head(r).cwiseInverse().asDiagonal() * U1_.transpose();
    Ap_.noalias() = svd_.matrixV().leftCols(r) * E_;
    if (nv >= kRangeNv)
      Bt_ = svd_.matrixV().leftCols(r);
  }
} // namespace pfaff
