"""An MJCF file through MuJoCo's own compiler: the model, its equalities, its passive
elements and what pfaff does not model (``warnings``).

:func:`compile_mjcf` compiles the file with ``mujoco.MjModel.from_xml_path`` (so
everything MuJoCo reads loads: includes, frames, replicate, defaults, meshes'
inertias, autolimits) and reads the compiled arrays (:mod:`pfaff.mechanism.mjmodel`
for the bodies and joints). The equalities come from ``eq_type``, ``eq_obj1id``,
``eq_obj2id``, ``eq_objtype`` and ``eq_data`` (anchors and relative poses as the
compiler computed them at qpos0); joint stiffness (about ``springref``) and damping
of one-dof joints become :class:`~pfaff.mechanism.mjcf_types.Passive` data, and fixed
tendons' springs, dampers and limits :class:`~pfaff.mechanism.mjcf_types.FixedTendon`
data (:mod:`pfaff.mechanism.mjcf_tendons`), which the model file turns into force
elements and limits.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from pfaff.mechanism.actuators import Actuator
from pfaff.mechanism.base import ModelError, unit_quaternion
from pfaff.mechanism.mjcf_collisions import collision_warning
from pfaff.mechanism.mjcf_tendons import fixed_tendons
from pfaff.mechanism.mjcf_types import Equality, MjcfModel, Passive
from pfaff.mechanism.mjmodel import build_model, name_of, quat_matrix

__all__ = ["compile_mjcf", "from_mjmodel"]

_CONNECT, _WELD, _JOINT = 0, 1, 2  # mjtEq
#: the compiled arrays pfaff reads, checked finite
_FINITE = (
    "body_pos",
    "body_quat",
    "body_mass",
    "body_inertia",
    "body_ipos",
    "body_iquat",
    "jnt_pos",
    "jnt_axis",
    "qpos0",
    "qpos_spring",
    "jnt_stiffness",
    "dof_damping",
    "dof_armature",
    "eq_data",
    "key_qpos",
    "key_qvel",
    "site_pos",
    "site_quat",
)
_EQ_NAMES = {0: "connect", 1: "weld", 2: "joint", 3: "tendon", 4: "flex"}


def compile_mjcf(path: str | Path) -> MjcfModel:
    """Compile an MJCF file with MuJoCo and read it into an :class:`MjcfModel`.

    Raises
    ------
    ModelError
        The file does not exist, MuJoCo's compiler refuses it (its message is
        quoted), or it holds what pfaff cannot represent (tendon or flex equalities,
        a free joint below another body, NaN or inf).
    """
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"MJCF file {str(p)!r} does not exist")
    said: list[str] = []  # MuJoCo's warnings, here instead of in ./MUJOCO_LOG.TXT
    hook = hasattr(mujoco, "set_mju_user_warning")
    before = mujoco.get_mju_user_warning() if hook else None
    if hook:
        mujoco.set_mju_user_warning(said.append)
    try:
        m, raw_keys = _compile(p)
        bad = [a for a in _FINITE if not np.all(np.isfinite(np.asarray(getattr(m, a))))]
        if bad or any("NaN" in w for w in said):
            raise ModelError(
                f"MJCF file {str(p)!r}: non-finite numbers (NaN or inf) in "
                f"{', '.join(bad) or 'the XML'}{'; MuJoCo: ' + said[0] if said else ''}; "
                "valid: finite numbers"
            )
        mj = from_mjmodel(m, str(p))  # its mj_forward at the start warns here too
    finally:
        if hook:
            mujoco.set_mju_user_warning(before)
    mj.warnings[:0] = [f"MuJoCo: {w.strip()}" for w in said]
    _key_quaternions(mj, raw_keys)
    return mj


def _compile(p: Path) -> tuple[mujoco.MjModel, list[np.ndarray]]:
    """The compiled model and the keyframes' qpos as the file writes them (MuJoCo >= 3.2;
    an empty list before)."""
    try:
        if not hasattr(mujoco, "MjSpec"):  # pragma: no cover - MuJoCo < 3.2
            return mujoco.MjModel.from_xml_path(str(p)), []
        spec = mujoco.MjSpec.from_file(str(p))
        # the keyframes as the file writes them (compiling pads them in place)
        keys = [
            (k.name, np.array(list(k.qpos), dtype=float), len(list(k.qvel)))
            for k in getattr(spec, "keys", [])
        ]
        m = spec.compile()
    except ValueError as exc:
        raise ModelError(f"MJCF file {str(p)!r}: MuJoCo's compiler refuses it: {exc}") from None
    _key_sizes(m, keys, p)
    return m, [qpos for _, qpos, _ in keys]


def _key_sizes(m: mujoco.MjModel, keys: list, p: Path) -> None:
    """Refuse a keyframe whose qpos or qvel the file gives with another length than nq or
    nv (``keys``: name, qpos, qvel length as written): MuJoCo's compiler pads a short one
    with zeros (not qpos0), a start the file did not write. An empty one (the attribute
    left out) is MuJoCo's qpos0 / zero qvel."""
    for i, (name, qpos, nqvel) in enumerate(keys):
        for attr, given, n, size in (("qpos", qpos.size, m.nq, "nq"), ("qvel", nqvel, m.nv, "nv")):
            if given and given != n:
                name = name or f"#{i}"
                raise ModelError(
                    f"MJCF file {str(p)!r}: keyframe {name!r} gives {given} {attr} values, "
                    f"the model has {size} = {n} (MuJoCo would pad the missing ones with "
                    f"zeros); give all {n}, or leave {attr} out to start from "
                    + ("qpos0" if attr == "qpos" else "rest")
                )


