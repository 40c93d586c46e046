"""iLQR on a closed chain: the five-bar (tests/models/five_bar.xml, a planar loop closed
by a 3D point constraint: 3 rows of rank 2), actuated at its two ground cranks, moved
from its start to another assembled configuration and brought to rest.

The optimiser linearises the simulator's own step (RK4 with its projections) with
pfaff.api.step_derivatives: once with the analytic forward-mode sensitivities, once
with central differences of the step, and prints iterations, final cost and time of
both. Run from the repository root:

    python examples/ilqr_five_bar.py
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import pfaff
from pfaff.api.step_derivatives import step, step_derivatives
from pfaff.simulate.assembly import assemble

MODEL = Path(__file__).resolve().parents[1] / "tests" / "models" / "five_bar.xml"


def problem(horizon: int = 40, dt: float = 0.02):
    """The system, start, goal, the actuation map S (tau = S u) and the weights."""
    sys = pfaff.load(MODEL)
    nv = sys.nv
    goal = sys.integrate(sys.q0, np.array([0.35, 0.0, 0.25, 0.0]))
    goal = assemble(sys.cset, goal, None, 1e-12, 100, sys.rank_tol).q
    S = np.zeros((nv, 2))
    S[0, 0] = S[2, 1] = 1.0  # the two ground cranks: "left", "right"
    W = dict(Q=np.diag([1.0] * nv + [0.01] * nv), Qf=np.diag([200.0] * nv + [10.0] * nv), R=0.1)
    return sys, sys.q0, sys.v0, goal, S, W, horizon, dt


def ilqr(sys, q0, v0, goal, S, W, horizon, dt, method, iters=50, tol=1e-4):
    """iLQR (Li & Todorov 2004; regularisation and line search as Tassa et al. 2012) on
    the tangent error ``e = (difference(goal, q), v)``; returns the controls, the cost
    per iteration and the time spent."""
    nu = S.shape[1]
    Q, Qf, R = W["Q"], W["Qf"], W["R"] * np.eye(nu)

    def rollout(U, X=None, K=None, kff=None, alpha=0.0):
        xs, us = [(q0, v0)], []
        for k in range(horizon):
            q, v = xs[-1]
            u = U[k]
            if X is not None:
                dx = np.concatenate([sys.difference(X[k][0], q), v - X[k][1]])
                u = U[k] + alpha * kff[k] + K[k] @ dx
            us.append(u)
            xs.append(step(sys, q, v, S @ u, dt))
        return xs, np.array(us)

    def error(x):
        return np.concatenate([sys.difference(goal, x[0]), x[1]])

    def cost(xs, U):
        run = sum(error(x) @ Q @ error(x) for x in xs[:-1]) + sum(u @ R @ u for u in U)
        return float(run + error(xs[-1]) @ Qf @ error(xs[-1]))

    U = np.zeros((horizon, nu))
    xs, U = rollout(U)
    costs, mu, t0 = [cost(xs, U)], 1e-6, time.perf_counter()
    for _ in range(iters):
        lin = [step_derivatives(sys, q, v, S @ u, dt, method=method) for (q, v), u in zip(xs, U)]
        Vx, Vxx = 2 * Qf @ error(xs[-1]), 2 * Qf
        K, kff = [None] * horizon, [None] * horizon
        for k in reversed(range(horizon)):
            A, B = lin[k].A, lin[k].B @ S
            Qx = 2 * Q @ error(xs[k]) + A.T @ Vx
            Qu = 2 * R @ U[k] + B.T @ Vx
            Qxx = 2 * Q + A.T @ Vxx @ A
            Quu = 2 * R + B.T @ Vxx @ B + mu * np.eye(nu)
            Qux = B.T @ Vxx @ A
            K[k] = -np.linalg.solve(Quu, Qux)
            kff[k] = -np.linalg.solve(Quu, Qu)
            Vx = Qx + K[k].T @ Quu @ kff[k] + K[k].T @ Qu + Qux.T @ kff[k]
            Vxx = Qxx + K[k].T @ Quu @ K[k] + K[k].T @ Qux + Qux.T @ K[k]
            Vxx = 0.5 * (Vxx + Vxx.T)
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03):
            new_xs, new_U = rollout(U, xs, K, kff, alpha)
            c = cost(new_xs, new_U)
            if c < costs[-1]:
                break
        else:
            mu *= 10.0
            continue
        xs, U, mu = new_xs, new_U, max(mu / 10.0, 1e-9)
        costs.append(c)
        if costs[-2] - c <= tol * costs[-2]:
            break
    return U, costs, time.perf_counter() - t0


def main(horizon: int = 40, iters: int = 50) -> dict:
    args = problem(horizon)
    out = {}
    for method in ("sensitivities", "differences"):
        U, costs, seconds = ilqr(*args, method=method, iters=iters)
        out[method] = dict(iterations=len(costs) - 1, cost=costs[-1], start=costs[0], s=seconds)
        print(
            f"{method:13s}: {len(costs) - 1:2d} iterations, cost {costs[0]:.4g} -> "
            f"{costs[-1]:.4g}, {seconds:.2f} s"
        )
    return out


if __name__ == "__main__":
    main()
