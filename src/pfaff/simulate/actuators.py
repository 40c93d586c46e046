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
(:func:`pfaff.simulate.core_engine.set_ctrl`). An actuator with activation dynamics is
always one: its gain multiplies the activation at the stage's time, the exact solution
from ``act0`` at ``t0`` under the held ctrl (:meth:`Actuator.activation`), so a step, a
partial step to a limit's event and an adaptive step all see the same ``act(t)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.lowering import lowers
from pfaff.mechanism.actuators import DYNTYPES, Actuator
from pfaff.mechanism.base import Mechanism, Snapshot
from pfaff.simulate.force_base import ForceElement
from pfaff.simulate.forces_joint import CoordinateSpring, JointDamper, JointElement, JointSpring

__all__ = [
    "ActuatorForce",
    "Actuation",
    "activation_count",
    "activations_at",
    "start_act",
    "step_ahead",
]


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
    ``ctrl`` last set (:meth:`Actuation.tau` sets it); with activation dynamics, for
    the activation ``act0`` at the time ``t0`` from which that ctrl is held
    (:meth:`Actuation.set_act`), ``early`` ahead: with ``actearly``, the step of the run
    that steps it (:func:`step_ahead`; MuJoCo's next activation), else 0."""

    conservative = False

    def __init__(self, actuator: Actuator, index: int = 0, iact: int = -1) -> None:
        self.actuator = actuator
        self.index = int(index)  # its entry in ctrl
        self.iact = int(iact)  # its entry in act (-1: no activation)
        self.ctrl = self.act0 = self.t0 = 0.0
        self.actearly = bool(actuator.actearly and actuator.stateful)
        self.early = 0.0  # the run's dt with actearly (step_ahead), else 0
        self.iq = self.iv = None
        self.name = f"actuator {actuator.name}"

    def bind(self, mechanism: Mechanism) -> None:
        self.iq, self.iv = _coordinates(self.actuator, mechanism)

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        act = None
        if self.actuator.stateful:
            act = self.actuator.activation(
                self.act0, self.ctrl, max(t - self.t0, 0.0) + self.early
            )
        Q[self.iv] += self.actuator.torque(snap.q[self.iq], snap.v[self.iv], self.ctrl, act)
        return Q


def _stateful(forces) -> list[ActuatorForce]:
    """The actuator elements with activation dynamics among ``forces``, by ``iact``."""
    dyn = [e for e in forces if isinstance(e, ActuatorForce) and e.iact >= 0]
    return sorted(dyn, key=lambda e: e.iact)


def step_ahead(forces, dt: float) -> None:
    """The step ``dt`` [s] of the run about to step ``forces``: the look-ahead of each
    actuator element with ``actearly`` among them (the core's ``ForceSet::set_step``
    takes it from the run's options)."""
    for e in forces:
        if isinstance(e, ActuatorForce):
            e.early = float(dt) if e.actearly else 0.0


def activation_count(forces) -> int:
    """``na``: the width of a run's ``act`` series, one activation per actuator element
    with activation dynamics among ``forces`` (0 without)."""
    return 1 + max((e.iact for e in _stateful(forces)), default=-1)


def activations_at(forces, t: float) -> np.ndarray:
    """The activations (na,) of the elements among ``forces`` at time ``t``: each from
    its ``act0`` at its ``t0`` under its held ctrl (:meth:`Actuator.activation`, the
    core's ``ForceSet::activations``)."""
    out = np.zeros(activation_count(forces))
    for e in _stateful(forces):
        out[e.iact] = e.actuator.activation(e.act0, e.ctrl, max(t - e.t0, 0.0))
    return out


def start_act(forces, act0, t0: float) -> None:
    """A run's start activations ``act0`` (na,) at its start time ``t0`` into the
    actuator elements with activation dynamics among ``forces`` (None: they keep
    theirs, zeros unless set, MuJoCo's default). Refused (ValueError) when not
    finite, of another shape or outside an ``actrange``."""
    if act0 is None:
        return
    dyn, na = _stateful(forces), activation_count(forces)
    names = ", ".join(e.actuator.name for e in dyn) or "none"
    x = np.asarray(act0, dtype=float)
    if x.shape != (na,):
        raise ValueError(
            f"act0 has shape {x.shape}, expected ({na},): one activation per actuator "
            f"with activation dynamics among the force elements ({names})"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError(f"act0 must be finite, got {x.tolist()}")
    for e in dyn:
        a, xi = e.actuator, float(x[e.iact])
        if a.actrange is not None and not a.actrange[0] <= xi <= a.actrange[1]:
            raise ValueError(
                f"act0 of actuator {a.name!r} is {xi}, outside its actrange {a.actrange}"
            )
        e.act0, e.t0 = xi, float(t0)


class Actuation:
    """The actuators of a system, bound to its mechanism.

    Parameters
    ----------
    actuators : the :class:`~pfaff.mechanism.actuators.Actuator` list (``nu`` of them).
    mechanism : the mechanism they act on.

    Attributes
    ----------
    nu : the number of controls.
    na : the number of activations (the actuators with activation dynamics, in order).
    elements : the force elements to simulate with (their state-dependent parts).
    """

    def __init__(self, actuators: Sequence[Actuator], mechanism: Mechanism) -> None:
        self.actuators = list(actuators)
        self.nu = len(self.actuators)
        self.stateful = [i for i, a in enumerate(self.actuators) if a.stateful]
        self.na = len(self.stateful)
        self.nv = mechanism.nv
        self._dyn: list[ActuatorForce] = []  # the elements with activation, in act's order
        self.elements: list[ForceElement] = []
        self._held: list[tuple[int, np.ndarray, Actuator]] = []  # (ctrl index, iv, actuator)
        self._forces: list[tuple[int, ActuatorForce]] = []
        self._coords = [_coordinates(a, mechanism) for a in self.actuators]
        for i, a in enumerate(self.actuators):
            k, c = -a.bias[1] * a.gear**2, -a.bias[2] * a.gear**2
            tendon = len(a.joints) > 1 or a.coefs[0] != 1.0
            nonlinear = a.forcerange is not None or any(a.gain_terms)  # clamp, gain(q, v)
            if a.stateful or nonlinear or k < 0 or c < 0 or (c > 0 and tendon):
                e = ActuatorForce(a, i, self.na_before(i))
                e.bind(mechanism)
                self.elements.append(e)
                self._forces.append((i, e))
                if a.stateful:
                    self._dyn.append(e)
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

    def na_before(self, i: int) -> int:
        """Actuator ``i``'s index in ``act`` (-1 without activation dynamics)."""
        return self.stateful.index(i) if i in self.stateful else -1

    def check_act(self, act) -> np.ndarray:
        """``act`` as a float array (na,) (None: zeros, MuJoCo's default), refused
        (ValueError) when not finite, of another shape or outside an ``actrange``."""
        x = np.zeros(self.na) if act is None else np.asarray(act, dtype=float)
        names = ", ".join(self.actuators[i].name for i in self.stateful) or "none"
        if x.shape != (self.na,):
            raise ValueError(
                f"act has shape {x.shape}, expected ({self.na},): one activation per "
                f"actuator with activation dynamics ({names})"
            )
        if not np.all(np.isfinite(x)):
            raise ValueError(f"act has non-finite entries: {x}")
        for xi, i in zip(x, self.stateful):
            a = self.actuators[i]
            if a.actrange is not None and not a.actrange[0] <= xi <= a.actrange[1]:
                raise ValueError(
                    f"act of actuator {a.name!r} is {xi}, outside its actrange {a.actrange}"
                )
        return x

    def set_act(self, act: np.ndarray, t0: float) -> None:
        """The activations ``act`` (na,) at the time ``t0`` from which the ctrl now is
        held, into the force elements (the NumPy engine's; the core's by
        ``System.set_act``)."""
        for e, x in zip(self._dyn, act):
            e.act0, e.t0 = float(x), float(t0)

    def activation(self, act0: np.ndarray, ctrl, t: float) -> np.ndarray:
        """The activations (na,) ``t`` seconds after ``act0`` with ``ctrl`` (nu,) held
        (:meth:`Actuator.activation`)."""
        u = self.check(ctrl)
        return np.array(
            [self.actuators[i].activation(x, u[i], t) for x, i in zip(act0, self.stateful)]
        )

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
        tau = self.held(u)
        for i, e in self._forces:
            e.ctrl = float(u[i])
        return tau

    def held(self, ctrls: np.ndarray) -> np.ndarray:
        """:meth:`tau` over the leading axes of ``ctrls`` (..., nu): the held torques
        (..., nv), the elements' ctrl left as it is."""
        out = np.zeros((*ctrls.shape[:-1], self.nv))
        clamped = self.clamped(ctrls)
        for i, iv, a in self._held:
            b0, b1, _ = a.bias
            offset = b1 * a.gear * float(np.dot(a.coefs, a.refs))
            u = clamped[..., i]
            out[..., iv] += a.gear * np.asarray(a.coefs) * (a.gain * u + b0 + offset)[..., None]
        return out

    def clamped(self, ctrls: np.ndarray) -> np.ndarray:
        """``ctrls`` (..., nu), each within its actuator's ctrlrange."""
        out = np.array(ctrls, dtype=float)
        for i, a in enumerate(self.actuators):
            if a.ctrlrange is not None:
                out[..., i] = np.clip(out[..., i], *a.ctrlrange)
        return out

    def torque(self, q: np.ndarray, v: np.ndarray, ctrl, act=None) -> np.ndarray:
        """MuJoCo's actuator force on the joints (nv,) at ``(q, v)`` for ``ctrl`` and
        the activations ``act`` (na,): the whole formula, the witness of the split into
        elements and torque."""
        u = self.check(ctrl)
        x = self.check_act(act)
        out = np.zeros(self.nv)
        for i, (a, (iq, iv)) in enumerate(zip(self.actuators, self._coords)):
            ai = x[self.na_before(i)] if a.stateful else None
            out[iv] += a.torque(q[iq], v[iv], u[i], ai)
        return out


@lowers(ActuatorForce, category="force")
def _lower_actuator(e: ActuatorForce, into):
    """The whole actuator on the core (src/cpp/forces/actuator.cpp): the
    transmission, gear, ``offset = sum_j c_j ref_j``, gain, bias, force range and the
    ctrl last set (clamped; ``System.set_ctrl`` sets it afterwards); its activation
    dynamics (``System.set_act`` sets ``act0, t0`` afterwards)."""
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
    if a.stateful:
        s.dyn, s.iact, s.tau_act = DYNTYPES[a.dyntype], e.iact, float(a.timeconst)
        s.act0, s.t0, s.actearly = e.act0, e.t0, e.actearly  # early: the run's dt
        if a.actrange is not None:
            s.alo, s.ahi = (float(x) for x in a.actrange)
    return s
