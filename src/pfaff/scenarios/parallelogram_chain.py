"""A row of parallelograms: N + 1 equal cranks on the ground joined by N couplers.

The mechanism folds (every bar on the ground line, crank angle 0 or pi) and
the loop-closure Jacobian then loses N of its 2N rows. On the parallelogram
branch every crank has the same absolute angle ``theta`` and the couplers
translate, so the motion obeys a 1-DOF pendulum-like ODE (the reduced ODE,
derived below by Lagrange from T and V), the independent witness of the
convergence tests through folds.

Bars are uniform (mass ``density * length``, inertia ``m L^2 / 12``); the
cranks have length ``l`` and pivots ``l0`` apart on the x axis, the couplers
have length ``l0``; gravity ``g`` along -y.

Reduced ODE (Lagrange with ``T = J theta'^2 / 2``, ``V = K g l sin theta``)::

    J = (N + 1) m_k l^2 / 3 + N m_c l^2,     K = (N + 1) m_k / 2 + N m_c
    J theta'' = -K g l cos theta
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet, PointsCoincide
from pfaff.mechanism import PlanarChain, PlanarLink, planar_chains


def _bar(length: float, density: float) -> PlanarLink:
    m = density * length
    return PlanarLink(length, m, com=length / 2, inertia=m * length**2 / 12)


def parallelogram_chain(
    n: int, l: float = 0.4, l0: float = 1.0, density: float = 1.0, g: float = 9.81
) -> ConstraintSet:
    """``n`` parallelograms in a row as Pinocchio chains closed by loop constraints.

    Chain ``c<k>`` (k < n) is crank k followed by coupler k; chain ``c<n>`` is
    the last crank alone. Loop k: the tip of coupler k coincides with the tip
    of crank k + 1 (x and y rows). 2n + 1 joints, 2n rows, one DOF; ``n = 1``
    is the four-bar parallelogram.
    """
    if int(n) < 1:
        raise ValueError(f"n must be >= 1 parallelogram, got {n!r}")
    chains = [
        PlanarChain([_bar(l, density), _bar(l0, density)], name=f"c{k}", base=(k * l0, 0.0))
        for k in range(n)
    ]
    chains.append(PlanarChain([_bar(l, density)], name=f"c{n}", base=(n * l0, 0.0)))
    mech = planar_chains(chains, gravity=(0.0, -g, 0.0), name=f"parallelograms-{n}")
    loops = [
        PointsCoincide(
            f"c{k}_tip",
            f"c{k + 1}_link2" if k + 1 < n else f"c{n}_tip",
            directions=[(1, 0, 0), (0, 1, 0)],
            name=f"loop{k}",
        )
        for k in range(n)
    ]
    return ConstraintSet(mech, loops)


def branch_state(n: int, theta: float, omega: float) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)`` on the parallelogram branch at crank angle ``theta``, rate ``omega``."""
    q = np.array([*[theta, -theta] * n, theta])
    v = np.array([*[omega, -omega] * n, omega])
    return q, v


def reduced_coefficients(
    n: int, l: float = 0.4, l0: float = 1.0, density: float = 1.0
) -> tuple[float, float]:
    """``(J, K)`` of the reduced ODE ``J theta'' = -K g l cos theta`` (module docstring)."""
    mk, mc = density * l, density * l0
    return (n + 1) * mk * l**2 / 3 + n * mc * l**2, (n + 1) * mk / 2 + n * mc


def reduced_solution(
    n: int,
    theta0: float,
    omega0: float,
    t: np.ndarray,
    l: float = 0.4,
    l0: float = 1.0,
    density: float = 1.0,
    g: float = 9.81,
) -> np.ndarray:
    """``(theta, omega)`` of the reduced ODE at the times ``t`` (DOP853, rtol 1e-13).

    Returns an array (len(t), 2).
    """
    from scipy.integrate import solve_ivp

    J, K = reduced_coefficients(n, l, l0, density)
    c = K * g * l / J
    t = np.atleast_1d(np.asarray(t, dtype=float))
    sol = solve_ivp(
        lambda _t, y: [y[1], -c * np.cos(y[0])],
        (0.0, float(t[-1])),
        [theta0, omega0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-14,
        t_eval=t,
    )
    return sol.y.T


def reduced_rk4(
    n: int,
    theta0: float,
    omega0: float,
    t_end: float,
    dt: float,
    l: float = 0.4,
    l0: float = 1.0,
    density: float = 1.0,
    g: float = 9.81,
) -> tuple[np.ndarray, float]:
    """The classical RK4 of the reduced ODE with step ``dt``: ``(samples, fold_distance)``.

    On the parallelogram branch ``q = (theta, -theta, ..., theta)`` is linear in
    ``theta``, so RK4 on the mechanism (the same stages in q, then the correction,
    which finds the state on the branch) is RK4 on the reduced ODE up to
    round-off: the witness that a run through folds carries the RK4 truncation
    error and nothing else. ``samples`` is ``(theta, omega)`` at the ``round(t_end /
    dt) + 1`` step ends, (N + 1, 2); ``fold_distance`` the least distance [rad] of a
    stage angle (``y_n``, ``y_n + dt/2 k_1``, ``y_n + dt/2 k_2``, ``y_n + dt k_3``) from
    a fold (``theta`` a multiple of pi), where the projected ODE's round-off floor
    lives (docs/forces-and-folds.md, "Convergence through folds").
    """
    J, K = reduced_coefficients(n, l, l0, density)
    c = K * g * l / J

    def f(y: np.ndarray) -> np.ndarray:
        return np.array([y[1], -c * np.cos(y[0])])

    y = np.array([theta0, omega0], dtype=float)
    out, dist = [y], np.inf
    for _ in range(int(round(t_end / dt))):
        k1 = f(y)
        y2 = y + dt / 2 * k1
        k2 = f(y2)
        y3 = y + dt / 2 * k2
        k3 = f(y3)
        y4 = y + dt * k3
        for s in (y, y2, y3, y4):
            dist = min(dist, abs((s[0] + np.pi / 2) % np.pi - np.pi / 2))
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + f(y4))
        out.append(y)
    return np.array(out), float(dist)


def reduced_energy(
    n: int,
    theta: np.ndarray,
    omega: np.ndarray,
    l: float = 0.4,
    l0: float = 1.0,
    density: float = 1.0,
    g: float = 9.81,
) -> np.ndarray:
    """``J omega^2 / 2 + K g l sin theta`` [J] (potential zero on the ground line)."""
    J, K = reduced_coefficients(n, l, l0, density)
    return 0.5 * J * np.asarray(omega) ** 2 + K * g * l * np.sin(theta)
