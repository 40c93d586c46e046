"""Frictionless unilateral contact on the compiled loop (pfaff.load(path, contact=True),
Simulator(..., restitution=e)) against the closed forms (pfaff.contact.closed_forms):
a ball's impact times and rest time, a box resting on four redundant corners; the
held rows' normal forces against the NumPy reference (PointOnPlane rows, the projected
dynamics); and the inputs refused."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintSet
from pfaff.constraints.library import PointOnPlane
from pfaff.contact.closed_forms import ball_impact_times, ball_rest_time
from pfaff.contact.model import FRICTION_WARNING
from pfaff.contact.mujoco_cases import run_mujoco

MODELS = Path(__file__).parents[2] / "models" / "contact"
EXAMPLES = Path(__file__).parents[3] / "examples"
G = 9.81
DT = 1e-3


def _load(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the friction warning, tested on its own
        return pfaff.load(MODELS / name, contact=True)


def _ball_run(e: float, t_end: float):
    sim = pfaff.Simulator(_load("ball_drop.xml"), dt=DT, restitution=e, max_events=400)
    sim.step(n=int(math.ceil(t_end / DT)))
    return sim


@pytest.mark.parametrize("e", [0.0, 0.5, 0.8])
def test_ball_impacts_at_the_closed_form_times_and_rests_without_penetration(e):
    t_rest = ball_rest_time(1.0, e, G)
    sim = _ball_run(e, t_rest + 0.2)
    impacts = np.array([ev.t for ev in sim.events if ev.kind == "impact"])
    # every flight longer than 1e-6 s is one impact at its closed-form time
    closed = ball_impact_times(1.0, e, G, n=400)
    flights = np.diff(closed, prepend=0.0)
    k = int(np.sum(flights > 1e-6)) if e > 0 else 1
    assert len(impacts) >= k
    assert np.max(np.abs(impacts[:k] - closed[:k])) < 1e-9
    # at rest: the last impact at the accumulation time, within the time the bounces
    # below the rest speed would still have taken (2 e v_rest / (g (1 - e)))
    bound = 2 * e * 1e-7 / (G * (1 - e)) + 1e-9
    assert abs(impacts[-1] - t_rest) < bound
    z = sim.q[2]
    assert z - 0.1 >= -1e-9 and abs(z - 0.1) < 1e-9
    assert np.max(np.abs(sim.v)) < 1e-9
    assert sim.t == pytest.approx(int(math.ceil((t_rest + 0.2) / DT)) * DT)
    (c,) = sim.contacts
    # the file's friction (MuJoCo's default 1): the ball at rest sticks (rolling rows)
    assert (c.geom1, c.geom2, c.mode) == ("floor", "ball", "stick")
    assert c.tangent_force < 1e-9
    assert abs(c.normal_force - 1.0 * G) < 1e-9 * G
    assert abs(c.point[2]) < 1e-9 and np.allclose(c.normal, (0, 0, 1), atol=1e-12)


def test_a_ball_bouncing_loses_the_energy_newton_says():
    e = 0.5
    sim = _ball_run(e, 1.0)
    first = next(ev for ev in sim.events if ev.kind == "impact")
    v1 = G * math.sqrt(2.0 / G)
    assert abs(first.v_pre + v1) < 1e-9 and abs(first.v_post - e * v1) < 1e-9
    assert abs(first.energy_lost - 0.5 * 1.0 * v1**2 * (1 - e**2)) < 1e-9


def test_box_rests_on_four_redundant_corners_whose_forces_sum_to_mg():
    sim = pfaff.Simulator(_load("box_on_plane.xml"), dt=DT)
    sim.step(n=500)
    cs = sim.contacts
    assert len(cs) == 4
    total = sum(c.normal_force for c in cs)
    assert abs(total - 2.0 * G) < 1e-9 * 2.0 * G
    assert all(c.normal_force > 0 for c in cs)
    assert abs(sim.q[2] - 0.1) < 1e-9 and np.max(np.abs(sim.v)) < 1e-9
    corners = sorted((round(c.point[0], 9), round(c.point[1], 9)) for c in cs)
    assert corners == [(-0.2, -0.15), (-0.2, 0.15), (0.2, -0.15), (0.2, 0.15)]


def test_a_contact_runs_rows_are_as_wide_as_the_rows_it_held():
    """The record's lambda and av hold the loop's rows and the widest held set's, not a
    slot for every point of every pair: the box at rest holds its four corners (their
    multipliers sum to -m g, their F_z to -m g too); the quadruped falling free with its
    262 pairs among its legs holds none, so its rows are its 12 loop rows (before, 6300
    columns of zeros: 50 kB a sample)."""
    sim = pfaff.Simulator(_load("box_on_plane.xml"), dt=DT)
    sim.step(n=100)
    a = sim.record().arrays()
    assert a["lambda"].shape == (101, 4) and a["av"].shape == (101, 4)
    assert np.max(np.abs(a["lambda"][-1].sum() + 2.0 * G)) < 1e-9
    assert abs(a["F"][-1][2] + 2.0 * G) < 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the quadruped's round pairs: said
        robot = pfaff.load(EXAMPLES / "quadruped.xml")
    assert len(robot.contacts.pairs) > 200 and robot.cset.dim == 12
    sim = pfaff.Simulator(robot, dt=DT)
    sim.step(n=20)
    a = sim.record().arrays()
    assert a["lambda"].shape == (21, 12) and a["phi"].shape == (21, 12)


def _reference_forces(system, q, v, tau, rows):
    """The held rows' normal forces by the NumPy engine: each contact a PointOnPlane
    row (frame, body point, plane offset) on the floor z = offset, the projected
    dynamics' multipliers (the acceleration-level problem of the closed set)."""
    mech = system.mechanism
    cons = [PointOnPlane(f, (0, 0, 1), offset=d, point=p) for f, p, d in rows]
    cset = ConstraintSet(mech, cons)
    snap = mech.compute(q, v, cset.frames, extras=False)
    ev = cset.evaluate(snap)
    sol = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift, system.rank_tol)
    return -sol.lam


