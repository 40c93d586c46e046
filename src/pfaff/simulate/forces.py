"""Force elements evaluated at every integrator stage and counted in the energy.

A force element adds a generalized force ``Q(t, q, v)`` (size nv) to the
applied torque, so the equation of motion reads (design.md Sec. 2)::

    M a + h = tau + sum_e Q_e(t, q, v) - F

Unlike a controller's torque, held between samples (zero-order hold, first
order accurate), ``Q`` is evaluated at every Runge-Kutta stage: a simulation
with force elements keeps the integrator's order. Conservative elements
(springs) report a potential ``V_e(q)`` with ``Q_e = -dV_e/dq``; it is added
to the recorded ``potential`` and ``energy``. The others (dampers, the applied
force ``tau(t, q, v)``) do work ``int Q_e . v dt``, integrated with the
integrator's own quadrature and recorded as ``force_work``, so that
``energy(t) - energy(0) = work + force_work + correction_energy``.

Elements:

- :class:`PointSpring` -- a spring between two points (a point fixed in a
  frame and a point fixed in another frame or in the world), tension
  ``k s + k3 s^3`` for the extension ``s = |p1 - p2| - L0`` (``k3 = 0``: linear),
  or any law ``tension, potential = law(s)``.
- :class:`PointDamper` -- a damper between two points, tension ``c s'``.
- :class:`JointSpring`, :class:`JointDamper` -- on one coordinate of a one-dof joint.
- :class:`CoordinateSpring` -- on a linear combination of joint coordinates.
- :class:`AnchorSpring`, :class:`AnchorDamper` -- a body point tied to a world
  anchor along chosen world axes (a task-space stiffness and damping).
- :class:`PointForce` -- a constant world force on a body point.
- :class:`GravityCompensation` -- ``Q = g(q)``.
- :class:`AppliedForce` -- a generalized force ``tau(t, q, v)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pfaff.constraints.library import joint_coordinate
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot


def _finite(x, what: str, low: float = 0.0) -> float:
    x = float(x)
    if not (np.isfinite(x) and x >= low):
        raise ModelError(f"{what} must be a finite number >= {low:g}, got {x!r}")
    return x


def _point(x, what: str) -> np.ndarray | None:
    if x is None:
        return None
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be 3 finite numbers, got {x!r}")
    return a


class ForceElement:
    """One force element: ``Q(t, snapshot)`` (nv,) and, if conservative, ``V(snapshot)``.

    Attributes
    ----------
    frames : frame names whose kinematics the element reads.
    conservative : True when ``Q = -dV/dq`` (its work is in the potential).
    name : label used in messages.
    """

    frames: tuple[str, ...] = ()
    conservative: bool = False
    name: str = "force element"

    def bind(self, mechanism: Mechanism) -> None:
        """Validate against a mechanism (frames, joints); raise :class:`ModelError`."""
        mechanism.check_frames(self.frames)

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        """Generalized force ``Q`` (nv,) at time ``t`` and the snapshot's state."""
        raise NotImplementedError

    def potential(self, snap: Snapshot) -> float:
        """Potential energy [J] (0 for a non-conservative element)."""
        return 0.0


