"""The NumPy reference of a cylinder's rim touching a still plane and rolling on it without
slipping (the core's kinds ``RimOnPlane`` and ``RimRolling``).

The rim is a circle of radius ``r`` fixed in a body: centre ``c = o + R p`` (``p`` in the
frame's axes), unit axis ``a = R a_l``. The plane holds the points ``x`` with
``n . x = d`` (``n`` a unit normal, world axes). With ``s = n . a`` and
``rho = sqrt(1 - s^2)``, the rim's point nearest the plane is ``x = c + l``::

    u = -(n - s a) / rho,   l = r u,   Phi = n . x - d = n . c - r rho - d

``u`` is the unit vector in the rim's plane pointing most toward the plane. All holds
while ``|s| < 1`` (``rho > 0``): a rim lying flat on the plane touches it along the whole
circle and has no single nearest point (nothing checks it; ``rho -> 0`` divides by zero).

A row along a world direction ``e`` (``n``: the normal row, holonomic; a tangent ``t``
of the plane: a rolling row, Pfaffian) reads the material point of the body at ``x``::

    A v   = e . (v_o + w x (R p + l))
    drift = e . (a_o + alpha x (R p + l) + w x (w x R p) + w x l')

``a_o``, ``alpha`` the origin's classical and the angular acceleration at ``qdd = 0``
(``FrameState.drift``) and ``l' = r u'`` the rate of the lever as ``x`` moves over the
body (``a' = w x a``, ``s' = n . a'``)::

    u' = (s' a + s a') / rho - s s' (n - s a) / rho^3

The drift is ``d(A)/dt v`` at constant ``v``: for ``e = n`` it is the bias of ``Phi''``
(``A v = Phi'``: ``n . u' = -rho'`` and ``n . (w x l) = r s s' / rho``); for a tangent
it is the rate of ``t . v(x)`` along the motion. It differs both from a point fixed in
the world (:class:`~pfaff.contact.rolling.RollingPoint`'s lever: no ``w x l'``) and from a
body's vertex (``w x (w x l)`` in place of ``w x l'``).
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.contact.rolling import contact_point_jacobian, tangent_basis, vec3
from pfaff.linalg import cross3
from pfaff.lowering import lowers
from pfaff.mechanism.base import FrameState, ModelError, Snapshot

__all__ = ["RimOnPlane", "RimRolling", "rim_constraints"]


def _unit(x, what: str) -> np.ndarray:
    a = vec3(x, what)
    norm = float(np.linalg.norm(a))
    if norm == 0:
        raise ModelError(f"{what} must be non-zero")
    return a / norm


def _number(x, what: str, positive: bool = False) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        value = float("nan")
    if not (np.isfinite(value) and (value > 0 or not positive)):
        bound = " > 0" if positive else ""
        raise ModelError(f"{what} must be a finite number{bound} [m], got {x!r}")
    return value


class _Rim(Constraint):
    """The rim's geometry and one row along a world direction (see the module)."""

    def __init__(self, frame: str, point, axis, radius: float, normal, name) -> None:
        self.frame, self.frames = frame, (frame,)
        self.point, self.axis = vec3(point, "point"), _unit(axis, "axis")
        self.radius, self.n = _number(radius, "radius", positive=True), _unit(normal, "normal")
        self.name = name

    def _geometry(self, fr: FrameState):
        """``R p``, ``a``, ``s``, ``rho`` and the lever ``l`` at the frame's state."""
        a = fr.R @ self.axis
        s = float(self.n @ a)
        rho = float(np.sqrt(1.0 - s * s))
        return fr.R @ self.point, a, s, rho, -self.radius * (self.n - s * a) / rho

    def contact(self, snap: Snapshot) -> np.ndarray:
        """``x = c + l`` (3,) [m], world axes: the rim's point nearest the plane."""
        fr = snap.frame(self.frame)
        return fr.point(self.point) + self._geometry(fr)[4]

    def _lever_rate(self, a: np.ndarray, s: float, rho: float, w: np.ndarray) -> np.ndarray:
        """``l' = r u'`` (3,) [m/s]: the lever's rate as the body turns at ``w``."""
        adot = cross3(w, a)
        sdot = float(self.n @ adot)
        udot = (sdot * a + s * adot) / rho - s * sdot * (self.n - s * a) / rho**3
        return self.radius * udot

    def _row(self, snap: Snapshot, e: np.ndarray) -> np.ndarray:
        fr = snap.frame(self.frame)
        return (e @ contact_point_jacobian(fr, self.point, self._geometry(fr)[4]))[None]

    def _drift(self, snap: Snapshot, e: np.ndarray) -> np.ndarray:
        fr = snap.frame(self.frame)
        rp, a, s, rho, lever = self._geometry(fr)
        w = fr.J[3:] @ snap.v
        ldot = self._lever_rate(a, s, rho, w)
        acc = fr.drift[:3] + cross3(fr.drift[3:], rp + lever) + cross3(w, cross3(w, rp))
        return np.array([e @ (acc + cross3(w, ldot))])