def from_mjmodel(m: mujoco.MjModel, path: str = "<MjModel>") -> MjcfModel:
    """An :class:`MjcfModel` from a compiled ``mujoco.MjModel`` (``path`` for messages)."""
    warnings: list[str] = []
    mj = build_model(m, path, warnings)
    mj.equalities = _equalities(m, mj, path)
    mj.passive = _passive(m, mj)
    mj.actuators = _actuators(m, mj)
    _not_modelled(m, mj)
    mj.tendons = fixed_tendons(m, mj, restitution)
    return mj


def _key_quaternions(mj: MjcfModel, raw_keys: list[np.ndarray]) -> None:
    """A line in warnings for each keyframe quaternion the file gives off unit norm
    (MuJoCo's compiler normalises it; so does pfaff, from the compiled keyframe)."""
    for (name, _), qpos in zip(mj.keyframes.items(), raw_keys):
        if qpos.shape != (mj.nq_mj,):
            continue
        for j in mj.joints:
            if j.type in ("ball", "free"):
                a = j.qpos_adr + (3 if j.type == "free" else 0)
                what = f"keyframe {name!r}, joint {j.name!r}"
                unit_quaternion(qpos[a : a + 4], what, mj.warnings, np.inf)


def _flag(m: mujoco.MjModel, name: str) -> bool:
    """True when ``<option><flag name="disable">`` is set (unknown names: False)."""
    bit = getattr(mujoco.mjtDisableBit, f"mjDSBL_{name}", None)
    return bit is not None and bool(m.opt.disableflags & int(bit))


def _frame(m: mujoco.MjModel, mj: MjcfModel, e: int, which: int) -> str | None:
    """Frame name of an equality's object (None: the world body)."""
    obj = int((m.eq_obj1id if which == 1 else m.eq_obj2id)[e])
    objtype = getattr(m, "eq_objtype", None)
    if objtype is not None and int(objtype[e]) == int(mujoco.mjtObj.mjOBJ_SITE):
        return mj.site_frames[name_of(m, mujoco.mjtObj.mjOBJ_SITE, obj)]
    return None if obj <= 0 else mj.bodies[obj - 1]


