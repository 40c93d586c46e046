"""The contact pairs of a compiled MJCF and their parameters, by MuJoCo's own rules.

Which geoms can meet is :func:`pfaff.mechanism.mjcf_collisions.collision_pairs` (MuJoCo's
collision filter). What a pair's contact is made of follows ``mj_contactParam`` of
MuJoCo's collision driver:

- a filtered pair takes the parameters of the geom of higher ``priority``; at equal
  priorities the larger ``condim`` and the element-wise larger ``friction`` of the two,
  and the larger ``margin`` and ``gap``;
- a ``<pair>`` gives its own ``condim``, ``friction``, ``margin`` and ``gap``, whatever
  the geoms say (and a geom pair that a ``<pair>`` names takes the ``<pair>``'s values
  only: MuJoCo's driver skips it in the filtered pass);
- every friction coefficient is at least ``mjMINMU`` (1e-5).

pfaff's contact is Coulomb's, with the sliding coefficient ``friction[0]``: ``condim``
1 is frictionless, 3 has sliding friction; the torsional and rolling terms of ``condim``
4 and 6 are not modelled (:attr:`ContactPair.dropped` says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from pfaff.mechanism.mjcf_collisions import collision_pairs

__all__ = ["ContactPair", "contact_pairs"]


@dataclass(frozen=True)
class ContactPair:
    """A geom pair that may touch, with MuJoCo's contact parameters.

    Attributes
    ----------
    geom1, geom2 : geom indices of the compiled model (``geom1 < geom2`` for a filtered
        pair; a ``<pair>`` keeps its own order).
    condim : MuJoCo's contact dimensionality (1, 3, 4 or 6).
    mu : Coulomb's sliding friction coefficient, ``friction[0]`` (0 for ``condim`` 1).
    friction : MuJoCo's five coefficients (sliding, sliding, torsional, rolling, rolling).
    margin, gap : MuJoCo's margin and gap [m].
    explicit : True for a ``<pair>`` of the file.
    """

    geom1: int
    geom2: int
    condim: int
    mu: float
    friction: tuple[float, float, float, float, float]
    margin: float
    gap: float
    explicit: bool = False

    @property
    def dropped(self) -> str | None:
        """What of MuJoCo's contact pfaff does not model here, or None."""
        if self.condim > 3:
            what = "torsional friction" if self.condim == 4 else "torsional and rolling friction"
            return f"condim {self.condim}: its {what}"
        return None


def _five(f: np.ndarray) -> tuple[float, float, float, float, float]:
    """A geom's three friction coefficients as MuJoCo's five of a contact, each at least
    MuJoCo's ``mjMINMU``."""
    return _floored((f[0], f[0], f[1], f[2], f[2]))


def _floored(f) -> tuple[float, float, float, float, float]:
    """Friction coefficients raised to ``mjMINMU`` (MuJoCo's floor, 1e-5)."""
    return tuple(max(float(x), mujoco.mjMINMU) for x in f)


def _mixed(m: mujoco.MjModel, g1: int, g2: int) -> ContactPair:
    """The parameters of a filtered pair (``mj_contactParam`` for geoms)."""
    p1, p2 = int(m.geom_priority[g1]), int(m.geom_priority[g2])
    if p1 != p2:
        g = g1 if p1 > p2 else g2
        condim, friction = int(m.geom_condim[g]), _five(m.geom_friction[g])
    else:
        condim = max(int(m.geom_condim[g1]), int(m.geom_condim[g2]))
        f = np.maximum(m.geom_friction[g1], m.geom_friction[g2])
        friction = _five(f)
    margin = max(float(m.geom_margin[g1]), float(m.geom_margin[g2]))
    gap = max(float(m.geom_gap[g1]), float(m.geom_gap[g2]))
    mu = friction[0] if condim > 1 else 0.0
    return ContactPair(g1, g2, condim, mu, friction, margin, gap)


def contact_pairs(m: mujoco.MjModel) -> list[ContactPair]:
    """The contact pairs of ``m``: each geom pair MuJoCo's filter lets meet, and each
    ``<pair>``, with its parameters.

    Parameters
    ----------
    m : the compiled model.

    Returns
    -------
    list of ContactPair
        The ``<pair>`` entries first, in the file's order, then the filtered pairs in
        index order; empty when the file turns contact off.
    """
    pairs = collision_pairs(m)
    if not pairs:
        return []
    out, named = [], set()
    for i in range(m.npair):
        g1, g2 = int(m.pair_geom1[i]), int(m.pair_geom2[i])
        key = (min(g1, g2), max(g1, g2))
        if key not in pairs:  # a pair without a collision function (plane-plane)
            continue
        named.add(key)
        condim = int(m.pair_dim[i])
        friction = _floored(m.pair_friction[i])
        mu = friction[0] if condim > 1 else 0.0
        margin, gap = float(m.pair_margin[i]), float(m.pair_gap[i])
        out.append(ContactPair(g1, g2, condim, mu, friction, margin, gap, explicit=True))
    out.extend(_mixed(m, a, b) for a, b in pairs if (a, b) not in named)
    return out
