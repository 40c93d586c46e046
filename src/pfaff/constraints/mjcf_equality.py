"""MJCF ``<equality>`` elements as pfaff constraints (MuJoCo's semantics, exact).

- ``connect``: :class:`~pfaff.constraints.PointsCoincide` -- the anchor (body 1's
  frame) and the point of body 2 that coincided with it at qpos0; for sites,
  the two site origins. 3 rows.
- ``weld``: position rows as ``connect`` (the anchor is on body 2; body 1's point
  follows from ``relpose`` or from qpos0) and
  :class:`~pfaff.constraints.quat_aligned.QuatAligned` ``R_1 R_rel = R_2``
  (MuJoCo's quaternion residual) scaled by ``torquescale``
  (:class:`~pfaff.constraints.coupling.Scaled`). 6 rows.
- ``joint``: :class:`~pfaff.constraints.coupling.JointCoupling`
  ``q_1 = c_0 + c_1 q_2`` (pfaff's q = qpos - ref: MuJoCo's offsets from qpos0), or
  with terms beyond the linear one :class:`PolynomialJointCoupling`
  ``q_1 = sum_k c_k q_2^k`` (k = 0..4; no lowering: the NumPy engine runs it). 1 row.

MuJoCo keeps these rows soft (a spring-damper pulls them back); pfaff keeps them
exactly, so the row counts agree and the violation does not.
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.constraints.coupling import JointCoupling, Scaled
from pfaff.constraints.library import PointsCoincide, joint_coordinate
from pfaff.constraints.quat_aligned import QuatAligned
from pfaff.errors import ModelError
from pfaff.mechanism.base import Mechanism, Snapshot
from pfaff.mechanism.mjcf import Equality


class PolynomialJointCoupling(Constraint):
    """MuJoCo's joint equality with a polynomial: ``Phi = q_1 - p(q_2)``,
    ``p(x) = sum_k c_k x^k`` (k = 0..4), q measured from qpos0 as MuJoCo does.

    ``A = e_1 - p'(q_2) e_2``, drift ``A' v = -p''(q_2) v_2^2``. Without ``joint2``,
    ``q_1 = c_0``.
    """

    def __init__(self, joint1: str, joint2: str | None, coef, name: str | None = None):
        self.joint1, self.joint2 = joint1, joint2
        self.c = np.asarray(coef, dtype=float).reshape(-1)
        if self.c.shape != (5,) or not np.all(np.isfinite(self.c)):
            raise ModelError(f"polycoef must be 5 finite numbers, got {coef!r}")
        self.name = name or f"{joint1} = p({joint2})"

    def bind(self, mechanism: Mechanism) -> None:
        idx = []
        for j in (self.joint1, self.joint2):
            if j is None:
                continue
            iq, iv, nq = joint_coordinate(mechanism, j)
            if nq != 1:
                raise ModelError(f"{self.name}: joint {j!r} is not a hinge or slide joint")
            idx.append((iq, iv))
        if len(idx) == 2 and idx[0][1] == idx[1][1]:
            raise ModelError(f"joint coupling {self.name!r} couples a joint with itself")
        self._idx = idx

    def _x(self, snap: Snapshot) -> float:
        return float(snap.q[self._idx[1][0]]) if len(self._idx) > 1 else 0.0

    def residual(self, snap: Snapshot) -> np.ndarray:
        x = self._x(snap)
        return np.array([snap.q[self._idx[0][0]] - np.polynomial.polynomial.polyval(x, self.c)])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        A = np.zeros((1, snap.v.shape[0]))
        A[0, self._idx[0][1]] = 1.0
        if len(self._idx) > 1:
            dp = np.polynomial.polynomial.polyder(self.c)
            A[0, self._idx[1][1]] -= np.polynomial.polynomial.polyval(self._x(snap), dp)
        return A

    def drift(self, snap: Snapshot) -> np.ndarray:
        if len(self._idx) < 2:
            return np.zeros(1)
        d2 = np.polynomial.polynomial.polyder(self.c, 2)
        v2 = float(snap.v[self._idx[1][1]])
        return np.array([-np.polynomial.polynomial.polyval(self._x(snap), d2) * v2 * v2])


def equality_constraints(equalities: list[Equality]) -> list[Constraint]:
    """One or two constraint blocks per equality, rows in MuJoCo's order."""
    out: list[Constraint] = []
    for e in equalities:
        if e.kind == "joint":
            c = np.zeros(5)
            c[: len(e.polycoef)] = e.polycoef
            if np.any(c[2:] != 0):
                out.append(PolynomialJointCoupling(e.joint1, e.joint2, c, name=e.name))
            else:
                out.append(JointCoupling(e.joint1, e.joint2, ratio=c[1], offset=c[0], name=e.name))
            continue
        target = (0.0, 0.0, 0.0)
        if e.frame2 is None:  # a world point: where body 1's point was at qpos0
            target, p2 = e.point2, None
        else:
            p2 = e.point2
        out.append(
            PointsCoincide(
                e.frame1, e.frame2, e.point1, p2, target=target, name=f"{e.name} (position)"
            )
        )
        if e.kind == "weld":
            # frame2 None: body 1 welded to the world, R_1 R_rel = I
            al = QuatAligned(e.frame1, e.frame2, offset=e.R_rel, name=f"{e.name} (orientation)")
            out.append(Scaled(al, np.full(3, e.torquescale)))
    return out
