"""A real arm from a URDF whose tool point slides on a plane, passive under gravity."""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import from_urdf, load_robot
from pfaff.mechanism.robots import ROBOTS
from pfaff.scenarios.common import decoupling, frame_path, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions


@scenario(
    "panda-contact",
    robot=Param("panda", "robot of example-robot-data", choices=tuple(sorted(ROBOTS))),
    urdf=Param("", "a URDF file to use instead of `robot` (fixed base, no joint locked)"),
    frame=Param("panda_hand_tcp", "the frame whose origin stays on the plane"),
    height=Param(0.1, "plane z = height [m] in the base frame"),
    t_end=Param(5.0, "simulated time [s]", positive=True),
    dt=Param(3e-3, "integrator step [s]", positive=True),
)
def panda_contact(p: dict) -> ScenarioResult:
    """Panda arm (example-robot-data URDF) whose tool point slides on a table, passive.

    The 7-joint Panda (fingers locked) starts at rest in a bent posture; its
    tool centre point is held on the horizontal plane z = height by one
    holonomic row and the arm falls under gravity while the tool slides on the
    plane without friction. No torque acts: the energy (potential zero at the
    initial posture, so E(0) = 0 and the drift is reported over the largest
    kinetic energy reached) must be conserved. Metrics: energy_drift_rel,
    max_kinetic_energy (J), tool_travel (m, path length of the tool point on
    the plane). Any URDF and frame can be given with --set urdf=... frame=...
    """
    mech = from_urdf(p["urdf"]) if p["urdf"] else load_robot(p["robot"])
    mech.check_frames([p["frame"]])
    cset = ConstraintSet(mech, [PointOnPlane(p["frame"], (0.0, 0.0, 1.0), p["height"])])
    q0 = mech.neutral()
    if mech.name == "panda" and mech.nq == 7:
        q0 = np.array([0.0, 0.3, 0.0, -2.0, 0.0, 2.4, 0.8])  # tool low in front of the base
    v0 = np.zeros(mech.nv)
    V0 = mech.compute(q0).potential
    opt = SimOptions(dt=p["dt"], potential_offset=V0)
    traj, wall = timed_simulate(cset, q0, v0, p["t_end"], opt)
    a = traj.arrays()
    E, K = a["energy"], a["kinetic"]
    ref = float(K.max())
    tool = frame_path(mech, a["q"], p["frame"])
    metrics = {
        **decoupling(cset, a["q"], every=20),
        "energy_drift_rel": float(np.abs(E - E[0]).max() / ref) if ref > 0 else float("nan"),
        "max_kinetic_energy": ref,
        "tool_travel": float(np.linalg.norm(np.diff(tool, axis=0), axis=1).sum()),
        "tool_height_error_max": float(np.abs(tool[:, 2] - p["height"]).max()),
    }
    return ScenarioResult(
        traj,
        metrics,
        wall,
        extra_arrays={"tool_position": tool},
        series_doc={"tool_position": "world position of the constrained frame (T, 3) [m]"},
    )
