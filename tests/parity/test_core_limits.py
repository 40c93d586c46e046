"""Joint limits inside the compiled loop (src/cpp/sim/limits.cpp, one call per
Simulator.step) against the readable reference, simulate_limited(..., grid="fixed"):
whole runs of the closed-chain biped falling onto its stops, the pendulum onto an
elastic stop against its closed form, a chattering stop that ends held; the boundary
checks of pfaff._core.add_limit and run_limited."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.api import simulator_limits
from pfaff.constraints.library import joint_coordinate
from pfaff.simulate import SimOptions, limits
from pfaff.simulate.limits import MAX_EVENTS_PER_STEP, RELEASE_TOL, JointLimit, phase_loop
from pfaff.simulate.options import use_engine
from tests.unit.simulate.test_limits import I_PIVOT, PENDULUM, _fall_time, _speed
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

BIPED = MODELS / "closed_chain_biped.xml"
DT = 1e-3
#: run_limited's arguments after held: the fixed grid, every sample, the defaults
REST = (True, 1, 8, 1e-15, 1e-10, 64, 50)


def _no_reference(monkeypatch) -> None:
    """Make the Python reference unreachable from the Simulator: a call that fell back
    to it fails the test (the events must run in C++)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the Simulator ran simulate_limited: the core path fell back")

    monkeypatch.setattr(simulator_limits, "simulate_limited", refuse)
    monkeypatch.setattr(limits, "phase_loop", refuse)


def _stepped(system, calls, tau=None) -> pfaff.Simulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an engine note of the file, not tested here
        sim = pfaff.Simulator(system, dt=DT, engine="core")
    for n in calls:
        sim.step(tau, n=n)
    return sim


def _reference(sim, steps: int, engine: str, tau=None):
    """One run of the Python phase loop (the reference of simulate_limited) of the
    Simulator's system over ``steps`` with its force elements (the actuators' at ctrl 0
    among them), its phases on ``engine``."""
    system = sim.system
    opt = SimOptions(dt=DT, progress=False)
    with use_engine(engine):
        return phase_loop(
            system.cset, system.q0, system.v0, steps * DT, system.limits, opt,
            sim._limited.forces, 0.0, tau, 1e-15, RELEASE_TOL, max(1e-9, opt.position_tol / DT),
            None, "fixed", MAX_EVENTS_PER_STEP,
        )  # fmt: skip


def _events(events, ties: bool):
    """(kind, side, joint, t) of each event; ``ties``: the events of one instant (to
    1e-9 s) by joint name, as simultaneous impacts are ordered by round-off alone."""
    out = [(e.kind, e.side, str(e.joint), e.t) for e in events]
    return sorted(out, key=lambda x: (round(x[3] / 1e-9), x[2])) if ties else out


def _gaps(sim, run, ties: bool = False) -> dict[str, float]:
    """The worst gaps between the Simulator's record and events and the reference's:
    inf where the events or the samples do not pair up."""
    got, ref = sim.record().arrays(), run.trajectory.arrays()
    a, b = _events(sim.events, ties), _events(run.events, ties)
    if [x[:3] for x in a] != [x[:3] for x in b] or len(got["t"]) != len(ref["t"]):
        return dict.fromkeys(("events", "t", "q", "v", "lambda", "energy"), np.inf)
    out = {"events": max((abs(x[3] - y[3]) for x, y in zip(a, b)), default=0.0)}
    for key in ("t", "q", "v", "lambda", "energy"):
        out[key] = float(np.abs(got[key] - ref[key]).max())
    return out


def test_the_falling_biped_on_its_stops_for_two_seconds_is_the_reference(monkeypatch):
    """The biped falls for 2 s onto its knee stops (and whatever else it reaches) in
    12 calls of various n, every event in C++: the same events as one simulate_limited
    run on the core's steps (the same step arithmetic, the events in Python), their
    times to 1e-9 s and t, q, v, lambda, energy to 1e-9 (their round-off is ~1e-13: the
    bound leaves the room of a bracket's last Brent step, not a different event)."""
    _no_reference(monkeypatch)
    s = pfaff.load(BIPED)
    calls = [1, 60, 3, 200, 1, 335, 400, 100, 250, 150, 300, 200]
    steps = sum(calls)
    assert steps == 2000
    sim = _stepped(s, calls)
    assert abs(sim.t - 2.0) <= 1e-12
    impacts = [e for e in sim.events if e.kind == "impact"]
    assert len(impacts) >= 2 and {"left_knee", "right_knee"} <= {e.joint for e in impacts}
    gaps = _gaps(sim, _reference(sim, steps, "core"))
    assert gaps["events"] <= 1e-9, gaps
    assert max(gaps[k] for k in ("t", "q", "v", "lambda", "energy")) <= 1e-9, gaps


