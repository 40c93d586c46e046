"""The contact forces of a redundant held set: where the least-norm multipliers of the held
corners pull at one (or leave its friction cone) while other forces of the same motion
push inside every cone, those are the contact forces and nothing lets go or slips
(algorithms/pushing_forces.cpp). A cube under a gravity tilted along its diagonal, its
centre of pressure inside its base but outside the diamond of its corners, stays at rest
on four corners: the forces against statics (they sum to the weight, their moments about
the centre to zero, each pushes inside its cone); the least-norm split of the same load
pulls (the check catches it). Past the edge the cube tips, its energy kept."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff import core

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

MODELS = Path(__file__).parents[2] / "models" / "contact"
GRAVITY = np.array([6.867, 6.867, -9.81])  # box_off_centre.xml
MASS, HALF, MU = 1.0, 0.1, 2.0


def _sim(name: str) -> pfaff.Simulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pfaff.Simulator(pfaff.load(MODELS / name, contact=True), dt=1e-3)


def _forces(contacts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points (k, 3) [m], contact forces on the cube (k, 3) [N] and normal forces (k,)."""
    p = np.array([c.point for c in contacts])
    n = np.array([c.normal for c in contacts])
    fn = np.array([c.normal_force for c in contacts])
    ft = np.array([c.tangent for c in contacts])
    return p, fn[:, None] * n + ft, fn


def _push_violation(f: np.ndarray, normal=(0.0, 0.0, 1.0), mu: float = MU) -> float:
    """The largest pull (-f_n) or excess |f_t| - mu f_n over the points [N] (<= 0: every
    point pushes inside its cone)."""
    n = np.asarray(normal)
    fn = f @ n
    ft = np.linalg.norm(f - fn[:, None] * n, axis=1)
    return float(max(np.max(-fn), np.max(ft - mu * fn)))


def _statics(p: np.ndarray, f: np.ndarray, centre: np.ndarray) -> tuple[float, float]:
    """|sum f + m g| [N] and |sum (p - centre) x f| [N m] (0 at rest: the contact forces
    carry the weight, with no moment about the centre of mass)."""
    return (
        float(np.linalg.norm(f.sum(axis=0) + MASS * GRAVITY)),
        float(np.linalg.norm(np.cross(p - centre, f).sum(axis=0))),
    )


def test_cube_off_centre_rests_on_four_corners_pushing():
    sim = _sim("box_off_centre.xml")
    q0 = sim.q.copy()
    for _ in range(10):  # 1 s, read at ten instants
        sim.step(n=100)
        assert np.max(np.abs(sim.v)) < 1e-12
        assert np.max(np.abs(sim.q - q0)) < 1e-12
        contacts = sim.contacts
        assert len(contacts) == 4 and all(c.mode == "stick" for c in contacts)
        p, f, fn = _forces(contacts)
        assert fn.min() > 0.0  # every corner pushes: none lets go
        assert _push_violation(f) <= 1e-9
        force, moment = _statics(p, f, sim.q[:3])
        assert force < 1e-9 and moment < 1e-9
    # the start's landing is the only event: no corner released, none slipped
    assert [e.kind for e in sim.events] == ["impact"]


def test_least_norm_split_of_the_same_load_pulls():
    """The wrong input of the check above: the least-norm forces at the four corners that
    carry the same load (six equations in twelve unknowns) pull at the corner behind the
    centre of pressure, and the check says so."""
    sim = _sim("box_off_centre.xml")
    sim.step(n=10)
    p, f, _ = _forces(sim.contacts)
    c = sim.q[:3]
    # E f = b: sum f = -m g, sum (p - c) x f = 0 (f stacked corner by corner)
    E = np.zeros((6, 12))
    for i, pi in enumerate(p):
        r = pi - c
        E[:3, 3 * i : 3 * i + 3] = np.eye(3)
        E[3:, 3 * i : 3 * i + 3] = np.array(
            [[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]]
        )
    b = np.concatenate([-MASS * GRAVITY, np.zeros(3)])
    least = np.linalg.lstsq(E, b, rcond=None)[0].reshape(4, 3)
    assert np.allclose(E @ least.ravel(), b, atol=1e-9)  # the same load
    assert np.allclose(E @ f.ravel(), b, atol=1e-9)  # the simulator's forces carry it too
    assert least[:, 2].min() < -0.9  # pulls 0.98 N at the corner behind
    assert _push_violation(least) > 0.1
    assert _push_violation(f) <= 1e-9


def test_cube_past_its_edge_tips_with_its_energy_kept():
    sim = _sim("box_tips.xml")
    sim.step(n=300)
    # the two corners behind let go together at the start (one event: the held set's
    # contact problem, algorithms/unilateral_forces.cpp); the cube turns about the +x
    # edge, which sticks (the pivot does no work: energy kept)
    kinds = [e.kind for e in sim.events]
    assert kinds.count("release") == 1 and "slip" not in kinds
    assert [e.t for e in sim.events if e.kind == "release"] == [0.0]
    contacts = sim.contacts
    assert len(contacts) == 2 and all(c.mode == "stick" for c in contacts)
    assert all(abs(c.point[0] - HALF) < 1e-9 for c in contacts)  # the +x edge, still
    assert sim.q[2] > HALF + 0.02  # the centre has risen over the edge
    e = sim.record().series("energy")
    assert np.ptp(e) < 1e-9
