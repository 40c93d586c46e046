// The methods beside the projection and the fixed-step tableau: the KKT dynamics
// (algorithms/kkt.hpp) and the adaptive step (adaptive.cpp), with the step's end they
// share with step (step.cpp). Included by the files that call them, after core.hpp.
#pragma once

#include "algorithms/kkt.hpp"
#include "model/core.hpp"

namespace pfaff
{
  /// a step's end from d.q1_, d.v1_, the mean velocity d.vbar_ and the work w of the
  /// force elements over it (a step of length dt): the accounts, the position correction
  /// and the velocity projection, s moved to the corrected state (step.cpp)
  Status end_step(
    const Model & mo, Data & d, StepState & s, double t, int k, double dt, double w);
  /// Coulomb friction's power at velocity v from the last accel with slipping rows
  /// (Model::slip; 0 without): a stage's power beside the force elements' (step.cpp)
  double friction_power(const Model & mo, const Data & d, const VecX & v);
  /// one adaptive step (mo.ad_stages_ > 0; step dispatches to it): the interval
  /// [t, t + dt] by the embedded pair with solve_ivp's error control on (q, v, w), the
  /// branch check, then end_step. Status step_too_small, branch_switch (adaptive.cpp)
  Status adaptive_step(
    const Model & mo, Data & d, StepState & s, double t, int k, double dt);
} // namespace pfaff
