// The KKT dynamics (kkt.cpp), the method beside the projection: declared here, below
// the loop (sim/) that catches its refusal, for accel (projection.cpp) dispatches to it.
#pragma once

#include <stdexcept>

#include "model/core.hpp"

namespace pfaff
{
  /// The KKT matrix is singular: A has rank < m by rank_tol (kkt_accel)
  struct KKTSingular : std::runtime_error
  {
    KKTSingular(int rank, int m, double sigma_min, double rank_tol, double cond);
    int rank;
    double sigma_min, cond;
    /// the Status of a run stopped by it at time t, step k (iterations: 1 inside a step)
    Status status(double t, int k, int iterations) const;
  };
  /// the acceleration of the KKT method (opt.method 1; accel dispatches to it): the
  /// saddle-point system [M A^T; A 0] [a; lambda] = [tau - h; -drift] by LU, refused
  /// (KKTSingular) where sigma_min(A) <= rank_tol; d.kkt_cond_max_ takes its condition
  /// number (kkt.cpp)
  void kkt_accel(const Model & mo, Data & d, const VecX & tau, VecX & a);
} // namespace pfaff