def _equalities(m: mujoco.MjModel, mj: MjcfModel, path: str) -> list[Equality]:
    """The active equalities as :class:`Equality` data (rows in MuJoCo's order)."""
    active = getattr(m, "eq_active0", getattr(m, "eq_active", None))
    objtype = getattr(m, "eq_objtype", None)
    out: list[Equality] = []
    if m.neq and _flag(m, "EQUALITY"):
        mj.warnings.append("the file disables its equalities (<flag equality='disable'>)")
        return out
    for e in range(m.neq):
        t = int(m.eq_type[e])
        kind = _EQ_NAMES.get(t, f"type {t}")
        name = name_of(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) or f"{kind}{e}"
        element = f"<{kind} name={name!r}>"
        if active is not None and not active[e]:
            mj.warnings.append(f"equality {name!r} is inactive and not modelled")
            continue
        data = np.array(m.eq_data[e], dtype=float)
        if t == _JOINT:
            coef = data[:5]
            j1 = name_of(m, mujoco.mjtObj.mjOBJ_JOINT, int(m.eq_obj1id[e]))
            o2 = int(m.eq_obj2id[e])
            j2 = name_of(m, mujoco.mjtObj.mjOBJ_JOINT, o2) if o2 >= 0 else None
            j1 = mj.joints[int(m.eq_obj1id[e])].name if not j1 else j1
            j2 = mj.joints[o2].name if (o2 >= 0 and not j2) else j2
            out.append(
                Equality(
                    "joint",
                    name,
                    element,
                    1,
                    joint1=j1,
                    joint2=j2,
                    polycoef=tuple(float(c) for c in coef),
                )
            )
            continue
        if t not in (_CONNECT, _WELD):
            raise ModelError(
                f"MJCF file {path!r}, {element}: pfaff reads connect, weld and joint "
                f"equality constraints, not {kind}"
            )
        sites = objtype is not None and int(objtype[e]) == int(mujoco.mjtObj.mjOBJ_SITE)
        _one_body(m, e, sites, path, element)
        f1, f2 = _frame(m, mj, e, 1), _frame(m, mj, e, 2)
        if f1 is None:
            raise ModelError(f"MJCF file {path!r}, {element}: the first body cannot be the world")
        zero = np.zeros(3)
        if t == _CONNECT:
            p1, p2 = (zero, zero.copy()) if sites else (data[0:3], data[3:6])
            out.append(Equality("connect", name, element, 3, f1, f2, p1, p2))
            continue
        if sites:  # MuJoCo's site semantic: the two site frames coincide
            p1, p2, R = zero, zero.copy(), np.eye(3)
        else:  # body 2's point is the anchor, body 1's the relative pose's position
            p1, p2, R = data[3:6], data[0:3], quat_matrix(data[6:10])
        out.append(Equality("weld", name, element, 6, f1, f2, p1, p2, R, float(data[10])))
    return out


def _one_body(m: mujoco.MjModel, e: int, sites: bool, path: str, element: str) -> None:
    """Refuse a connect or weld whose two objects are on one body: its rows do not
    depend on the configuration (the two sites keep their distance), so they either hold
    always or can never hold; it constrains nothing."""
    ids = [int(m.eq_obj1id[e]), int(m.eq_obj2id[e])]
    bodies = [int(m.site_bodyid[i]) for i in ids] if sites else ids
    if bodies[0] != bodies[1]:
        return
    body = name_of(m, mujoco.mjtObj.mjOBJ_BODY, bodies[0]) or f"body {bodies[0]}"
    what = "sites" if sites else "objects"
    raise ModelError(
        f"MJCF file {path!r}, {element}: its two {what} are on one body, {body!r}: a "
        "constraint between two points of one rigid body constrains nothing (its rows do "
        "not depend on the configuration); join points of two different bodies"
    )


def _passive(m: mujoco.MjModel, mj: MjcfModel) -> list[Passive]:
    """Joint springs (about ``springref``, MuJoCo's ``qpos_spring``) and dampers, as
    ``mj_passive`` applies them, unless the file disables springs or dampers: on hinge
    and slide joints, and on ball and free joints (their reference in pfaff's q order:
    quaternions scalar last)."""
    passive = not _flag(m, "PASSIVE")  # MuJoCo < 3.1: one flag for both
    springs, dampers = passive and not _flag(m, "SPRING"), passive and not _flag(m, "DAMPER")
    out = []
    for j, jt in enumerate(mj.joints):
        da, nv = int(m.jnt_dofadr[j]), {"free": 6, "ball": 3}.get(jt.type, 1)
        k = float(m.jnt_stiffness[j]) if springs else 0.0
        c = np.array(m.dof_damping[da : da + nv], dtype=float) * (1.0 if dampers else 0.0)
        if nv > 1:
            if k != 0 or np.any(c != 0):
                qa = int(m.jnt_qposadr[j])
                qs = np.array(m.qpos_spring[qa : qa + nv + 1], dtype=float)
                ref = (*qs[:3], *qs[4:], qs[3]) if nv == 6 else (*qs[1:], qs[0])
                out.append(Passive(jt.name, k, 0.0, 0.0, ref, tuple(c)))
        elif k != 0 or c[0] != 0:
            qa = int(m.jnt_qposadr[j])
            rest = float(m.qpos_spring[qa] - m.qpos0[qa])
            out.append(Passive(jt.name, k, rest, float(c[0])))
    return out


