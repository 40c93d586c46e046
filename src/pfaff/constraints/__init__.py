"""Holonomic Phi(q) = 0 and Pfaffian A(q) v = 0 constraints; ConstraintSet."""

from pfaff.constraints.base import (
    Constraint,
    ConstraintEval,
    ConstraintSet,
    check_derivatives,
    require_consistent,
)
from pfaff.constraints.library import (
    FunctionConstraint,
    LockedJoint,
    PointOnCircle,
    PointOnPlane,
    PointOnSurface,
    PointsCoincide,
)
from pfaff.constraints.revolute import RevoluteClosure

__all__ = [
    "Constraint",
    "ConstraintEval",
    "ConstraintSet",
    "FunctionConstraint",
    "LockedJoint",
    "PointOnCircle",
    "PointOnPlane",
    "PointOnSurface",
    "PointsCoincide",
    "RevoluteClosure",
    "check_derivatives",
    "require_consistent",
]
