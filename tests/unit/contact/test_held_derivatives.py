"""Step Jacobians in a fixed contact or limit mode (``Simulator.step_derivatives`` with
contacts or limits held: the held rows bilateral) against a second implementation -- the
same rows written as bilateral constraints of a System (PointOnPlane, LockedJoint),
differentiated through the NumPy engine's step -- and against the closed form of a box
resting on a frictionless floor (the vertical motion and the tilts pinned, the sliding
and the yaw free)."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff.api.step_derivatives import step_derivatives
from pfaff.constraints.library import LockedJoint, PointOnPlane
from pfaff.simulate.options import use_engine

MODELS = Path(__file__).parents[2] / "models"
DT = 1e-3


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the friction warning, tested elsewhere
        return pfaff.load(path, contact=True)


def _with_rows(system, rows):
    """The system with ``rows`` added as bilateral constraints (no contacts, no limits)."""
    model = dataclasses.replace(
        system.model, constraints=[*system.model.constraints, *rows], contacts=None, limits=[]
    )
    return pfaff.System(model, source="held rows")


@pytest.fixture(scope="module")
def resting_box():
    system = _load(MODELS / "contact" / "box_on_plane.xml")
    sim = pfaff.Simulator(system, dt=DT)
    sim.step(n=10)
    assert len(sim.contacts) == 4
    return system, sim


@pytest.mark.parametrize("seed", range(3))
def test_box_held_on_four_corners_matches_bilateral_rows_on_the_numpy_engine(resting_box, seed):
    system, sim = resting_box
    rng = np.random.default_rng(seed)
    # a push along the floor and a twist about the normal (the contacts stay closed)
    tau = np.array([*rng.normal(size=2), -1.0, 0.0, 0.0, rng.normal()])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no event in the step: no warning
        A, B = sim.step_derivatives(tau=tau)
    corners = [("box", np.array([x, y, -0.1])) for x in (-0.2, 0.2) for y in (-0.15, 0.15)]
    ref_sys = _with_rows(system, [PointOnPlane(f, (0, 0, 1), 0.0, point=p) for f, p in corners])
    with use_engine("numpy"):
        ref = step_derivatives(ref_sys, sim.q, sim.v, tau, DT, sim.options)
    assert "NumPy engine" in ref.method
    assert np.abs(A - ref.A).max() < 1e-6
    assert np.abs(B - ref.B).max() < 1e-9


def test_box_held_on_four_corners_has_the_closed_form_jacobians(resting_box):
    _, sim = resting_box
    A, B = sim.step_derivatives(tau=np.zeros(6))
    m = 2.0
    # tangent coordinates (x, y, z, rx, ry, rz) then v (vx, vy, vz, wx, wy, wz)
    for i in (2, 3, 4):  # z and the tilts are pinned by the corners
        assert np.abs(A[i]).max() < 1e-6 and np.abs(A[6 + i]).max() < 1e-6
        assert np.abs(B[i]).max() < 1e-9 and np.abs(B[6 + i]).max() < 1e-9
    for i in (0, 1, 5):  # the sliding and the yaw are free: x' = x + dt v
        assert abs(A[i, i] - 1.0) < 1e-6 and abs(A[i, 6 + i] - DT) < 1e-6
        assert abs(A[6 + i, 6 + i] - 1.0) < 1e-6
    # a force along the floor: the velocity dt / m, the position dt^2 / (2 m)
    assert abs(B[6, 0] - DT / m) < 1e-9 and abs(B[0, 0] - DT**2 / (2 * m)) < 1e-9
    # the step without the contacts (what step_derivatives gave before) is caught
    free = step_derivatives(sim.system, sim.q, sim.v, np.zeros(6), DT, sim.options)
    assert abs(free.A[2, 2] - 1.0) < 1e-6 and abs(free.A[2, 8] - DT) < 1e-6


def test_biped_with_held_stops_matches_locked_joints_on_the_numpy_engine():
    system = pfaff.load(MODELS / "closed_chain_biped.xml")
    sim = pfaff.Simulator(system, dt=DT)
    stepper = sim._limited
    for _ in range(200):  # to the first knee impact (about 0.06 s)
        sim.step(n=10)
        if stepper.held:
            break
    assert stepper.held, "no stop held"
    tau = np.zeros(system.nv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a release inside the step is said, tested above
        A, B = sim.step_derivatives(tau=tau)
    rows = [
        LockedJoint(stepper.limits[i].joint, getattr(stepper.limits[i], side))
        for i, side in stepper.held.items()
    ]
    ref_sys = _with_rows(system, rows)
    with use_engine("numpy"):  # with the Simulator's forces: its actuators at ctrl 0 too
        ref = step_derivatives(ref_sys, sim.q, sim.v, tau, DT, sim.options, forces=sim._forces)
    assert "NumPy engine" in ref.method
    assert np.abs(A - ref.A).max() < 1e-7  # 1e-10 here, |A| up to 3.6
    assert np.abs(B - ref.B).max() < 1e-7  # |B| up to 72


def test_a_sliding_box_is_differentiated_with_its_friction(tmp_path):
    # slipping on the incline (mu 0.1 < tan 20 deg): the held mode's step is the
    # Simulator's own, friction included, and along the slope v' = v + dt (g sin -
    # mu g cos) + dt F / m: dv'/dv = 1, dv'/dF = dt / m, dx'/dv = dt
    text = (MODELS / "contact" / "incline.xml").read_text()
    path = tmp_path / "incline.xml"
    path.write_text(text.replace('friction="0.5 ', 'friction="0.1 '))
    sim = pfaff.Simulator(_load(path), dt=DT)
    sim.step(n=200)
    assert [c.mode for c in sim.contacts] == ["slip"] * 4
    d = sim.step_derivatives(tau=np.zeros(6))
    sim.step()
    assert np.array_equal(d.q, sim.q) and np.array_equal(d.v, sim.v)
    assert abs(d.A[6, 6] - 1.0) < 1e-6 and abs(d.A[0, 6] - DT) < 1e-6
    assert abs(d.B[6, 0] - DT / 1.0) < 1e-9
