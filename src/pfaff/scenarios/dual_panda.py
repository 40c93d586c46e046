"""Yoshikawa-Zheng coordinated hybrid control in 3D: two Pandas slide a box on a table.

The plant (two Pandas welded to a box, the table, the controller's box model
with Z-Y-Z Euler angles) is :class:`~pfaff.systems.dual_panda.DualPandaPlant`;
this module runs the experiment and computes its metrics.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from pfaff.control.references import smooth_move
from pfaff.mechanism.robots import ROBOTS, robot_urdf
from pfaff.scenarios.common import stage_projection_param, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.scenarios.yz_common import fit_decay
from pfaff.simulate import SimOptions, simulate
from pfaff.systems.dual_panda import DualPandaPlant


def dual_panda_plant(p: dict) -> DualPandaPlant:
    """The plant of ``dual-panda-box`` from its parameters."""
    return DualPandaPlant(
        p["base_distance"], p["table_z"], (p["box_x"], p["box_y"], p["box_z"]), p["box_mass"],
        mass_error=p["model_mass_error"], inertia_error=p["model_inertia_error"],
    )  # fmt: skip


@scenario(
    "dual-panda-box",
    base_distance=Param(
        0.55, "Panda bases at y = -/+ base_distance, facing +/-y [m]", positive=True
    ),
    table_z=Param(0.05, "table top height above the bases [m] (chosen)"),
    box_x=Param(0.2, "box length along x [m]", positive=True),
    box_y=Param(0.1, "box width along y (between the grasped faces) [m]", positive=True),
    box_z=Param(0.1, "box height [m]", positive=True),
    box_mass=Param(1.0, "box mass [kg]", positive=True),
    x0=Param(-0.05, "initial box x [m]"),
    distance=Param(0.1, "x travel [m]"),
    t_move=Param(2.0, "duration of the slide [s]", positive=True),
    t_acc=Param(0.5, "quartic acceleration / deceleration time [s] (chosen)", positive=True),
    press=Param(5.0, "desired normal force on the table [N]", positive=True),
    squeeze=Param(10.0, "desired squeeze: push of each hand toward the box centre [N]"),
    model_mass_error=Param(0.0, "relative error of the controller's box mass", low=-0.9),
    model_inertia_error=Param(0.0, "relative error of the controller's box inertia", low=-0.9),
    dt=Param(5e-3, "integrator step [s]", positive=True),
    control_dt=Param(5e-3, "controller period [s] (paper: 2e-3)", positive=True),
    stage_projection=stage_projection_param(0.12),
    probe=Param(True, "also run the 60 ms unloaded-start probe that fits the force-loop rates"),
)
def dual_panda_box(p: dict) -> ScenarioResult:
    """Two Pandas slide a box 10 cm along a table, pressing 5 N and squeezing 10 N.

    Yoshikawa-Zheng (eq. 32-37, 41-43) in 3D, the controller of yz-constrained
    with r_P = (x, y, yaw), f_F = (normal force, moments about x and y) and six
    internal-force coordinates (the squeeze and five zero-desired ones).
    Chosen layout: bases at (0, -/+0.55, 0) facing each other, table top at
    z = 0.05, box (0.2 x 0.1 x 0.1 m, 1 kg) from x = -0.05 to +0.05 in 2 s
    (quartic acceleration/deceleration of 0.5 s, :func:`smooth_move`), hands
    welded at the centres of the faces y = -/+0.05 with the approach axis normal
    to the face. Gains: K_V = (65, 50, 55), K_P = (13000, 13000, 15000),
    K_IF = 100, K_II = 70; dt = control_dt = 5 ms (paper: 2 ms).
    """
    su = dual_panda_plant(p)
    x0, D, T, ta = p["x0"], p["distance"], p["t_move"], p["t_acc"]
    if not ta < T / 2:
        raise ValueError(f"t_acc = {ta} s must be < t_move/2 = {T / 2} s")
    q0 = su.initial_q(x0)
    for x in np.linspace(x0, x0 + D, 5)[1:]:  # the path stays inside both workspaces
        for i in range(2):
            su.arm_ik(i, x, q0[su.sys.arm_q[i]])
    fFd = np.array([p["press"], 0.0, 0.0])
    fISd = np.zeros(6)
    fISd[0] = math.sqrt(2.0) * p["squeeze"]

    def ref(t, mode):
        s, sd, sdd = smooth_move(t, T, D, ta)
        z = np.zeros(2)
        return (np.array([x0 + s, 0, 0]), np.array([sd, *z]), np.array([sdd, *z]), fFd, fISd)

    # the 60 ms probe runs first: it also brings the code paths of the timed run up to speed
    decay = _decay_probe(su, q0, ref, p) if p["probe"] else {}
    ctrl = su.controller(ref, p["control_dt"])
    opt = SimOptions(
        dt=p["dt"], control_dt=p["control_dt"], stage_projection=p["stage_projection"]
    )
    traj, wall = timed_simulate(su.cset, q0, np.zeros(su.mech.nv), T, opt, controller=ctrl)
    a = traj.arrays()
    t = a["t"]
    sig = {k: v for k, v in a.items()}
    r_P = np.column_stack([sig[f"r_P_{i}"] for i in range(3)])
    r_Pd = np.column_stack([sig[f"r_Pd_{i}"] for i in range(3)])
    forces = [_measure(su, q, v, lam) for q, v, lam in
              zip(a["q"], a["v"], a["lambda"])]  # fmt: skip
    fF = np.array([f[1] for f in forces])
    fIS = np.array([su.internal(q, f[0]) for q, f in zip(a["q"], forces)])
    pos = np.array([su.box_pose(q)[0] for q in a["q"]])
    xd = np.array([x0 + smooth_move(ti, T, D, ta)[0] for ti in t])
    ang = np.array([np.linalg.norm(pin.log3(su.box_pose(q)[1])) for q in a["q"]])
    N = fF[:, 0]
    cop = np.minimum(p["box_y"] / 2 - np.abs(fF[:, 1]) / N, p["box_x"] / 2 - np.abs(fF[:, 2]) / N)
    metrics = {
        "max_position_error": float(np.abs(np.column_stack([pos[:, 0] - xd, pos[:, 1]])).max()),
        "max_orientation_error": float(ang.max()),
        "max_constraint_force_error": float(np.abs(N - fFd[0]).max()),
        "max_constraint_moment_error": float(np.abs(fF[:, 1:]).max()),
        "max_internal_force_error": float(np.abs(fIS[:, 0] / math.sqrt(2) - p["squeeze"]).max()),
        # the norm: A_S beyond the squeeze is any orthonormal basis (LAPACK's choice)
        "max_internal_other_error": float(np.linalg.norm(fIS[:, 1:], axis=1).max()),
        "max_controller_position_error": float(np.abs(r_P - r_Pd).max()),
        "min_normal_force": float(N.min()),
        "min_cop_margin_m": float(cop.min()),
        "max_joint_torque_ratio": float(
            np.abs(a["tau"][:, :14] / np.tile(su.mech.model.effortLimit[:7], 2)).max()
        ),
    }
    metrics.update(decay)
    return ScenarioResult(
        traj, metrics, wall,
        plots=_plots(t, pos, xd, ang, N, fFd[0], fIS, p["squeeze"], a["tau"]),
        extra_arrays={"constraint_force": fF, "internal_force": fIS, "box_position": pos},
        series_doc={
            "constraint_force": "f_F: normal force on the table [N], moments about x, y [N m]",
            "internal_force": "f_IS (eq. 12): squeeze x sqrt(2) [N], then 5 zero-desired",
            "box_position": "box centre (x, y, z) [m]",
        },
        scene3d=_scene(su, t, a["q"]),
    )  # fmt: skip


class _Measured:
    """A minimal snapshot for :meth:`DualPandaPlant.measure` from recorded arrays."""

    def __init__(self, su, q, v, lam):
        self.q, self.v, self.sensors = q, v, {"lambda": lam}


def _measure(su, q, v, lam):
    """``(F_h, f_F)`` of a recorded sample (:meth:`DualPandaPlant.measure`)."""
    snap = _Measured(su, q, v, lam)
    return su.measure(snap, su.object_state(snap), 0)


def _decay_probe(su, q0, ref, p) -> dict:
    """60 ms from an unloaded grasp (integrators at -f_d/K): fitted force-loop rates."""
    ctrl = su.controller(ref, p["control_dt"], unloaded=True)
    opt = SimOptions(
        dt=p["control_dt"],
        control_dt=p["control_dt"],
        progress=False,
        stage_projection=p["stage_projection"],
    )
    # the unloaded start has zero normal force at t = 0: the table row is bilateral here
    tr = simulate(
        su.constraints(unilateral=False), q0, np.zeros(su.mech.nv), 0.06, opt, controller=ctrl
    )
    a = tr.arrays()
    F = [_measure(su, q, v, lam) for q, v, lam in
         zip(a["q"], a["v"], a["lambda"])]  # fmt: skip
    eF = np.array([f[1][0] for f in F]) - p["press"]
    eI = np.array([su.internal(q, f[0])[0] for q, f in zip(a["q"], F)])
    eI -= math.sqrt(2) * p["squeeze"]
    kF, kF_exp = fit_decay(a["t"], eF)
    kI, kI_exp = fit_decay(a["t"], eI)
    return {
        "constraint_force_decay_rate": kF,
        "internal_force_decay_rate": kI,
        "constraint_force_decay_rate_exp": kF_exp,
        "internal_force_decay_rate_exp": kI_exp,
    }


def _plots(t, pos, xd, ang, N, Nd, fIS, squeeze, tau):
    return {
        "positions": {
            "title": "box position vs desired (Figs. 7-9)",
            "ylabel": "[m]",
            "series": {"x": pos[:, 0], "x desired": xd, "y": pos[:, 1], "z": pos[:, 2]},
        },
        "position_errors": {
            "title": "position and orientation errors",
            "ylabel": "|error| [m, rad]",
            "log": True,
            "series": {
                "x": np.abs(pos[:, 0] - xd) + 1e-16,
                "y": np.abs(pos[:, 1]) + 1e-16,
                "rotation angle": ang + 1e-16,
            },
        },  # fmt: skip
        "forces": {
            "title": "normal force and squeeze vs desired",
            "ylabel": "force [N]",
            "series": {
                "normal force": N,
                "normal desired": np.full(t.size, Nd),
                "squeeze": fIS[:, 0] / math.sqrt(2),
                "squeeze desired": np.full(t.size, squeeze),
            },
        },  # fmt: skip
        "torques": {
            "title": "joint torques",
            "ylabel": "torque [N m]",
            "series": {f"arm{i // 7 + 1} tau{i % 7 + 1}": tau[:, i] for i in range(14)},
        },
    }


def _scene(su, t, q) -> dict:
    """``ScenarioResult.scene3d``: both Pandas at their bases, the box, the table."""
    locked = {j: 0.0 for j in ROBOTS["panda"][1]}
    robots = [
        {"urdf": robot_urdf("panda"), "q": q[:, iq], "base": base, "locked": locked,
         "prefix": f"arm{i + 1}"}
        for i, (iq, base) in enumerate(zip(su.sys.arm_q, su.sys.bases))
    ]  # fmt: skip
    table = su.zc - su.sys.size[2] / 2
    return {
        "t": t,
        "robots": robots,
        "boxes": [{"size": su.sys.size, "poses": q[:, su.sys.box_q], "name": "box"}],
        "points": q[:, su.sys.box_q][:, :3],
        "plane": ((0.0, 0.0, table - 4e-4), (0.0, 0.0, 1.0), 0.4),
    }
