// A limited run in the compiled step loop (limits.hpp): pfaff.simulate.limits' phase loop
// (either grid, a record stride, a controller on one clock), one System whose held limits
// are LockedJoint rows toggled in its active row set. A phase is one simulate call of the
// reference (its start onto its rows' manifold, its samples, ended by a free limit past its
// bound or a held one pulling), joined as Trajectory.concat joins them (its first sample
// replaces the last one before at the same time; the accounts counted on).
#include "sim/limits.hpp"
#include "sim/contact.hpp"
#include "sim/friction.hpp"
#include "sim/limit_detail.hpp"
#include "model/check.hpp"
#include "sim/system.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "pinocchio/algorithm/joint-configuration.hpp"

namespace pfaff
{
  namespace
  {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    constexpr double kGain = 1e-3; // a trial step's gain of energy / kinetic energy: fails

    // how a phase ended
    enum class End
    {
      done,     // its last sample
      released, // a held limit pulled (the limit already released), a stuck point slips
      crossed,  // a free limit past its bound at sample `at` (stop)
      stepless, // the step from the last sample failed (Status; Painleve's pole looked for)
      failed    // a step or the start failed (Status)
    };

    struct Run
    {
      System & s;
      const LimitOptions & o;
      LimitRun & out;
      Held & held;
      EventGuard guard;
      LimitControl & ctl;          // the controller and its one clock (PhaseChain's)
      double carry[3] = {0, 0, 0}; // the accounts of the phases before
      int phase_rows = 0;          // samples of the last phase still in the record
      Status st;
      Narrow nar; // the contact pairs' narrow phase
      int L = int(s.mo().limits.size()), U = s.mo().unilaterals();
      int past = -1; // the row crossed() found past its bound (first_past), else -1
      SlipWatch slips; // the slipping contact points' directions (U + spec: a turn)
      long ticks = 0;  // steps since the start, for the interrupt check

      // the phase's start: the record's last sample at this time is replaced, the state
      // brought onto the manifold of the active rows (simulate's project_start)
      bool start(double t)
      {
        LimitRecord & r = out.record;
        if (phase_rows > 0 && r.n > 0 && r.cols[0].back() >= t - 1e-12)
          r.pop();
        phase_rows = 0;
        const Status p = s.project_state(o.start_iterations);
        if (!(p.value <= std::max(1e3 * s.mo().opt.position_tol, 1e-9)))
        {
          st.code = status_code::start_failed;
          st.what = "start";
          st.value = p.value;
          st.iterations = p.iterations;
          st.t = t;
          return false;
        }
        s.state().work = s.state().corr = s.state().force_work = 0.0;
        s.state().newton_it = 0;
        return true;
      }

      // the terms of the state at t (Stepper::run's body before the step), recorded if rec
      bool sample(double t, int k, bool rec)
      {
        const Model & mo = s.mo();
        Data & d = s.d();
        d.t_ = t;
        start_terms(mo, d, s.state().q_, s.state().v_, true);
        d.st_.next();
        accel(mo, d, s.state().tau_, d.rs_, d.a_);
        if (!d.a_.allFinite())
        {
          st.code = status_code::non_finite;
          st.what = "acceleration";
          st.t = t;
          st.step = k;
          return false;
        }
        forces(mo, d, s.state().tau_, d.rs_, d.a_, d.F_, d.lam_);
        // the held contacts' forces: pushing inside their cones where the same motion
        // allows (friction.hpp), what the record, the releases and the slips read
        push_held(s, held, o.release_tol);
        for (int r : mo.uni_rows) // the loop's unilateral rows (Stepper::run)
          if (-d.lam_(r) < 0.0)
          {
            st.code = status_code::contact_opens;
            st.index = r;
            st.value = -d.lam_(r);
            st.t = t;
            st.step = k;
            return false;
          }
        if (rec)
          keep(t);
        return true;
      }

