"""What a limit bounds: one joint coordinate (:class:`~pfaff.simulate.limits.JointLimit`),
a fixed tendon's length, a linear combination of joint coordinates
(:class:`TendonLimit`), or a ball joint's rotation angle (:class:`BallLimit`), and
:class:`Bound`, a limit bound to a mechanism: the value it bounds, its rate, its row and
the held constraint at a bound, which the limited run's events read
(:mod:`pfaff.simulate.limit_events`, :mod:`pfaff.simulate.limits`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pfaff.constraints.ball_angle import BallAngle, ball_angle, ball_coordinates
from pfaff.constraints.coordinate_lock import CoordinateLock
from pfaff.constraints.library import LockedJoint, joint_coordinate, tendon_coordinates

__all__ = ["BallLimit", "Bound", "TendonLimit", "check_limit"]


def check_limit(what: str, lower, upper, restitution) -> None:
    """Refuse bounds that are not ``lower < upper`` or a restitution outside [0, 1]
    (ValueError naming ``what``)."""
    lo, hi, e = float(lower), float(upper), float(restitution)
    if np.isnan(lo) or np.isnan(hi) or not lo < hi:
        raise ValueError(
            f"{what}: lower = {lower!r} must be < upper = {upper!r} (numbers; -inf/inf for "
            "a one-sided limit)"
        )
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"{what}: restitution = {restitution!r}, valid: [0, 1]")


@dataclass(frozen=True)
class TendonLimit:
    """``lower <= sum_j c_j q_j <= upper``: a fixed tendon's length between its bounds
    (MuJoCo's ``<fixed limited range>``), held as a joint limit is.

    Parameters
    ----------
    name : the tendon's name; the limit's events and messages name it (``joint``).
    joints : the tendon's one-dof joints (names, or coordinate indices where nq == nv).
    coefficients : ``c_j``, one per joint, finite, not all 0.
    lower, upper : the bounds of the length in pfaff's ``q`` [rad or m]; ``-inf`` /
        ``inf`` for a one-sided limit.
    restitution : Newton's coefficient ``e`` in [0, 1] of the length's rate.
    """

    name: str
    joints: tuple[str | int, ...]
    coefficients: tuple[float, ...]
    lower: float
    upper: float
    restitution: float = 0.0

    def __post_init__(self) -> None:
        c = np.asarray(self.coefficients, dtype=float).reshape(-1)
        if not len(self.joints) or c.shape != (len(self.joints),):
            raise ValueError(
                f"tendon limit {self.name!r}: one coefficient per joint (at least one) "
                f"expected, got {len(self.joints)} joints and {self.coefficients!r}"
            )
        if not np.all(np.isfinite(c)) or not np.any(c != 0):
            raise ValueError(
                f"tendon limit {self.name!r}: coefficients must be finite and not all 0, "
                f"got {self.coefficients!r}"
            )
        check_limit(f"tendon limit {self.name!r}", self.lower, self.upper, self.restitution)

    @property
    def joint(self) -> str:
        """The name the limit's events and messages give it: the tendon's."""
        return self.name


@dataclass(frozen=True)
class BallLimit:
    """``theta <= angle``: a ball joint's rotation angle ``theta = 2 atan2(|xyz|, |w|)``
    of its quaternion (MuJoCo's ball limit, ``range[1]``; :mod:`pfaff.constraints.ball_angle`)
    held below ``angle`` as a joint limit is, its one bound the upper (``lower`` is
    ``-inf``); the held row a :class:`~pfaff.constraints.ball_angle.BallAngle`.

    Parameters
    ----------
    joint : the ball joint's name.
    angle : the largest rotation angle [rad], in (0, pi).
    restitution : Newton's coefficient ``e`` in [0, 1] of the angle's rate.
    """

    joint: str
    angle: float
    restitution: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 < float(self.angle) < np.pi:
            raise ValueError(
                f"ball limit of {self.joint!r}: angle = {self.angle!r}, valid: (0, pi)"
            )
        check_limit(f"ball limit of {self.joint!r}", -np.inf, self.angle, self.restitution)

    @property
    def lower(self) -> float:
        """No lower bound: ``-inf``."""
        return -np.inf

    @property
    def upper(self) -> float:
        """The largest angle [rad]."""
        return float(self.angle)


class Bound:
    """A limit bound to a mechanism: its coordinates (``iq``, ``iv``: one index each
    for a joint limit and a ball's first, arrays for a tendon's with its coefficients
    ``c``; ``c`` None for the others; ``ball`` True for a ball joint's)."""

    def __init__(self, lim, mech) -> None:
        self.lim, self.ball, self.nv = lim, isinstance(lim, BallLimit), mech.nv
        if self.ball:
            self.iq, self.iv = ball_coordinates(mech, lim.joint)
            self.c = None
            return
        if isinstance(lim, TendonLimit):
            self.iq, self.iv = tendon_coordinates(mech, lim.joints, f"tendon limit {lim.name!r}")
            self.c = np.asarray(lim.coefficients, dtype=float)
            return
        self.iq, self.iv, nq = joint_coordinate(mech, lim.joint)
        self.c = None
        if nq != 1:
            raise ValueError(
                f"joint limit of {lim.joint!r}: the joint has {nq} coordinates; limits are "
                "for one-dof hinge and slide joints (not continuous ones)"
            )

    def value(self, q: np.ndarray) -> float:
        """The bounded value at ``q``: the joint's coordinate, the tendon's length or the
        ball's angle."""
        if self.ball:
            return ball_angle(q[self.iq : self.iq + 4])[0]
        return float(q[self.iq]) if self.c is None else float(self.c @ q[self.iq])

    def rate(self, q: np.ndarray, v: np.ndarray) -> float:
        """Its rate at ``(q, v)``."""
        if self.ball:
            return float(ball_angle(q[self.iq : self.iq + 4])[1] @ v[self.iv : self.iv + 3])
        return float(v[self.iv]) if self.c is None else float(self.c @ v[self.iv])

    def row(self, q: np.ndarray) -> int | np.ndarray:
        """The row of the rate at ``q``: the joint's v index, or the (nv,) row of the
        tendon's coefficients or of the ball's axis."""
        if self.c is None and not self.ball:
            return self.iv
        r = np.zeros(self.nv)
        if self.ball:
            r[self.iv : self.iv + 3] = ball_angle(q[self.iq : self.iq + 4])[1]
        else:
            np.add.at(r, self.iv, self.c)
        return r

    def on_bound(self, q: np.ndarray, x: float) -> np.ndarray:
        """``q`` moved onto ``value = x``: the joint's coordinate set, the tendon's
        coordinates moved along their coefficients (the nearest such q), the ball's
        rotation turned to ``x`` about its axis."""
        q = q.copy()
        if self.ball:
            quat = q[self.iq : self.iq + 4]
            sign = 1.0 if quat[3] >= 0.0 else -1.0
            u = ball_angle(quat)[1]
            q[self.iq : self.iq + 4] = sign * np.r_[u * np.sin(0.5 * x), np.cos(0.5 * x)]
            return q
        if self.c is None:
            q[self.iq] = x
            return q
        a = np.zeros(len(q))
        np.add.at(a, self.iq, self.c)
        np.add.at(q, self.iq, self.c * ((x - self.value(q)) / float(a @ a)))
        return q

    def lock(self, x: float, name: str):
        """The held row at ``value = x``: a LockedJoint, a CoordinateLock or a BallAngle."""
        if self.ball:
            return BallAngle(self.lim.joint, x, name)
        if self.c is None:
            return LockedJoint(self.lim.joint, x, name)
        return CoordinateLock(self.lim.joints, self.lim.coefficients, x, name)

    def add_to(self, core, sys_, rest_speed: float) -> None:
        """Add the limit to the core system ``sys_`` (``pfaff._core.add_limit``)."""
        lim = self.lim
        args = (float(lim.lower), float(lim.upper), float(lim.restitution), float(rest_speed))
        if self.c is None:
            core.add_limit(sys_, int(self.iq), int(self.iv), *args, ball=self.ball)
            return
        core.add_limit(sys_, -1, -1, *args, self.iq, self.iv, self.c)
