"""Control with the sign of the contact force: a QP that tracks a task while every held
contact's force pushes and stays inside its friction cone (Aghili Sec. 7.3).

Aghili's motion control (Sec. 7.1, eq. 45) takes the least-norm torque that gives the
wanted motion; on unilateral contacts that torque may make a contact pull or slip ("the
proposed controller doesn't guarantee that the sign of the constraint force will not
change", Sec. 7.3). Here the torque's part that moves nothing (the impotent part, which
sets only the constraint forces) is chosen so that it does not: with the held mode's
acceleration ``a = a0 + K_a u`` and each contact point's force ``f_p = f0_p + K_f,p u``
affine in the driven torque ``u`` (:mod:`pfaff.api.contact_response`),

    min_u  ||S a(u) - a_d||^2 + w ||u||^2
    s.t.   n_p . f_p >= f_min,   |t_i . f_p| <= mu_p / sqrt(2) n_p . f_p  (i = 1, 2)

(the cone ``|f_t| <= mu f_n`` inside its four-sided pyramid), solved by ProxQP
(proxsuite, Simple-Robotics' QP solver, the one Pinocchio's authors keep), its solution
then made exact on its active set (:func:`_polish`); without the conditions, the
unconstrained minimum by one linear solve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ForceSignQP", "cone_rows", "force_sign_qp"]

#: ProxQP's most outer and inner iterations per QP (a solved QP here takes 10-200)
MAX_ITER = 200


@dataclass(frozen=True)
class ForceSignQP:
    """A solved QP: ``u`` the driven torque, ``status`` ProxQP's (``"solved"`` or why
    not; ``"solved"`` for the unconstrained minimum, which takes no ProxQP), ``slack``
    the least margin of the constraints at ``u`` [N] (>= 0 when they hold, to the
    solver's tolerance; infinite without constraints)."""

    u: np.ndarray
    status: str
    slack: float


def _tangents(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors normal to unit ``n`` and to each other."""
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    t1 = np.cross(n, helper)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def cone_rows(normals: np.ndarray, mu: np.ndarray, f_min: float) -> tuple[np.ndarray, np.ndarray]:
    """``G`` (5 P, 3 P) and ``h`` (5 P,) with ``G f <= h`` the pushing and pyramid
    conditions on the stacked forces ``f`` (3 P,) of points with unit ``normals`` (P, 3)
    and friction ``mu`` (P,): ``-n . f <= -f_min`` and ``(+-t_i - mu / sqrt(2) n) . f <=
    0``."""
    P = len(normals)
    G, h = np.zeros((5 * P, 3 * P)), np.zeros(5 * P)
    for p, (n, m) in enumerate(zip(np.asarray(normals, float), np.asarray(mu, float))):
        t1, t2 = _tangents(n / np.linalg.norm(n))
        rows = [-n] + [s * t - m / np.sqrt(2.0) * n for t in (t1, t2) for s in (1.0, -1.0)]
        G[5 * p : 5 * p + 5, 3 * p : 3 * p + 3] = rows
        h[5 * p] = -float(f_min)
    return G, h


def force_sign_qp(
    a0: np.ndarray,
    K_a: np.ndarray,
    f0: np.ndarray,
    K_f: np.ndarray,
    normals: np.ndarray,
    mu: np.ndarray,
    S: np.ndarray,
    a_d: np.ndarray,
    f_min: float = 0.0,
    weight: float = 1e-4,
    cones: bool = True,
) -> ForceSignQP:
    """The driven torque ``u`` of the QP of the module docstring.

    Parameters
    ----------
    a0, K_a : the held mode's acceleration (nv,) at ``u = 0`` and its map (nv, k).
    f0, K_f : the contact points' forces (P, 3) [N] at ``u = 0`` and their map (P, 3, k).
    normals, mu : (P, 3) unit normals into the moving geoms, (P,) friction coefficients.
    S, a_d : (m, nv) the task's rows of the acceleration and their wanted values (m,).
    f_min : the least normal force each point must keep [N] (>= 0).
    weight : ``w``, the torque's weight against the task's error [(m/s^2 / N m)^2]
        (1e-4: far smaller makes the QP ill-conditioned and ProxQP slow to converge).
    cones : False drops the force conditions: Aghili's least-norm motion control, the
        witness of what the conditions change.
    """
    import proxsuite

    k = K_a.shape[1]
    if not (np.isfinite(f_min) and f_min >= 0 and weight > 0):
        raise ValueError(f"f_min must be >= 0 N and weight > 0; got {f_min}, {weight}")
    J = S @ K_a
    H = J.T @ J + weight * np.eye(k)
    g = J.T @ (S @ a0 - a_d)
    if cones and len(f0):
        G, hc = cone_rows(normals, mu, f_min)
        C = G @ K_f.reshape(-1, k)  # G (f0 + K_f u) <= h
        upper = hc - G @ f0.reshape(-1)
    else:
        C, upper = np.zeros((0, k)), np.zeros(0)
    if not len(upper):  # no force conditions: the unconstrained minimum, exactly
        return ForceSignQP(np.linalg.solve(H, -g), "solved", float("inf"))
    qp = proxsuite.proxqp.dense.QP(k, 0, len(upper))
    qp.settings.eps_abs = 1e-7
    qp.settings.eps_primal_inf = qp.settings.eps_dual_inf = 1e-14
    qp.settings.max_iter = qp.settings.max_iter_in = MAX_ITER  # bounded: never a hang
    qp.init(H, g, None, None, C, None, upper)
    qp.solve()
    u = _polish(H, g, C, upper, np.asarray(qp.results.x, dtype=float))
    status = str(qp.results.info.status).rsplit(".", 1)[-1].removeprefix("PROXQP_").lower()
    return ForceSignQP(u, status, float(np.min(upper - C @ u)))


#: a condition whose margin at ProxQP's solution is below this is taken as active [N]
ACTIVE = 1e-6


def _polish(H, g, C, upper, u):
    """ProxQP's ``u`` (to its tolerance 1e-7; proxsuite 0.8's dense solver returns
    results that differ in their last digits between calls on the same data, which a
    run's events amplify) made the exact minimum on its active set: the KKT system
    ``[H C_a^T; C_a 0] [u; y] = [-g; upper_a]`` of the conditions within :data:`ACTIVE`
    of their bound, solved by least squares (active rows may be dependent). Kept where
    it holds every condition (to 1e-9 N) with ``y >= -1e-9``; else ProxQP's ``u``."""
    act = upper - C @ u <= ACTIVE
    Ca, k = C[act], len(u)
    K = np.block([[H, Ca.T], [Ca, np.zeros((len(Ca), len(Ca)))]])
    sol = np.linalg.lstsq(K, np.concatenate([-g, upper[act]]), rcond=None)[0]
    exact, y = sol[:k], sol[k:]
    if np.all(C @ exact <= upper + 1e-9) and np.all(y >= -1e-9):
        return exact
    return u
