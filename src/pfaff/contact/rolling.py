"""The NumPy reference of the rows that hold a ball or a capsule rolling without slipping
on a still plane (the core's kind ``RollingPoint``, ``src/cpp/kinds/rolling_point.cpp``).

A sphere's (a capsule's) held point is its centre (its axis point) ``p``, a point fixed in
its body; the contact ``c = p - r n`` lies a radius ``r`` below it along the plane's unit
normal ``n``. The material point of the body at ``c`` has the velocity
``v_c = v_p + w x l``, ``l = -r n``: it sticks (rolls without slipping) where
``t . v_c = 0`` for the plane's two tangents ``t``. These rows are Pfaffian, not
holonomic: ``c`` moves over the body as it rolls, so no ``Phi(q)`` holds it. Their drift
``d(A)/dt v`` keeps ``p`` fixed in the body and ``l`` fixed in the world::

    A v   = t . (v_p + w x l)
    drift = t . (a_p + alpha x l),   a_p = a_o + alpha x r + w x (w x r)  (at a = 0)

with ``r = R p_local`` from the frame's origin: the drift of the body point at ``c`` less
``t . w x (w x l)``, the centripetal term a point fixed in the body would have.
Coulomb's force of a slipping round geom acts at ``c`` too: its slip velocity is ``v_c``'s
tangential part, and the force ``-mu f_n s`` there gives the ball the torque that spins a
sliding ball up to rolling (``pfaff.contact.friction``'s ``SlipPoint`` with ``Jp`` the
Jacobian of the body point at ``c``: :func:`contact_point_jacobian`).
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.linalg import cross3, skew
from pfaff.lowering import lowers
from pfaff.mechanism.base import FrameState, ModelError, Snapshot

__all__ = ["RollingPoint", "contact_point_jacobian", "rolling_constraints", "tangent_basis"]


def _vec3(x, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be 3 finite numbers, got {x!r}")
    return a


def tangent_basis(normal) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents ``t1, t2`` of the unit normal ``n`` with ``t1 x t2 = n``: ``t1``
    across the axis least aligned with ``n`` (the core's ``tangent_basis``, the same
    pair for the same ``n``)."""
    n = _vec3(normal, "normal")
    if abs(np.linalg.norm(n) - 1.0) > 1e-12:
        raise ModelError(f"normal must be a unit vector, got |n| = {np.linalg.norm(n)!r}")
    k = int(np.argmin(np.abs(n)))
    t1 = cross3(n, np.eye(3)[k])
    t1 = t1 / np.linalg.norm(t1)
    return t1, cross3(n, t1)


def contact_point_jacobian(frame: FrameState, point, lever) -> np.ndarray:
    """The (3, nv) velocity Jacobian of the body's material point at ``c = p + l``:
    ``J_v - [R p_local + l]_x J_w`` (``point``: ``p`` in the frame's axes; ``lever``:
    ``l`` in the world, ``-r n``)."""
    rc = frame.R @ _vec3(point, "point") + _vec3(lever, "lever")
    return frame.J[:3] - skew(rc) @ frame.J[3:]


class RollingPoint(Constraint):
    """The material point at ``c = p + l`` of a frame does not move along ``t``:
    ``t . (v_p + w x l) = 0`` (one Pfaffian row; see the module's docstring).

    Parameters
    ----------
    frame : the body's frame.
    direction : ``t`` (3,), world axes; normalised.
    lever : ``l`` (3,) [m], world axes: the contact from the held point (``-r n``).
    point : ``p`` in the frame's axes [m] (the sphere's centre, the capsule's axis point).
    name : a label for reports and messages.
    """

    holonomic = False

    def __init__(self, frame: str, direction, lever, point=(0.0, 0.0, 0.0), name=None):
        t = _vec3(direction, "rolling direction")
        if np.linalg.norm(t) == 0:
            raise ModelError("rolling direction must be non-zero")
        self.t, self.lever = t / np.linalg.norm(t), _vec3(lever, "lever")
        self.frame, self.point = frame, _vec3(point, "point")
        self.frames = (frame,)
        self.name = name or f"{frame} rolls"

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        fr = snap.frame(self.frame)
        return (self.t @ contact_point_jacobian(fr, self.point, self.lever))[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        fr = snap.frame(self.frame)
        r = fr.R @ self.point
        w = fr.J[3:] @ snap.v
        a = fr.drift[:3] + cross3(fr.drift[3:], r + self.lever) + cross3(w, cross3(w, r))
        return np.array([self.t @ a])


def rolling_constraints(frame: str, point, normal, radius: float) -> list[RollingPoint]:
    """The two rows of a ball or a capsule of ``radius`` [m] rolling without slipping on
    a still plane of unit ``normal``, its held point ``point`` in ``frame``'s axes (the
    core's two rows of a stuck round contact, in its order: ``t1``, ``t2``)."""
    if not (np.isfinite(radius) and radius > 0):
        raise ModelError(f"radius must be a finite number > 0 [m], got {radius!r}")
    t1, t2 = tangent_basis(normal)
    lever = -float(radius) * np.asarray(normal, float)
    return [RollingPoint(frame, t, lever, point) for t in (t1, t2)]


@lowers(RollingPoint, category="constraint")
def _lower_rolling(c: RollingPoint, into):
    s = into.spec("RollingPoint", c)
    s.s1, s.n, s.target = into.frame(c.frame), c.t, c.lever
    into.point(s, 1, c.point)
    return s
