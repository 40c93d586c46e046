"""Curvature of the inertia metric, flatness, and the linearizing isometry.

Riemann tensor from the Christoffel symbols of the second kind (Arimoto
eq. (18)) and their derivatives, by central differences of the symbols::

    R^i_{jkl} = d_k Gamma^i_{lj} - d_l Gamma^i_{kj}
                + Gamma^i_{km} Gamma^m_{lj} - Gamma^i_{lm} Gamma^m_{kj}

(``R(d_k, d_l) d_j = R^i_{jkl} d_i``), Ricci ``R_jl = R^i_{jil}``, scalar
``g^{jl} R_jl`` and sectional ``K(X, Y) = <R(X, Y) Y, X> / (|X|^2 |Y|^2 - <X, Y>^2)``;
on the round sphere of radius r these give K = 1/r^2 and scalar 2/r^2.

Altafini eq. (9)-(12): a flat metric admits an isometry onto (R^n, I). For a
constant metric ``M = N^T N`` it is linear, ``x = N q``; in ``x`` the metric is
the identity and geodesics are straight lines.
"""

from __future__ import annotations

import numpy as np

from pfaff.geometry.metric import (
    MetricSource,
    check_metric,
    check_posture,
    christoffel_second,
    dimension,
    metric,
)

CURVATURE_STEP = 1e-4
"""Central-difference step on q for the derivatives of the Christoffel symbols.

Measured on the round unit sphere (exact K = 1): error ~1e-9 with exact
Christoffel symbols; ~1e-7 when the symbols themselves come from finite
differences of M (closed-form models, callables).
"""


def christoffel_derivative(
    source: MetricSource, q: np.ndarray, h: float = CURVATURE_STEP
) -> np.ndarray:
    """``dG[m, i, j, k] = d Gamma^i_{jk} / dq_m`` by central differences (step ``h``)."""
    n = dimension(source, q)
    q = check_posture(q, n)
    if not h > 0:
        raise ValueError(f"finite-difference step must be > 0, got {h!r}")
    out = np.empty((n, n, n, n))
    for m in range(n):
        e = np.zeros(n)
        e[m] = h
        out[m] = (christoffel_second(source, q + e) - christoffel_second(source, q - e)) / (2 * h)
    return out


def riemann(source: MetricSource, q: np.ndarray, h: float = CURVATURE_STEP) -> np.ndarray:
    """Riemann tensor ``R[i, j, k, l] = R^i_{jkl}`` (n, n, n, n) at ``q``."""
    G = christoffel_second(source, q)
    dG = christoffel_derivative(source, q, h)
    d1 = np.transpose(dG, (1, 3, 0, 2))  # [i, j, k, l] = dG[k, i, l, j]
    d2 = np.transpose(dG, (1, 3, 2, 0))  # [i, j, k, l] = dG[l, i, k, j]
    quad = np.einsum("ikm,mlj->ijkl", G, G) - np.einsum("ilm,mkj->ijkl", G, G)
    return d1 - d2 + quad


def ricci(R: np.ndarray) -> np.ndarray:
    """Ricci tensor ``R_jl = R^i_{jil}`` from :func:`riemann`."""
    return np.einsum("ijil->jl", R)


def scalar_curvature(source: MetricSource, q: np.ndarray, h: float = CURVATURE_STEP) -> float:
    """Scalar curvature ``g^{jl} R_jl`` (twice the Gaussian curvature in 2D)."""
    M = metric(source, q)
    return float(np.einsum("jl,jl->", np.linalg.inv(M), ricci(riemann(source, q, h))))


def sectional_curvature(
    source: MetricSource, q: np.ndarray, X, Y, h: float = CURVATURE_STEP
) -> float:
    """Sectional curvature ``K(X, Y)`` of the plane spanned by X and Y at ``q``.

    Raises
    ------
    ValueError
        When X and Y are (numerically) linearly dependent.
    """
    M = metric(source, q)
    n = M.shape[0]
    X, Y = check_posture(X, n, "X"), check_posture(Y, n, "Y")
    area2 = (X @ M @ X) * (Y @ M @ Y) - (X @ M @ Y) ** 2
    if not area2 > 1e-12 * (X @ M @ X) * (Y @ M @ Y):
        raise ValueError("sectional curvature needs two linearly independent vectors X, Y")
    R = riemann(source, q, h)
    RXYY = np.einsum("ijkl,j,k,l->i", R, Y, X, Y)
    return float(X @ M @ RXYY / area2)


def max_curvature(source: MetricSource, postures, h: float = CURVATURE_STEP) -> float:
    """Largest ``|R^i_{jkl}|`` over the given postures."""
    return max(float(np.abs(riemann(source, q, h)).max()) for q in np.atleast_2d(postures))


def is_flat(source: MetricSource, postures, tol: float = 1e-8, h: float = CURVATURE_STEP) -> bool:
    """Flatness test: ``max |R|`` over the postures is below ``tol``."""
    return max_curvature(source, postures, h) < tol


def linearizing_isometry(M: np.ndarray, kind: str = "cholesky") -> np.ndarray:
    """``N`` with ``M = N^T N`` for a constant metric (Altafini eq. (9)-(11)).

    ``x = N q`` is an isometry from (R^n, M) onto (R^n, I): ``x' = N q'`` and
    ``|x'|^2 = q'^T N^T N q'`` (eq. (11)); the Euler-Lagrange equations become
    ``x'' = N^-T tau`` (eq. (12)).

    Parameters
    ----------
    M : constant symmetric positive definite metric.
    kind : ``"cholesky"`` (N upper triangular) or ``"sqrt"`` (symmetric square
        root ``D^(1/2) P`` of the spectral factorization, rotated back).
    """
    M = check_metric(M)
    if kind == "cholesky":
        return np.linalg.cholesky(M).T
    if kind == "sqrt":
        lam, V = np.linalg.eigh(M)
        return (V * np.sqrt(lam)) @ V.T
    raise ValueError(f"unknown factorization {kind!r}; valid: cholesky, sqrt")


def pulled_back_metric(M: np.ndarray, N: np.ndarray) -> np.ndarray:
    """The metric in ``x = N q`` coordinates, ``N^-T M N^-1`` (identity for an isometry)."""
    Ninv = np.linalg.inv(N)
    return Ninv.T @ M @ Ninv


def straightness(x: np.ndarray) -> float:
    """Largest distance of the samples ``x`` (K, n) from the chord ``x[0] -> x[-1]``."""
    x = np.asarray(x, dtype=float)
    d = x[-1] - x[0]
    u = d / np.linalg.norm(d)
    r = x - x[0]
    return float(np.linalg.norm(r - np.outer(r @ u, u), axis=1).max())
