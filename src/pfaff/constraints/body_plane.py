"""A point of one body on a plane fixed in another (a contact between two moving bodies:
:mod:`pfaff.contact.model`), with its lowering to the compiled core's kind
``PointOnBodyPlane`` (``src/cpp/kinds/point_on_body_plane.cpp``)."""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.constraints.library import distinct_frames, finite_vector, point_offset
from pfaff.lowering import lowers
from pfaff.mechanism.base import ModelError, Snapshot

__all__ = ["PointOnBodyPlane"]


class PointOnBodyPlane(Constraint):
    """A point of ``frame1`` stays on a plane fixed in ``frame2``:
    ``Phi = n2 . (p1 - o2) - d`` with ``n2 = R2 n`` and ``o2`` turning with frame 2.

    The row is ``n2^T (J1(p1) - J2(p1))``, ``J2(p1)`` the Jacobian of frame 2's material
    point at ``p1``: the normal velocity of point 1 relative to body 2, so that its force
    pushes the two bodies apart equally and oppositely (a contact between two moving
    bodies, a box's corner on another box's face). Its drift, with ``u`` that relative
    velocity, ``w2`` frame 2's angular velocity, ``a1`` point 1's and ``a2(p1)`` body 2's
    material point's accelerations at ``a = 0``, is ``n2 . (a1 - a2(p1)) - 2 n2 . (w2 x u)``.

    Parameters
    ----------
    frame1 : the frame whose point is held.
    frame2 : the frame the plane is fixed in (another frame; the world's plane is
        :class:`PointOnPlane`).
    normal : the plane's normal ``n`` (3,) in frame 2's axes; normalised.
    offset : ``d`` [m], the signed distance of the held point from the plane.
    point1 : the point in frame 1's axes [m] (default: its origin).
    point2 : a point of the plane in frame 2's axes [m] (default: its origin).
    name : a label for reports and messages.
    unilateral : True: the plane only pushes (``-lambda >= 0``).
    """

    def __init__(
        self, frame1: str, frame2: str, normal, offset: float = 0.0, point1=None, point2=None,
        name=None, unilateral=False,
    ):  # fmt: skip
        if frame2 is None:
            raise ModelError(
                "PointOnBodyPlane needs frame2; a plane fixed in the world is PointOnPlane"
            )
        distinct_frames(frame1, frame2, f"point_on_body_plane {name or frame1!r}")
        self.unilateral = bool(unilateral)
        n = finite_vector(normal, 3, "plane normal")
        if np.linalg.norm(n) == 0:
            raise ModelError("plane normal must be non-zero")
        self.n, self.d = n / np.linalg.norm(n), float(offset)
        self.frame1, self.frame2 = frame1, frame2
        self.point1, self.point2 = point_offset(point1), point_offset(point2)
        self.frames = (frame1, frame2)
        self.name = name or f"{frame1} on {frame2}'s plane"

    def _terms(self, snap: Snapshot):
        f1, f2 = snap.frame(self.frame1), snap.frame(self.frame2)
        p1 = f1.point(self.point1)
        n = f2.R @ self.n
        return f1, f2, p1, n

    def residual(self, snap: Snapshot) -> np.ndarray:
        _, f2, p1, n = self._terms(snap)
        return np.array([n @ (p1 - f2.point(self.point2)) - self.d])

    def _relative_jacobian(self, f1, f2, p1) -> np.ndarray:
        return f1.point_jacobian(self.point1) - f2.point_jacobian(f2.R.T @ (p1 - f2.p))

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        f1, f2, p1, n = self._terms(snap)
        return (n @ self._relative_jacobian(f1, f2, p1))[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        f1, f2, p1, n = self._terms(snap)
        v = snap.v
        u = self._relative_jacobian(f1, f2, p1) @ v
        a1 = f1.point_drift(self.point1, v)
        a2 = f2.point_drift(f2.R.T @ (p1 - f2.p), v)
        w2 = f2.J[3:] @ v
        return np.array([n @ (a1 - a2) - 2.0 * n @ np.cross(w2, u)])


@lowers(PointOnBodyPlane, category="constraint")
def _lower_body_plane(c: PointOnBodyPlane, into):
    s = into.spec("PointOnBodyPlane", c)
    s.s1, s.s2, s.n, s.d = into.frame(c.frame1), into.frame(c.frame2), c.n, c.d
    into.point(s, 1, c.point1)
    into.point(s, 2, c.point2)
    return s
