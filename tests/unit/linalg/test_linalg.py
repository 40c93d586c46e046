"""Tests of pfaff.linalg: projectors, pseudo-inverses, null spaces, metric projection.

Witnesses: numpy's own SVD-based routines, the Penrose conditions, and KKT
systems solved directly (the closed-form optimality conditions of the
minimisation problems the functions claim to solve).
"""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.linalg import (
    DEFAULT_RANK_TOL,
    full_row_rank_qr,
    metric_projection,
    null_space,
    numerical_rank,
    pinv,
    row_space,
    weighted_pinv,
)

TOL = DEFAULT_RANK_TOL


def null_projector(A: np.ndarray, rank_tol: float = TOL) -> np.ndarray:
    """``P = I - A^+ A = I - V1 V1^T`` (Aghili eq. 4) from :func:`row_space`."""
    V1 = row_space(A, rank_tol).V1
    return np.eye(A.shape[1]) - V1 @ V1.T


def _with_singular_values(rng, m: int, n: int, s) -> np.ndarray:
    """An m x n matrix with prescribed singular values ``s`` (random singular vectors)."""
    U, _ = np.linalg.qr(rng.standard_normal((m, m)))
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    S = np.zeros((m, n))
    k = len(s)
    S[:k, :k] = np.diag(s)
    return U @ S @ V.T


def _spd(rng, n: int, cond: float = 50.0) -> np.ndarray:
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return Q @ np.diag(np.geomspace(1.0, cond, n)) @ Q.T


def _cases():
    """(name, A, expected rank, largest singular value dropped) -- deterministic."""
    rng = np.random.default_rng(20240601)
    out = []
    A = rng.standard_normal((3, 7))
    out.append(("wide full rank", A, 3, 0.0))
    out.append(("tall", rng.standard_normal((8, 5)), 5, 0.0))
    out.append(("duplicated rows", np.vstack([A, A[1], 2.0 * A[0]]), 3, 0.0))
    out.append(("zero row", np.vstack([A[:2], np.zeros(7), A[2]]), 3, 0.0))
    out.append(("one row", rng.standard_normal((1, 6)), 1, 0.0))
    out.append(("one tiny row", 0.3e-9 * np.eye(1, 6), 0, 0.3e-9))
    out.append(("one row just above", 1.7e-9 * np.eye(1, 6, 2), 1, 0.0))
    # singular values straddling the absolute threshold 1e-9
    out.append(("sv just above tol", _with_singular_values(rng, 4, 6, [2.0, 0.5, 1.5e-9]), 3, 0.0))
    out.append(
        ("sv just below tol", _with_singular_values(rng, 4, 6, [2.0, 0.5, 1.0, 0.7e-9]), 3, 0.7e-9)
    )
    out.append(
        ("rank 2 of 5x7", rng.standard_normal((5, 2)) @ rng.standard_normal((2, 7)), 2, 0.0)
    )
    return out


CASES = _cases()
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("name", "A", "rank", "dropped"), CASES, ids=IDS)
def test_projector_properties(name, A, rank, dropped):
    n = A.shape[1]
    P = null_projector(A)
    assert np.abs(P @ P - P).max() <= 1e-14
    assert np.abs(P - P.T).max() <= 1e-15
    # A P = 0 up to the singular values the threshold dropped (and roundoff)
    scale = max(1.0, np.linalg.norm(A, 2))
    assert np.linalg.norm(A @ P, 2) <= dropped + 1e-14 * scale
    # trace of an orthogonal projector = its rank = dim N(A) = n - rank(A)
    assert np.trace(P) == pytest.approx(n - rank, abs=1e-12)
    assert numerical_rank(A) == rank
    assert row_space(A).rank == rank


def test_threshold_is_absolute_and_decides_each_direction():
    """The singular direction at 1.5e-9 is constrained, the one at 0.7e-9 is free."""
    rng = np.random.default_rng(7)
    V, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    # rows along orthonormal directions with norms 1, 1.5e-9, 0.7e-9 (a random left
    # rotation would bury the two tiny singular values in roundoff of the big one)
    A = np.diag([1.0, 1.5e-9, 0.7e-9]) @ V[:, :3].T
    P = null_projector(A)
    # kept direction v2 (sigma = 1.5e-9): removed by P (|P v2| would be 1 if dropped)
    assert np.linalg.norm(P @ V[:, 1]) <= 1e-6
    # dropped direction v3 (sigma = 0.7e-9): unconstrained, P keeps it
    assert np.linalg.norm(P @ V[:, 2] - V[:, 2]) <= 1e-6
    # absolute: scaling A by 1e3 brings both above the threshold
    assert numerical_rank(1e3 * A) == 3
    assert numerical_rank(A) == 2
    # a custom threshold moves the decision
    assert numerical_rank(A, rank_tol=1e-8) == 1
    assert numerical_rank(A, rank_tol=1e-10) == 3


