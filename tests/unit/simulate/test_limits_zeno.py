"""Joint limits never chatter and never hang (pfaff.simulate.limit_events.EventGuard):
rebounds of an elastic stop end held after finitely many events (Zeno), a stop released
and hit again at once does not stop time, and the closed-chain biped falling onto its
knee stops (also with a crank stop that the knee's makes redundant) ends with a bounded
number of events."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff.simulate import SimOptions
from pfaff.simulate.limits import MAX_EVENTS_PER_STEP, JointLimit, simulate_limited
from tests.where import MODELS

PENDULUM = MODELS / "limited_pendulum.xml"
BIPED = MODELS / "closed_chain_biped.xml"
DT = 1e-3
STOP = 0.3  # a lower stop the pendulum (released at 1 rad) falls onto: gravity pushes in


def _most_events_in_one_step(events, dt: float = DT) -> int:
    t = np.sort([e.t for e in events])
    return int(max((np.searchsorted(t, x + dt, "left") - i for i, x in enumerate(t)), default=0))


def _pendulum_run(restitution: float, t_end: float, **kw):
    s = pfaff.load(PENDULUM)
    limit = JointLimit("hinge", STOP, 2.0, restitution)
    opt = SimOptions(dt=DT, progress=False)
    return s, simulate_limited(s.cset, s.q0, s.v0, t_end, [limit], opt, **kw)


def test_bouncing_on_a_stop_with_restitution_ends_held():
    """e = 0.5 onto a stop gravity pushes into: the rebounds shrink geometrically and
    their flights shorten below a step; the run ends with the stop held after a finite
    number of impacts (each elastic one v+ = -e v- to 1e-12 rad/s, the last plastic),
    at most MAX_EVENTS_PER_STEP + 1 of them within one step, no penetration beyond
    1e-12 rad, and the energy balance closed by the impacts' loss to 1e-8 J."""
    e = 0.5
    _, run = _pendulum_run(e, 1.6)
    assert run.held == {0: "lower"}
    impacts = [ev for ev in run.events if ev.kind == "impact"]
    assert len(impacts) == len(run.events) and 10 <= len(impacts) <= 40
    for ev in impacts[:-1]:
        assert abs(ev.v_post + e * ev.v_pre) <= 1e-12
    assert abs(impacts[-1].v_post) <= 1e-12
    assert _most_events_in_one_step(run.events) <= MAX_EVENTS_PER_STEP + 1
    a = run.trajectory.arrays()
    assert abs(a["t"][-1] - 1.6) <= 1e-12
    assert a["q"][:, 0].min() >= STOP - 1e-12
    assert np.abs(a["v"][a["t"] > impacts[-1].t + DT, 0]).max() <= 1e-12  # resting
    balance = a["energy"] - a["energy"][0] + run.impact_loss
    assert np.abs(balance).max() <= 1e-8


def test_an_impact_slower_than_rest_speed_holds_the_stop():
    """rest_speed above the first impact's speed: the elastic stop takes it plastically
    and holds (one event)."""
    _, run = _pendulum_run(0.5, 1.0, rest_speed=10.0)
    assert [ev.kind for ev in run.events] == ["impact"] and run.held == {0: "lower"}
    assert abs(run.events[0].v_post) <= 1e-12


def test_a_stop_released_and_hit_again_at_once_does_not_stop_time():
    """A release rule that lets go of a stop that still pushes (release_tol -5 N m: the
    multiplier -m g c sin(0.3) = -1.45 N m counts as pulling) releases, the pendulum
    falls back onto the stop within the step, and so on: the stop re-hit within a step
    of its release is held for that step, so the run reaches t_end with at most a few
    events per step (without the rule, time stopped at the first release and the
    phases piled up in memory)."""
    _, run = _pendulum_run(0.0, 0.4, release_tol=-5.0)
    a = run.trajectory.arrays()
    assert abs(a["t"][-1] - 0.4) <= 1e-12
    kinds = {ev.kind for ev in run.events}
    assert kinds == {"impact", "release"}
    assert _most_events_in_one_step(run.events) <= 3
    assert a["q"][:, 0].min() >= STOP - 1e-12


def _biped_events(path, t_end: float):
    s = pfaff.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the engine choice, if any, is not tested here
        sim = pfaff.Simulator(s, dt=DT)
    sim.step(n=round(t_end / DT))
    return s, sim


@pytest.mark.parametrize("crank_stop", [None, "-10.446602177106"])
def test_the_falling_biped_lands_on_its_knee_stops_with_bounded_events(crank_stop, tmp_path):
    """The closed-chain biped falls freely; its knee springs drive both knees onto their
    stops at ~0.061 s. With ``crank_stop`` the knee motor's (the four-bar's crank) lower
    stop is where the crank is when the knee rests on its stop: the two held rows are
    then dependent through the loop (a release or re-impact of one decided by
    round-off). Either way the run reaches its end with both knees held and at most
    MAX_EVENTS_PER_STEP + 1 events within any step."""
    path = BIPED
    if crank_stop is not None:
        path = tmp_path / "biped.xml"
        path.write_text(BIPED.read_text().replace('range="-60 60"', f'range="{crank_stop} 60"'))
    s, sim = _biped_events(path, 0.12)
    assert abs(sim.t - 0.12) <= 1e-12
    knees = {e.joint for e in sim.events if e.kind == "impact" and "knee" in str(e.joint)}
    assert {"left_knee", "right_knee"} <= knees or crank_stop is not None
    assert sim.events and len(sim.events) <= 20
    assert _most_events_in_one_step(sim.events) <= MAX_EVENTS_PER_STEP + 1
    for knee in ("left_knee", "right_knee"):  # held at the end: its last event an impact
        last = [e for e in sim.events if e.joint in (knee, knee.replace("knee", "knee_motor"))]
        assert last and last[-1].kind == "impact"
