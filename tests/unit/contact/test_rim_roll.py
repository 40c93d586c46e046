"""A cylinder's rim rolling on the floor (the core's kinds RimOnPlane, RimRolling): a
disk tilted 0.4 rad from upright, spinning at 20 rad/s about its axis and started
rolling without slipping on its lowest rim point. The contact run (the narrow phase
finds the rim's lowest point, the run holds it as a rim and it sticks: it rolls) is
held to a second implementation, the NumPy engine running the NumPy reference rows
(pfaff.contact.rim) as bilateral constraints, and to the conservation of energy (rolling
does no work) and of the contact (its material point still, no penetration). A rim held
as a point fixed in the body (a vertex, as before the rim kinds) gives
another motion (it pivots), which the comparison refuses. With little friction the rim
slips: its forces against the NumPy solve of the slipping dynamics, its energy against
friction's work."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import pfaff
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.contact.friction import SlipPoint, slip_dynamics, slip_rows
from pfaff.contact.rim import rim_constraints
from pfaff.simulate import SimOptions, simulate

R_DISK, HALF, MASS, G = 0.1, 0.02, 1.0, 9.81
DT, T_END = 1e-3, 0.5
XML = (Path(__file__).parents[2] / "models" / "contact" / "rolling_disk.xml").read_text()
UP = np.array([0.0, 0.0, 1.0])


def _lowest(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lowest cap's centre and its rim's lowest point, from the disk's centre [m]."""
    a = Rotation.from_quat(q[3:7]).as_matrix()[:, 2]  # Pinocchio's quaternion: x y z w
    s = float(a @ UP)
    cap = -math.copysign(HALF, s) * a
    return cap, cap - R_DISK * (UP - s * a) / math.sqrt(1.0 - s * s)