@pytest.mark.parametrize("seed", range(4))
def test_held_ball_normal_force_matches_the_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    system = _load("ball_drop.xml")
    sim = pfaff.Simulator(system, dt=DT)
    sim.step(n=600)  # resting on the floor (e = 0)
    # a force along the floor, a spin and a push or a pull less than m g: the ball
    # slides and turns on the floor
    tau = np.concatenate([rng.normal(size=2), [rng.uniform(-5, 5)], rng.normal(size=3)])
    sim.step(tau=tau, n=50)
    assert np.linalg.norm(sim.v) > 1e-2
    (c,) = sim.contacts
    # the centre held at r above the floor: the same row as the surface point's
    ref = _reference_forces(system, sim.q, sim.v, tau, [("ball", np.zeros(3), 0.1)])
    assert abs(c.normal_force - ref[0]) < 1e-9 * G
    assert c.normal_force > 0


@pytest.mark.parametrize("seed", range(3))
def test_box_corner_forces_match_the_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    system = _load("box_on_plane.xml")
    sim = pfaff.Simulator(system, dt=DT)
    sim.step(n=10)
    tau = np.concatenate([rng.normal(size=2), [rng.uniform(-5, 5)], 0.1 * rng.normal(size=3)])
    sim.step(tau=tau, n=3)
    cs = sim.contacts
    assert len(cs) == 4
    q = sim.q
    R = system.mechanism.compute(q, sim.v, ("box",), extras=False).frame("box").R
    rows = []
    for c in cs:  # the held vertex in the box's axes
        local = R.T @ (np.array(c.point) - q[:3])
        rows.append(("box", local, 0.0))
    ref = _reference_forces(system, q, sim.v, tau, rows)
    got = np.array([c.normal_force for c in cs])
    assert abs(got.sum() - ref.sum()) < 1e-9 * 2 * G
    assert np.max(np.abs(got - ref)) < 1e-8 * 2 * G


def test_a_lifting_force_releases_the_ball():
    sim = pfaff.Simulator(_load("ball_drop.xml"), dt=DT)
    sim.step(n=600)
    assert len(sim.contacts) == 1
    tau = np.zeros(6)
    tau[2] = 2.0 * G  # twice its weight, upwards (the free joint's z force, body axes)
    sim.step(tau=tau, n=10)
    assert sim.contacts == []
    assert sim.events[-1].kind == "release"
    assert sim.q[2] > 0.1 + 0.5 * G * (9 * DT) ** 2 * 0.9


def test_contact_warns_of_friction_and_contact_off_warns_of_pairs(tmp_path):
    # condim 6: rolling and torsional friction, not modelled (sliding friction alone)
    path = tmp_path / "ball6.xml"
    path.write_text((MODELS / "ball_drop.xml").read_text().replace(
        'type="sphere" size="0.1"', 'type="sphere" size="0.1" condim="6"'))  # fmt: skip
    with pytest.warns(UserWarning, match=re.escape(FRICTION_WARNING) + ".*floor / ball .condim 6"):
        s = pfaff.load(path, contact=True)
    assert s.contacts.names == [("floor", "ball")] and s.contacts.mu == [1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # condim 3: sliding friction, all modelled
        s = pfaff.load(MODELS / "ball_drop.xml", contact=True)
    assert s.contacts.mu == [1.0]
    with pytest.warns(UserWarning, match="contact is not modelled"):
        s = pfaff.load(MODELS / "ball_drop.xml", contact=False)
    assert s.contacts is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # on by default: the pair held, nothing to say
        s = pfaff.load(MODELS / "ball_drop.xml")
    assert s.contacts.names == [("floor", "ball")]


def test_bad_restitution_and_contact_on_urdf_are_refused():
    system = _load("ball_drop.xml")
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="restitution"):
            pfaff.Simulator(system, restitution=bad)
    with pytest.raises(ValueError, match="max_events"):
        pfaff.Simulator(system, max_events=0)


