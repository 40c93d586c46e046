"""Assembly: bring a start onto the constraint manifold and judge rank and dof there.

A model file's start (a keyframe, the default posture) may leave its loops open
by millimetres -- enough to hide a redundant row from the SVD (its smallest
singular value is then ~1e-3 instead of ~1e-16). :func:`assemble` closes them
by Newton-Raphson in the tangent space (``q <- integrate(q, -t A^+ Phi)``,
Pinocchio-style, the step ``t`` halved while ``|Phi|_2`` does not decrease), to
``tol`` (default 1e-12), and only then counts the rank of ``A`` with the
absolute threshold ``rank_tol`` (design.md Sec. 2): ``dof = nv - rank``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.linalg import metric_projection, pinv
from pfaff.simulate.trajectory import InitialStateError


@dataclass(frozen=True)
class Assembly:
    """An assembled start.

    Attributes
    ----------
    q, v : the configuration on the manifold and the velocity projected onto
        N(A) in the metric of M.
    displacement : ``|difference(q_start, q)|`` (tangent-space norm; m and rad mixed).
    residual : largest ``|Phi_i(q)|`` reached.
    iterations : Newton-Raphson iterations.
    rows, rank, dof : constraint rows, rank of A at ``q``, ``nv - rank``.
    sigma : singular values of A at ``q`` (descending).
    """

    q: np.ndarray
    v: np.ndarray
    displacement: float
    residual: float
    iterations: int
    rows: int
    rank: int
    dof: int
    sigma: np.ndarray


#: a start moved farther than this onto the manifold (tangent-space norm) is announced
MOVED_TOL = 1e-6


def moved_note(displacement: float, start: str) -> str | None:
    """The warning that the start (``start`` says which, e.g. "keyframe 'open'") was
    moved ``displacement`` (tangent-space norm of ``difference(start, assembled)``) onto
    the constraint manifold; None when it moved no farther than :data:`MOVED_TOL`."""
    if not displacement > MOVED_TOL:
        return None
    return (
        f"assembly moved the start ({start}) by {displacement:.3g} (tangent-space distance, "
        "rad and m) onto the constraint manifold: the run starts there"
    )


def _norm(phi: np.ndarray) -> float:
    return float(np.abs(phi).max()) if phi.size else 0.0


def assemble(
    cset: ConstraintSet,
    q_start: np.ndarray,
    v_start: np.ndarray | None = None,
    tol: float = 1e-12,
    max_iter: int = 100,
    rank_tol: float = 1e-9,
) -> Assembly:
    """Newton-Raphson in the tangent space from ``q_start`` to ``max |Phi| <= tol``.

    Raises :class:`~pfaff.simulate.InitialStateError` with the residual reached
    when no assembled state is found near the start (no decrease of ``|Phi|``
    along the Newton direction, or ``max_iter`` iterations).
    """
    mech = cset.mechanism
    q = np.asarray(q_start, dtype=float).copy()
    v = np.zeros(mech.nv) if v_start is None else np.asarray(v_start, dtype=float)
    mech.check_state(q, v)
    phi, A = cset.holonomic_terms_at(q)
    err, it = _norm(phi), 0
    while err > tol and it < max_iter:
        dq = pinv(A, rank_tol) @ phi
        t, improved = 1.0, False
        while t > 1e-6:
            q_try = mech.integrate(q, -t * dq)
            phi_try, A_try = cset.holonomic_terms_at(q_try)
            if np.linalg.norm(phi_try) < np.linalg.norm(phi):
                improved = True
                break
            t *= 0.5
        it += 1
        if not improved:
            break
        q, phi, A, err = q_try, phi_try, A_try, _norm(phi_try)
    if not err <= tol:
        raise InitialStateError(
            f"no assembled state near the start: max |Phi| = {err:.3g} after {it} "
            f"Newton-Raphson iterations (tolerance {tol:g}); the start leaves a loop "
            "too far open, or the constraints have no common solution"
        )
    snap = mech.compute(q, v, cset.frames)
    A = cset.evaluate(snap).A
    sigma = np.linalg.svd(A, compute_uv=False) if A.size else np.zeros(0)
    rank = int(np.count_nonzero(sigma > rank_tol))
    v1 = metric_projection(v, A, snap.M, rank_tol) if A.shape[0] else v.copy()
    return Assembly(
        q=q,
        v=v1,
        displacement=float(np.linalg.norm(mech.difference(np.asarray(q_start, float), q))),
        residual=err,
        iterations=it,
        rows=int(A.shape[0]),
        rank=rank,
        dof=mech.nv - rank,
        sigma=sigma,
    )
