"""Drift correction (design.md Sec. 3; Aghili Sec. 6, eq. 39).

After each step: Newton-Raphson ``q <- integrate(q, -A^+ Phi(q))`` on the
holonomic rows until ``max |Phi| < position_tol``, then the velocity is
projected onto N(A) in the metric of M (the impulse that removes the
violating component with the least change of kinetic energy). Pfaffian rows
take part only in the velocity projection.
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.linalg import metric_projection, pinv, svd
from pfaff.mechanism.base import Snapshot


def newton_project(
    cset: ConstraintSet,
    q: np.ndarray,
    position_tol: float = 1e-12,
    max_iter: int = 20,
    rank_tol: float = 1e-9,
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, float, int, Snapshot | None]:
    """Bring ``q`` onto ``Phi(q) = 0`` by Newton-Raphson with the pseudo-inverse.

    ``start`` may give ``(Phi, A_h)`` at ``q`` when the caller has them.
    Returns ``(q, max |Phi|, iterations, snapshot)`` where ``snapshot`` is the
    kinematics snapshot at the returned ``q`` (None if no iteration was
    made); the caller decides whether the final residual is acceptable.
    """
    mech = cset.mechanism
    phi, A = cset.residual(q) if start is None else start
    err = float(np.abs(phi).max()) if phi.size else 0.0
    it = 0
    snap = None
    while err > position_tol and it < max_iter:
        dq = pinv(A, rank_tol) @ phi
        if not np.all(np.isfinite(dq)):
            break
        q = mech.integrate(q, -dq)
        snap = mech.compute(q, None, cset.frames, dynamics=False)
        phi, A = cset.holonomic_terms(snap)
        new = float(np.abs(phi).max())
        it += 1
        if not new < err and new > position_tol:
            err = new
            break  # no progress: stop rather than wander
        err = new
    return q, err, it, snap


def project_velocity(
    v: np.ndarray, A: np.ndarray, M: np.ndarray, rank_tol: float = 1e-9, svd_fn=svd
) -> np.ndarray:
    """Velocity projected onto N(A) in the metric of M (least kinetic-energy change)."""
    return metric_projection(v, A, M, rank_tol, svd_fn)


def correct_state(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray, opt, svd_fn=svd
) -> tuple[np.ndarray, np.ndarray, float, int, float]:
    """The drift correction after one step (design.md Sec. 3).

    Newton-Raphson on the holonomic rows, then the velocity projected onto
    N(A) at the corrected ``q`` in the metric M (evaluated before the
    correction, 1e-12 away). ``opt`` provides ``position_tol``,
    ``max_newton`` and ``rank_tol``.

    ``svd_fn`` factors A for the velocity projection (a
    :class:`~pfaff.linalg.LastSVD` lets the next step reuse it).

    Returns ``(q, v, max |Phi|, Newton iterations, kinetic-energy change)``.
    """
    snap = cset.mechanism.compute(q, v, cset.frames, extras=False)
    ev = cset.evaluate(snap)
    q, err, iters, kin = newton_project(
        cset,
        q,
        opt.position_tol,
        opt.max_newton,
        opt.rank_tol,
        start=(ev.phi, ev.A[ev.holonomic_rows]),
    )
    A = ev.A if kin is None else cset.evaluate(kin).A
    M = snap.M
    v_new = project_velocity(v, A, M, opt.rank_tol, svd_fn)
    dE = 0.5 * float(v_new @ M @ v_new - v @ M @ v)
    return q, v_new, err, iters, dE