      void keep(double t)
      {
        record_limited(s.mo(), s.d(), s.state(), out.record, t, carry);
        out.record.calls.push_back(ctl.calls);
        record_contacts(s, held, out.record);
        ++phase_rows;
      }

      Saved save(double t) const
      {
        const StepState & x = s.state();
        return Saved{t, x.q_, x.v_, x.work, x.corr, x.force_work, x.newton_it, x.tau_, ctl.next};
      }

      // the controller's sample at t (it sets the torque held), the clock moved on
      bool control(double t)
      {
        if (!ctl.sample(t, int(held.size())))
        {
          st.code = status_code::exception;
          st.what = "controller";
          st.t = t;
          return false;
        }
        ++ctl.calls;
        ctl.next += ctl.period;
        return true;
      }

      // PhaseChain.run: a phase of K steps of h whose controller sample falls between
      // its steps first steps exactly to it (one step), then on in steps of h
      End chain(double t0, double h, int K, bool watch, double & t_at, Saved & prev, bool & has)
      {
        has = false;
        const double D = K * h, due = ctl.next - t0;
        const double j = due / h;
        if (ctl.sample && 1e-12 < due && due < D - 1e-12 && std::abs(j - std::round(j)) > 1e-6)
        {
          const End e = phase(t0, due, 1, watch, t_at, prev, has);
          const double t1 = t0 + due;
          if (e != End::done || D - due < h * (1.0 - 1e-6)) // stopped, or no step left
            return e;
          account(save(t_at));
          const int K2 = int(std::lround(((t1 + (D - due)) - t1) / h));
          return phase(t1, h, K2, watch, t_at, prev, has);
        }
        return phase(t0, h, K, watch, t_at, prev, has);
      }

      // one phase of K steps of h from the System's state at t0 (watch: with the stop and
      // the release of simulate_limited's phases, a stop before a release); t_at: the
      // sample it ended at, prev the one before (has: there is one). Recorded as simulate
      // does: every record_every-th step, its last, a stop and a release (a release read
      // at every step: the stride never moves an event); the controller sampled where due
      End phase(double t0, double h, int K, bool watch, double & t_at, Saved & prev, bool & has)
      {
        if (!start(t0))
          return End::failed;
        End end = End::done;
        for (int k = 0; k <= K; ++k)
        {
          const double t = t0 + k * h;
          t_at = t;
          const bool rec = record_due(k, o.record_every, K);
          if (ctl.sample && sample_due(t, ctl.next, h) && !control(t))
          {
            end = End::failed;
            break;
          }
          if (!sample(t, k, rec))
          {
            end = End::failed;
            break;
          }
          // a crossing first: the step to this sample went past a bound (located again),
          // a pull read here is not yet the state's (the reference's phases stop first)
          if (watch && crossed(has ? &prev.q : nullptr))
          {
            if (!rec) // the stop's sample is recorded
              keep(t);
            end = End::crossed;
            break;
          }
          if (bool ok = true; watch && (release(t, rec) || stick_slip(t, k, rec, ok) || !ok))
          {
            end = ok ? End::released : End::failed;
            break;
          }
          if (k == K)
            break;
          if (ctl.interrupted && ++ticks % LimitControl::kInterruptEvery == 0
              && ctl.interrupted())
          {
            st.code = status_code::interrupted;
            st.what = "interrupt";
            st.t = t;
            st.step = k;
            end = End::failed;
            break;
          }
          prev = save(t);
          has = true;
          const Status c = step(s.mo(), s.d(), s.state(), t, k, h);
          ++out.steps;
          if (c.code != status_code::ok)
          {
            st = c;
            end = watch ? End::stepless : End::failed;
            t_at = t + h;
            break;
          }
        }
        out.newton_failures += s.state().newton_failures;
        s.state().newton_failures = 0;
        return end;
      }

