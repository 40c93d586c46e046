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
  ``q_1 = c_0 + c_1 q_2`` (pfaff's q = qpos - ref: MuJoCo's offsets from qpos0). 1 row.

MuJoCo keeps these rows soft (a spring-damper pulls them back); pfaff keeps them
exactly, so the row counts agree and the violation does not.
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.constraints.coupling import JointCoupling, Scaled
from pfaff.constraints.library import PointsCoincide
from pfaff.constraints.quat_aligned import QuatAligned
from pfaff.mechanism.mjcf import Equality


def equality_constraints(equalities: list[Equality]) -> list[Constraint]:
    """One or two constraint blocks per equality, rows in MuJoCo's order."""
    out: list[Constraint] = []
    for e in equalities:
        if e.kind == "joint":
            c0, c1 = e.polycoef
            out.append(JointCoupling(e.joint1, e.joint2, ratio=c1, offset=c0, name=e.name))
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
