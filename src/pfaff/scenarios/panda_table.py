"""Aghili Sec. 7: the Panda drawing a circle on a table while pressing on it."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.control import (
    ComputedTorque,
    ForceReference,
    FrameTask,
    JointTask,
    ProjectedController,
    StackedTask,
)
from pfaff.control.references import circle_reference
from pfaff.mechanism import load_robot, named_configuration, robot_urdf
from pfaff.mechanism.robots import ROBOTS
from pfaff.scenarios.common import decoupling, frame_path, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.scenarios.witnesses import min_norm_gap
from pfaff.simulate import SimOptions, SimulationError

TOOL = "panda_hand_tcp"


def build(p: dict):
    """The Panda, the table constraint and the hybrid controller: ``(mech, cset, ctrl, q0)``.

    ``p`` holds the scenario parameters (radius, freq, ramp_s, force, kp, kd, kf, ki).
    """
    mech = load_robot("panda")
    q0 = named_configuration("panda", "ready")
    tool0 = mech.compute(q0, None, [TOOL], dynamics=False).frames[TOOL]
    table_z = float(tool0.p[2])
    contact = PointOnPlane(TOOL, (0.0, 0.0, 1.0), table_z, name="tool on table", unilateral=True)
    cset = ConstraintSet(mech, [contact])
    center = tool0.p + np.array([p["radius"], 0.0, 0.0])
    rest = (*pin.log3(tool0.R), q0[2])  # constant orientation and elbow joint q3
    ref = circle_reference(center, p["radius"], p["freq"], p["ramp_s"], rest)
    task = StackedTask([FrameTask(TOOL, "xy", orientation=True), JointTask([2], ["q3"])])

    def lam_d(t: float) -> np.ndarray:
        return np.array([-p["force"]])

    ctrl = ProjectedController(
        cset, task, ref, kp=p["kp"], kd=p["kd"], force=ForceReference(lam_d, p["kf"], p["ki"])
    )
    ctrl.check(q0)
    return mech, cset, ctrl, q0


@scenario(
    "panda-table",
    radius=Param(0.05, "circle radius [m] (10 cm circle)", positive=True),
    freq=Param(0.5, "circle frequency [Hz]", positive=True),
    force=Param(5.0, "desired pressing force [N]", positive=True),
    ramp_s=Param(0.4, "ramp of the drawing speed from rest [s]", positive=True),
    kp=Param(400.0, "G_P [1/s^2]"),
    kd=Param(40.0, "G_D [1/s]"),
    kf=Param(0.5, "G_F of eq. (52)", low=0.0),
    ki=Param(5.0, "G_I of eq. (52) [1/s]", low=0.0),
    settle_s=Param(0.5, "metrics 'after' start at this time [s]", low=0.0),
    baseline=Param(True, "also run the computed-torque baseline on the same task"),
    t_end=Param(4.0, "simulated time [s]", positive=True),
    dt=Param(5e-3, "integrator step = controller period [s] (200 Hz control)", positive=True),
)
def panda_table(p: dict) -> ScenarioResult:
    """Panda (7 joints, URDF of example-robot-data) drawing a circle on a table while pressing.

    The tool point stays on the table plane (one unilateral row: the table
    only pushes). Hybrid control (Aghili eq. 45-46 + 51-52): PIDC on six
    independent coordinates -- the tool's x, y, its orientation (world-frame
    rotation error) and the elbow joint q3, which together parametrise the
    6-dimensional N(A) -- and constraint-force control of the pressing force.
    The table is at the height of the tool in the Panda's ready posture; the
    circle starts there. The computed-torque baseline works on the
    unconstrained model: it tracks the same task plus the tool height z =
    table (7 coordinates, a square Jacobian) and adds A^T lambda_d;
    torque_norm_ratio_vs_computed_torque compares mean |tau|. (With the
    contact force prescribed the torque that produces a motion is unique,
    M a + h + A^T lambda, so the ratio is expected near 1.) min_norm_gap [N m]
    is the largest distance between the torque the plant received and the
    least-norm torque over all torques that give the task's commanded
    acceleration and the force law's commanded multipliers, found by an
    independent constrained least squares from M, h, A and the task Jacobian
    (pfaff.scenarios.witnesses; eq. 45-48, 51-52).
    The baseline runs against a bilateral table: baseline_min_contact_force < 0
    means it would pull the tool off a real table; if it goes unstable
    (baseline_failed) its figures cover the samples before the failure.
    """
    mech, cset, ctrl, q0 = build(p)
    ref, lam_d = ctrl.reference, ctrl.force.lambda_d
    tool0 = mech.compute(q0, None, [TOOL], dynamics=False).frames[TOOL]
    table_z = float(tool0.p[2])
    center = tool0.p + np.array([p["radius"], 0.0, 0.0])
    opt = SimOptions(dt=p["dt"], control_dt=p["dt"])
    traj, wall = timed_simulate(cset, q0, np.zeros(7), p["t_end"], opt, controller=ctrl)
    a = traj.arrays()
    t, after = a["t"], a["t"] >= p["settle_s"]
    tool = frame_path(mech, a["q"], TOOL)
    xy_d = np.array([ref(ti)[0][:2] for ti in t])
    pos_err = np.linalg.norm(tool[:, :2] - xy_d, axis=1)
    fn = -a["lambda"][:, 0]
    tau_norm = float(np.linalg.norm(a["tau"], axis=1).mean())
    metrics = {
        "max_position_error_after": float(pos_err[after].max()),
        "max_force_error_after": float(np.abs(fn - p["force"])[after].max()),
        "min_contact_force": float(fn.min()),
        "min_norm_gap": min_norm_gap(ctrl, a),
        "mean_torque_norm": tau_norm,
        **decoupling(cset, a["q"], every=10),
    }
    notes = f"table at z = {table_z:.4f} m; circle centre ({center[0]:.4f}, {center[1]:.4f}) m."
    if p["baseline"]:
        # the baseline runs against a bilateral table, so that a contact it would open
        # shows up as a negative normal force instead of ending the run
        bilateral = ConstraintSet(mech, [PointOnPlane(TOOL, (0.0, 0.0, 1.0), table_z)])
        # the classical law treats the table normal as one more motion coordinate (z = table)
        task7 = StackedTask([FrameTask(TOOL, "xyz", orientation=True), JointTask([2], ["q3"])])

        def ref7(t: float):
            x, dx, ddx = ref(t)
            return tuple(np.insert(y, 2, z) for y, z in zip((x, dx, ddx), (table_z, 0.0, 0.0)))

        base = ComputedTorque(bilateral, task7, ref7, kp=p["kp"], kd=p["kd"], lambda_d=lam_d)
        try:
            tb, _ = timed_simulate(bilateral, q0, np.zeros(7), p["t_end"], opt, controller=base)
            metrics["baseline_failed"] = False
        except SimulationError as exc:  # the baseline may go unstable: report, keep its samples
            tb = exc.trajectory
            metrics["baseline_failed"] = True
            notes += f" The computed-torque baseline failed: {exc}."
        b = tb.arrays()
        fb = -b["lambda"][:, 0]
        bt = b["t"] >= p["settle_s"]
        metrics["torque_norm_ratio_vs_computed_torque"] = tau_norm / float(
            np.linalg.norm(b["tau"], axis=1).mean()
        )
        metrics["baseline_max_force_error_after"] = float(np.abs(fb - p["force"])[bt].max())
        metrics["baseline_min_contact_force"] = float(fb.min())
    locked = {j: 0.0 for j in ROBOTS["panda"][1]}
    return ScenarioResult(
        traj,
        metrics,
        wall,
        extra_arrays={"tool_position": tool, "tool_xy_desired": xy_d, "normal_force": fn},
        series_doc={
            "tool_position": "tool point in the world (T, 3) [m]",
            "tool_xy_desired": "desired tool x, y (T, 2) [m]",
            "normal_force": "pressing force -lambda [N]",
        },
        plots={
            "errors": {
                "title": "tool position and force errors",
                "ylabel": "|xy - xy_d| [m], |f - f_d| [N]",
                "log": True,
                "series": {"position": pos_err, "force": np.abs(fn - p["force"])},
            },
            "torques": {
                "title": "joint torques (hybrid PIDC + force control)",
                "ylabel": "tau [N m]",
                "series": {f"joint {i + 1}": a["tau"][:, i] for i in range(7)},
            },
        },
        scene3d={
            "urdf": str(robot_urdf("panda")),
            "q": a["q"],
            "t": t,
            "locked": locked,
            "points": tool,
            "plane": (tool0.p.copy(), np.array([0.0, 0.0, 1.0]), 0.4),
        },
        notes=notes,
    )
