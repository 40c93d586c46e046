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
from scipy.linalg import cho_factor, cho_solve


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
    U, s, Vt = np.linalg.svd(A, full_matrices=True)
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


def rank_radius(f: Factors, rank_tol: float, dA: np.ndarray) -> float:
    """How far (in the tangent space, first order) ``q`` may move before the rank
    decision changes: ``min((sigma_r - tol) / g_kept, (tol - sigma_{r+1}) / g_drop)``.

    ``g_kept = sqrt(sum_k ||dA_k||_2^2)`` bounds the speed of every singular value
    (Weyl's inequality); the dropped ones start at ``U2^T dA V2`` to first order
    (``g_drop``: the same norm of those blocks), which is zero for structurally
    zero singular values (a row that stays zero, a duplicated row): their radius is
    infinite. ``inf`` when nothing bounds it (no rows, no dependence on q).
    """
    if dA.shape[0] == 0 or f.sigma.size == 0:
        return float("inf")
    out = float("inf")
    if f.rank > 0:
        g = float(np.sqrt(sum(np.linalg.norm(d, 2) ** 2 for d in dA)))
        if g > 0:
            out = (f.sigma[f.rank - 1] - rank_tol) / g
    if f.U2.shape[1] and f.V2.shape[1]:
        B = f.U2.T @ dA @ f.V2
        g = float(np.sqrt(sum(np.linalg.norm(b, 2) ** 2 for b in B)))
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

    Parameters
    ----------
    M : (n, n) inertia; A : (m, n) constraint Jacobian; drift : (m,) ``A' v``;
    a, F, lam : the acceleration, constraint force and multipliers at the state
    (from :mod:`pfaff.dynamics`); f : the :func:`factors` of A.
    """

    def __init__(self, M, A, drift, a, F, lam, f: Factors) -> None:
        self.M, self.A, self.drift, self.a, self.F, self.lam, self.f = M, A, drift, a, F, lam, f
        N = f.V2
        self.N = N
        self._chol = cho_factor(N.T @ M @ N) if N.shape[1] else None

    def _solve(self, r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
        """``da`` from ``(I - P) da = r1``, ``P M da = r2`` (columns are directions)."""
        V1 = self.f.V1
        r1 = V1 @ (V1.T @ r1)  # in N(A)^perp (exactly so in exact arithmetic)
        if self._chol is None:
            return r1
        N = self.N
        return r1 + N @ cho_solve(self._chol, N.T @ (r2 - self.M @ r1))

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
        f, a, lam, F = self.f, self.a, self.lam, self.F
        r2 = dtau - dRNEA
        r1 = -f.Ap @ ddrift
        dAp = None
        if dA is not None and dA.shape[1]:
            dAp = pinv_derivative(f, dA)  # (K, n, m)
            dP = projector_derivative(f, dA)  # (K, n, n)
            r1 = r1 + (dP @ a).T - (dAp @ self.drift).T
            r2 = r2 - (np.swapaxes(dA, 1, 2) @ lam).T
        r2 = r2 - f.V1 @ (f.V1.T @ r2)
        da = self._solve(r1, r2)
        dF = dtau - dRNEA - self.M @ da
        dlam = f.Ap.T @ dF
        if dAp is not None:
            dlam = dlam + (np.swapaxes(dAp, 1, 2) @ F).T
        return Sensitivity(da, dF, dlam)
