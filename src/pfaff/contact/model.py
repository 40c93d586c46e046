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
moving body: a held point with friction sticks (held tangentially too) or slips (the
force ``-mu f_n s`` along its unit slip velocity ``s``), ``src/cpp/sim/friction.cpp``.
A vertex (a box's corner, a mesh's vertex) sticks or slips where it is; a sphere or a
capsule sticks by rolling without slipping (its material point at the contact, a radius
from its held centre or axis point, does not move: the Pfaffian rows of
:mod:`pfaff.contact.rolling`) and slips with Coulomb's force at that contact point.
Torsional and rolling friction (``condim`` 4, 6) are not modelled (a warning names the
pairs: they run with sliding friction alone). A pair of two moving bodies is not
modelled (a warning names it).
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
    "FRICTION_WARNING",
    "MOVING_WARNING",
    "Contact",
    "ContactEvent",
    "FileContacts",
    "file_contacts",
]

#: the start of the warning of a file whose pairs declare torsional or rolling friction
#: (condim 4 or 6: they run with sliding friction alone)
FRICTION_WARNING = "torsional and rolling friction (condim 4, 6) are not modelled"
#: the start of the warning of a file with pairs of two moving bodies
MOVING_WARNING = "contact between two moving bodies is not modelled yet"


@dataclass(frozen=True)
class Contact:
    """A closed contact now (``Simulator.contacts``).

    Attributes
    ----------
    geom1, geom2 : the geoms' names (geom1 the one fixed in the world).
    point : the point held on geom1's surface, world frame [m] (a sphere's or capsule's
        contact point, where it rolls or slips: its held centre or axis point a radius
        above it; a box's vertex).
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
    pairs : the pairs (:class:`~pfaff.mechanism.mjcf_contacts.ContactPair`), ordered
        with the world's geom as ``geom1``.
    frames : per pair, the Pinocchio body frame of the moving geom.
    names : per pair, the two geoms' names.
    radii : per pair, the moving geom's radius when it is a sphere or a capsule (the
        core holds its centre, or its axis's point, at this distance from the still
        geom), else 0 [m].
    mu : per pair, the Coulomb friction coefficient the core holds (the pair's
        ``friction[0]``; 0 for ``condim`` 1).
    """

    path: str
    mjb: bytes = b""
    pairs: list[ContactPair] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    names: list[tuple[str, str]] = field(default_factory=list)
    radii: list[float] = field(default_factory=list)
    mu: list[float] = field(default_factory=list)

    def __setstate__(self, state: dict) -> None:
        # a FileContacts pickled before friction was modelled: its pairs ran frictionless
        state.setdefault("mu", [0.0] * len(state.get("pairs", ())))
        self.__dict__.update(state)


def _label(m: mujoco.MjModel, g: int) -> str:
    return name_of(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"


def file_contacts(path: str | Path, body_frames: dict[str, str]) -> tuple[FileContacts, list]:
    """The contact pairs of the MJCF ``path`` that pfaff models, and warnings: the pairs
    of two moving bodies (not modelled) and the pairs whose ``condim`` 4 or 6 declares
    torsional or rolling friction (run with sliding friction alone). ``body_frames``:
    body name -> its Pinocchio frame
    (:attr:`pfaff.mechanism.mjcf_types.MjcfModel.body_frames`)."""
    m = mujoco.MjModel.from_xml_path(str(path))
    buf = np.zeros(mujoco.mj_sizeModel(m), np.uint8)
    mujoco.mj_saveModel(m, None, buf)
    out = FileContacts(str(Path(path).resolve()), buf.tobytes())
    moving: list[str] = []
    rubbing: list[str] = []
    for p in contact_pairs(m):
        b1, b2 = int(m.geom_bodyid[p.geom1]), int(m.geom_bodyid[p.geom2])
        label = f"{_label(m, p.geom1)} / {_label(m, p.geom2)}"
        if b1 != 0 and b2 != 0:
            moving.append(label)
            continue
        if b1 == 0 and b2 == 0:
            continue
        still, mover = (p.geom1, p.geom2) if b1 == 0 else (p.geom2, p.geom1)
        b = int(m.geom_bodyid[mover])
        body = name_of(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        out.pairs.append(p)
        out.frames.append(body_frames.get(body, body))
        out.names.append((_label(m, still), _label(m, mover)))
        round_ = int(m.geom_type[mover]) in (
            mujoco.mjtGeom.mjGEOM_SPHERE,
            mujoco.mjtGeom.mjGEOM_CAPSULE,
        )
        out.radii.append(float(m.geom_size[mover][0]) if round_ else 0.0)
        out.mu.append(float(p.mu) if p.mu > mujoco.mjMINMU else 0.0)
        if p.dropped:
            rubbing.append(f"{label} ({p.dropped})")
    warns = []
    if moving:
        warns.append(
            f"{MOVING_WARNING}: {len(moving)} pair(s) "
            f"pass through each other ({'; '.join(moving[:5])}"
            f"{'; ...' if len(moving) > 5 else ''})"
        )
    if rubbing:
        warns.append(
            f"{FRICTION_WARNING}: {len(rubbing)} pair(s) run with sliding friction alone "
            f"({'; '.join(rubbing[:5])}{'; ...' if len(rubbing) > 5 else ''}); condim='3' "
            "in the file declares sliding friction alone"
        )
    return out, warns
