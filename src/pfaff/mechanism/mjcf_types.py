"""Plain data of an MJCF model: joint dimensions, joints, equality elements."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

JOINT_DIMS = {"free": (7, 6), "ball": (4, 3), "hinge": (1, 1), "slide": (1, 1)}


@dataclass
class MjJoint:
    """One MuJoCo joint: its type, its Pinocchio name and its place in qpos and q."""

    name: str
    type: str
    qpos_adr: int
    idx_q: int
    idx_v: int
    ref: float = 0.0


@dataclass
class Equality:
    """One ``<equality>`` element, as data (see :mod:`pfaff.constraints.mjcf_equality`).

    ``frame1``/``frame2`` are frame names (``None``: the world); ``point1``,
    ``point2`` local points; ``R_rel`` the orientation of frame 2 seen from
    frame 1 when welded; ``joint1``/``joint2`` Pinocchio joint names.
    """

    kind: str
    name: str
    element: str
    rows: int
    frame1: str | None = None
    frame2: str | None = None
    point1: np.ndarray | None = None
    point2: np.ndarray | None = None
    R_rel: np.ndarray | None = None
    torquescale: float = 1.0
    joint1: str | None = None
    joint2: str | None = None
    polycoef: tuple[float, float] = (0.0, 1.0)
