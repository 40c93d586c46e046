"""Derivatives of the projection dynamics at constant rank: plain functions of arrays.

The dynamics (Aghili 2005, eq. 15, 16, 22, 32) written as two conditions on ``a``::

    (I - P) a = -A^+ drift                         (eq. 16: the constrained part)
    P (RNEA(q, v, a) - tau) = 0                    (eq. 22: the free part)
    F = tau - RNEA(q, v, a),  lambda = A^+T F      (eq. 32 and eq. 18)

with ``RNEA(q, v, a) = M a + h``. Differentiating them along a direction ``x_k``
(a tangent direction of q, a component of v or of tau) gives one linear system
per direction with the same operator as the dynamics themselves::

    (I - P) da = dP a - d(A^+) drift - A^+ d(drift)                      =: r1
    P M da     = P (dtau - dRNEA - dA^T lambda)                          =: r2
    da = r1 + N (N^T M N)^-1 N^T (r2 - M r1)          N: basis of N(A)

(the term ``-dA^T lambda`` is ``dP F``, since ``P F = 0``). ``d(A^+)`` and ``dP`` are
the derivatives of the pseudo-inverse and of the projector at constant rank
(Golub & Pereyra 1973, Thm. 4.3)::

    d(A^+) = -A^+ dA A^+ + A^+ A^+T dA^T (I - A A^+) + (I - A^+ A) dA^T A^+T A^+
    dP     = -(A^+ dA P + P dA^T A^+T)

They hold wherever the rank of A is constant near ``q``; :func:`rank_radius` says
how far that is (structurally zero singular values, e.g. the out-of-plane row of a
planar loop closed in 3D or a duplicated row, stay zero under any perturbation).

Direction stacks are ``(K, m, n)`` arrays (``dA[k] = dA/dx_k``) and the derivatives
of vectors are ``(n, K)`` (column ``k`` along ``x_k``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

from pfaff.linalg import svd


@dataclass(frozen=True)
class Factors:
    """The SVD of ``A`` with the rank kept (absolute threshold ``rank_tol``).

    Attributes
    ----------
    Ap : (n, m) pseudo-inverse ``A^+ = V1 diag(1/sigma) U1^T`` of the kept part.
    P : (n, n) projector onto N(A), ``I - V1 V1^T``.
    V1, U1 : kept right / left singular vectors; V2, U2 : the dropped ones
        (full bases of N(A) and N(A^T) for the kept rank).
    sigma : (min(m, n),) all singular values, descending.
    rank : the number of kept singular values.
    """

    Ap: np.ndarray
    P: np.ndarray
    V1: np.ndarray
    U1: np.ndarray
    V2: np.ndarray
    U2: np.ndarray
    sigma: np.ndarray
    rank: int


def factors(A: np.ndarray, rank_tol: float) -> Factors:
    """Full SVD of ``A`` (m, n) and the kept rank (singular values ``>= rank_tol``,
    the rule of :func:`pfaff.dynamics.projection`)."""
    m, n = A.shape
    if m == 0:
        z, e = np.zeros((n, 0)), np.zeros((0, 0))
        return Factors(z, np.eye(n), z, e, np.eye(n), e, np.zeros(0), 0)
    U, s, Vt = svd(A, full=True)
    r = int((s >= rank_tol).sum())
    V1, V2, U1, U2 = Vt[:r].T, Vt[r:].T, U[:, :r], U[:, r:]
    Ap = V1 @ (U1.T / s[:r, None])
    return Factors(Ap, np.eye(n) - V1 @ V1.T, V1, U1, V2, U2, s, r)


def pinv_derivative(f: Factors, dA: np.ndarray) -> np.ndarray:
    """``d(A^+)`` (K, n, m) along the directions ``dA`` (K, m, n), at constant rank.

    Golub & Pereyra (1973), "The differentiation of pseudo-inverses and nonlinear
    least squares problems whose variables separate", Thm. 4.3. The two last terms
    vanish when A has full row rank (``I - A A^+ = 0``) or full column rank.
    """
    Ap, P = f.Ap, f.P
    Q = np.eye(Ap.shape[1]) - f.U1 @ f.U1.T  # I - A A^+, projector onto N(A^T)
    dAt = np.swapaxes(dA, 1, 2)
    return -Ap @ dA @ Ap + (Ap @ Ap.T) @ dAt @ Q + P @ dAt @ (Ap.T @ Ap)


def projector_derivative(f: Factors, dA: np.ndarray) -> np.ndarray:
    """``dP`` (K, n, n) of ``P = I - A^+ A`` along ``dA`` (K, m, n) at constant rank:
    ``-(A^+ dA P + P dA^T A^+T)`` (Aghili eq. 15 differentiated)."""
    X = f.Ap @ dA @ f.P
    return -(X + np.swapaxes(X, 1, 2))


def _dA_x(dA: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``(dA_k x)_k`` as (K, m)."""
    return dA @ x


