"""Composed models: several robots of example-robot-data and free bodies in one tree.

:func:`dual_arm_with_box` builds the plant of a two-arm grasp: two copies of a
robot (joint and frame names prefixed ``arm1_`` / ``arm2_``, fingers locked as
:func:`~pfaff.mechanism.load_robot` does) appended to an empty world model with
``pin.appendModel`` at chosen base placements, and a box as a free-flyer joint
(``q = (arm1 (7), arm2 (7), box (x, y, z, quaternion x, y, z, w))``, ``v`` of
the box in its own frame, as Pinocchio's free flyer).

Frames: ``arm<i>_<robot frame>`` (e.g. ``arm1_panda_hand_tcp``), ``box`` (the
box's centre, axes along its edges) and ``box_grasp<i>`` (a point on the box
with the orientation the hand frame of arm i has when it holds the box).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import ModelError
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism
from pfaff.mechanism.robots import load_robot


def prefixed(model: pin.Model, prefix: str) -> pin.Model:
    """A copy of ``model`` with every joint and frame name prefixed (unique when appended)."""
    m = model.copy()
    for i in range(1, m.njoints):
        m.names[i] = prefix + m.names[i]
    for i in range(len(m.frames)):
        f = m.frames[i]
        if f.name != "universe":
            f.name = prefix + f.name
        m.frames[i] = f
    return m


@dataclass
class DualArmBox:
    """The composed plant and what a controller or a drawing needs about it.

    Attributes
    ----------
    mech : the mechanism (nq = 2 n_arm + 7, nv = 2 n_arm + 6).
    arm_q, arm_v : index arrays of each arm's coordinates in q and v.
    box_q, box_v : slices of the box's free-flyer coordinates in q and v.
    bases : each arm's base placement (4 x 4 homogeneous, world).
    tips : frame names of the arms' hand points (``arm<i>_<tool_frame>``).
    grasps : frame names ``box_grasp<i>`` on the box.
    size, mass : box edge lengths (x, y, z) [m] and mass [kg].
    """

    mech: PinocchioMechanism
    arm_q: list[np.ndarray]
    arm_v: list[np.ndarray]
    box_q: slice
    box_v: slice
    bases: list[np.ndarray]
    tips: list[str]
    grasps: list[str]
    size: np.ndarray
    mass: float


def dual_arm_with_box(
    bases: Sequence[pin.SE3],
    grasp_points: Sequence[Sequence[float]],
    grasp_rotations: Sequence[np.ndarray],
    size: Sequence[float] = (0.2, 0.1, 0.1),
    mass: float = 1.0,
    robot: str = "panda",
    tool_frame: str = "panda_hand_tcp",
    gravity: Sequence[float] = (0.0, 0.0, -9.81),
    name: str = "two arms and a box",
) -> DualArmBox:
    """Two copies of ``robot`` at ``bases`` and a free box (uniform density).

    Parameters
    ----------
    bases : placement of each arm's base in the world (``pin.SE3``).
    grasp_points : the grasp point C_i of arm i in the box frame [m].
    grasp_rotations : orientation (3 x 3) in the box frame of the hand frame
        ``tool_frame`` of arm i when it holds the box (the weld's target).
    size : box edge lengths along its x, y, z axes [m]; mass [kg].
    tool_frame : the robot's frame at the grasp point (Panda: between the
        fingertips, 0.1034 m ahead of the flange).
    """
    if len(bases) != 2 or len(grasp_points) != 2 or len(grasp_rotations) != 2:
        raise ModelError("dual_arm_with_box needs two bases, grasp points and grasp rotations")
    size = np.asarray(size, dtype=float)
    if size.shape != (3,) or not np.all(size > 0) or not mass > 0:
        raise ModelError(f"box size must be 3 positive lengths and mass > 0; got {size}, {mass}")
    arm = load_robot(robot).model
    if not arm.existFrame(tool_frame):
        raise ModelError(f"{robot} has no frame {tool_frame!r}")
    world = pin.Model()
    for i, base in enumerate(bases):
        world = pin.appendModel(world, prefixed(arm, f"arm{i + 1}_"), 0, base)
    jid = world.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "box")
    world.appendBodyToJoint(jid, pin.Inertia.FromBox(mass, *size), pin.SE3.Identity())
    parent = world.addFrame(pin.Frame("box", jid, pin.SE3.Identity(), pin.FrameType.BODY))
    for i, (c, R) in enumerate(zip(grasp_points, grasp_rotations)):
        R = np.asarray(R, dtype=float)
        if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
            raise ModelError(f"grasp rotation {i + 1} is not a rotation matrix")
        place = pin.SE3(R, np.asarray(c, dtype=float))
        world.addFrame(pin.Frame(f"box_grasp{i + 1}", jid, parent, place, pin.FrameType.OP_FRAME))
    world.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
    n = arm.nq
    box_jid = world.getJointId("box")
    iq, iv = world.joints[box_jid].idx_q, world.joints[box_jid].idx_v
    return DualArmBox(
        mech=PinocchioMechanism(world, name=name),
        arm_q=[np.arange(i * n, (i + 1) * n) for i in range(2)],
        arm_v=[np.arange(i * n, (i + 1) * n) for i in range(2)],
        box_q=slice(iq, iq + 7),
        box_v=slice(iv, iv + 6),
        bases=[b.homogeneous for b in bases],
        tips=[f"arm{i + 1}_{tool_frame}" for i in range(2)],
        grasps=[f"box_grasp{i + 1}" for i in range(2)],
        size=size,
        mass=float(mass),
    )
