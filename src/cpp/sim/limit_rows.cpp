// The rows of a System's joint limits (limits.hpp): a limit added after the loop's
// constraints, and the active row set of a held set (the loop's rows, then a
// LockedJoint row -- a fixed tendon's limit: a CoordinateLock row -- at its bound per
// held limit). Both change the Model through a
// ModelBuilder (model/builder.cpp holds the checks and the rows). run_limited: the run
// of limits.cpp, a singular KKT matrix caught.
#include "sim/limits.hpp"
#include "algorithms/kkt.hpp"
#include "sim/limit_detail.hpp"
#include "sim/system.hpp"

#include <cmath>

namespace pfaff
{
  void add_limit(System & s, const JointLimit & lim)
  {
    s.change_model([&](ModelBuilder & b) { b.add_limit(lim); });
  }

  void set_held_rows(System & s, const Held & held)
  {
    if (s.mo().loop.specs < 0)
      return; // no limit: the rows are the loop's
    s.change_model([&](ModelBuilder & b) { b.set_held_rows(held); });
  }
  Status run_limited(
    System & s, double t0, double t_end, Held & held, const LimitOptions & o,
    LimitControl & ctl, LimitRun & out, RunMemory * memory)
  {
    double t = t0;
    try
    {
      return run_phases(s, t0, t_end, held, o, ctl, out, t, memory);
    }
    catch (const KKTSingular & e) // the KKT method at a singular A: stopped as System::run
    {
      return e.status(t, int(std::floor((t - t0) / s.mo().opt.dt + 1e-9)), 1);
    }
  }
} // namespace pfaff
