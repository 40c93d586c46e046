"""Force elements on body points: springs and dampers between two points, a point tied
to a world anchor, a constant world force (see :mod:`pfaff.simulate.forces`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pfaff.lowering import lowers
from pfaff.mechanism.base import ModelError, Snapshot
from pfaff.simulate.force_base import ForceElement, finite, point3


class _TwoPoints(ForceElement):
    """Two points: ``p1`` fixed in ``frame1`` at ``point1``; ``p2`` fixed in ``frame2``
    at ``point2``, or the world point ``target`` when ``frame2`` is None.

    Parameters
    ----------
    frame1 : the frame of the first point.
    frame2 : the frame of the second point (None: the world point ``target``).
    point1, point2 : the points in their frames' axes [m] (default: the origins).
    target : the fixed world point [m] when ``frame2`` is None.
    """

    def __init__(self, frame1, frame2=None, point1=None, point2=None, target=(0.0, 0.0, 0.0)):
        self.frame1, self.frame2 = frame1, frame2
        self.point1 = point3(point1, "point1")
        self.point2 = point3(point2, "point2")
        self.target = point3(target, "target")
        self.frames = (frame1,) if frame2 is None else (frame1, frame2)

    def _geometry(self, snap: Snapshot) -> tuple[np.ndarray, np.ndarray]:
        """``d = p1 - p2`` (3,) and its Jacobian ``J1 - J2`` (3, nv)."""
        f1 = snap.frame(self.frame1)
        J = f1.point_jacobian(self.point1)
        p = f1.point(self.point1)
        if self.frame2 is None:
            return p - self.target, J
        f2 = snap.frame(self.frame2)
        return p - f2.point(self.point2), J - f2.point_jacobian(self.point2)


class PointSpring(_TwoPoints):
    """A spring between two points: ``p1`` in ``frame1``, ``p2`` in ``frame2`` or ``target``.

    Tension ``T(s) = k s + k3 s^3`` for the extension ``s = |p1 - p2| - L0``,
    potential ``V = k s^2 / 2 + k3 s^4 / 4``; or, with ``law``, ``T, V = law(s)``.
    Generalized force ``Q = -(J1 - J2)^T e T`` with ``e = (p1 - p2) / |p1 - p2|``
    (for ``L0 = 0`` and a linear law ``Q = -k (J1 - J2)^T (p1 - p2)``, defined
    also where the points meet).

    Parameters
    ----------
    stiffness : k [N/m] (>= 0), required unless ``law`` is given.
    rest_length : L0 [m] (>= 0).
    cubic : k3 [N/m^3] (>= 0): a hardening spring.
    law : ``s -> (tension [N], potential [J])``, replacing ``k`` and ``k3``;
        the tension must be dV/ds for the energy to balance.
    """

    conservative = True

    def __init__(
        self,
        frame1: str,
        frame2: str | None = None,
        stiffness: float | None = None,
        rest_length: float = 0.0,
        cubic: float = 0.0,
        law: Callable[[float], tuple[float, float]] | None = None,
        point1=None,
        point2=None,
        target=(0.0, 0.0, 0.0),
        name: str | None = None,
    ) -> None:
        super().__init__(frame1, frame2, point1, point2, target)
        if stiffness is None and law is None:
            raise ModelError(
                f"PointSpring {name or frame1!r}: give its stiffness [N/m] (or a law); "
                "a spring without one exerts no force"
            )
        self.k = finite(0.0 if stiffness is None else stiffness, "spring stiffness [N/m]")
        self.L0 = finite(rest_length, "spring rest length [m]")
        self.k3 = finite(cubic, "cubic spring coefficient [N/m^3]")
        self.law = law
        self.name = name or f"spring {frame1}-{frame2 or 'world'}"

    def _tension(self, s: float) -> tuple[float, float]:
        if self.law is not None:
            T, V = self.law(s)
            return float(T), float(V)
        return self.k * s + self.k3 * s**3, 0.5 * self.k * s * s + 0.25 * self.k3 * s**4

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        d, J = self._geometry(snap)
        if self.L0 == 0.0 and self.law is None and self.k3 == 0.0:
            return -self.k * (J.T @ d)
        r = float(np.sqrt(d @ d))
        if r == 0.0:
            raise ValueError(f"{self.name}: the two points coincide; its direction is undefined")
        T, _ = self._tension(r - self.L0)
        return -(T / r) * (J.T @ d)

    def potential(self, snap: Snapshot) -> float:
        d, _ = self._geometry(snap)
        return self._tension(float(np.sqrt(d @ d)) - self.L0)[1]


class PointDamper(_TwoPoints):
    """A linear damper between two points: tension ``c s'`` with ``s' = e . (J1 - J2) v``,
    ``Q = -c s' (J1 - J2)^T e``; it dissipates ``c s'^2`` [W].

    Where the two points meet (``|p1 - p2| < 1e-12`` m) the direction is undefined
    and the damper applies no force.

    Parameters
    ----------
    damping : c [N s/m] (>= 0).
    """

    def __init__(
        self,
        frame1: str,
        frame2: str | None = None,
        damping: float = 0.0,
        point1=None,
        point2=None,
        target=(0.0, 0.0, 0.0),
        name: str | None = None,
    ) -> None:
        super().__init__(frame1, frame2, point1, point2, target)
        self.c = finite(damping, "damping coefficient [N s/m]")
        self.name = name or f"damper {frame1}-{frame2 or 'world'}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        d, J = self._geometry(snap)
        r = float(np.sqrt(d @ d))
        if r < 1e-12:
            return np.zeros(J.shape[1])
        e = d / r
        Je = J.T @ e
        return -self.c * float(Je @ snap.v) * Je


def _axes(axes) -> list[int]:
    """World axes (0 x, 1 y, 2 z) of an anchor element, each once."""
    out = [int(a) for a in axes]
    if not out or len(set(out)) != len(out) or not all(a in (0, 1, 2) for a in out):
        raise ModelError(f"axes must be distinct world axes among 0, 1, 2 (x, y, z), got {axes!r}")
    return out


class _Anchored(ForceElement):
    """A point fixed in ``frame`` at ``point`` (the origin when None), read along the
    world ``axes``: its position rows ``p_a`` and Jacobian rows ``J_a``."""

    def __init__(self, frame: str, axes, point) -> None:
        self.frame, self.axes = frame, _axes(axes)
        self.point = point3(point, "point")
        self.frames = (frame,)

    def _rows(self, snap: Snapshot) -> tuple[np.ndarray, np.ndarray]:
        f = snap.frame(self.frame)
        return f.point(self.point)[self.axes], f.point_jacobian(self.point)[self.axes]


class AnchorSpring(_Anchored):
    """A linear spring from a body point to a world anchor along chosen world axes:
    ``V = k |p_a - target_a|^2 / 2``, ``Q = -k J_a^T (p_a - target_a)`` (a task-space
    stiffness, e.g. the position term of Arimoto eq. 42 with ``axes=(0, 1)``).

    Parameters
    ----------
    frame, point : the point (fixed in the frame; the frame's origin when None).
    target : the anchor (3,) [m] in the world; only its ``axes`` entries count.
    stiffness : k [N/m] (>= 0).
    axes : the world axes along which the spring acts (default all three).
    """

    conservative = True

    def __init__(self, frame: str, target, stiffness: float, axes=(0, 1, 2), point=None,
                 name=None) -> None:  # fmt: skip
        super().__init__(frame, axes, point)
        self.target = point3(target, "target")
        self.k = finite(stiffness, "anchor spring stiffness [N/m]")
        self.name = name or f"anchor spring {frame}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        p, J = self._rows(snap)
        return -self.k * (J.T @ (p - self.target[self.axes]))

    def potential(self, snap: Snapshot) -> float:
        d = self._rows(snap)[0] - self.target[self.axes]
        return 0.5 * self.k * float(d @ d)


class AnchorDamper(_Anchored):
    """A linear damper on a body point's world velocity along chosen world axes:
    ``Q = -c J_a^T J_a v`` (dissipates ``c |J_a v|^2``; the damping term of Arimoto
    eq. 42 with ``axes=(0, 1)``). ``damping`` c [N s/m] (>= 0)."""

    def __init__(self, frame: str, damping: float, axes=(0, 1, 2), point=None, name=None):
        super().__init__(frame, axes, point)
        self.c = finite(damping, "anchor damping [N s/m]")
        self.name = name or f"anchor damper {frame}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        J = self._rows(snap)[1]
        return -self.c * (J.T @ (J @ snap.v))


class PointForce(ForceElement):
    """A constant world force ``F`` (3,) [N] on a body point: ``Q = J_p^T F``, potential
    ``V = -F . p`` (e.g. the desired pressing force of Arimoto eq. 42, ``lambda_d w``
    with ``F = (0, 0, -lambda_d)``)."""

    conservative = True

    def __init__(self, frame: str, force, point=None, name=None) -> None:
        self.frame, self.frames = frame, (frame,)
        self.F = point3(force, "force")
        self.point = point3(point, "point")
        self.name = name or f"point force on {frame}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        return snap.frame(self.frame).point_jacobian(self.point).T @ self.F

    def potential(self, snap: Snapshot) -> float:
        return -float(self.F @ snap.frame(self.frame).point(self.point))


# -- lowerings to the compiled core (pfaff.lowering; src/cpp/forces/<name>.cpp) ------------


def _two_points(s, e: _TwoPoints, into) -> None:
    s.s1, s.s2 = into.frame(e.frame1), into.frame(e.frame2)
    into.point(s, 1, e.point1)
    into.point(s, 2, e.point2)
    s.target = np.asarray(e.target, dtype=float)


def _refuse_law(e: PointSpring) -> str | None:
    return None if e.law is None else "a spring law callable (Python at every stage)"


@lowers(PointSpring, category="force", refuse=_refuse_law)
def _lower_spring(e: PointSpring, into):
    s = into.force_spec("PointSpring")
    _two_points(s, e, into)
    s.k, s.L0, s.k3 = e.k, e.L0, e.k3
    return s


@lowers(PointDamper, category="force")
def _lower_damper(e: PointDamper, into):
    s = into.force_spec("PointDamper")
    _two_points(s, e, into)
    s.c = e.c
    return s


@lowers(AnchorSpring, AnchorDamper, PointForce, category="force")
def _lower_anchored(e, into):
    s = into.force_spec(type(e).__name__)
    s.s1 = into.frame(e.frame)
    into.point(s, 1, e.point)
    if isinstance(e, PointForce):
        s.F = e.F
    elif isinstance(e, AnchorSpring):
        s.axes, s.k, s.target = list(e.axes), e.k, e.target
    else:
        s.axes, s.c = list(e.axes), e.c
    return s
