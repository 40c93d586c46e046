"""Contact between two moving bodies on the compiled loop (a point of one body held on a
plane of the other: PointOnBodyPlane rows) against closed forms: a box resting on a box
resting on the floor (normal forces m_top g and (m_top + m_bottom) g), two free boxes
colliding face on (Newton's restitution in the metric of M, momentum kept), a box on a
pushed platform that rides along or slips (Coulomb's law between the two bodies); the
forces against the NumPy reference at the same held rows; what is refused. MuJoCo's
soft contacts beside them."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff import dynamics as dyn
from pfaff.constraints import ConstraintSet, PointOnBodyPlane, PointOnPlane
from pfaff.contact.friction import SlipPoint, slip_dynamics, slip_rows
from pfaff.contact.mujoco_cases import run_mujoco
from pfaff.contact.penetration import Penetration, penetration

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

MODELS = Path(__file__).parents[2] / "models" / "contact"
G = 9.81
DT = 1e-3


def _load(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pfaff.load(MODELS / name, contact=True)


def _tangents(n):
    k = int(np.argmin(np.abs(n)))
    t1 = np.cross(n, np.eye(3)[k])
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def _reference_rows(system, sim):
    """The held contacts of ``sim`` as NumPy constraints: a floor contact a PointOnPlane
    row, a contact between two bodies a PointOnBodyPlane row on the plane body (geom1's,
    the plane's side), a stuck point's two tangential rows beside it; the normal rows'
    indices."""
    mech = system.mechanism
    q, v = sim.q, sim.v
    names = [c.geom1 for c in sim.contacts] + [c.geom2 for c in sim.contacts]
    frames = sorted({n for n in names if n != "floor"})
    snap = mech.compute(q, v, frames, extras=False)
    rows, normal = [], []
    for c in sim.contacts:
        p, n = np.array(c.point), np.array(c.normal)
        f1 = snap.frame(c.geom2)
        local = f1.R.T @ (p - f1.p)
        dirs = [n] + (list(_tangents(n)) if c.mode == "stick" else [])
        normal.append(len(rows))
        for d in dirs:
            if c.geom1 == "floor":
                rows.append(PointOnPlane(c.geom2, d, offset=float(d @ p), point=local))
            else:
                f2 = snap.frame(c.geom1)
                plane = PointOnBodyPlane(
                    c.geom2, c.geom1, f2.R.T @ d, point1=local, point2=f2.R.T @ (p - f2.p)
                )
                rows.append(plane)
    return rows, normal


def test_a_box_on_a_box_on_the_floor_carries_the_closed_form_forces():
    system = _load("box_stack.xml")
    sim = pfaff.Simulator(system, dt=DT)
    q0 = sim.q.copy()
    sim.step(n=500)
    floor = [c for c in sim.contacts if c.geom1 == "floor"]
    between = [c for c in sim.contacts if c.geom1 != "floor"]
    assert len(floor) == 4 and len(between) == 4
    assert {(c.geom1, c.geom2) for c in between} == {("bottom", "top")}
    assert abs(sum(c.normal_force for c in floor) - 4.0 * G) < 1e-9
    assert abs(sum(c.normal_force for c in between) - 1.0 * G) < 1e-9
    assert all(c.normal_force > 0 and c.mode == "stick" for c in sim.contacts)
    assert all(abs(c.tangent_force) < 1e-9 for c in sim.contacts)
    assert np.max(np.abs(sim.q - q0)) < 1e-9 and np.max(np.abs(sim.v)) < 1e-9
    for c in between:  # the top box's corners on the bottom box's top face (z = 0.2)
        assert abs(c.point[2] - 0.2) < 1e-9 and np.allclose(c.normal, (0, 0, 1), atol=1e-12)
    # MuJoCo's own normal of the pair (its contact frame's first row, from its geom1 into
    # its geom2) at the same state: the same sign
    m = mujoco.MjModel.from_binary_path("model.mjb", {"model.mjb": system.contacts.mjb})
    d = mujoco.MjData(m)
    d.qpos[:] = system.q_to_qpos(sim.q)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_collision(m, d)
    ids = {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, n): n for n in ("bottom", "top")}
    for c in d.contact[: d.ncon]:
        if {int(c.geom1), int(c.geom2)} == set(ids):
            assert ids[int(c.geom1)] == between[0].geom1  # MuJoCo's geom1: the plane's side
            assert np.allclose(c.frame[:3], between[0].normal, atol=1e-12)
    # no overlap, by MuJoCo's own narrow phase on the run's configurations
    deep = penetration(system.contacts, system.q_to_qpos, sim.record().arrays()["q"])
    assert deep.max() < 1e-9
    # where the drawn force acts: the pair's normal from the plane's side, as held
    _, normals, on = Penetration(system.contacts, system.q_to_qpos).touching(sim.q)
    k = [tuple(n) for n in system.contacts.names].index(("bottom", "top"))
    assert on[k] and np.allclose(normals[k], between[0].normal, atol=1e-12)


def test_stacked_forces_match_the_numpy_reference():
    rng = np.random.default_rng(2)
    system = _load("box_stack.xml")
    mech = system.mechanism
    sim = pfaff.Simulator(system, dt=DT)
    sim.step(n=20)
    for _ in range(3):  # pushed a little (inside the cones: every point stays stuck)
        tau = np.concatenate([rng.normal(size=3), 0.1 * rng.normal(size=3),
                              rng.normal(size=3), 0.05 * rng.normal(size=3)])  # fmt: skip
        sim.step(tau=tau, n=3)
        cs = sim.contacts
        assert len(cs) == 8 and all(c.mode == "stick" for c in cs)
        rows, normal = _reference_rows(system, sim)
        cset = ConstraintSet(mech, rows)
        snap = mech.compute(sim.q, sim.v, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        sol = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift, system.rank_tol)
        got = np.array([c.normal_force for c in cs])
        assert np.max(np.abs(got + sol.lam[normal])) < 1e-8


def _collide(e: float, v0: float = 1.0):
    system = _load("box_collide.xml")
    sim = pfaff.Simulator(system, dt=DT, restitution=e)
    v = np.zeros(system.nv)
    v[0] = v0  # box 1 along x (unturned: body axes are the world's)
    sim.reset(v=v)
    sim.step(n=500)
    return sim


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_two_free_boxes_collide_by_newtons_law_in_the_metric_of_m(e):
    m1, m2, v0 = 1.0, 2.0, 1.0
    sim = _collide(e, v0)
    (hit,) = [ev for ev in sim.events if ev.kind == "impact"]
    assert abs(hit.t - 0.3) < 1e-9  # the 0.3 m gap closed at v0
    v1, v2 = sim.v[0], sim.v[6]
    assert abs(v1 - (m1 - e * m2) * v0 / (m1 + m2)) < 1e-9
    assert abs(v2 - (1 + e) * m1 * v0 / (m1 + m2)) < 1e-9
    assert abs(m1 * v1 + m2 * v2 - m1 * v0) < 1e-12  # momentum [kg m/s]
    lost = 0.5 * m1 * m2 / (m1 + m2) * (1 - e * e) * v0 * v0
    assert abs(hit.energy_lost - lost) < 1e-9
    kinetic = 0.5 * (m1 * v1 * v1 + m2 * v2 * v2)
    assert abs(0.5 * m1 * v0 * v0 - kinetic - lost) < 1e-9
    others = np.delete(sim.v, [0, 6])
    assert np.max(np.abs(others)) < 1e-12  # face on: no turn, no sideways motion
    if e == 0.0:  # plastic: they move on together, the face held with no force
        assert len(sim.contacts) == 4
        assert all(abs(c.normal_force) < 1e-9 for c in sim.contacts)
    else:
        assert sim.contacts == []


def _platform(F: float, t_end: float = 1.0):
    system = _load("platform.xml")
    sim = pfaff.Simulator(system, dt=DT)
    q0 = sim.q.copy()
    tau = np.zeros(system.nv)
    tau[0] = F  # the platform's slide
    sim.step(tau=tau, n=int(round(t_end / DT)))
    return sim, q0


@pytest.mark.parametrize("F", [6.0, 14.0])
def test_a_box_rides_a_platform_pushed_below_the_friction_limit(F):
    m1, m2, mu = 1.0, 2.0, 0.5
    assert F / (m1 + m2) <= mu * G
    sim, q0 = _platform(F)
    want = 0.5 * F / (m1 + m2)
    assert abs(sim.q[0] - q0[0] - want) < 1e-9
    assert abs(sim.q[1] - q0[1] - want) < 1e-9
    assert abs(sim.v[0] - sim.v[1]) < 1e-9  # no slip: the box rides along [m/s]
    assert len(sim.contacts) == 4 and "stick" not in [ev.kind for ev in sim.events]
    # near the limit the lighter front corners (the push tilts the load backwards) may
    # slip at zero speed beside the stuck back ones: the split of redundant rows
    assert (
        sum(c.mode == "stick" for c in sim.contacts) >= 2
        if F > 10
        else all(c.mode == "stick" for c in sim.contacts)
    )
    assert abs(sum(c.tangent[0] for c in sim.contacts) - m1 * F / (m1 + m2)) < 1e-9
    assert abs(sum(c.normal_force for c in sim.contacts) - m1 * G) < 1e-9


@pytest.mark.parametrize("F", [16.0, 20.0])
def test_a_box_slips_on_a_platform_pushed_above_the_friction_limit(F):
    m1, m2, mu = 1.0, 2.0, 0.5
    sim, q0 = _platform(F)
    assert abs(sim.q[1] - q0[1] - 0.5 * mu * G) < 1e-9  # the box: mu g
    assert abs(sim.q[0] - q0[0] - 0.5 * (F - mu * m1 * G) / m2) < 1e-9  # the platform
    assert abs(sim.q[3] - q0[3]) < 1e-9  # the box stays on the platform's face
    assert all(c.mode == "slip" for c in sim.contacts) and len(sim.contacts) == 4
    assert abs(sum(c.tangent[0] for c in sim.contacts) - mu * m1 * G) < 1e-9
    slips = [ev.t for ev in sim.events if ev.kind == "slip"]
    assert slips and max(slips) < 1e-9 and "stick" not in [ev.kind for ev in sim.events]


def test_slipping_forces_between_bodies_match_the_numpy_reference():
    mu, F = 0.5, 20.0
    system = _load("platform.xml")
    mech = system.mechanism
    sim, _ = _platform(F, 0.2)
    rng = np.random.default_rng(4)
    for _ in range(3):
        tau = np.concatenate([[F], 0.3 * rng.normal(size=3), 0.02 * rng.normal(size=3)])
        sim.step(tau=tau, n=5)
        cs = sim.contacts
        assert len(cs) == 4 and all(c.mode == "slip" for c in cs)
        rows, _ = _reference_rows(system, sim)
        cset = ConstraintSet(mech, rows)
        q, v = sim.q, sim.v
        snap = mech.compute(q, v, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        fb, fp = snap.frame("box"), snap.frame("platform")
        pts = []
        for k, c in enumerate(cs):
            p = np.array(c.point)
            Jp = fb.point_jacobian(fb.R.T @ (p - fb.p)) - fp.point_jacobian(fp.R.T @ (p - fp.p))
            n = np.array(c.normal)
            vt = Jp @ v - n * (n @ (Jp @ v))
            pts.append(SlipPoint(k, Jp, n, mu, vt / np.linalg.norm(vt)))
        W = slip_rows(ev.A, v, pts)
        _, lam = slip_dynamics(snap.M, tau - snap.h, ev.A, ev.drift, W, system.rank_tol)
        assert np.max(np.abs(np.array([c.normal_force for c in cs]) + lam)) < 1e-9
        for c, pt, ln in zip(cs, pts, lam, strict=True):
            vt = pt.Jp @ v - pt.normal * (pt.normal @ (pt.Jp @ v))
            assert np.linalg.norm(np.array(c.tangent) - mu * ln * vt / np.linalg.norm(vt)) < 1e-9


def test_a_pair_of_two_moving_geoms_needs_both_frames():
    system = _load("box_collide.xml")
    sys_ = core.build(ConstraintSet(system.mechanism, []))
    core.set_contact_world(sys_, system.contacts.mjb, "box_collide")
    f1, f2 = system.contacts.frames[0], system.contacts.frames2[0]
    assert (f1, f2) == ("box2", "box1")  # MuJoCo's geom2 on geom1's plane
    with pytest.raises(ValueError, match="give body_frame2"):
        core.add_contact_pair(sys_, 1, 0, f1, 0.0, 1e-7)
    with pytest.raises(ValueError, match="is body_frame"):
        core.add_contact_pair(sys_, 1, 0, f1, 0.0, 1e-7, 0.0, f1)
    core.add_contact_pair(sys_, 1, 0, f1, 0.0, 1e-7, 0.0, f2)


def test_mujoco_figures_beside_the_closed_forms():
    """MuJoCo's soft contacts on the same files (its own options): the stacked boxes rest
    a little inside each other; figures for the docs."""
    run = run_mujoco(MODELS / "box_stack.xml", 1.0)
    assert 0.0 < run.penetration[-1] < 1e-3  # m: soft, not exact
    print(f"mujoco stack: penetration {run.penetration[-1]:.3g} m")
    m = mujoco.MjModel.from_xml_path(str(MODELS / "platform.xml"))
    d = mujoco.MjData(m)
    for F in (6.0, 20.0):
        mujoco.mj_resetData(m, d)
        d.qfrc_applied[0] = F
        for _ in range(1000):
            mujoco.mj_step(m, d)
        print(f"mujoco platform F={F}: platform {d.qpos[0]:.6f} m, box {d.qpos[1]:.6f} m")
        assert math.isfinite(d.qpos[1])


@pytest.mark.parametrize(("sink", "modelled"), [(5e-4, True), (2e-3, False)])
def test_a_pair_of_moving_bodies_overlapping_at_the_start(tmp_path, sink, modelled):
    """A start sunk less than START_OVERLAP into the other body is moved out of it (as a
    keyframe saved from MuJoCo's soft contacts is); deeper, the pair is a pin's overlap,
    not modelled, and said so."""
    text = (MODELS / "box_stack.xml").read_text()
    path = tmp_path / "sunk.xml"
    path.write_text(text.replace('pos="0.05 -0.02 0.25"', f'pos="0.05 -0.02 {0.25 - sink}"'))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        system = pfaff.load(path, contact=True)
    pinned = [w for w in said if "overlap at the start" in str(w.message)]
    assert len(system.contacts.pairs) == (3 if modelled else 2)  # floor / top too
    assert bool(pinned) is not modelled
    if modelled:
        sim = pfaff.Simulator(system, dt=DT)
        sim.step(n=100)
        top = [c for c in sim.contacts if c.geom1 == "bottom"]
        assert len(top) == 4 and abs(sum(c.normal_force for c in top) - G) < 1e-9
        assert abs(sim.q[7 + 2] - 0.25) < 1e-9  # moved out, onto the face


EXAMPLE = Path(__file__).parents[3] / "examples" / "grasp.xml"


def test_the_gripper_lifts_the_box_by_friction_without_slip():
    """examples/grasp.xml: two fingers (position actuators aimed 1 cm inside the box,
    kp 1000 N/m) close on the box and the hand lifts it. Each side's normal force is
    kp x 1 cm = 10 N (mu N = 10 N >= m g / 2 = 2.45 N), every finger corner sticks, the
    box keeps its height on the fingers (no slip) and the floor lets go."""
    system = _load(str(EXAMPLE))
    sim = pfaff.Simulator(system, dt=DT)
    sim.step(n=100)
    rel = sim.q[2] - sim.q[7]  # the box's height over the hand's lift
    sim.step(n=1900)
    kinds = [(ev.kind, ev.geom1, ev.geom2) for ev in sim.events]
    assert ("release", "floor", "box") in kinds and not any(k == "slip" for k, *_ in kinds)
    assert abs(sim.q[2] - sim.q[7] - rel) < 1e-9  # [m]: carried, no slip
    assert sim.q[2] - 0.04 > 0.07  # lifted by more than 7 cm
    for side in ("finger_left", "finger_right"):
        cs = [c for c in sim.contacts if c.geom2 == side]
        assert len(cs) == 4 and all(c.mode == "stick" for c in cs)
        fn = sum(c.normal_force for c in cs)
        assert abs(fn - 1000 * 0.01) < 1e-6  # [N] the actuator's squeeze at rest
        assert 1.0 * fn >= 0.5 * 0.5 * G
    assert not [c for c in sim.contacts if c.geom1 == "floor"]
    deep = penetration(system.contacts, system.q_to_qpos, sim.record().arrays()["q"])
    assert deep.max() < 1e-9


def test_pfaff_run_of_the_grasp_is_ok_and_records_the_forces(tmp_path):
    from pfaff.cli import main

    out = tmp_path / "grasp"
    args = ["run", str(EXAMPLE), "--out", str(out), "--set", "contact=true", "--set", "t_end=1"]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["metrics"]["max_penetration"] < 1e-9
    data = np.load(out / "trajectory.npz")
    names = [f"{a}/{b}" for a, b in _load(str(EXAMPLE)).contacts.names]
    k = names.index("box/finger_left")
    assert abs(data["contact_normal_force"][-1, k] - 10.0) < 1e-3  # settling: kv's share
    assert "impact of box / finger_left at" in (out / "report.html").read_text()


def test_a_moving_pair_with_a_round_geom_keeps_its_friction(tmp_path):
    """A ball on a free box keeps its pair's mu (it rolls on the box: RollingPoint rows
    relative to the box), as the same ball on the floor and a box on a box do, and no
    warning says it runs frictionless (the two balls' pair is approximate: warned)."""
    from pfaff.contact.model import MOVING_WARNING
    from pfaff.files.model import load_model

    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>
      <body name="box" pos="0 0 0.1"><freejoint/>
        <geom name="box" type="box" size="0.3 0.3 0.1" friction="0.7 0 0"/></body>
      <body name="ball" pos="0 0 0.3"><freejoint/>
        <geom name="ball" type="sphere" size="0.1" friction="0.7 0 0"/></body>
      <body name="ball2" pos="1 0 0.1"><freejoint/>
        <geom name="ball2" type="sphere" size="0.1" friction="0.7 0 0"/></body>
    </worldbody></mujoco>"""
    path = tmp_path / "ball_on_box.xml"
    path.write_text(xml)
    system = load_model(path, contact=True)
    mu = {frozenset(n): m for n, m in zip(system.contacts.names, system.contacts.mu)}
    assert mu[frozenset(("box", "ball"))] == pytest.approx(0.7)
    # MuJoCo's combination: the larger of the floor's default 1 and the geoms' 0.7
    assert mu[frozenset(("floor", "ball2"))] == pytest.approx(1.0)
    assert mu[frozenset(("floor", "box"))] == pytest.approx(1.0)
    # the two balls' pair is warned as approximate (one held on the other's tangent
    # plane), none as frictionless
    said = [w for w in system.warnings if w.startswith(MOVING_WARNING)]
    assert len(said) == 1 and "two round geoms" in said[0] and "ball / ball2" in said[0]
    assert not [w for w in system.warnings if "frictionless" in w]
