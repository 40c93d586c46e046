// Solves with M's factor M = U D U^T (Pinocchio's cholesky::decompose, data.U, data.Dinv)
// along the kinematic tree: U is unit upper triangular with U(i, k) != 0 only where row
// i is on row k's path to the root (data.parents_fromRow), so a solve walks each
// column's path: O(sum of the depths), over U's contiguous columns. Pinocchio's
// cholesky::Uiv / Utiv take the same entries through U's rows (a dot product per row,
// strided); the sums are the same, in another order. Used by terms.cpp (metric_gram),
// projection.cpp (accel), step.cpp (correct) and derivatives.cpp (M^-1), not on models
// with mimic joints.
#pragma once

#include "model/core_types.hpp"

namespace pfaff::detail
{
  /// x <- U^-1 x: back substitution by columns (x[k] final, then its path's rows); an
  /// entry exactly 0.0 moves nothing (a column of V1 over the envelope of A's rows is
  /// 0.0 past its last reflector's rows: householder.hpp)
  inline void tree_uiv(const pinocchio::Data & data, double * x)
  {
    const int n = int(data.U.rows());
    const auto & par = data.parents_fromRow;
    for (int k = n - 1; k > 0; --k)
    {
      const double xk = x[k];
      if (xk == 0.0)
        continue;
      const double * uk = data.U.data() + size_t(k) * size_t(n);
      for (int i = par[size_t(k)]; i >= 0; i = par[size_t(i)])
        x[i] -= uk[i] * xk;
    }
  }

  /// x <- U^-T x: forward substitution, each x[k] less column k's path
  inline void tree_utiv(const pinocchio::Data & data, double * x)
  {
    const int n = int(data.U.rows());
    const auto & par = data.parents_fromRow;
    for (int k = 1; k < n; ++k)
    {
      const double * uk = data.U.data() + size_t(k) * size_t(n);
      double s = x[k];
      for (int i = par[size_t(k)]; i >= 0; i = par[size_t(i)])
        s -= uk[i] * x[i];
      x[k] = s;
    }
  }

  /// x <- M^-1 x = U^-T D^-1 U^-1 x (pinocchio::cholesky::solve's steps)
  inline void tree_solve(const pinocchio::Data & data, VecX & x)
  {
    tree_uiv(data, x.data());
    x.array() *= data.Dinv.array();
    tree_utiv(data, x.data());
  }

  /// Minv = M^-1 = U^-T D^-1 U^-1, both triangles. Row k of U^-1, y_k = U^-T e_k, is
  /// nonzero on k's subtree alone (rows k .. k + nvSubtree_fromRow[k] - 1, contiguous),
  /// so M^-1 = sum_k Dinv_k y_k y_k^T adds each term on its subtree's block: ~ sum_k
  /// (subtree size)^2 / 2 products, where Pinocchio's cholesky::computeMinv solves each
  /// column through every row. U^-1 itself comes column by column from U^-1 U = I:
  /// z_j = e_j - sum_{i on j's path} U(i, j) z_i, each z_i nonzero in rows 0 .. i alone
  /// (axpys over contiguous columns; row j's ancestors from data.supports_fromRow[j],
  /// ascending, j last), then y_k = its row k. Y: a workspace (n x n, its column k is y_k)
  inline void tree_minv(const pinocchio::Data & data, MatX & Y, MatX & Minv)
  {
    const int n = int(data.U.rows());
    const auto & sub = data.nvSubtree_fromRow;
    Minv.setZero(n, n); // U^-1 first
    for (int j = 0; j < n; ++j)
    {
      double * zj = Minv.data() + size_t(j) * size_t(n);
      const double * uj = data.U.data() + size_t(j) * size_t(n);
      const auto & path = data.supports_fromRow[size_t(j)];
      zj[j] = 1.0;
      for (size_t t = 0; t + 1 < path.size(); ++t)
      {
        const int i = path[t];
        const double c = uj[i];
        const double * zi = Minv.data() + size_t(i) * size_t(n);
        for (int r = 0; r <= i; ++r)
          zj[r] -= c * zi[r];
      }
    }
    Y = Minv.transpose();
    Minv.setZero();
    for (int k = 0; k < n; ++k)
    {
      const double * y = Y.data() + size_t(k) * size_t(n);
      const int end = k + sub[size_t(k)];
      const double dk = data.Dinv[k];
      for (int j = k; j < end; ++j) // the upper triangle of Dinv_k y_k y_k^T
      {
        const double c = dk * y[j];
        double * mj = Minv.data() + size_t(j) * size_t(n);
        for (int i = k; i <= j; ++i)
          mj[i] += c * y[i];
      }
    }
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < j; ++i)
        Minv(j, i) = Minv(i, j);
  }
} // namespace pfaff::detail