def test_core_refuses_a_pair_of_two_world_geoms_and_a_bad_geom():
    from pfaff import core

    sim = pfaff.Simulator(_load("ball_drop.xml"), dt=DT)
    sys_ = core.clone(sim._limited._core)
    with pytest.raises(ValueError, match="geom id"):
        core.add_contact_pair(sys_, 0, 7, "ball", 0.0, 1e-7)
    with pytest.raises(ValueError, match="both on moving bodies|both fixed"):
        core.add_contact_pair(sys_, 0, 0, "ball", 0.0, 1e-7)
    with pytest.raises(ValueError, match="restitution"):
        core.add_contact_pair(sys_, 0, 1, "ball", 2.0, 1e-7)
    with pytest.raises(ValueError, match="MuJoCo cannot load"):
        core.set_contact_world(sys_, b"", "x.xml")


def test_mujoco_figures_beside_the_closed_form():
    # MuJoCo's soft contact on the same file: the first impact within a step or two of
    # the closed form, a rest penetration of a fraction of a millimetre, no bounce
    run = run_mujoco(MODELS / "ball_drop.xml", 1.5)
    t1 = ball_impact_times(1.0, 0.0, G, n=1)[0]
    assert abs(run.impacts[0] - t1) < 3e-3
    assert 1e-5 < run.penetration[-1] < 1e-3
    ours = _ball_run(0.0, 1.5)
    assert abs(ours.events[0].t - t1) < 1e-9
    assert ours.q[2] - 0.1 >= -1e-9


def test_a_ball_without_rest_speed_still_ends_at_rest(monkeypatch):
    # no plastic threshold: the bounces too small to resolve in the coordinates end the
    # run's accumulation (the touching point held), never a hang or the event budget
    import pfaff.simulate.limits_core as lc

    monkeypatch.setattr(lc, "CONTACT_REST_SPEED", 0.0)
    e = 0.8
    t_rest = ball_rest_time(1.0, e, G)
    sim = _ball_run(e, t_rest + 0.1)
    impacts = np.array([ev.t for ev in sim.events if ev.kind == "impact"])
    # the unresolved tail: bounces too low to show in the coordinates (a few 1e-8 m/s),
    # closer than the default rest speed's 8e-8 s
    assert abs(impacts[-1] - t_rest) < 5e-8
    assert abs(sim.q[2] - 0.1) < 1e-9 and np.max(np.abs(sim.v)) < 1e-9
    assert len(sim.contacts) == 1


def test_a_linkage_whose_pairs_do_not_meet_runs_bit_for_bit_as_without_contact():
    # four_bar.xml's pairs are between moving bodies: coupler / rocker overlap at their
    # pin at the start (not modelled: warned), crank / rocker is modelled and never
    # meets, so the Simulator steps as the one of contact=False
    path = Path(__file__).parents[2] / "models" / "four_bar.xml"
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        on = pfaff.load(path, contact=True)
        off = pfaff.load(path)
    assert any("overlap at the start" in str(w.message) for w in said)
    assert on.contacts.frames == ["rocker"] and on.contacts.frames2 == ["crank"]
    runs = []
    for system in (on, off):
        sim = pfaff.Simulator(system, dt=DT)
        sim.step(n=200)
        assert not sim.contacts
        runs.append((sim.q, sim.v, np.asarray(sim.record().rows["lambda"])[:, :3]))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_a_rollout_holds_the_contacts_as_the_simulator_does():
    system = _load("ball_drop.xml")
    taus = np.zeros((2, 600, 6))
    out = pfaff.rollout(system, None, None, taus, dt=DT)
    sim = pfaff.Simulator(system, dt=DT)
    sim.step(n=600)
    for k in range(2):
        assert np.array_equal(out["q"][k, -1], sim.q)
        assert abs(out["q"][k, -1, 2] - 0.1) < 1e-9


def test_step_derivatives_say_a_contact_is_met():
    sim = pfaff.Simulator(_load("ball_drop.xml"), dt=DT)
    sim.step(n=451)  # the impact is at 0.4515 s: inside the next step
    with pytest.warns(UserWarning, match="impact of 'floor' / 'ball'"):
        sim.step_derivatives()
    sim.step(n=3)  # the ball rests, its contact closed, the held row kept
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the held mode's Jacobians (test_held_derivatives)
        sim.step_derivatives()
    sim.step(n=100)
    assert abs(sim.q[2] - 0.1) < 1e-9 and len(sim.contacts) == 1


def test_a_pickled_simulator_goes_on_resting():
    import pickle

    sim = pfaff.Simulator(_load("ball_drop.xml"), dt=DT)
    sim.step(n=600)
    again = pickle.loads(pickle.dumps(sim))
    again.step(n=100)
    assert abs(again.q[2] - 0.1) < 1e-9 and np.max(np.abs(again.v)) < 1e-9
    assert len(again.contacts) == 1
