"""Plain data of an MJCF model: joint dimensions, joints, equality elements, passive
elements, and :class:`MjcfModel` (the Pinocchio model with MuJoCo's coordinates)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import ModelError

JOINT_DIMS = {"free": (7, 6), "ball": (4, 3), "hinge": (1, 1), "slide": (1, 1)}


@dataclass
class MjJoint:
    """One MuJoCo joint: its type, its Pinocchio name and its place in qpos and q."""

    name: str
    type: str
    qpos_adr: int
    idx_q: int
    idx_v: int
    ref: float = 0.0


@dataclass
class Equality:
    """One ``<equality>`` element, as data (see :mod:`pfaff.constraints.mjcf_equality`).

    ``frame1``/``frame2`` are frame names (``None``: the world); ``point1``,
    ``point2`` local points; ``R_rel`` the orientation of frame 2 seen from
    frame 1 when welded; ``joint1``/``joint2`` Pinocchio joint names.
    """

    kind: str
    name: str
    element: str
    rows: int
    frame1: str | None = None
    frame2: str | None = None
    point1: np.ndarray | None = None
    point2: np.ndarray | None = None
    R_rel: np.ndarray | None = None
    torquescale: float = 1.0
    joint1: str | None = None
    joint2: str | None = None
    polycoef: tuple[float, ...] = (0.0, 1.0, 0.0, 0.0, 0.0)


@dataclass
class Passive:
    """A joint's passive force, as MuJoCo's ``mj_passive`` applies it: on a one-dof
    joint ``Q = -stiffness (q - rest) - damping v`` [N m or N], ``rest`` in pfaff's ``q``
    (MuJoCo's ``springref`` minus the joint's ``ref``); on a ball or free joint a
    :class:`~pfaff.simulate.forces_ball.BallSpring` about ``ref`` and a
    :class:`~pfaff.simulate.forces_ball.DofDamper` of ``dof_damping``."""

    joint: str
    stiffness: float = 0.0
    rest: float = 0.0
    damping: float = 0.0
    #: a ball or free joint's spring reference in pfaff's q order (4 or 7 values; empty
    #: for a one-dof joint) and its per-dof damping (3 or 6 values)
    ref: tuple[float, ...] = ()
    dof_damping: tuple[float, ...] = ()


@dataclass
class FixedTendon:
    """A fixed tendon's spring, damper and limit, as MuJoCo applies them
    (:func:`pfaff.mechanism.mjcf_tendons.fixed_tendons`): its length in pfaff's ``q`` is
    ``sum_j coefs_j q_j`` (MuJoCo's is that plus ``offset``); ``springlength`` the dead
    band ``(lo, hi)`` of the spring and ``limit`` ``(lower, upper, restitution)`` (None:
    not limited), both in pfaff's ``q`` (MuJoCo's minus ``offset``)."""

    name: str
    joints: tuple[str, ...]
    coefs: tuple[float, ...]
    offset: float = 0.0
    stiffness: float = 0.0
    damping: float = 0.0
    springlength: tuple[float, float] = (0.0, 0.0)
    limit: tuple[float, float, float] | None = None


@dataclass
class MjcfModel:
    """What an MJCF file gives pfaff.

    Attributes
    ----------
    model : the Pinocchio model (gravity from ``<option gravity>``, armature in
        ``model.armature``).
    joints : MuJoCo joints in qpos order.
    nq_mj, nv_mj : MuJoCo's sizes (equal to the model's; checked).
    bodies : body names in MuJoCo's order (world excluded).
    q0 : MuJoCo's reference configuration qpos0 in pfaff coordinates.
    keyframes : name -> (q, v) in pfaff coordinates (unnamed: ``key<i>``).
    equalities : the active ``<equality>`` elements.
    geoms : (frame name, type, size (3,), placement 4 x 4 in that frame) for drawing.
    passive : joint springs and dampers (:class:`Passive`).
    actuators : the actuators pfaff models (:class:`pfaff.mechanism.actuators.Actuator`).
    tendons : the fixed tendons with a spring, damper or limit (:class:`FixedTendon`).
    limits : the limited hinge, slide and ball joints (a ball's: lower -inf, upper its
        largest angle ``range[1]``): ``(joint, lower, upper, restitution)``,
        the bounds in pfaff's ``q`` (``jnt_range`` minus the joint's ``ref``), the
        restitution from the joint's ``solref``
        (:func:`pfaff.mechanism.mjcf_compiled.restitution`).
    warnings : what was read but not modelled (limits, actuators, friction loss, ...).
    """

    model: pin.Model
    joints: list[MjJoint]
    nq_mj: int
    nv_mj: int
    bodies: list[str]
    q0: np.ndarray
    keyframes: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    equalities: list[Equality] = field(default_factory=list)
    geoms: list[tuple[str, str, np.ndarray, np.ndarray]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    body_frames: dict[str, str] = field(default_factory=dict)
    site_frames: dict[str, str] = field(default_factory=dict)
    passive: list[Passive] = field(default_factory=list)
    actuators: list = field(default_factory=list)  # pfaff.mechanism.actuators.Actuator
    #: hinge and slide joints' limits: (joint, lower, upper, restitution), bounds in q
    limits: list[tuple[str, float, float, float]] = field(default_factory=list)
    tendons: list[FixedTendon] = field(default_factory=list)

    def qpos_to_q(self, qpos: np.ndarray) -> np.ndarray:
        """MuJoCo ``qpos`` -> pfaff ``q`` (see :mod:`pfaff.mechanism.mjcf`)."""
        qpos = np.asarray(qpos, dtype=float)
        if qpos.shape != (self.nq_mj,):
            raise ModelError(f"qpos has shape {qpos.shape}, expected ({self.nq_mj},)")
        q = np.empty(self.model.nq)
        for j in self.joints:
            a, i = j.qpos_adr, j.idx_q
            if j.type == "free":
                q[i : i + 3], q[i + 3 : i + 6], q[i + 6] = (
                    qpos[a : a + 3],
                    qpos[a + 4 : a + 7],
                    qpos[a + 3],
                )
            elif j.type == "ball":
                q[i : i + 3], q[i + 3] = qpos[a + 1 : a + 4], qpos[a]
            else:
                q[i] = qpos[a] - j.ref
        return q

    def q_to_qpos(self, q: np.ndarray) -> np.ndarray:
        """pfaff ``q`` -> MuJoCo ``qpos`` (inverse of :meth:`qpos_to_q`)."""
        q = np.asarray(q, dtype=float)
        qpos = np.empty(self.nq_mj)
        for j in self.joints:
            a, i = j.qpos_adr, j.idx_q
            if j.type == "free":
                qpos[a : a + 3], qpos[a + 3], qpos[a + 4 : a + 7] = (
                    q[i : i + 3],
                    q[i + 6],
                    q[i + 3 : i + 6],
                )
            elif j.type == "ball":
                qpos[a], qpos[a + 1 : a + 4] = q[i + 3], q[i : i + 3]
            else:
                qpos[a] = q[i] + j.ref
        return qpos

    def qvel_to_v(self, q: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """MuJoCo ``qvel`` -> pfaff ``v`` at ``q`` (free joints: linear part in the body)."""
        v = np.asarray(qvel, dtype=float).copy()
        if v.shape != (self.nv_mj,):
            raise ModelError(f"qvel has shape {v.shape}, expected ({self.nv_mj},)")
        for j in self.joints:
            if j.type == "free":
                R = pin.Quaternion(*np.roll(q[j.idx_q + 3 : j.idx_q + 7], 1)).matrix()
                v[j.idx_v : j.idx_v + 3] = R.T @ v[j.idx_v : j.idx_v + 3]
        return v

    def v_to_qvel(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """pfaff ``v`` -> MuJoCo ``qvel`` at ``q``."""
        qvel = np.asarray(v, dtype=float).copy()
        for j in self.joints:
            if j.type == "free":
                R = pin.Quaternion(*np.roll(q[j.idx_q + 3 : j.idx_q + 7], 1)).matrix()
                qvel[j.idx_v : j.idx_v + 3] = R @ qvel[j.idx_v : j.idx_v + 3]
        return qvel
