"""The Pinocchio model of a compiled ``mujoco.MjModel``, built from its arrays.

MuJoCo's compiler has already resolved everything the XML can say: ``<include>``,
``<frame>``, ``<replicate>``, default classes, orientations in any notation, the
inertias of geoms and meshes (``body_mass``, ``body_inertia``, ``body_ipos``,
``body_iquat``), ``autolimits``, and the equalities' anchors and relative poses at
qpos0 (``eq_data``). This module reads those arrays only:

- bodies in MuJoCo's order (parents first), each ``body_pos``/``body_quat`` in its
  parent; a body's joints become a chain of Pinocchio joints applied in MuJoCo's
  order about axes fixed in the body (``jnt_axis``) through ``jnt_pos``;
- hinge and slide joints read ``q = qpos - qpos0`` (MuJoCo's own joint zero, its
  ``ref``), ball and free joints a quaternion (scalar last in Pinocchio);
- ``dof_armature`` is Pinocchio's ``model.armature`` (added to M's diagonal by CRBA);
- gravity is ``opt.gravity`` (zero when the file disables gravity).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import ModelError, frame_ids, unit_quaternion
from pfaff.mechanism.mjcf_types import MjcfModel, MjJoint

__all__ = ["build_model", "name_of", "quat_matrix"]

_TYPES = {0: "free", 1: "ball", 2: "slide", 3: "hinge"}  # mjtJoint
#: geom types drawn as boxes around them (mjtGeom; a mesh by its bounding box)
_DRAWN = {2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box", 7: "mesh"}


def name_of(m: mujoco.MjModel, obj: mujoco.mjtObj, i: int) -> str:
    """The name of MuJoCo object ``i`` ("" when unnamed)."""
    return mujoco.mj_id2name(m, obj, i) or ""


def quat_matrix(wxyz: np.ndarray) -> np.ndarray:
    """Rotation matrix of MuJoCo's (w, x, y, z) quaternion."""
    w, x, y, z = np.asarray(wxyz, dtype=float) / np.linalg.norm(wxyz)
    return pin.Quaternion(w, x, y, z).matrix()


def _se3(pos: np.ndarray, wxyz: np.ndarray) -> pin.SE3:
    return pin.SE3(quat_matrix(wxyz), np.array(pos, dtype=float))


def _joint(axis: np.ndarray, kind: str) -> pin.JointModel:
    """A revolute ("R") or prismatic ("P") joint about the unit ``axis``: Pinocchio's
    axis-specialised joint when the axis is a positive coordinate axis (the same motion
    at a lower cost), else the unaligned joint."""
    for i, c in enumerate("XYZ"):
        if axis[i] == 1.0:
            return getattr(pin, f"JointModel{kind}{c}")()
    unaligned = {"R": pin.JointModelRevoluteUnaligned, "P": pin.JointModelPrismaticUnaligned}
    return unaligned[kind](axis)


