"""A constraint written in Python on the compiled core (pfaff.constraints.python_rows,
src/cpp/kinds/python.cpp): the loop calls its rows; rows, dynamics and whole runs
equal the NumPy reference's; what its rows return is checked at the boundary."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff import core
from pfaff import dynamics as dyn
from pfaff.constraints import ConstraintSet, FunctionConstraint, LockedJoint
from pfaff.constraints.base import Constraint
from pfaff.mechanism import load_robot
from pfaff.simulate import SimOptions, SimulationError, engine_choice, simulate

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


@pytest.fixture(scope="module")
def panda():
    return load_robot("panda")


def _holonomic():
    """A nonlinear coupling of two joints, its Jacobian and drift by differences."""
    return FunctionConstraint(
        1, phi=lambda q: np.array([np.sin(q[1]) + 0.5 * q[3] ** 2 - 0.1]), name="coupling"
    )


def _pfaffian(nv):
    """A q-dependent velocity row A(q) v = 0, its drift by differences of A."""

    def A(q):
        a = np.zeros((1, nv))
        a[0, 0], a[0, 2] = np.cos(q[1]), np.sin(q[1])
        return a

    return FunctionConstraint(1, jacobian=A, name="velocity row")


class PlaneFromAbove(Constraint):
    """A user's own constraint class: the tool's height above z = 0.4, in one pass."""

    dim, frames, name = 1, ("panda_hand_tcp",), "tool height"

    def residual(self, snap):
        return snap.frame("panda_hand_tcp").p[2:] - 0.4

    def jacobian(self, snap):
        return snap.frame("panda_hand_tcp").J[2:3]

    def drift(self, snap):
        return snap.frame("panda_hand_tcp").drift[2:3]


def _cases(panda):
    return {
        "holonomic": [_holonomic()],
        "pfaffian": [_pfaffian(panda.nv)],
        "user class": [PlaneFromAbove()],
        "with built-in": [LockedJoint("panda_joint1", 0.1), _holonomic()],
    }


@pytest.mark.parametrize("case", ["holonomic", "pfaffian", "user class", "with built-in"])
def test_rows_dynamics_and_runs_equal_the_numpy_reference(panda, case):
    """A, drift, Phi and a, lambda of the core at 20 states against the NumPy
    evaluation (1e-10 relative), and a whole run of 50 steps of both engines (1e-9)."""
    cset = ConstraintSet(panda, _cases(panda)[case])
    opt = SimOptions(dt=1e-3, progress=False)
    assert engine_choice(cset, opt) == ("core", None)
    s = core.build(cset)
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(20):
        q = panda.integrate(panda.neutral(), rng.uniform(-0.4, 0.4, panda.nv))
        v, tau = rng.uniform(-1.0, 1.0, panda.nv), rng.uniform(-2.0, 2.0, panda.nv)
        snap = panda.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        _, _, A, drift, phi = s.evaluate(q, v)
        ref = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
        a, _, lam, _ = s.solve(q, v, tau)
        for x, r in ((A, ev.A), (drift, ev.drift), (a, ref.a), (lam, ref.lam)):
            worst = max(worst, float(np.abs(x - r).max() / max(np.abs(r).max(), 1.0)))
        assert phi.shape == ev.phi.shape
        worst = max(worst, float(np.abs(phi - ev.phi).max(initial=0.0)))
    assert worst <= 1e-10
    runs = {}
    for engine in ("numpy", "core"):
        o = SimOptions(dt=1e-3, engine=engine, progress=False)
        traj = simulate(cset, panda.neutral(), np.zeros(panda.nv), 0.05, o)
        assert traj.engine == engine
        runs[engine] = traj.arrays()
    assert np.abs(runs["numpy"]["q"] - runs["core"]["q"]).max() < 1e-9  # rad
    assert np.abs(runs["numpy"]["v"] - runs["core"]["v"]).max() < 1e-8  # rad/s
    assert np.abs(runs["core"]["phi"]).max(initial=0.0) < 1e-9


def test_a_wrong_row_is_caught_by_the_parity_check(panda):
    """The parity check above can fail: a constraint whose Jacobian is off by 1 % (its
    rows the core evaluates) moves the run away from the right one."""
    right = ConstraintSet(panda, [PlaneFromAbove()])
    wrong_c = PlaneFromAbove()
    wrong_c.jacobian = lambda snap: 1.01 * PlaneFromAbove.jacobian(wrong_c, snap)
    wrong = ConstraintSet(panda, [wrong_c])
    q, v = panda.neutral(), np.full(panda.nv, 0.3)
    a = core.build(right).evaluate(q, v)[2]
    b = core.build(wrong).evaluate(q, v)[2]
    assert np.abs(a - b).max() > 1e-4


class Probe(Constraint):
    """A user's constraint whose rows are what ``rows`` returns (no checks of its own)."""

    dim, name = 1, "probe"

    def __init__(self, rows):
        self.terms = rows

    def residual(self, snap):
        return self.terms(snap)[2]

    def jacobian(self, snap):
        return self.terms(snap)[0]

    def drift(self, snap):
        return self.terms(snap)[1]


@pytest.mark.parametrize(
    "bad, match",
    [
        (
            lambda nv: (np.ones((1, nv + 1)), np.zeros(1), np.zeros(1)),
            r"A has shape \(1, 8\), expected \(1, 7\)",
        ),
        (lambda nv: (np.ones((1, nv)), np.zeros(1), np.zeros(2)), r"Phi has shape \(2,\)"),
        (lambda nv: (np.ones((1, nv)), np.zeros(3), np.zeros(1)), r"drift has shape \(3,\)"),
        (lambda nv: (np.ones((1, nv)), np.array([np.nan]), np.zeros(1)), "non-finite"),
    ],
)
def test_bad_rows_are_refused_at_the_boundary_naming_the_constraint(panda, bad, match):
    """What a constraint written in Python returns is checked where it enters the core:
    its shapes against (dim, nv), (dim,), (dim,) and finiteness, named."""
    nv = panda.nv
    cset = ConstraintSet(panda, [Probe(lambda snap: bad(nv))])
    s = core.build(cset)
    with pytest.raises(ValueError, match=match) as exc:
        s.evaluate(panda.neutral(), np.zeros(nv))
    assert "probe (a constraint written in Python)" in str(exc.value)


def test_an_exception_in_the_rows_stops_the_run(panda):
    """An error raised inside the constraint reaches the caller, not a silent NaN."""

    def phi(q):
        if abs(q[0]) > 0.05:
            raise RuntimeError("out of my domain")
        return np.array([q[1] - 0.01])

    cset = ConstraintSet(panda, [FunctionConstraint(1, phi=phi, name="fragile")])
    q0 = panda.neutral()
    with pytest.raises((RuntimeError, SimulationError), match="out of my domain"):
        simulate(cset, q0, np.full(panda.nv, 5.0), 0.05, SimOptions(dt=1e-3, engine="core"))
