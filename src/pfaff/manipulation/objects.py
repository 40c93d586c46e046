"""Object motion constraints of Yoshikawa & Zheng (IJRR 1993, Sec. 2.2 and 2.4).

- ``T(r)`` (eq. 4-7): ``v = T r'`` maps the rate of the object position vector
  ``r = (x, phi)`` to its velocity ``v = (x', omega)``; Z-Y-Z Euler angles
  (eq. 7) in 3D, the identity in the plane (``r = (x, y, theta)``).
- Hypersurfaces ``p_i(r) = 0`` (eq. 17) and position functions ``s_j(r)``
  (eq. 18) give ``E_F``, ``E_P``, ``E = [E_P; E_F]`` and their time
  derivatives (eq. 19-22). ``E_F`` rows are force-control directions,
  ``E_P`` rows position-control directions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Fn = Callable[[np.ndarray], float]
Vec = Callable[[np.ndarray], np.ndarray]


def euler_zyz_T(r: np.ndarray) -> np.ndarray:
    """``T = diag(I_3, T_r)`` of eq. (6-7) for Z-Y-Z Euler angles ``(phi, theta, psi)``."""
    phi, theta = float(r[3]), float(r[4])
    sp, cp, st, ct = math.sin(phi), math.cos(phi), math.sin(theta), math.cos(theta)
    T = np.eye(6)
    T[3:, 3:] = [[0.0, -sp, cp * st], [0.0, cp, sp * st], [1.0, 0.0, ct]]
    return T


def euler_zyz_T_rate(r: np.ndarray, rd: np.ndarray) -> np.ndarray:
    """``T'`` of eq. (7) along ``r' = rd``."""
    phi, theta = float(r[3]), float(r[4])
    dp, dt = float(rd[3]), float(rd[4])
    sp, cp, st, ct = math.sin(phi), math.cos(phi), math.sin(theta), math.cos(theta)
    Td = np.zeros((6, 6))
    Td[3:, 3:] = [
        [0.0, -cp * dp, -sp * st * dp + cp * ct * dt],
        [0.0, -sp * dp, cp * st * dp + sp * ct * dt],
        [0.0, 0.0, -st * dt],
    ]
    return Td


def euler_zyz_R(r: np.ndarray) -> np.ndarray:
    """Rotation ``R_z(phi) R_y(theta) R_z(psi)`` whose rate is ``omega = T_r phi'``."""
    a, b, c = (float(x) for x in r[3:6])

    def rz(t):
        ct, st = math.cos(t), math.sin(t)
        return np.array([[ct, -st, 0.0], [st, ct, 0.0], [0.0, 0.0, 1.0]])

    cb, sb = math.cos(b), math.sin(b)
    ry = np.array([[cb, 0.0, sb], [0.0, 1.0, 0.0], [-sb, 0.0, cb]])
    return rz(a) @ ry @ rz(c)


def velocity_map(r: np.ndarray) -> np.ndarray:
    """``T(r)`` (eq. 4): identity for a planar ``r`` (3,), eq. (7) for a 3D ``r`` (6,)."""
    return np.eye(3) if len(r) == 3 else euler_zyz_T(r)


def velocity_map_rate(r: np.ndarray, rd: np.ndarray) -> np.ndarray:
    """``T'(r, r')``: zero in the plane."""
    return np.zeros((3, 3)) if len(r) == 3 else euler_zyz_T_rate(r, rd)


@dataclass
class ScalarFunction:
    """A scalar function of ``r`` with its gradient and Hessian (eq. 17-18).

    Missing derivatives are taken by central finite differences (step ``h``).
    ``linear``: the gradient is constant and the Hessian zero (:func:`linear_function`),
    so :class:`ObjectConstraints` evaluates its rows once.
    """

    f: Fn
    grad: Vec | None = None
    hess: Callable[[np.ndarray], np.ndarray] | None = None
    h: float = 1e-6
    linear: bool = False

    def gradient(self, r: np.ndarray) -> np.ndarray:
        if self.grad is not None:
            return np.asarray(self.grad(r), dtype=float)
        E = np.eye(len(r)) * self.h
        return np.array([(self.f(r + e) - self.f(r - e)) / (2 * self.h) for e in E])

    def hessian(self, r: np.ndarray) -> np.ndarray:
        if self.hess is not None:
            return np.asarray(self.hess(r), dtype=float)
        hh = 1e-4
        E = np.eye(len(r)) * hh
        H = np.array([(self.gradient(r + e) - self.gradient(r - e)) / (2 * hh) for e in E])
        return 0.5 * (H + H.T)


def linear_function(c: Sequence[float], d: float = 0.0) -> ScalarFunction:
    """``c . r - d`` (a plane or a coordinate): constant gradient, zero Hessian."""
    c = np.asarray(c, dtype=float)
    return ScalarFunction(
        lambda r: float(c @ r - d), lambda r: c, lambda r: np.zeros((len(c), len(c))),
        linear=True,
    )  # fmt: skip


