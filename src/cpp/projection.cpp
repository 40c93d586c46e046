// The projection (row space of A with the absolute rank threshold), the direct dynamics
// with the three constraint inertia matrices, the constraint force and multipliers, and
// one sample of a state (see core.hpp).
#include "core.hpp"
#include "check.hpp"
#include "core_detail.hpp"

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
  using detail::skew;

  namespace
  {
    /// W = R^-1 of the upper triangle R of the first r rows and columns of QR, by
    /// back substitution column by column (r^3 / 6 products; Eigen's triangular solve
    /// against the identity takes its blocked path, which costs more at these sizes)
    void upper_inverse(const MatX & QR, int r, MatX & W)
    {
      W.setZero(r, r);
      for (int j = 0; j < r; ++j)
      {
        W(j, j) = 1.0 / QR(j, j);
        for (int i = j - 1; i >= 0; --i)
        {
          double acc = 0.0;
          for (int k = i + 1; k <= j; ++k)
            acc += QR(i, k) * W(k, j);
          W(i, j) = -acc / QR(i, i);
        }
      }
    }

    /// Householder QR of the n x m matrix X (m <= n) into QR and hc, in LAPACK's and
    /// Eigen's HouseholderQR format (R in the upper triangle, the essential parts of
    /// the reflectors H_k = I - hc_k [1; e_k] [1; e_k]^T below the diagonal), by
    /// Eigen's unblocked algorithm written over the columns' storage: at these sizes
    /// its expression machinery costs more than the arithmetic
    template <typename Mat>
    void householder_qr(const Mat & X, MatX & QR, VecX & hc)
    {
      QR = X;
      const int n = int(QR.rows()), m = int(QR.cols());
      hc.resize(m);
      double * a = QR.data();
      for (int k = 0; k < m; ++k)
      {
        double * ck = a + size_t(k) * n;
        double tail = 0.0;
        for (int i = k + 1; i < n; ++i)
          tail += ck[i] * ck[i];
        const double c0 = ck[k];
        if (tail <= std::numeric_limits<double>::min())
        {
          hc(k) = 0.0;
          for (int i = k + 1; i < n; ++i)
            ck[i] = 0.0;
          continue;
        }
        double beta = std::sqrt(c0 * c0 + tail);
        if (c0 >= 0.0)
          beta = -beta;
        const double inv = 1.0 / (c0 - beta);
        for (int i = k + 1; i < n; ++i)
          ck[i] *= inv;
        const double tau = (beta - c0) / beta;
        ck[k] = beta;
        hc(k) = tau;
        for (int j = k + 1; j < m; ++j)
        {
          double * cj = a + size_t(j) * n;
          double w = cj[k];
          for (int i = k + 1; i < n; ++i)
            w += ck[i] * cj[i];
          w *= tau;
          cj[k] -= w;
          for (int i = k + 1; i < n; ++i)
            cj[i] -= w * ck[i];
        }
      }
    }

    bool zero_rows_qr(const Model & mo, Data & d, const MatX & Am, RowSpace & rs);
    bool pivoted_rows(const Model & mo, Data & d, const MatX & Am, RowSpace & rs);
    void thin_q(const MatX & QR, const VecX & hc, int r, MatX & V1);
    void dense_row_space(
      const Model & mo, Data & d, const MatX & Am, bool want_sigma, bool allow_qr, RowSpace & rs);
    int find_blocks(const Model & mo, Data & d, const MatX & Am, RowSpace & rs);
  } // namespace

  // -- projection (linalg.full_row_rank_qr, linalg.row_space, dynamics.projection) ---
  // A's rows in independent blocks (two or more; find_blocks) are factored block by
  // block: the row space of a block diagonal A (after permuting its rows and columns)
  // is the direct sum of the blocks' and A^+ = V1 W^T with V1, W block diagonal, so the
  // result is the one factorisation of the whole A would give (to round-off; the rank
  // threshold applies to each block's singular values, which are A's). Else the whole A.
  void row_space(
    const Model & mo, Data & d, const MatX & Am, bool want_sigma, bool allow_qr, RowSpace & rs)
  {
    rs.stamp = d.st_.next(); // a new factor (G built on the last one no longer stands)
    rs.nblocks = 0;
    const int nb = Am.rows() > 1 ? find_blocks(mo, d, Am, rs) : 0;
    if (nb < 2)
    {
      dense_row_space(mo, d, Am, want_sigma, allow_qr, rs);
      return;
    }
    const int mm = int(Am.rows()), n = int(Am.cols());
    int r = 0;
    rs.zero_rows = false;
    rs.deficient = false;
    rs.sigma_min = std::numeric_limits<double>::infinity();
    for (int b = 0; b < nb; ++b)
    {
      RowBlock & blk = rs.blocks[size_t(b)];
      const int mb = int(blk.rows.size()), cb = int(blk.cols.size());
      blk.A.resize(mb, cb);
      for (int j = 0; j < cb; ++j)
        for (int i = 0; i < mb; ++i)
          blk.A(i, j) = Am(blk.rows[size_t(i)], blk.cols[size_t(j)]);
      dense_row_space(mo, d, blk.A, want_sigma, allow_qr, blk.rs);
      blk.off = r;
      r += blk.rs.rank;
      rs.deficient = rs.deficient || blk.rs.deficient;
      rs.zero_rows = rs.zero_rows || blk.rs.zero_rows;
      rs.sigma_min = std::min(rs.sigma_min, blk.rs.sigma_min);
    }
    int kept = 0;
    for (int b = 0; b < nb; ++b)
      kept += int(rs.blocks[size_t(b)].rows.size());
    if (kept < mm) // rows exactly 0.0 belong to no block: lambda = 0 there
    {
      rs.zero_rows = true;
      rs.sigma_min = 0.0;
    }
    else if (mm > n) // more rows than coordinates: sigma_min(A) = 0, as dense_row_space
      rs.sigma_min = 0.0;
    else if (!want_sigma)
      rs.sigma_min = kNaN;
    rs.V1.setZero(n, r);
    rs.W.setZero(mm, r);
    for (int b = 0; b < nb; ++b)
    {
      const RowBlock & blk = rs.blocks[size_t(b)];
      const int rb = blk.rs.rank;
      for (size_t i = 0; i < blk.cols.size(); ++i)
        rs.V1.row(blk.cols[i]).segment(blk.off, rb) = blk.rs.V1.row(Eigen::Index(i));
      for (size_t i = 0; i < blk.rows.size(); ++i)
        rs.W.row(blk.rows[i]).segment(blk.off, rb) = blk.rs.W.row(Eigen::Index(i));
    }
    rs.rank = r;
    rs.R.resize(0, 0);
    rs.svd = false;
    rs.nblocks = nb;
  }

  // The independent blocks of A's rows: two rows are in one block when they touch a
  // common kinematic tree (Model::col_tree), directly or through other rows; a block's
  // columns are all its trees' (ascending). Rows exactly 0.0 are in no block. Returns
  // the number of blocks (rs.blocks' first ones; 1: A is one block, not filled).
  namespace
  {
    int find(std::vector<int> & uf, int t)
    {
      while (uf[size_t(t)] != t)
        t = uf[size_t(t)] = uf[size_t(uf[size_t(t)])];
      return t;
    }

    int find_blocks(const Model & mo, Data & d, const MatX & Am, RowSpace & rs)
    {
      const int mm = int(Am.rows()), n = int(Am.cols());
      if (mo.ntrees < 2 || n != int(mo.col_tree.size()))
        return 1;
      auto & uf = d.uf_;
      auto & row_tree = d.row_tree_;
      uf.resize(size_t(mo.ntrees));
      for (int t = 0; t < mo.ntrees; ++t)
        uf[size_t(t)] = t;
      row_tree.assign(size_t(mm), -1);
      for (int j = 0; j < n; ++j)
      {
        const int t = mo.col_tree[size_t(j)];
        for (int i = 0; i < mm; ++i)
          if (Am(i, j) != 0.0)
          {
            int & rt = row_tree[size_t(i)];
            if (rt < 0)
              rt = t;
            else
            {
              const int a = find(uf, rt), b = find(uf, t);
              if (a != b)
                uf[size_t(b)] = a;
            }
          }
      }
      // the blocks in the order of their first row; block_of[root] its index
      std::vector<int> & block_of = d.block_of_; // one slot per tree
      block_of.assign(size_t(mo.ntrees), -1);
      int nb = 0;
      for (int i = 0; i < mm; ++i)
        if (row_tree[size_t(i)] >= 0)
        {
          const int root = find(uf, row_tree[size_t(i)]);
          if (block_of[size_t(root)] < 0)
          {
            block_of[size_t(root)] = nb++;
            if (rs.blocks.size() < size_t(nb))
              rs.blocks.emplace_back();
            rs.blocks[size_t(nb - 1)].rows.clear();
            rs.blocks[size_t(nb - 1)].cols.clear();
          }
          rs.blocks[size_t(block_of[size_t(root)])].rows.push_back(i);
        }
      if (nb < 2)
        return nb;
      for (int j = 0; j < n; ++j)
      {
        const int root = find(uf, mo.col_tree[size_t(j)]);
        if (block_of[size_t(root)] >= 0)
          rs.blocks[size_t(block_of[size_t(root)])].cols.push_back(j);
      }
      return nb;
    }
  } // namespace

  namespace
  {
    void dense_row_space(
      const Model & mo, Data & d, const MatX & Am, bool want_sigma, bool allow_qr, RowSpace & rs)
  {
    const int mm = int(Am.rows()), n = int(Am.cols());
    const double tol = mo.opt.rank_tol;
    rs.svd = false;
    if (mm == 0)
    {
      rs.V1.resize(n, 0);
      rs.W.resize(0, 0);
      rs.rank = 0;
      rs.sigma_min = 0.0;
      return;
    }
    rs.zero_rows = false;
    if (allow_qr && mm <= n && zero_rows_qr(mo, d, Am, rs))
    {
      if (want_sigma)
        sigma_of_factor(d, rs);
      return;
    }
    if (allow_qr && mm <= n && rs.deficient && pivoted_rows(mo, d, Am, rs))
    {
      // rank deficient at the last call: straight to the pivoted QR
      if (want_sigma)
        sigma_of_factor(d, rs);
      return;
    }
    if (allow_qr && mm <= n)
    {
      // certified QR of A^T: sigma_min(A) >= 1 / ||R^-1||_F >= 2 rank_tol
      householder_qr(Am.transpose(), d.QRs_, d.hcs_);
      upper_inverse(d.QRs_, mm, rs.W);
      const double nrm = rs.W.norm();
      if (nrm * 2.0 * tol <= 1.0) // false for inf / nan
      {
        thin_q(d.QRs_, d.hcs_, mm, rs.V1);
        rs.rank = mm;
        rs.R.resize(0, 0);
        rs.deficient = false;
        if (want_sigma)
          sigma_of_factor(d, rs);
        else
          rs.sigma_min = kNaN;
        return;
      }
      if (pivoted_rows(mo, d, Am, rs))
      {
        if (want_sigma)
          sigma_of_factor(d, rs);
        return;
      }
    }
    d.svd_.compute(Am, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const VecX & s = d.svd_.singularValues();
    int r = 0;
    while (r < s.size() && s(r) >= tol)
      ++r;
    rs.rank = r;
    rs.V1 = d.svd_.matrixV().leftCols(r);
    rs.W = d.svd_.matrixU().leftCols(r) * s.head(r).cwiseInverse().asDiagonal();
    rs.sigma_min = mm <= n ? s(s.size() - 1) : 0.0;
    rs.R.resize(0, 0);
    rs.deficient = r < mm;
    rs.svd = true;
  }
  } // namespace

  // Rows of A that are exactly 0.0 (a Scaled row of factor 0, the out-of-plane row of a
  // loop whose joint axes are parallel) add nothing to the row space and get lambda = 0,
  // as the minimum-norm multipliers give them: the other rows A_c go through the
  // certified QR of A_c^T (V1 = Q, W_c = R^-1), and W = W_c scattered to A's rows with
  // zero rows at the dropped ones, so A^+ = V1 W^T is A's. False (nothing changed but
  // kept_rows_) when no row or every row is zero, or when A_c is not certified full rank.
  namespace
  {
    bool zero_rows_qr(const Model & mo, Data & d, const MatX & Am, RowSpace & rs)
    {
      const int mm = int(Am.rows()), n = int(Am.cols());
      d.kept_rows_.clear();
      for (int i = 0; i < mm; ++i)
        if (!(Am.row(i).array() == 0.0).all())
          d.kept_rows_.push_back(i);
      const int r = int(d.kept_rows_.size());
      if (r == mm || r == 0)
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
  } // namespace

  // Q_1 = H_0 ... H_{r-1} [I_r; 0] from the first r Householder reflectors of a QR
  // (LAPACK's dorg2r): H_k, applied last to first, touches rows k.. and columns k..
  // only (Eigen's HouseholderSequence applies each reflector to every column)
  namespace
  {
    void thin_q(const MatX & QR, const VecX & hc, int r, MatX & V1)
    {
      const int n = int(QR.rows());
      V1.setIdentity(n, r);
      double * v = V1.data();
      const double * a = QR.data();
      for (int k = r - 1; k >= 0; --k)
      {
        const double tau = hc(k);
        if (tau == 0.0)
          continue;
        const double * e = a + size_t(k) * n; // e[i], i > k: the reflector's essential part
        for (int j = k; j < r; ++j)
        {
          double * cj = v + size_t(j) * n;
          double w = cj[k];
          for (int i = k + 1; i < n; ++i)
            w += e[i] * cj[i];
          w *= tau;
          cj[k] -= w;
          for (int i = k + 1; i < n; ++i)
            cj[i] -= w * e[i];
        }
      }
    }
  } // namespace

  // sigma_min(A) of a QR factorisation: full row rank, A^+ = V1 W^T with W = R^-1,
  // sigma_min = 1 / ||R^-1||_2; certified rank r < m, the singular values of A^T Pi =
  // Q R are those of the m x m triangle R kept by pivoted_rows (values only)
  void sigma_of_factor(Data & d, RowSpace & rs)
  {
    if (rs.svd) // the SVD's own (row_space)
      return;
    if (rs.nblocks > 0 && !rs.zero_rows && rs.V1.rows() >= rs.W.rows()) // the blocks' least
    {
      rs.sigma_min = std::numeric_limits<double>::infinity();
      for (int b = 0; b < rs.nblocks; ++b)
      {
        sigma_of_factor(d, rs.blocks[size_t(b)].rs);
        rs.sigma_min = std::min(rs.sigma_min, rs.blocks[size_t(b)].rs.sigma_min);
      }
    }
    else if (rs.rank == 0 || rs.zero_rows || rs.nblocks > 0)
      // a zero row of A, or more rows than coordinates: sigma_min(A) = 0
      rs.sigma_min = 0.0;
    else if (rs.R.size() == 0)
      rs.sigma_min =
        1.0 / std::sqrt((rs.W.transpose() * rs.W).selfadjointView<Eigen::Lower>().operatorNorm());
    else
    {
      d.svd_R_.compute(rs.R);
      rs.sigma_min = d.svd_R_.singularValues().minCoeff();
    }
  }

  // Rank-deficient rows without the SVD (e.g. 12 loop rows of rank 8 on 30 dof).
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
  namespace
  {
    bool pivoted_rows(const Model & mo, Data & d, const MatX & Am, RowSpace & rs)
    {
      const int mm = int(Am.rows());
      const double tol = mo.opt.rank_tol;
      d.cpqr_.compute(Am.transpose());
      const MatX & QR = d.cpqr_.matrixQR();
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
      rs.R = QR.topRows(mm).triangularView<Eigen::Upper>(); // for sigma_of_factor
      return true;
    }
  } // namespace

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
      pinocchio::cholesky::solve(mo.model, d.data, a);
      if (rs.rank > 0)
      {
        d.ya_.noalias() = -(rs.W.transpose() * d.drift);
        d.ya_.noalias() -= rs.V1.transpose() * a;
        if (!d.gram_stands(rs)) // else the correction's or the sample's G of rs stands
          metric_gram(mo, d, rs);
        gram_solve(d, rs, d.ya_);
        d.tmp_.noalias() = rs.V1 * d.ya_;
        pinocchio::cholesky::solve(mo.model, d.data, d.tmp_);
        a += d.tmp_;
      }
      return;
    }
    // M'_c, M''_c (Aghili eq. 27, 29) formed as the paper writes them, solved by LU
    d.Cv_.noalias() = -(rs.V1 * (rs.W.transpose() * d.drift));
    d.tmp_ = tau - d.h;
    d.y_.noalias() = rs.V1.transpose() * d.tmp_;
    d.rhs_ = d.tmp_;
    d.rhs_.noalias() -= rs.V1 * d.y_;
    {
      d.P.setIdentity(n, n);
      d.P.noalias() -= rs.V1 * rs.V1.transpose();
      d.Qp = MatX::Identity(n, n) - d.P;
      if (mo.opt.variant == 1)
      {
        d.tmp_.noalias() = d.M * d.Cv_;
        d.rhs_ += d.tmp_;
        d.rhs_.noalias() -= 2.0 * (d.P * d.tmp_);
        d.PM.noalias() = d.P * d.M;
        d.Mc.noalias() = d.PM * d.P;
        d.PM.noalias() = d.Qp * d.M;
        d.Mc.noalias() += d.PM * d.Qp;
      }
      else
      {
        double g = mo.opt.gamma;
        if (!(g > 0.0))
          g = d.M.selfadjointView<Eigen::Lower>().operatorNorm();
        d.Mc.noalias() = d.P * d.M;
        d.Mc += g * d.Qp;
        d.rhs_ += g * d.Cv_;
      }
    }
    d.lu_.compute(d.Mc);
    a = d.lu_.solve(d.rhs_);
  }

  // -- constraint force and multipliers (dynamics.constraint_force, eq. 32) ---------
  void forces(
    Data & d, const VecX & tau, const RowSpace & rs, const VecX & a, VecX & F, VecX & lam)
  {
    // F = (I - P)(tau - h - M a) = V1 V1^T (tau - h - M a)
    d.tmp_ = tau - d.h;
    d.tmp_.noalias() -= d.M * a;
    d.y_.noalias() = rs.V1.transpose() * d.tmp_;
    F.noalias() = rs.V1 * d.y_;
    lam.noalias() = rs.W * d.y_;
  }

  void System::solve(
    const VecX & q, const VecX & v, const VecX & tau, VecX & a, VecX & F, VecX & lam, int & rank)
  {
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    row_space(mo(), d(), A, true, false, rs_);
    accel(mo(), d(), tau, rs_, a);
    forces(d(), tau, rs_, a, F, lam);
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
    out.q = q_, out.v = v_, out.M = M, out.h = h;
    out.A = A, out.drift = drift, out.phi = phi;
    out.V1 = rs_.V1, out.W = rs_.W;
    out.rank = rs_.rank;
    out.sigma_min = rs_.sigma_min;
    MatX N = MatX::Identity(n, n);
    if (rs_.rank > 0) // complete V1 to an orthonormal basis (one Householder QR of V1)
    {
      Eigen::HouseholderQR<MatX> qv(rs_.V1);
      N.applyOnTheLeft(qv.householderQ());
      N = N.rightCols(n - rs_.rank).eval();
    }
    out.N = N;
    out.F.resize(0), out.lam.resize(0);
    if (with_sensors)
    {
      accel(mo(), d(), tau_, rs_, a_); // llt_ then holds G of rs_ for the step (gram_stands)
      forces(d(), tau_, rs_, a_, out.F, out.lam);
    }
    // the observed frames: dynamics_state left the RNEA pass of (q_, v_) and the
    // placements of q_ in data
    joint_accelerations(mo(), d(), obs_slots);
    frame_terms(mo(), d(), obs_slots, obs_frames, &v_, true);
    out.frames.resize(Eigen::Index(obs_frames.size()), 18 + 6 * n);
    for (size_t i = 0; i < obs_frames.size(); ++i)
    {
      const FrameKin & f = obs_frames[i];
      auto row = out.frames.row(Eigen::Index(i));
      row.head<3>() = f.p.transpose();
      for (int r = 0; r < 3; ++r)
        row.segment<3>(3 + 3 * r) = f.R.row(r);
      for (int r = 0; r < 6; ++r)
        row.segment(12 + r * n, n) = f.J.row(r);
      row.tail<6>() = f.drift.transpose();
    }
    out.kinetic = kinetic; // start_terms(true): dynamics_state's energies
    // on data_g: data keeps the passes the next step's start reuses (M, its factor)
    out.g = pinocchio::computeGeneralizedGravity(model, data_g, q_);
    out.potential = potential_gravity;
    // the projection's P = I - V1 V1^T and C v = -A^+ drift, A^+ = V1 W^T (eq. 4, 16)
    MatX P = MatX::Identity(n, n);
    P.noalias() -= rs_.V1 * rs_.V1.transpose();
    out.P = P;
    out.Cv = VecX::Zero(n);
    if (rs_.rank > 0)
      out.Cv.noalias() = -(rs_.V1 * (rs_.W.transpose() * drift));
  }
} // namespace pfaff