class RimOnPlane(_Rim):
    """A rim touches the still plane ``n . x = d``: ``Phi = n . c - r rho - d`` (one
    holonomic row, the signed distance of the rim's lowest point; see the module).

    Parameters
    ----------
    frame : the body's frame.
    point : ``p``, the rim's centre in the frame's axes [m].
    axis : ``a_l``, the rim's axis in the frame's axes; normalised.
    radius : ``r`` [m], finite and > 0.
    normal : ``n`` (3,), world axes; normalised.
    offset : ``d`` [m], the plane's signed distance from the origin along ``n``.
    name : a label for reports and messages.
    """

    holonomic = True

    def __init__(self, frame: str, point, axis, radius: float, normal, offset: float, name=None):
        super().__init__(frame, point, axis, radius, normal, name or f"{frame} rim on plane")
        self.d = _number(offset, "offset")

    def residual(self, snap: Snapshot) -> np.ndarray:
        fr = snap.frame(self.frame)
        _, _, _, rho, _ = self._geometry(fr)
        return np.array([self.n @ fr.point(self.point) - self.radius * rho - self.d])

    phi = residual

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        return self._row(snap, self.n)

    def drift(self, snap: Snapshot) -> np.ndarray:
        return self._drift(snap, self.n)


class RimRolling(_Rim):
    """The body's material point at a rim's contact with the still plane of normal ``n``
    does not move along the plane's tangent ``t``: ``t . (v_o + w x (R p + l)) = 0``
    (one Pfaffian row; see the module).

    Parameters
    ----------
    frame, point, axis, radius, normal, name : as :class:`RimOnPlane`.
    direction : ``t`` (3,), world axes, perpendicular to ``n`` (within 1e-9);
        normalised.
    """

    holonomic = False

    def __init__(self, frame: str, point, axis, radius: float, normal, direction, name=None):
        super().__init__(frame, point, axis, radius, normal, name or f"{frame} rim rolls")
        self.t = _unit(direction, "rolling direction")
        if abs(float(self.t @ self.n)) > 1e-9:
            raise ModelError(
                f"rolling direction must be perpendicular to the normal, got t . n = "
                f"{float(self.t @ self.n):.3g}"
            )

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        return self._row(snap, self.t)

    def drift(self, snap: Snapshot) -> np.ndarray:
        return self._drift(snap, self.t)


def rim_constraints(
    frame: str, point, axis, radius: float, normal, offset: float
) -> list[RimOnPlane | RimRolling]:
    """A rim of ``radius`` [m] (centre ``point``, ``axis`` in ``frame``'s axes) rolling
    without slipping on the still plane ``normal . x = offset`` (world axes): its
    normal row and its two rolling rows along :func:`tangent_basis` ``t1``, ``t2``."""
    touch = RimOnPlane(frame, point, axis, radius, normal, offset)
    rows = [RimRolling(frame, point, axis, radius, touch.n, t) for t in tangent_basis(touch.n)]
    return [touch, *rows]


@lowers(RimOnPlane, category="constraint")
def _lower_rim_on_plane(c: RimOnPlane, into):
    s = into.spec("RimOnPlane", c)
    s.s1, s.n, s.target, s.p2, s.rho, s.d = into.frame(c.frame), c.n, c.n, c.axis, c.radius, c.d
    into.point(s, 1, c.point)
    return s


@lowers(RimRolling, category="constraint")
def _lower_rim_rolling(c: RimRolling, into):
    s = into.spec("RimRolling", c)
    s.s1, s.n, s.target, s.p2, s.rho, s.d = into.frame(c.frame), c.t, c.n, c.axis, c.radius, 0.0
    into.point(s, 1, c.point)
    return s
