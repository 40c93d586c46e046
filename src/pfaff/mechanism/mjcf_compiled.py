"""An MJCF file through MuJoCo's own compiler: the model, its equalities, its passive
elements and what pfaff does not model (``warnings``).

:func:`compile_mjcf` compiles the file with ``mujoco.MjModel.from_xml_path`` (so
everything MuJoCo reads loads: includes, frames, replicate, defaults, meshes'
inertias, autolimits) and reads the compiled arrays (:mod:`pfaff.mechanism.mjmodel`
for the bodies and joints). The equalities come from ``eq_type``, ``eq_obj1id``,
``eq_obj2id``, ``eq_objtype`` and ``eq_data`` (anchors and relative poses as the
compiler computed them at qpos0); joint stiffness (about ``springref``) and damping
of one-dof joints become :class:`~pfaff.mechanism.mjcf_types.Passive` data, which
the model file turns into force elements.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from pfaff.mechanism.base import ModelError, unit_quaternion
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
        joint couplings beyond the linear term, a free joint below another body).
    """
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"MJCF file {str(p)!r} does not exist")
    said: list[str] = []  # MuJoCo's warnings, here instead of in ./MUJOCO_LOG.TXT
    hook = hasattr(mujoco, "set_mju_user_warning")
    before = mujoco.get_mju_user_warning() if hook else None
    if hook:
        mujoco.set_mju_user_warning(said.append)
    raw_keys = None
    try:
        if hasattr(mujoco, "MjSpec"):  # MuJoCo >= 3.2: the keyframes as written, too
            spec = mujoco.MjSpec.from_file(str(p))
            m = spec.compile()
            raw_keys = [np.array(list(k.qpos), dtype=float) for k in spec.keys]
        else:  # pragma: no cover - MuJoCo 3.0, 3.1
            m = mujoco.MjModel.from_xml_path(str(p))
    except ValueError as exc:
        raise ModelError(f"MJCF file {str(p)!r}: MuJoCo's compiler refuses it: {exc}") from None
    finally:
        if hook:
            mujoco.set_mju_user_warning(before)
    bad = [a for a in _FINITE if not np.all(np.isfinite(np.asarray(getattr(m, a))))]
    if bad or any("NaN" in w for w in said):
        raise ModelError(
            f"MJCF file {str(p)!r}: non-finite numbers (NaN or inf) in "
            f"{', '.join(bad) or 'the XML'}{'; MuJoCo: ' + said[0] if said else ''}; "
            "valid: finite numbers"
        )
    mj = from_mjmodel(m, str(p))
    mj.warnings[:0] = [f"MuJoCo's compiler: {w.strip()}" for w in said]
    _key_quaternions(mj, raw_keys or [])
    return mj


def from_mjmodel(m: mujoco.MjModel, path: str = "<MjModel>") -> MjcfModel:
    """An :class:`MjcfModel` from a compiled ``mujoco.MjModel`` (``path`` for messages)."""
    warnings: list[str] = []
    mj = build_model(m, path, warnings)
    mj.equalities = _equalities(m, mj, path)
    mj.passive = _passive(m, mj)
    _not_modelled(m, mj)
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
            if np.any(coef[2:] != 0):
                raise ModelError(
                    f"MJCF file {path!r}, {element}: polycoef {coef.tolist()}: terms beyond "
                    "the linear one are not supported"
                )
            j1 = name_of(m, mujoco.mjtObj.mjOBJ_JOINT, int(m.eq_obj1id[e]))
            o2 = int(m.eq_obj2id[e])
            j2 = name_of(m, mujoco.mjtObj.mjOBJ_JOINT, o2) if o2 >= 0 else None
            j1 = mj.joints[int(m.eq_obj1id[e])].name if not j1 else j1
            j2 = mj.joints[o2].name if (o2 >= 0 and not j2) else j2
            out.append(
                Equality(
                    "joint", name, element, 1, joint1=j1, joint2=j2, polycoef=(coef[0], coef[1])
                )
            )
            continue
        if t not in (_CONNECT, _WELD):
            raise ModelError(
                f"MJCF file {path!r}, {element}: pfaff reads connect, weld and joint "
                f"equality constraints, not {kind}"
            )
        sites = objtype is not None and int(objtype[e]) == int(mujoco.mjtObj.mjOBJ_SITE)
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


