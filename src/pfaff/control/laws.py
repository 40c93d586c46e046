"""Control laws of constrained systems as plain functions of arrays (Aghili Sec. 7).

Notation as in :mod:`pfaff.dynamics`: ``M a + h = tau - F``, ``P`` projects
onto N(A), ``C v = -A^+ A' v``; ``f_par = P f`` is the potent and
``f_perp = (I - P) f`` the impotent part of a torque.
"""

from __future__ import annotations

import math

import numpy as np

from pfaff.dynamics import Projection
from pfaff.linalg import DEFAULT_RANK_TOL, null_space, pinv, row_space, svd
from pfaff.linalg import solve as linsolve


class TaskError(ValueError):
    """The task coordinates do not parametrise N(A) (Lambda rank-deficient)."""


TASK_REL_TOL = 1e-6
"""``J_theta N`` counts as singular when its smallest singular value is at most
this fraction of ``||J_theta||_F``: a threshold in the units of the task Jacobian
that keeps its meaning for a 1x1 ``J_theta N`` (where a ratio of the product's own
singular values is always 1)."""


def task_regularity(
    J: np.ndarray, N: np.ndarray, rel_tol: float = TASK_REL_TOL
) -> tuple[np.ndarray, float]:
    """Singular values of ``Lambda^-1 = J_theta N`` and the threshold they are judged by.

    The task coordinates parametrise N(A) (Aghili eq. 43: ``Lambda = N (J N)^-1``
    exists) iff ``J N`` is square and its smallest singular value exceeds
    ``rel_tol ||J_theta||_F``. ``N`` is orthonormal, so ``||J N|| <= ||J_theta||``
    and the threshold does not depend on round-off in the product (a task whose
    ``J N`` is 5e-17 instead of 0 is as singular as one that rounds to 0).

    Returns ``(s, tol)``: the singular values of ``J N`` (descending) and
    ``tol = rel_tol ||J_theta||_F``; regular iff square and ``s[-1] > tol``.
    """
    JN = J @ N
    s = np.linalg.svd(JN, compute_uv=False) if JN.size else np.zeros(0)
    tol = rel_tol * (float(np.linalg.norm(J)) if J.size else 0.0)
    return s, tol


def task_acceleration(
    J: np.ndarray,
    Jdot_v: np.ndarray,
    N: np.ndarray,
    Cv: np.ndarray,
    theta_dd_ref: np.ndarray,
    rel_tol: float = TASK_REL_TOL,
) -> tuple[np.ndarray, bool]:
    """Admissible acceleration realising ``theta'' = theta_dd_ref`` (Aghili eq. 40-41, 46).

    With ``N`` an orthonormal basis of N(A), ``Lambda = N (J N)^-1`` spans N(A)
    (eq. 43) and ``u_p = Lambda' theta' + Lambda theta''_ref`` is the unique
    acceleration with ``A u_p = -A' v`` and ``J u_p + J' v = theta''_ref``:
    ``u_p = C v + N z``, ``(J N) z = theta''_ref - J' v - J C v``.

    Returns ``(u_p, ok)``. ``ok`` is False when ``J N`` is not square (the task
    does not have dim N(A) rows, e.g. at a singular configuration where N(A)
    grows) or when its smallest singular value is at most ``rel_tol ||J||_F``
    (:func:`task_regularity`); ``z`` is then the least-squares, least-norm
    solution with the directions below that threshold dropped.
    """
    JN = J @ N
    rhs = theta_dd_ref - Jdot_v - J @ Cv
    if not JN.size:
        return Cv.copy(), False
    U, s, Vt = svd(JN)  # of the k x (n - r) task matrix (A's own factors come with N)
    tol = rel_tol * math.sqrt(float(np.vdot(J, J)))
    keep = s > tol
    z = Vt[keep].T @ ((U[:, keep].T @ rhs) / s[keep])
    return Cv + N @ z, bool(JN.shape[0] == JN.shape[1] and keep.all())


