// Joint limits from Python (limits.hpp): a limit added to a System, checked at the
// boundary, and one limited run (pfaff.api.simulator_limits.LimitStepper on the core)
// whose samples come back as arrays of their own and whose events as tuples.
#include <climits>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings/bind.hpp"
#include "sim/contact.hpp"
#include "sim/friction.hpp"
#include "sim/limits.hpp"
#include "sim/system.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using pfaff::Check;
using pfaff::GVec;
using pfaff::System;

namespace
{
  // one series of the record as a (samples, width) array that owns its values
  nb::object series(std::vector<double> && col, int n, std::size_t width)
  {
    auto * owned = new std::vector<double>(std::move(col));
    nb::capsule owner(owned, [](void * p) noexcept { delete static_cast<std::vector<double> *>(p); });
    const std::size_t shape[2] = {std::size_t(n), width};
    return nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<2>>(owned->data(), 2, shape, owner));
  }

  // the state set and the held rows valid, as run_limited and held_contacts read them:
  // a limit (index, side) once each and at its bound, a contact (L + pair, row of the
  // system's last run)
  void check_held(
    const Check & c, const System & s, const std::vector<std::pair<int, int>> & held)
  {
    if (s.state().q_.size() != s.nq() || s.state().v_.size() != s.nv())
      c.fail("no state: call set_state(q, v) first");
    const long L = long(s.mo().limits.size());
    std::vector<bool> seen(std::size_t(L), false);
    for (const auto & [i, side] : held)
    {
      if (i >= L && !s.mo().contact_pairs.empty()) // a held contact point: its row
      {
        c.index(i, L + long(s.mo().contact_pairs.size()), "held contact", "L + a pair index");
        c.index(side, long(s.mo().contact_specs.size()), "held contact row",
                "a contact row of this system's last run");
        continue;
      }
      c.index(i, L, "held limit", "a limit index of add_limit");
      c.index(side, 2, "held side", "0: lower, 1: upper");
      if (seen[std::size_t(i)])
        c.fail("held names limit " + std::to_string(i) + " twice");
      seen[std::size_t(i)] = true;
      const pfaff::JointLimit & l = s.mo().limits[std::size_t(i)];
      const double x = l.value(s.state().q_), b = side == 0 ? l.lower : l.upper;
      if (!(std::abs(x - b) <= 1e-9))
        c.fail("held limit " + std::to_string(i) + " is held at its "
               + (side == 0 ? "lower" : "upper") + " bound " + std::to_string(b)
               + " but q = " + std::to_string(x));
    }
  }
} // namespace

