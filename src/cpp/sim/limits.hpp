// Joint limits inside the compiled step loop (pfaff.simulate.limits, the NumPy reference,
// and its module docstring tell the rules): a limit keeps a one-dof joint's coordinate,
// or a fixed tendon's length sum_j c_j q_j (JointLimit::value), in [lower, upper]; a run
// locates the crossing of a bound inside the step (Brent's method on x(s) - bound over
// the step's own integrator), applies Newton's impact law in the metric of M (plastic
// below rest_speed: the stop is then held as a LockedJoint row, a tendon's as a
// CoordinateLock row, toggled on in the active row set), releases a held stop whose
// multiplier pulls,
// and bounds the events of a step (EventGuard). limits.cpp holds the run, limit_rows.cpp
// the rows, limit_events.cpp the pieces the run takes (the guard, Brent's method, the
// impact, the record).
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "model/core_types.hpp"
#include "tables/tables.hpp"

namespace pfaff
{
  class System;
  struct Model;
  struct Data;
  struct StepState;
  struct RunMemory; // friction.hpp

  /// One event of a limited run (pfaff.simulate.limit_events.LimitEvent)
  struct LimitEventRec
  {
    double t = 0.0;
    int limit = -1;
    int kind = 0; // 0 impact, 1 release; a contact's also 2 stick, 3 slip, 4 jam
    int side = 0; // 0 lower, 1 upper
    double v_pre = 0.0, v_post = 0.0, energy_lost = 0.0;
  };

  /// The knobs of simulate_limited (its defaults)
  struct LimitOptions
  {
    double event_tol = 1e-15;   // the crossing time's tolerance [s]
    double release_tol = 1e-10; // a held limit is released when it pulls by more
    int max_events = 8;         // events within one step after which the stops are held
    int hold_chunk = 64;        // steps of a held phase between two projections
    int start_iterations = 50;  // Newton's iterations of a phase's start (START_ITERATIONS)
    bool fixed_grid = true;     // grid="fixed": an event's step finished to its end
    int record_every = 1;       // a phase records every k-th step, its last and a stop
  };

  /// The samples of a limited run, one row per sample in each of 19 series (the 17 of
  /// record.hpp, then force_work and force_potential), lambda and A v padded to the
  /// loop's rows plus one per limit, Phi to the loop's holonomic rows plus one per limit
  struct LimitRecord
  {
    static constexpr int n_series = int(SeriesId::count); // series.def, in its order
    std::vector<double> cols[n_series];
    std::size_t width[n_series] = {};
    std::vector<long> calls; // the controller's samples taken before each recorded sample
    /// per sample and contact pair: its normal force [N], then its friction force's x, y,
    /// z in the world [N] (the held points' sums; contact_width = 4 pairs)
    std::vector<double> contact;
    std::size_t contact_width = 0;
    int n = 0;
    /// no samples; the rows' series m_rows wide (lambda, av), phi mh_rows (widen: wider)
    void clear(const Model & mo, int m_rows, int mh_rows);
    /// room for `samples` samples (a run's whole record: no copy as it grows)
    void reserve(std::size_t samples);
    /// series b's rows `w` wide, the samples recorded so far padded with 0.0 (a held set
    /// wider than any before: the record of a model with many contact pairs is as wide
    /// as the rows it held, not as all its pairs' rows)
    void widen(int b, std::size_t w);
    void pop(); // the last sample
  };

  /// The controller of a limited run and its one clock (pfaff.simulate.phases.PhaseChain):
  /// sample(t, held) is called where a sample is due (sample_due) with the System's state
  /// at t and the number of limits held; it sets the torque held (set_tau) and returns
  /// false when it failed (the run ends, status exception). The clock restarts at each
  /// event. No sample function: no controller (the torque set_tau gave is held).
  /// interrupted(), when given, is asked every kInterruptEvery steps whether the run
  /// is to stop (a Ctrl-C): the run then ends with status interrupted, its record kept.
  struct LimitControl
  {
    static constexpr int kInterruptEvery = 64;
    std::function<bool(double, int)> sample;
    std::function<bool()> interrupted;
    double next = 0.0, period = 0.0; // the next instant and the period [s]
    long calls = 0;                  // samples taken
  };

  /// What run_limited returns besides its Status
  struct LimitRun
  {
    std::vector<LimitEventRec> events;
    LimitRecord record;
    int max_held = 0; // the most limits held at once (Phi's width: the loop's + this)
    int steps = 0, newton_failures = 0;
  };

  /// The no-chatter rule of one run (pfaff.simulate.limit_events.EventGuard)
  class EventGuard
  {
  public:
    EventGuard(double dt, int max_events, int n_limits);
    void count(double t);
    bool saturated(double t) const;
    /// the impact of limit i at t with this approach speed is plastic (pins stops)
    bool plastic(int i, double t, double approach, double rest_speed, const Held & held);
    bool may_release(int i, double t) const { return t >= pinned_[std::size_t(i)]; }
    void released(int i, double t) { released_[std::size_t(i)] = t; }
    /// the limits and pairs it guards, and its step [s]
    std::size_t size() const { return pinned_.size(); }
    double dt() const { return dt_; }

  private:
    double dt_;
    int max_;
    std::vector<double> times_, released_, pinned_;
  };

  /// refuse (std::invalid_argument) a limit the System cannot hold, else add it to its
  /// Model (the loop's rows are those added so far; no limit may be held)
  void add_limit(System & s, const JointLimit & lim);
  /// the active rows: the loop's, then a LockedJoint (a tendon's: CoordinateLock) row at
  /// its bound per held limit
  void set_held_rows(System & s, const Held & held);
  /// simulate_limited(..., grid) from the System's state (set_state) and torque
  /// (set_tau, or the controller ctl) at t0 to t_end in steps of opt.dt: the samples, events and accounts into
  /// out (also those before a failure), held moved to the limits held at the end.
  /// Status code 4: an event budget exceeded (never by the guard's rule), 5: a phase's
  /// start not brought onto the manifold, 6: a crossing not located. memory: the last
  /// call's, taken up where it ended at t0, and this run's into it where it succeeds
  Status run_limited(
    System & s, double t0, double t_end, Held & held, const LimitOptions & o,
    LimitControl & ctl, LimitRun & out, RunMemory * memory = nullptr);

  // limit_events.cpp
  /// the velocity nearest to v in the metric M with A v = 0 and rows R v = b (a limit's
  /// row: v[iv], a tendon's or a ball's; pfaff.simulate.limit_events.metric_impact: the
  /// pseudo-inverse by eigenvalues)
  VecX metric_impact_rows(
    const MatX & M, const MatX & A, const VecX & v, const MatX & R, const VecX & b,
    double rank_tol);
  /// scipy.optimize.brentq's method on f over [a, b] (f(a) f(b) < 0), as its C source
  double brentq(
    const std::function<double(double)> & f, double xa, double xb, double xtol, double rtol,
    int iter);
  /// the sample of the System's state at t into rec (record.cpp's record, padded),
  /// with the accounts offset by carry (work, correction, force work)
  void record_limited(
    const Model & mo, const Data & d, const StepState & s, LimitRecord & rec, double t,
    const double carry[3]);
} // namespace pfaff
