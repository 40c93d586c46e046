"""Forward kinematics as a Riemannian submersion (Altafini Sec. II-III).

For a task map ``X = f(q)`` with full-row-rank Jacobian ``J`` (m x n, m < n):

- vertical space ``V_q = ker J`` (the fiber's tangent space, internal motions);
- horizontal space ``H_q`` = the ``M``-orthogonal complement of ``V_q``
  (Altafini eq. (13), with the kinetic-energy metric ``M(q)``);
- horizontal lift of ``X``: the unique ``v in H_q`` with ``J v = X``
  (Altafini eq. (14)). :func:`horizontal_lift_matrix` builds it from this
  definition -- ``[J; V^T M] G = [I; 0]`` with ``V`` a basis of ``ker J`` --
  and :func:`lift_closed_form` gives ``M^-1 J^T (J M^-1 J^T)^-1`` as a witness.

Altafini's Theorem III.2 claims the lift equals the Moore-Penrose ``J^+``.
The lift equals ``J^+`` exactly when ``M`` maps ``ker J`` into itself
(``M``-orthogonal = orthogonal complement; e.g. ``M = c I``); pfaff reports
the difference instead of assuming it (design.md Sec. 7). Every ``M``-lift
(and ``J^+``, the ``I``-lift) is invariant under ``J -> A J`` for invertible
``A``, so the body Jacobian ``J^b`` and the world-aligned Jacobian give the
same lifts.

Repeatability (Altafini Sec. III, Shamir-Yomdin): a generalized inverse ``G``
drives closed workspace loops to closed joint loops iff its column fields are
involutive; :func:`bracket_defect` measures the component of the Lie brackets
``[H_i, H_j]`` outside ``span G`` and :func:`follow_loop` the drift.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin

from pfaff.geometry.screws import ScrewChain, ad, body_jacobian, body_jacobian_dot_v
from pfaff.linalg import DEFAULT_RANK_TOL, null_space, pinv, svd, weighted_pinv
from pfaff.mechanism.base import frame_index

Inverse = Callable[[np.ndarray, np.ndarray], np.ndarray]


class SingularPostureError(ValueError):
    """``J`` has lost rank: the fiber jumps dimension and the lift is undefined (Altafini A2)."""


def vertical_basis(J: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL) -> np.ndarray:
    """(n, n - m) orthonormal basis of the vertical space ``ker J`` (Altafini eq. (13)).

    One full SVD; raises :class:`SingularPostureError` if the smallest of the
    m singular values is below the absolute ``rank_tol``.
    """
    J = np.atleast_2d(J)
    m = J.shape[0]
    _, s, Vt = svd(J, full=True)
    if s.size < m or s[m - 1] < rank_tol:
        smin = s[-1] if s.size else 0.0
        raise SingularPostureError(
            f"singular posture: the {m}x{J.shape[1]} task Jacobian has smallest "
            f"singular value {smin:.3g} < rank_tol {rank_tol:g} (assumption A2 of Altafini "
            "fails); the horizontal lift is undefined here"
        )
    return Vt[m:].T.copy()


def horizontal_lift_matrix(
    J: np.ndarray, M: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL
) -> np.ndarray:
    """(n, m) pullback ``rho^{*h}`` (Altafini eq. (14)) from its definition.

    Column k is the unique ``v`` with ``J v = e_k`` and ``V^T M v = 0``
    (``v`` ``M``-orthogonal to the fiber): one square solve of ``[J; V^T M]``.
    Raises :class:`SingularPostureError` if ``J`` loses rank.
    """
    V = vertical_basis(J, rank_tol)
    m = J.shape[0]
    K = np.vstack([J, V.T @ M])
    rhs = np.vstack([np.eye(m), np.zeros((V.shape[1], m))])
    return np.linalg.solve(K, rhs)


def horizontal_lift(
    J: np.ndarray, M: np.ndarray, X: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL
) -> np.ndarray:
    """Horizontal lift ``qd^h_X`` of the task velocity ``X`` (Altafini eq. (14))."""
    return horizontal_lift_matrix(J, M, rank_tol) @ X


def lift_closed_form(J: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``M^-1 J^T (J M^-1 J^T)^-1`` (design.md Sec. 7), the witness of the definition."""
    MiJt = np.linalg.solve(M, J.T)
    return MiJt @ np.linalg.inv(J @ MiJt)


def theorem_iii2(J: np.ndarray, M: np.ndarray) -> dict[str, float]:
    """Numbers for Altafini's Theorem III.2 at one posture (max-abs matrix entries).

    ``lift_residual`` ``|J G - I|``; ``horizontality`` ``|V^T M G|``;
    ``lift_vs_closed_form``; ``lift_vs_pinv`` (metric ``M``) and its value
    relative to ``max|J^+|``; ``lift_vs_pinv_identity_metric`` (metric ``I``).
    """
    G = horizontal_lift_matrix(J, M)
    GI = horizontal_lift_matrix(J, np.eye(J.shape[1]))
    Jp = pinv(J)
    V = null_space(J)
    return {
        "lift_residual": float(np.abs(J @ G - np.eye(J.shape[0])).max()),
        "horizontality": float(np.abs(V.T @ M @ G).max()),
        "lift_vs_closed_form": float(np.abs(G - lift_closed_form(J, M)).max()),
        "lift_vs_pinv": float(np.abs(G - Jp).max()),
        "lift_vs_pinv_rel": float(np.abs(G - Jp).max() / np.abs(Jp).max()),
        "lift_vs_pinv_identity_metric": float(np.abs(GI - Jp).max()),
    }