namespace pfaff
{
  void bind_limits(nb::module_ & m)
  {
    // the steps between two interrupt checks of a limited run (and its watch's calls)
    m.attr("LIMITED_CHECK_EVERY") = pfaff::LimitControl::kInterruptEvery;
    m.def(
      "add_limit",
      [](System & s, int iq, int iv, double lower, double upper, double restitution,
         double rest_speed, std::vector<int> iqs, std::vector<int> ivs,
         std::vector<double> coefs, bool ball) {
        JointLimit lim{iq, iv, lower, upper, restitution, rest_speed};
        lim.iqs = std::move(iqs);
        lim.ivs = std::move(ivs);
        lim.coefs = std::move(coefs);
        lim.ball = ball;
        add_limit(s, lim);
      },
      "system"_a, "iq"_a, "iv"_a, "lower"_a, "upper"_a, "restitution"_a, "rest_speed"_a,
      "iqs"_a = std::vector<int>{}, "ivs"_a = std::vector<int>{},
      "coefs"_a = std::vector<double>{}, "ball"_a = false,
      "add the joint limit lower <= q[iq] <= upper of a one-dof joint (velocity iv), or with "
      "coefs the fixed tendon's limit lower <= sum_j coefs[j] q[iqs[j]] <= upper (iq, iv "
      "-1), or with ball a ball joint's rotation angle <= upper (iq, iv its first "
      "coordinates, lower -inf), with Newton's restitution in [0, 1] and the approach speed at or below which an "
      "impact is plastic; after the system's constraints (ValueError naming what is wrong)");

    m.def(
      "set_contact_world",
      [](System & s, nb::bytes mjb, const std::string & label) {
        set_contact_world(s, std::string(mjb.c_str(), mjb.size()), label);
      },
      "system"_a, "mjb"_a, "label"_a,
      "the compiled MuJoCo model (mj_saveModel's buffer) whose geoms the contact pairs "
      "name; label names it in messages (ValueError when MuJoCo cannot load it)");
    m.def("add_contact_pair", &add_contact_pair, "system"_a, "g1"_a, "g2"_a, "body_frame"_a,
          "restitution"_a, "rest_speed"_a, "mu"_a = 0.0, "body_frame2"_a = "",
          "slip_impulse"_a = false,
          "add the contact pair of geoms g1, g2 (one fixed in the world, body_frame the "
          "other's body frame; or both on moving bodies, g1's point held on g2's plane, "
          "body_frame g1's body frame and body_frame2 g2's) with Newton's restitution in "
          "[0, 1], the approach speed at or below which an impact is plastic and Coulomb's "
          "friction mu >= 0 (0: frictionless; ValueError naming what is wrong); slip_impulse: "
          "a point that slips through an impact takes Coulomb's impulse (Moreau's law), else "
          "it slips through frictionless");
    m.def(
      "held_contacts",
      [](System & s, std::vector<std::pair<int, int>> held, bool pushing) {
        const int L = int(s.mo().limits.size());
        nb::list out;
        if (s.mo().contact_pairs.empty())
          return out;
        check_held(Check{"held_contacts"}, s, held);
        set_held_rows(s, held);
        const Model & mo = s.mo();
        Data & d = s.d();
        const StepState & x = s.state();
        start_terms(mo, d, x.q_, x.v_, true);
        d.st_.next();
        accel(mo, d, x.tau_, d.rs_, d.a_);
        forces(mo, d, x.tau_, d.rs_, d.a_, d.F_, d.lam_);
        if (pushing) // as a run's sample reads them
          push_held(s, held, LimitOptions{}.release_tol);
        for (std::size_t c = 0; c < held.size(); ++c)
        {
          const auto [i, j] = held[c];
          if (i < L)
            continue;
          Vec3 n;
          const Vec3 p = spec_contact(mo, d, j, n); // a round point's: below its held core
          const ContactPairC & cp = mo.contact_pairs[std::size_t(i - L)];
          const Vec3 ft = tangent_force(mo, d, x.v_, held, c, d.lam_);
          const bool stick = stick_row(mo, held, c) >= 0;
          out.append(nb::make_tuple(i - L, cp.still, cp.moving, p(0), p(1), p(2), n(0),
                                    n(1), n(2), -d.lam_(mo.loop.m + int(c)), ft(0),
                                    ft(1), ft(2), stick));
        }
        return out;
      },
      "system"_a, "held"_a, "pushing"_a = true,
      "the held contact points at the system's state and torque: (pair, still geom, moving "
      "geom, x, y, z of the contact point (a vertex held; a round point's contact, its held "
      "centre or axis point a radius above it), the normal's x, y, z, the normal force [N], the "
      "friction force's x, y, z [N], True where the point sticks); pushing: the forces a "
      "run reads (where the least-norm multipliers pull or leave a cone, the split of the "
      "same motion that pushes inside the cones), else the least-norm ones (linear in the "
      "torque)");

    m.def(
      "set_held",
      [](System & s, std::vector<std::pair<int, int>> held) {
        check_held(Check{"set_held"}, s, held);
        set_held_rows(s, held);
      },
      "system"_a, "held"_a,
      "make the held rows (limits at their bound, contact points of the system's last run) "
      "bilateral rows of the system's active set, as a held phase of run_limited has them: "
      "its steps (rollout) are then those of that fixed mode");

    nb::class_<RunMemory>(
      m, "RunMemory",
      "what a limited run leaves to a call that goes on from its end (run_limited's "
      "memory): the event guard's clocks (stops pinned, releases, the last step's events), "
      "the slipping points' directions and holds, and the slips its last instant started "
      "(reported by the next call). A call at its end time with it runs as one call "
      "through both would; another call leaves it aside")
      .def(nb::init<>())
      .def("copy", [](const RunMemory & r) { return RunMemory(r); })
      .def_ro("t_end", &RunMemory::t_end, "the time its run ended (NaN: none yet) [s]")
      .def_prop_ro(
        "pending", [](const RunMemory & r) { return r.pending.size(); },
        "the slips its run's last instant started, which the call that goes on reports (it "
        "may stop them at once: then neither is an event)");

    m.def(
      "run_limited",
      [](System & s, const GVec & tau, double t0, double t_end,
         std::vector<std::pair<int, int>> held, bool fixed_grid, int record_every,
         int max_events, double event_tol, double release_tol, int hold_chunk,
         int start_iterations, nb::object control, double next_control,
         double control_period, nb::object watch, RunMemory * memory) {
        const Check c{"run_limited"};
        c.vec(tau, s.nv(), "tau", "nv");
        c.number(t0, "t0", -HUGE_VAL, false);
        if (!(std::isfinite(t_end) && t_end - t0 > 1e-9 * s.mo().opt.dt))
          c.fail("t_end = " + std::to_string(t_end) + " must be finite and after t0 = "
                 + std::to_string(t0) + " by more than 1e-9 dt");
        if (!((t_end - t0) / s.mo().opt.dt < double(INT_MAX / 4)))
          c.fail("t_end - t0 = " + std::to_string(t_end - t0) + " s is more than "
                 + std::to_string(INT_MAX / 4) + " steps of dt");
        c.index(record_every, INT_MAX, "record_every", ">= 1", 1);
        if (s.mo().unilaterals() == 0)
          c.fail("the system has no joint limit (add_limit) nor contact pair (add_contact_pair)");
        check_held(c, s, held);
        c.index(max_events, INT_MAX / 4, "max_events", ">= 1", 1);
        c.number(event_tol, "event_tol", 0.0, true).number(release_tol, "release_tol", -HUGE_VAL, false);
        c.index(hold_chunk, INT_MAX, "hold_chunk", ">= 1", 1);
        c.index(start_iterations, INT_MAX, "start_iterations", ">= 0");
        LimitControl ctl;
        if (!control.is_none())
        {
          if (!PyCallable_Check(control.ptr()))
            c.fail("control must be callable (t, held) -> bool, or None");
          c.number(next_control, "next_control", -HUGE_VAL, false);
          c.number(control_period, "control_period", 0.0, true);
          ctl.next = next_control;
          ctl.period = control_period;
          ctl.sample = [&control](double t, int n_held) {
            nb::gil_scoped_acquire gil;
            try // a Python exception ends the run (its record kept), not the process
            {
              return nb::cast<bool>(control(t, n_held));
            }
            catch (const std::exception &)
            {
              return false;
            }
          };
        }
        else if (s.held().on)
        {
          // a built-in held law (System.set_held): sampled here on the run's clock (again
          // at each event); Python is not called
          c.number(next_control, "next_control", -HUGE_VAL, false);
          c.number(control_period, "control_period", 0.0, true);
          ctl.next = next_control;
          ctl.period = control_period;
          ctl.sample = [&s](double t, int) {
            Data & d = s.d();
            StepState & x = s.state();
            d.t_ = t;
            start_terms(s.mo(), d, x.q_, x.v_, false); // the frames of (q, v), with velocity
            d.st_.next();
            s.held().evaluate(s.mo(), d, x.q_, x.v_, t, x.tau_);
            return true;
          };
        }
        if (!watch.is_none() && !PyCallable_Check(watch.ptr()))
          c.fail("watch must be callable (t, q, contact) -> None, or None");
        LimitRun out;
        // watch(t, q, contact) of the last recorded sample, where the interrupt check
        // runs (it only reads the record: the run is the same with or without it); an
        // exception it raises ends the run and is raised again
        int watched = 0;
        bool watch_failed = false;
        const auto look = [&]() {
          const pfaff::LimitRecord & r = out.record;
          if (watch.is_none() || r.n == watched)
            return true;
          watched = r.n;
          const auto last = [&](const std::vector<double> & col, std::size_t w) {
            return std::vector<double>(col.end() - long(w), col.end());
          };
          const int Q = int(pfaff::SeriesId::q), T = int(pfaff::SeriesId::t);
          try
          {
            watch(r.cols[T].back(), last(r.cols[Q], r.width[Q]),
                  last(r.contact, r.contact.size() >= r.contact_width ? r.contact_width : 0));
          }
          catch (nb::python_error & e) // ends the run; a Ctrl-C as the interrupt check's
          {
            if (!e.matches(PyExc_KeyboardInterrupt))
            {
              e.restore();
              watch_failed = true;
            }
            return false;
          }
          return true;
        };
        // a Ctrl-C ends the run with its record (the signal handler run here; its
        // KeyboardInterrupt cleared: the caller raises its own with the samples so far)
        ctl.interrupted = [&look] {
          nb::gil_scoped_acquire gil;
          if (!look())
            return true;
          if (PyErr_CheckSignals() == 0)
            return false;
          PyErr_Clear();
          return true;
        };
        LimitOptions o;
        o.max_events = max_events;
        o.event_tol = event_tol;
        o.release_tol = release_tol;
        o.hold_chunk = hold_chunk;
        o.start_iterations = start_iterations;
        o.fixed_grid = fixed_grid;
        o.record_every = record_every;
        s.set_tau(tau);
        Status st;
        {
          nb::gil_scoped_release release;
          st = run_limited(s, t0, t_end, held, o, ctl, out, memory);
        }
        if (watch_failed)
          throw nb::python_error();
        nb::list events;
        for (const auto & e : out.events)
          events.append(
            nb::make_tuple(e.t, e.limit, e.kind, e.side, e.v_pre, e.v_post, e.energy_lost));
        nb::list rec;
        for (int i = 0; i < LimitRecord::n_series; ++i)
          rec.append(series(std::move(out.record.cols[i]), out.record.n, out.record.width[i]));
        nb::object status = st.code == pfaff::status_code::ok ? nb::none() : nb::cast(st);
        nb::object contact = series(std::move(out.record.contact), out.record.n,
                                    out.record.contact_width);
        return nb::make_tuple(status, events, held, out.max_held, out.steps,
                              out.newton_failures, rec, out.record.calls, ctl.next, contact);
      },
      "system"_a, "tau"_a, "t0"_a, "t_end"_a, "held"_a, "fixed_grid"_a, "record_every"_a,
      "max_events"_a, "event_tol"_a, "release_tol"_a, "hold_chunk"_a, "start_iterations"_a,
      "control"_a.none(), "next_control"_a, "control_period"_a, "watch"_a.none() = nb::none(),
      "memory"_a.none() = nb::none(),
      "simulate_limited(..., grid='fixed' or 'event', record_every) from the system's state "
      "at t0 to t_end with tau held: (Status or None, events (t, limit, kind 0 impact / 1 "
      "release, side 0 lower / 1 upper, v_pre, v_post, energy_lost), held at the end "
      "[(limit, side)], the most limits held at once, steps, Newton failures, the 19 "
      "series' samples, the controller's samples taken before each, its next instant, the "
      "contact forces per sample: per pair the normal force, the friction force's x, y, z); on "
      "a failure those up to it. control(t, held) -> bool, where a sample is due, sets the "
      "torque (set_tau) from the system's state; False (or an exception) ends the run. "
      "watch(t, q, contact), every 64 steps, reads the last recorded sample: its time, "
      "configuration and contact forces (per pair, as returned); its exception ends the "
      "run and is raised. memory (RunMemory): the last call's, taken up where it ended at "
      "t0, and this run's written into it where it succeeds");
  }
} // namespace pfaff
