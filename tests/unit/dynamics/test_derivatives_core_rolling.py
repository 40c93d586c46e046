"""The compiled derivative rows of the rolling contact's two rows (RollContact: the
contact Q = d - r, RollTangent: the Pfaffian rolling row; src/cpp/kinds/rolling.cpp) on
the two-finger grasp of pfaff.systems.rolling_fingers, for every contour the core
takes (circle, ellipse, superellipse, the cubic spline), at 8 states each (off the
contact and velocity manifolds too): against the NumPy reference (pfaff.derivatives,
which takes these rows by central differences of their own A and drift) and against
Richardson-extrapolated central differences of the core's own dynamics. Then
System.forward_dynamics_derivatives takes the grasp on the core."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.derivatives import forward_dynamics_derivatives
from pfaff.files.model import ModelSystem
from pfaff.manipulation.contours import Circle, Ellipse, SplineContour
from pfaff.manipulation.rolling import rolling_constraints
from pfaff.simulate import SimOptions, project_state
from pfaff.systems import rolling_fingers as rf
from tests.unit.dynamics.test_derivatives_core import FIELDS
from tests.unit.dynamics.test_derivatives_core_kinds import _agree_at, _differences, _rel

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

TOL_NUMPY = 1e-5  # the reference: central differences (step 1e-5) on contours of ~20 mm
TOL_FD = 1e-6  # Richardson-extrapolated central differences of the core's dynamics
RADII = (0.01, 0.012)


def _contour(name: str):
    if name == "circle":
        return Circle(0.02)
    if name == "spline-8":  # 8 knots: a coarse spline, its third derivative steps
        pts = [(np.cos(a) * 0.03, np.sin(a) * 0.02 + 0.003 * np.cos(3 * a))
               for a in np.linspace(0, 2 * np.pi, 9)[:-1]]  # fmt: skip
        return SplineContour(pts)
    return rf.make_contour(name)


def _grasp(contour):
    mech, contacts, cset = rf.grasp_system(contour, 0.03, RADII)
    q0 = rf.initial_configuration(
        contour, (0.006, 0.085, 1.75), RADII, (0.0, 0.0), (np.pi + 0.05, 0.05), np.pi - 0.5
    )
    q0, _ = project_state(cset, q0, np.zeros(mech.nv), SimOptions(stage_projection=False))
    return mech, contacts, cset, q0


def _states(mech, q0, n, seed):
    """(q, v, tau): the grasp, then q moved by up to 0.03 (off the contact manifold: the
    fingertips a little in or out of the contour), v and tau at random."""
    rng = np.random.default_rng(seed)
    for k in range(n):
        q = q0 + rng.uniform(-0.03, 0.03, mech.nq) * (k > 0)
        yield q, rng.uniform(-1.0, 1.0, mech.nv), rng.uniform(-0.1, 0.1, mech.nv)


@pytest.mark.parametrize("shape", ["circle", "ellipse", "superellipse", "spline", "spline-8"])
def test_rolling_rows_agree_with_numpy_and_differences(shape):
    mech, _, cset, q0 = _grasp(_contour(shape))
    compiled = core.differentiator(cset, 1e-9)
    worst_np = worst_fd = 0.0
    for q, v, tau in _states(mech, q0, 8, seed=5):
        c, d = compiled(q, v, tau), forward_dynamics_derivatives(cset, q, v, tau)
        assert d.fd_constraints == ("ContactConstraint", "RollingConstraint")
        assert c["rank"] == d.rank == 4
        err_np, err_fd = _agree_at(compiled, c, d, mech, q, v, tau, TOL_NUMPY, TOL_FD)
        worst_np, worst_fd = max(worst_np, err_np), max(worst_fd, err_fd)
    print(f"{shape}: vs numpy {worst_np:.1e}, vs differences {worst_fd:.1e}")


def test_one_finger_and_a_point_row():
    """One contact's two rows beside a point row of another kind (the object's origin on
    a plane): each kind writes its own rows of dA and X."""
    from pfaff.constraints import PointOnPlane

    contour = rf.make_contour("ellipse")
    mech, contacts, _, q0 = _grasp(contour)
    cset = ConstraintSet(
        mech, rolling_constraints(contacts[1]) + [PointOnPlane("obj", (0.3, 1.0, 0.0), 0.08)]
    )
    compiled = core.differentiator(cset, 1e-9)
    for q, v, tau in _states(mech, q0, 4, seed=9):
        c, d = compiled(q, v, tau), forward_dynamics_derivatives(cset, q, v, tau)
        cond = max(1.0, d.sigma[0] / d.sigma[d.rank - 1])
        for name in FIELDS:
            assert _rel(c[name], getattr(d, name)) / cond <= TOL_NUMPY, name


def test_a_wrong_contour_is_caught():
    """The comparison can fail: the core's ellipse 1 mm wider than the reference's
    gives derivatives that the reference of the true contour refuses."""
    contour = Ellipse(0.026, 0.018)
    mech, contacts, cset, q0 = _grasp(contour)
    wide = Ellipse(0.026 + 1e-3, 0.018)
    wrong_contacts = [type(c)(wide, c.obj, c.tip, c.r) for c in contacts]
    wrong = ConstraintSet(mech, sum((rolling_constraints(c) for c in wrong_contacts), []))
    q, v, tau = next(_states(mech, q0, 1, seed=2))
    d = forward_dynamics_derivatives(cset, q, v, tau)
    good = core.differentiator(cset, 1e-9)(q, v, tau)
    bad = core.differentiator(wrong, 1e-9)(q, v, tau)
    assert _rel(good["da_dq"], d.da_dq) <= TOL_NUMPY
    assert _rel(bad["da_dq"], d.da_dq) > 1e2 * TOL_NUMPY


def test_system_takes_the_grasp_on_the_core():
    """System.forward_dynamics_derivatives(engine="core") on the rolling grasp (every
    constraint kind has its derivative rows in the core): equal to the NumPy engine to
    its differences' accuracy, at the assembled start and off it."""
    contour = rf.make_contour("superellipse")
    mech, _, cset, q0 = _grasp(contour)
    sys = pfaff.System(ModelSystem(mech, cset.constraints, q0, np.zeros(mech.nv), "grasp"))
    rng = np.random.default_rng(21)
    for q in (sys.q0, sys.q0 + rng.uniform(-0.02, 0.02, sys.nq)):
        v, tau = rng.uniform(-1.0, 1.0, sys.nv), rng.uniform(-0.1, 0.1, sys.nv)
        c = sys.forward_dynamics_derivatives(q, v, tau, engine="core")
        a = sys.forward_dynamics_derivatives(q, v, tau)  # auto: the core, no warning
        n = sys.forward_dynamics_derivatives(q, v, tau, engine="numpy")
        assert (c.engine, a.engine, n.engine) == ("core", "core", "numpy")
        assert c.fd_constraints == () and n.fd_constraints
        cond = n.sigma[0] / n.sigma[n.rank - 1]
        for name in FIELDS:
            assert _rel(getattr(c, name), getattr(n, name)) / cond <= TOL_NUMPY, name


