// The rules a limited run's loop (limits.cpp) shares with its pieces (limit_events.cpp):
// a limit's watch, the sign of a held row's multiplier, the step grid and the first root
// of a gap inside a step.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "sim/limits.hpp"

namespace pfaff
{
  /// Watch: a free coordinate past a bound by more than slack
  inline bool outside(const JointLimit & l, double x, double slack)
  {
    return x < l.lower - slack || x > l.upper + slack;
  }

  /// a run's events by index: a limit's i, L + a contact pair's, U + a contact spec's
  /// (its slip stopped), U + kJam + a slipping spec's in Painleve's case (friction.hpp;
  /// more specs than any run holds)
  constexpr int kJam = 1 << 24;
  /// no event: a step that failed is taken shorter (limits.cpp's stepless)
  constexpr int kShorter = -2;

  /// the state a limited run's phase goes back to: a sample's time, state, the phase's
  /// accounts, the torque held over the step from it and the controller's next instant
  struct Saved
  {
    double t = 0.0;
    VecX q, v;
    double work = 0.0, corr = 0.0, fwork = 0.0;
    int newton_it = 0;
    VecX tau;
    double next = 0.0;
  };

  /// row i (a limit's index, L + a contact point's) is in the held set
  inline bool is_held(const Held & held, int i)
  {
    return std::any_of(held.begin(), held.end(), [i](const auto & h) { return h.first == i; });
  }

  /// limit_events.pulling: with M a + h = tau - A^T lambda, a row at a lower bound (and
  /// a contact's) pushes while lambda <= 0, at an upper one while lambda >= 0
  inline bool pulling(int side, double lam, double tol)
  {
    return (side == 1 ? 1.0 : -1.0) * lam < -tol;
  }

  /// limits._to_grid: the time from t to the next point of t0 + k dt when t is off it
  inline bool to_grid(double t, double t0, double dt, double & rest)
  {
    const double k = (t - t0) / dt;
    const double below = std::floor(k + 1e-9);
    if (k - below <= 1e-9)
      return false;
    rest = t0 + (below + 1.0) * dt - t;
    return true;
  }

  class System;
  class Narrow;

  /// Watch, over every unilateral row not held: the first past its bound at q by more
  /// than the position tolerance (a limit's index, L + a contact point's; with q0, the
  /// step's start, L + the pair of a held rim come down flat since: rim_turn), else -1
  int first_past(
    const System & s, Narrow & nar, const Held & held, const VecX & q, const VecX * q0 = nullptr);

  /// limit_events.impact: Newton's law in the metric of M for limit i at its bound, at
  /// the System's state (put on the bound); plastic (the stop held) where the guard says
  /// so; its event into events
  void limit_impact(
    System & s, Held & held, EventGuard & guard, int i, double t,
    std::vector<LimitEventRec> & events);

  /// limit_events.release: the first held entry (in held order) whose multiplier pulls
  /// by more than tol at the System's evaluated state, where the guard allows, else -1
  long first_pulling(const System & s, const Held & held, const EventGuard & guard,
                     double tol, double t);
  /// release held entry c at t: its event into events, the guard told
  void release_held(System & s, Held & held, EventGuard & guard, std::size_t c, double t,
                    std::vector<LimitEventRec> & events);
  /// the held entries that separate together at t (friction.hpp's separating) let go
  /// where the guard allows, one "release" event per limit and per contact pair; false
  /// where none does
  bool release_together(System & s, Held & held, EventGuard & guard, double tol, double t,
                        std::vector<LimitEventRec> & events);

  /// run_limited's phases (limits.cpp); t: the time reached
  Status run_phases(
    System & s, double t0, double t_end, Held & held, const LimitOptions & o,
    LimitControl & ctl, LimitRun & out, double & t, RunMemory * memory);

  /// limit_events._crossing: the first root of the gap g (inside > 0) in (0, h]; where
  /// g(0) is 0, rate > 0 says it opens first (the root is looked for past where it does)
  double first_root(
    const std::function<double(double)> & g, double rate, double h, double event_tol);
} // namespace pfaff
