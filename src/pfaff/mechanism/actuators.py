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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Actuator"]


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

    def clamp_ctrl(self, ctrl: float) -> float:
        """``ctrl`` within ``ctrlrange`` (unchanged without one)."""
        if self.ctrlrange is None:
            return float(ctrl)
        return float(np.clip(ctrl, *self.ctrlrange))

    def force(self, q: np.ndarray, v: np.ndarray, ctrl: float) -> float:
        """MuJoCo's actuator force at the coordinates ``q`` (pfaff's) and velocities
        ``v`` of :attr:`joints` for ``ctrl`` (clamped to the ranges)."""
        c = np.asarray(self.coefs)
        length = self.gear * float(c @ (np.asarray(q) + np.asarray(self.refs)))
        velocity = self.gear * float(c @ np.asarray(v))
        b0, b1, b2 = self.bias
        g1, g2 = self.gain_terms
        gain = self.gain + g1 * length + g2 * velocity
        f = gain * self.clamp_ctrl(ctrl) + b0 + b1 * length + b2 * velocity
        return f if self.forcerange is None else float(np.clip(f, *self.forcerange))

    def torque(self, q: np.ndarray, v: np.ndarray, ctrl: float) -> np.ndarray:
        """The generalized forces on :attr:`joints`: ``gear c_j force``."""
        return self.gear * np.asarray(self.coefs) * self.force(q, v, ctrl)
