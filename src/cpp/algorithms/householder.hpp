// Householder QR of a few rows and its factors, over the matrices' storage: at the
// sizes of a step's constraint blocks (a few rows, tens of coordinates) Eigen's
// expression machinery and blocked triangular solves cost more than the arithmetic.
// Used by the row space (row_space.cpp) and acceleration's short path (projection.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/core_types.hpp"

namespace pfaff::detail
{
  /// W = R^-1 of the upper triangle R of the first r rows and columns of QR: each
  /// column of W by column-oriented back substitution (axpy over R's contiguous
  /// columns, times the diagonal's reciprocals: no division in the dependency chain;
  /// Eigen's triangular solve against the identity takes its blocked path, which
  /// costs more at these sizes)
  inline void upper_inverse(const MatX & QR, int r, MatX & W)
  {
    W.setZero(r, r);
    for (int i = 0; i < r; ++i) // W's diagonal: the reciprocals of R's
      W(i, i) = 1.0 / QR(i, i);
    const Eigen::Index ld = QR.rows();
    for (int j = 0; j < r; ++j)
    {
      double * w = W.data() + size_t(j) * r;
      for (int k = j; k >= 0; --k)
      {
        const double wk = k == j ? w[j] : (w[k] *= W(k, k));
        const double * rk = QR.data() + size_t(k) * ld; // column k of R, rows 0..k-1
        for (int i = 0; i < k; ++i)
          w[i] -= wk * rk[i];
      }
    }
  }

  /// c <- H_k c for the reflector H_k = I - tau [1; e] [1; e]^T acting on entries k..n-1
  /// of the column c (e[i], i > k: its essential part, stored below the diagonal)
  inline void apply_reflector(const double * e, double tau, int k, int n, double * c)
  {
    double w = c[k];
    for (int i = k + 1; i < n; ++i)
      w += e[i] * c[i];
    w *= tau;
    c[k] -= w;
    for (int i = k + 1; i < n; ++i)
      c[i] -= w * e[i];
  }

  /// one past the last entry of the n entries at x that is not exactly 0.0 (0: none)
  inline int support_end(const double * x, int n)
  {
    while (n > 0 && x[n - 1] == 0.0)
      --n;
    return n;
  }

  /// Householder QR of the n x m matrix X (m <= n) into QR and hc, in LAPACK's and
  /// Eigen's HouseholderQR format (R in the upper triangle, the essential parts of
  /// the reflectors H_k = I - hc_k [1; e_k] [1; e_k]^T below the diagonal), by
  /// Eigen's unblocked algorithm written over the columns' storage: at these sizes
  /// its expression machinery costs more than the arithmetic. Each reflector spans
  /// rows k .. L_k - 1 only, L_k the envelope of X's columns 0..k (one past the last
  /// entry not 0.0 of any): below it every column is still 0.0 (a constraint's row of
  /// A is 0.0 past the columns of its frames' supporting joints, so the rows of a
  /// chain of loops, in the joints' depth-first order, reach further down one by
  /// one). The entries skipped are products with 0.0: the same QR, bit for bit
  template <typename Mat>
  void householder_qr(const Mat & X, MatX & QR, VecX & hc)
  {
    QR = X;
    const int n = int(QR.rows()), m = int(QR.cols());
    hc.resize(m);
    double * a = QR.data();
    int env = 0;
    for (int k = 0; k < m; ++k)
    {
      double * ck = a + size_t(k) * n;
      env = std::max(env, std::max(k + 1, support_end(ck, n)));
      double tail = 0.0;
      for (int i = k + 1; i < env; ++i)
        tail += ck[i] * ck[i];
      const double c0 = ck[k];
      if (tail <= std::numeric_limits<double>::min())
      {
        hc(k) = 0.0;
        for (int i = k + 1; i < env; ++i)
          ck[i] = 0.0;
        continue;
      }
      double beta = std::sqrt(c0 * c0 + tail);
      if (c0 >= 0.0)
        beta = -beta;
      const double inv = 1.0 / (c0 - beta);
      for (int i = k + 1; i < env; ++i)
        ck[i] *= inv;
      const double tau = (beta - c0) / beta;
      ck[k] = beta;
      hc(k) = tau;
      for (int j = k + 1; j < m; ++j)
        apply_reflector(ck, tau, k, env, a + size_t(j) * n);
    }
  }

  /// Q_1 = H_0 ... H_{r-1} [I_r; 0] from the first r Householder reflectors of a QR
  /// (LAPACK's dorg2r): H_k, applied last to first, touches rows k.. and columns k..
  /// only (Eigen's HouseholderSequence applies each reflector to every column)
  inline void thin_q(const MatX & QR, const VecX & hc, int r, MatX & V1)
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
      // H_k spans rows k .. up to its essential part's last entry not 0.0
      // (householder_qr's envelope): past it, a product with 0.0
      const int end = std::max(k + 1, support_end(e, n));
      for (int j = k; j < r; ++j)
        apply_reflector(e, tau, k, end, v + size_t(j) * n);
    }
  }

  /// X <- H_0 ... H_{r-1} X: Q of the QR applied to the columns of X (X = [0; I] gives
  /// the null-space basis Q_2)
  inline void apply_q(const MatX & QR, const VecX & hc, int r, MatX & X)
  {
    const int n = int(QR.rows());
    for (int k = r - 1; k >= 0; --k)
      if (hc(k) != 0.0)
        for (int j = 0; j < int(X.cols()); ++j)
          apply_reflector(QR.data() + size_t(k) * n, hc(k), k, n, X.data() + size_t(j) * n);
  }
} // namespace pfaff::detail