def sqrt_spd(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(W^{1/2}, W^{-1/2})`` of a symmetric positive-definite matrix."""
    w, V = np.linalg.eigh(W)
    if w[0] <= 0:
        raise ValueError("the weight W must be symmetric positive definite")
    r = np.sqrt(w)
    return (V * r) @ V.T, (V / r) @ V.T


def pidc_torque(
    M: np.ndarray,
    h: np.ndarray,
    P: np.ndarray,
    u_p: np.ndarray,
    A: np.ndarray | None = None,
    W: np.ndarray | None = None,
    rank_tol: float = DEFAULT_RANK_TOL,
) -> np.ndarray:
    """Projected inverse-dynamics control ``f_par = h_par + P M u_p`` (Aghili eq. 45).

    Among all torques that produce the acceleration ``u_p`` it has the least
    Euclidean norm (eq. 48). With a weight ``W`` (Sec. 7.2, mixed units) the
    torque of least ``f^T W^-1 f`` is returned instead:
    ``f = W^{1/2} P_W W^{-1/2} (M u_p + h)`` with ``P_W`` the projector onto
    ``N(A W^{-1/2})`` (``A`` is then required).
    """
    g = M @ u_p + h
    if W is None:
        return P @ g
    if A is None:
        raise ValueError("the weighted PIDC needs the constraint Jacobian A")
    Wh, Wmh = sqrt_spd(W)
    V1 = row_space(A @ Wmh, rank_tol).V1
    gw = Wmh @ g
    return Wh @ (gw - V1 @ (V1.T @ gw))


def characteristic_length_weight(prismatic: np.ndarray, kappa: float) -> np.ndarray:
    """Aghili eq. (50): ``W = diag(kappa^-2 on translational, 1 on rotational)``.

    The weighted norm is ``(kappa^2 |f_force|^2 + |f_torque|^2)^{1/2}``.
    """
    if not kappa > 0:
        raise ValueError(f"the characteristic length kappa must be > 0 m, got {kappa!r}")
    return np.diag(np.where(np.asarray(prismatic, bool), kappa**-2, 1.0))


def actuator_limit_weight(limits: np.ndarray) -> np.ndarray:
    """Sec. 7.2: ``W^{1/2} = diag(limits)``: minimises ``|f_i / f_i,max|``."""
    lim = np.asarray(limits, dtype=float)
    if np.any(lim <= 0):
        raise ValueError("actuator limits must be > 0")
    return np.diag(lim**2)


def force_control_torque(
    M: np.ndarray,
    h: np.ndarray,
    proj: Projection,
    f_par: np.ndarray,
    u_F: np.ndarray,
) -> np.ndarray:
    """Constraint-force control ``f_perp`` (Aghili eq. 51) so that ``F = u_F``.

    From eq. (32), ``F = (f_perp - h_perp) - mu (f_par - h_par) - mu C_c v`` with
    ``mu = (I - P) M M_c^-1`` and ``C_c v = M C v``, hence
    ``f_perp = h_perp + mu (f_par - h_par + C_c v) + u_F``. (The paper prints
    ``C q'`` inside the bracket; eq. (32) has ``C_c q' = M C q'``.) ``u_F`` must
    lie in N(A)^perp, e.g. ``A^T lambda``.
    """
    P = proj.P
    PM = P @ M
    Mc = M + PM - PM.T
    hp = P @ h
    x = linsolve(Mc, f_par - hp + M @ proj.Cv)
    mu_x = M @ x
    mu_x = mu_x - P @ mu_x
    return (h - hp) + mu_x + u_F


def hybrid_torque(
    M: np.ndarray, h: np.ndarray, proj: Projection, u_p: np.ndarray, u_F: np.ndarray
) -> np.ndarray:
    """Hybrid motion/force control: (45) + (51),
    ``f = h + mu C_c v + (I + mu) P M u_p + u_F`` (Aghili Sec. 7.3)."""
    f_par = pidc_torque(M, h, proj.P, u_p)
    return f_par + force_control_torque(M, h, proj, f_par, u_F)


def passive_joint_torque(
    P: np.ndarray,
    actuated: np.ndarray,
    f_par: np.ndarray,
    N: np.ndarray | None = None,
) -> tuple[np.ndarray, float, float]:
    """Torque with zero on the passive joints (Aghili eq. 55-62) and controllability (64).

    ``B`` selects the actuated joints; ``f = (I + H) f_par`` with
    ``H = -(I - P) Q^+ (I - B)``, ``Q = (I - B)(I - P)`` (eq. 57-61): the added
    part lies in N(A)^perp, so the motion is unchanged.

    Returns ``(f, sigma, residual)``: ``sigma`` is the smallest singular value
    of ``B N`` (``N`` an orthonormal basis of N(A), computed from P if not
    given); condition (64), ``N(A) n B^perp = {0}``, holds iff ``sigma > 0``.
    ``residual`` is ``max |(I - B) f|``, the torque left on passive joints (0
    when the solvability condition (58) holds).
    """
    n = P.shape[0]
    b = np.zeros(n)
    b[np.asarray(actuated, dtype=int)] = 1.0
    passive = b == 0
    IP = np.eye(n) - P
    Q = IP[passive]  # the non-zero rows of (I - B)(I - P)
    eta = -pinv(Q, 1e-12) @ f_par[passive]  # eq. (59): least-norm eta
    f = f_par + IP @ eta
    if N is None:
        N = null_space(IP, 0.5)  # P is a projector: N(I - P) = R(P) = N(A)
    BN = N[~passive]
    if N.shape[1] == 0:
        sigma = np.inf
    elif BN.shape[0] < N.shape[1]:
        sigma = 0.0
    else:
        sigma = float(np.linalg.svd(BN, compute_uv=False)[-1])
    return f, sigma, float(np.abs(f[passive]).max()) if passive.any() else 0.0


def min_norm_torque(
    M: np.ndarray, h: np.ndarray, A: np.ndarray, a: np.ndarray, W: np.ndarray | None = None
) -> float:
    """Independent witness of eq. (48): the least norm over all torques that produce ``a``.

    Every such torque is ``M a + h + A^T lambda``; the least-squares solve
    over ``lambda`` (SciPy-free ``numpy.linalg.lstsq``) gives the minimum of
    ``|f|`` (or of ``(f^T W^-1 f)^{1/2}`` with a weight).
    """
    g = M @ a + h
    if W is not None:
        _, Wmh = sqrt_spd(W)
        g, At = Wmh @ g, Wmh @ A.T
    else:
        At = A.T
    if At.shape[1] == 0:
        return float(np.linalg.norm(g))
    lam = np.linalg.lstsq(At, -g, rcond=None)[0]
    return float(np.linalg.norm(g + At @ lam))
