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

__all__ = ["Penetration", "contact_forces_world", "deepest", "penetration"]

#: the name MuJoCo's virtual file system gives the compiled model
_MJB = "model.mjb"
#: geoms this near count as touching when :meth:`Penetration.touching` reads where they
#: touch [m] (a held contact's gap is 0 to round-off, on either side of MuJoCo's test)
TOUCH = 1e-6


def deepest(d: mujoco.MjData) -> float:
    """The deepest of MuJoCo's contacts in ``d`` now, ``max(0, -dist)`` [m] (0 with none)."""
    return max(0.0, -float(d.contact.dist[: d.ncon].min())) if d.ncon else 0.0


def deep_start_hint(deep: list[str]) -> str:
    """What a run that failed at its start adds to its message where the start overlaps
    (``deep``: the pairs and depths of :meth:`Penetration.overlaps`): the move out of
    the overlap failed, so the overlap is deeper than a motion of the mechanism can
    undo; the pairs, and what to do."""
    return (
        f"; the start overlaps ({'; '.join(deep[:5])}) deeper than a motion of the "
        "mechanism can undo: move the bodies out in the file, <exclude> the pairs, or run "
        "with contact=false"
    )


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
        # contacts within TOUCH are reported (the depths read only overlaps: unchanged)
        self.m.geom_margin[:] = np.maximum(self.m.geom_margin, TOUCH)
        self.m.pair_margin[:] = np.maximum(self.m.pair_margin, TOUCH)
        self.pairs = {frozenset((p.geom1, p.geom2)): k for k, p in enumerate(contacts.pairs)}
        # the still geom of each pair (of two moving bodies: the plane's side)
        held = contacts.point_geoms or [-1] * len(contacts.pairs)
        self.world = [
            p.geom1 if g < 0 or g == p.geom2 else p.geom2
            for p, g in zip(contacts.pairs, held, strict=True)
        ]
        self.names = contacts.names

    def _contacts(self, q: np.ndarray):
        """MuJoCo's contacts of the modelled pairs at ``q``: (pair, contact) pairs."""
        self.d.qpos[:] = self.q_to_qpos(q)
        mujoco.mj_kinematics(self.m, self.d)
        mujoco.mj_collision(self.m, self.d)
        for c in self.d.contact[: self.d.ncon]:
            k = self.pairs.get(frozenset((int(c.geom1), int(c.geom2))))
            if k is not None:
                yield k, c

    def depths(self, q: np.ndarray) -> np.ndarray:
        """Per pair, its deepest overlap at ``q`` [m] (0 where it does not overlap)."""
        out = np.zeros(len(self.names))
        for k, c in self._contacts(q):
            out[k] = max(out[k], -float(c.dist))
        return out

    def touching(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where each pair touches at ``q``: the middle of its contact points [m] (3,),
        its mean normal from the pair's still geom into the moving one (unit), and
        whether it touches (within :data:`TOUCH`); NaN points and normals where not."""
        n = len(self.names)
        pos, nrm, count = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(n)
        for k, c in self._contacts(q):
            if c.dist > TOUCH:
                continue
            sign = 1.0 if int(c.geom1) == self.world[k] else -1.0  # MuJoCo's: geom1 -> geom2
            pos[k] += c.pos
            nrm[k] += sign * c.frame[:3]
            count[k] += 1
        on = count > 0
        pos[~on] = nrm[~on] = np.nan
        pos[on] /= count[on, None]
        nrm[on] /= np.linalg.norm(nrm[on], axis=1, keepdims=True)
        return pos, nrm, on

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


def contact_forces_world(
    pen: Penetration, q: np.ndarray, force: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where each pair's contact force acts and the force, per sample, in the world.

    Parameters
    ----------
    pen : the narrow phase of the run's pairs.
    q : (T, nq) the recorded configurations.
    force : (T, pairs, 4) the recorded contact forces (``LimitedRun.contact_force``: the
        normal force, then the friction force's x, y, z on the moving geom) [N].

    Returns
    -------
    points, vectors : (T, pairs, 3) each: the middle of the pair's contact points [m]
        and the force on its moving geom, ``normal_force * n + friction`` [N] (``n`` the
        normal from the still geom into the moving one); NaN where the pair does not
        touch.
    """
    q, force = np.atleast_2d(q), np.asarray(force, dtype=float)
    if force.shape != (len(q), len(pen.names), 4):
        raise ValueError(
            f"force must have shape ({len(q)}, {len(pen.names)}, 4) (samples, pairs, "
            f"normal + friction x, y, z); got {force.shape}"
        )
    points, vectors = np.empty((2, *force.shape[:2], 3))
    for k, qk in enumerate(q):
        pos, nrm, _ = pen.touching(qk)
        points[k] = pos
        vectors[k] = force[k, :, :1] * nrm + force[k, :, 1:]
    return points, vectors
