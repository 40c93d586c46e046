// The checks of a System call's arguments in the bindings (bindings.cpp): a record
// buffer the core writes into, a state and torque against nq and nv, the options a solve
// or a run reads, the state a run starts from. Each failure is a ValueError naming the
// entry point and the argument (Check, check.hpp).
#pragma once

#include <climits>
#include <cmath>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "model/check.hpp"
#include "sim/system.hpp"

namespace pfaff::bind
{
  namespace nb = nanobind;

  // an array the core writes into (a record buffer): float64, C-contiguous, on the CPU
  using Buffer = nb::ndarray<nb::device::cpu>;

  inline double * buffer(const Check & c, const Buffer & b, const std::string & name)
  {
    if (b.dtype() != nb::dtype<double>())
      c.fail(name + " has dtype code " + std::to_string(int(b.dtype().code)) + " of "
             + std::to_string(int(b.dtype().bits)) + " bits: expected float64 (the core "
             "writes into it)");
    int64_t step = 1;
    for (std::size_t i = b.ndim(); i-- > 0;)
    {
      if (b.shape(i) > 1 && b.stride(i) != step)
        c.fail(name + " is not C-contiguous: the core writes its rows one after another");
      step *= int64_t(b.shape(i));
    }
    return static_cast<double *>(b.data());
  }

  // q (nq), v (nv) and, if given, tau (nv) of a System call, finite
  inline void check_state(
    const System & s, const Check & c, const GVec & q, const GVec & v,
    const GVec * tau = nullptr)
  {
    c.vec(q, s.nq(), "q", "nq").vec(v, s.nv(), "v", "nv");
    if (tau)
      c.vec(*tau, s.nv(), "tau", "nv");
  }

  // the options a solve or a run reads
  inline void check_options(const Check & c, const pfaff::Options & o)
  {
    c.number(o.dt, "options.dt", 0.0, true).number(o.rank_tol, "options.rank_tol", 0.0, false);
    c.number(o.position_tol, "options.position_tol", 0.0, false);
    c.number(o.newton_step_tol, "options.newton_step_tol", 0.0, false);
    c.number(o.position_floor, "options.position_floor", 0.0, false);
    c.number(o.gamma, "options.gamma", -HUGE_VAL, false);
    c.number(o.potential_offset, "options.potential_offset", -HUGE_VAL, false);
    c.index(o.max_newton, INT_MAX, "options.max_newton", ">= 0");
    c.index(o.record_every, INT_MAX, "options.record_every", ">= 1", 1);
    c.index(o.variant, 3, "options.variant", "0: M_c, 1: M'_c, 2: M''_c");
    c.index(o.method, 2, "options.method", "0: the projection, 1: KKT");
    c.number(o.rtol, "options.rtol", 0.0, true).number(o.atol, "options.atol", 0.0, false);
  }

  // the state a run or a sample starts from (set_state, set_tau)
  inline void check_ready(const System & s, const Check & c, bool need_tau)
  {
    const pfaff::StepState & x = s.state();
    if (x.q_.size() != s.nq() || x.v_.size() != s.nv())
      c.fail("no state: call set_state(q, v) first");
    if (need_tau && x.tau_.size() != s.nv())
      c.fail("no torque: call set_tau(tau) first");
    check_options(c, s.options());
  }
} // namespace pfaff::bind
