"""The ``GraspPlant`` protocol: several arms holding one object, ready for Yoshikawa-Zheng.

A grasp plant assembles what the coordinated hybrid controller of Yoshikawa &
Zheng (IJRR 1993) needs and what a scenario needs to run it: the multibody
mechanism (arms + the object as free bodies), the grasp (eq. 8-12), the
controller's object model (eq. 3-7) and object-motion constraints (eq. 17-22),
the sensors, an inverse kinematics for the initial grasp, and the wiring of a
:class:`~pfaff.control.yoshikawa_zheng.YZController`.

Implementations: :class:`pfaff.systems.yz_planar.YZPlanarPlant` (the planar
pinned pair of Sec. 5) and :class:`pfaff.systems.dual_panda.DualPandaPlant`
(two Pandas welded to a box on a table).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from pfaff.control.yoshikawa_zheng import GraspModel, YZController, YZReference
from pfaff.manipulation.grasp import GraspPoint
from pfaff.mechanism import Mechanism


@runtime_checkable
class GraspPlant(GraspModel, Protocol):
    """Arms + a held object: what :class:`YZController` reads (the
    :class:`~pfaff.control.yoshikawa_zheng.GraspModel` protocol: ``arm_idx``, ``tips``,
    ``rows``, ``I_B``, ``object_state``, ``grasp_state``, ``Q_r``, ``measure``) and what a
    scenario needs to run it.

    Attributes
    ----------
    mech : the unconstrained mechanism (arms and the object's coordinates).
    grasps : the grasp points on the object (Sec. 2.3).
    A_S : orthonormal internal-force basis in the grasp coordinates (eq. 12),
        first column the squeeze.

    Methods
    -------
    initial_q(pose) : joint angles holding the object at ``pose`` (plant-specific:
        an ``(x, y, theta)`` for the planar pair, the box's ``x`` for the Pandas).
    controller(reference, control_dt, ...) -> YZController : the paper's law with
        the paper's gains (Sec. 5.3) wired to this plant.
    """

    mech: Mechanism
    grasps: list[GraspPoint]
    A_S: np.ndarray

    def initial_q(self, pose: Any) -> np.ndarray: ...
    def controller(
        self, reference: YZReference, control_dt: float = 2e-3, **options
    ) -> YZController: ...