      bool crossed(const VecX * q0) // (q0: the step's start, if there is one)
      {
        past = first_past(s, nar, held, s.state().q_, q0);
        // else a slip turned (the others' directions move on), else one in Painleve's case
        std::vector<int> j;
        if (past < 0 && !(j = slips.turned(s, held, s.state().q_, s.state().v_, true)).empty())
          past = U + j[0];
        if (past < 0 && !(j = painleve(s.mo(), s.d(), held, o.release_tol)).empty())
          past = U + kJam + j[0];
        return past >= 0;
      }

      // friction.hpp's leave_cone at this sample: stuck points that slip (an event)
      bool stick_slip(double t, int k, bool rec, bool & ok)
      {
        bool stale = false; // slips tried and all stayed stuck: the step reads a new sample
        const bool e = leave_cone(s, held, o.release_tol, t, guard, out.events, slips, stale);
        ok = e || !stale || sample(t, k, false);
        if (e && !rec)
          keep(t);
        ctl.next = e ? t : ctl.next; // the controller sampled at the event
        return e;
      }

      // limit_events.release: the first held row pulling at this sample, released where
      // the guard allows (release_pulling), the sample recorded first
      bool release(double t, bool rec)
      {
        const long c = first_pulling(s, held, guard, o.release_tol, t);
        if (c < 0)
          return false;
        if (!rec)
          keep(t);
        // the rows that let go together (the held set's contact problem), else the first pulling
        if (!release_together(s, held, guard, o.release_tol, t, out.events))
          release_held(s, held, guard, std::size_t(c), t, out.events);
        ctl.next = t; // the controller sampled at the event
        return true;
      }

      // q after one step of length x from a onto the manifold; false where it fails or
      // gains energy (System::trial_step, kGain: by Painleve's pole an RK stage takes the
      // diverging normal force as an acceleration: MuJoCo's humanoid gained 0.5 J, 5 J)
      bool step_to(const Saved & a, double x, VecX & q, VecX * v = nullptr)
      {
        return s.trial_step(a.q, a.v, a.t, x, o.start_iterations, kGain, q, v);
      }

      // step_to from a over x of a step of h: (q, v) a's where x is below the time's resolution
      bool trial(const Saved & a, double h, double x, VecX & q, VecX & v)
      {
        q = a.q;
        v = a.v;
        return x <= 1e-9 * h || step_to(a, x, q, &v);
      }

      // limit_events.locate: the first limit crossed from prev to the sample at t1, and when
      std::pair<int, double> locate(const Saved & a, double t1)
      {
        const VecX q1 = s.state().q_, v1 = s.state().v_;
        const double h = t1 - a.t;
        const std::vector<int> turned = slips.turned(s, held, q1, v1, false);
        const std::vector<int> jams = painleve_at(s, held, q1, v1, o.release_tol);
        int best = -1;
        double best_s = kInf, x_bad = kInf; // the shortest step that failed
        const auto to = [&](double x, VecX & q, VecX & v) {
          const bool ok = trial(a, h, x, q, v);
          x_bad = ok ? x_bad : std::min(x_bad, x);
          return ok;
        };
        auto take = [&](int i, double x) {
          if (std::isfinite(x) && (best < 0 || x < best_s))
            std::tie(best, best_s) = std::make_pair(i, x);
          return std::isfinite(x);
        };
        // a step that failed: Painleve's pole met, a jam there (false: no event found)
        const auto failed = [&] {
          const auto [j, x] = pole(s, held, to, x_bad, o.event_tol);
          x_bad = kInf;
          return j >= 0 && take(U + kJam + j, x);
        };
        for (std::size_t i = 0; i < s.mo().limits.size(); ++i)
        {
          const JointLimit & l = s.mo().limits[i];
          if (is_held(held, int(i)) || !outside(l, l.value(q1), s.mo().opt.position_tol))
            continue;
          const bool lower = l.value(q1) < l.lower;
          const double bound = lower ? l.lower : l.upper, sign = lower ? 1.0 : -1.0;
          const double v0 = l.value(a.q), x0 = std::abs(v0 - bound) <= 1e-13 ? bound : v0;
          auto g = [&](double x) {
            if (x <= 1e-9 * h) // the start's Taylor line (x0 snapped: ON_BOUND)
              return sign * (x0 + l.rate(a.q, a.v) * x - bound);
            VecX qx, vx; // limit l's value after one step of length x
            return to(x, qx, vx) ? sign * (l.value(qx) - bound) : -1.0;
          };
          const double x = first_root(g, sign * l.rate(a.q, a.v), h, o.event_tol);
          if (std::isfinite(x_bad) ? !failed() : !take(int(i), x))
            return {-1, 0.0};
        }
        // the contact pairs past their still geom (the first root of their gap), the slips
        // that turned (of their velocity), each searched up to the earliest found so far
        const auto upto = [&] { return best < 0 ? h : best_s; };
        for (std::size_t k = 0; k < s.mo().contact_pairs.size(); ++k)
          if (contact_past(s, nar, held, a.q, q1, int(k), s.mo().opt.position_tol)
              && !take(L + int(k), contact_root(s, nar, held, int(k), to, h, upto(), o.event_tol))
              && !failed())
            return {-1, 0.0};
        for (int j : turned)
          if (!take(U + j, slips.root(s, j, to, upto(), o.event_tol)) && !failed())
            return {-1, 0.0};
        for (int j : jams)
          if (!take(U + kJam + j, jam_root(s, held, j, to, upto(), o.event_tol)) && !failed())
            return {-1, 0.0};
        return {best, best_s};
      }

