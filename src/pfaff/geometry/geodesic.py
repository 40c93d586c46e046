"""Geodesics of the inertia metric: integration, length, energy, shooting, distance.

Arimoto Sec. 2-3: with ``u = 0`` and no gravity, Lagrange's equation is the
geodesic equation ``q'' + Gamma2(q)(q', q') = 0`` (eq. (8)/(20)); motions keep
the speed ``|q'|_M`` constant (eq. (23)), and the distance between two postures
is the infimum of lengths (eq. (22)). Coordinates are the joint angles taken
in R^n (the universal cover of the torus T^n): a posture and the same posture
shifted by 2 pi are different points here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

from pfaff.geometry.metric import (
    MetricSource,
    check_posture,
    dimension,
    geodesic_acceleration,
    metric,
)

RTOL = 1e-12
ATOL = 1e-12


class BVPError(ValueError):
    """The shooting method did not reach the target posture."""


@dataclass
class Geodesic:
    """A geodesic sampled on ``t in [0, T]``.

    Attributes
    ----------
    t : (K,) sample times.
    q, v : (K, n) positions and velocities.
    length : ``|v0|_M T`` (eq. (7) with constant speed).
    energy : ``1/2 |v0|_M^2 T`` (eq. (10)).
    residual : ``max |q(T) - target|`` for a boundary-value solution (0 else).
    nfev : number of right-hand-side evaluations of the last integration.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    length: float
    energy: float
    residual: float = 0.0
    nfev: int = 0

    @property
    def distance(self) -> float:
        """Riemannian distance d(p, p') (eq. (22)) when this geodesic is minimizing."""
        return self.length