def test_one_row_fast_path_matches_svd_path():
    """m == 1 takes a special branch; duplicating the row takes the SVD branch."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1, 6))
    P1, P2 = null_projector(a), null_projector(np.vstack([a, a]))
    assert np.abs(P1 - P2).max() <= 1e-14
    assert np.abs(P1 - (np.eye(6) - a.T @ a / (a @ a.T))).max() <= 1e-14
    # pinv of the duplicated row spreads the inverse over both rows
    assert np.abs(pinv(np.vstack([a, a])) - 0.5 * np.hstack([pinv(a), pinv(a)])).max() <= 1e-14


def test_empty_matrix():
    A = np.zeros((0, 4))
    assert np.array_equal(null_projector(A), np.eye(4))
    assert np.array_equal(null_space(A), np.eye(4))
    assert pinv(A).shape == (4, 0)
    assert numerical_rank(A) == 0
    v = np.array([1.0, -2.0, 3.0, 0.5])
    assert np.array_equal(metric_projection(v, A, np.eye(4)), v)


def test_pinv_equals_numpy_when_all_singular_values_are_kept():
    rng = np.random.default_rng(11)
    for shape in [(3, 7), (7, 3), (5, 5), (1, 4), (4, 1)]:
        A = rng.standard_normal(shape)
        assert np.linalg.svd(A, compute_uv=False).min() > 1e-3
        Ap = pinv(A)
        ref = np.linalg.pinv(A)
        assert np.abs(Ap - ref).max() <= 1e-12 * np.abs(ref).max()


@pytest.mark.parametrize(("name", "A", "rank", "dropped"), CASES, ids=IDS)
def test_pinv_penrose_conditions_and_truncation(name, A, rank, dropped):
    X = pinv(A)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = int(np.count_nonzero(s >= TOL))
    At = (U[:, :r] * s[:r]) @ Vt[:r]  # A with the dropped singular values removed
    # Penrose conditions of the truncated matrix; roundoff grows with the
    # condition number kappa = s_max / s_min(kept) (1.3e9 for "sv just above tol")
    kappa = s[0] / s[r - 1] if r else 1.0
    e = 1e-14 * kappa
    assert np.abs(At @ X @ At - At).max() <= e * s[0]
    assert np.abs(X @ At @ X - X).max() <= e * max(np.abs(X).max(), 1e-300)
    assert np.abs((At @ X) - (At @ X).T).max() <= e
    assert np.abs((X @ At) - (X @ At).T).max() <= e
    # independent witness: numpy's pinv of the truncated matrix with a cut-off just
    # below the smallest kept singular value
    if r:
        ref = np.linalg.pinv(At, rcond=0.5 * s[r - 1] / s[0])
        assert np.abs(X - ref).max() <= max(e, 1e-13) * np.abs(ref).max()
    else:
        assert np.abs(X).max() == 0.0
    # a dropped singular value is not inverted: no 1e9-sized entries
    if dropped:
        assert np.linalg.norm(X, 2) < 1e3


@pytest.mark.parametrize(("name", "A", "rank", "dropped"), CASES, ids=IDS)
def test_null_space_orthonormal_and_spanning(name, A, rank, dropped):
    n = A.shape[1]
    N = null_space(A)
    assert N.shape == (n, n - rank)
    assert np.linalg.norm(N.T @ N - np.eye(n - rank)) <= 1e-14
    assert np.linalg.norm(A @ N) <= dropped + 1e-14 * max(1.0, np.linalg.norm(A, 2))
    # spanning: N N^T is the projector onto N(A)
    assert np.abs(N @ N.T - null_projector(A)).max() <= 1e-13
    # and the columns of N together with the row space fill R^n
    V1 = row_space(A).V1
    assert np.linalg.matrix_rank(np.hstack([N, V1])) == n


def _min_w_norm_kkt(A: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """min x^T W x s.t. A x = b (A full row rank) from its KKT system."""
    m, n = A.shape
    K = np.block([[W, A.T], [A, np.zeros((m, m))]])
    return np.linalg.solve(K, np.concatenate([np.zeros(n), b]))[:n]


def test_weighted_pinv_is_minimum_weighted_norm_solution():
    rng = np.random.default_rng(5)
    n = 7
    W = _spd(rng, n, cond=30.0)
    A = rng.standard_normal((3, n))
    b = rng.standard_normal(3)
    x = weighted_pinv(A, W) @ b
    assert np.abs(A @ x - b).max() <= 1e-12
    ref = _min_w_norm_kkt(A, W, b)
    assert np.abs(x - ref).max() <= 1e-11 * np.abs(ref).max()
    # closed form W^-1 A^T (A W^-1 A^T)^-1
    Wi = np.linalg.inv(W)
    closed = Wi @ A.T @ np.linalg.inv(A @ Wi @ A.T)
    assert np.abs(weighted_pinv(A, W) - closed).max() <= 1e-10 * np.abs(closed).max()
    # every other solution x + z (z in N(A)) has a larger weighted norm
    N = null_space(A)
    J0 = x @ W @ x
    for _ in range(20):
        z = N @ rng.standard_normal(N.shape[1]) * 0.1
        assert (x + z) @ W @ (x + z) > J0
    # W = I gives the Moore-Penrose pseudo-inverse
    assert np.abs(weighted_pinv(A, np.eye(n)) - np.linalg.pinv(A)).max() <= 1e-12


def test_weighted_pinv_rank_deficient_and_vanishing_rows():
    """Redundant rows: the answer is the min-W-norm solution of the independent rows."""
    rng = np.random.default_rng(6)
    n = 6
    W = _spd(rng, n)
    A0 = rng.standard_normal((2, n))
    A = np.vstack([A0, A0[0] + A0[1], 1e-12 * A0[0]])  # redundant row + vanishing row
    x_true_rows = rng.standard_normal(2)
    b = np.concatenate([x_true_rows, [x_true_rows.sum(), 1e-12 * x_true_rows[0]]])
    x = weighted_pinv(A, W) @ b
    ref = _min_w_norm_kkt(A0, W, x_true_rows)
    assert np.abs(x - ref).max() <= 1e-10 * np.abs(ref).max()
    # the raw formula with the full A would need (A W^-1 A^T)^-1 of a singular matrix
    Wi = np.linalg.inv(W)
    assert np.linalg.matrix_rank(A @ Wi @ A.T) < A.shape[0]
    # zero matrix -> zero
    assert np.array_equal(weighted_pinv(np.zeros((2, n)), W), np.zeros((n, 2)))


def _kkt_projection(v, A, M):
    """min 0.5 (w - v)^T M (w - v) s.t. A w = 0, via the KKT system of independent rows."""
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    B = Vt[s >= TOL]  # an orthonormal basis of the constrained row space
    k, n = B.shape
    K = np.block([[M, B.T], [B, np.zeros((k, k))]])
    return np.linalg.solve(K, np.concatenate([M @ v, np.zeros(k)]))[:n]


@pytest.mark.parametrize("redundant", [False, True])
def test_metric_projection_minimises_kinetic_energy_change(redundant):
    rng = np.random.default_rng(8 + redundant)
    n = 7
    M = _spd(rng, n, cond=100.0)
    A = rng.standard_normal((3, n))
    if redundant:
        A = np.vstack([A, A[2], A[0] - A[1]])
    v = rng.standard_normal(n)
    w = metric_projection(v, A, M)
    # admissible
    assert np.abs(A @ w).max() <= 1e-13 * np.abs(A).max() * np.abs(v).max()
    # equals the KKT solution
    ref = _kkt_projection(v, A, M)
    assert np.abs(w - ref).max() <= 1e-11 * np.abs(ref).max()
    # optimality: the change v - w is M-orthogonal to N(A)
    N = null_space(A)
    assert np.abs(N.T @ M @ (v - w)).max() <= 1e-12 * np.abs(M @ v).max()
    # and any other admissible velocity changes the kinetic energy metric more
    d0 = (w - v) @ M @ (w - v)
    for _ in range(20):
        w2 = w + N @ (0.05 * rng.standard_normal(N.shape[1]))
        assert (w2 - v) @ M @ (w2 - v) > d0
    # an admissible velocity is left alone; the projection is idempotent
    assert np.abs(metric_projection(w, A, M) - w).max() <= 1e-13 * np.abs(w).max()
    # with M = I it is the orthogonal projection P v
    assert np.abs(metric_projection(v, A, np.eye(n)) - null_projector(A) @ v).max() <= 1e-13


@pytest.mark.parametrize(("name", "A", "rank", "dropped"), CASES, ids=IDS)
def test_full_row_rank_qr_certifies_only_what_the_svd_keeps(name, A, rank, dropped):
    """Accepted only when the SVD keeps every row; then Q spans the same row space
    and ``Q R^-T`` is numpy's pseudo-inverse."""
    f = full_row_rank_qr(A, TOL)
    m = A.shape[0]
    s = np.linalg.svd(A, compute_uv=False)
    if f is None:
        # declined: rank deficient, tall, or too close to the threshold to certify
        assert rank < m or s.min() < 2.0 * TOL * np.sqrt(m) or A.shape[0] > A.shape[1]
        return
    assert rank == m and s.min() >= 2.0 * TOL
    Q, Rinv = f
    np.testing.assert_allclose(Q.T @ Q, np.eye(m), atol=1e-13)
    np.testing.assert_allclose(Q @ Q.T, np.eye(A.shape[1]) - null_projector(A, TOL), atol=1e-12)
    np.testing.assert_allclose(Q @ Rinv.T, np.linalg.pinv(A), atol=1e-9 * np.abs(Rinv).max())


def test_full_row_rank_qr_declines_at_the_threshold():
    """Singular value 1.5 rank_tol: kept by the SVD, but not certified by the QR
    (the caller then takes the SVD); 1e3 rank_tol is certified."""
    rng = np.random.default_rng(7)
    assert full_row_rank_qr(_with_singular_values(rng, 4, 6, [2.0, 0.5, 1.0, 1.5e-9])) is None
    assert full_row_rank_qr(_with_singular_values(rng, 4, 6, [2.0, 0.5, 1.0, 1e-6])) is not None
    assert full_row_rank_qr(np.zeros((0, 4))) is None
