"""The contacts of a model file as pfaff runs them, and what they report.

``pfaff.load(path, contact=True)`` reads the file's contact pairs
(:func:`pfaff.mechanism.mjcf_contacts.contact_pairs`: MuJoCo's filter and mixing
rules) into a :class:`FileContacts`; a :class:`pfaff.Simulator` of the system then holds
them as unilateral constraints on the compiled core, by the joint limits' rules
(``src/cpp/sim/contact.cpp``, ``contact_events.cpp``): the narrow phase is MuJoCo's own
collision function of the pair's geom types, a crossing is located inside the step, an
impact is Newton's law with restitution ``e`` in the metric of M, a contact is held as a
row while its multiplier pushes and released when it pulls.

Modelled: normal contact with Coulomb friction (the pair's ``friction[0]``, combined as
MuJoCo does; ``condim`` 1 frictionless) between a geom fixed in the world and a geom on a
moving body, and between two geoms on moving bodies (the point of one held on a plane
fixed in the other's body, ``PointOnBodyPlane``: the force acts on both, equal and
opposite): a held point with friction sticks (held tangentially too, relative to the
other body) or slips (the force ``-mu f_n s`` along its unit relative slip velocity
``s``, and the opposite on the other body), ``src/cpp/sim/friction.cpp``.
A vertex (a box's corner, a mesh's vertex, a cylinder's rim point) sticks or slips
where it is; a sphere or a capsule sticks by rolling without slipping (its material
point at the contact, a radius from its held centre or axis point, does not move, or on
a moving body moves with that body's material point there: the Pfaffian rows of
:mod:`pfaff.contact.rolling`) and slips with Coulomb's force at that contact point, as
does a cylinder lying on its side (its contact normal across its axis) on a still geom;
the core decides per contact point (``src/cpp/sim/contact.cpp``). A cylinder on a
moving body holds its rim points (a warning names the pairs). Torsional and rolling friction
(``condim`` 4, 6) are not modelled (a warning names the pairs: they run with sliding
friction alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from pfaff.mechanism.mjcf_contacts import ContactPair, contact_pairs
from pfaff.mechanism.mjmodel import name_of
from pfaff.simulate.limit_events import ContactEvent

__all__ = [
    "CYLINDER_WARNING",
    "FRICTION_WARNING",
    "MOVING_WARNING",
    "PAIR_WARNINGS",
    "PINNED_WARNING",
    "START_OVERLAP",
    "Contact",
    "ContactEvent",
    "FileContacts",
    "file_contacts",
]

#: the start of the warning of a file whose pairs declare torsional or rolling friction
#: (condim 4 or 6: they run with sliding friction alone)
FRICTION_WARNING = "torsional and rolling friction (condim 4, 6) are not modelled"
#: the start of the warnings of a file's pairs of two moving bodies: those that overlap at
#: the start by more than :data:`START_OVERLAP` (links meeting at a pin: not modelled),
#: and those of two round geoms (one's point held on the other's tangent plane, which
#: turns with its body while held: approximate)
MOVING_WARNING = "contact between two moving bodies"
#: the start of the warning of a file's cylinder pairs of two moving bodies: there its
#: contact points are held as points fixed in it (its faces stand, slide and tip
#: exactly), so lying on its side or tilted on a rim on the other body it sticks where it
#: would roll (on a still geom it rolls: its axis point held, as a capsule's, or its rim)
CYLINDER_WARNING = "a cylinder on a moving body does not roll"
#: the start of the warning of a file's pairs of a world geom and a link hinged to the
#: world that overlap at the start by more than :data:`START_OVERLAP` (an arm's base link
#: in the floor: no motion of the link brings its pin out, so the pair is not modelled)
PINNED_WARNING = "a link pinned to the world"
#: the warnings a file's contact pairs may give (how :func:`pfaff.load` recognises them)
PAIR_WARNINGS = (FRICTION_WARNING, MOVING_WARNING, CYLINDER_WARNING, PINNED_WARNING)
#: a pair of two moving bodies overlapping by more than this at the start is not modelled
#: [m] (a keyframe saved from MuJoCo's soft contacts overlaps by a fraction of it)
START_OVERLAP = 1e-3


@dataclass(frozen=True)
class Contact:
    """A closed contact now (``Simulator.contacts``).

    Attributes
    ----------
    geom1, geom2 : the geoms' names (geom1 the plane's side: the one fixed in the world,
        or, between two moving bodies, the one whose body holds the plane).
    point : the point held on geom1's surface, world frame [m] (a sphere's, a capsule's
        or a lying cylinder's contact point, where it rolls or slips: its held centre or
        axis point a radius above it; a box's vertex, a cylinder's rim point).
    normal : the contact normal, from geom1 into geom2 (unit).
    normal_force : the force geom1 exerts on geom2 along ``normal`` [N] (>= 0).
    tangent_force : the magnitude of the friction force geom1 exerts on geom2 [N]
        (0 without friction; at most ``mu * normal_force`` to the release tolerance).
    mode : ``"stick"`` (held tangentially too: the friction force is what holds it) or
        ``"slip"`` (Coulomb's force against its slip, or frictionless).
    tangent : the friction force on geom2, world frame [N] (normal to ``normal``).
    """

    geom1: str
    geom2: str
    point: tuple[float, float, float]
    normal: tuple[float, float, float]
    normal_force: float
    tangent_force: float = 0.0
    mode: str = "slip"
    tangent: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass
class FileContacts:
    """The contact pairs of one model file that pfaff models.

    Attributes
    ----------
    path : the file.
    mjb : its model compiled by MuJoCo (``mj_saveModel``'s buffer): the geoms the pairs
        name by id, the core's narrow phase reads it (the file may be gone).
    pairs : the pairs (:class:`~pfaff.mechanism.mjcf_contacts.ContactPair`), in
        MuJoCo's order.
    frames : per pair, the Pinocchio body frame of the geom whose point is held (the
        moving geom's; of two moving geoms, ``point_geoms``').
    names : per pair, the two geoms' names: the plane's side, then the held point's.
    frames2 : per pair, the Pinocchio body frame of the plane's side ("": the world).
    point_geoms : per pair, the geom id whose point is held.
    mu : per pair, the Coulomb friction coefficient the core holds (the pair's
        ``friction[0]``; 0 for ``condim`` 1).
    """

    path: str
    mjb: bytes = b""
    pairs: list[ContactPair] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    names: list[tuple[str, str]] = field(default_factory=list)
    mu: list[float] = field(default_factory=list)
    frames2: list[str] = field(default_factory=list)
    point_geoms: list[int] = field(default_factory=list)

    def __setstate__(self, state: dict) -> None:
        # a FileContacts pickled before friction was modelled: its pairs ran frictionless;
        # before pairs of two moving bodies: every pair against the world
        n = len(state.get("pairs", ()))
        state.setdefault("mu", [0.0] * n)
        state.setdefault("frames2", [""] * n)
        state.setdefault("point_geoms", [-1] * n)
        self.__dict__.update(state)


def _label(m: mujoco.MjModel, g: int) -> str:
    return name_of(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"


def _round(m: mujoco.MjModel, g: int) -> bool:
    return int(m.geom_type[g]) in (mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_CAPSULE)


def _pinned_to_world(m: mujoco.MjModel, b: int) -> bool:
    """Whether body ``b`` turns about a point fixed in the world: it has joints, each a
    hinge or a ball (a slide moves it along, a free joint anywhere), and its parent is
    welded to the world."""
    joints = range(int(m.body_jntadr[b]), int(m.body_jntadr[b]) + int(m.body_jntnum[b]))
    turns = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_BALL)
    return (
        len(joints) > 0
        and int(m.body_weldid[int(m.body_parentid[b])]) == 0
        and all(int(m.jnt_type[j]) in turns for j in joints)
    )


def _overlapping(m: mujoco.MjModel, qpos: np.ndarray | None) -> set[frozenset]:
    """The geom pairs that overlap by more than START_OVERLAP at ``qpos`` (MuJoCo's
    narrow phase; none without ``qpos``) and that no motion brings apart: of two moving
    bodies (links meeting at a pin), or of a world geom and a link pinned to the world
    (an arm's base link in the floor). A free body overlapping the world is moved out at
    the start instead."""
    if qpos is None:
        return set()
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_kinematics(m, d)
    mujoco.mj_collision(m, d)
    out = set()
    for c in d.contact[: d.ncon]:
        b1, b2 = int(m.geom_bodyid[c.geom1]), int(m.geom_bodyid[c.geom2])
        if c.dist >= -START_OVERLAP:
            continue
        if (b1 != 0 and b2 != 0) or _pinned_to_world(m, b1 or b2):
            out.add(frozenset((int(c.geom1), int(c.geom2))))
    return out


def file_contacts(
    path: str | Path, body_frames: dict[str, str], qpos: np.ndarray | None = None
) -> tuple[FileContacts, list]:
    """The contact pairs of the MJCF ``path`` that pfaff models, and warnings: the pairs
    of two moving bodies that overlap at the start ``qpos`` (MuJoCo's coordinates) by more
    than :data:`START_OVERLAP` (not modelled: links meeting at a pin), those of a world geom
    and a link pinned to the world overlapping it so (not modelled: no motion brings the
    pin out), those of two round geoms (held on a tangent plane) and the pairs whose
    ``condim`` 4 or 6 declares torsional or rolling friction (run with sliding friction
    alone). ``body_frames``: body name ->
    its Pinocchio frame (:attr:`pfaff.mechanism.mjcf_types.MjcfModel.body_frames`).

    A pair against the world holds the moving geom's point on the world geom's plane; a
    pair of two moving bodies holds the point of MuJoCo's ``geom2`` on a plane of
    ``geom1``'s body (MuJoCo's normal, from ``geom1`` into ``geom2``), the round geom's
    point where one of the two is a sphere or a capsule."""
    m = mujoco.MjModel.from_xml_path(str(path))
    buf = np.zeros(mujoco.mj_sizeModel(m), np.uint8)
    mujoco.mj_saveModel(m, None, buf)
    out = FileContacts(str(Path(path).resolve()), buf.tobytes())
    round_planes: list[str] = []
    rubbing: list[str] = []
    pinned: list[str] = []
    in_world: list[str] = []
    cylinders: list[str] = []
    overlap = _overlapping(m, qpos)

    def frame(g: int) -> str:
        b = int(m.geom_bodyid[g])
        body = name_of(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        return body_frames.get(body, body)

    for p in contact_pairs(m):
        b1, b2 = int(m.geom_bodyid[p.geom1]), int(m.geom_bodyid[p.geom2])
        if b1 == 0 and b2 == 0:
            continue
        label = f"{_label(m, p.geom1)} / {_label(m, p.geom2)}"
        if (b1 == 0 or b2 == 0) and frozenset((p.geom1, p.geom2)) in overlap:
            in_world.append(label)
            continue
        if b1 == 0 or b2 == 0:
            still, mover = (p.geom1, p.geom2) if b1 == 0 else (p.geom2, p.geom1)
        elif frozenset((p.geom1, p.geom2)) in overlap:
            pinned.append(label)
            continue
        else:  # MuJoCo's geom2 on geom1's plane, a round geom's point where there is one
            still, mover = p.geom1, p.geom2
            if _round(m, still) and not _round(m, mover):
                still, mover = mover, still
            if _round(m, still):
                round_planes.append(label)
        out.pairs.append(p)
        out.frames.append(frame(mover))
        out.frames2.append("" if int(m.geom_bodyid[still]) == 0 else frame(still))
        out.point_geoms.append(int(mover))
        out.names.append((_label(m, still), _label(m, mover)))
        cylinder = mujoco.mjtGeom.mjGEOM_CYLINDER
        if out.frames2[-1] and cylinder in (int(m.geom_type[mover]), int(m.geom_type[still])):
            cylinders.append(label)
        out.mu.append(float(p.mu) if p.mu > mujoco.mjMINMU else 0.0)
        if p.dropped:
            rubbing.append(f"{label} ({p.dropped})")
    warns = []
    if pinned:
        warns.append(
            f"{MOVING_WARNING} that overlap at the start by more than {START_OVERLAP:g} m "
            f"is not modelled: {len(pinned)} pair(s) pass through each other "
            f"({'; '.join(pinned[:5])}{'; ...' if len(pinned) > 5 else ''}); links that "
            "meet at a pin are not in contact: <exclude> them in the file"
        )
    if in_world:
        warns.append(
            f"{PINNED_WARNING} that overlaps a world geom at the start by more than "
            f"{START_OVERLAP:g} m is not in contact with it: {len(in_world)} pair(s) pass "
            f"through each other ({'; '.join(in_world[:5])}"
            f"{'; ...' if len(in_world) > 5 else ''}); no motion of the link brings its "
            "pin out: <exclude> them in the file, or move the link or the geom"
        )
    if round_planes:
        warns.append(
            f"{MOVING_WARNING} of two round geoms is approximate: {len(round_planes)} "
            "pair(s) hold one's point on the other's tangent plane, turning with its body, "
            "moved to their nearest points where those slide 1 mm "
            f"({'; '.join(round_planes[:5])}{'; ...' if len(round_planes) > 5 else ''})"
        )
    if cylinders:
        warns.append(
            f"{CYLINDER_WARNING}: {len(cylinders)} pair(s) of two moving bodies hold its "
            f"contact points as points fixed in it ({'; '.join(cylinders[:5])}"
            f"{'; ...' if len(cylinders) > 5 else ''}): it stands, slides and tips on its "
            "faces; lying on its side or tilted on a rim on the other body it sticks instead "
            "of rolling (on a geom fixed in the world it rolls)"
        )
    if rubbing:
        warns.append(
            f"{FRICTION_WARNING}: {len(rubbing)} pair(s) run with sliding friction alone "
            f"({'; '.join(rubbing[:5])}{'; ...' if len(rubbing) > 5 else ''}); condim='3' "
            "in the file declares sliding friction alone"
        )
    return out, warns
