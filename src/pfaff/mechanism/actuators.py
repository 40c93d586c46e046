"""Actuators as an MJCF file describes them: MuJoCo's affine actuator on a joint.

MuJoCo's actuator force (``mj_fwdActuation``, with no activation dynamics) is

    force = gain * ctrl + b0 + b1 * length + b2 * velocity,

``length = gear * qpos_j`` and ``velocity = gear * qvel_j`` for a joint transmission,
``ctrl`` clamped to ``ctrlrange`` and ``force`` to ``forcerange`` where the file limits
them; the generalized force on the joint is ``gear * force``. ``<motor>`` is gain
``gear``-scaled 1 and no bias, ``<position kp kv>`` gain ``kp`` and bias
``(0, -kp, -kv)``, ``<velocity kv>`` gain ``kv`` and bias ``(0, 0, -kv)``, ``<general>``
any fixed gain with an affine bias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Actuator"]


@dataclass(frozen=True)
class Actuator:
    """One actuator on a hinge or slide joint.

    Attributes
    ----------
    name : the actuator's name.
    joint : the joint it drives.
    gear : the transmission's gear (length = gear * qpos).
    gain : force per unit of ctrl.
    bias : ``(b0, b1, b2)`` of the affine bias ``b0 + b1 length + b2 velocity``.
    ref : the joint's MJCF ``ref`` (MuJoCo's ``qpos = q + ref`` for pfaff's ``q``).
    ctrlrange : ``(lo, hi)`` the ctrl is clamped to, or None.
    forcerange : ``(lo, hi)`` the force is clamped to, or None.
    """

    name: str
    joint: str
    gear: float
    gain: float
    bias: tuple[float, float, float] = (0.0, 0.0, 0.0)
    ref: float = 0.0
    ctrlrange: tuple[float, float] | None = None
    forcerange: tuple[float, float] | None = None

    def clamp_ctrl(self, ctrl: float) -> float:
        """``ctrl`` within ``ctrlrange`` (unchanged without one)."""
        if self.ctrlrange is None:
            return float(ctrl)
        return float(np.clip(ctrl, *self.ctrlrange))

    def force(self, q: float, v: float, ctrl: float) -> float:
        """MuJoCo's actuator force at the joint coordinate ``q`` (pfaff's) and velocity
        ``v`` for ``ctrl`` (clamped to the ranges)."""
        length, velocity = self.gear * (q + self.ref), self.gear * v
        b0, b1, b2 = self.bias
        f = self.gain * self.clamp_ctrl(ctrl) + b0 + b1 * length + b2 * velocity
        return f if self.forcerange is None else float(np.clip(f, *self.forcerange))

    def torque(self, q: float, v: float, ctrl: float) -> float:
        """The generalized force on the joint: ``gear * force``."""
        return self.gear * self.force(q, v, ctrl)
