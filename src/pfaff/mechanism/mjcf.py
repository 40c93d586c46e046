"""An MJCF file as pfaff reads it: compiled by MuJoCo's own compiler, built into a
Pinocchio model with its equality section, armature and passive elements.

:func:`read_mjcf` runs ``mujoco.MjModel.from_xml_path`` and reads the compiled arrays
(:mod:`pfaff.mechanism.mjcf_compiled`, :mod:`pfaff.mechanism.mjmodel`), so every file
MuJoCo compiles loads: ``<include>``, ``<frame>``, ``<replicate>``, default classes,
meshes without ``<inertial>`` (MuJoCo computes their inertia), ``autolimits``.

Mapping of MuJoCo's ``qpos`` to pfaff's ``q`` (same order, same nq):

- ``hinge``, ``slide``: ``q = qpos - ref`` (MuJoCo's joint zero is ``ref``, its
  ``qpos0``; in radians after compilation);
- ``ball``: ``qpos = (w, x, y, z)`` -> ``q = (x, y, z, w)`` (Pinocchio's order);
- ``free``: ``qpos = (p, w, x, y, z)`` -> ``q = (p, x, y, z, w)``.

Velocities (``qvel`` -> ``v``) agree except for a free joint, whose linear
velocity MuJoCo gives in the world frame and Pinocchio in the body frame.

A body with several joints becomes a chain of Pinocchio joints (massless
between them), applied in MuJoCo's order about axes fixed in the body. Frames:
each body is a BODY frame named after the body (unnamed bodies ``body<i>``, i =
MuJoCo's body id); each named site an OP_FRAME named after the site
(``site:<name>`` when a body has the same name).

Modelled: kinematics, inertias, gravity, armature (``model.armature``), the
``connect``/``weld``/``joint`` equalities (exactly, as bilateral constraints; joint
polynomials up to MuJoCo's fourth degree), the
stiffness (about ``springref``) and damping of hinge and slide joints (as force
elements, :func:`pfaff.files.model.load_model`). Listed in ``warnings``: joint
limits, actuators, friction loss, tendons, fluid forces, gravcomp, inactive
equalities, passive terms of ball and free joints.
"""

from __future__ import annotations

from pfaff.mechanism.mjcf_compiled import compile_mjcf as read_mjcf
from pfaff.mechanism.mjcf_compiled import from_mjmodel
from pfaff.mechanism.mjcf_types import JOINT_DIMS, Equality, MjcfModel, MjJoint, Passive

__all__ = [
    "JOINT_DIMS",
    "Equality",
    "MjJoint",
    "MjcfModel",
    "Passive",
    "from_mjmodel",
    "read_mjcf",
]
