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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import ModelError
from pfaff.mechanism.mjcf_xml import (
    BODY_CHILDREN,
    REFUSED,
    Compiler,
    Defaults,
    floats,
    geom_inertia,
    geom_shape,
    inertial,
    orientation,
    quat_to_matrix,
    where,
)

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
    polycoef: tuple[float, float] = (0.0, 1.0)


@dataclass
class MjcfModel:
    """What an MJCF file gives pfaff.

    Attributes
    ----------
    model : the Pinocchio model (gravity from ``<option gravity>``).
    joints : MuJoCo joints in qpos order.
    nq_mj, nv_mj : MuJoCo's sizes (equal to the model's; checked).
    bodies : body names in MuJoCo's order (world excluded).
    q0 : MuJoCo's reference configuration qpos0 in pfaff coordinates.
    keyframes : name -> (q, v) in pfaff coordinates (unnamed: ``key<i>``).
    equalities : the active ``<equality>`` elements.
    geoms : (frame name, type, size (3,), placement 4 x 4 in that frame) for drawing.
    warnings : what was read but not modelled (damping, springs, inactive equalities).
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

    def qpos_to_q(self, qpos: np.ndarray) -> np.ndarray:
        """MuJoCo ``qpos`` -> pfaff ``q`` (module docstring)."""
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


_IGNORED_JOINT_ATTRS = ("damping", "stiffness", "frictionloss", "armature")


class _Builder:
    def __init__(self, root: ET.Element, path: str) -> None:
        self.root, self.path = root, path
        self.comp = Compiler.read(root)
        self.defaults = Defaults(root)
        self.model = pin.Model()
        self.model.name = root.get("model", Path(path).stem)
        self.joints: list[MjJoint] = []
        self.bodies: list[str] = []
        self.sites: dict[str, tuple[int, pin.SE3]] = {}
        self.body_frames: dict[str, int] = {}
        self.site_frames: dict[str, str] = {}
        self.geoms: list = []
        self.q0: list[np.ndarray] = []
        self.warnings: list[str] = []
        self.qpos_adr = 0

    def err(self, el: ET.Element, msg: str) -> ModelError:
        return ModelError(f"MJCF file {self.path!r}, {where(el)}: {msg}")

    def children(self, el: ET.Element) -> None:
        for c in el:
            if c.tag in REFUSED:
                raise self.err(c, f"<{c.tag}> is not supported by pfaff's MJCF reader")
            if c.tag not in BODY_CHILDREN:
                raise self.err(c, f"unknown element <{c.tag}>; valid: {', '.join(BODY_CHILDREN)}")

    def world(self, wb: ET.Element) -> None:
        self.children(wb)
        for s in wb.findall("site"):
            self.site(s, 0, pin.SE3.Identity(), "main")
        for b in wb.findall("body"):
            self.body(b, 0, pin.SE3.Identity(), "main", top=True)

    def site(self, el: ET.Element, jid: int, cur: pin.SE3, cls: str) -> None:
        a = self.defaults.attrs(el, cls)
        name = el.get("name")
        if name is None:
            return
        local = pin.SE3(orientation(el, self.comp, a), floats(el, "pos", 3, (0, 0, 0), attrs=a))
        self.sites[name] = (jid, cur * local)

    def body(self, el: ET.Element, parent: int, placement: pin.SE3, cls: str, top=False) -> None:
        self.children(el)
        cls = el.get("childclass", cls)
        if cls not in self.defaults.classes:
            raise self.err(el, f"unknown childclass {cls!r}")
        name = el.get("name") or f"body{len(self.bodies) + 1}"
        if name in self.body_frames:
            raise self.err(el, f"duplicate body name {name!r}")
        self.bodies.append(name)
        local = pin.SE3(orientation(el, self.comp), floats(el, "pos", 3, (0, 0, 0)))
        cur = placement * local
        jid = parent
        joints = [j for j in el if j.tag in ("joint", "freejoint")]
        for k, j in enumerate(joints):
            a = {"type": "free"} if j.tag == "freejoint" else self.defaults.attrs(j, cls)
            jtype = a.get("type", "hinge")
            if jtype not in JOINT_DIMS:
                raise self.err(j, f"joint type {jtype!r}; valid: {', '.join(JOINT_DIMS)}")
            jname = j.get("name") or f"{name}_joint{k}"
            if self.model.existJointName(jname):
                raise self.err(j, f"duplicate joint name {jname!r}")
            for key in _IGNORED_JOINT_ATTRS:
                if float(a.get(key, "0").split()[0]) != 0:
                    self.warnings.append(f"joint {jname!r}: {key} is ignored (pfaff: passive)")
            jp = floats(j, "pos", 3, (0, 0, 0), attrs=a)
            ref = 0.0
            if jtype == "free":
                if not top or len(joints) > 1:
                    raise self.err(j, "a free joint must be the only joint of a child of world")
                jm, jpl = pin.JointModelFreeFlyer(), pin.SE3.Identity()
                quat = pin.Quaternion(cur.rotation)
                q0 = np.concatenate([cur.translation, quat.coeffs()])
                cur = pin.SE3.Identity()
            else:
                axis = floats(j, "axis", 3, (0, 0, 1), attrs=a)
                if not np.linalg.norm(axis) > 0:
                    raise self.err(j, "axis has zero length")
                axis = axis / np.linalg.norm(axis)
                if jtype == "hinge":
                    ref = self.comp.angle(float(floats(j, "ref", 1, (0,), attrs=a)[0]))
                    jm, jpl = pin.JointModelRevoluteUnaligned(axis), cur * pin.SE3(np.eye(3), jp)
                    cur = pin.SE3(np.eye(3), -jp)
                elif jtype == "slide":
                    ref = float(floats(j, "ref", 1, (0,), attrs=a)[0])
                    jm, jpl = pin.JointModelPrismaticUnaligned(axis), cur
                    cur = pin.SE3.Identity()
                else:
                    jm, jpl = pin.JointModelSpherical(), cur * pin.SE3(np.eye(3), jp)
                    cur = pin.SE3(np.eye(3), -jp)
                q0 = np.array([0.0, 0, 0, 1]) if jtype == "ball" else np.zeros(1)
            jid = self.model.addJoint(jid, jm, jpl, jname)
            jmodel = self.model.joints[jid]
            self.joints.append(
                MjJoint(jname, jtype, self.qpos_adr, jmodel.idx_q, jmodel.idx_v, ref)
            )
            self.qpos_adr += JOINT_DIMS[jtype][0]
            self.q0.append(q0)
        fid = self.model.addFrame(pin.Frame(name, jid, 0, cur, pin.FrameType.BODY), False)
        self.body_frames[name] = fid
        self.inertia(el, jid, cur, cls, name)
        for s in el.findall("site"):
            self.site(s, jid, cur, cls)
        for c in el.findall("body"):
            self.body(c, jid, cur, cls)

    def inertia(self, el: ET.Element, jid: int, cur: pin.SE3, cls: str, name: str) -> None:
        explicit = el.find("inertial")
        parts = []
        for g in el.findall("geom"):
            a = self.defaults.attrs(g, cls)
            if a.get("type", "sphere") in _DRAWN:
                gtype, size, pos, R = geom_shape(g, a, self.comp)
                self.geoms.append((name, gtype, size, (cur * pin.SE3(R, pos)).homogeneous))
            if explicit is None:
                try:
                    gi = geom_inertia(g, a, self.comp)
                except ModelError as exc:
                    raise self.err(g, str(exc).split(": ", 1)[-1]) from None
                if gi is not None:
                    parts.append(pin.Inertia(gi[0], gi[1], gi[2]))
        if explicit is not None:
            m, c, Ic = inertial(explicit, self.comp)
            parts = [pin.Inertia(m, c, Ic)]
        if not parts or jid == 0:
            return
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        self.model.appendBodyToJoint(jid, total, cur)


_DRAWN = ("sphere", "capsule", "cylinder", "ellipsoid", "box")


def _eq_frame(b: _Builder, el: ET.Element, key: str) -> str | None:
    """Frame name of ``body1``/``body2``/``site1``/``site2`` (None: the world)."""
    name = el.get(key)
    if name is None or name == "world":
        return None
    table = b.body_frames if key.startswith("body") else b.site_frames
    if name not in table:
        kind = "body" if key.startswith("body") else "site"
        raise b.err(el, f"{key}={name!r} names no {kind}; valid: {', '.join(sorted(table))}")
    return name if key.startswith("body") else b.site_frames[name]


def _equalities(b: _Builder, q0: np.ndarray) -> list[Equality]:
    model = b.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, q0)
    out: list[Equality] = []

    def oMf(fr: str | None) -> pin.SE3:
        return pin.SE3.Identity() if fr is None else data.oMf[model.getFrameId(fr)]

    for sec in b.root.findall("equality"):
        for i, el in enumerate(sec):
            name = el.get("name") or f"{el.tag}{i}"
            if el.get("active", "true") == "false":
                b.warnings.append(f"equality {name!r} is inactive and not modelled")
                continue
            if el.tag not in ("connect", "weld", "joint"):
                raise b.err(el, "pfaff reads connect, weld and joint equality constraints")
            if el.tag == "joint":
                coef = floats(el, "polycoef", 5, (0, 1, 0, 0, 0))
                if np.any(coef[2:] != 0):
                    raise b.err(
                        el,
                        f"polycoef {coef.tolist()}: terms beyond the linear one are not supported",
                    )
                j1, j2 = el.get("joint1"), el.get("joint2")
                for key, jn in (("joint1", j1), ("joint2", j2)):
                    if (jn is not None or key == "joint1") and not model.existJointName(jn or ""):
                        raise b.err(el, f"{key}={jn!r} names no joint")
                out.append(
                    Equality(
                        "joint",
                        name,
                        where(el),
                        1,
                        joint1=j1,
                        joint2=j2,
                        polycoef=(coef[0], coef[1]),
                    )
                )
                continue
            sites = "site1" in el.attrib
            if sites:
                if "site2" not in el.attrib:
                    raise b.err(el, "site1 needs site2")
                f1, f2 = _eq_frame(b, el, "site1"), _eq_frame(b, el, "site2")
            else:
                if "body1" not in el.attrib:
                    raise b.err(el, "give body1 (and body2) or site1 and site2")
                f1, f2 = _eq_frame(b, el, "body1"), _eq_frame(b, el, "body2")
            if f1 is None:
                raise b.err(el, "the first body or site cannot be the world")
            T1, T2 = oMf(f1), oMf(f2)
            if el.tag == "connect":
                if sites:
                    p1, p2 = np.zeros(3), np.zeros(3)
                else:
                    p1 = floats(el, "anchor", 3)
                    p2 = T2.actInv(T1.act(p1))  # the point of body 2 there at qpos0
                out.append(Equality("connect", name, where(el), 3, f1, f2, p1, p2))
                continue
            ts = float(floats(el, "torquescale", 1, (1.0,))[0])
            anchor = floats(el, "anchor", 3, (0, 0, 0))
            relpose = floats(el, "relpose", 7, (0, 1, 0, 0, 0, 0, 0))
            if sites:
                p1, p2, R = np.zeros(3), np.zeros(3), np.eye(3)
            elif np.any(relpose[3:] != 0):
                # MuJoCo: body 1's point is relpose's position, body 2's the anchor
                R, p1, p2 = quat_to_matrix(relpose[3:]), relpose[:3], anchor
            else:
                T12 = T1.actInv(T2)
                R, p1, p2 = T12.rotation, T12.act(anchor), anchor
            out.append(Equality("weld", name, where(el), 6, f1, f2, p1, p2, R, ts))
    return out


def _check_counts(b: _Builder, path: str) -> None:
    """The model against the file: body count, nq and nv from the joint elements."""
    nb = sum(1 for _ in b.root.find("worldbody").iter("body"))
    nq = nv = 0
    for j in b.root.find("worldbody").iter():
        if j.tag == "freejoint":
            nq, nv = nq + 7, nv + 6
        elif j.tag == "joint":
            cls = j.get("class")
            jt = j.get("type") or (
                b.defaults.classes.get(cls or "main", {}).get("joint", {}).get("type")
            )
            dq, dv = JOINT_DIMS.get(jt or "hinge", (1, 1))
            nq, nv = nq + dq, nv + dv
    got = (len(b.bodies), b.model.nq, b.model.nv)
    if got != (nb, nq, nv):
        raise ModelError(
            f"MJCF file {path!r}: built {got[0]} bodies, nq {got[1]}, nv {got[2]}; "
            f"the file has {nb} bodies, nq {nq}, nv {nv}"
        )


def _check_masses(b: _Builder, path: str) -> None:
    """Every body that moves (a joint carries it) needs a finite mass > 0 and a positive
    definite inertia (MuJoCo refuses the same); welded children count with their body."""
    model = b.model
    for name in b.bodies:
        jid = int(model.frames[model.getFrameId(name)].parentJoint)
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
    b = _Builder(root, str(p))
    b.world(wb)
    _check_counts(b, str(p))
    _check_masses(b, str(p))
    model = b.model
    option = root.find("option")
    g = (
        floats(option, "gravity", 3, (0, 0, -9.81))
        if option is not None
        else np.array([0, 0, -9.81])
    )
    model.gravity = pin.Motion(g, np.zeros(3))
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
        equalities=_equalities(b, q0),
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
            for j in mj.joints:  # normalise quaternions
                if j.type in ("ball", "free"):
                    k = j.idx_q + (3 if j.type == "free" else 0)
                    n = np.linalg.norm(q[k : k + 4])
                    if not n > 0:
                        raise ModelError(
                            f"keyframe {name!r}: joint {j.name!r} has a zero quaternion"
                        )
                    q[k : k + 4] /= n
            out[name] = (q, mj.qvel_to_v(q, qvel))
    return out
