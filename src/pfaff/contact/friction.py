"""The NumPy reference of the dynamics with contact points that slip with Coulomb
friction (the core's ``src/cpp/algorithms/friction.cpp``, the same equations).

A slipping point's friction ``-mu f_n s`` acts at its body point, ``s`` its unit slip
velocity, so that the generalised force of its normal row is
``(A_n - mu s^T J_p)^T lambda_n`` (``lambda_n <= 0`` while it pushes). With ``W`` the
rows ``A`` so changed, ``M a + h = tau - W^T lambda`` and ``A a = -drift`` give the
non-symmetric system ``(A M^-1 W^T) lambda = A M^-1 (tau - h) + drift``, solved
minimum-norm (redundant rows: the four corners of a box on a plane).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SlipPoint", "slip_dynamics", "slip_rows"]

#: below this slip speed a point slips along its ``s0`` [m/s] (the core's)
SLIP_SPEED = 1e-10


@dataclass(frozen=True)
class SlipPoint:
    """A held contact row that slips.

    Attributes
    ----------
    row : its row of ``A``.
    Jp : the 3 x nv Jacobian of its body point's velocity (world frame).
    normal : the contact normal (unit, world frame).
    mu : Coulomb's coefficient.
    s0 : the slip direction at the step's start (unit, tangent): the direction while the
        slip speed is 0 or turned against it.
    """

    row: int
    Jp: np.ndarray
    normal: np.ndarray
    mu: float
    s0: np.ndarray


def slip_rows(A: np.ndarray, v: np.ndarray, points: list[SlipPoint]) -> np.ndarray:
    """``W``: the rows ``A`` with each slipping row minus ``mu s^T J_p`` of its point,
    ``s`` the unit tangential velocity of the point at ``v`` (its ``s0``, the slip
    direction at the step's start, below :data:`SLIP_SPEED` or where the velocity turned
    against it)."""
    W = np.array(A, float, copy=True)
    for p in points:
        vp = p.Jp @ v
        vt = vp - p.normal * (p.normal @ vp)
        speed = np.linalg.norm(vt)
        s0 = np.asarray(p.s0, float)
        s = vt / speed if speed > SLIP_SPEED and vt @ s0 > 0 else s0
        W[p.row] -= p.mu * (s @ p.Jp)
    return W


def slip_dynamics(
    M: np.ndarray,
    f: np.ndarray,
    A: np.ndarray,
    drift: np.ndarray,
    W: np.ndarray,
    rank_tol: float = 1e-9,
) -> tuple[np.ndarray, np.ndarray]:
    """The acceleration and the multipliers of ``M a = f - W^T lambda``, ``A a = -drift``.

    Parameters
    ----------
    M : the mass matrix (nv x nv, symmetric positive definite).
    f : ``tau - h`` (nv).
    A, drift : the active rows (m x nv) and their drift (m).
    W : the rows whose transpose times ``lambda`` is the generalised force (m x nv).
    rank_tol : singular values of ``A M^-1 W^T`` below ``rank_tol`` times the largest
        are dropped (the minimum-norm ``lambda``).

    A slipping row (``W``'s row differs from ``A``'s) whose multiplier pulls is solved
    again without its friction (Coulomb's ``|f_t| <= mu max(0, f_n)``), once.

    Returns
    -------
    a, lam : the acceleration (nv) and the multipliers (m).
    """
    M, f, A, drift, W = (np.asarray(x, float) for x in (M, f, A, drift, W))
    nv = M.shape[0]
    if M.shape != (nv, nv) or f.shape != (nv,) or A.ndim != 2 or A.shape[1] != nv:
        raise ValueError(
            f"M must be (nv, nv), f (nv,), A (m, nv): got {M.shape}, {f.shape}, {A.shape}"
        )
    if W.shape != A.shape or drift.shape != (A.shape[0],):
        raise ValueError(f"W must be {A.shape} and drift ({A.shape[0]},): got {W.shape}, "
                         f"{drift.shape}")  # fmt: skip
    Mif = np.linalg.solve(M, f)

    def solve(W):
        MiWt = np.linalg.solve(M, W.T)
        return MiWt, np.linalg.pinv(A @ MiWt, rcond=rank_tol) @ (A @ Mif + drift)

    MiWt, lam = solve(W)
    # a slipping row whose multiplier pulls carries no friction (Coulomb's |f_t| <= mu
    # max(0, f_n): friction turned round would push along the slip), solved once more
    pulls = np.any(W != A, axis=1) & (lam > 0.0)
    if np.any(pulls):
        W = W.copy()
        W[pulls] = A[pulls]
        MiWt, lam = solve(W)
    return Mif - MiWt @ lam, lam