def _start(tilt: float = 0.4, spin: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    """Its rim's lowest point on the floor, rolling: v of the centre = -w x (x - c)."""
    rot = Rotation.from_euler("x", math.pi / 2 - tilt)
    q = np.r_[0.0, 0.0, 0.0, rot.as_quat()]
    x = _lowest(q)[1]
    q[2] = -x[2]
    R = rot.as_matrix()
    w = spin * R[:, 2]
    return q, np.r_[R.T @ -np.cross(w, x), R.T @ w]  # the free flyer's local v


def _energy(q: np.ndarray, v: np.ndarray) -> float:
    inertia = np.diag([MASS * (3 * R_DISK**2 + 4 * HALF**2) / 12] * 2 + [MASS * R_DISK**2 / 2])
    return 0.5 * MASS * v[:3] @ v[:3] + 0.5 * v[3:6] @ inertia @ v[3:6] + MASS * G * q[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("rim") / "rolling_disk.xml"
    path.write_text(XML)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its keyframe starts it on the floor, rolling
        system = pfaff.load(path, contact=True)
        sim = pfaff.Simulator(system, dt=DT)
    q0, v0 = sim.q.copy(), sim.v.copy()
    want_q, want_v = _start()
    assert np.abs(q0 - want_q).max() < 1e-15 and np.abs(v0 - want_v).max() < 1e-15
    checks = []
    for _ in range(10):
        sim.step(n=int(round(0.1 * T_END / DT)))
        checks.append((sim.q.copy(), sim.v.copy(), list(sim.contacts)))
    return system, sim, q0, v0, checks


def _reference(system, q0, v0, cons) -> np.ndarray:
    traj = simulate(
        ConstraintSet(system.mechanism, cons), q0, v0, T_END, SimOptions(dt=DT, engine="numpy")
    )
    return traj.arrays()


def _rim_rows(q0):
    cap = Rotation.from_quat(q0[3:7]).inv().apply(_lowest(q0)[0])  # in the disk's axes
    return rim_constraints("disk", cap, (0, 0, 1), R_DISK, UP, 0.0)


def test_the_contact_run_rolls_as_the_numpy_reference_of_the_rim(run):
    system, sim, q0, v0, _ = run
    ref = _reference(system, q0, v0, _rim_rows(q0))
    assert np.abs(ref["q"][-1] - sim.q).max() < 1e-9  # [m, quaternion]
    assert np.abs(ref["v"][-1] - sim.v).max() < 1e-8  # [m/s, rad/s]
    assert [e.kind for e in sim.events] == ["impact"]  # the start's touching point, held


def test_it_rolls_without_slipping_on_its_lowest_rim_point_and_keeps_its_energy(run):
    _, _, q0, v0, checks = run
    e0 = _energy(q0, v0)
    for q, v, contacts in checks:
        R = Rotation.from_quat(q[3:7]).as_matrix()
        x = _lowest(q)[1]
        assert abs(q[2] + x[2]) < 1e-12  # [m]: the rim's lowest point on the floor
        slip = R @ v[:3] + np.cross(R @ v[3:6], x)  # its material point's velocity
        assert np.abs(slip).max() < 1e-9  # [m/s]
        assert abs(_energy(q, v) - e0) < 1e-8  # [J]
        assert len(contacts) == 1 and contacts[0].mode == "stick"
        assert np.abs(contacts[0].point - (q[:3] + x)).max() < 1e-12  # [m]
        assert abs(float(Rotation.from_quat(q[3:7]).as_matrix()[2, 2])) > 0.3  # still tilted


def test_a_rim_held_as_a_vertex_pivots_and_the_comparison_refuses_it(run):
    # its material point at the start held fixed in the world (three rows): it pivots
    system, sim, q0, v0, _ = run
    x = q0[:3] + _lowest(q0)[1]
    body_x = Rotation.from_quat(q0[3:7]).inv().apply(x - q0[:3])
    vertex = [PointOnPlane("disk", e, float(e @ x), point=body_x) for e in np.eye(3)]
    ref = _reference(system, q0, v0, vertex)
    assert np.abs(ref["q"][-1] - sim.q).max() > 1e-2


def test_a_rim_that_slips_takes_coulombs_force_at_its_lowest_point(tmp_path):
    # mu 0.05: the rolling start needs more friction than the cone holds, so the rim
    # slips at once; its normal and friction forces against the NumPy solve of the same
    # equations (pfaff.contact.friction with the rim's row and its contact's Jacobian),
    # its energy against friction's work
    mu = 0.05
    path = tmp_path / "slipping_disk.xml"
    path.write_text(XML.replace('friction="1 ', f'friction="{mu} '))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: its keyframe starts it on the floor
        system = pfaff.load(path, contact=True)
        sim = pfaff.Simulator(system, dt=DT)
    sim.reset(*_start())
    mech = system.mechanism
    for _ in range(5):
        sim.step(n=100)
        (c,) = sim.contacts
        assert c.mode == "slip"
        q, v = sim.q, sim.v
        (row,) = _rim_rows(q)[:1]
        cset = ConstraintSet(mech, [row])
        snap = mech.compute(q, v, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        fr = snap.frame("disk")
        x = _lowest(q)[1]
        Jp = np.asarray(fr.J)[:3] + np.cross(np.asarray(fr.J)[3:].T, x).T  # v + w x x
        vt = Jp @ v - UP * (UP @ (Jp @ v))
        W = slip_rows(ev.A, v, [SlipPoint(0, Jp, UP, mu, vt / np.linalg.norm(vt))])
        _, lam = slip_dynamics(snap.M, -snap.h, ev.A, ev.drift, W, system.rank_tol)
        assert abs(c.normal_force + lam[0]) < 1e-9  # [N]
        want = mu * lam[0] * vt / np.linalg.norm(vt)  # -mu f_n s
        assert np.linalg.norm(np.array(c.tangent) - want) < 1e-9  # [N]
        assert np.abs(c.point - (q[:3] + x)).max() < 1e-12  # [m]
    rec = sim.record().arrays()
    energy, work = np.asarray(sim.record().series("energy")), rec["force_work"]
    assert work[-1] < -0.2  # [J]: friction took 0.246 J in 0.5 s
    assert np.abs(energy - energy[0] - (work - work[0])).max() < 1e-7  # [J] (6e-11 at 0.25 ms)


def test_a_disk_tipping_off_its_rim_lands_flat_on_its_cap_as_a_face(tmp_path):
    # no spin, tilted 0.27 rad from lying flat: it tips about its rim (held as a rim down
    # to rho = 5e-4, where the rim's lowest point no longer holds), slips, and its cap
    # lands as a face: one impact books the energy, and it rests on three cap points
    path = tmp_path / "tipping_disk.xml"
    path.write_text(XML)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: its keyframe starts it on the floor
        system = pfaff.load(path, contact=True)
        sim = pfaff.Simulator(system, dt=DT)
    sim.reset(*_start(tilt=1.3, spin=0.0))
    e0 = _energy(sim.q, sim.v)
    sim.step(n=300)
    kinds = [e.kind for e in sim.events]
    assert kinds == ["impact", "slip", "impact"], kinds
    landing = sim.events[-1]
    assert 0.08 < landing.t < 0.09
    # the energy it had above lying flat, lost in the landing (and friction's work)
    rec = sim.record().arrays()
    flat = MASS * G * HALF
    assert abs(e0 - flat + rec["force_work"][-1] - landing.energy_lost) < 1e-6  # [J]
    assert abs(_energy(sim.q, sim.v) - flat) < 1e-12 and np.abs(sim.v).max() < 1e-12
    cs = sim.contacts
    assert len(cs) == 3 and abs(sum(c.normal_force for c in cs) - MASS * G) < 1e-9  # [N]
    spread = np.array([c.point for c in cs])[:, :2]
    assert np.linalg.norm(spread - spread.mean(0), axis=1).min() > 0.09  # [m]: the cap's rim
