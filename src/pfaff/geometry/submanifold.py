"""Constraint submanifolds of the inertia metric: kernel/image split and geodesics.

Arimoto Sec. 4: on ``Phi(q) = 0`` (rows of ``A = dPhi/dq``; Arimoto's single
row is ``w^T``) the tangent space is ``ker A``; the constraint force lies in
the image of the metric gradient ``grad Phi = M^-1 A^T`` (eq. (31)), which is
M-orthogonal to the kernel. Geodesics of the submanifold satisfy

    q'' + Gamma2(q', q') = -M^-1 A^T lambda,   Phi(q) = 0          (eq. (30))

with ``lambda = (A M^-1 A^T)^-1 (A' q' - A Gamma2(q', q'))`` (eq. (34), from
differentiating ``A q' = 0`` once more, eq. (33)). In Euclidean-orthonormal
kernel coordinates ``q' = K eta'`` (eq. (37); Arimoto's P, here ``K`` because
``P`` is the projector ``I - A^+ A`` elsewhere in pfaff) the induced metric is
``K^T M K`` (eq. (39)). Sign convention: Aghili's ``M a + h = tau - A^T lambda``
(design.md Sec. 2), which is Arimoto's eq. (30) multiplied by M.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from pfaff.constraints.base import ConstraintSet
from pfaff.geometry.geodesic import ATOL, RTOL, BVPError, Geodesic, shoot
from pfaff.geometry.metric import check_metric, check_posture, geodesic_acceleration
from pfaff.linalg import metric_projection, null_space


def induced_metric(M: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(K, K^T M K)``: Euclidean-orthonormal basis ``K`` (n, n - m) of ``ker A``
    (:func:`pfaff.linalg.null_space`, Arimoto's P of eq. (37)) and the metric of
    the submanifold (eq. (38)-(39))."""
    M = check_metric(M)
    K = null_space(np.atleast_2d(np.asarray(A, dtype=float)))
    return K, K.T @ M @ K


