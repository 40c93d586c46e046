"""Concrete constraints: points on planes, surfaces and circles, loop closures,
locked joints, and generic constraints from user functions.

A "point" is fixed in a frame at a local ``offset`` (default: the frame
origin); its world Jacobian and drift come from the frame's (see
:class:`~pfaff.mechanism.FrameState`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pfaff.constraints.base import Constraint, LinearRows
from pfaff.lowering import lowers
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot


def finite_vector(x, n: int, what: str) -> np.ndarray:
    """``x`` as ``n`` finite floats (ModelError naming ``what`` otherwise)."""
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be {n} finite numbers, got {x!r}")
    return a


def unit_directions(directions: Sequence[Sequence[float]] | None) -> np.ndarray:
    """Rows of unit world directions (k x 3, k >= 1); the three axes when None."""
    D = np.eye(3) if directions is None else np.atleast_2d(np.asarray(directions, float))
    if D.ndim != 2 or D.shape[1] != 3 or D.shape[0] == 0:
        raise ModelError(f"directions must be k x 3 (k >= 1), got shape {D.shape}")
    if not np.all(np.isfinite(D)) or np.any(np.linalg.norm(D, axis=1) < 1e-9):
        raise ModelError(
            "directions must be finite vectors of length >= 1e-9 (they are normalised), "
            f"got {D.tolist()}"
        )
    return D / np.linalg.norm(D, axis=1, keepdims=True)


def distinct_frames(frame1: str, frame2: str | None, what: str) -> None:
    """Refuse a constraint between a frame and itself: its rows are identically zero
    (the same point) or can never hold (two points of one body), so it constrains
    nothing or everything."""
    if frame2 is not None and frame1 == frame2:
        raise ModelError(
            f"{what}: frame1 and frame2 are the same frame {frame1!r}; a constraint joins "
            "two different frames (or a frame and the world: leave frame2 out)"
        )


def point_offset(point) -> np.ndarray | None:
    """A point's offset in its frame (3,) [m], or None (the frame's origin)."""
    return None if point is None else finite_vector(point, 3, "point offset")


def joint_coordinate(mechanism: Mechanism, joint: str | int) -> tuple[int, int, int]:
    """``(index in q, index in v, nq of the joint)`` of a one-dof joint, given by name
    (Pinocchio mechanisms) or by coordinate index (mechanisms with nq == nv)."""
    if isinstance(joint, str):
        if not hasattr(mechanism, "joint_v_index"):
            raise ModelError(f"{mechanism.name} has no joint names; give a coordinate index")
        iv = mechanism.joint_v_index(joint)
        jm = mechanism.model.joints[mechanism.model.getJointId(joint)]
        if jm.nv != 1:
            raise ModelError(f"joint {joint!r} is not a one-dof joint")
        return jm.idx_q, iv, jm.nq
    if mechanism.nq != mechanism.nv or not 0 <= int(joint) < mechanism.nv:
        raise ModelError(
            f"coordinate index {joint!r} is invalid for {mechanism.name} "
            f"(valid: 0..{mechanism.nv - 1} when nq == nv)"
        )
    return int(joint), int(joint), 1


def tendon_coefficients(joints, coefficients, who: str) -> np.ndarray:
    """A fixed tendon's coefficients ``c`` (one per joint, finite) as an array; ModelError
    naming ``who`` otherwise."""
    c = np.asarray(coefficients, dtype=float).reshape(-1)
    if not list(joints) or c.shape != (len(joints),):
        raise ModelError(
            f"{who}: one coefficient per joint (at least one joint) expected, "
            f"got {len(joints)} joints and coefficients {coefficients!r}"
        )
    if not np.all(np.isfinite(c)):
        raise ModelError(f"{who}: coefficients must be finite, got {coefficients!r}")
    return c


def tendon_coordinates(mechanism: Mechanism, joints, who: str) -> tuple[np.ndarray, np.ndarray]:
    """``(iq, iv)`` of a fixed tendon's joints, each a one-dof joint with one coordinate
    (hinge or slide); ModelError naming ``who`` and the first joint that is not."""
    idx = [joint_coordinate(mechanism, j) for j in joints]
    bad = [j for j, (_, _, nq) in zip(joints, idx) if nq != 1]
    if bad:
        raise ModelError(
            f"{who}: joint {bad[0]!r} is not a one-dof joint with one coordinate "
            "(a fixed tendon joins hinge and slide joints)"
        )
    return np.array([i[0] for i in idx], dtype=int), np.array([i[1] for i in idx], dtype=int)


class PointOnPlane(Constraint):
    """A frame's point stays on the plane ``n . p = d``: ``Phi = n . p - d``.

    ``n`` is normalised, so ``Phi`` is the signed distance (m). With
    ``unilateral=True`` the plane can only push the point along ``+n``: the
    normal force ``-lambda`` (N) must stay >= 0.

    Parameters
    ----------
    frame : the frame whose point is held.
    normal : the plane's normal ``n`` (3,), world axes; normalised.
    offset : ``d`` [m], the plane's signed distance from the origin along ``n``.
    point : the point in the frame's axes [m] (default: its origin).
    name : a label for reports and messages.
    unilateral : True: the plane only pushes (``-lambda >= 0``).
    """

    def __init__(
        self, frame: str, normal, offset: float = 0.0, point=None, name=None, unilateral=False
    ):
        self.unilateral = bool(unilateral)
        n = finite_vector(normal, 3, "plane normal")
        if np.linalg.norm(n) == 0:
            raise ModelError("plane normal must be non-zero")
        self.n, self.d = n / np.linalg.norm(n), float(offset)
        self.frame, self.point = frame, point_offset(point)
        self.frames = (frame,)
        self.name = name or f"{frame} on plane"

    def residual(self, snap: Snapshot) -> np.ndarray:
        return np.array([self.n @ snap.frame(self.frame).point(self.point) - self.d])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        return (self.n @ snap.frame(self.frame).point_jacobian(self.point))[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        return np.array([self.n @ snap.frame(self.frame).point_drift(self.point, snap.v)])


class PointOnSurface(Constraint):
    """A frame's point stays on the surface ``f(p) = 0``: ``Phi = f(p)``.

    Parameters
    ----------
    f : scalar function of the world point p (3,).
    grad, hess : its gradient (3,) and Hessian (3, 3); central finite
        differences (step ``fd_step``) when not given.
    """

    def __init__(
        self,
        frame: str,
        f: Callable[[np.ndarray], float],
        grad: Callable[[np.ndarray], np.ndarray] | None = None,
        hess: Callable[[np.ndarray], np.ndarray] | None = None,
        point=None,
        fd_step: float = 1e-5,
        name=None,
    ):
        self.f, self._grad, self._hess, self.h = f, grad, hess, fd_step
        self.frame, self.point = frame, point_offset(point)
        self.frames = (frame,)
        self.name = name or f"{frame} on surface"

    def grad(self, p: np.ndarray) -> np.ndarray:
        if self._grad is not None:
            return np.asarray(self._grad(p), dtype=float)
        E = np.eye(3) * self.h
        return np.array([(self.f(p + e) - self.f(p - e)) / (2 * self.h) for e in E])

    def hess(self, p: np.ndarray) -> np.ndarray:
        if self._hess is not None:
            return np.asarray(self._hess(p), dtype=float)
        if self._grad is not None:
            E = np.eye(3) * self.h
            H = np.array([(self.grad(p + e) - self.grad(p - e)) / (2 * self.h) for e in E])
            return 0.5 * (H + H.T)
        h, f, E = self.h * 10, self.f, np.eye(3) * self.h * 10
        H = np.empty((3, 3))
        for i in range(3):
            for j in range(3):
                H[i, j] = (
                    f(p + E[i] + E[j])
                    - f(p + E[i] - E[j])
                    - f(p - E[i] + E[j])
                    + f(p - E[i] - E[j])
                ) / (4 * h * h)
        return H

    def residual(self, snap: Snapshot) -> np.ndarray:
        return np.array([float(self.f(snap.frame(self.frame).point(self.point)))])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        fs = snap.frame(self.frame)
        return (self.grad(fs.point(self.point)) @ fs.point_jacobian(self.point))[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        fs = snap.frame(self.frame)
        p = fs.point(self.point)
        vp = fs.point_jacobian(self.point) @ snap.v
        return np.array(
            [self.grad(p) @ fs.point_drift(self.point, snap.v) + vp @ self.hess(p) @ vp]
        )


class PointsCoincide(Constraint):
    """Two frames' points coincide along chosen world directions (loop closure).

    ``Phi = D (p1 - p2)`` with the rows of ``D`` the directions (default: the
    three world axes). With ``frame2=None`` the second point is the fixed
    world point ``target``.

    Parameters
    ----------
    frame1 : the frame of the first point.
    frame2 : the frame of the second point (None: the world point ``target``).
    point1, point2 : the points in their frames' axes [m] (default: the origins).
    target : the fixed world point [m] when ``frame2`` is None.
    directions : k x 3 world directions of the kept rows (default: x, y, z).
    name : a label for reports and messages.
    """

    def __init__(
        self,
        frame1: str,
        frame2: str | None = None,
        point1=None,
        point2=None,
        target=(0.0, 0.0, 0.0),
        directions: Sequence[Sequence[float]] | None = None,
        name=None,
    ):
        distinct_frames(frame1, frame2, f"points_coincide {name or frame1!r}")
        self.D = unit_directions(directions)
        self.dim = self.D.shape[0]
        self.frame1, self.frame2 = frame1, frame2
        self.point1, self.point2 = point_offset(point1), point_offset(point2)
        self.target = finite_vector(target, 3, "target")
        self.frames = (frame1,) if frame2 is None else (frame1, frame2)
        self.name = name or f"{frame1} = {frame2 or 'world point'}"

    def residual(self, snap: Snapshot) -> np.ndarray:
        p1 = snap.frame(self.frame1).point(self.point1)
        p2 = self.target if self.frame2 is None else snap.frame(self.frame2).point(self.point2)
        return self.D @ (p1 - p2)

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        J = snap.frame(self.frame1).point_jacobian(self.point1)
        if self.frame2 is not None:
            J = J - snap.frame(self.frame2).point_jacobian(self.point2)
        return self.D @ J

    def drift(self, snap: Snapshot) -> np.ndarray:
        d = snap.frame(self.frame1).point_drift(self.point1, snap.v)
        if self.frame2 is not None:
            d = d - snap.frame(self.frame2).point_drift(self.point2, snap.v)
        return self.D @ d


class PointOnCircle(Constraint):
    """A frame's point stays on a circle in the x-y plane: ``Phi = |p - c| - rho``.

    This is Aghili's particle on a circle (Sec. 5.4) when the frame is a
    particle with coordinates (x, y).
    """

    def __init__(self, frame: str, center=(0.0, 0.0), radius: float = 1.0, point=None, name=None):
        self.c = finite_vector(center, 2, "circle centre")
        if not radius > 0:
            raise ModelError(f"circle radius must be > 0, got {radius!r}")
        self.rho = float(radius)
        self.frame, self.point = frame, point_offset(point)
        self.frames = (frame,)
        self.name = name or f"{frame} on circle"

    def _d(self, snap):
        fs = snap.frame(self.frame)
        d = fs.point(self.point)[:2] - self.c
        return fs, d, np.linalg.norm(d)

    def residual(self, snap: Snapshot) -> np.ndarray:
        return np.array([self._d(snap)[2] - self.rho])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        fs, d, r = self._d(snap)
        return ((d / r) @ fs.point_jacobian(self.point)[:2])[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        fs, d, r = self._d(snap)
        u = d / r
        vp = fs.point_jacobian(self.point)[:2] @ snap.v
        ap = fs.point_drift(self.point, snap.v)[:2]
        return np.array([u @ ap + (vp @ vp - (u @ vp) ** 2) / r])


class LockedJoint(LinearRows):
    """A one-dof joint held at angle or position ``value``: ``Phi = q_i - value``.

    ``joint`` is a joint name (Pinocchio mechanisms) or a coordinate index
    (mechanisms with ``nq == nv``). A continuous (unbounded revolute) joint,
    stored as ``(cos t, sin t)``, gives ``Phi = wrap(t - value)`` in (-pi, pi].

    Parameters
    ----------
    joint : the joint's name, or its coordinate index.
    value : the held angle [rad] or position [m].
    name : a label for reports and messages.
    """

    def __init__(self, joint: str | int, value: float = 0.0, name=None):
        self.joint, self.value = joint, float(value)
        self.name = name or f"lock {joint}"
        self.iq = self.iv = None
        self.unbounded = False

    def bind(self, mechanism: Mechanism) -> None:
        self.iq, self.iv, nq = joint_coordinate(mechanism, self.joint)
        if nq not in (1, 2):
            raise ModelError(f"joint {self.joint!r} is not a one-dof joint")
        self.unbounded = nq == 2
        self._row = np.zeros((1, mechanism.nv))
        self._row[0, self.iv] = 1.0

    def residual(self, snap: Snapshot) -> np.ndarray:
        if self.unbounded:
            c, s = snap.q[self.iq], snap.q[self.iq + 1]
            d = np.arctan2(s, c) - self.value
            return np.array([(d + np.pi) % (2 * np.pi) - np.pi])
        return np.array([snap.q[self.iq] - self.value])


# -- lowerings to the compiled core (pfaff.lowering; src/cpp) ------------------------------


@lowers(PointOnPlane, category="constraint")
def _lower_plane(c: PointOnPlane, into):
    s = into.spec("PointOnPlane", c)
    s.s1, s.n, s.d = into.frame(c.frame), c.n, c.d
    into.point(s, 1, c.point)
    return s


@lowers(PointOnCircle, category="constraint")
def _lower_circle(c: PointOnCircle, into):
    s = into.spec("PointOnCircle", c)
    s.s1, s.c, s.rho = into.frame(c.frame), c.c, c.rho
    into.point(s, 1, c.point)
    return s


@lowers(PointsCoincide, category="constraint")
def _lower_coincide(c: PointsCoincide, into):
    s = into.spec("PointsCoincide", c)
    s.s1, s.s2, s.target = into.frame(c.frame1), into.frame(c.frame2), c.target
    into.point(s, 1, c.point1)
    into.point(s, 2, c.point2)
    into.directions(s, c.D)
    return s


@lowers(LockedJoint, category="constraint")
def _lower_locked(c: LockedJoint, into):
    s = into.spec("LockedJoint", c)
    s.iq, s.iv, s.unbounded, s.value = int(c.iq), int(c.iv), bool(c.unbounded), c.value
    return s
