// Solves with M's factor M = U D U^T (Pinocchio's cholesky::decompose, data.U, data.Dinv)
// along the kinematic tree: U is unit upper triangular with U(i, k) != 0 only where row
// i is on row k's path to the root (data.parents_fromRow), so a solve walks each
// column's path: O(sum of the depths), over U's contiguous columns. Pinocchio's
// cholesky::Uiv / Utiv take the same entries through U's rows (a dot product per row,
// strided); the sums are the same, in another order. Used by terms.cpp (metric_gram),
// projection.cpp (accel) and step.cpp (correct), not on models with mimic joints.
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
} // namespace pfaff::detail
