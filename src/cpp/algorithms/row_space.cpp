// The row space of A with the absolute rank threshold (linalg.row_space): A's
// independent blocks, the certified QR, the QR without A's zero rows, the pivoted QR of
// rank-deficient rows, the SVD (see core.hpp; sigma_min of a factor: sigma_min.cpp).
#include "model/core.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"
#include "algorithms/householder.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

namespace pfaff
{
  using detail::consecutive;
  using detail::kNaN;
  using detail::householder_qr;
  using detail::pivoted_rows;
  using detail::zero_rows_qr;
  using detail::thin_q;
  using detail::uf_root;
  using detail::upper_inverse;

  namespace
  {
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
      if (consecutive(blk.rows) && consecutive(blk.cols))
        blk.A = Am.block(blk.rows.front(), blk.cols.front(), mb, cb);
      else
      {
        blk.A.resize(mb, cb);
        for (int j = 0; j < cb; ++j)
          for (int i = 0; i < mb; ++i)
            blk.A(i, j) = Am(blk.rows[size_t(i)], blk.cols[size_t(j)]);
      }
      std::swap(d.QRs_, blk.QRs); // the block's QR workspace, sized for it
      std::swap(d.hcs_, blk.hcs);
      dense_row_space(mo, d, blk.A, want_sigma, allow_qr, blk.rs);
      std::swap(d.QRs_, blk.QRs);
      std::swap(d.hcs_, blk.hcs);
      blk.off = r;
      blk.full = blk.rs.rank == cb;
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
    // V1 and W stay the blocks' (the products below, formed_V1, formed_W)
    rs.n = n;
    rs.m = mm;
    rs.rank = r;
    rs.R.resize(0, 0);
    rs.svd = false;
    rs.nblocks = nb;
  }

  // -- products with V1 and W, block by block where the row space has blocks --------
  namespace
  {
    // y += alpha X^T x and x += alpha X y over X's columns (k x r, column-major): a
    // dot product or an axpy per column. At a few rows Eigen's matrix-vector kernel,
    // and its coefficient-wise product, cost more in set-up than in arithmetic
    void gemv_t(const MatX & X, const double * x, double alpha, double * y)
    {
      const int k = int(X.rows()), r = int(X.cols());
      for (int j = 0; j < r; ++j)
      {
        const double * c = X.data() + size_t(j) * k;
        double acc = 0.0;
        for (int i = 0; i < k; ++i)
          acc += c[i] * x[i];
        y[j] += alpha * acc;
      }
    }
    void gemv_n(const MatX & X, const double * y, double alpha, double * x)
    {
      const int k = int(X.rows()), r = int(X.cols());
      for (int j = 0; j < r; ++j)
      {
        const double * c = X.data() + size_t(j) * k;
        const double yj = alpha * y[j];
        for (int i = 0; i < k; ++i)
          x[i] += c[i] * yj;
      }
    }
    // y += alpha X^T x(idx) and x(idx) += alpha X y for one block X of V1 (idx: its
    // columns of A) or of W (idx: its rows of A)
    void block_t(const MatX & X, const std::vector<int> & idx, const VecX & x, double alpha,
                 double * y)
    {
      const int k = int(X.rows()), r = int(X.cols());
      if (consecutive(idx))
      {
        gemv_t(X, x.data() + idx.front(), alpha, y);
        return;
      }
      for (int j = 0; j < r; ++j)
      {
        double acc = 0.0;
        for (int i = 0; i < k; ++i)
          acc += X(i, j) * x(idx[size_t(i)]);
        y[j] += alpha * acc;
      }
    }
    void block_n(const MatX & X, const std::vector<int> & idx, const double * y, double alpha,
                 VecX & x)
    {
      const int k = int(X.rows()), r = int(X.cols());
      if (consecutive(idx))
      {
        gemv_n(X, y, alpha, x.data() + idx.front());
        return;
      }
      for (int j = 0; j < r; ++j)
      {
        const double yj = alpha * y[j];
        for (int i = 0; i < k; ++i)
          x(idx[size_t(i)]) += X(i, j) * yj;
      }
    }
    // y (+)= alpha X^T x with X = V1 (of_W false) or W
    void mul_t(const RowSpace & rs, bool of_W, const VecX & x, VecX & y, double alpha, bool add)
    {
      if (!add)
        y.setZero(rs.rank);
      if (rs.nblocks == 0)
      {
        gemv_t(of_W ? rs.W : rs.V1, x.data(), alpha, y.data());
        return;
      }
      for (int b = 0; b < rs.nblocks; ++b)
      {
        const RowBlock & blk = rs.blocks[size_t(b)];
        if (blk.rs.rank > 0)
          block_t(of_W ? blk.rs.W : blk.rs.V1, of_W ? blk.rows : blk.cols, x, alpha,
                  y.data() + blk.off);
      }
    }
    // x (+)= alpha X y
    void mul(const RowSpace & rs, bool of_W, const VecX & y, VecX & x, double alpha, bool add)
    {
      if (!add)
        x.setZero(of_W ? rs.m : rs.n);
      if (rs.nblocks == 0)
      {
        gemv_n(of_W ? rs.W : rs.V1, y.data(), alpha, x.data());
        return;
      }
      for (int b = 0; b < rs.nblocks; ++b)
      {
        const RowBlock & blk = rs.blocks[size_t(b)];
        if (blk.rs.rank > 0)
          block_n(of_W ? blk.rs.W : blk.rs.V1, of_W ? blk.rows : blk.cols,
                  y.data() + blk.off, alpha, x);
      }
    }
    // V1 (of_W false) or W of a blocked row space as one matrix
    const MatX & formed(const RowSpace & rs, bool of_W, MatX & ws)
    {
      if (rs.nblocks == 0)
        return of_W ? rs.W : rs.V1;
      ws.setZero(of_W ? rs.m : rs.n, rs.rank);
      for (int b = 0; b < rs.nblocks; ++b)
      {
        const RowBlock & blk = rs.blocks[size_t(b)];
        const MatX & X = of_W ? blk.rs.W : blk.rs.V1;
        const std::vector<int> & idx = of_W ? blk.rows : blk.cols;
        for (size_t i = 0; i < idx.size(); ++i)
          ws.row(idx[i]).segment(blk.off, blk.rs.rank) = X.row(Eigen::Index(i));
      }
      return ws;
    }
  } // namespace

