"""The inertia matrix as a Riemannian metric: Christoffel symbols and Arimoto's S.

Arimoto Sec. 2-3: the set of postures of a robot is a Riemannian manifold
whose metric ``g_ij(q)`` is the inertia matrix ``M(q)``. Index conventions
used throughout the geometry layer (0-based arrays):

- ``dM[k, i, j] = dM_ij / dq_k``;
- Christoffel symbols of the first kind (Arimoto eq. (9)/(17), first index
  lowered)::

      Gamma1[i, j, k] = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)

  so that Lagrange's equation reads ``M a + Gamma1(v, v) = u`` (eq. (16));
- second kind ``Gamma2[l, j, k] = (M^-1)_li Gamma1[i, j, k]`` (eq. (18)), and
  the geodesic equation is ``a + Gamma2(v, v) = 0`` (eq. (8)/(20), u = 0).

A *metric source* is either a :class:`~pfaff.mechanism.Mechanism` with
``nq == nv`` (its ``compute(q).M``) or any callable ``q -> M(q)``.

Derivatives of M. For a Pinocchio mechanism the derivative is exact (no step):
Pinocchio's Coriolis matrix satisfies ``M' = C(q, v) + C(q, v)^T`` and is
linear in ``v``, so ``dM/dq_k = C(q, e_k) + C(q, e_k)^T`` (one call of
``pin.computeCoriolisMatrix`` per coordinate, O(n^3) in total). This is
independent of gravity and shares no code with the finite-difference witness
:func:`christoffel_fd`. For closed-form models and callables, central
differences of M are used (step ``FD_STEP``; measured error on the 2-link
arm: ~1e-11 against the exact symbols, see tests/test_geometry_metric.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pfaff.mechanism.base import Mechanism

MetricSource = Mechanism | Callable[[np.ndarray], np.ndarray]

FD_STEP = 1e-5
"""Central-difference step on q (rad) for dM/dq: truncation O(h^2 M''') ~1e-10,
rounding O(eps |M| / h) ~1e-11 for unit-size inertia matrices."""


class MetricError(ValueError):
    """A metric that is not a symmetric positive definite (n, n) matrix."""


def dimension(source: MetricSource, q: np.ndarray | None = None) -> int:
    """Number of coordinates of a metric source (``nv`` of a mechanism)."""
    if isinstance(source, Mechanism):
        if source.nq != source.nv:
            raise ValueError(
                f"{source.name}: the geometry layer needs nq == nv (got nq = {source.nq}, "
                f"nv = {source.nv}); Lie-group configurations are not supported"
            )
        return source.nv
    if q is None:
        raise ValueError("a callable metric needs a configuration to know its size")
    return int(np.asarray(q).size)


def check_posture(q, n: int, what: str = "posture") -> np.ndarray:
    """``q`` as a float vector of size ``n``; ValueError naming the expected size."""
    arr = np.asarray(q, dtype=float)
    if arr.shape != (n,):
        raise ValueError(f"{what} must be a vector of size {n}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite, got {arr}")
    return arr


def check_metric(M: np.ndarray, n: int | None = None, rtol: float = 1e-10) -> np.ndarray:
    """Validate a metric matrix: square (n, n), symmetric and positive definite.

    Raises
    ------
    MetricError
        With the offending property (shape, asymmetry, smallest eigenvalue).
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or (n is not None and M.shape[0] != n):
        want = f"({n}, {n})" if n is not None else "square"
        raise MetricError(f"metric must be {want}, got shape {M.shape}")
    scale = max(float(np.abs(M).max()), np.finfo(float).tiny)
    asym = float(np.abs(M - M.T).max())
    if not np.all(np.isfinite(M)) or asym > rtol * scale:
        raise MetricError(f"metric must be symmetric: max |M - M^T| = {asym:.3g}")
    lam_min = float(np.linalg.eigvalsh(M).min())
    if not lam_min > 0:
        raise MetricError(f"metric must be positive definite: smallest eigenvalue {lam_min:.3g}")
    return M


def metric(source: MetricSource, q: np.ndarray) -> np.ndarray:
    """The metric ``g_ij(q) = M(q)`` (Arimoto eq. (6)/(21)), validated."""
    n = dimension(source, q)
    q = check_posture(q, n)
    M = source.compute(q).M if isinstance(source, Mechanism) else source(q)
    return check_metric(M, n)


def dM_fd(source: MetricSource, q: np.ndarray, h: float = FD_STEP) -> np.ndarray:
    """``dM[k] = dM/dq_k`` by central differences with step ``h`` (n, n, n)."""
    n = dimension(source, q)
    q = check_posture(q, n)
    if not h > 0:
        raise ValueError(f"finite-difference step must be > 0, got {h!r}")
    out = np.empty((n, n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        out[k] = (metric(source, q + e) - metric(source, q - e)) / (2 * h)
    return out


def dM_dq(source: MetricSource, q: np.ndarray) -> np.ndarray:
    """``dM[k] = dM/dq_k`` (n, n, n): exact for Pinocchio, else :func:`dM_fd`.

    For a Pinocchio mechanism, ``M' = C + C^T`` with Pinocchio's Coriolis
    matrix ``C(q, v)``, linear in ``v``; with ``v = e_k`` this is ``dM/dq_k``.
    """
    model = getattr(source, "model", None)
    if model is None or not isinstance(source, Mechanism):
        return dM_fd(source, q)
    import pinocchio as pin

    n = dimension(source, q)
    q = check_posture(q, n)
    out = np.empty((n, n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1.0
        C = pin.computeCoriolisMatrix(model, source.data, q, e)
        out[k] = C + C.T
    return out


def christoffel_from_dM(dM: np.ndarray) -> np.ndarray:
    """First-kind symbols from ``dM[k, i, j] = dM_ij/dq_k`` (Arimoto eq. (17)).

    ``Gamma1[i, j, k] = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)``.
    """
    dM = np.asarray(dM, dtype=float)
    t1 = np.transpose(dM, (1, 2, 0))  # [i, j, k] = dM[k, i, j]
    t2 = np.transpose(dM, (1, 0, 2))  # [i, j, k] = dM[j, i, k]
    return 0.5 * (t1 + t2 - dM)


def christoffel_first(source: MetricSource, q: np.ndarray) -> np.ndarray:
    """Christoffel symbols of the first kind ``Gamma1[i, j, k]`` (eq. (9)/(17)).

    Exact (Pinocchio's Coriolis matrix) for a Pinocchio mechanism, central
    differences of M otherwise. Symmetric in ``j, k``.
    """
    return christoffel_from_dM(dM_dq(source, q))


def christoffel_fd(source: MetricSource, q: np.ndarray, h: float = FD_STEP) -> np.ndarray:
    """Witness of :func:`christoffel_first` from central differences of M (step ``h``).

    With ``h = 1e-5`` the difference to the exact symbols is ~7e-12 (1e-4: 3e-10,
    1e-6: 1.4e-10, rounding) on the
    2-link arm of the tests (unit masses and lengths).
    """
    return christoffel_from_dM(dM_fd(source, q, h))


def christoffel_second(source: MetricSource, q: np.ndarray) -> np.ndarray:
    """Christoffel symbols of the second kind ``Gamma2[l, j, k]`` (Arimoto eq. (18))."""
    M = metric(source, q)
    G1 = christoffel_first(source, q)
    n = M.shape[0]
    return np.linalg.solve(M, G1.reshape(n, n * n)).reshape(n, n, n)


def quadratic(G: np.ndarray, v: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """``G(v, w)_i = G[i, j, k] v_j w_k`` (``w = v`` by default)."""
    return np.einsum("ijk,j,k->i", G, v, v if w is None else w)


def coriolis_matrix(Gamma1: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Christoffel Coriolis matrix ``C_ij = Gamma1[i, j, k] v_k``; ``C v = Gamma1(v, v)``."""
    return np.einsum("ijk,k->ij", Gamma1, v)


def mdot(dM: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``M'(q, v) = sum_k dM/dq_k v_k``."""
    return np.einsum("kij,k->ij", dM, v)


def arimoto_S(dM: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Arimoto's skew-symmetric matrix ``S(q, q')`` (eq. (3)).

    ``s_kj = 1/2 sum_i (dM_ki/dq_j - dM_ij/dq_k) q'_i``, so that Lagrange's
    equation is ``M a + (1/2 M' + S) q' = u`` (eq. (1)/(13)) and
    ``S = C - M'/2`` with the Christoffel Coriolis matrix C.
    """
    a = np.einsum("jki,i->kj", dM, v)  # sum_i dM_ki/dq_j v_i
    b = np.einsum("kij,i->kj", dM, v)  # sum_i dM_ij/dq_k v_i
    return 0.5 * (a - b)


def identity_13_16_residual(source: MetricSource, q: np.ndarray, v: np.ndarray) -> float:
    """Check Arimoto's equivalence (13) <=> (16) at ``(q, v)``.

    Returns ``max |(1/2 M' + S) v - Gamma1(v, v)|`` with S from eq. (3) and
    Gamma1 from eq. (17): zero up to rounding when the two forms agree.
    """
    n = dimension(source, q)
    v = check_posture(v, n, "velocity")
    dM = dM_dq(source, q)
    lhs = (0.5 * mdot(dM, v) + arimoto_S(dM, v)) @ v
    return float(np.abs(lhs - quadratic(christoffel_from_dM(dM), v)).max())


def geodesic_acceleration(source: MetricSource, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``a = -Gamma2(q)(v, v)``: the geodesic equation (Arimoto eq. (8)/(20), u = 0).

    Hot path of the geodesic integrators, without input validation. For a
    Pinocchio mechanism it is the unforced dynamics without gravity,
    ``-M^-1 C(q, v) v`` (CRBA and Pinocchio's Coriolis matrix, one pass each);
    otherwise the Christoffel symbols from central differences of M. The two
    are compared with each other in the tests.
    """
    model = getattr(source, "model", None)
    if model is not None and isinstance(source, Mechanism):
        import pinocchio as pin

        data = source.data
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        c = pin.computeCoriolisMatrix(model, data, q, v) @ v
        return -np.linalg.solve(M, c)
    return -quadratic(christoffel_second(source, q), v)