def test_rows_written_in_python_are_differentiated_on_the_core():
    """A user's contour has no compiled form: its rolling rows reach the core written in
    Python (Kind.Python), whose derivative rows the core takes by central differences of
    those rows (the reference's steps): equal to the reference to 1e-7 of the largest
    entry and to Richardson differences of the core's dynamics to 1e-4 (the rows'
    differences carry their 1e-5 step's truncation)."""

    class Wobbly(Ellipse):
        pass

    mech, contacts, _, q0 = _grasp(Ellipse(0.026, 0.018))
    user = [type(c)(Wobbly(0.026, 0.018), c.obj, c.tip, c.r) for c in contacts]
    cset = ConstraintSet(mech, rolling_constraints(user[0]) + rolling_constraints(contacts[1]))
    compiled = core.differentiator(cset, 1e-9)
    for q, v, tau in _states(mech, q0, 3, seed=4):
        c, d = compiled(q, v, tau), forward_dynamics_derivatives(cset, q, v, tau)
        cond = max(1.0, d.sigma[0] / d.sigma[d.rank - 1])
        for name in FIELDS:
            assert _rel(c[name], getattr(d, name)) / cond <= 1e-7, name
        for field, ref in _differences(compiled, mech, q, v, tau).items():
            assert _rel(c[field], ref) / cond <= 1e-4, field