  void v1t(const RowSpace & rs, const VecX & x, VecX & y, double alpha, bool add)
  {
    mul_t(rs, false, x, y, alpha, add);
  }
  void v1(const RowSpace & rs, const VecX & y, VecX & x, double alpha, bool add)
  {
    mul(rs, false, y, x, alpha, add);
  }
  void wt(const RowSpace & rs, const VecX & x, VecX & y, double alpha, bool add)
  {
    mul_t(rs, true, x, y, alpha, add);
  }
  void w(const RowSpace & rs, const VecX & y, VecX & x, double alpha, bool add)
  {
    mul(rs, true, y, x, alpha, add);
  }
  void full_accel(const RowSpace & rs, const VecX & drift, VecX & a, VecX & ws)
  {
    for (int b = 0; b < rs.nblocks; ++b)
    {
      const RowBlock & blk = rs.blocks[size_t(b)];
      if (!blk.full || blk.rs.rank == 0)
        continue;
      ws.setZero(blk.rs.rank);
      block_t(blk.rs.W, blk.rows, drift, -1.0, ws.data()); // c_b = -W_b^T drift_b
      for (int c : blk.cols)
        a(c) = 0.0;
      block_n(blk.rs.V1, blk.cols, ws.data(), 1.0, a);
    }
  }
  void full_velocity(const RowSpace & rs, VecX & v)
  {
    for (int b = 0; b < rs.nblocks; ++b)
      if (rs.blocks[size_t(b)].full)
        for (int c : rs.blocks[size_t(b)].cols)
          v(c) = 0.0;
  }
  const MatX & formed_V1(const RowSpace & rs, MatX & ws) { return formed(rs, false, ws); }
  const MatX & formed_W(const RowSpace & rs, MatX & ws) { return formed(rs, true, ws); }

  // The independent blocks of A's rows: two rows are in one block when they touch a
  // common kinematic tree (Model::col_tree), directly or through other rows; a block's
  // columns are all its trees' (ascending). Rows exactly 0.0 are in no block. Returns
  // the number of blocks (rs.blocks' first ones; 1: A is one block, not filled).
  namespace
  {
    int find_blocks(const Model & mo, Data & d, const MatX & Am, RowSpace & rs)
    {
      const int mm = int(Am.rows()), n = int(Am.cols());
      if (mo.ntrees < 2 || n != int(mo.col_tree.size()))
        return 1;
      // a row of A (or of A_h) is 0.0 outside its column window (Model::row_cols): only
      // the window is scanned; another matrix, all of it
      const bool is_A = &Am == &d.A, is_Ah = !is_A && &Am == &d.A_h;
      if ((is_A && mo.one_block) || (is_Ah && mo.one_block_h))
        return 1;
      auto & uf = d.uf_;
      auto & row_tree = d.row_tree_;
      uf.resize(size_t(mo.ntrees));
      for (int t = 0; t < mo.ntrees; ++t)
        uf[size_t(t)] = t;
      row_tree.assign(size_t(mm), -1);
      for (int i = 0; i < mm; ++i)
      {
        int c0 = 0, c1 = n;
        if (is_A || is_Ah)
        {
          const auto [w0, w] = mo.row_cols[size_t(is_A ? i : mo.hol_rows[size_t(i)])];
          c0 = w0;
          c1 = w0 + w;
        }
        int & rt = row_tree[size_t(i)];
        for (int j = c0; j < c1; ++j)
          if (Am(i, j) != 0.0)
          {
            const int t = mo.col_tree[size_t(j)];
            if (rt < 0)
              rt = t;
            else if (t != rt)
            {
              const int a = uf_root(uf, rt), b = uf_root(uf, t);
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
          const int root = uf_root(uf, row_tree[size_t(i)]);
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
        const int root = uf_root(uf, mo.col_tree[size_t(j)]);
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
    rs.n = n;
    rs.m = mm;
    if (mm == 0)
    {
      rs.V1.resize(n, 0);
      rs.W.resize(0, 0);
      rs.rank = 0;
      rs.sigma_min = 0.0;
      return;
    }
    rs.zero_rows = false;
    // zero rows first, also where A has more rows than coordinates (a planar loop's
    // out-of-plane rows): the rows kept may fit under n where A's do not
    if (allow_qr && zero_rows_qr(mo, d, Am, rs))
    {
      if (want_sigma)
        sigma_of_factor(d, rs);
      return;
    }
    if (allow_qr && (mm > n || rs.deficient) && pivoted_rows(mo, d, Am, rs))
    {
      // more rows than coordinates, or rank deficient at the last call: the pivoted QR
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

} // namespace pfaff