def _dAt_y(dA: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(dA_k^T y)_k`` as (K, n)."""
    return y @ dA


def pinv_derivative_apply(f: Factors, dA: np.ndarray, x: np.ndarray, y: np.ndarray):
    """:func:`pinv_derivative` applied without forming it: ``(d(A^+)_k x)_k`` (n, K)
    for ``x`` (m,) and ``(d(A^+)_k^T y)_k`` (m, K) for ``y`` (n,), by contractions of
    ``dA`` with vectors only (``O(K m n)``)."""
    Ap, P = f.Ap, f.P
    U1 = f.U1
    Qx = x - U1 @ (U1.T @ x)
    dx = (
        -Ap @ _dA_x(dA, Ap @ x).T
        + (Ap @ Ap.T) @ _dAt_y(dA, Qx).T
        + P @ _dAt_y(dA, Ap.T @ (Ap @ x)).T
    )
    Apy = Ap @ (Ap.T @ y)
    dy = -Ap.T @ _dAt_y(dA, Ap.T @ y).T + Ap.T @ Ap @ _dA_x(dA, P @ y).T
    DQ = _dA_x(dA, Apy).T
    dy = dy + DQ - U1 @ (U1.T @ DQ)
    return dx, dy


def projector_derivative_apply(f: Factors, dA: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`projector_derivative` applied to ``x`` (n,): ``(dP_k x)_k`` (n, K)."""
    Ap, P = f.Ap, f.P
    return -(Ap @ _dA_x(dA, P @ x).T + P @ _dAt_y(dA, Ap.T @ x).T)


def pseudo_inverse_terms(f: Factors, dA, a, drift, lam) -> tuple[np.ndarray, np.ndarray]:
    """The terms of ``dA`` in ``(I - P) da`` and in ``dlambda`` (columns: directions).

    With :func:`pinv_derivative` and :func:`projector_derivative` and the identities
    ``(I - P) a = -A^+ drift``, ``P F = 0``, ``A^+T F = lambda``::

        (I - P)(dP a - d(A^+) drift) = -A^+ dA a - A^+ A^+T dA^T (I - A A^+) drift
        d(A^+)^T F                   = -A^+T dA^T lambda + (I - A A^+) dA A^+ lambda

    The second terms are Golub & Pereyra's: the drift's part outside R(A) and the
    turning of the left null space N(A^T) (zero when A has full row rank).
    Returns ``((n, K), (m, K))``; cost ``O(K m n)``.
    """
    Ap, U1 = f.Ap, f.U1
    Qd = drift - U1 @ (U1.T @ drift)
    r1 = -Ap @ (_dA_x(dA, a).T + Ap.T @ _dAt_y(dA, Qd).T)
    X = _dA_x(dA, Ap @ lam).T
    dlam = -Ap.T @ _dAt_y(dA, lam).T + X - U1 @ (U1.T @ X)
    return r1, dlam


def rank_radius(f: Factors, rank_tol: float, dA: np.ndarray) -> float:
    """How far (in the tangent space, first order) ``q`` may move before the rank
    decision changes: ``min((sigma_r - tol) / g_kept, (tol - sigma_{r+1}) / g_drop)``.

    ``g_kept = sqrt(sum_k ||dA_k||_F^2)`` bounds the speed of every singular value
    (Weyl's inequality, ``||.||_2 <= ||.||_F``); the dropped ones start at
    ``U2^T dA V2`` to first order (``g_drop``: the same norm of those blocks), zero
    for structurally zero singular values (a row that stays zero, a duplicated row):
    their radius is infinite. ``inf`` when nothing bounds it (no rows, no dependence on q).
    """
    if dA.shape[0] == 0 or f.sigma.size == 0:
        return float("inf")
    out = float("inf")
    if f.rank > 0:
        g = float(np.sqrt(np.sum(dA * dA)))
        if g > 0:
            out = (f.sigma[f.rank - 1] - rank_tol) / g
    if f.U2.shape[1] and f.V2.shape[1]:
        B = f.U2.T @ dA @ f.V2
        g = float(np.sqrt(np.sum(B * B)))
        top = float(f.sigma[f.rank]) if f.rank < f.sigma.size else 0.0
        if g > 0:
            out = min(out, (rank_tol - top) / g)
    return out


@dataclass(frozen=True)
class Sensitivity:
    """Derivatives of the acceleration, constraint force and multipliers along K
    directions: ``da`` (n, K), ``dF`` (n, K), ``dlam`` (m, K)."""

    da: np.ndarray
    dF: np.ndarray
    dlam: np.ndarray


class Solver:
    """The dynamics at one state, ready to differentiate along any directions.

    Solves the dynamics itself in the form above: ``a = C v + N (N^T M N)^-1 N^T
    (tau - h - M C v)`` with ``C v = -A^+ drift`` (Aghili eq. 16 and 22 restricted to
    N(A), where ``M_c`` acts as ``M``), ``F = (I - P)(tau - h - M a)`` (eq. 32) and
    ``lambda = A^+T F``, the same numbers as :func:`pfaff.dynamics.solve_constrained`.

    Parameters
    ----------
    M : (n, n) inertia; h : (n,) ``h(q, v)``; tau : (n,) applied torque;
    drift : (m,) ``A' v``; f : the :func:`factors` of A.
    """

    def __init__(self, M, h, tau, drift, f: Factors) -> None:
        self.M, self.drift, self.f = M, drift, f
        self.N = N = f.V2
        self._chol = None
        if N.shape[1]:
            L, info = lapack.dpotrf(N.T @ M @ N, lower=1)
            if info != 0:
                raise np.linalg.LinAlgError("N^T M N is not positive definite")
            self._chol = L
        Cv = -f.Ap @ drift
        self.a = a = self._solve(Cv, tau - h, project=False)
        r = tau - h - M @ a
        self.F = F = f.V1 @ (f.V1.T @ r)
        self.lam = f.Ap.T @ F

    def _reduced(self, b: np.ndarray) -> np.ndarray:
        x, info = lapack.dpotrs(self._chol, b, lower=1)
        return x

    def _solve(self, r1: np.ndarray, r2: np.ndarray, project: bool = True) -> np.ndarray:
        """``x`` from ``(I - P) x = r1``, ``P M x = P r2`` (columns are directions)."""
        if project:
            V1 = self.f.V1
            r1 = V1 @ (V1.T @ r1)  # in N(A)^perp (exactly so in exact arithmetic)
        if self._chol is None:
            return r1
        N = self.N
        return r1 + N @ self._reduced(N.T @ (r2 - self.M @ r1))

    def along(
        self,
        dRNEA: np.ndarray,
        dtau: np.ndarray,
        ddrift: np.ndarray,
        dA: np.ndarray | None = None,
    ) -> Sensitivity:
        """Derivatives along K directions.

        Parameters
        ----------
        dRNEA : (n, K) ``d(M a + h)`` at fixed ``a`` (Pinocchio's RNEA derivatives).
        dtau : (n, K) derivative of the applied torque.
        ddrift : (m, K) derivative of the drift ``A' v``.
        dA : (K, m, n) derivative of A (None: A does not depend on the direction).
        """
        f, lam = self.f, self.lam
        r2 = dtau - dRNEA
        r1 = -f.Ap @ ddrift
        dlam_A = None
        if dA is not None and dA.shape[1]:
            t1, dlam_A = pseudo_inverse_terms(f, dA, self.a, self.drift, lam)
            r1 = r1 + t1
            r2 = r2 - _dAt_y(dA, lam).T
        da = self._solve(r1, r2, project=False)
        dF = dtau - dRNEA - self.M @ da
        dlam = f.Ap.T @ dF
        if dlam_A is not None:
            dlam = dlam + dlam_A
        return Sensitivity(da, dF, dlam)