def _actuators(m: mujoco.MjModel, mj: MjcfModel) -> list[Actuator]:
    """The actuators pfaff models (:mod:`pfaff.mechanism.actuators`: a fixed or affine
    gain, an affine bias, no activation dynamics or those of an integrator or a filter,
    through a hinge or slide joint or a fixed tendon of them); each other one is a line
    in warnings, and is left out (it applies no force in pfaff)."""
    if _flag(m, "ACTUATION"):
        return []
    clamp = not _flag(m, "CLAMPCTRL")
    ctrlnum = np.asarray(getattr(m, "actuator_ctrlnum", np.ones(m.nu)))
    out = []
    for i in range(m.nu):
        name = name_of(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"actuator{i}"
        path, why = _transmission(m, mj, i), None
        dyn = _DYN_NAMES.get(int(m.actuator_dyntype[i]))
        if dyn is None:
            why = "activation dynamics other than integrator, filter, filterexact (dyntype)"
        elif dyn != "none" and int(m.actuator_actnum[i]) != 1:
            why = "more than one activation (actdim)"
        elif int(m.actuator_gaintype[i]) not in (0, 1):
            why = "a gain that is neither fixed nor affine (gaintype)"
        elif int(m.actuator_biastype[i]) not in (0, 1):
            why = "a bias that is not affine (biastype)"
        elif path is None:
            why = "a transmission other than hinge or slide joints (or a fixed tendon of them)"
        elif int(ctrlnum[i]) != 1:
            why = "more than one control"
        if why is not None:
            mj.warnings.append(f"actuator {name!r}: {why} is not modelled; it is left out")
            continue
        for attr, what in (
            ("actuator_armature", "armature"),
            ("actuator_damping", "damping"),
            ("actuator_delay", "delay"),
        ):
            if np.any(np.asarray(getattr(m, attr, np.zeros(m.nu)))[i] != 0):
                mj.warnings.append(f"actuator {name!r}: its {what} is not modelled")
        ctrl = tuple(float(x) for x in m.actuator_ctrlrange[i])
        force = tuple(float(x) for x in m.actuator_forcerange[i])
        affine = int(m.actuator_biastype[i]) == 1
        gp = [float(x) for x in m.actuator_gainprm[i][:3]]
        act_limited = dyn != "none" and bool(m.actuator_actlimited[i])
        out.append(
            Actuator(
                name,
                *path,
                gear=float(m.actuator_gear[i][0]),
                gain=gp[0],
                bias=tuple(float(x) for x in m.actuator_biasprm[i][:3]) if affine else (0.0,) * 3,
                gain_terms=(gp[1], gp[2]) if int(m.actuator_gaintype[i]) == 1 else (0.0, 0.0),
                ctrlrange=ctrl if clamp and m.actuator_ctrllimited[i] else None,
                forcerange=force if m.actuator_forcelimited[i] else None,
                dyntype=dyn,
                timeconst=float(m.actuator_dynprm[i][0]) if dyn != "none" else 0.0,
                actrange=tuple(float(x) for x in m.actuator_actrange[i]) if act_limited else None,
                actearly=dyn != "none" and bool(m.actuator_actearly[i]),
            )
        )
    return out


#: MuJoCo's mjtDyn numbers of the activation dynamics pfaff models
_DYN_NAMES = {0: "none", 1: "integrator", 2: "filter", 3: "filterexact"}


def _transmission(m: mujoco.MjModel, mj: MjcfModel, i: int) -> tuple | None:
    """``(joints, coefs, refs)`` of actuator ``i``'s transmission: one hinge or slide
    joint (coefficient 1) or a fixed tendon's; None for any other."""
    trn, target = int(m.actuator_trntype[i]), int(m.actuator_trnid[i][0])
    if trn in (0, 1):  # mjTRN_JOINT, mjTRN_JOINTINPARENT
        pairs = [(target, 1.0)]
    elif trn == 3 and int(m.tendon_num[target]) > 0:  # mjTRN_TENDON: a fixed tendon only
        adr, num = int(m.tendon_adr[target]), int(m.tendon_num[target])
        if np.any(m.wrap_type[adr : adr + num] != 1):  # mjWRAP_JOINT
            return None
        pairs = [(int(m.wrap_objid[k]), float(m.wrap_prm[k])) for k in range(adr, adr + num)]
    else:
        return None
    if any(mj.joints[j].type not in ("hinge", "slide") for j, _ in pairs):
        return None
    joints = tuple(mj.joints[j].name for j, _ in pairs)
    return joints, tuple(c for _, c in pairs), tuple(mj.joints[j].ref for j, _ in pairs)


def _not_modelled(m: mujoco.MjModel, mj: MjcfModel) -> None:
    """What the file holds that pfaff does not model, one line each in ``mj.warnings``."""
    w = mj.warnings
    for j, jt in enumerate(mj.joints):
        da = int(m.jnt_dofadr[j])
        fl = float(np.max(m.dof_frictionloss[da : da + 1]))
        if fl != 0 and not _flag(m, "FRICTIONLOSS"):
            w.append(f"joint {jt.name!r}: frictionloss {fl:g} is not modelled (dry friction)")
        if m.jnt_limited[j] and not _flag(m, "LIMIT") and jt.type in ("hinge", "slide"):
            lo, hi = (float(x) - jt.ref for x in m.jnt_range[j])
            mj.limits.append((jt.name, lo, hi, restitution(*m.jnt_solref[j])))
        elif m.jnt_limited[j] and not _flag(m, "LIMIT") and jt.type == "ball":
            hi = float(m.jnt_range[j][1])  # MuJoCo's ball limit: the angle <= range[1]
            if 0 < hi < np.pi:
                mj.limits.append((jt.name, -np.inf, hi, restitution(*m.jnt_solref[j])))
            else:
                w.append(f"joint {jt.name!r}: ball limit {hi:g} rad is not in (0, pi): not held")
        elif m.jnt_limited[j] and not _flag(m, "LIMIT"):
            lo, hi = (float(x) for x in m.jnt_range[j])
            w.append(
                f"joint {jt.name!r}: limits [{lo:g}, {hi:g}] (MuJoCo's qpos) are not modelled"
            )
        for attr, what in (("jnt_stiffnesspoly", "stiffness"), ("dof_dampingpoly", "damping")):
            arr = getattr(m, attr, None)
            row = j if attr.startswith("jnt") else da
            if arr is not None and np.any(np.asarray(arr[row]) != 0):
                w.append(f"joint {jt.name!r}: nonlinear {what} terms are not modelled")
    contact = collision_warning(m)  # None when MuJoCo's filter lets no geoms meet
    if contact is not None:
        w.append(contact)
    if np.any(m.body_gravcomp != 0):
        w.append("bodies' gravcomp is not modelled")
    for key in ("viscosity", "density", "wind"):  # fluid forces
        if np.any(np.asarray(getattr(m.opt, key)) != 0):
            w.append(f"<option {key}> is ignored (pfaff models no fluid forces)")


def restitution(timeconst: float, dampratio: float) -> float:
    """Newton's restitution of a limit whose MuJoCo ``solref`` is ``(timeconst,
    dampratio)``: the rebound of the mass-spring-damper MuJoCo's soft limit is, over its
    half period, ``e = exp(-pi zeta / sqrt(1 - zeta^2))`` for a damping ratio ``zeta < 1``
    and 0 (no rebound) for ``zeta >= 1`` (MuJoCo's default ``solref = (0.02, 1)``: 0).
    A direct ``solref`` (negative stiffness and damping) gives 0: its ratio depends on the
    joint's effective mass."""
    if timeconst <= 0 or not 0 < dampratio < 1:
        return 0.0
    return float(np.exp(-np.pi * dampratio / np.sqrt(1.0 - dampratio**2)))
