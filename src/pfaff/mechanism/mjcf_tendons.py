"""An MJCF's tendons as pfaff models them: a fixed tendon's spring (with its dead band),
damper and limit, read from MuJoCo's compiled arrays (:func:`fixed_tendons`); what
pfaff does not model of a tendon is a line in the model's ``warnings``.

A fixed tendon's length is MuJoCo's ``L = sum_j coef_j qpos_j`` over hinge and slide
joints. pfaff's ``q`` of such a joint is ``qpos - ref``, so in pfaff's coordinates
``L = sum_j coef_j q_j + offset`` with ``offset = sum_j coef_j ref_j``: the dead band
(``tendon_lengthspring``, computed by MuJoCo's compiler at ``qpos_spring`` where the
file leaves ``springlength`` out) and the limit's range (``tendon_range``) are stored
minus ``offset``, as a joint's ``range`` is stored minus its ``ref``.
"""

from __future__ import annotations

import mujoco
import numpy as np

from pfaff.mechanism.mjcf_types import FixedTendon, MjcfModel
from pfaff.mechanism.mjmodel import name_of

__all__ = ["fixed_tendons"]

_WRAP_JOINT = 1  # mjtWrap: mjWRAP_JOINT
#: the tendon arrays pfaff does not model, with the words of their warning
_NOT_MODELLED = (
    ("tendon_frictionloss", "frictionloss {:g} (dry friction)"),
    ("tendon_armature", "armature {:g}"),
    ("tendon_stiffnesspoly", "nonlinear stiffness terms"),
    ("tendon_dampingpoly", "nonlinear damping terms"),
    ("tendon_springyield", "a plastic spring (springyield)"),
)


def _disabled(m: mujoco.MjModel, name: str) -> bool:
    """True when ``<option><flag name="disable">`` is set (unknown names: False)."""
    bit = getattr(mujoco.mjtDisableBit, f"mjDSBL_{name}", None)
    return bit is not None and bool(m.opt.disableflags & int(bit))


def fixed_tendons(m: mujoco.MjModel, mj: MjcfModel, restitution) -> list[FixedTendon]:
    """The fixed tendons with a spring, a damper or a limit that MuJoCo applies (its
    disable flags read), as :class:`FixedTendon` data; ``restitution(timeconst,
    dampratio)`` maps a limit's ``solref`` to Newton's restitution. What pfaff does not
    model of any tendon (a spatial tendon's terms, friction loss, armature, nonlinear or
    plastic terms) is a line in ``mj.warnings``."""
    passive = not _disabled(m, "PASSIVE")  # MuJoCo < 3.1: one flag for both
    springs, dampers = (
        passive and not _disabled(m, "SPRING"),
        passive and not _disabled(m, "DAMPER"),
    )
    limits = not _disabled(m, "LIMIT")
    out = []
    for i in range(m.ntendon):
        name = name_of(m, mujoco.mjtObj.mjOBJ_TENDON, i) or f"tendon{i}"
        k = float(m.tendon_stiffness[i]) if springs else 0.0
        b = float(m.tendon_damping[i]) if dampers else 0.0
        limited = bool(m.tendon_limited[i]) and limits
        _warn_unmodelled(m, mj, i, name)
        if k == 0 and b == 0 and not limited:
            continue
        adr, num = int(m.tendon_adr[i]), int(m.tendon_num[i])
        if np.any(m.wrap_type[adr : adr + num] != _WRAP_JOINT):
            what = [w for w, on in (("spring", k), ("damper", b), ("limit", limited)) if on]
            mj.warnings.append(
                f"tendon {name!r}: a spatial tendon's {', '.join(what)} is not modelled "
                "(pfaff models fixed tendons of hinge and slide joints)"
            )
            continue
        joints = [mj.joints[int(m.wrap_objid[j])] for j in range(adr, adr + num)]
        coefs = tuple(float(m.wrap_prm[j]) for j in range(adr, adr + num))
        offset = float(sum(c * jt.ref for c, jt in zip(coefs, joints)))
        band = tuple(float(x) - offset for x in m.tendon_lengthspring[i])
        limit = None
        if limited:
            lo, hi = (float(x) - offset for x in m.tendon_range[i])
            limit = (lo, hi, restitution(*m.tendon_solref_lim[i]))
        out.append(
            FixedTendon(name, tuple(jt.name for jt in joints), coefs, offset, k, b, band, limit)
        )
    return out


def _warn_unmodelled(m: mujoco.MjModel, mj: MjcfModel, i: int, name: str) -> None:
    """A line in ``mj.warnings`` per term of tendon ``i`` that pfaff does not model."""
    for attr, words in _NOT_MODELLED:
        arr = getattr(m, attr, None)
        if arr is None:
            continue
        x = np.asarray(arr[i], dtype=float).reshape(-1)
        if attr == "tendon_frictionloss" and _disabled(m, "FRICTIONLOSS"):
            continue
        if np.any(x != 0):
            mj.warnings.append(f"tendon {name!r}: {words.format(float(x[0]))} is not modelled")
