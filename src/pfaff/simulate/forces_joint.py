"""Force elements on joint coordinates: springs and dampers on one coordinate or a
linear combination, gravity compensation, an applied force ``tau(t, q, v)`` (see
:mod:`pfaff.simulate.forces`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pfaff.constraints.library import joint_coordinate
from pfaff.lowering import lowers
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot
from pfaff.simulate.force_base import ForceElement, finite


class JointElement(ForceElement):
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


class JointSpring(JointElement):
    """``Q_i = -k (q_i - rest)``, ``V = k (q_i - rest)^2 / 2`` on one joint coordinate.

    Parameters
    ----------
    joint : the joint's name, or its coordinate index.
    stiffness : k [N m/rad or N/m].
    rest : the rest angle [rad] or position [m].
    name : a label for reports and messages.
    """

    conservative = True

    def __init__(self, joint: str | int, stiffness: float, rest: float = 0.0, name=None):
        super().__init__(joint)
        self.k = finite(stiffness, "joint spring stiffness [N m/rad or N/m]")
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
        self.k = finite(stiffness, "coordinate spring stiffness")
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


class JointDamper(JointElement):
    """``Q_i = -c v_i`` on one joint coordinate (dissipates ``c v_i^2``).

    Parameters
    ----------
    joint : the joint's name, or its coordinate index.
    damping : c [N m s/rad or N s/m].
    name : a label for reports and messages.
    """

    def __init__(self, joint: str | int, damping: float, name=None):
        super().__init__(joint)
        self.c = finite(damping, "joint damping [N m s/rad or N s/m]")
        self.name = name or f"joint damper {joint}"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        Q[self.iv] = -self.c * snap.v[self.iv]
        return Q


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


# -- lowerings to the compiled core (pfaff.lowering; src/cpp/forces/<name>.cpp) ------------


@lowers(JointSpring, JointDamper, category="force")
def _lower_joint(e, into):
    s = into.force_spec(type(e).__name__)
    s.iq, s.iv = int(e.iq), int(e.iv)
    if isinstance(e, JointSpring):
        s.k, s.rest = e.k, e.rest
    else:
        s.c = e.c
    return s


@lowers(CoordinateSpring, category="force")
def _lower_coordinate(e: CoordinateSpring, into):
    s = into.force_spec("CoordinateSpring")
    s.iqs, s.ivs = [int(i) for i in e.iq], [int(i) for i in e.iv]
    s.coefs, s.k, s.rest = [float(c) for c in e.c], e.k, e.rest
    return s


@lowers(GravityCompensation, category="force")
def _lower_gravity(e: GravityCompensation, into):
    return into.force_spec("GravityCompensation")  # g(q) is the model's
