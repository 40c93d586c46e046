"""A real arm from a URDF whose tool point slides on a plane, passive under gravity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import from_urdf, load_robot
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism
from pfaff.mechanism.robots import ROBOTS, robot_urdf
from pfaff.scenarios.common import decoupling, frame_path, timed_simulate
from pfaff.scenarios.registry import Param, ParameterError, ScenarioResult, scenario
from pfaff.simulate import InitialStateError, SimOptions

#: the Panda's default start: tool low in front of the base (joint angles, rad)
PANDA_START = np.array([0.0, 0.3, 0.0, -2.0, 0.0, 2.4, 0.8])


def start_posture(text: str, mech: PinocchioMechanism) -> np.ndarray:
    """The configuration q of an arm from comma-separated joint values.

    One value per joint, in the order of the model's joints: an angle [rad]
    for a revolute joint (a continuous joint too: Pinocchio stores it as
    (cos, sin), so nq may exceed the number of values), a displacement [m]
    for a prismatic one; q = integrate(neutral, values).

    Raises
    ------
    ParameterError
        When a value is not a number or not finite, the count differs from
        the number of joints, the model has a joint with more than one degree
        of freedom, or a value lies outside its joint's URDF limits.
    """
    model = mech.model
    joints = [(model.names[i], model.joints[i]) for i in range(1, model.njoints)]
    multi = [name for name, j in joints if j.nv != 1]
    if multi:
        raise ParameterError(
            f"q0 needs an arm whose joints have one degree of freedom each; "
            f"{mech.name} has {', '.join(multi)}"
        )
    names = [name for name, _ in joints]
    try:
        values = np.array([float(x) for x in text.replace(" ", "").split(",")])
    except ValueError:
        raise ParameterError(
            f"q0 expects {len(names)} comma-separated numbers (joint values of "
            f"{', '.join(names)}), got {text!r}"
        ) from None
    if values.size != len(names):
        raise ParameterError(
            f"q0 needs {len(names)} joint values ({', '.join(names)}), got {values.size}"
        )
    if not np.isfinite(values).all():
        raise ParameterError(f"q0 values must be finite, got {text!r}")
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    for (name, j), x in zip(joints, values):
        if j.nq != 1:  # continuous joint: any angle
            continue
        a, b = lo[j.idx_q], hi[j.idx_q]
        if not a <= x <= b:
            raise ParameterError(f"q0: joint {name} = {x:g} is outside its limits [{a:g}, {b:g}]")
    return pin.integrate(model, pin.neutral(model), values)


def _model(p: dict) -> tuple[PinocchioMechanism, str]:
    """The mechanism and a description of the model file actually used."""
    if p["urdf"]:
        return from_urdf(p["urdf"]), f"URDF {Path(p['urdf']).resolve()}"
    mech = load_robot(p["robot"])
    return mech, f"example-robot-data {p['robot']} ({robot_urdf(p['robot'])})"


@scenario(
    "panda-contact",
    robot=Param("panda", "robot of example-robot-data", choices=tuple(sorted(ROBOTS))),
    urdf=Param("", "a URDF file to use instead of `robot` (fixed base, no joint locked)"),
    frame=Param("panda_hand_tcp", "the frame whose origin stays on the plane"),
    height=Param(0.1, "plane z = height [m] in the base frame"),
    q0=Param(
        "",
        "start posture: comma-separated joint values [rad or m], one per joint "
        "(empty: the Panda's bent posture, else the model's neutral posture)",
    ),
    t_end=Param(5.0, "simulated time [s]", positive=True),
    dt=Param(2.5e-3, "integrator step [s] (t_end is a whole number of steps)", positive=True),
)
def panda_contact(p: dict) -> ScenarioResult:
    """An arm (default: the Panda of example-robot-data) whose tool point slides on a table.

    The arm -- by default the 7-joint Panda (fingers locked) in a bent posture; any
    robot of example-robot-data with --set robot=NAME, any URDF with --set urdf=PATH
    (the notes below name the model that ran) -- starts at rest; its tool
    point is held on the horizontal plane z = height by one holonomic row and the arm
    falls under gravity while the tool slides on the plane without friction. No torque
    acts: the energy (potential zero at the initial posture, so E(0) = 0 and the drift
    is reported over the largest kinetic energy reached) must be conserved. Metrics:
    energy_drift_rel, energy_reference (J, the largest kinetic energy),
    max_kinetic_energy (J), tool_travel (m, path length of the tool point on the plane),
    model_used (the robot or URDF file that ran) and start_posture (the joint values the
    run started from: the requested posture after the Newton-Raphson projection onto the
    plane). The frame and start posture can be given: --set frame=NAME --set
    q0=V1,V2,... (one --set per key). An arm whose neutral posture is singular (e.g. a
    fully stretched or folded arm, where the plane's row of A vanishes) needs a start
    posture q0.
    """
    mech, used = _model(p)
    mech.check_frames([p["frame"]])
    cset = ConstraintSet(mech, [PointOnPlane(p["frame"], (0.0, 0.0, 1.0), p["height"])])
    if p["q0"].strip():
        q0 = start_posture(p["q0"], mech)
    elif not p["urdf"] and p["robot"] == "panda":
        q0 = PANDA_START.copy()
    else:
        q0 = mech.neutral()
    v0 = np.zeros(mech.nv)
    V0 = mech.compute(q0).potential
    opt = SimOptions(dt=p["dt"], potential_offset=V0)
    try:
        traj, wall = timed_simulate(cset, q0, v0, p["t_end"], opt)
    except InitialStateError as exc:
        hint = "" if p["q0"].strip() else "; give a start posture with --set q0=V1,V2,..."
        raise InitialStateError(f"{exc} (start posture from {used}){hint}") from None
    a = traj.arrays()
    tool = frame_path(mech, a["q"], p["frame"])
    requested = pin.difference(mech.model, pin.neutral(mech.model), q0)
    angles = pin.difference(mech.model, pin.neutral(mech.model), a["q"][0])  # assembled
    metrics = {
        **decoupling(cset, a["q"], every=20),
        "energy_drift_rel": traj.energy_drift_rel(),
        "energy_reference": traj.energy_reference(),
        "max_kinetic_energy": traj.energy_reference(),
        "tool_travel": float(np.linalg.norm(np.diff(tool, axis=0), axis=1).sum()),
        "tool_height_error_max": float(np.abs(tool[:, 2] - p["height"]).max()),
        "model_used": used,
        "start_posture": [float(x) for x in angles],
    }
    return ScenarioResult(
        traj,
        metrics,
        wall,
        extra_arrays={"tool_position": tool},
        series_doc={"tool_position": "world position of the constrained frame (T, 3) [m]"},
        notes=(
            f"Model: {used}: {mech.name}, nq {mech.nq}, nv {mech.nv}, joints "
            f"{', '.join(mech.model.names[1:])}; frame {p['frame']}; start posture "
            f"{np.array2string(requested, precision=4, separator=', ')} (joint values), "
            f"projected onto z = {p['height']:g} m: "
            f"{np.array2string(angles, precision=4, separator=', ')} (start_posture)."
        ),
    )