class ObjectConstraints:
    """Hypersurfaces ``p_i(r) = 0`` and position functions ``s_j(r)`` (eq. 17-22).

    Parameters
    ----------
    surfaces : the C functions ``p_i`` (their gradients point in the direction
        in which the object pushes on the environment: ``f_F > 0`` presses).
    positions : the (n_r - C) functions ``s_j`` giving ``r_P`` (eq. 18).
    n_r : dimension of ``r`` (6 in 3D, 3 in the plane).
    """

    def __init__(
        self,
        surfaces: Sequence[ScalarFunction],
        positions: Sequence[ScalarFunction],
        n_r: int,
    ) -> None:
        self.surfaces, self.positions, self.n_r = list(surfaces), list(positions), n_r
        if len(self.surfaces) + len(self.positions) != n_r:
            raise ValueError(
                f"{len(self.surfaces)} hypersurfaces + {len(self.positions)} position "
                f"functions must equal dim r = {n_r} (eq. 17-18)"
            )
        # (E, E') of an all-linear function list, evaluated once (read-only), else None
        self._fixed_F = self._fixed_rows(self.surfaces)
        self._fixed_P = self._fixed_rows(self.positions)

    def _fixed_rows(self, fns) -> tuple[np.ndarray, np.ndarray] | None:
        if not all(s.linear for s in fns):
            return None
        E = np.array([s.gradient(np.zeros(self.n_r)) for s in fns]).reshape(-1, self.n_r)
        Ed = np.zeros_like(E)
        E.flags.writeable = Ed.flags.writeable = False
        return E, Ed

    @property
    def C(self) -> int:
        return len(self.surfaces)

    def p(self, r: np.ndarray) -> np.ndarray:
        """Residuals ``p_i(r)`` (eq. 17)."""
        return np.array([s.f(r) for s in self.surfaces])

    def r_P(self, r: np.ndarray) -> np.ndarray:
        """Controlled position ``r_P = (s_1(r), ...)`` (eq. 18)."""
        return np.array([s.f(r) for s in self.positions])

    def _rows(self, fns, fixed, r) -> np.ndarray:
        if fixed is not None:
            return fixed[0]
        return np.array([s.gradient(r) for s in fns]).reshape(-1, self.n_r)

    def _rates(self, fns, fixed, r, rd) -> np.ndarray:
        if fixed is not None:
            return fixed[1]
        return np.array([s.hessian(r) @ rd for s in fns]).reshape(-1, self.n_r)

    def E_F(self, r: np.ndarray) -> np.ndarray:
        """(C, n_r) rows ``dp_i/dr`` (eq. 19)."""
        return self._rows(self.surfaces, self._fixed_F, r)

    def E_P(self, r: np.ndarray) -> np.ndarray:
        """(n_r - C, n_r) rows ``ds_j/dr`` (eq. 21)."""
        return self._rows(self.positions, self._fixed_P, r)

    def E_F_rate(self, r: np.ndarray, rd: np.ndarray) -> np.ndarray:
        """``E_F'`` along ``r' = rd`` (eq. 20): rows ``(H_i rd)^T``."""
        return self._rates(self.surfaces, self._fixed_F, r, rd)

    def E_P_rate(self, r: np.ndarray, rd: np.ndarray) -> np.ndarray:
        """``E_P'`` along ``r' = rd`` (eq. 22)."""
        return self._rates(self.positions, self._fixed_P, r, rd)

    def E(self, r: np.ndarray, independence_tol: float = 1e-8) -> np.ndarray:
        """``E = [E_P; E_F]`` (Sec. 2.4); raises ValueError when it is singular.

        The functions must be mutually independent (Sec. 2.4), i.e. ``E``
        invertible: otherwise the constraint frame does not exist. Each row is
        the gradient of one function, in its own units, so independence is
        judged on the rows scaled to unit length: ``E`` is singular when the
        smallest singular value of the row-normalised matrix (dimensionless,
        1 for orthogonal rows) is at most ``independence_tol``, or when a
        gradient vanishes (norm <= 1e-12, in the function's units per unit of
        r). A condition number would be 1 for any nonzero 1x1 ``E``, however
        small.
        """
        E = np.vstack([self.E_P(r), self.E_F(r)])
        norms = np.linalg.norm(E, axis=1)
        dead = norms <= 1e-12
        sigma = 0.0
        if not dead.any():
            sigma = float(np.linalg.svd(E / norms[:, None], compute_uv=False)[-1])
        if dead.any() or not sigma > independence_tol:
            which = ", ".join(str(i) for i in np.flatnonzero(dead))
            why = (
                f"the gradient of row(s) {which} vanishes"
                if dead.any()
                else f"its row-normalised smallest singular value is {sigma:.3g} "
                f"<= {independence_tol:g}"
            )
            raise ValueError(
                "the hypersurfaces p_i and position functions s_j are not independent "
                f"at r = {np.round(r, 6).tolist()}: E = [E_P; E_F] is singular ({why}; "
                "eq. 17-18)"
            )
        return E


def planar_contact_surface(offset, normal, level: float) -> ScalarFunction:
    """``p(r)`` of a planar object whose body point ``offset`` touches the line ``n . x = level``.

    ``r = (x, y, theta)``; ``p = n . (x + R(theta) offset) - level``, with ``n``
    the unit direction in which the object presses on the line.
    """
    o = np.asarray(offset, dtype=float)[:2]
    n = np.asarray(normal, dtype=float)[:2]
    n = n / np.linalg.norm(n)

    def pt(r):
        c, s = np.cos(r[2]), np.sin(r[2])
        return np.array([c * o[0] - s * o[1], s * o[0] + c * o[1]])

    def f(r):
        return float(n @ (r[:2] + pt(r)) - level)

    def grad(r):
        c, s = np.cos(r[2]), np.sin(r[2])
        dp = np.array([-s * o[0] - c * o[1], c * o[0] - s * o[1]])
        return np.array([n[0], n[1], n @ dp])

    def hess(r):
        H = np.zeros((3, 3))
        H[2, 2] = -(n @ pt(r))
        return H

    return ScalarFunction(f, grad, hess)
