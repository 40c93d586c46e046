"""The held sets' two force problems as functions of arrays (``pfaff._core``'s
``unilateral_forces`` and ``pushing_forces``, algorithms/pushing_forces.hpp), against
independent witnesses: the contact problem's solution against the enumeration of its
active sets (a positive definite S has one), its complementarity where S is singular
(redundant rows), a friction cone's bound; the pushing split's motion and signs; and
the boundary's checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pfaff import core

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
TOL = 1e-10


def _core():
    from pfaff import _core

    return _core


def _enumerate(S: np.ndarray, r: np.ndarray, free: int) -> np.ndarray:
    """The LCP's solution by its active sets: rows < free are equalities, the others push
    (lambda <= 0) and stay (w = r - S lambda = 0), or let go (lambda = 0, w >= 0)."""
    m = len(r)
    for k in range(m - free + 1):
        for off in itertools.combinations(range(free, m), k):
            on = [i for i in range(m) if i not in off]
            lam = np.zeros(m)
            lam[on] = np.linalg.solve(S[np.ix_(on, on)], r[on])
            w = r - S @ lam
            if np.all(lam[free:] <= 1e-12) and np.all(w[list(off)] >= -1e-12):
                return lam
    raise AssertionError("no active set")


@pytest.mark.parametrize("seed", range(20))
def test_the_contact_problem_equals_its_active_set_solution(seed):
    rng = np.random.default_rng(seed)
    m, free = 5, 1
    B = rng.normal(size=(m, m))
    S = B @ B.T + 0.1 * np.eye(m)
    r = rng.normal(size=m)
    ok, lam = _core().unilateral_forces(S, r, [(i, -1.0) for i in range(free, m)], [], TOL)
    assert ok
    assert np.max(np.abs(lam - _enumerate(S, r, free))) < 1e-7 * max(1.0, np.abs(lam).max())


def test_redundant_rows_keep_complementarity():
    # a box's four corners (z, roll, pitch of a body of unit inertia): rank 3, S singular;
    # a load that lifts the -x edge: the -x corners let go, the +x corners push and stay
    corners = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=float) * 0.1
    A = np.array([[1.0, y, -x] for x, y in corners])  # the corners' heights' rows
    S = A @ A.T
    r = A @ np.array([-9.81, 0.0, 300.0])  # weight, and a moment tipping over +x
    ok, lam = _core().unilateral_forces(S, r, [(i, -1.0) for i in range(4)], [], TOL)
    assert ok
    w = r - S @ lam
    assert np.all(lam <= 1e-9) and np.all(w >= -1e-9) and abs(lam @ w) < 1e-9
    assert np.all(np.abs(lam[2:]) < 1e-9) and np.all(w[2:] > 1.0)  # -x corners go
    assert np.all(lam[:2] < -1.0)  # +x corners push
    # the witness catches a wrong answer: the least-norm solve pulls at the -x corners
    least = np.linalg.lstsq(S, r, rcond=None)[0]
    assert np.max(least[2:]) > 1.0


def test_a_cone_bounds_the_tangential_force():
    # one point: normal row 0, tangential rows 1, 2 (unit masses); a tangential demand
    # of 20 against a normal one of 10 with mu 0.5: the force lies on the cone, where
    # the problem's closed form (lambda_t = mu f_n: min 5/8 f_n^2 - 20 f_n) has f_n = 16
    # (the dual's cone couples them: a convex relaxation, which decides no release here)
    S = np.eye(3)
    cone = [(0, 1, 0.5)]
    ok, lam = _core().unilateral_forces(S, np.array([-10.0, 20.0, 0.0]), [(0, -1.0)], cone, TOL)
    assert ok
    fn, ft = -lam[0], np.hypot(lam[1], lam[2])
    assert fn == pytest.approx(16.0, abs=1e-6)
    assert ft == pytest.approx(0.5 * fn, abs=1e-6)  # a facet faces (1, 0): exact there
    ok, lam = _core().unilateral_forces(S, np.array([-10.0, 2.0, 0.0]), [(0, -1.0)], cone, TOL)
    assert ok and np.hypot(lam[1], lam[2]) == pytest.approx(2.0, abs=1e-6)  # inside: sticks
    assert -lam[0] == pytest.approx(10.0, abs=1e-6)


def test_the_pushing_split_keeps_the_motion():
    corners = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=float) * 0.1
    W = np.array([[1.0, y, -x] for x, y in corners])
    lam0 = np.array([-5.0, -5.0, -1.0, 0.5])  # pulls at the last corner
    push = [(i, -1.0) for i in range(4)]
    ok, lam = _core().pushing_forces(W, lam0, push, [], 1e-9, TOL)
    assert ok
    assert np.max(np.abs(W.T @ (lam - lam0))) < 1e-9 and np.all(lam <= 1e-9)
    # a net pull has no pushing split
    ok, _ = _core().pushing_forces(W, np.array([1.0, 1.0, 1.0, 1.0]), push, [], 1e-9, TOL)
    assert not ok


@pytest.mark.parametrize(
    "S, r, push, cones, match",
    [
        (np.eye(2), np.zeros(3), [], [], "r has shape"),
        (np.ones((2, 3)), np.zeros(2), [], [], "S has shape"),
        (np.eye(2), np.array([0.0, np.nan]), [], [], "non-finite"),
        (np.eye(2), np.zeros(2), [(2, -1.0)], [], "push row"),
        (np.eye(2), np.zeros(2), [(0, 0.5)], [], "push sign"),
        (np.eye(3), np.zeros(3), [], [(0, 2, 0.5)], "cone t1"),
        (np.eye(3), np.zeros(3), [], [(0, 1, -1.0)], "cone mu"),
    ],
)
def test_the_boundary_names_a_bad_input(S, r, push, cones, match):
    with pytest.raises(ValueError, match=match):
        _core().unilateral_forces(S, r, push, cones, TOL)
