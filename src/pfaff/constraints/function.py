"""User constraints from functions: a holonomic ``Phi(q)`` with its Jacobian and drift, or
a Pfaffian ``A(q) v = 0``. The compiled core calls them from its loop
(:mod:`pfaff.constraints.python_rows`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.errors import ModelError
from pfaff.mechanism.base import Mechanism, Snapshot


class FunctionConstraint(Constraint):
    """A holonomic or Pfaffian constraint from user functions.

    Parameters
    ----------
    dim : number of rows.
    phi : ``q -> Phi(q)`` (holonomic; omit for a Pfaffian constraint).
    jacobian : ``q -> A(q)`` (dim, nv); for a holonomic constraint, central
        finite differences of ``phi`` along the mechanism's tangent
        directions when not given. Required for a Pfaffian constraint.
    drift : ``(q, v) -> A'(q, v) v``; when not given, the second difference
        of ``Phi`` along ``v`` (holonomic, from ``phi`` alone) or the central
        difference of the given ``A(q(t)) v`` along ``v``.
    fd_step : finite-difference step of the Jacobian and of ``A(q(t))``.
    drift_step : step of the second difference of ``Phi`` (default 1e-4:
        truncation and roundoff both ~1e-8).

    Notes
    -----
    Use :func:`~pfaff.constraints.check_derivatives` to check a supplied
    Jacobian against its residual (for finite-difference derivatives the
    check compares a difference with itself and says nothing).
    """

    def __init__(
        self,
        dim: int,
        phi: Callable[[np.ndarray], np.ndarray] | None = None,
        jacobian: Callable[[np.ndarray], np.ndarray] | None = None,
        drift: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
        fd_step: float = 1e-6,
        drift_step: float = 1e-4,
        name: str = "user constraint",
    ):
        if phi is None and jacobian is None:
            raise ModelError("a user constraint needs phi (holonomic) or jacobian (Pfaffian)")
        if int(dim) < 1:
            raise ModelError(f"constraint dimension must be >= 1, got {dim!r}")
        self.dim, self.holonomic = int(dim), phi is not None
        self._phi, self._jac, self._drift, self.eps = phi, jacobian, drift, fd_step
        self.drift_step = drift_step
        self.supplied_derivatives = jacobian is not None or drift is not None
        self.name = name
        self.mech: Mechanism | None = None

    def bind(self, mechanism: Mechanism) -> None:
        self.mech = mechanism

    def _shape(self, x, shape, what):
        a = np.asarray(x, dtype=float)
        if a.shape != shape:
            a = a.reshape(shape) if a.size == int(np.prod(shape)) else a
        if a.shape != shape:
            raise ModelError(f"{self.name}: {what} has shape {np.shape(x)}, expected {shape}")
        return a

    def residual(self, snap: Snapshot) -> np.ndarray:
        if not self.holonomic:
            return super().residual(snap)
        return self._shape(self._phi(snap.q), (self.dim,), "phi(q)")

    def _A(self, q: np.ndarray) -> np.ndarray:
        nv = self.mech.nv
        if self._jac is not None:
            return self._shape(self._jac(q), (self.dim, nv), "jacobian(q)")
        A = np.empty((self.dim, nv))
        for i in range(nv):
            e = np.zeros(nv)
            e[i] = self.eps
            A[:, i] = (
                np.asarray(self._phi(self.mech.integrate(q, e)), float).reshape(-1)
                - np.asarray(self._phi(self.mech.integrate(q, -e)), float).reshape(-1)
            ) / (2 * self.eps)
        return A

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        return self._A(snap.q)

    def drift(self, snap: Snapshot) -> np.ndarray:
        q, v = snap.q, snap.v
        if self._drift is not None:
            return self._shape(self._drift(q, v), (self.dim,), "drift(q, v)")
        s = float(np.linalg.norm(v))
        if s == 0.0:
            return np.zeros(self.dim)
        if self._jac is None:
            # A'v = d^2/dh^2 Phi(q(h)) along v: one second difference of Phi (step
            # fd_drift_step / |v|: truncation ~step^2, roundoff ~1e-16 / step^2)
            h = self.drift_step / s
            f = lambda x: np.asarray(self._phi(x), dtype=float).reshape(-1)
            fp, f0, fm = f(self.mech.integrate(q, h * v)), f(q), f(self.mech.integrate(q, -h * v))
            return (fp - 2 * f0 + fm) / (h * h)
        # a given A: one central difference of A(q(h)) v along v
        h = self.eps / s
        dA = (self._A(self.mech.integrate(q, h * v)) - self._A(self.mech.integrate(q, -h * v))) / (
            2 * h
        )
        return dA @ v
