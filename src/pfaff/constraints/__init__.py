"""Holonomic Phi(q) = 0 and Pfaffian A(q) v = 0 constraints; ConstraintSet."""

from pfaff.constraints import python_rows  # noqa: F401 - registers the fallback lowering
from pfaff.constraints.ball_angle import BallAngle
from pfaff.constraints.base import (
    Constraint,
    ConstraintEval,
    ConstraintSet,
    check_derivatives,
    require_consistent,
)
from pfaff.constraints.body_plane import PointOnBodyPlane
from pfaff.constraints.coordinate_lock import CoordinateLock
from pfaff.constraints.coupling import JointCoupling, Scaled
from pfaff.constraints.function import FunctionConstraint
from pfaff.constraints.library import (
    LockedJoint,
    PointOnCircle,
    PointOnPlane,
    PointOnSurface,
    PointsCoincide,
)
from pfaff.constraints.quat_aligned import QuatAligned
from pfaff.constraints.revolute import RevoluteClosure
from pfaff.constraints.weld import FrameAligned, Weld

__all__ = [
    "BallAngle",
    "Constraint",
    "ConstraintEval",
    "ConstraintSet",
    "CoordinateLock",
    "FrameAligned",
    "FunctionConstraint",
    "JointCoupling",
    "LockedJoint",
    "PointOnBodyPlane",
    "PointOnCircle",
    "PointOnPlane",
    "PointOnSurface",
    "PointsCoincide",
    "QuatAligned",
    "RevoluteClosure",
    "Scaled",
    "Weld",
    "check_derivatives",
    "require_consistent",
]
