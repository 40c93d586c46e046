"""pfaff.Simulator through joint limits: k step() calls of various n against one
simulate_limited run of the same horizon and torque (the second implementation: its own
phase loop over the whole horizon), the pendulum's event against its closed form
(elliptic integrals), a resting limit held across calls, both engines, limits=False."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.simulate import SimOptions
from pfaff.simulate.limits import JointLimit, simulate_limited
from pfaff.simulate.options import use_engine
from tests.unit.simulate.test_limits import MGC, PENDULUM, _fall_time, _speed
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

CALLS = [1, 7, 120, 3, 1, 250, 1, 37, 180, 200]  # 800 steps of 1 ms in 10 calls
STEPS = sum(CALLS)
DT = 1e-3


def _pendulum(lower: float, upper: float = 2.0) -> pfaff.System:
    """The limited pendulum with the stop of its file moved (System.limits is what a
    Simulator holds)."""
    s = pfaff.load(PENDULUM, contact=False)
    s.limits = [JointLimit("hinge", lower, upper)]
    return s


def _stepped(system, engine, tau=None, calls=CALLS, **kw) -> pfaff.Simulator:
    with use_engine(engine):
        sim = pfaff.Simulator(system, dt=DT, **kw)
        for n in calls:
            sim.step(tau, n=n)
    return sim


def _witness(system, engine, limits, tau=None, steps=STEPS):
    """One simulate_limited run over the whole horizon on the fixed grid."""
    opt = SimOptions(dt=DT, progress=False)
    with use_engine(engine):
        return simulate_limited(
            system.cset, system.q0, system.v0, steps * DT, limits, opt,
            forces=system.forces, tau=tau, grid="fixed",
        )  # fmt: skip


def _gap(sim, run) -> tuple[float, float]:
    """(worst event-time gap [s], worst state gap) between a Simulator and a witness run;
    inf when their events or samples do not pair up."""
    got, ref = sim.record().arrays(), run.trajectory.arrays()
    kinds = [(e.kind, e.side) for e in sim.events]
    if kinds != [(e.kind, e.side) for e in run.events] or len(got["t"]) != len(ref["t"]):
        return np.inf, np.inf
    dt_ev = max((abs(a.t - b.t) for a, b in zip(sim.events, run.events)), default=0.0)
    gap = max(float(np.abs(got[k] - ref[k]).max()) for k in ("t", "q", "v", "lambda"))
    return dt_ev, gap


def test_pendulum_steps_as_one_limited_run_and_meets_the_closed_form(engine):
    """The file's plastic stop at -0.5 rad on the up-swing: 10 calls equal one run (the
    same events to 1e-12 s, t, q, v, lambda to 1e-12); the impact at the elliptic
    integral's time with the energy's speed, to 1e-10; sim.t stays steps * dt."""
    s = pfaff.load(PENDULUM, contact=False)
    sim = _stepped(s, engine)
    assert sim.engine == engine and sim.warnings == []
    assert sim.steps == 800 and abs(sim.t - 0.8) < 1e-15
    dt_ev, gap = _gap(sim, _witness(s, engine, s.limits))
    assert dt_ev <= 1e-12 and gap <= 1e-12
    hit = sim.events[0]
    assert [(e.kind, e.side) for e in sim.events] == [("impact", "lower"), ("release", "lower")]
    assert abs(hit.t - _fall_time(-0.5)) < 1e-10
    assert abs(hit.v_pre + _speed(-0.5)) < 1e-10 and abs(hit.v_post) < 1e-12
    a = sim.record().arrays()
    assert a["q"][:, 0].min() >= -0.5 - 1e-12  # no penetration
    assert np.isclose(a["t"], hit.t, rtol=0, atol=1e-15).sum() == 1  # the event's sample
    assert sim.q[0] > -0.4  # it swung back


def test_four_bar_bounces_on_a_crank_limit_as_one_limited_run(engine):
    """Loop rows and an elastic limit (e = 0.5), three impacts, a constant torque: 10
    calls equal one run, events to 1e-12 s and states to 1e-12."""
    s = pfaff.load(MODELS / "four_bar.xml", contact=False)
    s.limits = [JointLimit("crank", -1.0, 1.0, 0.5)]
    tau = np.full(s.nv, 0.01)
    sim = _stepped(s, engine, tau)
    run = _witness(s, engine, s.limits, tau)
    assert len(sim.events) >= 2
    dt_ev, gap = _gap(sim, run)
    assert dt_ev <= 1e-12 and gap <= 1e-12


def test_a_resting_limit_is_held_across_calls_not_hit_again(engine):
    """The stop at 0.3 rad on the down-swing, plastic: one impact, then held over 60
    calls of 10 steps, resting on the stop with the static multiplier -m g c sin(0.3)
    (sim.last.lam). Calls that forget the held set (simulate_limited without held=) hit
    the stop again at each call: the count is what tells."""
    s = _pendulum(0.3)
    calls = [int(0.4 / DT)] + [10] * 60
    sim = _stepped(s, engine, calls=calls)
    assert [e.kind for e in sim.events] == ["impact"]
    assert abs(sim.events[0].t - _fall_time(0.3)) < 1e-10
    assert abs(sim.q[0] - 0.3) <= 1e-12 and abs(sim.v[0]) <= 1e-12
    assert abs(sim.last.lam[0] + MGC * np.sin(0.3)) < 1e-9
    dt_ev, gap = _gap(sim, _witness(s, engine, s.limits, steps=sum(calls)))
    assert dt_ev <= 1e-12 and gap <= 1e-12
    # the wrong stepping: each call starts with nothing held
    opt = SimOptions(dt=DT, progress=False)
    q, v, t, hits = sim.q, sim.v, sim.t, 0
    with use_engine(engine):
        for _ in range(5):
            run = simulate_limited(s.cset, q, v, t + 10 * DT, s.limits, opt, t0=t, grid="fixed")
            a = run.trajectory.arrays()
            q, v, t, hits = a["q"][-1], a["v"][-1], t + 10 * DT, hits + len(run.events)
    assert hits >= 5


def test_a_moved_limit_is_caught_by_the_comparison():
    """A Simulator whose stop is 0.1 rad off the witness's: the events no longer pair
    up in time (or at all), and the gap is far above the tolerance."""
    s, moved = pfaff.load(PENDULUM, contact=False), _pendulum(-0.4)
    sim = _stepped(moved, "core")
    dt_ev, gap = _gap(sim, _witness(s, "core", s.limits))
    assert dt_ev > 1e-3 and gap > 1e-2


def test_limits_false_warns_and_steps_through_the_stop():
    """The opt-out: the compiled fast path, a warning, no events, the bound crossed."""
    s = pfaff.load(PENDULUM, contact=False)
    with pytest.warns(UserWarning, match="not held by a Simulator with limits=False"):
        sim = pfaff.Simulator(s, dt=DT, limits=False)
    assert any("limits=False" in w for w in sim.warnings)
    sim.step(n=800)
    assert sim.events == []
    assert sim.record().arrays()["q"][:, 0].min() < -0.5 - 0.1


def test_record_false_and_step_derivatives_say_where_a_limit_acts():
    """record=False keeps the last sample (the gym env's use); step_derivatives warns
    where a limit is hit inside the step, is quiet where none acts, and where the limit
    is held gives the held mode's Jacobians: the one-dof pendulum held at its stop does
    not move whatever its start or torque (A = 0, B = 0; the step without the limit
    would give A ~ [[1, dt], [., 1]])."""
    s = _pendulum(0.3)
    sim = pfaff.Simulator(s, dt=DT, record=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.step_derivatives()  # from rest at 1 rad: no limit acts
    sim.reset(q=np.array([0.3005]), v=np.array([-1.0]))
    with pytest.warns(UserWarning, match="impact of the lower limit of 'hinge'"):
        sim.step_derivatives()
    assert sim.events == [] and sim.steps == 0  # the check did not step
    sim.step(n=20)
    assert [e.kind for e in sim.events] == ["impact"] and len(sim._parts) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A, B = sim.step_derivatives(tau=np.array([-1.0]))  # pushing on its stop
    assert np.abs(A).max() < 1e-6 and np.abs(B).max() < 1e-9
    with pytest.raises(ValueError, match="keeps no record"):
        sim.record()


def test_held_and_grid_arguments_are_checked():
    s = pfaff.load(PENDULUM, contact=False)
    opt = SimOptions(dt=DT, progress=False)
    args = (s.cset, s.q0, s.v0, 0.01, s.limits, opt)
    with pytest.raises(ValueError, match="grid = 'nominal'; valid"):
        simulate_limited(*args, grid="nominal")
    with pytest.raises(ValueError, match="held: limit index 3, valid: 0 to 0"):
        simulate_limited(*args, held={3: "lower"})
    with pytest.raises(ValueError, match="held: side 'top' of limit 0"):
        simulate_limited(*args, held={0: "top"})
    with pytest.raises(ValueError, match="held at its lower bound -0.5 but q = 1.0"):
        simulate_limited(*args, held={0: "lower"})


def test_a_start_outside_a_limit_is_refused_and_an_explicit_engine_kept():
    s = pfaff.load(PENDULUM, contact=False)
    sim = pfaff.Simulator(s, dt=DT, engine="numpy")
    assert sim.engine == "numpy"  # an unconstrained system: numpy when asked for
    with pytest.raises(ValueError, match="outside the limit of joint 'hinge': q = -0.6"):
        sim.reset(q=np.array([-0.6]))
    with pytest.warns(UserWarning, match="limits=False"):
        free = pfaff.Simulator(s, dt=DT, limits=False)
    free.reset(q=np.array([-0.6]))  # no limits held: any start


def test_calls_on_the_core_run_their_events_in_cpp(monkeypatch):
    """On the core, a call is one compiled run whether or not a limit acts (a free
    call, one that crosses the stop, one resting on it): the Python reference is never
    reached; a failing core run raises LimitedRunError, not run again in Python, and
    the Simulator keeps its held set and events."""
    from pfaff.api import simulator_limits
    from pfaff.simulate import limits
    from pfaff.simulate.limits_core import LimitedRunError

    s = _pendulum(0.3)
    sim = pfaff.Simulator(s, dt=DT)
    lim = sim._limited
    free, events = lim.run(sim.q, sim.v, 0.0, None, 10, keep=False)
    assert events == [] and len(free) == 11 and free.steps == 10
    assert free.arrays()["lambda"].shape == (11, 1)  # the limit's column, zero

    def refuse(*args, **kwargs):
        raise AssertionError("simulate_limited ran")

    with monkeypatch.context() as mp:
        mp.setattr(simulator_limits, "simulate_limited", refuse)
        sim.step(n=10)
        np.testing.assert_array_equal(sim.q, free.arrays()["q"][-1])
        sim.step(n=500)  # the impact at ~0.31 s, then resting on the stop
        assert [e.kind for e in sim.events] == ["impact"] and sim._limited.held

    monkeypatch.setattr(simulator_limits, "simulate_limited", refuse)
    monkeypatch.setattr(limits, "phase_loop", refuse)
    held, events, t = dict(lim.held), list(lim.events), sim.t
    with pytest.raises(LimitedRunError, match="NON_FINITE") as info:
        sim.step(np.array([1e308]), n=10)  # the acceleration overflows
    assert info.value.held == held and abs(info.value.status.t - t) < 1e-12
    assert lim.held == held and lim.events == events and sim.t == t


def test_a_held_limit_is_released_by_a_torque_that_lifts_it(engine):
    """Resting on the stop at 0.3 rad, then tau = 3 N m > m g c sin(0.3): the held row
    would pull (lambda = tau - m g c sin 0.3 > 0 at a lower bound) at the first sample of
    that call, so the limit is released there and the arm leaves the stop. The witness:
    the same two torques as two chained simulate_limited runs (held set carried), which
    never take the compiled path."""
    s = _pendulum(0.3)
    with use_engine(engine):
        sim = pfaff.Simulator(s, dt=DT)
        for n in (400, 1, 99):
            sim.step(n=n)
        for n in (1, 50, 149):
            sim.step([3.0], n=n)
    assert [e.kind for e in sim.events] == ["impact", "release"]
    assert abs(sim.events[1].t - 0.5) < 1e-12
    assert sim.q[0] > 0.3 + 1e-3
    opt = SimOptions(dt=DT, progress=False)
    with use_engine(engine):
        a = simulate_limited(s.cset, s.q0, s.v0, 0.5, s.limits, opt, grid="fixed")
        qa, va = (a.trajectory.arrays()[k][-1] for k in ("q", "v"))
        b = simulate_limited(
            s.cset, qa, va, 0.7, s.limits, opt, t0=0.5, tau=np.array([3.0]), held=a.held,
            grid="fixed",
        )  # fmt: skip
    ref_events = a.events + b.events
    assert [e.kind for e in ref_events] == [e.kind for e in sim.events]
    assert max(abs(x.t - y.t) for x, y in zip(ref_events, sim.events)) <= 1e-12
    ref = b.trajectory.arrays()
    got = sim.record().arrays()
    k = len(got["t"]) - len(ref["t"])
    for key in ("t", "q", "v", "lambda"):
        assert np.abs(got[key][k:] - ref[key]).max() <= 1e-12, key


def test_a_located_crossing_that_fails_says_when_and_what_to_try():
    """LOCATE_FAILED (a trial step of a location failed, no Painleve pole explains it):
    the message names the step's end, the cause and the remedy; the other codes keep
    their own messages."""
    from types import SimpleNamespace

    from pfaff.simulate.limit_events import LimitedRun
    from pfaff.simulate.limits_core import failure_message
    from pfaff.simulate.policy import StatusCode
    from pfaff.simulate.trajectory import Trajectory

    run = LimitedRun(Trajectory(1, 1, 0, 0), held={3: "lower"})
    st = SimpleNamespace(code=int(StatusCode.LOCATE_FAILED), t=0.217, value=0.0)
    msg = failure_message(None, st, run)
    assert "LOCATE_FAILED" in msg and "t = 0.217 s" in msg
    assert "Painleve pole" in msg and "smaller dt" in msg and "limit 3 (lower)" in msg
    budget = SimpleNamespace(code=int(StatusCode.EVENT_BUDGET), t=0.5, value=99.0)
    assert "smaller dt" not in failure_message(None, budget, run)
