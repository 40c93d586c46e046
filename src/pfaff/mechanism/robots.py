"""Real robot models from the PyPI package ``example-robot-data``.

Version 6 installs no Python module: the robots lie in
``<prefix>/cmeel.prefix/share/example-robot-data/robots/`` of the environment,
and meshes resolve with ``<prefix>/cmeel.prefix/share`` as Pinocchio's package
directory.
"""

from __future__ import annotations

import site
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import ModelError
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism, from_urdf

#: robot name -> (URDF path relative to the robots folder, joints locked by default)
ROBOTS = {
    # the 7-joint arm: the two finger joints are locked at their neutral value
    "panda": ("panda_description/urdf/panda.urdf", ("panda_finger_joint1", "panda_finger_joint2")),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", ()),
    "double_pendulum": ("double_pendulum_description/urdf/double_pendulum.urdf", ()),
}

#: robot name -> {configuration name: joint angles of the default (locked) model}
NAMED_CONFIGURATIONS = {
    # the Panda's "ready" posture (franka_ros): tool pointing down in front of the base
    "panda": {"ready": (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)},
}


def named_configuration(robot: str, name: str) -> np.ndarray:
    """A named joint configuration of a robot (a fresh array, for :func:`load_robot`'s model).

    Parameters
    ----------
    robot : one of :data:`ROBOTS` that has entries in :data:`NAMED_CONFIGURATIONS`.
    name : the configuration's name (e.g. ``"ready"``).

    Raises
    ------
    ModelError
        naming the valid robots or configurations.
    """
    table = NAMED_CONFIGURATIONS.get(robot)
    if table is None:
        valid = ", ".join(sorted(NAMED_CONFIGURATIONS))
        raise ModelError(f"robot {robot!r} has no named configurations; robots with some: {valid}")
    if name not in table:
        raise ModelError(
            f"{robot}: unknown configuration {name!r}; valid: {', '.join(sorted(table))}"
        )
    return np.array(table[name], dtype=float)


def _candidate_prefixes() -> list[Path]:
    dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    dirs += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    dirs += sys.path
    seen, out = set(), []
    for d in dirs:
        p = Path(d) / "cmeel.prefix" / "share"
        if p not in seen and (p / "example-robot-data" / "robots").is_dir():
            seen.add(p)
            out.append(p)
    return out


def package_dir() -> Path:
    """The ``share`` folder that holds ``example-robot-data`` (Pinocchio's package dir)."""
    found = _candidate_prefixes()
    if not found:
        raise ModelError(
            "example-robot-data is not installed in this environment "
            "(pip install 'example-robot-data>=6')"
        )
    return found[0]


def robot_urdf(name: str) -> Path:
    """Path of a robot's URDF in example-robot-data (e.g. ``robot_urdf('panda')``)."""
    if name not in ROBOTS:
        raise ModelError(f"unknown robot {name!r}; valid robots: {', '.join(sorted(ROBOTS))}")
    return package_dir() / "example-robot-data" / "robots" / ROBOTS[name][0]


def load_robot(name: str, locked: tuple[str, ...] | None = None) -> PinocchioMechanism:
    """A mechanism for a robot of example-robot-data (fixed base, URDF dynamics).

    Parameters
    ----------
    name : one of :data:`ROBOTS` (e.g. ``"panda"``).
    locked : joints fixed at their neutral value (removed from q); default:
        the robot's own list (the Panda's fingers, leaving the 7-joint arm).
    """
    mech = from_urdf(robot_urdf(name), name=name)
    locked = ROBOTS[name][1] if locked is None else tuple(locked)
    if not locked:
        return mech
    model = mech.model
    ids = []
    for j in locked:
        if not model.existJointName(j):
            raise ModelError(f"{name}: unknown joint {j!r} to lock")
        ids.append(model.getJointId(j))
    reduced = pin.buildReducedModel(model, ids, pin.neutral(model))
    return PinocchioMechanism(reduced, name=name)
