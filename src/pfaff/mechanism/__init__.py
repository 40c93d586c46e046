"""Unconstrained multibody dynamics: M(q), h(q, v), frames, Jacobians, J'v."""

from pfaff.mechanism.base import FrameState, Mechanism, ModelError, Snapshot
from pfaff.mechanism.builders import (
    ModelBuilder,
    PlanarChain,
    PlanarLink,
    planar_chain,
    planar_chains,
    planar_particle,
)
from pfaff.mechanism.closed_form import YZ_TABLE1, SliderCrankChain, YZArm, YZLink
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism, from_mjcf, from_urdf
from pfaff.mechanism.robots import load_robot, named_configuration, robot_urdf

__all__ = [
    "FrameState",
    "Mechanism",
    "ModelBuilder",
    "ModelError",
    "PinocchioMechanism",
    "PlanarChain",
    "PlanarLink",
    "SliderCrankChain",
    "Snapshot",
    "YZArm",
    "YZLink",
    "YZ_TABLE1",
    "from_mjcf",
    "from_urdf",
    "load_robot",
    "named_configuration",
    "planar_chain",
    "planar_chains",
    "planar_particle",
    "robot_urdf",
]