def inverses(w_other: np.ndarray) -> dict[str, Inverse]:
    """The three generalized inverses compared: the ``M``-lift, ``J^+``, ``W``-weighted ``J^+``."""
    W = np.diag(w_other)
    return {
        "lift": horizontal_lift_matrix,
        "pinv": lambda J, M: pinv(J),
        "other": lambda J, M: weighted_pinv(J, W),
    }


def task_jacobian(mech, frame: str, rows: slice | list[int]) -> Callable[[np.ndarray], tuple]:
    """``q -> (J, M, x)`` for a frame of a mechanism (world-aligned Jacobian rows ``rows``).

    ``x`` is the task coordinate vector: the selected position coordinates if
    ``rows`` picks linear rows only, else ``(p, R.ravel())``.
    """
    position = isinstance(rows, list) and all(r < 3 for r in rows)

    def f(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        snap = mech.compute(q, None, [frame], extras=False)
        fs = snap.frames[frame]
        return (
            fs.J[rows],
            snap.M,
            (fs.p[rows] if position else np.concatenate((fs.p, fs.R.ravel()))),
        )

    return f


def follow_loop(
    task: Callable,
    G: Inverse,
    xdot: Callable[[float], np.ndarray],
    q0: np.ndarray,
    t_end: float,
    steps: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Integrate ``q' = G(J(q), M(q)) X'(t)`` by RK4; returns ``(t, q)`` samples.

    ``X'(t)`` is the task velocity of a closed workspace loop; the joint-space
    drift ``|q(T) - q(0)|`` is the repeatability defect of the inverse ``G``.
    """

    def rhs(t: float, q: np.ndarray) -> np.ndarray:
        J, M, _ = task(q)
        return G(J, M) @ xdot(t)

    h = t_end / steps
    t = np.linspace(0.0, t_end, steps + 1)
    q = np.empty((steps + 1, len(q0)))
    q[0] = q0
    for k in range(steps):
        tk, qk = t[k], q[k]
        k1 = rhs(tk, qk)
        k2 = rhs(tk + h / 2, qk + h / 2 * k1)
        k3 = rhs(tk + h / 2, qk + h / 2 * k2)
        k4 = rhs(tk + h, qk + h * k3)
        q[k + 1] = qk + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return t, q


def bracket_defect(task: Callable, G: Inverse, q: np.ndarray, h: float = 1e-5) -> float:
    """Largest component of ``[H_i, H_j](q)`` outside ``span G(q)`` (Shamir-Yomdin Th. 2.1).

    ``H_k(q) = G(J(q), M(q)) e_k``; the bracket ``DH_j H_i - DH_i H_j`` is
    taken by central differences (step ``h``, error O(h^2)); the component
    outside ``span G`` is ``(I - G J) [H_i, H_j]`` (``G J`` projects onto
    ``span G`` along ``ker J``). Zero for all pairs iff the distribution is
    involutive (repeatable inverse kinematics).
    """

    def H(x: np.ndarray) -> np.ndarray:
        J, M, _ = task(x)
        return G(J, M)

    J, M, _ = task(q)
    H0 = G(J, M)
    P_out = np.eye(len(q)) - H0 @ J
    m = H0.shape[1]
    D = [(H(q + h * H0[:, i]) - H(q - h * H0[:, i])) / (2 * h) for i in range(m)]
    out = 0.0
    for i in range(m):
        for j in range(i + 1, m):
            br = D[i][:, j] - D[j][:, i]
            out = max(out, float(np.linalg.norm(P_out @ br)))
    return out


def euler_poincare(
    model: pin.Model,
    chain: ScrewChain,
    frame: str,
    q: np.ndarray,
    v: np.ndarray,
    tau: np.ndarray,
) -> dict[str, float]:
    """Workspace dynamics of the body twist ``X = J^b q'`` vs. Pinocchio (Altafini eq. (18)).

    Derived form (exact, no assumption on ``M``)::

        X' = J^b M^-1 (tau - h) + J^b' q'

    with ``J^b``, ``J^b' q'`` from the product of exponentials. Altafini's
    eq. (18) ``X' = ad*_X X + J^b M^-1 tau`` (``M_dg = I``, potential
    neglected, ``ad*_X = ad_X^T``) would require ``J^b' q' - J^b M^-1 C q'
    = ad*_X X``, i.e. a left-invariant workspace inertia equal to ``I``; its
    residual is reported (``paper_form_rel``), evaluated without gravity.
    Witness: ``d/dt X`` = Pinocchio's ``LOCAL`` frame acceleration with
    ``a = aba(q, v, tau)``.
    """
    fid = frame_index(model, frame)
    out = {}
    for grav in (True, False):
        mdl = model if grav else pin.Model(model)
        if not grav:
            mdl.gravity.linear[:] = 0.0
        data = mdl.createData()
        a = pin.aba(mdl, data, q, v, tau)
        pin.forwardKinematics(mdl, data, q, v, a)
        Xd_ref = pin.getFrameAcceleration(mdl, data, fid, pin.ReferenceFrame.LOCAL).vector
        M = pin.crba(mdl, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.nonLinearEffects(mdl, data, q, v)
        Jb = body_jacobian(chain, q)
        scale = max(float(np.linalg.norm(Xd_ref)), 1e-12)
        if grav:
            Xd = Jb @ np.linalg.solve(M, tau - h) + body_jacobian_dot_v(chain, q, v)
            out["derived_abs"] = float(np.abs(Xd - Xd_ref).max())
            out["derived_rel"] = float(np.linalg.norm(Xd - Xd_ref) / scale)
        else:
            X = Jb @ v
            Xd = ad(X).T @ X + Jb @ np.linalg.solve(M, tau)
            out["paper_form_rel"] = float(np.linalg.norm(Xd - Xd_ref) / scale)
    return out
