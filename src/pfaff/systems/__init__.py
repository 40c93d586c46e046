"""Reusable assemblies (plants, IK, monitors) that scenarios and users build on (design.md Sec. 1).

No parsing, metrics or plots here: those belong to the scenarios and the report.

- :class:`GraspPlant` -- arms holding one object, wired for the Yoshikawa-Zheng
  controller; :class:`YZPlanarPlant` (the planar pinned pair of Sec. 5) and
  :class:`DualPandaPlant` (two Pandas welded to a box) implement it.
- :mod:`pfaff.systems.yz_references` -- the Yoshikawa-Zheng reference generators.

The dual-Panda plant needs Pinocchio: import it from ``pfaff.systems.dual_panda``.
"""

from pfaff.systems.grasp_plant import GraspPlant
from pfaff.systems.yz_arms import YZTwoArmPlant, arm_ik
from pfaff.systems.yz_planar import YZPlanarPlant, planar_grasp

__all__ = ["GraspPlant", "YZPlanarPlant", "YZTwoArmPlant", "arm_ik", "planar_grasp"]
