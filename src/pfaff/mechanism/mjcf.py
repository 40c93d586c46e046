"""A Pinocchio model built from an MJCF file read as data, with its equality section.

Pinocchio's own MJCF importer keeps only the first body tree of some files
and crashes the interpreter on others (``equality_site.xml``), so pfaff reads
the XML itself (``xml.etree``, never executed) and builds the
``pinocchio.Model`` joint by joint: every body tree, world-attached and free.

Mapping of MuJoCo's ``qpos`` to pfaff's ``q`` (same order, same nq):

- ``hinge``, ``slide``: ``q = qpos - ref`` (MuJoCo's joint zero is ``ref``;
  a hinge's ``ref`` is in the compiler's angle unit, degrees by default);
- ``ball``: ``qpos = (w, x, y, z)`` -> ``q = (x, y, z, w)`` (Pinocchio's order);
- ``free``: ``qpos = (p, w, x, y, z)`` -> ``q = (p, x, y, z, w)``.

Velocities (``qvel`` -> ``v``) agree except for a free joint, whose linear
velocity MuJoCo gives in the world frame and Pinocchio in the body frame.

A body with several joints becomes a chain of Pinocchio joints (massless
between them), applied in document order about axes fixed in the body, as
MuJoCo composes them. Frames: each body is a BODY frame named after the body
(unnamed bodies ``body<i>``, i = MuJoCo's body id); each site an OP_FRAME named
after the site (``site:<name>`` when a body has the same name).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import ModelError, unit_quaternion
from pfaff.mechanism.mjcf_build import (
    Builder,
    check_counts,
    check_masses,
    equality_data,
)
from pfaff.mechanism.mjcf_types import JOINT_DIMS, Equality, MjcfModel, MjJoint
from pfaff.mechanism.mjcf_xml import REFUSED, floats

__all__ = ["JOINT_DIMS", "Equality", "MjJoint", "MjcfModel", "read_mjcf"]


def read_mjcf(path: str | Path) -> MjcfModel:
    """Read an MJCF file as data into a Pinocchio model with its equality constraints.

    Raises :class:`ModelError` naming the element for anything pfaff cannot
    represent (meshes without ``<inertial>``, ``<include>``, tendon or flex
    equalities, polynomial joint couplings beyond the linear term).
    """
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"MJCF file {str(p)!r} does not exist")
    try:
        root = ET.parse(p).getroot()
    except ET.ParseError as exc:
        raise ModelError(f"MJCF file {str(p)!r} does not parse: {exc}") from None
    if root.tag != "mujoco":
        raise ModelError(f"MJCF file {str(p)!r}: root element is <{root.tag}>, expected <mujoco>")
    for el in root.iter():
        if el.tag in REFUSED:
            raise ModelError(f"MJCF file {str(p)!r}: <{el.tag}> is not supported by pfaff")
    wb = root.find("worldbody")
    if wb is None:
        raise ModelError(f"MJCF file {str(p)!r} has no <worldbody>")
    b = Builder(root, str(p))
    b.world(wb)
    check_counts(b, str(p))
    check_masses(b, str(p))
    model = b.model
    option = root.find("option")
    g = (
        floats(option, "gravity", 3, (0, 0, -9.81))
        if option is not None
        else np.array([0, 0, -9.81])
    )
    model.gravity = pin.Motion(g, np.zeros(3))
    for key in ("viscosity", "density", "wind"):  # fluid forces: not modelled
        if option is not None and np.any(floats(option, key, None, (0,)) != 0):
            b.warnings.append(f"<option {key}> is ignored (pfaff models no fluid forces)")
    for s, (jid, pl) in b.sites.items():
        fname = s if not model.existFrame(s) else f"site:{s}"
        model.addFrame(pin.Frame(fname, jid, 0, pl, pin.FrameType.OP_FRAME), False)
        b.site_frames[s] = fname
    q0 = np.concatenate(b.q0) if b.q0 else np.zeros(0)
    out = MjcfModel(
        model,
        b.joints,
        b.qpos_adr,
        sum(JOINT_DIMS[j.type][1] for j in b.joints),
        b.bodies,
        q0,
        equalities=equality_data(b, q0),
        warnings=b.warnings,
        body_frames={n: n for n in b.body_frames},
        site_frames=dict(b.site_frames),
    )
    out.geoms = b.geoms
    out.keyframes = _keyframes(root, out)
    return out


def _keyframes(root: ET.Element, mj: MjcfModel) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``<keyframe><key qpos qvel>`` in pfaff coordinates (missing parts: qpos0, zero)."""
    out = {}
    for sec in root.findall("keyframe"):
        for i, key in enumerate(sec.findall("key")):
            name = key.get("name") or f"key{i}"
            try:
                qpos = floats(key, "qpos", mj.nq_mj, mj.q_to_qpos(mj.q0))
                q = mj.qpos_to_q(qpos)
                qvel = floats(key, "qvel", mj.nv_mj, np.zeros(mj.nv_mj))
            except ModelError as exc:
                raise ModelError(f"{exc} (the model has nq {mj.nq_mj}, nv {mj.nv_mj})") from None
            for j in mj.joints:  # MuJoCo's rule: normalised, said in warnings
                if j.type in ("ball", "free"):
                    k = j.idx_q + (3 if j.type == "free" else 0)
                    what = f"keyframe {name!r}, joint {j.name!r}"
                    q[k : k + 4] = unit_quaternion(q[k : k + 4], what, mj.warnings, np.inf)
            out[name] = (q, mj.qvel_to_v(q, qvel))
    return out
