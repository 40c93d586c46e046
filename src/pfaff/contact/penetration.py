"""How deep the modelled contact pairs overlap along a run, by MuJoCo's own narrow phase.

pfaff holds a closed contact exactly (its gap 0 to round-off); this measures that from
outside the core: the recorded configurations are put into MuJoCo (``mj_kinematics``,
``mj_collision`` of the file's compiled model) and the deepest contact of the pairs pfaff
models is read (``-dist``). It is the witness of the ``penetration`` series and the
``max_penetration`` metric of ``pfaff run`` and the check of a start that overlaps.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from pfaff.contact.model import FileContacts

__all__ = ["Penetration", "deepest", "penetration"]

#: the name MuJoCo's virtual file system gives the compiled model
_MJB = "model.mjb"


def deepest(d: mujoco.MjData) -> float:
    """The deepest of MuJoCo's contacts in ``d`` now, ``max(0, -dist)`` [m] (0 with none)."""
    return max(0.0, -float(d.contact.dist[: d.ncon].min())) if d.ncon else 0.0


class Penetration:
    """MuJoCo's narrow phase on pfaff's configurations, for the pairs of ``contacts``.

    Parameters
    ----------
    contacts : the modelled pairs (:class:`~pfaff.contact.model.FileContacts`).
    q_to_qpos : pfaff's ``q`` -> MuJoCo's ``qpos`` (the file's coordinates).
    """

    def __init__(self, contacts: FileContacts, q_to_qpos: Callable[[np.ndarray], np.ndarray]):
        self.m = mujoco.MjModel.from_binary_path(_MJB, {_MJB: contacts.mjb})
        self.d = mujoco.MjData(self.m)
        self.q_to_qpos = q_to_qpos
        self.pairs = {frozenset((p.geom1, p.geom2)): k for k, p in enumerate(contacts.pairs)}
        self.names = contacts.names

    def depths(self, q: np.ndarray) -> np.ndarray:
        """Per pair, its deepest overlap at ``q`` [m] (0 where it does not overlap)."""
        self.d.qpos[:] = self.q_to_qpos(q)
        mujoco.mj_kinematics(self.m, self.d)
        mujoco.mj_collision(self.m, self.d)
        out = np.zeros(len(self.names))
        for c in self.d.contact[: self.d.ncon]:
            k = self.pairs.get(frozenset((int(c.geom1), int(c.geom2))))
            if k is not None:
                out[k] = max(out[k], -float(c.dist))
        return out

    def series(self, q: np.ndarray) -> np.ndarray:
        """Per configuration of ``q`` (rows), the deepest overlap of any pair [m]."""
        return np.array([self.depths(qk).max(initial=0.0) for qk in np.atleast_2d(q)])

    def overlaps(self, q: np.ndarray, tol: float) -> list[str]:
        """The pairs overlapping by more than ``tol`` [m] at ``q``, as ``"a / b 0.01 m"``."""
        return [f"{a} / {b} {x:.3g} m" for (a, b), x in zip(self.names, self.depths(q)) if x > tol]


def penetration(
    contacts: FileContacts, q_to_qpos: Callable[[np.ndarray], np.ndarray], q: np.ndarray
) -> np.ndarray:
    """Per sample of the configurations ``q`` (rows), the deepest overlap of the modelled
    pairs [m] (0 where none overlaps), from MuJoCo's narrow phase (module docstring)."""
    return Penetration(contacts, q_to_qpos).series(q)
