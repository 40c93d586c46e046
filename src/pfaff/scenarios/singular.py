"""Rank-deficient constraint Jacobians in a run, and what the KKT baseline does there.

Aghili Sec. 8 (eq. 65, 70): at a singular configuration the Jacobian A loses
rank; the projection method drops the direction (its SVD threshold
``rank_tol``) while the classical KKT matrix ``[[M, A^T], [A, 0]]`` becomes
singular. :func:`rank_deficient_samples` counts the samples where that
happens; :func:`kkt_at_states` solves the KKT baseline at the very states a
projection run recorded, so the two methods are compared on the same
``(q, v, tau)`` -- sample by sample, not along two diverging trajectories.
"""

from __future__ import annotations

import numpy as np

from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintSet


def rank_deficient_samples(rank: np.ndarray, rows: int) -> int:
    """Number of samples where the rank of A is below its row count.

    Parameters
    ----------
    rank : (T,) integer array
        Rank of A at each sample, judged with the absolute singular-value
        threshold ``rank_tol`` (design.md Sec. 2; the ``rank`` series of a
        trajectory).
    rows : int
        Number of constraint rows m (the row count of A).

    Returns
    -------
    int
        ``#{k : rank[k] < rows}``; 0 for a run that never meets a singular
        configuration or a redundant row.
    """
    rank = np.asarray(rank)
    if rank.ndim != 1:
        raise ValueError(f"rank must be a (T,) array, got shape {rank.shape}")
    if int(rows) < 0:
        raise ValueError(f"rows must be >= 0, got {rows!r}")
    return int(np.count_nonzero(rank < int(rows)))


def kkt_at_states(cset: ConstraintSet, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The KKT baseline solved at each recorded state of a projection run.

    At every sample ``(q, v, tau)`` of ``arrays`` (a trajectory's arrays) the
    system ``[[M, A^T], [A, 0]] [a; lambda] = [tau - h; -A'v]`` is solved
    (:func:`pfaff.dynamics.kkt_dynamics`) and compared with the projection
    method's acceleration ``a`` and least-norm multipliers ``lambda``
    recorded by that run (Aghili eq. 22 and 32).

    Parameters
    ----------
    cset : ConstraintSet
        The constraints of the run (and, through them, the mechanism).
    arrays : dict
        ``q, v, tau, a, lambda`` of the projection run, each (T, .).

    Returns
    -------
    dict
        ``kkt_cond`` (T,) 2-norm condition number of the KKT matrix (also
        where the baseline refuses it: A rank-deficient by ``rank_tol``); ``kkt_a`` (T, nv) and
        ``kkt_lambda`` (T, m) the baseline's solution (NaN where LU failed);
        ``kkt_accel_deviation`` (T,) ``max_i |a_kkt - a|`` [units of a];
        ``kkt_lambda_deviation`` (T,) ``max_i |lambda_kkt - lambda|`` [units of
        lambda]; ``kkt_force_deviation`` (T,) ``max_i |A^T lambda_kkt - F|``
        [units of F] (the multiplier is not unique where A loses rank, the
        force ``F = A^T lambda`` is); ``kkt_solve_failures`` (int) samples
        where the baseline refused the state (A rank-deficient by ``rank_tol``,
        the KKT matrix singular).
    """
    mech = cset.mechanism
    q, v, tau = arrays["q"], arrays["v"], arrays["tau"]
    T, nv, m = len(q), mech.nv, cset.dim
    cond = np.empty(T)
    a_kkt = np.full((T, nv), np.nan)
    lam_kkt = np.full((T, m), np.nan)
    F_kkt = np.full((T, nv), np.nan)
    failures = 0
    for k in range(T):
        snap = mech.compute(q[k], v[k], cset.frames)
        ev = cset.evaluate(snap)
        try:
            a_kkt[k], lam_kkt[k], cond[k] = dyn.kkt_dynamics(
                snap.M, snap.h, tau[k], ev.A, ev.drift
            )
            F_kkt[k] = ev.A.T @ lam_kkt[k]
        except np.linalg.LinAlgError as exc:
            failures += 1
            cond[k] = getattr(exc, "cond", np.inf)
    with np.errstate(invalid="ignore"):
        da = np.abs(a_kkt - arrays["a"]).max(axis=1)
        dF = np.abs(F_kkt - arrays["F"]).max(axis=1)
        dl = np.abs(lam_kkt - arrays["lambda"]).max(axis=1) if m else np.zeros(T)
    return {
        "kkt_cond": cond,
        "kkt_a": a_kkt,
        "kkt_lambda": lam_kkt,
        "kkt_accel_deviation": da,
        "kkt_lambda_deviation": dl,
        "kkt_force_deviation": dF,
        "kkt_solve_failures": failures,
    }
