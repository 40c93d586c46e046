"""Which collision geoms of a compiled MJCF can meet, by MuJoCo's own collision filter.

pfaff does not model contact yet: two geoms that MuJoCo would let touch pass through
each other here. :func:`collision_warning` names them, once, so that a body dropped onto
a floor does not fall through it unannounced. The pairs are the ones MuJoCo's collision
driver (``mj_collision``) would hand to its narrow phase at some configuration, read from
the model's arrays alone (no narrow phase, no distance test):

- a geom pair on bodies welded together (``body_weldid`` equal, e.g. two geoms fixed to
  the world) never collides;
- a body and its parent (weld bodies) do not collide unless ``<flag filterparent=
  'disable'/>``; the world is exempt (a child of the world collides with world geoms);
- ``contype``/``conaffinity``: a pair collides when ``contype1 & conaffinity2`` or
  ``contype2 & conaffinity1`` is non-zero;
- ``<exclude body1 body2>`` removes a body pair (``exclude_signature``);
- ``<pair geom1 geom2>`` adds a pair whatever the filters say;
- plane-plane and the other pairs without a collision function never collide;
- ``<flag contact='disable'/>`` or ``constraint='disable'`` turns every contact off.
"""

from __future__ import annotations

import mujoco
import numpy as np

__all__ = ["CONTACT_WARNING", "collision_pairs", "collision_warning"]

#: the start of the warning :func:`collision_warning` writes (how callers recognise it)
CONTACT_WARNING = "contact is not modelled"

_SHOWN = 5  # pairs named in the warning; the rest are counted


def _disabled(m: mujoco.MjModel, flag: str) -> bool:
    return bool(m.opt.disableflags & int(getattr(mujoco.mjtDisableBit, f"mjDSBL_{flag}")))


def _no_function(m: mujoco.MjModel, g1: np.ndarray, g2: np.ndarray) -> np.ndarray:
    """True where MuJoCo has no collision function for the geom types (plane or height
    field against plane or height field)."""
    flat = (int(mujoco.mjtGeom.mjGEOM_PLANE), int(mujoco.mjtGeom.mjGEOM_HFIELD))
    t1, t2 = m.geom_type[g1], m.geom_type[g2]
    return np.isin(t1, flat) & np.isin(t2, flat)


def collision_pairs(m: mujoco.MjModel) -> list[tuple[int, int]]:
    """The geom pairs ``(g1, g2)``, ``g1 < g2``, that MuJoCo's collision filter lets meet.

    Parameters
    ----------
    m : the compiled model.

    Returns
    -------
    list of tuple of int
        Sorted geom index pairs; empty when the file turns contact off.
    """
    if m.ngeom < 2 or _disabled(m, "CONTACT") or _disabled(m, "CONSTRAINT"):
        return []
    g1, g2 = np.triu_indices(m.ngeom, k=1)
    b1, b2 = m.geom_bodyid[g1], m.geom_bodyid[g2]
    w1, w2 = m.body_weldid[b1], m.body_weldid[b2]
    p1 = m.body_weldid[m.body_parentid[w1]]  # the weld parents
    p2 = m.body_weldid[m.body_parentid[w2]]
    keep = w1 != w2
    if not _disabled(m, "FILTERPARENT"):
        keep &= ~((w1 != 0) & (w2 != 0) & ((w1 == p2) | (w2 == p1)))
    ct, ca = m.geom_contype, m.geom_conaffinity
    keep &= ((ct[g1] & ca[g2]) != 0) | ((ct[g2] & ca[g1]) != 0)
    if m.nexclude:
        lo, hi = np.minimum(b1, b2).astype(np.int64), np.maximum(b1, b2).astype(np.int64)
        keep &= ~np.isin((lo << 16) + hi, np.asarray(m.exclude_signature, dtype=np.int64))
    keep &= ~_no_function(m, g1, g2)
    pairs = set(zip(g1[keep].tolist(), g2[keep].tolist()))
    if m.npair:
        e1 = np.asarray(m.pair_geom1, dtype=int)
        e2 = np.asarray(m.pair_geom2, dtype=int)
        ok = ~_no_function(m, e1, e2)
        pairs |= {(min(a, b), max(a, b)) for a, b in zip(e1[ok].tolist(), e2[ok].tolist())}
    return sorted(pairs)


def _label(m: mujoco.MjModel, g: int) -> str:
    """A geom's name, else its body's (``body 'B'``, ``the world``)."""
    name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g)
    if name:
        return f"geom {name!r}"
    b = int(m.geom_bodyid[g])
    body = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) if b else None
    return "the world" if b == 0 else f"body {body!r}" if body else f"body {b}"


def collision_warning(m: mujoco.MjModel) -> str | None:
    """One line naming what can touch: the geom pairs MuJoCo's filter lets meet, shown by
    geom name (else by body), at most five shown and the rest counted; None when no
    geoms can meet.

    Parameters
    ----------
    m : the compiled model.

    Returns
    -------
    str or None
        Starts with :data:`CONTACT_WARNING`.
    """
    pairs = collision_pairs(m)
    if not pairs:
        return None
    named = list(dict.fromkeys(f"{_label(m, a)} / {_label(m, b)}" for a, b in pairs))
    more = f"; and {len(named) - _SHOWN} more pairs" if len(named) > _SHOWN else ""
    n = len(pairs)
    return (
        f"{CONTACT_WARNING}: MuJoCo's collision filter lets {n} geom pair{'s' if n > 1 else ''}"
        f" touch ({'; '.join(named[:_SHOWN])}{more}); with contact=False they pass through "
        "each other, where MuJoCo simulates their contacts (pfaff.load(path) holds them; to "
        "run the same model in both without them, turn them off in the file: "
        "<flag contact='disable'/>, contype='0' conaffinity='0', or <exclude>)"
    )