def integrate_geodesic(
    source: MetricSource,
    q0,
    v0,
    T: float = 1.0,
    n_samples: int = 101,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Geodesic:
    """Integrate ``q'' = -Gamma2(q)(q', q')`` from ``(q0, v0)`` over ``[0, T]``.

    SciPy ``solve_ivp`` with DOP853 (8th order) at tight tolerances; the
    solution is sampled at ``n_samples`` evenly spaced times.
    """
    n = dimension(source, q0)
    q0 = check_posture(q0, n, "initial posture")
    v0 = check_posture(v0, n, "initial velocity")
    if not (np.isfinite(T) and T > 0):
        raise ValueError(f"T must be > 0, got {T!r}")
    M0 = metric(source, q0)

    def rhs(_t, y):
        return np.concatenate([y[n:], geodesic_acceleration(source, y[:n], y[n:])])

    t_eval = np.linspace(0.0, T, max(int(n_samples), 2))
    sol = solve_ivp(
        rhs, (0.0, T), np.concatenate([q0, v0]), "DOP853", t_eval, rtol=rtol, atol=atol
    )
    if not sol.success:
        raise BVPError(f"geodesic integration failed: {sol.message}")
    speed2 = float(v0 @ M0 @ v0)
    return Geodesic(
        sol.t, sol.y[:n].T, sol.y[n:].T, np.sqrt(speed2) * T, 0.5 * speed2 * T, nfev=sol.nfev
    )


def kinetic_energy(source: MetricSource, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``1/2 q'^T M(q) q'`` at each sample (Arimoto eq. (14)); (K,)."""
    return np.array([0.5 * vi @ metric(source, qi) @ vi for qi, vi in zip(q, v)])


def _speed(source: MetricSource, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.sqrt(2.0 * kinetic_energy(source, q, v))


def _simpson(t: np.ndarray, f: np.ndarray) -> float:
    from scipy.integrate import simpson

    return float(simpson(f, x=t))


def curve_length(source: MetricSource, t, q, v) -> float:
    """Length ``int |c'(t)|_M dt`` of a sampled curve (Arimoto eq. (7)), Simpson's rule."""
    t, q, v = np.asarray(t, float), np.asarray(q, float), np.asarray(v, float)
    return _simpson(t, _speed(source, q, v))


def curve_energy(source: MetricSource, t, q, v) -> float:
    """Energy ``1/2 int |c'(t)|_M^2 dt`` of a sampled curve (Arimoto eq. (10))."""
    t, q, v = np.asarray(t, float), np.asarray(q, float), np.asarray(v, float)
    return _simpson(t, kinetic_energy(source, q, v))


def segment_length(source: MetricSource, p0, p1, n_nodes: int = 40) -> float:
    """Metric length of the straight joint-space segment ``p0 + s (p1 - p0)``, s in [0, 1].

    Gauss-Legendre quadrature with ``n_nodes`` nodes (the integrand is smooth).
    """
    n = dimension(source, p0)
    p0, p1 = check_posture(p0, n, "start posture"), check_posture(p1, n, "end posture")
    x, w = np.polynomial.legendre.leggauss(n_nodes)
    s = 0.5 * (x + 1.0)
    d = p1 - p0
    speeds = [np.sqrt(d @ metric(source, p0 + si * d) @ d) for si in s]
    return float(0.5 * w @ np.array(speeds))


def shoot_geodesic(
    source: MetricSource,
    p0,
    p1,
    v_guess=None,
    tol: float = 1e-10,
    n_samples: int = 101,
    max_nfev: int = 60,
) -> Geodesic:
    """Geodesic from ``p0`` to ``p1`` on ``t in [0, 1]`` by single shooting.

    Solves ``q(1; p0, v0) = p1`` for ``v0`` with ``scipy.optimize.least_squares``
    (trust region, finite-difference Jacobian, at most ``max_nfev``
    evaluations of the shooting map), warm-started from the straight
    line ``v0 = p1 - p0``. With T = 1 the length equals the speed and, for the
    minimizing geodesic, the distance d(p0, p1) (Arimoto eq. (22)); the warm
    start selects the geodesic homotopic to the straight segment, which is the
    minimizing one for postures that are not too far apart.

    Raises
    ------
    BVPError
        When ``max |q(1) - p1| > tol`` at the end (the residual is in the message).
    ValueError
        For postures of the wrong size.
    """
    n = dimension(source, p0)
    p0 = check_posture(p0, n, "start posture")
    p1 = check_posture(p1, n, "end posture")
    v_start = p1 - p0 if v_guess is None else check_posture(v_guess, n, "velocity guess")
    metric(source, p0)
    metric(source, p1)

    return shoot(
        lambda v0, n_s: integrate_geodesic(source, p0, v0, 1.0, n_s),
        v_start,
        p1,
        tol,
        n_samples,
        max_nfev,
        "shooting",
    )


def shoot(integrate, x_start, p1, tol: float, n_samples: int, max_nfev: int, what: str):
    """Single shooting: solve ``integrate(x, 2).q[-1] = p1`` for ``x`` by least squares.

    ``integrate(x, n_samples)`` returns a geodesic whose ``q`` ends at ``t = 1``;
    the converged one is returned with its ``residual`` set, or :class:`BVPError`
    is raised with the residual in the message.
    """

    def F(x):
        return integrate(x, 2).q[-1] - p1

    sol = least_squares(F, x_start, xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=max_nfev)
    geo = integrate(sol.x, n_samples)
    geo.residual = float(np.abs(geo.q[-1] - p1).max())
    if not np.isfinite(geo.residual) or geo.residual > tol:
        raise BVPError(
            f"{what} did not converge: max |q(1) - p1| = {geo.residual:.3g} "
            f"(tolerance {tol:.1g}); solver: {sol.message}"
        )
    return geo


def distance(source: MetricSource, p0, p1, tol: float = 1e-10) -> float:
    """Riemannian distance d(p0, p1) (Arimoto eq. (22)): length of the shot geodesic."""
    return shoot_geodesic(source, p0, p1, tol=tol, n_samples=2).length
