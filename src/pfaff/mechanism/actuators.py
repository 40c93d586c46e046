"""Actuators as an MJCF file describes them: MuJoCo's affine actuator on a joint.

MuJoCo's actuator force (``mj_fwdActuation``, with no activation dynamics) is

    force = (g0 + g1 * length + g2 * velocity) * ctrl + b0 + b1 * length + b2 * velocity,

``length = gear * sum_j c_j qpos_j`` and ``velocity = gear * sum_j c_j qvel_j`` -- one
joint with ``c = 1`` for a joint transmission, a fixed tendon's joints and coefficients
for a tendon transmission --, ``ctrl`` clamped to ``ctrlrange`` and ``force`` to
``forcerange`` where the file limits them; the generalized force on joint ``j`` is
``gear c_j force``. ``<motor>`` is gain
``gear``-scaled 1 and no bias, ``<position kp kv>`` gain ``kp`` and bias
``(0, -kp, -kv)``, ``<velocity kv>`` gain ``kv`` and bias ``(0, 0, -kv)``, ``<general>``
a fixed or affine gain (``gaintype``) with an affine bias.

With activation dynamics (``dyntype`` ``integrator``, ``filter`` or ``filterexact``;
``<position timeconst>``, ``<intvelocity>``, ``<general dyntype>``) the gain multiplies
the actuator's activation ``act`` instead of ``ctrl`` (``force = gain * act + bias``),
a state of its own with MuJoCo's rate (``mj_fwdActuation``)

    integrator: act' = ctrl,    filter, filterexact: act' = (ctrl - act) / dynprm[0],

kept within ``actrange`` where ``actlimited``; ``actearly`` makes the force use the
activation one step ahead (MuJoCo's ``mj_nextActivation``). pfaff holds ``ctrl`` over
a step, so ``act`` is the exact solution of this linear ODE at every time the
integrator asks for (:meth:`Actuator.activation`): MuJoCo's ``filterexact`` for every
filter, and ``act0 + ctrl t`` for the integrator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DYNTYPES", "Actuator"]

#: the activation dynamics pfaff models (MuJoCo's mjtDyn names), their number on the core
DYNTYPES = {"none": 0, "integrator": 1, "filter": 2, "filterexact": 3}


@dataclass(frozen=True)
class Actuator:
    """One actuator on hinge or slide joints (one joint, or a fixed tendon's).

    Attributes
    ----------
    name : the actuator's name.
    joints : the joints it drives.
    coefs : their coefficients ``c_j`` in the transmission's length (1 for a joint).
    refs : their MJCF ``ref`` (MuJoCo's ``qpos = q + ref`` for pfaff's ``q``).
    gear : the transmission's gear (length = gear * sum_j c_j qpos_j).
    gain : force per unit of ctrl (``g0``).
    bias : ``(b0, b1, b2)`` of the affine bias ``b0 + b1 length + b2 velocity``.
    gain_terms : ``(g1, g2)`` of an affine gain ``g0 + g1 length + g2 velocity``.
    ctrlrange : ``(lo, hi)`` the ctrl is clamped to, or None.
    forcerange : ``(lo, hi)`` the force is clamped to, or None.
    dyntype : the activation dynamics, one of :data:`DYNTYPES` (``"none"``: the gain
        multiplies ``ctrl``).
    timeconst : a filter's time constant ``dynprm[0]`` [s].
    actrange : ``(lo, hi)`` the activation is kept within (``actlimited``), or None.
    actearly : the force uses the activation one step ahead.
    """

    name: str
    joints: tuple[str, ...]
    coefs: tuple[float, ...]
    refs: tuple[float, ...]
    gear: float
    gain: float
    bias: tuple[float, float, float] = (0.0, 0.0, 0.0)
    gain_terms: tuple[float, float] = (0.0, 0.0)  # (g1, g2) of an affine gain
    ctrlrange: tuple[float, float] | None = None
    forcerange: tuple[float, float] | None = None
    dyntype: str = "none"
    timeconst: float = 0.0
    actrange: tuple[float, float] | None = None
    actearly: bool = False

    def __post_init__(self) -> None:
        if self.dyntype not in DYNTYPES:
            raise ValueError(
                f"actuator {self.name!r}: dyntype {self.dyntype!r}; pfaff models "
                f"{', '.join(DYNTYPES)}"
            )
        if self.dyntype in ("filter", "filterexact") and not self.timeconst > 0:
            raise ValueError(
                f"actuator {self.name!r}: a {self.dyntype} needs a time constant > 0 [s], "
                f"got {self.timeconst!r}"
            )
        if self.actrange is not None and not self.actrange[0] <= self.actrange[1]:
            raise ValueError(f"actuator {self.name!r}: actrange {self.actrange} needs lo <= hi")

    @property
    def stateful(self) -> bool:
        """The actuator has an activation state (``dyntype`` other than none)."""
        return self.dyntype != "none"

    def clamp_act(self, act: float) -> float:
        """``act`` within ``actrange`` (unchanged without one)."""
        if self.actrange is None:
            return float(act)
        return float(np.clip(act, *self.actrange))

    def act_dot(self, act: float, ctrl: float) -> float:
        """MuJoCo's activation rate at ``act`` for ``ctrl`` (clamped to ``ctrlrange``)."""
        u = self.clamp_ctrl(ctrl)
        if self.dyntype == "integrator":
            return u
        if self.dyntype in ("filter", "filterexact"):
            return (u - float(act)) / self.timeconst
        return 0.0

    def activation(self, act0: float, ctrl: float, t: float) -> float:
        """The activation ``t`` seconds after it was ``act0`` with ``ctrl`` (clamped to
        ``ctrlrange``) held: the exact solution of :meth:`act_dot`'s ODE, ``act0 + ctrl
        t`` (integrator) or ``ctrl + (act0 - ctrl) exp(-t / timeconst)`` (filter), kept
        within ``actrange`` (for ``act0`` within it, the solution of the limited ODE)."""
        u = self.clamp_ctrl(ctrl)
        if self.dyntype == "integrator":
            return self.clamp_act(float(act0) + u * t)
        return self.clamp_act(u + (float(act0) - u) * np.exp(-t / self.timeconst))

    def clamp_ctrl(self, ctrl: float) -> float:
        """``ctrl`` within ``ctrlrange`` (unchanged without one)."""
        if self.ctrlrange is None:
            return float(ctrl)
        return float(np.clip(ctrl, *self.ctrlrange))

    def force(self, q: np.ndarray, v: np.ndarray, ctrl: float, act: float | None = None) -> float:
        """MuJoCo's actuator force at the coordinates ``q`` (pfaff's) and velocities
        ``v`` of :attr:`joints` for ``ctrl`` (clamped to the ranges), or with activation
        dynamics for the activation ``act`` (the input of the gain then)."""
        c = np.asarray(self.coefs)
        length = self.gear * float(c @ (np.asarray(q) + np.asarray(self.refs)))
        velocity = self.gear * float(c @ np.asarray(v))
        b0, b1, b2 = self.bias
        g1, g2 = self.gain_terms
        gain = self.gain + g1 * length + g2 * velocity
        if self.stateful and act is None:
            raise ValueError(f"actuator {self.name!r} has activation dynamics: give its act")
        u = self.clamp_ctrl(ctrl) if not self.stateful else float(act)
        f = gain * u + b0 + b1 * length + b2 * velocity
        return f if self.forcerange is None else float(np.clip(f, *self.forcerange))

    def torque(
        self, q: np.ndarray, v: np.ndarray, ctrl: float, act: float | None = None
    ) -> np.ndarray:
        """The generalized forces on :attr:`joints`: ``gear c_j force``."""
        return self.gear * np.asarray(self.coefs) * self.force(q, v, ctrl, act)
