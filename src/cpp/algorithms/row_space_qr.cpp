// The row space's QR paths without the SVD (row_space.cpp calls them): the certified QR
// of A without its zero rows, and the column-pivoted QR of rank-deficient rows.
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "algorithms/householder.hpp"

#include <cmath>

namespace pfaff
{
  using detail::kNaN;

  // Rows of A that are exactly 0.0 (a Scaled row of factor 0, the out-of-plane row of a
  // loop whose joint axes are parallel) add nothing to the row space and get lambda = 0,
  // as the minimum-norm multipliers give them: the other rows A_c go through the
  // certified QR of A_c^T (V1 = Q, W_c = R^-1), and W = W_c scattered to A's rows with
  // zero rows at the dropped ones, so A^+ = V1 W^T is A's. False (nothing changed but
  // kept_rows_) when no row or every row is zero, when more rows than coordinates are
  // left, or when A_c is not certified full rank.
  namespace detail
  {
    bool zero_rows_qr(const Model & mo, Data & d, const MatX & Am, RowSpace & rs)
    {
      const int mm = int(Am.rows()), n = int(Am.cols());
      d.kept_rows_.clear();
      for (int i = 0; i < mm; ++i)
        if (!(Am.row(i).array() == 0.0).all())
          d.kept_rows_.push_back(i);
      const int r = int(d.kept_rows_.size());
      if (r == mm || r == 0 || r > n)
        return false;
      d.Ac_.resize(n, r);
      for (int j = 0; j < r; ++j)
        d.Ac_.col(j) = Am.row(d.kept_rows_[j]).transpose();
      householder_qr(d.Ac_, d.QRs_, d.hcs_);
      upper_inverse(d.QRs_, r, d.Y_);
      if (!(d.Y_.norm() * 2.0 * mo.opt.rank_tol <= 1.0)) // false for inf / nan
        return false;
      thin_q(d.QRs_, d.hcs_, r, rs.V1);
      rs.W.setZero(mm, r);
      for (int j = 0; j < r; ++j)
        rs.W.row(d.kept_rows_[j]) = d.Y_.row(j);
      rs.rank = r;
      rs.R.resize(0, 0);
      rs.deficient = false; // the next call tries this path first again
      rs.zero_rows = true;
      rs.sigma_min = kNaN;
      return true;
    }
  } // namespace detail


  // Rank-deficient rows without the SVD (e.g. 12 loop rows of rank 8 on 30 dof, or a
  // box stack's 24 held rows on 12 dof). Column-pivoted QR of the n x m A^T:
  // A^T Pi = Q [R11 R12; 0 R22], R11 r x r, R22 (n - r) x (m - r). The split is
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
  namespace detail
  {
    bool pivoted_rows(const Model & mo, Data & d, const MatX & Am, RowSpace & rs)
    {
      const int mm = int(Am.rows()), n = int(Am.cols());
      const double tol = mo.opt.rank_tol;
      d.cpqr_.compute(Am.transpose());
      const MatX & QR = d.cpqr_.matrixQR();
      int r = 0;
      while (r < std::min(mm, n) && std::abs(QR(r, r)) >= tol)
        ++r;
      if (r == 0 || r == mm)
        return false; // full row rank: the full-rank QR (as linalg.full_row_rank_qr) or SVD
      double r22 = 0.0; // ||R22||_F of the upper trapezoid: rows r .. min(j, n - 1) of column j
      for (int j = r; j < mm && r < n; ++j)
        r22 += QR.col(j).segment(r, std::min(j, n - 1) - r + 1).squaredNorm();
      if (!(std::sqrt(r22) * 2.0 <= tol))
        return false;
      upper_inverse(QR, r, d.Y_);
      if (!(d.Y_.norm() * 2.0 * tol <= 1.0)) // false for inf / nan
        return false;
      // Q_1 = H_1 ... H_r [I_r; 0]: the reflectors H_k, k > r, are zero on the first r
      // rows and leave [I_r; 0] as it is
      thin_q(QR, d.cpqr_.hCoeffs(), r, rs.V1);
      // S^T = [R11 R12]^T = [I; K] R11^T, K^T = R11^-1 R12 (the coefficients of the
      // dependent rows, bounded by the pivoting), so (S^T)^+ = R11^-T H^-1 [I K^T]
      // with H = I + K^T K (r x r, eigenvalues >= 1) and W = Pi [I; K] H^-1 R11^-1
      d.Kt_.noalias() = d.Y_ * QR.block(0, r, r, mm - r);
      d.H_.setIdentity(r, r);
      d.H_.selfadjointView<Eigen::Lower>().rankUpdate(d.Kt_);
      d.lltH_.compute(d.H_);
      d.S_.resize(mm, r);
      d.S_.topRows(r) = d.Y_;
      d.lltH_.solveInPlace(d.S_.topRows(r));
      d.S_.bottomRows(mm - r).noalias() = d.Kt_.transpose() * d.S_.topRows(r);
      rs.W.noalias() = d.cpqr_.colsPermutation() * d.S_;
      rs.rank = r;
      rs.sigma_min = kNaN;
      rs.deficient = r < mm;
      // for sigma_of_factor: more rows than coordinates have sigma_min(A) = 0 (no R kept)
      if (mm <= n)
        rs.R = QR.topRows(mm).triangularView<Eigen::Upper>();
      else
        rs.R.resize(0, 0);
      return true;
    }
  } // namespace detail
} // namespace pfaff