def build_model(m: mujoco.MjModel, path: str, warnings: list[str]) -> MjcfModel:
    """The Pinocchio model, frames, geoms, q0 and keyframes of the compiled model ``m``.

    Equalities and passive elements are read by :mod:`pfaff.mechanism.mjcf`.
    """
    model = pin.Model()
    model.name = name_of(m, mujoco.mjtObj.mjOBJ_MODEL, 0) or "mjcf"
    joints: list[MjJoint] = []
    bodies: list[str] = []
    body_jid = np.zeros(m.nbody, dtype=int)  # Pinocchio joint carrying each body
    body_cur = [pin.SE3.Identity() for _ in range(m.nbody)]  # body frame in that joint
    body_frames: dict[str, str] = {}
    for b in range(1, m.nbody):
        name = name_of(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        if name in body_frames:
            raise ModelError(f"MJCF file {path!r}: duplicate body name {name!r}")
        bodies.append(name)
        parent = int(m.body_parentid[b])
        jid = int(body_jid[parent])
        cur = body_cur[parent] * _se3(m.body_pos[b], m.body_quat[b])
        adr, num = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        for j in range(adr, adr + num):
            jtype = _TYPES.get(int(m.jnt_type[j]))
            jname = name_of(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"{name}_joint{j - adr}"
            if jtype is None:
                raise ModelError(f"MJCF file {path!r}: joint {jname!r} of unknown type")
            if model.existJointName(jname):
                raise ModelError(f"MJCF file {path!r}: duplicate joint name {jname!r}")
            jp = np.array(m.jnt_pos[j], dtype=float)
            if jtype == "free":
                if parent != 0 or num > 1:
                    raise ModelError(
                        f"MJCF file {path!r}: free joint {jname!r} must be the only joint "
                        "of a child of world (pfaff's floating base)"
                    )
                jm, jpl, cur = pin.JointModelFreeFlyer(), pin.SE3.Identity(), pin.SE3.Identity()
            elif jtype == "slide":
                jm, jpl, cur = _joint(np.array(m.jnt_axis[j]), "P"), cur, pin.SE3.Identity()
            else:
                kind = _joint(np.array(m.jnt_axis[j]), "R") if jtype == "hinge" else None
                jm = kind if kind is not None else pin.JointModelSpherical()
                jpl, cur = cur * pin.SE3(np.eye(3), jp), pin.SE3(np.eye(3), -jp)
            jid = model.addJoint(jid, jm, jpl, jname)
            jmodel = model.joints[jid]
            qadr = int(m.jnt_qposadr[j])
            ref = float(m.qpos0[qadr]) if jtype in ("hinge", "slide") else 0.0
            joints.append(MjJoint(jname, jtype, qadr, jmodel.idx_q, jmodel.idx_v, ref))
            model.armature[jmodel.idx_v : jmodel.idx_v + jmodel.nv] = m.dof_armature[
                m.jnt_dofadr[j] : m.jnt_dofadr[j] + jmodel.nv
            ]
        body_jid[b], body_cur[b] = jid, cur
        model.addFrame(pin.Frame(name, jid, 0, cur, pin.FrameType.BODY), False)
        body_frames[name] = name
        mass = float(m.body_mass[b])
        if jid != 0 and mass > 0:
            Ri = quat_matrix(m.body_iquat[b])
            Ic = Ri @ np.diag(m.body_inertia[b]) @ Ri.T
            model.appendBodyToJoint(jid, pin.Inertia(mass, np.array(m.body_ipos[b]), Ic), cur)
    site_frames = _sites(m, model, body_jid, body_cur)
    _check(m, model, joints, bodies, path)
    g = np.array(m.opt.gravity, dtype=float)
    if m.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY):
        g = np.zeros(3)
    model.gravity = pin.Motion(g, np.zeros(3))
    out = MjcfModel(
        model,
        joints,
        m.nq,
        m.nv,
        bodies,
        np.zeros(model.nq),
        warnings=warnings,
        body_frames=body_frames,
        site_frames=site_frames,
    )
    out.q0 = out.qpos_to_q(m.qpos0)
    out.geoms = _geoms(m, bodies)
    out.keyframes = _keyframes(m, out)
    return out


def _sites(m: mujoco.MjModel, model: pin.Model, body_jid, body_cur) -> dict[str, str]:
    """Each named site as an OP_FRAME (``site:<name>`` when a body has its name)."""
    out = {}
    for s in range(m.nsite):
        name = name_of(m, mujoco.mjtObj.mjOBJ_SITE, s)
        if not name:
            continue
        b = int(m.site_bodyid[s])
        fname = name if not model.existFrame(name) else f"site:{name}"
        pl = body_cur[b] * _se3(m.site_pos[s], m.site_quat[s])
        model.addFrame(pin.Frame(fname, int(body_jid[b]), 0, pl, pin.FrameType.OP_FRAME), False)
        out[name] = fname
    return out


def _check(m: mujoco.MjModel, model: pin.Model, joints, bodies, path: str) -> None:
    """Sizes as MuJoCo's, coordinates in MuJoCo's order, and every moving body with a
    mass > 0 and a positive-definite inertia."""
    got = (len(bodies), model.nq, model.nv)
    if got != (m.nbody - 1, m.nq, m.nv):
        raise ModelError(
            f"MJCF file {path!r}: built {got[0]} bodies, nq {got[1]}, nv {got[2]}; MuJoCo "
            f"compiled {m.nbody - 1} bodies, nq {m.nq}, nv {m.nv}"
        )
    ids = frame_ids(model)
    for name in bodies:
        jid = int(model.frames[ids[name]].parentJoint)
        if jid == 0:
            continue
        Y = model.inertias[jid]
        ev = np.linalg.eigvalsh(0.5 * (Y.inertia + Y.inertia.T))
        if not (np.isfinite(Y.mass) and Y.mass > 0 and np.all(np.isfinite(ev)) and ev[0] > 0):
            raise ModelError(
                f"MJCF file {path!r}: body {name!r} moves (joint {model.names[jid]!r}) but has "
                f"mass {float(Y.mass):.3g} kg and inertia eigenvalues "
                f"{', '.join(f'{e:.3g}' for e in ev)} kg m^2; valid: mass > 0 and a "
                "positive-definite inertia (geoms with size and density, or <inertial>)"
            )


def _geoms(m: mujoco.MjModel, bodies: list[str]) -> list:
    """``(frame, type, size (3,), placement in the frame)`` of the drawn geoms; a mesh
    as the box of its bounding box (``geom_aabb``)."""
    out = []
    for g in range(m.ngeom):
        gtype = _DRAWN.get(int(m.geom_type[g]))
        if gtype is None:
            continue
        b = int(m.geom_bodyid[g])
        frame = "universe" if b == 0 else bodies[b - 1]
        T = _se3(m.geom_pos[g], m.geom_quat[g])
        size = np.array(m.geom_size[g], dtype=float)
        if gtype == "mesh":
            aabb = np.array(m.geom_aabb[g], dtype=float)
            T = T * pin.SE3(np.eye(3), aabb[:3])
            gtype, size = "box", aabb[3:].copy()
        out.append((frame, gtype, size, T.homogeneous))
    return out


def _keyframes(m: mujoco.MjModel, mj: MjcfModel) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """MuJoCo's keyframes in pfaff coordinates; quaternions normalised (MuJoCo's rule),
    said in warnings."""
    out = {}
    for k in range(m.nkey):
        name = name_of(m, mujoco.mjtObj.mjOBJ_KEY, k) or f"key{k}"
        q = mj.qpos_to_q(np.array(m.key_qpos[k]))
        for j in mj.joints:
            if j.type in ("ball", "free"):
                i = j.idx_q + (3 if j.type == "free" else 0)
                what = f"keyframe {name!r}, joint {j.name!r}"
                q[i : i + 4] = unit_quaternion(q[i : i + 4], what, mj.warnings, np.inf)
        out[name] = (q, mj.qvel_to_v(q, np.array(m.key_qvel[k])))
    return out
