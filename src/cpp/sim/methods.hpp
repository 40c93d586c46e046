// The methods beside the projection and the fixed-step tableau: the KKT dynamics
// (kkt.cpp) and the adaptive step (adaptive.cpp), with the step's end they share with
// step (step.cpp). Included by the files that call them, after core.hpp.
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

  /// a step's end from d.q1_, d.v1_, the mean velocity d.vbar_ and the work w of the
  /// force elements over it: the accounts, the position correction and the velocity
  /// projection, s moved to the corrected state (step.cpp)
  Status end_step(const Model & mo, Data & d, StepState & s, double t, int k, double w);
  /// one adaptive step (mo.ad_stages_ > 0; step dispatches to it): the interval
  /// [t, t + dt] by the embedded pair with solve_ivp's error control on (q, v, w), the
  /// branch check, then end_step. Status step_too_small, branch_switch (adaptive.cpp)
  Status adaptive_step(const Model & mo, Data & d, StepState & s, double t, int k);
} // namespace pfaff
