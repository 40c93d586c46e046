"""Slip from the material-point velocities (Pinocchio frame velocities + contour geometry),
an independent witness of the rolling constraint (Arimoto & Yoshida eq. 71)."""

import numpy as np
import pytest

from pfaff.constraints import ConstraintSet
from pfaff.control.blind_grasp import BlindGrasp
from pfaff.linalg import null_space
from pfaff.manipulation.rolling import (
    ContactConstraint,
    RollingConstraint,
    RollingContact,
    rolling_constraints,
)
from pfaff.manipulation.slip import material_slip
from pfaff.simulate import SimOptions, project_state, simulate
from pfaff.systems import rolling_fingers as rg

SHAPES = ("ellipse", "superellipse", "spline")


def _grasp(shape, r_rolling=None):
    """Two fingers on the object; ``r_rolling`` gives the rolling rows a wrong radius."""
    contour = rg.make_contour(shape)
    mech = rg.grasp_mechanism(0.03, 5e-6)
    radii = (0.010, 0.012)
    contacts = [RollingContact(contour, "obj", f"f{i + 1}_tip", r) for i, r in enumerate(radii)]
    if r_rolling is None:
        rows = rolling_constraints(contacts[0]) + rolling_constraints(contacts[1])
    else:
        wrong = [RollingContact(contour, "obj", c.tip, r_rolling * c.r) for c in contacts]
        rows = [ContactConstraint(contacts[0]), RollingConstraint(wrong[0])]
        rows += [ContactConstraint(contacts[1]), RollingConstraint(wrong[1])]
    cset = ConstraintSet(mech, rows)
    q0 = rg.initial_configuration(
        contour, (0.006, 0.085, 1.75), radii, (0, 0), (np.pi + 0.05, 0.05), np.pi - 0.5
    )
    return mech, contacts, cset, q0


@pytest.mark.parametrize("shape", SHAPES)
def test_material_slip_is_the_rolling_row_at_many_contact_states(shape):
    """Two implementations agree for any velocity while the tips touch (d = r): the
    material-point velocities vs. the rows A_R v (eq. 71) and A_Q v (eq. 67)."""
    mech, contacts, cset, q0 = _grasp(shape)
    rng = np.random.default_rng(4)
    for _ in range(8):
        q, _ = project_state(cset, q0 + 0.01 * rng.normal(size=8), np.zeros(8))
        v = rng.normal(size=8)
        A = cset.evaluate(mech.compute(q, v, cset.frames)).A
        for i, c in enumerate(contacts):
            tangential, normal = material_slip(mech.model, c, q, v)
            scale = 1e-12 * (1 + np.abs(A).max() * np.abs(v).max())
            assert tangential == pytest.approx(A[2 * i + 1] @ v, abs=scale)
            assert normal == pytest.approx(A[2 * i] @ v, abs=scale)


def test_material_slip_small_when_rolling_and_catches_a_slipping_contact():
    mech, contacts, cset, q0 = _grasp("ellipse")
    rng = np.random.default_rng(5)
    q, _ = project_state(cset, q0, np.zeros(8))
    A = cset.evaluate(mech.compute(q, np.zeros(8), cset.frames)).A
    for _ in range(10):
        v = null_space(A) @ rng.normal(size=4)  # rolls: all four rows hold
        assert max(abs(x) for c in contacts for x in material_slip(mech.model, c, q, v)) < 1e-11
        # slipping at contact 1: the tips touch (contact rows hold), rolling row 1 does not
        keep = null_space(A[[0, 2, 3]])
        w = keep @ np.linalg.lstsq((A[1] @ keep)[None], [0.01], rcond=None)[0]
        tangential, normal = material_slip(mech.model, contacts[0], q, v + w)
        assert abs(tangential) == pytest.approx(0.01, rel=1e-6)  # m/s
        assert abs(normal) < 1e-12


def test_rolling_slip_catches_a_wrong_rolling_constraint():
    """A rolling row with a 1.5x radius: the simulator keeps that row's residual at zero,
    so the row cannot tell; the material points slip."""
    slips = {}
    for r_rolling in (None, 1.5):
        mech, contacts, cset, q0 = _grasp("ellipse", r_rolling)
        opt = SimOptions(dt=2.5e-4)
        q0, _ = project_state(cset, q0, np.zeros(8), opt)
        ctrl = BlindGrasp(
            ("f1_tip", "f2_tip"),
            ([0, 1], [2, 3, 4]),
            (0.010, 0.012),
            1.0,
            0.008,
            200.0,
            8,
            k_q=0.01,
        )
        a = simulate(cset, q0, np.zeros(8), 0.05, opt, controller=ctrl).arrays()
        assert np.abs(a["av"]).max() < 1e-12  # the enforced rows hold either way
        slips[r_rolling] = max(
            abs(material_slip(mech.model, c, q, v)[0])
            for q, v in zip(a["q"], a["v"])
            for c in contacts
        )
    assert slips[None] < 1e-10  # m/s
    assert slips[1.5] > 1e-3  # m/s (6e-2 measured)
