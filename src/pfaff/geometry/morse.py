"""A potential restricted to a constraint leaf: gradient, Hessian and its Morse test.

Arimoto & Yoshida (2010) prove convergence of blind grasping with a
Morse-Lyapunov argument: the closed-loop energy ``E = K + V`` decreases, and the
artificial potential ``V`` restricted to the constraint submanifold has a
nondegenerate minimum (Morse), or a manifold of minima nondegenerate in the
normal directions (Morse-Bott), at the rest state. pfaff checks the second part
numerically.

The constraint rows may be Pfaffian as long as they are integrable (Frobenius):
the states reachable from ``q`` then form a leaf of dimension ``n - rank A``.
The leaf is charted by flows of the constraint distribution,

    psi(a) = flow for unit time of the vector field  X_a(q) = P(q) Z a,

with ``P(q) = I - A^+ A`` (Aghili eq. 4) and ``Z`` an orthonormal basis of
``N(A(q_0))``; ``psi(0) = q_0`` and ``d psi(0) = Z``. Every flow stays on the
leaf, so ``f(a) = V(psi(a))`` is ``V`` restricted to the leaf in a chart.
Central differences of ``f`` give the leaf gradient ``Z^T grad V`` and, where
that gradient vanishes, the Hessian of the restriction (at a critical point it
does not depend on the chart). Its eigenvalues decide: all positive -- a
nondegenerate (Morse) minimum; zeros -- the rest states are not isolated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.linalg import DEFAULT_RANK_TOL, identity, metric_projection, null_space


def _distribution(cset: ConstraintSet, q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``P(q) d``: ``d`` projected onto the constraint distribution at ``q``
    (:func:`pfaff.linalg.metric_projection` in the Euclidean metric)."""
    mech = cset.mechanism
    snap = mech.compute(q, None, cset.frames, dynamics=False)
    return metric_projection(d, cset.evaluate(snap).A, identity(len(d)), DEFAULT_RANK_TOL)


def leaf_flow(cset: ConstraintSet, q: np.ndarray, d: np.ndarray, n_steps: int = 4) -> np.ndarray:
    """Flow for unit time of ``X(q) = P(q) d`` from ``q`` (RK4, ``n_steps`` steps).

    The end point lies on the leaf through ``q`` up to the RK4 error
    ``O(|d|^5 / n_steps^4)``.
    """
    mech = cset.mechanism
    h = 1.0 / n_steps
    for _ in range(n_steps):
        k1 = _distribution(cset, q, d)
        k2 = _distribution(cset, mech.integrate(q, 0.5 * h * k1), d)
        k3 = _distribution(cset, mech.integrate(q, 0.5 * h * k2), d)
        k4 = _distribution(cset, mech.integrate(q, h * k3), d)
        q = mech.integrate(q, h * (k1 + 2 * k2 + 2 * k3 + k4) / 6)
    return q


@dataclass(frozen=True)
class LeafHessian:
    """A potential restricted to the leaf through ``q``, in the basis ``Z``.

    Attributes
    ----------
    Z : (n, k) orthonormal basis of ``N(A(q))``, the leaf's tangent space.
    gradient : (k,) leaf gradient ``Z^T grad V``.
    hessian : (k, k) Hessian of the restriction (the chart's second derivatives).
    eigenvalues : ascending eigenvalues of ``hessian``.
    error : estimated absolute error of the entries of ``hessian`` (units of
        V per chart unit squared): the truncation error by Richardson (the
        Hessian at ``h`` against ``2 h``) plus the rounding bound
        ``100 eps max|V| / h^2``.
    """

    Z: np.ndarray
    gradient: np.ndarray
    hessian: np.ndarray
    eigenvalues: np.ndarray
    error: float

    def is_morse_minimum(self, tol: float | None = None) -> bool:
        """Every eigenvalue above ``tol``: a nondegenerate (Morse) minimum.

        ``tol`` is absolute, in the units of the Hessian; the default is ten
        times :attr:`error`, so an eigenvalue that the finite differences
        cannot tell from zero never counts as positive (a ratio to the largest
        eigenvalue would: it is 1 for a 1x1 Hessian whatever its size).
        """
        tol = 10.0 * self.error if tol is None else tol
        ev = self.eigenvalues
        return bool(ev.size and ev[0] > tol)


def _central_differences(f: Callable[[np.ndarray], float], f0: float, k: int, h: float):
    """Gradient, Hessian and the largest |f| sampled, by central differences of step ``h``."""
    E = h * np.eye(k)
    fp = np.array([f(E[i]) for i in range(k)])
    fm = np.array([f(-E[i]) for i in range(k)])
    grad = (fp - fm) / (2 * h)
    H = np.diag((fp - 2 * f0 + fm) / h**2)
    fmax = max([abs(f0), *np.abs(fp), *np.abs(fm)])
    for i in range(k):
        for j in range(i + 1, k):
            c = [f(E[i] + E[j]), f(E[i] - E[j]), f(E[j] - E[i]), f(-E[i] - E[j])]
            H[i, j] = H[j, i] = (c[0] - c[1] - c[2] + c[3]) / (4 * h**2)
            fmax = max(fmax, *map(abs, c))
    return grad, H, fmax


def leaf_hessian(
    potential: Callable[[np.ndarray], float],
    cset: ConstraintSet,
    q: np.ndarray,
    h: float = 1e-3,
    n_steps: int = 4,
) -> LeafHessian:
    """Gradient and Hessian of ``potential`` restricted to the constraint leaf through ``q``.

    Parameters
    ----------
    potential : ``V(q)`` (configuration -> float).
    cset : the constraints; Pfaffian rows must be integrable (check with
        :func:`pfaff.manipulation.rolling.frobenius_defect` or similar).
    q : a configuration on the constraints.
    h : step of the central differences in the chart (units of q); the
        truncation error is ``O(h^2)``, the rounding error ``O(eps |V| / h^2)``.
        The differences are taken at ``h`` and ``2 h``; their difference
        estimates the truncation error (:attr:`LeafHessian.error`).
    n_steps : RK4 steps per flow.
    """
    if not h > 0:
        raise ValueError(f"h must be > 0, got {h!r}")
    mech = cset.mechanism
    A = cset.evaluate(mech.compute(q, None, cset.frames, dynamics=False)).A
    Z = null_space(A, DEFAULT_RANK_TOL)
    k = Z.shape[1]

    def f(a: np.ndarray) -> float:
        return float(potential(leaf_flow(cset, q, Z @ a, n_steps)))

    f0 = float(potential(q))
    grad, H, fmax = _central_differences(f, f0, k, h)
    _, H2, fmax2 = _central_differences(f, f0, k, 2 * h)
    trunc = float(np.abs(H - H2).max()) / 3.0 if k else 0.0
    error = trunc + 100 * np.finfo(float).eps * max(fmax, fmax2) / h**2
    return LeafHessian(Z, grad, H, np.linalg.eigvalsh(H), error)
