"""The NumPy reference of the rows that hold a ball or a capsule rolling without slipping
on a still plane or on a plane of a moving body (the core's kind ``RollingPoint``,
``src/cpp/kinds/rolling_point.cpp``).

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
On a plane fixed in a moving body 2 (a ball on a plank, between two fingers) ``t`` and
``l`` turn with body 2 (``t = R2 t_2``, ``l = R2 l_2``) and the velocity is relative to
body 2's material point at ``c``, ``u = v1(c) - v2(c)``; the drift keeps ``p`` fixed in
body 1 and ``t``, ``l`` fixed in body 2 (``c' = v_p + w2 x l``)::

    A v   = t . u
    drift = t . (a_p + alpha1 x l + w1 x (w2 x l) - w2 x ((w2 - w1) x l) - a2(c))
            - 2 t . (w2 x u)

``a2(c)`` body 2's material point's acceleration at ``a = 0``: the world's plane is its
case ``w2 = 0``, ``a2 = 0``.
Coulomb's force of a slipping round geom acts at ``c`` too: its slip velocity is ``v_c``'s
tangential part, and the force ``-mu f_n s`` there gives the ball the torque that spins a
sliding ball up to rolling (``pfaff.contact.friction``'s ``SlipPoint`` with ``Jp`` the
Jacobian of the body point at ``c``: :func:`contact_point_jacobian`).
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.constraints.library import distinct_frames
from pfaff.linalg import cross3, skew
from pfaff.lowering import lowers
from pfaff.mechanism.base import FrameState, ModelError, Snapshot

__all__ = ["RollingPoint", "contact_point_jacobian", "rolling_constraints", "tangent_basis"]


def vec3(x, what: str) -> np.ndarray:
    """``x`` as 3 finite floats (ModelError naming ``what`` otherwise)."""
    a = np.asarray(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be 3 finite numbers, got {x!r}")
    return a


def tangent_basis(normal) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents ``t1, t2`` of the unit normal ``n`` with ``t1 x t2 = n``: ``t1``
    across the axis least aligned with ``n`` (the core's ``tangent_basis``, the same
    pair for the same ``n``)."""
    n = vec3(normal, "normal")
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
    rc = frame.R @ vec3(point, "point") + vec3(lever, "lever")
    return frame.J[:3] - skew(rc) @ frame.J[3:]


class RollingPoint(Constraint):
    """The material point at ``c = p + l`` of a frame does not move along ``t``:
    ``t . (v_p + w x l) = 0``, or, on a plane fixed in ``frame2``, relative to that
    frame's material point at ``c`` (one Pfaffian row; see the module's docstring).

    Parameters
    ----------
    frame : the body's frame.
    direction : ``t`` (3,), world axes (``frame2``'s where given); normalised.
    lever : ``l`` (3,) [m], world axes (``frame2``'s where given): the contact from the
        held point (``-r n``).
    point : ``p`` in the frame's axes [m] (the sphere's centre, the capsule's axis point).
    name : a label for reports and messages.
    frame2 : the frame the plane is fixed in (None: the world).
    """

    holonomic = False

    def __init__(
        self, frame: str, direction, lever, point=(0.0, 0.0, 0.0), name=None, frame2=None
    ):  # fmt: skip
        t = vec3(direction, "rolling direction")
        if np.linalg.norm(t) == 0:
            raise ModelError("rolling direction must be non-zero")
        distinct_frames(frame, frame2, f"rolling point {name or frame!r}")
        self.t, self.lever = t / np.linalg.norm(t), vec3(lever, "lever")
        self.frame, self.point, self.frame2 = frame, vec3(point, "point"), frame2
        self.frames = (frame,) if frame2 is None else (frame, frame2)
        self.name = name or f"{frame} rolls"

    def _terms(self, snap: Snapshot):
        """frame 1, frame 2 (None: the world), t and l in the world, J1(c) - J2(c)."""
        fr = snap.frame(self.frame)
        if self.frame2 is None:
            return fr, None, self.t, self.lever, contact_point_jacobian(fr, self.point, self.lever)
        f2 = snap.frame(self.frame2)
        t, lever = f2.R @ self.t, f2.R @ self.lever
        c = fr.point(self.point) + lever
        Jc = contact_point_jacobian(fr, self.point, lever) - f2.point_jacobian(f2.R.T @ (c - f2.p))
        return fr, f2, t, lever, Jc

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        _, _, t, _, Jc = self._terms(snap)
        return (t @ Jc)[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        fr, f2, t, lever, Jc = self._terms(snap)
        v = snap.v
        r = fr.R @ self.point
        w = fr.J[3:] @ v
        a = fr.drift[:3] + cross3(fr.drift[3:], r + lever) + cross3(w, cross3(w, r))
        if f2 is None:
            return np.array([t @ a])
        w2, u = f2.J[3:] @ v, Jc @ v
        a2 = f2.point_drift(f2.R.T @ (fr.point(self.point) + lever - f2.p), v)
        a = a + cross3(w, cross3(w2, lever)) - cross3(w2, cross3(w2 - w, lever)) - a2
        return np.array([t @ a - 2.0 * t @ cross3(w2, u)])


def rolling_constraints(
    frame: str, point, normal, radius: float, frame2: str | None = None
) -> list[RollingPoint]:
    """The two rows of a ball or a capsule of ``radius`` [m] rolling without slipping on
    a plane of unit ``normal``, its held point ``point`` in ``frame``'s axes (the core's
    two rows of a stuck round contact, in its order: ``t1``, ``t2``): a still plane
    (``normal`` in the world's axes), or one fixed in ``frame2`` (``normal`` in its axes,
    the rows relative to its material point at the contact)."""
    if not (np.isfinite(radius) and radius > 0):
        raise ModelError(f"radius must be a finite number > 0 [m], got {radius!r}")
    t1, t2 = tangent_basis(normal)
    lever = -float(radius) * np.asarray(normal, float)
    return [RollingPoint(frame, t, lever, point, frame2=frame2) for t in (t1, t2)]


@lowers(RollingPoint, category="constraint")
def _lower_rolling(c: RollingPoint, into):
    s = into.spec("RollingPoint", c)
    s.s1, s.n, s.target = into.frame(c.frame), c.t, c.lever
    if c.frame2 is not None:
        s.s2 = into.frame(c.frame2)
    into.point(s, 1, c.point)
    return s
