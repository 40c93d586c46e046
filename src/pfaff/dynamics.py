"""Projection-operator dynamics of constrained multibody systems (Aghili).

Plain functions of arrays. Notation (design.md Sec. 2)::

    M a + h = tau - F,   F = A^T lambda,   A a = -drift,   drift = A' v
    P = I - A^+ A                      projector onto N(A)       (eq. 4, 15)
    C v = -A^+ drift                   normal acceleration       (eq. 13, 16)

The SVD decides the rank with an absolute threshold ``rank_tol``, so
redundant rows and singular configurations (A losing rank) need no special
case: a direction whose singular value falls below the threshold is treated
as unconstrained (Aghili Sec. 8, eq. 70).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pfaff.linalg import DEFAULT_RANK_TOL, full_row_rank_qr, identity, row_space, svd
from pfaff.linalg import solve as linsolve

VARIANTS = ("Mc", "Mc1", "Mc2")
#: the direct-dynamics methods of a simulation (SimOptions.method; the core's code is
#: the index): Aghili's projection and the KKT baseline (kkt_dynamics)
METHODS = ("projection", "kkt")


class Projection:
    """Projector terms of one state.

    Attributes
    ----------
    P : (n, n) orthogonal projector onto N(A).
    Cv : (n,) normal acceleration ``C v = -A^+ drift`` (Aghili eq. 16).
    V1 : (n, r) orthonormal basis of N(A)^perp.
    U1 : (m, r) orthonormal basis of R(A).
    sigma : (r,) singular values kept.
    rank : numerical rank r of A.
    sigma_min : smallest singular value of A (0 if A has no rows or m > n).
    N : (n, n - r) orthonormal basis of N(A) when asked for, else None.
    Rinv : for a projection taken by QR (``projection(..., qr=True)``): ``R^-1``
        of ``A^T = V1 R``; then ``U1`` and ``sigma`` are None and ``sigma_min``
        is NaN (not computed). In general the factor ``W`` of ``A^+ = V1 W^T``
        (the compiled core hands its SVD's ``U1 diag(1/sigma)`` here as well).
    """

    __slots__ = ("P", "Cv", "V1", "U1", "sigma", "rank", "sigma_min", "N", "Rinv")

    def __init__(self, P, Cv, V1, U1, sigma, rank, sigma_min):
        self.P, self.Cv, self.V1, self.U1 = P, Cv, V1, U1
        self.sigma, self.rank, self.sigma_min = sigma, rank, sigma_min
        self.N = self.Rinv = None


def projection(
    A: np.ndarray,
    drift: np.ndarray,
    rank_tol: float = DEFAULT_RANK_TOL,
    with_null: bool = False,
    svd_fn=svd,
    qr: bool = False,
) -> Projection:
    """``P = I - A^+ A`` and ``C v = -A^+ A' v`` from one SVD (Aghili eq. 4, 15, 16).

    With ``with_null=True`` the full SVD is taken and ``proj.N`` holds an
    orthonormal basis V2 of N(A) (the independent directions of Sec. 7.1).
    ``svd_fn``: the factorisation (e.g. a :class:`~pfaff.linalg.LastSVD`).

    With ``qr=True`` a QR of ``A^T`` is used instead when it certifies full row
    rank with every singular value above ``rank_tol``
    (:func:`~pfaff.linalg.full_row_rank_qr`): then the SVD's rank decision
    would keep every row, and ``P = I - Q Q^T``, ``A^+ = Q R^-T`` are the same
    operators at a third of the cost. The singular values are not computed
    (``sigma_min`` is NaN): the integrator uses it for its intermediate stages.
    """
    m, n = A.shape
    if qr and not with_null:
        f = full_row_rank_qr(A, rank_tol)
        if f is not None:
            Q, Rinv = f
            proj = Projection(
                identity(n) - Q @ Q.T, -(Q @ (drift @ Rinv)), Q, None, None, m, np.nan
            )
            proj.Rinv = Rinv
            return proj
    if m == 0:
        proj = Projection(
            np.eye(n), np.zeros(n), np.zeros((n, 0)), np.zeros((0, 0)), np.zeros(0), 0, 0.0
        )
        proj.N = np.eye(n)
        return proj
    U, s, Vt = svd_fn(A, full=with_null)
    r = int((s >= rank_tol).sum())
    V1, U1, sig = Vt[:r].T, U[:, :r], s[:r]
    P = identity(n) - V1 @ V1.T
    Cv = -V1 @ ((U1.T @ drift) / sig)
    proj = Projection(P, Cv, V1, U1, sig, r, float(s[-1]) if m <= n else 0.0)
    if with_null:
        proj.N = Vt[r:].T
    return proj


def constraint_inertia(
    M: np.ndarray, P: np.ndarray, variant: str = "Mc", gamma: float | None = None
) -> np.ndarray:
    """A constraint inertia matrix (Aghili eq. 23-24, 28, 29).

    - ``"Mc"``:  ``M_c = M + P M - (P M)^T``  (p.d., not symmetric; Theorem 2)
    - ``"Mc1"``: ``M'_c = P M P + (I - P) M (I - P)``  (symmetric p.d.; Prop. 1)
    - ``"Mc2"``: ``M''_c = P M + gamma (I - P)``  (invertible; Prop. 2), gamma
      defaults to ``||M||_2`` as the paper suggests.
    """
    if variant == "Mc":
        PM = P @ M
        return M + PM - PM.T
    Q = np.eye(M.shape[0]) - P
    if variant == "Mc1":
        return P @ M @ P + Q @ M @ Q
    if variant == "Mc2":
        g = np.linalg.norm(M, 2) if gamma is None else gamma
        return P @ M + g * Q
    raise ValueError(
        f"unknown constraint inertia variant {variant!r}; valid: {', '.join(VARIANTS)}"
    )


def direct_dynamics(
    M: np.ndarray,
    h: np.ndarray,
    tau: np.ndarray,
    proj: Projection,
    variant: str = "Mc",
    gamma: float | None = None,
) -> np.ndarray:
    """Acceleration from ``M_c a = P (tau - h) + C_c v`` (Aghili eq. 22, 27, 29).

    ``C_c v = M C v`` for ``M_c``, ``(I - 2P) M C v`` for ``M'_c`` and
    ``gamma C v`` for ``M''_c``. All three give the same ``a``.

    ``P = I - V1 V1^T`` is applied through V1 (``P x = x - V1 V1^T x``, and
    ``P M = M - V1 (V1^T M)`` for ``M_c``): ``4 r n^2`` flops instead of the
    ``2 n^3`` of ``P @ M``; the compiled core forms the same products.
    """
    P, Cv, V1 = proj.P, proj.Cv, proj.V1
    f = tau - h
    rhs = f - V1 @ (V1.T @ f)
    if variant == "Mc":
        PM = M - V1 @ (V1.T @ M)
        return linsolve(M + PM - PM.T, rhs + M @ Cv)
    if variant == "Mc1":
        MCv = M @ Cv
        return linsolve(constraint_inertia(M, P, "Mc1"), rhs + MCv - 2 * P @ MCv)
    if variant == "Mc2":
        g = np.linalg.norm(M, 2) if gamma is None else gamma
        return linsolve(constraint_inertia(M, P, "Mc2", g), rhs + g * Cv)
    raise ValueError(
        f"unknown constraint inertia variant {variant!r}; valid: {', '.join(VARIANTS)}"
    )


def constraint_force(
    M: np.ndarray, h: np.ndarray, tau: np.ndarray, P: np.ndarray, a: np.ndarray
) -> np.ndarray:
    """Generalized constraint force ``F = (I - P)(tau - h) - (I - P) M a`` (Aghili eq. 32)."""
    r = tau - h - M @ a
    return r - P @ r


def multipliers(
    A: np.ndarray, F: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL
) -> tuple[np.ndarray, int]:
    """Least-norm Lagrange multipliers ``lambda = (A^+)^T F`` and the rank of A.

    When A is rank deficient a component in N(A^T) is undetermined (Aghili
    Remark 4); the minimum-norm one is returned.
    """
    if A.shape[0] == 0:
        return np.zeros(0), 0
    rs = row_space(A, rank_tol)
    return rs.U1 @ ((rs.V1.T @ F) / rs.sigma), rs.rank


def projected_multipliers(proj: Projection, F: np.ndarray) -> np.ndarray:
    """:func:`multipliers` from an existing :class:`Projection` (no second SVD)."""
    if proj.Rinv is not None:  # QR, full row rank: (A^+)^T F = R^-1 Q^T F
        return proj.Rinv @ (proj.V1.T @ F)
    return proj.U1 @ ((proj.V1.T @ F) / proj.sigma)


def projected_inverse_dynamics(
    M: np.ndarray, h: np.ndarray, P: np.ndarray, a: np.ndarray
) -> np.ndarray:
    """Potent torque that produces ``a``: ``f_par = P (M a + h)`` (Aghili eq. 21).

    Any ``tau`` with ``P tau = f_par`` produces the admissible acceleration ``a``;
    ``f_par`` itself is the one of least Euclidean norm.
    """
    return P @ (M @ a + h)


def decoupling_residual(M: np.ndarray, P: np.ndarray) -> float:
    """``||(I - P) M P||_F / ||M||_F``: zero iff N(A) is invariant under M (Prop. 3).

    For a symmetric positive-definite M, invariance under M is invariance
    under M^-1; then the cross coupling ``mu`` of eq. (32) vanishes and the
    constraint force depends on the impotent input ``f_perp`` only.
    """
    MP = M @ P
    return float(np.linalg.norm(MP - P @ MP) / np.linalg.norm(M))


def is_decoupled(M: np.ndarray, P: np.ndarray, tol: float = 1e-9) -> bool:
    """Proposition 3's test: is N(A) invariant under M (to ``tol`` relative)?"""
    return decoupling_residual(M, P) <= tol


def kkt_matrix(M: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``[[M, A^T], [A, 0]]`` of the classical Lagrange-multiplier method."""
    m = A.shape[0]
    return np.block([[M, A.T], [A, np.zeros((m, m))]])


class KKTSingularError(np.linalg.LinAlgError):
    """The KKT matrix is singular (A rank-deficient); ``cond`` is its condition number."""

    def __init__(self, message: str, cond: float) -> None:
        super().__init__(message)
        self.cond = cond


def kkt_dynamics(
    M: np.ndarray,
    h: np.ndarray,
    tau: np.ndarray,
    A: np.ndarray,
    drift: np.ndarray,
    rank_tol: float = DEFAULT_RANK_TOL,
) -> tuple[np.ndarray, np.ndarray, float]:
    """KKT baseline: solve ``[M A^T; A 0][a; lambda] = [tau - h; -drift]``.

    Returns ``(a, lambda, cond)`` with the 2-norm condition number of the
    KKT matrix. With M positive definite the KKT matrix is regular iff A has
    full row rank; this is judged by the same absolute threshold as the
    projection (the smallest singular value of A above ``rank_tol``, in the
    units of A), not by LU meeting an exactly zero pivot -- rounding makes a
    pivot of a singular matrix come out as 1e-17 on one BLAS kernel and 0 on
    another. Raises ``numpy.linalg.LinAlgError`` (naming the rank and sigma_min)
    with redundant rows or at a singular configuration: the situation the
    projection method is built for.
    """
    m, n = A.shape
    K = kkt_matrix(M, A)
    cond = float(np.linalg.cond(K))
    if m:
        s = svd(A)[1]
        rank = int(np.count_nonzero(s > rank_tol))
        if rank < m:
            smin = float(s[-1]) if m <= n else 0.0
            raise KKTSingularError(
                f"KKT matrix singular: A has rank {rank} < {m} rows "
                f"(sigma_min {smin:.3g} <= rank_tol {rank_tol:g}; condition number {cond:.3g})",
                cond,
            )
    sol = linsolve(K, np.concatenate([tau - h, -drift]))
    return sol[:n], sol[n:], cond


@dataclass(frozen=True)
class ConstrainedSolution:
    """Acceleration and constraint force at one state (and the projector terms)."""

    a: np.ndarray
    F: np.ndarray
    lam: np.ndarray
    proj: Projection


def solve_constrained(
    M: np.ndarray,
    h: np.ndarray,
    tau: np.ndarray,
    A: np.ndarray,
    drift: np.ndarray,
    rank_tol: float = DEFAULT_RANK_TOL,
    variant: str = "Mc",
    with_force: bool = True,
) -> ConstrainedSolution:
    """Direct dynamics, constraint force (eq. 32) and multipliers in one call.

    (Named apart from :func:`pfaff.linalg.solve`, the linear solve ``M x = b``.)
    """
    proj = projection(A, drift, rank_tol)
    a = direct_dynamics(M, h, tau, proj, variant)
    if not with_force:
        return ConstrainedSolution(a, np.zeros(0), np.zeros(0), proj)
    F = constraint_force(M, h, tau, proj.P, a)
    return ConstrainedSolution(a, F, projected_multipliers(proj, F), proj)
