"""Iterative LQR (iLQR) over a discrete step map in tangent coordinates.

The optimiser of Li & Todorov (2004): roll the controls out through the step, linearise
the step along the rollout (``A = d x_next / d x``, ``B = d x_next / d u``), solve the
time-varying LQR of the quadratic cost about it backwards (the Riccati recursion), and
roll the new policy ``u = u_k + alpha k_k + K_k (x - x_k)`` out; with the
Levenberg-Marquardt regularisation of the value Hessian and the backtracking line
search on the expected reduction of Tassa, Erez & Todorov (2012), Sec. II.F.

The state is ``x = (q, v)`` with ``q`` on the configuration manifold: deviations are
tangent vectors ``(difference(q_ref, q), v - v_ref)``, as the step Jacobians of
:func:`pfaff.api.step_derivatives.step_derivatives` are. The cost is

``J = sum_{k<N} (e_k^T Q e_k + u_k^T R u_k) + e_N^T Qf e_N``, ``e = (difference(q_goal,
q), v - v_goal)``,

whose Hessian in ``x`` is taken as ``2 Q`` (exact for vector-space configurations; a
Gauss-Newton approximation on Lie groups). The dynamics enter through their first
derivatives only (iLQR, not DDP).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["ILQRResult", "ilqr"]

Step = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
Jacobians = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

#: line-search step lengths (Tassa et al. 2012: 10^linspace(0, -3, 11))
ALPHAS = tuple(10.0 ** np.linspace(0.0, -3.0, 11))


@dataclass(frozen=True)
class ILQRResult:
    """What :func:`ilqr` found.

    Attributes
    ----------
    controls : (N, nu) the optimised controls.
    q, v : (N + 1, nq), (N + 1, nv) the nominal states: the rollout of ``controls``.
    gains : (N, nu, 2 nv) the feedback gains ``K_k`` of the last backward pass.
    costs : (iterations + 1,) the cost of the first rollout, then after every accepted
        iteration.
    iterations : linearisations of the trajectory (backward passes with new Jacobians).
    converged : the relative cost decrease (or the expected one) fell below ``tol``.
    seconds : wall time of the optimisation; jacobian_seconds : of it, in ``jacobians``.
    message : why it stopped.
    """

    controls: np.ndarray
    q: np.ndarray
    v: np.ndarray
    gains: np.ndarray
    costs: np.ndarray
    iterations: int
    converged: bool
    seconds: float
    jacobian_seconds: float
    message: str


def _square(M, n: int, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=float)
    if M.shape != (n, n) or not np.all(np.isfinite(M)):
        raise ValueError(f"{name} must be a finite ({n}, {n}) matrix, got shape {M.shape}")
    if not np.allclose(M, M.T) or np.linalg.eigvalsh(M).min() < -1e-12 * max(1.0, abs(M).max()):
        raise ValueError(f"{name} must be symmetric positive semi-definite")
    return M


def ilqr(
    step: Step,
    jacobians: Jacobians,
    difference: Callable[[np.ndarray, np.ndarray], np.ndarray],
    q0: np.ndarray,
    v0: np.ndarray,
    controls: np.ndarray,
    q_goal: np.ndarray,
    Q: np.ndarray,
    Qf: np.ndarray,
    R: np.ndarray,
    v_goal: np.ndarray | None = None,
    iterations: int = 50,
    tol: float = 1e-4,
    mu_min: float = 1e-6,
    mu_max: float = 1e10,
) -> ILQRResult:
    """Minimise the quadratic cost of the module docstring over the controls.

    Parameters
    ----------
    step : ``(q, v, u) -> (q_next, v_next)``, the discrete dynamics.
    jacobians : ``(q, v, u) -> (A, B)``: (2 nv, 2 nv) and (2 nv, nu) Jacobians of
        ``step`` in tangent coordinates (e.g. ``step_derivatives`` with ``tau = S u``
        and ``B S``).
    difference : ``(q_a, q_b) -> dq`` with ``integrate(q_a, dq) = q_b``.
    q0, v0 : the start; controls : (N, nu) the initial guess (N steps).
    q_goal, v_goal : the target (``v_goal`` default zero).
    Q, Qf, R : (2 nv, 2 nv), (2 nv, 2 nv), (nu, nu) symmetric weights, ``R``
        positive definite.
    iterations : the most linearisations; tol : stop when an accepted iteration
        lowers the cost by at most ``tol`` times it, or expects to.
    mu_min, mu_max : the regularisation's floor (below it: zero) and ceiling (reached:
        give up), Tassa et al. 2012 Sec. II.F.

    Returns
    -------
    ILQRResult
    """
    U = np.array(controls, dtype=float)
    if U.ndim != 2 or U.shape[0] < 1 or not np.all(np.isfinite(U)):
        raise ValueError(f"controls must be a finite (N, nu) array, N >= 1; got {U.shape}")
    N, nu = U.shape
    q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
    nv = v0.size
    Q, Qf = _square(Q, 2 * nv, "Q"), _square(Qf, 2 * nv, "Qf")
    R = _square(R, nu, "R")
    if np.linalg.eigvalsh(R).min() <= 0:
        raise ValueError("R must be positive definite")
    vg = np.zeros(nv) if v_goal is None else np.asarray(v_goal, dtype=float)
    if int(iterations) < 1 or not tol >= 0:
        raise ValueError(f"iterations = {iterations!r} must be >= 1, tol = {tol!r} >= 0")

    def error(q, v):
        return np.concatenate([difference(q_goal, q), v - vg])

    def rollout(Xq, Xv, Uref, K=None, kff=None, alpha=0.0):
        qs, vs, us = [q0], [v0], np.empty_like(Uref)
        for k in range(N):
            u = Uref[k]
            if K is not None:
                dx = np.concatenate([difference(Xq[k], qs[-1]), vs[-1] - Xv[k]])
                u = u + alpha * kff[k] + K[k] @ dx
            us[k] = u
            q, v = step(qs[-1], vs[-1], u)
            qs.append(np.asarray(q, dtype=float))
            vs.append(np.asarray(v, dtype=float))
        return np.array(qs), np.array(vs), us

    def cost(qs, vs, us):
        e = [error(q, v) for q, v in zip(qs, vs)]
        run = sum(x @ Q @ x for x in e[:-1]) + sum(u @ R @ u for u in us)
        return float(run + e[-1] @ Qf @ e[-1])

    t0 = time.perf_counter()
    qs, vs, U = rollout(None, None, U)
    costs = [cost(qs, vs, U)]
    if not np.isfinite(costs[0]):
        raise ValueError("the initial rollout's cost is not finite")
    mu, delta, t_jac, lin = 0.0, 1.0, 0.0, None
    K, kff = np.zeros((N, nu, 2 * nv)), np.zeros((N, nu))
    converged, message, done = False, f"stopped after {iterations} iterations", 0
    while True:
        if lin is None:
            if done >= iterations:
                break
            t1 = time.perf_counter()
            lin = [jacobians(qs[k], vs[k], U[k]) for k in range(N)]
            t_jac += time.perf_counter() - t1
            done += 1
        back = _backward(lin, [error(q, v) for q, v in zip(qs, vs)], U, Q, Qf, R, mu)
        if back is not None:
            K, kff, dV1, dV2 = back
            if -(dV1 + 0.5 * dV2) <= tol * costs[-1]:
                converged, message = True, "the expected decrease fell below tol"
                break
            for alpha in ALPHAS:
                new = rollout(qs, vs, U, K, kff, alpha)
                c = cost(*new)
                expected = -(alpha * dV1 + 0.5 * alpha**2 * dV2)
                if np.isfinite(c) and costs[-1] - c > 1e-4 * expected:
                    break
            else:
                back = None
        if back is None:  # raise the regularisation, same linearisation
            delta = max(2.0, 2.0 * delta)
            mu = max(mu_min, mu * delta)
            if mu > mu_max:
                message = f"the regularisation reached mu_max = {mu_max:g}"
                break
            continue
        drop = costs[-1] - c
        (qs, vs, U), lin = new, None
        costs.append(c)
        delta = min(0.5, delta / 2.0)
        mu = mu * delta if mu * delta > mu_min else 0.0
        if drop <= tol * costs[-2]:
            converged, message = True, "the relative decrease fell below tol"
            break
    return ILQRResult(
        U, qs, vs, K, np.array(costs), done, converged,
        time.perf_counter() - t0, t_jac, message,
    )  # fmt: skip


def _backward(lin, errors, U, Q, Qf, R, mu):
    """The Riccati sweep (Tassa et al. 2012, eq. 10-11, regularised value Hessian):
    ``(K, k, dV1, dV2)`` with the expected reduction ``alpha dV1 + alpha^2 dV2 / 2``,
    or None where ``Q_uu`` is not positive definite."""
    N, nu = U.shape
    Vx, Vxx = 2 * Qf @ errors[-1], 2 * Qf
    K, kff = np.zeros((N, nu, Vx.size)), np.zeros((N, nu))
    dV1 = dV2 = 0.0
    for k in reversed(range(N)):
        A, B = lin[k]
        Qx = 2 * Q @ errors[k] + A.T @ Vx
        Qu = 2 * R @ U[k] + B.T @ Vx
        Qxx = 2 * Q + A.T @ Vxx @ A
        Vreg = Vxx + mu * np.eye(Vxx.shape[0])
        Quu = 2 * R + B.T @ Vreg @ B
        Qux = B.T @ Vreg @ A
        try:
            L = np.linalg.cholesky(Quu)
        except np.linalg.LinAlgError:
            return None
        solve = lambda b, L=L: np.linalg.solve(L.T, np.linalg.solve(L, b))  # noqa: E731
        K[k], kff[k] = -solve(Qux), -solve(Qu)
        Quu, Qux = 2 * R + B.T @ Vxx @ B, B.T @ Vxx @ A  # the unregularised model
        dV1 += kff[k] @ Qu
        dV2 += kff[k] @ Quu @ kff[k]
        Vx = Qx + K[k].T @ Quu @ kff[k] + K[k].T @ Qu + Qux.T @ kff[k]
        Vxx = Qxx + K[k].T @ Quu @ K[k] + K[k].T @ Qux + Qux.T @ K[k]
        Vxx = 0.5 * (Vxx + Vxx.T)
    return K, kff, dV1, dV2
