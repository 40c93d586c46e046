"""Independent witnesses of a controlled run (Aghili Sec. 7): numbers that a wrong
controller or a wrong constraint model would make large.

Each witness is computed from the recorded plant (``q, v, tau`` of the
trajectory), the model terms ``M, h, A`` and the task *definition* (its
Jacobian, reference and gains), with SciPy's own least-squares and null-space
routines -- never from the controller's projector, its internal torques or the
velocity correction's residuals.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from pfaff.constraints.base import ConstraintSet


def least_norm_torque(
    M: np.ndarray,
    h: np.ndarray,
    A: np.ndarray,
    drift: np.ndarray,
    J: np.ndarray,
    task_rhs: np.ndarray,
    lam: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """The least-norm torque realising a task acceleration (and a constraint force).

    Minimises ``|tau|`` with ``tau = M a + h + A^T lambda`` (the equation of
    motion ``M a + h = tau - A^T lambda``) over all accelerations with
    ``A a = -drift`` (admissible) and ``J a = task_rhs`` (the task's commanded
    acceleration ``theta''_ref - J' v``), and over all ``lambda`` -- or with
    ``lambda = lam`` fixed (a commanded constraint force). Without a force
    command this is Aghili's eq. (48) minimum ``P (M u_p + h)``; with one, the
    torque is unique (``M u_p + h + A^T lam``). Solved as an equality-
    constrained least-squares problem: a particular solution of the
    constraints by ``scipy.linalg.lstsq``, their null space by
    ``scipy.linalg.null_space``, then the least-squares minimum over it.

    Returns ``(tau, infeasibility)``, the latter ``max |E x - d|`` of the
    constraints (non-zero when the task and the constraint contradict).
    """
    m = A.shape[0]
    if lam is None:
        G = np.hstack([M, A.T])
        E = np.block([[A, np.zeros((m, m))], [J, np.zeros((J.shape[0], m))]])
        c = h
    else:
        G, E, c = M, np.vstack([A, J]), h + A.T @ lam
    d = np.concatenate([-drift, task_rhs])
    x0 = sla.lstsq(E, d)[0]
    infeasible = float(np.abs(E @ x0 - d).max()) if d.size else 0.0
    Z = sla.null_space(E)
    if Z.shape[1]:
        y = sla.lstsq(G @ Z, -(G @ x0 + c))[0]
        x0 = x0 + Z @ y
    return G @ x0 + c, infeasible


def min_norm_gap(ctrl, arrays: dict[str, np.ndarray]) -> float:
    """Largest ``|tau - tau*|`` over a run [N m] (Aghili eq. 45-48, 51-52).

    ``tau`` is the torque the plant received (trajectory ``tau``) and ``tau*``
    the least-norm torque, found by :func:`least_norm_torque` from ``M, h, A``
    and the task's Jacobian, over all torques that give, at the sampled
    state, the acceleration the task commands (``theta''_d + G_D (theta'_d -
    J v) + G_P (theta_d - theta)``, from the reference and gains) and, for a
    hybrid controller, the constraint force it commands (``lambda_u`` of
    eq. 52, the controller's recorded signal). A torque added in N(A)^perp
    (it changes the contact force but not the motion), or in N(A) (it changes
    the motion), or a controller built on a wrong constraint, shows up here.

    Every recorded sample must be a controller sample (``control_dt = dt``,
    ``record_every = 1``): the torque at a sample is the one computed there.
    """
    cset: ConstraintSet = ctrl.cset
    mech, task = cset.mechanism, ctrl.task
    frames = tuple(dict.fromkeys((*cset.frames, *task.frames)))
    hybrid = getattr(ctrl, "force", None) is not None
    if hybrid and "lambda_u" not in arrays:
        raise ValueError("a hybrid run must record the commanded multipliers 'lambda_u'")
    lam_u = arrays["lambda_u"].reshape(len(arrays["t"]), -1) if hybrid else None
    gap = 0.0
    for k, (t, q, v, tau) in enumerate(zip(arrays["t"], arrays["q"], arrays["v"], arrays["tau"])):
        snap = mech.compute(q, v, frames)
        ev = cset.evaluate(snap)
        J = task.jacobian(snap)
        th_d, dth_d, ddth_d = (np.asarray(x, dtype=float) for x in ctrl.reference(t))
        e = task.error(th_d, snap)
        ref = ddth_d + ctrl.kd * (dth_d - J @ v) + ctrl.kp * e
        lam = None if lam_u is None else lam_u[k]
        best, _ = least_norm_torque(snap.M, snap.h, ev.A, ev.drift, J, ref - task.drift(snap), lam)
        gap = max(gap, float(np.linalg.norm(tau - best)))
    return gap


def force_before_sample(cset: ConstraintSet, arrays: dict[str, np.ndarray]) -> np.ndarray:
    """Multipliers a force sensor reads just before each sample, by a KKT solve (T-1, m).

    At sample ``k >= 1`` the state is ``(q_k, v_k)`` and the torque still
    held is ``tau_{k-1}``: ``[M A^T; A 0] [a; lambda] = [tau_{k-1} - h; -drift]``
    (``scipy.linalg.lstsq``; an independent route to the force, not the
    simulator's projection). Needs a controller sample at every recorded
    sample (``control_dt = dt``).
    """
    mech = cset.mechanism
    out = []
    for q, v, tau in zip(arrays["q"][1:], arrays["v"][1:], arrays["tau"][:-1]):
        snap = mech.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        m = ev.A.shape[0]
        K = np.block([[snap.M, ev.A.T], [ev.A, np.zeros((m, m))]])
        sol = sla.lstsq(K, np.concatenate([tau - snap.h, -ev.drift]))[0]
        out.append(sol[mech.nv :])
    return np.array(out).reshape(-1, cset.dim)
