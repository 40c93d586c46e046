"""Time stepping, drift correction, sampled-data control, Trajectory."""

from pfaff.simulate.correction import newton_project
from pfaff.simulate.forces import (
    AnchorDamper,
    AnchorSpring,
    AppliedForce,
    BallSpring,
    CoordinateSpring,
    DofDamper,
    ForceElement,
    GravityCompensation,
    JointDamper,
    JointSpring,
    PointDamper,
    PointForce,
    PointSpring,
    TendonSpring,
)
from pfaff.simulate.integrator import INTEGRATORS, SimOptions, project_state, simulate
from pfaff.simulate.options import choose_engine, engine_choice
from pfaff.simulate.record import Controller, SnapshotController, StepRecord, as_controller
from pfaff.simulate.trajectory import (
    SERIES_DOC,
    InitialStateError,
    SimulationError,
    SimulationInterrupted,
    Trajectory,
)

__all__ = [
    "AnchorDamper",
    "AnchorSpring",
    "AppliedForce",
    "BallSpring",
    "CoordinateSpring",
    "Controller",
    "SnapshotController",
    "StepRecord",
    "as_controller",
    "choose_engine",
    "engine_choice",
    "DofDamper",
    "ForceElement",
    "GravityCompensation",
    "JointDamper",
    "JointSpring",
    "PointDamper",
    "PointForce",
    "PointSpring",
    "TendonSpring",
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