      // a step from a to t1 that failed: a jam where Painleve's pole is met (the last step
      // that does not fail), else the longest step that succeeds (kShorter: no event)
      std::pair<int, double> stepless(const Saved & a, double t1)
      {
        const auto to = [&](double x, VecX & q, VecX & v) { return trial(a, t1 - a.t, x, q, v); };
        const auto [j, x] = pole(s, held, to, t1 - a.t, o.event_tol);
        return {j >= 0 ? U + kJam + j : kShorter, x};
      }

      // the event of row i at t: a jam, a slip stopped or turned, a contact's or a limit's impact
      void impact(int i, double t)
      {
        if (i >= U + kJam) // Painleve's case: a tangential impulse sticks it
          jam(s, held, i - U - kJam, t, guard, out.events, slips);
        else if (i >= U) // a slip stopped: it sticks, or slips on (friction.hpp)
          stop_slip(s, held, i - U, o.release_tol, t, guard, out.events, slips);
        else if (i >= L) // an impact, then the slips it stopped (friction.hpp)
          contact_impact(s, nar, held, guard, t, out.events);
        else
          limit_impact(s, held, guard, i, t, out.events);
        if (i < U || i >= U + kJam) // an impulse: the slips it stopped stick, or slip on
          stopped_by_impact(s, held, o.release_tol, t, guard, out.events, slips);
        slips.restart(); // an impulse turns slips (not a stop): directions from here on
        ctl.next = t;    // the controller sampled at the event
      }

      void account(const Saved & x)
      {
        carry[0] += x.work;
        carry[1] += x.corr;
        carry[2] += x.fwork;
      }
    };
  } // namespace