def m_orthonormal_kernel_basis(M: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Basis ``E`` of ``ker A`` with ``E^T M E = I`` (orthonormal in the metric)."""
    K, G = induced_metric(M, A)
    L = np.linalg.cholesky(G)
    return np.linalg.solve(L, K.T).T  # K L^-T


def metric_gradient(M: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``grad Phi = M^-1 A^T`` (n, m), the image directions (Arimoto eq. (31))."""
    return np.linalg.solve(check_metric(M), np.atleast_2d(A).T)


def split_velocity(M: np.ndarray, A: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kernel/image split ``v = v_ker + v_img`` with ``<v_ker, v_img>_M = 0``.

    ``v_img = M^-1 A^T (A M^-1 A^T)^-1 A v`` lies in the image of the metric
    gradient (eq. (31)) and ``A v_ker = 0``: ``v_ker`` is the velocity projection
    :func:`pfaff.linalg.metric_projection` (the one implementation in pfaff).
    """
    v = np.asarray(v, dtype=float)
    v_ker = metric_projection(v, A, check_metric(M))
    return v_ker, v - v_ker


def geodesic_multiplier(
    M: np.ndarray, A: np.ndarray, drift: np.ndarray, gamma_vv: np.ndarray
) -> np.ndarray:
    """Multiplier of a submanifold geodesic (Arimoto eq. (34)).

    ``lambda = (A M^-1 A^T)^-1 (A' q' - A Gamma2(q', q'))`` with
    ``drift = A' q'`` and ``gamma_vv = Gamma2(q', q')``.
    """
    A = np.atleast_2d(A)
    W = metric_gradient(M, A)
    return np.linalg.solve(A @ W, drift - A @ gamma_vv)


def _terms(cset: ConstraintSet, q: np.ndarray, v: np.ndarray):
    snap = cset.mechanism.compute(q, v, cset.frames)
    ev = cset.evaluate(snap)
    return snap, ev


def constrained_geodesic_acceleration(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(a, lambda)`` of eq. (30)/(34): ``a = -Gamma2(v, v) - M^-1 A^T lambda``."""
    snap, ev = _terms(cset, q, v)
    gvv = -geodesic_acceleration(cset.mechanism, q, v)
    lam = geodesic_multiplier(snap.M, ev.A, ev.drift, gvv)
    return -gvv - np.linalg.solve(snap.M, ev.A.T @ lam), lam


@dataclass
class ConstrainedGeodesic(Geodesic):
    """A :class:`Geodesic` on ``Phi = 0`` with its multipliers and residuals.

    Attributes
    ----------
    lam : (K, m) multipliers of eq. (34).
    phi : (K, m_h) holonomic residuals along the curve.
    """

    lam: np.ndarray | None = None
    phi: np.ndarray | None = None


def _check_on_manifold(cset: ConstraintSet, q: np.ndarray, what: str, tol: float) -> None:
    phi, _ = cset.holonomic_terms_at(q)
    err = float(np.abs(phi).max()) if phi.size else 0.0
    if err > tol:
        raise ValueError(
            f"{what} is not on the constraint submanifold: max |Phi| = {err:.3g} > {tol:.1g} "
            "(project it first, e.g. with pfaff.simulate.newton_project)"
        )


def integrate_constrained_geodesic(
    cset: ConstraintSet,
    q0,
    v0,
    T: float = 1.0,
    n_samples: int = 101,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> ConstrainedGeodesic:
    """Integrate eq. (30) with eq. (34) from ``(q0, v0)`` (``A v0 = 0`` required up to 1e-9)."""
    mech = cset.mechanism
    n = mech.nv
    q0 = check_posture(q0, n, "initial posture")
    v0 = check_posture(v0, n, "initial velocity")
    _, ev = _terms(cset, q0, v0)
    if ev.A.size and float(np.abs(ev.A @ v0).max()) > 1e-9:
        raise ValueError("initial velocity must be tangent to the submanifold (A v0 = 0)")

    def rhs(_t, y):
        return np.concatenate([y[n:], constrained_geodesic_acceleration(cset, y[:n], y[n:])[0]])

    t_eval = np.linspace(0.0, T, max(int(n_samples), 2))
    sol = solve_ivp(
        rhs, (0.0, T), np.concatenate([q0, v0]), "DOP853", t_eval, rtol=rtol, atol=atol
    )
    if not sol.success:
        raise BVPError(f"constrained geodesic integration failed: {sol.message}")
    q, v = sol.y[:n].T, sol.y[n:].T
    lam = np.array([constrained_geodesic_acceleration(cset, a, b)[1] for a, b in zip(q, v)])
    phi = np.array([cset.holonomic_terms_at(qi)[0] for qi in q])
    speed2 = float(v0 @ mech.compute(q0).M @ v0)
    return ConstrainedGeodesic(
        sol.t,
        q,
        v,
        np.sqrt(speed2) * T,
        0.5 * speed2 * T,
        nfev=sol.nfev,
        lam=lam,
        phi=phi,
    )


def shoot_constrained_geodesic(
    cset: ConstraintSet,
    p0,
    p1,
    tol: float = 1e-9,
    n_samples: int = 101,
    max_nfev: int = 60,
) -> ConstrainedGeodesic:
    """Geodesic of the submanifold from ``p0`` to ``p1`` (both on ``Phi = 0``), t in [0, 1].

    The initial velocity is ``v0 = K eta0`` with K the kernel basis at ``p0``
    (eq. (37)); ``eta0`` solves ``q(1) = p1`` in the least-squares sense
    (n equations, n - m unknowns, consistent at the solution), warm-started
    from the kernel projection of ``p1 - p0``. Its length is the submanifold
    distance (eq. (28)-(29)) for the minimizing geodesic.

    Raises
    ------
    BVPError
        When ``max |q(1) - p1| > tol`` (the residual is in the message).
    ValueError
        Postures of the wrong size or off the submanifold.
    """
    n = cset.mechanism.nv
    p0 = check_posture(p0, n, "start posture")
    p1 = check_posture(p1, n, "end posture")
    _check_on_manifold(cset, p0, "start posture", 1e-9)
    _check_on_manifold(cset, p1, "end posture", 1e-9)
    _, A0 = cset.holonomic_terms_at(p0)
    K = null_space(np.atleast_2d(np.asarray(A0, dtype=float)))

    return shoot(
        lambda eta, n_s: integrate_constrained_geodesic(cset, p0, K @ eta, 1.0, n_s),
        K.T @ (p1 - p0),
        p1,
        tol,
        n_samples,
        max_nfev,
        "constrained shooting",
    )


def submanifold_distance(cset: ConstraintSet, p0, p1, tol: float = 1e-9) -> float:
    """Distance on the constraint submanifold (Arimoto eq. (29)) by shooting."""
    return shoot_constrained_geodesic(cset, p0, p1, tol=tol, n_samples=2).length