def _passive(m: mujoco.MjModel, mj: MjcfModel) -> list[Passive]:
    """Joint springs (about ``springref``) and dampers of hinge and slide joints, as
    ``mj_passive`` applies them, unless the file disables springs or dampers; those of
    ball and free joints are listed in warnings."""
    passive = not _flag(m, "PASSIVE")  # MuJoCo < 3.1: one flag for both
    springs, dampers = passive and not _flag(m, "SPRING"), passive and not _flag(m, "DAMPER")
    out = []
    for j, jt in enumerate(mj.joints):
        k = float(m.jnt_stiffness[j]) if springs else 0.0
        da = int(m.jnt_dofadr[j])
        c = np.array(m.dof_damping[da : da + (1 if jt.type in ("hinge", "slide") else 3)])
        c = c if dampers else 0 * c
        if jt.type in ("ball", "free"):
            if k != 0 or np.any(m.dof_damping[da : da + (3 if jt.type == "ball" else 6)] != 0):
                mj.warnings.append(
                    f"joint {jt.name!r}: stiffness and damping of a {jt.type} joint are not "
                    "modelled (pfaff models them on hinge and slide joints)"
                )
            continue
        if k != 0 or c[0] != 0:
            qa = int(m.jnt_qposadr[j])
            rest = float(m.qpos_spring[qa] - m.qpos0[qa])
            out.append(Passive(jt.name, k, rest, float(c[0])))
    return out


def _not_modelled(m: mujoco.MjModel, mj: MjcfModel) -> None:
    """What the file holds that pfaff does not model, one line each in ``mj.warnings``."""
    w = mj.warnings
    for j, jt in enumerate(mj.joints):
        da = int(m.jnt_dofadr[j])
        fl = float(np.max(m.dof_frictionloss[da : da + 1]))
        if fl != 0 and not _flag(m, "FRICTIONLOSS"):
            w.append(f"joint {jt.name!r}: frictionloss {fl:g} is not modelled (dry friction)")
        if m.jnt_limited[j] and not _flag(m, "LIMIT"):
            lo, hi = (float(x) for x in m.jnt_range[j])
            w.append(
                f"joint {jt.name!r}: limits [{lo:g}, {hi:g}] (MuJoCo's qpos) are not modelled"
            )
        for attr, what in (("jnt_stiffnesspoly", "stiffness"), ("dof_dampingpoly", "damping")):
            arr = getattr(m, attr, None)
            row = j if attr.startswith("jnt") else da
            if arr is not None and np.any(np.asarray(arr[row]) != 0):
                w.append(f"joint {jt.name!r}: nonlinear {what} terms are not modelled")
    if m.nu:
        names = [name_of(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"#{i}" for i in range(m.nu)]
        shown = ", ".join(names[:6]) + (", ..." if m.nu > 6 else "")
        many = m.nu > 1
        w.append(
            f"{m.nu} actuator{'s' if many else ''} ({shown}) {'are' if many else 'is'} not "
            "modelled: forward_dynamics takes joint torques tau"
        )
    if not _flag(m, "CONTACT") and not _flag(m, "CONSTRAINT"):
        _contacts_at_start(m, w)
    if m.ntendon:
        w.append(f"{m.ntendon} tendons (and their springs, dampers, limits) are not modelled")
    if np.any(m.body_gravcomp != 0):
        w.append("bodies' gravcomp is not modelled")
    for key in ("viscosity", "density", "wind"):  # fluid forces
        if np.any(np.asarray(getattr(m.opt, key)) != 0):
            w.append(f"<option {key}> is ignored (pfaff models no fluid forces)")


def _contacts_at_start(m: mujoco.MjModel, w: list[str]) -> None:
    """A line in warnings when MuJoCo finds contacts at the file's start (its first
    keyframe, else qpos0): MuJoCo simulates them, pfaff does not."""
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    mujoco.mj_forward(m, d)
    if not d.ncon:
        return

    def geom(g: int) -> str:
        return name_of(m, mujoco.mjtObj.mjOBJ_GEOM, g) or (
            f"geom {g} of {name_of(m, mujoco.mjtObj.mjOBJ_BODY, int(m.geom_bodyid[g])) or 'world'}"
        )

    pairs = [f"{geom(int(c.geom1))} / {geom(int(c.geom2))}" for c in d.contact[: d.ncon]]
    shown = "; ".join(pairs[:3]) + ("; ..." if len(pairs) > 3 else "")
    w.append(
        f"MuJoCo finds {d.ncon} contact{'s' if d.ncon > 1 else ''} at the start ({shown}): "
        "contacts are not modelled (MuJoCo simulates them unless <flag contact='disable'/>)"
    )
