"""Passive forces of ball and free joints, as MuJoCo's ``mj_passive`` applies them.

A ball joint's spring pulls its rotation towards the spring reference ``q_ref``
(MuJoCo's ``qpos_spring``) along the rotation vector of ``q_ref^-1 q``
(``mju_subQuat``): ``Q_w = -k log(q_ref^-1 q)``, in the body frame, which is where
Pinocchio's and MuJoCo's angular velocities of a ball joint both live. A free joint's
spring adds ``-k (p - p_ref)`` on its translation; MuJoCo's translational velocity is in
the world frame, Pinocchio's in the body frame, so that force enters as ``R^T`` of it
(the same power). ``V = k (|log(q_ref^-1 q)|^2 + |p - p_ref|^2) / 2``.

Damping is per dof: ``Q = -d_i v_i`` on the rotation; a free joint's translation is
damped in MuJoCo's world-frame coordinates, ``Q_p = -R^T D R v_p`` here.

Quaternions are Pinocchio's ``(x, y, z, w)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from pfaff.lowering import lowers
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot
from pfaff.simulate.force_base import ForceElement, finite

__all__ = ["BallSpring", "DofDamper", "sub_quat"]


def sub_quat(qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """MuJoCo's ``mju_subQuat``: the rotation vector (3,) of ``qb^-1 qa``, its angle
    wrapped into ``(-pi, pi]`` (quaternions ``(x, y, z, w)``, unit)."""
    bx, by, bz, bw = -qb[0], -qb[1], -qb[2], qb[3]  # qb^-1
    ax, ay, az, aw = qa
    w = bw * aw - bx * ax - by * ay - bz * az
    v = np.array(
        [
            bw * ax + bx * aw + by * az - bz * ay,
            bw * ay - bx * az + by * aw + bz * ax,
            bw * az + bx * ay - by * ax + bz * aw,
        ]
    )
    s = float(np.linalg.norm(v))
    if s == 0.0:
        return np.zeros(3)
    angle = 2.0 * np.arctan2(s, w)
    if angle > np.pi:
        angle -= 2.0 * np.pi
    return v * (angle / s)


def quat_rotation(q: np.ndarray) -> np.ndarray:
    """The rotation matrix of the quaternion ``q = (x, y, z, w)`` (normalised)."""
    x, y, z, w = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return pin.Quaternion(w, x, y, z).matrix()


class _BallJoint(ForceElement):
    """An element on one ball (nq 4, nv 3) or free (nq 7, nv 6) joint, by name: which of
    the two its parameters are for (``free``), checked against the joint when bound."""

    joint: str
    free: bool
    #: what the parameters hold, for the message of a joint of the other kind
    sizes: str = ""

    def bind(self, mechanism: Mechanism) -> None:
        model = getattr(mechanism, "model", None)
        joint = self.joint
        if model is None or not isinstance(joint, str) or not model.existJointName(joint):
            names = [] if model is None else [str(n) for n in model.names[1:]]
            raise ModelError(f"joint {joint!r} is not a joint of {mechanism.name}; valid: {names}")
        jm = model.joints[model.getJointId(joint)]
        if (jm.nq, jm.nv) not in ((4, 3), (7, 6)):
            raise ModelError(
                f"joint {joint!r} is not a ball or free joint (nq {jm.nq}, nv {jm.nv}); "
                "JointSpring and JointDamper take one-dof joints"
            )
        if (jm.nq == 7) != self.free:
            kind = "a free" if jm.nq == 7 else "a ball"
            raise ModelError(f"{self.name}: {self.sizes}, and {joint!r} is {kind} joint")
        self.iq, self.iv = int(jm.idx_q), int(jm.idx_v)


class BallSpring(_BallJoint):
    """A ball or free joint's spring about its reference configuration ``ref``.

    Parameters
    ----------
    joint : the joint's name.
    stiffness : k [N m/rad, and N/m on a free joint's translation].
    ref : the joint's reference q (4: a quaternion ``(x, y, z, w)``; 7 on a free joint:
        position, then the quaternion): MuJoCo's ``qpos_spring`` in pfaff's order.
    name : a label for reports and messages.
    """

    conservative = True

    def __init__(self, joint: str, stiffness: float, ref: Sequence[float], name=None) -> None:
        self.joint = joint
        self.k = finite(stiffness, "ball joint stiffness [N m/rad]")
        self.ref = np.asarray(ref, dtype=float).reshape(-1)
        if self.ref.shape not in ((4,), (7,)) or not np.all(np.isfinite(self.ref)):
            raise ModelError(f"ball spring {joint!r}: ref must be 4 or 7 finite numbers")
        self.iq = self.iv = None
        self.free = self.ref.shape == (7,)
        self.name = name or f"ball spring {joint}"
        self.sizes = f"ref has {self.ref.size} values (4: a ball joint, 7: a free one)"

    def _parts(self, q: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """``(p - p_ref or None, log(q_ref^-1 q))`` at the joint's coordinates."""
        qj = q[self.iq : self.iq + self.ref.size]
        if self.free:
            return qj[:3] - self.ref[:3], sub_quat(qj[3:], self.ref[3:])
        return None, sub_quat(qj, self.ref)

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        dp, w = self._parts(snap.q)
        i = self.iv
        if dp is not None:
            R = quat_rotation(snap.q[self.iq + 3 : self.iq + 7])
            Q[i : i + 3] = -self.k * (R.T @ dp)
            i += 3
        Q[i : i + 3] = -self.k * w
        return Q

    def potential(self, snap: Snapshot) -> float:
        dp, w = self._parts(snap.q)
        x2 = float(w @ w) + (0.0 if dp is None else float(dp @ dp))
        return 0.5 * self.k * x2