  Status run_phases(
    System & s, double t0, double t_end, Held & held, const LimitOptions & o,
    LimitControl & ctl, LimitRun & out, double & t, RunMemory * memory)
  {
    const double dt = s.mo().opt.dt;
    const int L = int(s.mo().limits.size()), U = s.mo().unilaterals();
    out = LimitRun{};
    s.state().newton_failures = 0;
    compact_contacts(s, held);
    // rows as wide as the loop's and the limits' or the held set's (widen: wider later)
    const int H = std::max(L, int(held.size()));
    out.record.clear(s.mo(), s.mo().loop.m + H, s.mo().loop.m_h + H);
    Run r{s, o, out, held, EventGuard(dt, o.max_events, U), ctl, {0, 0, 0}, 0, {}, Narrow(s.mo())};
    take_up(memory, t0, dt, U, r.guard, r.slips, out.events);
    const double n = std::ceil((t_end - t0) / dt);
    out.record.reserve(std::size_t(n / o.record_every) + 2); // the grid's samples, both ends
    // twice the guard's bound on a step's events (and phases) ends a run that would not
    const long budget = 2L * (long(n) + 1) * (o.max_events + U + 2) * (o.fixed_grid ? 1 : 2);
    long phases = 0;
    t = t0;
    while (t_end - t > 1e-9 * dt)
    {
      if (++phases > budget || long(out.events.size()) > budget)
      {
        r.st.code = status_code::event_budget;
        r.st.what = "events";
        r.st.value = double(out.events.size());
        r.st.t = t;
        return r.st;
      }
      set_held_rows(s, held);
      out.max_held = std::max(out.max_held, int(held.size()));
      double rest = t_end - t, grid = 0.0;
      long k = long(std::floor(rest / dt + 1e-9)); // whole steps left
      if (o.fixed_grid && to_grid(t, t0, dt, grid))
      {
        rest = std::min(rest, grid); // finish the step the event fell in
        k = 0;
      }
      if (!held.empty())
        k = std::min<long>(k, o.hold_chunk);
      const double h = k == 0 ? rest : dt;
      const int K = k == 0 ? 1 : int(k);
      double t_at = t;
      bool has = false;
      Saved prev;
      const End end = r.chain(t, h, K, true, t_at, prev, has);
      if (end == End::failed)
        return r.st;
      if (end != End::crossed && end != End::stepless)
      {
        t = t_at;
        r.account(r.save(t));
        continue;
      }
      int i = -1;
      double x = 0.0;
      if (!has) // the phase's first sample is past a bound (after a release)
      {
        i = r.past; // crossed() found it at this state
        t = t_at;
        r.account(r.save(t));
      }
      else
      {
        const double t1 = t_at;
        if (end == End::crossed)
        {
          out.record.pop(); // the sample past the bound is dropped
          --r.phase_rows;
        }
        r.account(prev);
        s.state().tau_ = prev.tau; // the torque held over the step, not sampled inside it
        ctl.next = t1;
        std::tie(i, x) = end == End::crossed ? r.locate(prev, t1) : r.stepless(prev, t1);
        if (end == End::stepless && !(i >= 0 || x > 1e-9 * dt)) // the step's own failure
          return r.st;
        if (end == End::stepless)
          r.st = Status{}; // a jam there, or a shorter step: the run goes on
        // a stop (or pair) crossed and left again before t1 is past its bound at the
        // crossing found: located again up to there, until none is (at most a few times)
        for (int again = 0; i >= 0 && again < 4; ++again)
        {
          VecX qx, vx;
          if (!r.step_to(prev, x, qx, &vx) || first_past(s, r.nar, held, qx, &prev.q) < 0)
            break;
          s.set_state(qx, vx); // locate reads the interval's end from the state
          const auto [j, y] = r.locate(prev, prev.t + x);
          if (j < 0 || !(y < x))
            break;
          std::tie(i, x) = std::make_pair(j, y);
        }
        if (i < 0 && i != kShorter)
        {
          r.st.code = status_code::locate_failed;
          r.st.what = "locate";
          r.st.t = t1;
          return r.st;
        }
        t = prev.t;
        s.set_state(prev.q, prev.v);
        if (x > 1e-9 * dt) // a shorter step is below the time's resolution
        {
          const End e = r.chain(t, x, 1, false, t_at, prev, has);
          if (e == End::failed)
            return r.st;
          t = t_at;
          r.account(r.save(t));
        }
      }
      if (i >= 0)
        r.impact(i, t);
    }
    set_held_rows(s, held);
    remember(memory, t, held, L, r.guard, r.slips, out.events);
    return r.st;
  }
} // namespace pfaff
