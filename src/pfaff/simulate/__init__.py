"""Time stepping, drift correction, sampled-data control, Trajectory."""

from pfaff.simulate.correction import newton_project
from pfaff.simulate.forces import (
    AppliedForce,
    CoordinateSpring,
    ForceElement,
    JointDamper,
    JointSpring,
    PointDamper,
    PointSpring,
)
from pfaff.simulate.integrator import INTEGRATORS, SimOptions, project_state, simulate
from pfaff.simulate.record import Controller, SnapshotController, StepRecord, as_controller
from pfaff.simulate.trajectory import (
    SERIES_DOC,
    InitialStateError,
    SimulationError,
    SimulationInterrupted,
    Trajectory,
)

__all__ = [
    "AppliedForce",
    "CoordinateSpring",
    "Controller",
    "SnapshotController",
    "StepRecord",
    "as_controller",
    "ForceElement",
    "JointDamper",
    "JointSpring",
    "PointDamper",
    "PointSpring",
    "INTEGRATORS",
    "SERIES_DOC",
    "InitialStateError",
    "SimOptions",
    "SimulationError",
    "SimulationInterrupted",
    "Trajectory",
    "newton_project",
    "project_state",
    "simulate",
]