def test_the_falling_biped_meets_the_numpy_reference_to_its_first_events():
    """Against the NumPy engine (its own step arithmetic, its own event loop): the same
    events over the first 0.3 s (the two knees at one instant, in either order), their
    times to 1e-9 s, q and v to 1e-9 (measured: 2e-15 and 3e-13, the two engines'
    round-off, amplified by the fall and the impacts' projections)."""
    s = pfaff.load(BIPED)
    sim = _stepped(s, [300])
    gaps = _gaps(sim, _reference(sim, 300, "numpy"), ties=True)
    assert gaps["events"] <= 1e-9, gaps
    assert gaps["q"] <= 1e-9 and gaps["v"] <= 1e-9, gaps


def test_a_moved_stop_is_caught_by_the_comparison():
    """A core run whose knee stop is 1 degree off the reference's: the comparison fails
    (the events move by far more than 1e-9 s, or do not pair up)."""
    s = pfaff.load(BIPED)
    moved = pfaff.load(BIPED)
    k = next(i for i, lim in enumerate(moved.limits) if lim.joint == "left_knee")
    lim = moved.limits[k]
    moved.limits = [*moved.limits[:k], JointLimit(lim.joint, lim.lower + np.radians(1.0),
                    lim.upper, lim.restitution), *moved.limits[k + 1:]]  # fmt: skip
    gaps = _gaps(_stepped(moved, [300]), _reference(_stepped(s, [1]), 300, "core"))
    assert gaps["events"] > 1e-6 and gaps["q"] > 1e-6


@pytest.mark.parametrize("e", [0.0, 0.3, 0.8])
def test_the_pendulum_onto_an_elastic_stop_meets_the_closed_form(e, monkeypatch):
    """The pendulum from rest at 1 rad onto a stop at -0.5 rad with restitution e, in
    C++: the impact at the elliptic integral's time, the speed before it the energy's,
    after it e times that, the energy lost (1 - e^2) KE, all to 1e-10; the record's
    balance energy - energy0 + the impacts' loss to 1e-8 J."""
    _no_reference(monkeypatch)
    s = pfaff.load(PENDULUM)
    s.limits = [JointLimit("hinge", -0.5, 2.0, e)]
    sim = _stepped(s, [17, 300, 283])
    hit = sim.events[0]
    v = _speed(-0.5)
    assert (hit.kind, hit.side, hit.joint) == ("impact", "lower", "hinge")
    assert abs(hit.t - _fall_time(-0.5)) < 1e-10
    assert abs(hit.v_pre + v) < 1e-10 and abs(hit.v_post - e * v) < 1e-10
    assert abs(hit.energy_lost - (1 - e * e) * 0.5 * I_PIVOT * v * v) < 1e-10
    a = sim.record().arrays()
    loss = sum(np.where(a["t"] >= ev.t, ev.energy_lost, 0.0) for ev in sim.events)
    assert np.abs(a["energy"] - a["energy"][0] + loss).max() < 1e-8
    assert a["q"][:, 0].min() >= -0.5 - 1e-12


