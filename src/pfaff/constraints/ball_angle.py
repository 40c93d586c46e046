"""A ball joint's rotation angle held at a value: ``Phi = theta(q) - value`` (a ball
joint's limit held at its bound by :func:`pfaff.simulate.limits.simulate_limited`).

The angle is MuJoCo's: ``theta = 2 atan2(|xyz|, |w|)`` in ``[0, pi]`` of the joint's unit
quaternion (pfaff's order ``x, y, z, w``; ``q`` and ``-q`` the same rotation), about the
unit axis ``u = sign(w) xyz / |xyz|``. With the joint's velocity ``omega`` (Pinocchio's
spherical joint: the angular velocity in the child's frame, in which ``u`` is the same
axis) ``theta' = u . omega``, so the row is ``u`` on the joint's three velocities, and its
drift ``u' . omega = |omega_perp|^2 / (2 tan(theta / 2))`` with ``omega_perp = omega -
(u . omega) u`` (the axis turns as ``du/d delta = (I - u u^T) / (2 tan(theta / 2)) +
[u]_x / 2``).
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint, named_joint
from pfaff.lowering import lowers
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot

__all__ = ["BallAngle", "ball_angle", "ball_coordinates"]


def ball_angle(quat: np.ndarray) -> tuple[float, np.ndarray]:
    """``(theta, u)`` of a unit quaternion ``(x, y, z, w)``: the rotation angle in [0, pi]
    and its unit axis (zeros at the identity, where the axis is undefined)."""
    xyz, w = np.asarray(quat[:3], dtype=float), float(quat[3])
    s = float(np.linalg.norm(xyz))
    theta = 2.0 * np.arctan2(s, abs(w))
    if s == 0.0:
        return theta, np.zeros(3)
    return theta, (1.0 if w >= 0.0 else -1.0) * xyz / s


def ball_coordinates(mechanism: Mechanism, joint: str) -> tuple[int, int]:
    """``(idx_q, idx_v)`` of a ball (spherical) joint: 4 coordinates, 3 velocities."""
    return named_joint(mechanism, joint, 4, 3, "not a ball joint (4 coordinates, 3 velocities)")


class BallAngle(Constraint):
    """``Phi = theta - value``: a ball joint's rotation angle held (module docstring).

    Parameters
    ----------
    joint : the ball joint's name.
    value : the held angle [rad], in (0, pi) (the axis is undefined at 0 and the angle
        folds at pi).
    name : a label for reports and messages.
    """

    def __init__(self, joint: str, value: float, name: str | None = None) -> None:
        self.joint, self.value = joint, float(value)
        if not 0.0 < self.value < np.pi:
            raise ModelError(f"ball angle of {joint!r}: value = {value!r}, valid: (0, pi)")
        self.name = name or f"angle of {joint}"
        self.iq = self.iv = None

    def bind(self, mechanism: Mechanism) -> None:
        self.iq, self.iv = ball_coordinates(mechanism, self.joint)
        self.nv = mechanism.nv

    def residual(self, snap: Snapshot) -> np.ndarray:
        return np.array([ball_angle(snap.q[self.iq : self.iq + 4])[0] - self.value])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        A = np.zeros((1, self.nv))
        A[0, self.iv : self.iv + 3] = ball_angle(snap.q[self.iq : self.iq + 4])[1]
        return A

    def drift(self, snap: Snapshot) -> np.ndarray:
        theta, u = ball_angle(snap.q[self.iq : self.iq + 4])
        w = snap.v[self.iv : self.iv + 3]
        perp = w - float(u @ w) * u
        return np.array([float(perp @ perp) / (2.0 * np.tan(0.5 * theta))])


@lowers(BallAngle, category="constraint")
def _lower_ball_angle(c: BallAngle, into):
    s = into.spec("BallAngle", c)
    s.iq, s.iv, s.value = int(c.iq), int(c.iv), c.value
    return s
