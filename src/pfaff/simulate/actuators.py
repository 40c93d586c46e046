"""A system's actuators driven by ``ctrl`` (:class:`pfaff.mechanism.actuators.Actuator`).

MuJoCo's affine actuator, ``gear c_j (gain ctrl + b0 + b1 length + b2 velocity)`` on
its joints ``j`` with ``length = gear sum_j c_j qpos_j``, is split into what depends
on ``(q, v)`` and what on ``ctrl``: the bias term in ``length`` is a spring of
stiffness ``-b1 gear^2`` on ``sum_j c_j q_j`` (a :class:`JointSpring` for one joint, a
:class:`CoordinateSpring` for a tendon), the term in ``velocity`` a
:class:`JointDamper` of damping ``-b2 gear^2`` for one joint -- built-in force
elements, so both engines run them at every integrator stage, as MuJoCo evaluates its
actuators at every RK4 stage --, and the rest, ``gear c_j (gain clamp(ctrl) + b0 +
b1 gear sum_j c_j ref_j)``, is a joint torque held over a step. An actuator with a
force range (the clamp makes it nonlinear in ``q`` and ``v``), an affine gain (its
``ctrl`` times ``q`` and ``v``), a velocity term on a tendon, or a bias that would be a
negative spring or damper is one :class:`ActuatorForce` element instead: the whole
formula at every stage, on the compiled core as on NumPy, its ``ctrl`` (clamped)
handed to the core by ``System.set_ctrl``
(:func:`pfaff.simulate.core_engine.set_ctrl`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.lowering import lowers
from pfaff.mechanism.actuators import Actuator
from pfaff.mechanism.base import Mechanism, Snapshot
from pfaff.simulate.force_base import ForceElement
from pfaff.simulate.forces_joint import CoordinateSpring, JointDamper, JointElement, JointSpring

__all__ = ["ActuatorForce", "Actuation"]


def _coordinates(actuator: Actuator, mechanism: Mechanism) -> tuple[np.ndarray, np.ndarray]:
    """``(iq, iv)`` of the actuator's joints (ModelError for a joint that is not a
    one-dof one with one coordinate)."""
    out = []
    for joint in actuator.joints:
        probe = JointElement(joint)
        probe.bind(mechanism)
        out.append((probe.iq, probe.iv))
    idx = np.array(out, dtype=int).reshape(-1, 2)
    return idx[:, 0], idx[:, 1]


class ActuatorForce(ForceElement):
    """One actuator as a force element: MuJoCo's force at each evaluation, for the
    ``ctrl`` last set (:meth:`Actuation.tau` sets it)."""

    conservative = False

    def __init__(self, actuator: Actuator, index: int = 0) -> None:
        self.actuator = actuator
        self.index = int(index)  # its entry in ctrl
        self.ctrl = 0.0
        self.iq = self.iv = None
        self.name = f"actuator {actuator.name}"

    def bind(self, mechanism: Mechanism) -> None:
        self.iq, self.iv = _coordinates(self.actuator, mechanism)

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        Q[self.iv] += self.actuator.torque(snap.q[self.iq], snap.v[self.iv], self.ctrl)
        return Q


class Actuation:
    """The actuators of a system, bound to its mechanism.

    Parameters
    ----------
    actuators : the :class:`~pfaff.mechanism.actuators.Actuator` list (``nu`` of them).
    mechanism : the mechanism they act on.

    Attributes
    ----------
    nu : the number of controls.
    elements : the force elements to simulate with (their state-dependent parts).
    """

    def __init__(self, actuators: Sequence[Actuator], mechanism: Mechanism) -> None:
        self.actuators = list(actuators)
        self.nu = len(self.actuators)
        self.nv = mechanism.nv
        self.elements: list[ForceElement] = []
        self._held: list[tuple[int, np.ndarray, Actuator]] = []  # (ctrl index, iv, actuator)
        self._forces: list[tuple[int, ActuatorForce]] = []
        self._coords = [_coordinates(a, mechanism) for a in self.actuators]
        for i, a in enumerate(self.actuators):
            k, c = -a.bias[1] * a.gear**2, -a.bias[2] * a.gear**2
            tendon = len(a.joints) > 1 or a.coefs[0] != 1.0
            nonlinear = a.forcerange is not None or any(a.gain_terms)  # clamp, gain(q, v)
            if nonlinear or k < 0 or c < 0 or (c > 0 and tendon):
                e = ActuatorForce(a, i)
                e.bind(mechanism)
                self.elements.append(e)
                self._forces.append((i, e))
                continue
            if k > 0 and tendon:
                self.elements.append(
                    CoordinateSpring(a.joints, a.coefs, k, 0.0, f"actuator {a.name} (kp)")
                )
            elif k > 0:
                self.elements.append(JointSpring(a.joints[0], k, 0.0, f"actuator {a.name} (kp)"))
            if c > 0:
                self.elements.append(JointDamper(a.joints[0], c, f"actuator {a.name} (kv)"))
            self._held.append((i, self._coords[i][1], a))

    def __bool__(self) -> bool:
        return self.nu > 0

    def check(self, ctrl) -> np.ndarray:
        """``ctrl`` as a float array (nu,) (None: zeros), refused (ValueError) when not
        finite or of another shape."""
        u = np.zeros(self.nu) if ctrl is None else np.asarray(ctrl, dtype=float)
        if u.shape != (self.nu,):
            names = ", ".join(a.name for a in self.actuators) or "none"
            raise ValueError(
                f"ctrl has shape {u.shape}, expected ({self.nu},): one value per actuator "
                f"({names})"
            )
        if not np.all(np.isfinite(u)):
            raise ValueError(f"ctrl has non-finite entries: {u}")
        return u

    def tau(self, ctrl) -> np.ndarray:
        """The joint torque (nv,) of ``ctrl`` (nu,) held over a step, ctrl clamped to
        each actuator's range; sets the ``ctrl`` of the :class:`ActuatorForce` elements."""
        u = self.check(ctrl)
        tau = np.zeros(self.nv)
        for i, iv, a in self._held:
            b0, b1, _ = a.bias
            offset = b1 * a.gear * float(np.dot(a.coefs, a.refs))
            tau[iv] += a.gear * np.asarray(a.coefs) * (a.gain * a.clamp_ctrl(u[i]) + b0 + offset)
        for i, e in self._forces:
            e.ctrl = float(u[i])
        return tau

    def torque(self, q: np.ndarray, v: np.ndarray, ctrl) -> np.ndarray:
        """MuJoCo's actuator force on the joints (nv,) at ``(q, v)`` for ``ctrl``: the
        whole formula, the witness of the split into elements and torque."""
        u = self.check(ctrl)
        out = np.zeros(self.nv)
        for i, (a, (iq, iv)) in enumerate(zip(self.actuators, self._coords)):
            out[iv] += a.torque(q[iq], v[iv], u[i])
        return out


@lowers(ActuatorForce, category="force")
def _lower_actuator(e: ActuatorForce, into):
    """The whole actuator on the core (src/cpp/forces/actuator.cpp): the
    transmission, gear, ``offset = sum_j c_j ref_j``, gain, bias, force range and the
    ctrl last set (clamped; ``System.set_ctrl`` sets it afterwards)."""
    a = e.actuator
    s = into.force_spec("Actuator")
    s.iqs, s.ivs = [int(i) for i in e.iq], [int(i) for i in e.iv]
    s.coefs = [float(c) for c in a.coefs]
    s.gear, s.offset = float(a.gear), float(np.dot(a.coefs, a.refs))
    s.g0, (s.g1, s.g2) = float(a.gain), (float(x) for x in a.gain_terms)
    s.b0, s.b1, s.b2 = (float(x) for x in a.bias)
    if a.forcerange is not None:
        s.flo, s.fhi = (float(x) for x in a.forcerange)
    s.ictrl, s.ctrl = e.index, a.clamp_ctrl(e.ctrl)
    return s