def test_a_chattering_stop_ends_held_in_bounded_time_and_events(monkeypatch):
    """A slide (a ball on a vertical rail) dropped onto its floor stop with e = 0.7:
    the bounces shrink geometrically (Zeno: infinitely many in finite time without a
    rule); in C++ the guard ends them, the run reaches t_end in one call, the stop held
    and the ball at rest on it, with at most MAX_EVENTS_PER_STEP + 1 events within any
    step and a bounded total; each elastic impact v+ = -e v- to 1e-12 m/s."""
    _no_reference(monkeypatch)
    s = pfaff.load(MODELS / "ball_on_rail.xml")
    e = 0.7
    s.limits = [JointLimit("z", 0.0, 1.0, e)]
    t0 = time.perf_counter()
    sim = _stepped(s, [2000])
    wall = time.perf_counter() - t0
    assert abs(sim.t - 2.0) <= 1e-12 and wall < 30.0
    impacts = [ev for ev in sim.events if ev.kind == "impact"]
    assert len(impacts) == len(sim.events) and 15 <= len(impacts) <= 200
    for ev in impacts[:-1]:
        assert abs(ev.v_post + e * ev.v_pre) <= 1e-12
    assert abs(impacts[-1].v_post) <= 1e-12
    assert sim._limited.held == {0: "lower"}
    assert abs(sim.q[0]) <= 1e-12 and abs(sim.v[0]) <= 1e-12
    t = np.sort([ev.t for ev in sim.events])
    most = max(np.searchsorted(t, x + DT, "left") - i for i, x in enumerate(t))
    assert most <= MAX_EVENTS_PER_STEP + 1
    ref = _reference(sim, 2000, "core")
    assert [ev.kind for ev in ref.events] == [ev.kind for ev in sim.events]
    assert max(abs(a.t - b.t) for a, b in zip(ref.events, sim.events)) <= 1e-9


def test_add_limit_and_run_limited_refuse_bad_input():
    """Every argument that crosses into C++ is checked at the boundary: a ValueError
    naming it and what is valid."""
    s = pfaff.load(PENDULUM)
    proto = core.build(s.cset)
    bad = [
        ((5, 0, -0.5, 2.0, 0.0, 1e-9), "iq = 5 is out of range"),
        ((0, 3, -0.5, 2.0, 0.0, 1e-9), "iv = 3 is out of range"),
        ((0, 0, 2.0, -0.5, 0.0, 1e-9), "must be < upper"),
        ((0, 0, float("nan"), 2.0, 0.0, 1e-9), "must be < upper"),
        ((0, 0, -0.5, 2.0, 1.5, 1e-9), r"restitution = 1.5.*valid: \[0, 1\]"),
        ((0, 0, -0.5, 2.0, 0.0, -1.0), "rest_speed"),
    ]
    for args, match in bad:
        with pytest.raises(ValueError, match=match):
            core.add_limit(core.clone(proto), *args)
    sys_ = core.clone(proto)
    tau = np.zeros(1)
    with pytest.raises(ValueError, match="no joint limit"):
        core.run_limited(sys_, tau, 0.0, 1e-3, [], *REST)
    core.add_limit(sys_, 0, 0, -0.5, 2.0, 0.0, 1e-9)
    sys_.set_state(s.q0, s.v0)
    calls = [
        ((np.zeros(2), 0.0, 1e-3, []), "tau has shape"),
        ((tau, 0.0, 0.0, []), "t_end = 0.000000 must be finite and after t0"),
        ((tau, 0.0, 1e-3, [(1, 0)]), "held limit = 1 is out of range"),
        ((tau, 0.0, 1e-3, [(0, 2)]), "held side = 2 is out of range"),
        ((tau, 0.0, 1e-3, [(0, 0)]), "held at its lower bound"),
        ((tau, float("inf"), 1e-3, []), "t0"),
    ]
    for args, match in calls:
        with pytest.raises(ValueError, match=match):
            core.run_limited(sys_, *args, *REST)


def test_a_ball_joint_cannot_take_a_limit():
    """add_limit needs the coordinates of a one-dof joint: the biped's rod (a ball
    joint, nq 4, nv 3) is refused by name of the rule."""
    s = pfaff.load(BIPED)
    sys_ = core.build(s.cset)
    iq, iv, _ = joint_coordinate(s.mechanism, "left_knee")
    core.add_limit(sys_, iq, iv, -0.5, 0.5, 0.0, 1e-9)  # the knee's own coordinates
    with pytest.raises(ValueError, match="not the coordinates of a one-dof joint"):
        core.add_limit(sys_, iq + 1, iv, -0.5, 0.5, 0.0, 1e-9)
    model = s.mechanism.model
    ball = model.joints[model.getJointId("left_rod")]
    with pytest.raises(ValueError, match="not the coordinates of a one-dof joint"):
        core.add_limit(sys_, ball.idx_q, ball.idx_v, -0.5, 0.5, 0.0, 1e-9)
