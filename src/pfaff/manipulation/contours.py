"""Closed smooth planar contours parametrised by arclength (Arimoto & Yoshida 2010, Sec. 2).

A contour is a closed, simple, counter-clockwise curve ``gamma`` in the local
frame of a body. Each class gives ``gamma`` and its first two derivatives in a
convenient parameter ``u`` (period ``U``); the arclength ``s(u) = int |gamma'|``
is tabulated once by 16-point Gauss-Legendre rules on panels (to ~1e-15 of the
length for the smooth curves here) and inverted by Newton's method, so that every
quantity is also available by arclength ``s`` in ``[0, L)``.

Conventions (used by :mod:`pfaff.manipulation.rolling`):

- unit tangent ``t = gamma_s`` (counter-clockwise), outward unit normal
  ``n = (t_y, -t_x)``;
- signed curvature ``kappa = x' y'' - y' x''`` (per unit arclength), > 0 where the
  contour is convex; Frenet: ``t_s = -kappa n``, ``n_s = kappa t``;
- the normal angle ``psi(s) = atan2(n_y, n_x)`` obeys ``psi_s = kappa`` (the paper's
  ``theta_i(s)`` of eq. 64, measured here from the outward normal).

The contact-point solver :meth:`Contour.foot_point` finds the point whose normal
passes through a given point ``c`` (a fingertip centre): ``(c - gamma(u)) . gamma'(u) = 0``,
the nearest such point for ``c`` outside the contour.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from bisect import bisect_right

import numpy as np
from scipy.interpolate import CubicSpline

from pfaff.lowering import lowers

__all__ = ["Contour", "Circle", "Ellipse", "Superellipse", "SplineContour"]

_GX, _GW = np.polynomial.legendre.leggauss(16)


def _xy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty((x.size, 2))
    out[:, 0], out[:, 1] = x, y
    return out


class Contour(ABC):
    """A closed smooth planar curve with arclength tables (see the module docstring)."""

    U: float = 2 * np.pi  #: period of the parameter u
    name: str = "contour"

    def __init__(self, n_panels: int = 128, knots: np.ndarray | None = None) -> None:
        self._knots = np.linspace(0.0, self.U, n_panels + 1) if knots is None else knots
        a, b = self._knots[:-1], self._knots[1:]
        seg = self._panel_integral(a, b)
        self._S = np.concatenate([[0.0], np.cumsum(seg)])
        self.length = float(self._S[-1])
        us = np.linspace(0.0, self.U, 2049)[:-1]
        _, g1, _ = self.derivs(us)
        if np.min(np.hypot(g1[:, 0], g1[:, 1])) <= 1e-12 * self.length:
            raise ValueError(f"{self.name}: the curve has a cusp (zero parametric speed)")

    # -- parametric description ------------------------------------------------
    @abstractmethod
    def derivs(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``gamma, gamma', gamma''`` at parameters ``u`` (N,), each (N, 2)."""

    def scalar(self, u: float) -> tuple[float, float, float, float, float, float]:
        """``(x, y, x', y', x'', y'')`` at one parameter ``u`` as Python floats.

        The subclasses override it with ``math``-module code (the hot path of the
        contact-point solver, ~1 us instead of ~10 us for a 1-element array).
        """
        g, g1, g2 = self.derivs(np.array([u], dtype=float))
        return g[0, 0], g[0, 1], g1[0, 0], g1[0, 1], g2[0, 0], g2[0, 1]

    def local(self, u: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """``(gamma, t, n, kappa)`` at one parameter value ``u``."""
        x, y, x1, y1, x2, y2 = self.scalar(float(u))
        sp = math.hypot(x1, y1)
        tx, ty = x1 / sp, y1 / sp
        kappa = (x1 * y2 - y1 * x2) / sp**3
        return np.array([x, y]), np.array([tx, ty]), np.array([ty, -tx]), kappa

    # -- arclength ----------------------------------------------------------------
    def _speed(self, u: np.ndarray) -> np.ndarray:
        _, g1, _ = self.derivs(u.ravel())
        return np.hypot(g1[:, 0], g1[:, 1]).reshape(u.shape)

    def _panel_integral(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        half, mid = 0.5 * (b - a), 0.5 * (b + a)
        nodes = mid[:, None] + half[:, None] * _GX[None, :]
        return half * (self._speed(nodes) @ _GW)

    def arclength(self, u) -> np.ndarray:
        """``s(u)``: arclength from ``u = 0`` (u is wrapped into ``[0, U)``)."""
        u = np.mod(np.atleast_1d(np.asarray(u, dtype=float)), self.U)
        k = np.clip(np.searchsorted(self._knots, u, side="right") - 1, 0, len(self._knots) - 2)
        return self._S[k] + self._panel_integral(self._knots[k], u)

    def param(self, s) -> np.ndarray:
        """``u(s)``: the parameter at arclength ``s`` (wrapped into ``[0, L)``), by Newton."""
        s = np.mod(np.atleast_1d(np.asarray(s, dtype=float)), self.length)
        u = np.interp(s, self._S, self._knots)
        for _ in range(30):
            step = (self.arclength(u) - s) / self._speed(u)
            u = u - step
            if np.max(np.abs(step)) < 1e-15 * self.U:
                break
        return u

    def reparametrisation_error(self, n: int = 1000) -> float:
        """``max |s(u(s)) - s|`` over ``n`` arclengths (m): the inversion error."""
        s = np.linspace(0.0, self.length, n, endpoint=False)
        return float(np.max(np.abs(self.arclength(self.param(s)) - s)))

    # -- by arclength ------------------------------------------------------------------
    def _by_s(self, s):
        g, g1, g2 = self.derivs(self.param(s))
        sp = np.hypot(g1[:, 0], g1[:, 1])
        t = g1 / sp[:, None]
        kappa = (g1[:, 0] * g2[:, 1] - g1[:, 1] * g2[:, 0]) / sp**3
        return g, t, np.column_stack([t[:, 1], -t[:, 0]]), kappa

    def point(self, s) -> np.ndarray:
        """Position ``gamma(s)`` (N, 2)."""
        return self._by_s(s)[0]

    def tangent(self, s) -> np.ndarray:
        """Unit tangent ``t(s)`` (N, 2), counter-clockwise."""
        return self._by_s(s)[1]

    def normal(self, s) -> np.ndarray:
        """Outward unit normal ``n(s) = (t_y, -t_x)`` (N, 2)."""
        return self._by_s(s)[2]

    def curvature(self, s) -> np.ndarray:
        """Signed curvature ``kappa(s)`` (N,), 1/m, > 0 where convex."""
        return self._by_s(s)[3]

    def outline(self, n: int = 200) -> np.ndarray:
        """``n`` points of the closed curve (first point repeated), (n + 1, 2)."""
        g, _, _ = self.derivs(np.linspace(0.0, self.U, n + 1))
        return g

    # -- contact-point solver -----------------------------------------------------------------
    def foot_point(self, c, u0: float | None = None, tol: float = 1e-13) -> float:
        """Parameter ``u`` of the contour point whose normal passes through ``c``.

        Solves ``f(u) = (c - gamma) . gamma' = 0`` by Newton's method
        (``f' = -|gamma'|^2 + (c - gamma) . gamma''``) from ``u0``, or from the
        nearest of 256 samples when ``u0`` is None or Newton leaves the basin.
        """
        c = np.asarray(c, dtype=float)[:2]
        if u0 is not None:
            u = self._newton_foot(c, float(u0), tol)
            if u is not None:
                return u
        us = np.linspace(0.0, self.U, 257)[:-1]
        g, _, _ = self.derivs(us)
        u = self._newton_foot(c, float(us[np.argmin(np.sum((g - c) ** 2, axis=1))]), tol)
        if u is None:
            raise ValueError(f"{self.name}: the contact-point solver did not converge for {c}")
        return u

    def _newton_foot(self, c: np.ndarray, u: float, tol: float) -> float | None:
        h = self.U / 64
        cx, cy = float(c[0]), float(c[1])
        scalar = self.scalar
        for _ in range(50):
            x, y, x1, y1, x2, y2 = scalar(u)
            dx, dy = cx - x, cy - y
            f = dx * x1 + dy * y1
            df = -(x1 * x1 + y1 * y1) + dx * x2 + dy * y2
            if df >= 0:  # not a distance minimum: outside the basin
                return None
            step = min(max(f / df, -h), h)
            u -= step
            if abs(step) < tol * self.U:
                return u % self.U
        return None


class Circle(Contour):
    """Circle of radius ``R`` about the origin: ``gamma = R (cos u, sin u)``."""

    def __init__(self, R: float) -> None:
        if not R > 0:
            raise ValueError(f"circle radius must be > 0 m, got {R!r}")
        self.R, self.name = float(R), f"circle(R={R})"
        super().__init__(16)

    def derivs(self, u):
        c, s = np.cos(u), np.sin(u)
        return self.R * _xy(c, s), self.R * _xy(-s, c), -self.R * _xy(c, s)

    def scalar(self, u):
        R, c, s = self.R, math.cos(u), math.sin(u)
        return R * c, R * s, -R * s, R * c, -R * c, -R * s


class Ellipse(Contour):
    """Ellipse with semi-axes ``a`` (X) and ``b`` (Y): ``gamma = (a cos u, b sin u)``.

    Closed-form curvature: ``kappa(u) = a b / (a^2 sin^2 u + b^2 cos^2 u)^(3/2)``.
    """

    def __init__(self, a: float, b: float, n_panels: int = 128) -> None:
        if not (a > 0 and b > 0):
            raise ValueError(f"ellipse semi-axes must be > 0 m, got a={a!r}, b={b!r}")
        self.a, self.b, self.name = float(a), float(b), f"ellipse(a={a}, b={b})"
        super().__init__(n_panels)

    def derivs(self, u):
        c, s = np.cos(u), np.sin(u)
        a, b = self.a, self.b
        return _xy(a * c, b * s), _xy(-a * s, b * c), _xy(-a * c, -b * s)

    def scalar(self, u):
        a, b, c, s = self.a, self.b, math.cos(u), math.sin(u)
        return a * c, b * s, -a * s, b * c, -a * c, -b * s


class Superellipse(Contour):
    """Rounded box ``(X/a)^p + (Y/b)^p = 1`` (p even), in polar form.

    ``gamma(u) = rho(u) (cos u, sin u)`` with ``rho = F^(-1/p)``,
    ``F = (cos u / a)^p + (sin u / b)^p``: analytic for even p, so the
    parametrisation has no corner (p = 2 is the ellipse).
    """

    def __init__(self, a: float, b: float, p: int = 4, n_panels: int = 256) -> None:
        if not (a > 0 and b > 0):
            raise ValueError(f"superellipse semi-axes must be > 0 m, got a={a!r}, b={b!r}")
        if int(p) != p or p < 2 or p % 2:
            raise ValueError(f"superellipse exponent must be an even integer >= 2, got {p!r}")
        self.a, self.b, self.p = float(a), float(b), int(p)
        self.name = f"superellipse(a={a}, b={b}, p={p})"
        super().__init__(n_panels)

    def derivs(self, u):
        c, s, a, b, p = np.cos(u), np.sin(u), self.a, self.b, self.p
        X, Y = c / a, s / b
        F = X**p + Y**p
        F1 = p * (-(X ** (p - 1)) * s / a + Y ** (p - 1) * c / b)
        F2 = p * (
            (p - 1) * X ** (p - 2) * (s / a) ** 2
            - X**p
            + (p - 1) * Y ** (p - 2) * (c / b) ** 2
            - Y**p
        )
        rho = F ** (-1.0 / p)
        rho1 = -rho / (p * F) * F1
        rho2 = -(1.0 / p) * ((-1.0 / p - 1) * rho / F**2 * F1**2 + rho / F * F2)
        return (
            _xy(rho * c, rho * s),
            _xy(rho1 * c - rho * s, rho1 * s + rho * c),
            _xy((rho2 - rho) * c - 2 * rho1 * s, (rho2 - rho) * s + 2 * rho1 * c),
        )

    def scalar(self, u):
        c, s, a, b, p = math.cos(u), math.sin(u), self.a, self.b, self.p
        X, Y = c / a, s / b
        Xp2, Yp2 = X ** (p - 2), Y ** (p - 2)
        Xp1, Yp1 = Xp2 * X, Yp2 * Y
        Xp, Yp = Xp1 * X, Yp1 * Y
        F = Xp + Yp
        F1 = p * (-Xp1 * s / a + Yp1 * c / b)
        F2 = p * ((p - 1) * Xp2 * (s / a) ** 2 - Xp + (p - 1) * Yp2 * (c / b) ** 2 - Yp)
        rho = F ** (-1.0 / p)
        rho1 = -rho / (p * F) * F1
        rho2 = -(1.0 / p) * ((-1.0 / p - 1) * rho / F**2 * F1**2 + rho / F * F2)
        return (
            rho * c,
            rho * s,
            rho1 * c - rho * s,
            rho1 * s + rho * c,
            (rho2 - rho) * c - 2 * rho1 * s,
            (rho2 - rho) * s + 2 * rho1 * c,
        )


def _segments_cross(P: np.ndarray) -> bool:
    """True if two non-adjacent edges of the closed polygon ``P`` intersect."""
    A, B = P, np.roll(P, -1, axis=0)
    n = len(P)

    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (
            r[..., 0] - p[..., 0]
        )

    i, j = np.triu_indices(n, k=2)
    keep = ~((i == 0) & (j == n - 1))
    i, j = i[keep], j[keep]
    d1 = orient(A[i], B[i], A[j])
    d2 = orient(A[i], B[i], B[j])
    d3 = orient(A[j], B[j], A[i])
    d4 = orient(A[j], B[j], B[i])
    return bool(np.any((d1 * d2 < 0) & (d3 * d4 < 0)))


class SplineContour(Contour):
    """Periodic cubic spline through user points (chord-length parameter, C2).

    The points are the vertices of a closed curve (the first is not repeated;
    a repeated last point is dropped). Clockwise input is reversed.

    Raises
    ------
    ValueError
        fewer than 4 distinct points, repeated consecutive points, a cusp, or a
        self-intersecting curve -- the message names the problem.
    """

    def __init__(self, points, n_sub: int = 8) -> None:
        P = np.asarray(points, dtype=float)
        if P.ndim != 2 or P.shape[1] != 2 or not np.all(np.isfinite(P)):
            raise ValueError(f"spline points must be an (N, 2) array of finite numbers, got {P!r}")
        if len(P) > 1 and np.allclose(P[0], P[-1]):
            P = P[:-1]
        if len(P) < 4:
            raise ValueError(f"a closed spline needs at least 4 distinct points, got {len(P)}")
        chord = np.hypot(*np.diff(np.vstack([P, P[:1]]), axis=0).T)
        if np.min(chord) <= 1e-9 * np.max(chord):
            k = int(np.argmin(chord))
            raise ValueError(f"spline points {k} and {(k + 1) % len(P)} coincide")
        area = 0.5 * np.sum(P[:, 0] * np.roll(P[:, 1], -1) - np.roll(P[:, 0], -1) * P[:, 1])
        if area < 0:
            P, chord = P[::-1].copy(), np.hypot(*np.diff(np.vstack([P[::-1], P[-1:]]), axis=0).T)
        knots = np.concatenate([[0.0], np.cumsum(chord)])
        self.U = float(knots[-1])
        self.points = P
        self.name = f"spline({len(P)} points)"
        self._cs = CubicSpline(knots, np.vstack([P, P[:1]]), bc_type="periodic")
        fine = np.linspace(0.0, self.U, len(knots) * n_sub * 4 + 1)[:-1]
        if _segments_cross(self._cs(fine)):
            raise ValueError(f"{self.name}: the spline through these points crosses itself")
        sub = np.linspace(0.0, 1.0, n_sub + 1)[:-1]
        fk = (knots[:-1, None] + np.diff(knots)[:, None] * sub[None, :]).ravel()
        super().__init__(knots=np.concatenate([fk, [self.U]]))
        self._bx = [float(x) for x in self._cs.x]
        self._coef = [tuple(float(v) for v in self._cs.c[:, k, :].ravel()) for k in range(len(P))]

    def scalar(self, u):
        u = u % self.U
        k = min(max(bisect_right(self._bx, u) - 1, 0), len(self._coef) - 1)
        a0, b0, a1, b1, a2, b2, a3, b3 = self._coef[k]  # (c3, c2, c1, c0) per coordinate
        h = u - self._bx[k]
        return (
            ((a0 * h + a1) * h + a2) * h + a3,
            ((b0 * h + b1) * h + b2) * h + b3,
            (3 * a0 * h + 2 * a1) * h + a2,
            (3 * b0 * h + 2 * b1) * h + b2,
            6 * a0 * h + 2 * a1,
            6 * b0 * h + 2 * b1,
        )

    def derivs(self, u):
        u = np.mod(np.asarray(u, dtype=float), self.U)
        return self._cs(u), self._cs(u, 1), self._cs(u, 2)


# -- lowerings to the compiled core (pfaff.lowering; src/cpp/algorithms/rolling.cpp): the keywords
# of pfaff.core.contour


@lowers(Circle, category="contour")
def _lower_circle(c: Circle, into) -> dict:
    return {"kind": "Circle", "U": c.U, "a": c.R, "b": c.R}


@lowers(Ellipse, category="contour")
def _lower_ellipse(c: Ellipse, into) -> dict:
    return {"kind": "Ellipse", "U": c.U, "a": c.a, "b": c.b}


@lowers(Superellipse, category="contour")
def _lower_superellipse(c: Superellipse, into) -> dict:
    return {"kind": "Superellipse", "U": c.U, "a": c.a, "b": c.b, "p": c.p}


@lowers(SplineContour, category="contour")
def _lower_spline(c: SplineContour, into) -> dict:
    return {"kind": "Spline", "U": c.U, "bx": c._bx, "coef": [x for seg in c._coef for x in seg]}
