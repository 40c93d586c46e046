"""Reference generators of the Yoshikawa-Zheng experiments (IJRR 1993, Sec. 5.3, Table 2).

- :func:`table2` -- the desired (constraint, internal) forces of Table 2;
- :func:`free_reference` -- the object pose of tasks 2 and 3 (a
  :class:`~pfaff.control.references.Reference` built from the motion profiles
  :func:`~pfaff.control.references.smooth_move` and
  :func:`~pfaff.control.references.forth_back` of Sec. 5.3).
"""

from __future__ import annotations

import numpy as np

from pfaff.control.references import Reference, forth_back, smooth_move

#: times [s] of the steps of Table 2
TABLE2_STEPS = (0.27, 0.53)


def table2(t: float) -> tuple[float, float]:
    """Table 2: desired (constraint force, internal force) [N] at time t [s]."""
    if t < 0.27:
        return 0.50, 0.8
    if t < 0.53:
        return 0.75, 1.0
    return 0.50, 0.8


def free_reference(
    x0: float, y0: float, T: float, D: float, ta: float, Dy: float, tay: float
) -> Reference:
    """Tasks 2 and 3: x moves D in T (:func:`smooth_move`), y goes forth and back
    through Dy (:func:`forth_back`), orientation held; ``t -> (r, r', r'')``."""

    def r_d(t):
        s, sd, sdd = smooth_move(t, T, D, ta)
        u, ud, udd = forth_back(t, T, Dy, tay)
        return np.array([x0 + s, y0 + u, 0.0]), np.array([sd, ud, 0.0]), np.array([sdd, udd, 0.0])

    return r_d
