"""Model files (MJCF, URDF) read into a :class:`ModelSystem`: the mechanism, the exact
constraints of the file's ``<equality>`` section and its start.

The MJCF is compiled by MuJoCo's own compiler and read from its arrays
(:func:`pfaff.mechanism.mjcf.read_mjcf`): its armature is in the model's mass
matrix, the stiffness (about ``springref``) and damping of its hinge and slide joints
become force elements (:class:`~pfaff.simulate.forces.JointSpring`,
:class:`~pfaff.simulate.forces.JointDamper`), and what pfaff does not model (limits,
actuators, friction loss, ...) is listed in ``warnings``. The URDF is read by
Pinocchio's parser, its joints' ``<limit lower upper>`` held as joint limits (a
neutral posture outside them moved to the nearest bound);
:mod:`pfaff.scenarios.model_file` runs one as a scenario.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pfaff.constraints.ball_angle import ball_angle
from pfaff.constraints.base import Constraint
from pfaff.contact.model import file_contacts
from pfaff.errors import ModelError
from pfaff.mechanism.mjcf_collisions import CONTACT_WARNING
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism, from_urdf
from pfaff.simulate.forces import BallSpring, DofDamper, JointDamper, JointSpring, TendonSpring
from pfaff.simulate.limits import BallLimit, JointLimit, TendonLimit

__all__ = ["MODEL_SUFFIXES", "ModelSystem", "load_model"]

MODEL_SUFFIXES = (".xml", ".urdf")


@dataclass
class ModelSystem:
    """A mechanism with its constraints and start, as a file describes them.

    ``geoms`` are MJCF shapes to draw (frame, type, size, placement in the frame);
    ``urdf`` the URDF path to draw with its own meshes, ``locked`` the URDF's
    joints the mechanism holds fixed (name -> value), which the drawing fixes too.
    """

    mechanism: PinocchioMechanism
    constraints: list[Constraint]
    q: np.ndarray
    v: np.ndarray
    start: str
    warnings: list[str] = field(default_factory=list)
    geoms: list = field(default_factory=list)
    urdf: str | None = None
    keyframes: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    forces: list = field(default_factory=list)  # force elements (pfaff.simulate.forces)
    locked: dict[str, float] = field(default_factory=dict)
    actuators: list = field(default_factory=list)  # pfaff.mechanism.actuators.Actuator
    coords: Any = None  # MJCF: qpos_to_q / qvel_to_v (pfaff.mechanism.mjcf.MjcfModel)
    limits: list = field(default_factory=list)  # pfaff.simulate.limits.JointLimit
    contacts: Any = None  # the pairs held as contacts (pfaff.contact.model.FileContacts)


def load_model(path: str | Path, keyframe: str | None = None, contact: bool = True) -> ModelSystem:
    """Read an MJCF or URDF file into a :class:`ModelSystem` (start: ``keyframe``, else the
    file's first keyframe, else its default posture). ``contact``: the MJCF's contact
    pairs into ``contacts`` (:func:`pfaff.contact.model.file_contacts`, their warnings
    replacing the one that names the pairs that can meet); ``contact=False``: none, the
    pairs that can meet named in a warning. A URDF's collision elements are not read
    (warned where it has some)."""
    from pfaff.constraints.mjcf_equality import equality_constraints
    from pfaff.mechanism.mjcf import read_mjcf

    p = Path(path)
    if p.suffix.lower() == ".urdf":
        mech = from_urdf(p)
        q, warns, start = mech.neutral(), _urdf_collisions(p) if contact else [], "neutral posture"
        limits = _urdf_limits(mech, q, warns)
        if warns:
            start = "neutral posture, moved into the joint limits"
        return ModelSystem(
            mech, [], q, np.zeros(mech.nv), start, urdf=str(p), warnings=warns, limits=limits
        )
    if p.suffix.lower() != ".xml":
        raise ModelError(f"model file {str(p)!r}: expected .xml (MJCF) or .urdf")
    mj = read_mjcf(p)
    mech = PinocchioMechanism(mj.model, name=p.stem)
    keys = mj.keyframes
    if keyframe is not None and keyframe not in keys:
        raise ModelError(
            f"keyframe {keyframe!r} is not in {str(p)!r}; valid: {', '.join(keys) or 'none'}"
        )
    name = keyframe or next(iter(keys), None)
    q, v = keys[name] if name is not None else (mj.q0.copy(), np.zeros(mech.nv))
    start = f"keyframe {name!r}" if name is not None else "default posture (qpos0)"
    forces: list = []
    for pe in mj.passive:  # MuJoCo's mj_passive
        if pe.ref:  # a ball or free joint
            if pe.stiffness != 0:
                forces.append(BallSpring(pe.joint, pe.stiffness, pe.ref, f"spring {pe.joint}"))
            if any(pe.dof_damping):
                forces.append(DofDamper(pe.joint, pe.dof_damping, f"damper {pe.joint}"))
            continue
        if pe.stiffness != 0:
            forces.append(JointSpring(pe.joint, pe.stiffness, pe.rest, f"spring {pe.joint}"))
        if pe.damping != 0:
            forces.append(JointDamper(pe.joint, pe.damping, f"damper {pe.joint}"))
    for td in mj.tendons:  # a fixed tendon's spring and damper
        if td.stiffness != 0 or td.damping != 0:
            forces.append(
                TendonSpring(td.joints, td.coefs, td.stiffness, td.damping, td.springlength,
                             f"tendon {td.name}")
            )  # fmt: skip
    warns = list(mj.warnings)
    limits = _limits(mj, q, warns) + _tendon_limits(mj, q, warns)
    contacts = None
    if contact:
        contacts, said = file_contacts(p, mj.body_frames, mj.q_to_qpos(q))
        warns = [w for w in warns if not w.startswith(CONTACT_WARNING)] + said
    return ModelSystem(
        mech,
        equality_constraints(mj.equalities),
        q,
        v,
        start,
        warnings=warns,
        geoms=mj.geoms,
        keyframes=keys,
        forces=forces,
        coords=mj,
        actuators=list(mj.actuators),
        limits=limits,
        contacts=contacts,
    )


def _limits(mj, q: np.ndarray, warns: list[str]) -> list[JointLimit]:
    """The file's hinge, slide and ball limits that hold at the start ``q``; a limit the start
    is outside of (MuJoCo's soft limit would push it back in) is listed in ``warns``
    as not modelled."""
    where = {j.name: j for j in mj.joints}
    out = []
    for name, lo, hi, e in mj.limits:
        ball = where[name].type == "ball"
        i = where[name].idx_q
        x = ball_angle(q[i : i + 4])[0] if ball else q[i]
        if lo - 1e-9 <= x <= hi + 1e-9:
            out.append(BallLimit(name, hi, e) if ball else JointLimit(name, lo, hi, e))
            continue
        if ball:
            warns.append(
                f"joint {name!r}: ball limit {hi:g} rad is not modelled: the start's angle "
                f"({x:g}) is past it"
            )
            continue
        ref = where[name].ref
        warns.append(
            f"joint {name!r}: limits [{lo + ref:g}, {hi + ref:g}] (MuJoCo's qpos) are not "
            f"modelled: the start ({x + ref:g}) is outside them"
        )
    return out


def _tendon_limits(mj, q: np.ndarray, warns: list[str]) -> list[TendonLimit]:
    """The file's fixed tendons' limits that hold at the start ``q`` (a limit the start
    is outside of is listed in ``warns`` as not modelled, as a joint's is)."""
    where = {j.name: j for j in mj.joints}
    out = []
    for td in mj.tendons:
        if td.limit is None:
            continue
        lo, hi, e = td.limit
        x = sum(c * q[where[j].idx_q] for j, c in zip(td.joints, td.coefs))
        if lo - 1e-9 <= x <= hi + 1e-9:
            out.append(TendonLimit(td.name, td.joints, td.coefs, lo, hi, e))
            continue
        warns.append(
            f"tendon {td.name!r}: limits [{lo + td.offset:g}, {hi + td.offset:g}] are not "
            f"modelled: the start's length ({x + td.offset:g}) is outside them"
        )
    return out


def _urdf_limits(mech: PinocchioMechanism, q: np.ndarray, warns: list[str]) -> list[JointLimit]:
    """The URDF's ``<limit lower upper>`` of its one-dof joints as joint limits (events;
    restitution 0, a plastic stop: a URDF gives none). A joint whose neutral position
    ``q`` is outside its limits starts at the nearest bound (``q`` moved in place, a
    line in ``warns``), so the default start is inside every limit it holds."""
    out, moved = [], []
    for name, i, lo, hi in mech.position_limits():
        if not lo < hi:  # reversed or empty: no range to hold
            warns.append(f"joint {name!r}: limit lower {lo:g} >= upper {hi:g}: not held")
            continue
        if not lo <= q[i] <= hi:
            inside = min(max(q[i], lo), hi)
            moved.append(f"{name!r} ({q[i]:g} -> {inside:g})")
            q[i] = inside
        out.append(JointLimit(name, lo, hi, 0.0))
    if moved:
        warns.append(
            "the neutral posture is outside the joint limits of "
            f"{', '.join(moved[:6])}{', ...' if len(moved) > 6 else ''}: they start at their "
            "nearest bound"
        )
    return out


def _urdf_collisions(path: Path) -> list[str]:
    """The warning of a URDF whose ``<collision>`` elements pfaff does not hold as
    contacts (it reads an MJCF's collision geoms), or none."""
    import xml.etree.ElementTree as ET

    try:
        n = sum(1 for _ in ET.parse(path).getroot().iter("collision"))
    except ET.ParseError:  # from_urdf read it: Pinocchio's parser is the judge
        return []
    if not n:
        return []
    return [
        f"{CONTACT_WARNING} for a URDF: its {n} <collision> element{'s' if n > 1 else ''} "
        "are not held as contacts (pfaff holds an MJCF's collision geoms: convert the URDF "
        "with MuJoCo's compiler, which reads it, and load the MJCF it saves)"
    ]
