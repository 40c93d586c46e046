"""Linear algebra for constrained dynamics: projectors, pseudo-inverses, rank.

Every rank decision uses an *absolute* singular-value threshold ``rank_tol``
(in the units of the matrix), as Aghili (Sec. 2, eq. 4, 15 and Sec. 8, eq. 70)
requires: a direction whose singular value is below the threshold counts as
unconstrained, which is what lets a simulation pass through singular
configurations and accept redundant constraint rows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

DEFAULT_RANK_TOL = 1e-9


@functools.cache
def _blas_pools():
    """The threadpoolctl controller, made once (it scans the loaded libraries, ~1 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def single_threaded_blas():
    """BLAS/LAPACK on one thread (``threadpoolctl``), from now until the returned
    limiter's ``restore_original_limits()`` (or the end of a ``with`` block).

    pfaff's matrices are tens of rows: a BLAS thread pool adds only hand-over and
    spinning, and with several processes on few cores (``pytest -n 2``, a busy
    host) the spinning threads take the cores from the work. A simulation runs
    under this limit; the previous limits are restored when it ends.
    """
    return _blas_pools().limit(limits=1, user_api="blas")


def solve(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve ``M x = b`` by LU (LAPACK ``gesv`` called directly: the per-call
    cost matters for the small systems of a simulation step).

    Raises ``numpy.linalg.LinAlgError`` for a singular matrix.
    """
    _, _, x, info = lapack.dgesv(M, b)
    if info > 0:
        raise np.linalg.LinAlgError(f"singular matrix (zero pivot at {info})")
    if info < 0:
        raise ValueError(f"invalid argument {-info} to gesv")
    return x


def svd(A: np.ndarray, full: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SVD ``A = U diag(s) Vt``, thin unless ``full`` (LAPACK ``gesdd``; NumPy as a fallback)."""
    U, s, Vt, info = lapack.dgesdd(A, full_matrices=int(full))
    if info != 0:
        return np.linalg.svd(A, full_matrices=full)
    return U, s, Vt


def skew(w) -> np.ndarray:
    """``[w]_x`` of a 3-vector (``[w]_x b = w x b``)."""
    x, y, z = np.asarray(w, dtype=float).tolist()
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` of two 3-vectors (``np.cross`` costs several microseconds per call)."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


class LastSVD:
    """:func:`svd` that keeps the last factorisation and returns it again when it
    is asked for the same matrix (exact equality).

    A simulation factors ``A(q)`` for the velocity correction at the end of a
    step and again for the dynamics at the start of the next one (and, at a
    controller sample, for the null-space basis of the controller's record), at
    the same ``q``: the later factorisations are then skipped. The full
    factorisation is taken (it holds the thin one: ``U[:, :k], s, Vt[:k]``,
    ``k = min(m, n)``), so that a request for the null-space basis needs no
    second SVD.
    """

    def __init__(self) -> None:
        self._A: np.ndarray | None = None
        self._f: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._thin: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __call__(self, A: np.ndarray, full: bool = False):
        last = self._A
        if last is None or last.shape != A.shape or not np.array_equal(last, A):
            U, s, Vt = self._f = svd(A, full=True)
            k = s.size
            self._thin = (U[:, :k], s, Vt[:k])
            self._A = A.copy()
        return self._f if full else self._thin


_EYES: dict[int, np.ndarray] = {}


def identity(n: int) -> np.ndarray:
    """The n x n identity, cached and read-only (no allocation per step)."""
    I = _EYES.get(n)
    if I is None:
        I = _EYES[n] = np.eye(n)
        I.flags.writeable = False
    return I


def full_row_rank_qr(
    A: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL
) -> tuple[np.ndarray, np.ndarray] | None:
    """Thin QR ``A^T = Q R`` when it certifies that every singular value of ``A``
    is above ``rank_tol``; else None (the caller takes the SVD).

    Certificate: ``sigma_min(A) = sigma_min(R) >= 1 / ||R^-1||_F``; the QR is
    accepted when that bound is at least ``2 rank_tol``, so the SVD would keep
    all ``m`` rows and both give the same ``A^+ = Q R^-T`` and the same
    projector ``I - Q Q^T``. About three times cheaper than the SVD for the
    15 x 20 constraint matrix of two arms holding a box.

    Returns ``(Q, R^-1)``: ``Q`` (n, m) with orthonormal columns spanning the
    row space of ``A``, ``R^-1`` (m, m) upper triangular.
    """
    m, n = A.shape
    if m == 0 or m > n:
        return None
    qr, tau, _, info = lapack.dgeqrf(A.T)
    if info != 0:
        return None
    Rinv, info = lapack.dtrtrs(qr[:m], identity(m))  # reads the upper triangle only
    if info != 0:
        return None  # an exact zero on the diagonal: rank deficient
    nrm = float(np.sqrt(np.einsum("ij,ij->", Rinv, Rinv)))
    if not nrm * 2.0 * rank_tol <= 1.0:  # also False for inf / nan
        return None
    Q, _, info = lapack.dorgqr(qr, tau)
    if info != 0:
        return None
    return Q, Rinv


@dataclass(frozen=True)
class RowSpace:
    """SVD split of a matrix ``A`` (m x n) with an absolute threshold.

    Attributes
    ----------
    V1 : (n, r) orthonormal basis of the row space R(A^T) = N(A)^perp.
    U1 : (m, r) orthonormal basis of the range R(A).
    sigma : (r,) singular values kept (all >= rank_tol).
    sigma_all : all singular values, descending.
    rank : numerical rank r.
    """

    V1: np.ndarray
    U1: np.ndarray
    sigma: np.ndarray
    sigma_all: np.ndarray
    rank: int


def row_space(A: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL, svd_fn=svd) -> RowSpace:
    """Thin SVD of ``A`` keeping singular values ``>= rank_tol`` (absolute).

    ``svd_fn``: the factorisation (e.g. a :class:`LastSVD`).
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    m, n = A.shape
    if m == 0:
        return RowSpace(np.zeros((n, 0)), np.zeros((0, 0)), np.zeros(0), np.zeros(0), 0)
    if m == 1:  # one row: the SVD is its norm and direction
        s = float(np.sqrt(A[0] @ A[0]))
        sig = np.array([s])
        if s >= rank_tol:
            return RowSpace((A[0] / s)[:, None], np.ones((1, 1)), sig, sig, 1)
        return RowSpace(np.zeros((n, 0)), np.zeros((1, 0)), np.zeros(0), sig, 0)
    U, s, Vt = svd_fn(A)
    r = int(np.count_nonzero(s >= rank_tol))
    return RowSpace(Vt[:r].T, U[:, :r], s[:r], s, r)


def numerical_rank(A: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL) -> int:
    """Number of singular values of ``A`` at or above the absolute ``rank_tol``."""
    return row_space(A, rank_tol).rank


def pinv(A: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL) -> np.ndarray:
    """Moore-Penrose pseudo-inverse with an absolute singular-value threshold."""
    rs = row_space(A, rank_tol)
    return (rs.V1 / rs.sigma) @ rs.U1.T


def null_space(A: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL) -> np.ndarray:
    """Orthonormal basis (n, n - r) of N(A) (the columns V2 of Aghili eq. 4)."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if A.shape[0] == 0:
        return np.eye(A.shape[1])
    _, s, Vt = svd(A, full=True)
    r = int((s >= rank_tol).sum())
    return Vt[r:].T.copy()


def weighted_pinv(A: np.ndarray, W: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL) -> np.ndarray:
    """W-weighted pseudo-inverse ``A^{+W} = W^-1 A^T (A W^-1 A^T)^+``.

    For full-row-rank ``A`` it is the generalized inverse that gives the
    solution of ``A x = b`` of least ``x^T W x`` (Aghili Sec. 2.1.1, eq. 8-10).
    The rank decision is made on ``A`` itself (absolute ``rank_tol``): the
    constraint is replaced by its well-conditioned row-space rows ``V1^T``, so
    redundant or vanishing rows do not enter the inverse.
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    rs = row_space(A, rank_tol)
    if rs.rank == 0:
        return np.zeros((A.shape[1], A.shape[0]))
    WinvV1 = solve(W, rs.V1)
    G = rs.V1.T @ WinvV1
    # A = U1 S V1^T, so A^{+W} = W^-1 V1 (V1^T W^-1 V1)^-1 S^-1 U1^T
    return WinvV1 @ solve(G, (rs.U1 / rs.sigma).T)


def metric_projection(
    v: np.ndarray, A: np.ndarray, M: np.ndarray, rank_tol: float = DEFAULT_RANK_TOL, svd_fn=svd
) -> np.ndarray:
    """Project ``v`` onto N(A) in the metric of ``M``.

    Returns ``v - M^-1 A^T (A M^-1 A^T)^+ A v``: the admissible velocity closest
    to ``v`` in kinetic energy, i.e. the result of the impulse that removes the
    violating component with the least change of kinetic energy.
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if A.shape[0] == 0:
        return np.array(v, dtype=float)
    V1 = row_space(A, rank_tol, svd_fn).V1
    if V1.shape[1] == 0:
        return np.array(v, dtype=float)
    # N(A) = N(V1^T): v - M^-1 V1 (V1^T M^-1 V1)^-1 V1^T v
    X = solve(M, V1)
    return v - X @ solve(V1.T @ X, V1.T @ v)