class _TwoPoints(ForceElement):
    """Two points: ``p1`` fixed in ``frame1`` at ``point1``; ``p2`` fixed in ``frame2``
    at ``point2``, or the world point ``target`` when ``frame2`` is None."""

    def __init__(self, frame1, frame2=None, point1=None, point2=None, target=(0.0, 0.0, 0.0)):
        self.frame1, self.frame2 = frame1, frame2
        self.point1 = _point(point1, "point1")
        self.point2 = _point(point2, "point2")
        self.target = _point(target, "target")
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
    """A spring between two points (see :class:`_TwoPoints` for the points).

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
        self.k = _finite(0.0 if stiffness is None else stiffness, "spring stiffness [N/m]")
        self.L0 = _finite(rest_length, "spring rest length [m]")
        self.k3 = _finite(cubic, "cubic spring coefficient [N/m^3]")
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
        self.c = _finite(damping, "damping coefficient [N s/m]")
        self.name = name or f"damper {frame1}-{frame2 or 'world'}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        d, J = self._geometry(snap)
        r = float(np.sqrt(d @ d))
        if r < 1e-12:
            return np.zeros(J.shape[1])
        e = d / r
        Je = J.T @ e
        return -self.c * float(Je @ snap.v) * Je


class _Joint(ForceElement):
    """A one-dof joint by name (Pinocchio mechanisms) or coordinate index (nq == nv)."""

    def __init__(self, joint: str | int) -> None:
        self.joint = joint
        self.iq = self.iv = None

    def bind(self, mechanism: Mechanism) -> None:
        self.iq, self.iv = _one_dof(mechanism, self.joint)


def _one_dof(mechanism: Mechanism, joint: str | int) -> tuple[int, int]:
    """``(iq, iv)`` of a one-dof joint with one coordinate (ModelError otherwise)."""
    iq, iv, nq = joint_coordinate(mechanism, joint)
    if nq != 1:
        raise ModelError(
            f"joint {joint!r} is not a one-dof joint with one coordinate "
            "(revolute or prismatic with limits)"
        )
    return iq, iv


class JointSpring(_Joint):
    """``Q_i = -k (q_i - rest)``, ``V = k (q_i - rest)^2 / 2`` on one joint coordinate."""

    conservative = True

    def __init__(self, joint: str | int, stiffness: float, rest: float = 0.0, name=None):
        super().__init__(joint)
        self.k = _finite(stiffness, "joint spring stiffness [N m/rad or N/m]")
        self.rest = float(rest)
        self.name = name or f"joint spring {joint}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        Q[self.iv] = -self.k * (snap.q[self.iq] - self.rest)
        return Q

    def potential(self, snap: Snapshot) -> float:
        return 0.5 * self.k * float(snap.q[self.iq] - self.rest) ** 2


class CoordinateSpring(ForceElement):
    """A spring on a linear combination of one-dof joint coordinates:
    ``s = sum_j c_j q_j - rest``, ``V = k s^2 / 2``, ``Q_j = -k s c_j``.

    Parameters
    ----------
    joints : the joints (names, or coordinate indices where nq == nv).
    coefficients : ``c_j``, one per joint [rad/rad or m/m, or the units that make
        ``s`` a length or an angle].
    stiffness : k (>= 0), in the units of ``V / s^2``.
    rest : the value of ``sum_j c_j q_j`` where the spring is relaxed.
    """

    conservative = True

    def __init__(
        self,
        joints: Sequence[str | int],
        coefficients: Sequence[float],
        stiffness: float,
        rest: float = 0.0,
        name=None,
    ) -> None:
        self.joints = list(joints)
        self.c = np.asarray(coefficients, dtype=float).reshape(-1)
        if self.c.shape != (len(self.joints),) or not np.all(np.isfinite(self.c)):
            raise ModelError(
                f"coordinate spring: one finite coefficient per joint expected, got "
                f"{len(self.joints)} joints and coefficients {coefficients!r}"
            )
        self.k = _finite(stiffness, "coordinate spring stiffness")
        self.rest = float(rest)
        self.iq = self.iv = None
        self.name = name or f"coordinate spring on {self.joints}"

    def bind(self, mechanism: Mechanism) -> None:
        idx = np.array([_one_dof(mechanism, j) for j in self.joints], dtype=int).reshape(-1, 2)
        self.iq, self.iv = idx[:, 0], idx[:, 1]

    def extension(self, snap: Snapshot) -> float:
        """``s = sum_j c_j q_j - rest``."""
        return float(self.c @ snap.q[self.iq]) - self.rest

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        Q[self.iv] -= self.k * self.extension(snap) * self.c
        return Q

    def potential(self, snap: Snapshot) -> float:
        return 0.5 * self.k * self.extension(snap) ** 2


class JointDamper(_Joint):
    """``Q_i = -c v_i`` on one joint coordinate (dissipates ``c v_i^2``)."""

    def __init__(self, joint: str | int, damping: float, name=None):
        super().__init__(joint)
        self.c = _finite(damping, "joint damping [N m s/rad or N s/m]")
        self.name = name or f"joint damper {joint}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        Q[self.iv] = -self.c * snap.v[self.iv]
        return Q


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
        self.point = _point(point, "point")
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
        self.target = _point(target, "target")
        self.k = _finite(stiffness, "anchor spring stiffness [N/m]")
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
        self.c = _finite(damping, "anchor damping [N s/m]")
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
        self.F = _point(force, "force")
        self.point = _point(point, "point")
        self.name = name or f"point force on {frame}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        return snap.frame(self.frame).point_jacobian(self.point).T @ self.F

    def potential(self, snap: Snapshot) -> float:
        return -float(self.F @ snap.frame(self.frame).point(self.point))


class GravityCompensation(ForceElement):
    """``Q = g(q)``, the generalized gravity, so that it cancels gravity; potential
    ``V = -V_g(q)`` (the model's gravity potential, negated)."""

    conservative = True

    def __init__(self, name=None) -> None:
        self.name = name or "gravity compensation"
        self._mech: Mechanism | None = None

    def bind(self, mechanism: Mechanism) -> None:
        self._mech = mechanism

    def _gravity(self, snap: Snapshot) -> Snapshot:
        """The snapshot if it holds g and V_g, else one computed at its q (integrator
        stages compute neither)."""
        return snap if snap.g is not None else self._mech.compute(snap.q)

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        return np.array(self._gravity(snap).g, dtype=float)

    def potential(self, snap: Snapshot) -> float:
        return -float(self._gravity(snap).potential)


class AppliedForce(ForceElement):
    """A continuous generalized force ``tau(t, q, v)`` (nv,), evaluated at every stage."""

    def __init__(self, fn: Callable[[float, np.ndarray, np.ndarray], np.ndarray], name=None):
        if not callable(fn):
            raise ModelError(f"AppliedForce needs a function tau(t, q, v), got {fn!r}")
        self.fn = fn
        self.name = name or "applied force"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.asarray(self.fn(t, snap.q, snap.v), dtype=float)
        if Q.shape != snap.v.shape:
            raise ValueError(
                f"{self.name}: tau(t, q, v) returned shape {Q.shape}, expected {snap.v.shape}"
            )
        return Q


def element_types() -> list[type]:
    """The public force-element classes (the subclasses of :class:`ForceElement`
    defined here whose names do not start with ``_``), in definition order."""
    out, todo = [], list(ForceElement.__subclasses__())
    while todo:
        c = todo.pop(0)
        todo[:0] = c.__subclasses__()
        if not c.__name__.startswith("_") and c.__module__ == __name__:
            out.append(c)
    return out


class ForceSet:
    """The force elements of one simulation, bound to its mechanism."""

    def __init__(self, mechanism: Mechanism, elements: Sequence[ForceElement] = ()) -> None:
        self.elements = list(elements)
        for e in self.elements:
            if not isinstance(e, ForceElement):
                kinds = ", ".join(c.__name__ for c in element_types())
                raise ModelError(
                    f"force elements must be ForceElement instances ({kinds}), got {e!r}"
                )
            e.bind(mechanism)
        self.frames = tuple(dict.fromkeys(f for e in self.elements for f in e.frames))
        self.nv = mechanism.nv

    def __bool__(self) -> bool:
        return bool(self.elements)

    def evaluate(self, t: float, snap: Snapshot) -> tuple[np.ndarray, float]:
        """``(Q, P_nc)``: the total generalized force and the power of the
        non-conservative elements ``sum Q_e . v`` [W]."""
        Q = np.zeros(self.nv)
        power = 0.0
        for e in self.elements:
            Qe = e.force(t, snap)
            Q += Qe
            if not e.conservative:
                power += float(Qe @ snap.v)
        return Q, power

    def potential(self, snap: Snapshot) -> float:
        """Sum of the conservative elements' potentials [J]."""
        return float(sum(e.potential(snap) for e in self.elements if e.conservative))