class DofDamper(_BallJoint):
    """A ball or free joint's damping, one coefficient per dof (MuJoCo's
    ``dof_damping``).

    Parameters
    ----------
    joint : the joint's name.
    damping : 3 (ball) or 6 (free: translation, then rotation) coefficients
        [N s/m, N m s/rad], each >= 0.
    name : a label for reports and messages.
    """

    def __init__(self, joint: str, damping: Sequence[float], name=None) -> None:
        self.joint = joint
        self.d = np.asarray(damping, dtype=float).reshape(-1)
        if self.d.shape not in ((3,), (6,)) or not np.all(np.isfinite(self.d) & (self.d >= 0)):
            raise ModelError(
                f"dof damper {joint!r}: damping must be 3 (ball) or 6 (free) finite numbers "
                f">= 0, got {damping!r}"
            )
        self.iq = self.iv = None
        self.free = self.d.shape == (6,)
        self.name = name or f"dof damper {joint}"
        self.sizes = f"{self.d.size} damping values (3: a ball joint, 6: a free one)"

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        Q = np.zeros(snap.v.shape[0])
        n, i = self.d.size, self.iv
        Q[i : i + n] = -self.d * snap.v[i : i + n]
        if self.free:  # MuJoCo damps the world-frame translational velocity
            R = quat_rotation(snap.q[self.iq + 3 : self.iq + 7])
            Q[i : i + 3] = -(R.T @ (self.d[:3] * (R @ snap.v[i : i + 3])))
        return Q


# -- lowerings to the compiled core (pfaff.lowering; src/cpp/forces/<name>.cpp) ------------


@lowers(BallSpring, category="force")
def _lower_ball_spring(e: BallSpring, into):
    s = into.force_spec("BallSpring")
    s.iq, s.iv, s.free, s.k = int(e.iq), int(e.iv), bool(e.free), e.k
    s.ref = [float(x) for x in e.ref]
    return s


@lowers(DofDamper, category="force")
def _lower_dof_damper(e: DofDamper, into):
    s = into.force_spec("DofDamper")
    s.iq, s.iv, s.free = int(e.iq), int(e.iv), bool(e.free)
    s.coefs = [float(x) for x in e.d]
    return s
