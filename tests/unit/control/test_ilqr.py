"""pfaff.control.ilqr: on a linear system with a quadratic cost the problem is an LQR,
whose optimum the discrete Riccati recursion gives in closed form; iLQR's first
iteration (alpha = 1) must land on it, and then stop."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.control.ilqr import ilqr


def _lqr_problem(seed: int = 0, nv: int = 2, nu: int = 2, N: int = 15):
    rng = np.random.default_rng(seed)
    n = 2 * nv
    A = np.eye(n) + 0.1 * rng.standard_normal((n, n))
    B = 0.1 * rng.standard_normal((n, nu))
    Q = np.diag(rng.uniform(0.5, 2.0, n))
    Qf = 10.0 * np.eye(n)
    R = np.diag(rng.uniform(0.1, 1.0, nu))
    goal = rng.standard_normal(nv)
    x0 = rng.standard_normal(n)

    def step(q, v, u):
        x = A @ np.concatenate([q, v]) + B @ u
        return x[:nv], x[nv:]

    return A, B, Q, Qf, R, goal, x0, step, nv, nu, N


def _riccati(A, B, Q, Qf, R, goal, x0, nv, N):
    """The optimal controls of sum e'Qe + u'Ru + e_N'Qf e_N, e = x - (goal, 0), for
    x+ = A x + B u: the affine Riccati recursion (the target is not a fixed point)."""
    xg = np.concatenate([goal, np.zeros(nv)])
    P, p = Qf, -Qf @ xg  # value: x'Px + 2 p'x + const
    gains = []
    for _ in range(N):
        H = R + B.T @ P @ B
        K = np.linalg.solve(H, B.T @ P @ A)
        k = np.linalg.solve(H, B.T @ p)
        gains.append((K, k))
        P, p = (
            Q + A.T @ P @ (A - B @ K),
            -Q @ xg + (A - B @ K).T @ p,
        )
        P = 0.5 * (P + P.T)
    x, U = x0, []
    for K, k in reversed(gains):
        u = -K @ x - k
        U.append(u)
        x = A @ x + B @ u
    return np.array(U)


def test_ilqr_equals_the_riccati_solution_of_an_lqr_in_one_iteration():
    A, B, Q, Qf, R, goal, x0, step, nv, nu, N = _lqr_problem()
    U_lqr = _riccati(A, B, Q, Qf, R, goal, x0, nv, N)
    args = (step, lambda q, v, u: (A, B), lambda a, b: b - a, x0[:nv], x0[nv:])
    one = ilqr(*args, np.zeros((N, nu)), goal, Q, Qf, R, iterations=1, tol=0.0)
    assert one.iterations == 1 and len(one.costs) == 2
    assert np.abs(one.controls - U_lqr).max() <= 1e-8 * np.abs(U_lqr).max()
    full = ilqr(*args, np.zeros((N, nu)), goal, Q, Qf, R, iterations=20, tol=1e-12)
    assert full.converged and full.iterations == 2  # the second sees nothing to gain
    assert np.abs(full.controls - U_lqr).max() <= 1e-8 * np.abs(U_lqr).max()


def test_a_wrong_jacobian_misses_the_riccati_solution():
    """Wrong input: iLQR fed B scaled by 1.1 does not land on the LQR optimum in one
    iteration (the comparison above can fail)."""
    A, B, Q, Qf, R, goal, x0, step, nv, nu, N = _lqr_problem()
    U_lqr = _riccati(A, B, Q, Qf, R, goal, x0, nv, N)
    args = (step, lambda q, v, u: (A, 1.1 * B), lambda a, b: b - a, x0[:nv], x0[nv:])
    one = ilqr(*args, np.zeros((N, nu)), goal, Q, Qf, R, iterations=1, tol=0.0)
    assert np.abs(one.controls - U_lqr).max() > 1e-3 * np.abs(U_lqr).max()


def test_bad_weights_and_controls_are_refused_by_name():
    A, B, Q, Qf, R, goal, x0, step, nv, nu, N = _lqr_problem()
    args = (step, lambda q, v, u: (A, B), lambda a, b: b - a, x0[:nv], x0[nv:])
    with pytest.raises(ValueError, match="R must be positive definite"):
        ilqr(*args, np.zeros((N, nu)), goal, Q, Qf, 0.0 * R)
    with pytest.raises(ValueError, match="Qf must be"):
        ilqr(*args, np.zeros((N, nu)), goal, Q, Qf[:2, :2], R)
    with pytest.raises(ValueError, match="controls must be"):
        ilqr(*args, np.zeros(N), goal, Q, Qf, R)


def test_an_ascent_jacobian_raises_the_regularisation_until_it_gives_up():
    """B with the wrong sign points every step uphill: no step length lowers the cost,
    the regularisation grows to mu_max, and the result says it did not converge."""
    A, B, Q, Qf, R, goal, x0, step, nv, nu, N = _lqr_problem()
    args = (step, lambda q, v, u: (A, -B), lambda a, b: b - a, x0[:nv], x0[nv:])
    res = ilqr(*args, np.zeros((N, nu)), goal, Q, Qf, R, mu_max=1e3)
    assert not res.converged and "mu_max" in res.message
    assert res.iterations == 1 and len(res.costs) == 1  # one linearisation, no step taken
    assert np.abs(res.controls).max() == 0.0  # the initial guess kept
