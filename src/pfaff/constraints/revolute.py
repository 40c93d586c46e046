"""A revolute loop closure: two frames share a point and a hinge axis (5 rows).

Closing a loop at a revolute joint with two :class:`PointsCoincide` (the joint
centre and a second point on the axis) gives 6 rows of rank 5: always rank
deficient, so no full-rank path and a rank that says nothing. This block has the
5 independent rows (holonomic)::

    Phi_p = p_a - p_b                          (3 rows, the joint centre)
    Phi_k = e_k . n_b,   k = 1, 2             (2 rows, the axes parallel)

with ``n_a = R_a axis_a``, ``n_b = R_b axis_b`` the world hinge axes and
``e_k = R_a u_k`` two unit vectors of frame a perpendicular to ``axis_a``. With
``w = J_w v`` the frames' angular velocities and ``alpha = J_w' v`` their angular
accelerations at a = 0 (Aghili eq. 2-3: ``A = dPhi/dq``, drift ``A' v``)::

    A_k   = (e_k x n_b)^T (J_wa - J_wb)
    d_k   = ((w_a x e_k) x n_b + e_k x (w_b x n_b)) . (w_a - w_b)
            + (e_k x n_b) . (alpha_a - alpha_b)

(``d/dt (e_k . n_b) = (w_a x e_k) . n_b + e_k . (w_b x n_b) = (e_k x n_b) . (w_a - w_b)``.)
Valid near alignment ``n_a = n_b``; the axes must not be antiparallel.
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.constraints.library import PointsCoincide
from pfaff.lowering import lowers
from pfaff.mechanism.base import ModelError, Snapshot


def _unit(x, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be 3 finite numbers, got {x!r}")
    n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise ModelError(f"{what} must be a non-zero direction, got {x!r}")
    return a / n


class RevoluteClosure(Constraint):
    """Frames ``frame_a`` and ``frame_b`` joined by a revolute joint: their points
    coincide and their hinge axes are parallel (5 rows, see the module docstring).

    Parameters
    ----------
    frame_a, frame_b : frame names.
    axis : hinge axis in frame a (and in frame b unless ``axis_b`` is given).
    point_a, point_b : the joint centre in each frame (default: the frame origins).
    axis_b : the hinge axis in frame b.
    """

    dim = 5

    def __init__(
        self,
        frame_a: str,
        frame_b: str,
        axis=(0.0, 0.0, 1.0),
        point_a=None,
        point_b=None,
        axis_b=None,
        name: str | None = None,
    ) -> None:
        self.frame_a, self.frame_b = frame_a, frame_b
        self.axis_a = _unit(axis, "axis")
        self.axis_b = self.axis_a if axis_b is None else _unit(axis_b, "axis_b")
        self.point = PointsCoincide(frame_a, frame_b, point_a, point_b)
        # u_1, u_2: an orthonormal pair perpendicular to axis_a (in frame a)
        k = int(np.argmin(np.abs(self.axis_a)))
        u1 = np.cross(self.axis_a, np.eye(3)[k])
        u1 /= np.linalg.norm(u1)
        self.U = np.array([u1, np.cross(self.axis_a, u1)])  # (2, 3)
        self.frames = (frame_a, frame_b)
        self.name = name or f"revolute {frame_a} - {frame_b}"

    def _axes(self, snap: Snapshot):
        fa, fb = snap.frame(self.frame_a), snap.frame(self.frame_b)
        E = (fa.R @ self.U.T).T  # (2, 3) world e_k
        nb = fb.R @ self.axis_b
        return fa, fb, E, nb

    def residual(self, snap: Snapshot) -> np.ndarray:
        _, _, E, nb = self._axes(snap)
        return np.concatenate([self.point.residual(snap), E @ nb])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        fa, fb, E, nb = self._axes(snap)
        C = np.cross(E, nb)  # (2, 3): e_k x n_b
        return np.vstack([self.point.jacobian(snap), C @ (fa.J[3:] - fb.J[3:])])

    def drift(self, snap: Snapshot) -> np.ndarray:
        fa, fb, E, nb = self._axes(snap)
        v = snap.v
        wa, wb = fa.J[3:] @ v, fb.J[3:] @ v
        dw = wa - wb
        dalpha = fa.drift[3:] - fb.drift[3:]
        wbn = np.cross(wb, nb)
        rows = [
            (np.cross(np.cross(wa, e), nb) + np.cross(e, wbn)) @ dw + np.cross(e, nb) @ dalpha
            for e in E
        ]
        return np.concatenate([self.point.drift(snap), rows])


# -- lowering to the compiled core (pfaff.lowering; src/cpp/kinds/revolute_closure.cpp) --


@lowers(RevoluteClosure, category="constraint")
def _lower_revolute(c: RevoluteClosure, into):
    s = into.spec("RevoluteClosure", c)
    s.s1, s.s2 = into.frame(c.frame_a), into.frame(c.frame_b)
    into.point(s, 1, c.point.point1)
    into.point(s, 2, c.point.point2)
    s.D, s.D_identity = np.ascontiguousarray(c.U), False  # u_1, u_2 in frame a
    s.n = c.axis_b  # the hinge axis in frame b
    return s
