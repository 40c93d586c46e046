"""Aghili Sec. 7.1 and 7.4: PIDC of the slider-crank with a passive joint."""

from __future__ import annotations

import numpy as np

from pfaff.control import FrameTask, JointTask, ProjectedController
from pfaff.control.references import cosine_swing
from pfaff.scenarios.common import decoupling, planar_animation, sign_changes, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.scenarios.slider_crank import MODELS, SLIDER_FRAME, build, engine_of
from pfaff.simulate import SimOptions


def _task(name: str, l: float, ref, slider: str = "slider"):
    """The task and its reference from the crank reference, on the branch q2 = -2 q1
    (``slider``: the name of the slider frame C in the model)."""
    if name == "q1":
        return JointTask([0], ["q1"]), ref
    if name == "q2":
        return JointTask([1], ["q2"]), lambda t: tuple(-2 * x for x in ref(t))
    if name == "slider_x":  # x_C = 2 l cos q1

        def ref_x(t):
            q, dq, ddq = (float(x[0]) for x in ref(t))
            c, s = np.cos(q), np.sin(q)
            return (
                np.array([2 * l * c]),
                np.array([-2 * l * s * dq]),
                np.array([-2 * l * (c * dq * dq + s * ddq)]),
            )

        return FrameTask(slider, "x"), ref_x
    return FrameTask(slider, "y"), lambda t: (np.zeros(1), np.zeros(1), np.zeros(1))


@scenario(
    "slider-crank-pidc",
    m=Param(1.0, "point mass at each link end [kg] (Aghili eq. 68)", positive=True),
    l=Param(1.0, "crank and rod length [m]", positive=True),
    g=Param(9.81, "gravity [m/s^2] along -y", low=0.0),
    amplitude=Param(0.9, "crank swing about q1 = pi/2 [rad]", positive=True),
    freq=Param(0.4, "crank swing frequency [Hz]", positive=True),
    kp=Param(400.0, "G_P of eq. (46) [1/s^2]"),
    kd=Param(40.0, "G_D of eq. (46) [1/s]"),
    initial_error=Param(0.05, "initial crank-angle error [rad]"),
    task=Param(
        "q1",
        "independent coordinate: crank angle q1, rod angle q2, slider x (or slider y, "
        "which the constraint fixes and so cannot parametrise N(A): refused)",
        choices=("q1", "q2", "slider_x", "slider_y"),
    ),
    actuated=Param("0", "actuated joints, comma-separated indices (0: crank, 1: rod)"),
    settle_s=Param(0.5, "metrics 'after' start at this time [s]", low=0.0),
    model=Param(
        "pinocchio",
        "mechanism backend: pinocchio (planar chain) or closed-form (Aghili eq. 68 in "
        "Python); both run on the compiled core, the controller called once per sample",
        choices=MODELS,
    ),
    t_end=Param(5.0, "simulated time [s]", positive=True),
    dt=Param(5e-3, "integrator step = controller period [s]", positive=True),
)
def slider_crank_pidc(p: dict) -> ScenarioResult:
    """Slider-crank with only the crank actuated, tracking a crank angle through the singularities.

    Aghili Sec. 7.1 (PIDC, eq. 45-46) with the passive-joint law of Sec. 7.4
    (eq. 55-62): the rod joint carries no torque, the torque that keeps it
    unloaded lies in N(A)^perp and leaves the motion unchanged. The reference
    q1_d(t) = pi/2 - amplitude cos(2 pi freq t) swings the crank through the
    singular configuration q1 = pi/2 (where A -> 0) twice per period. The
    controllability condition (64), N(A) n B^perp = {0}, is checked at every
    controller sample (uncontrollable_samples counts where it fails). The
    controller runs at 1/dt with zero-order hold on the same model as the plant.
    The tracking error is reported on the crank angle whatever the task.
    passive_torque_max is read from the trajectory's ``tau``, the torque the
    simulator held and applied on the passive joints (not the controller's
    own residual); the tests also check that the motion equals that of the
    PIDC with every joint actuated (the torque moved off the rod lies in
    N(A)^perp). model=pinocchio (default) runs the Pinocchio chain; model=closed-form
    the closed form of eq. 68 (its compute called from the compiled loop), the
    tests' witness (same trajectory and metrics).
    """
    mech, cset = build(p["m"], p["l"], p["g"], p["model"])
    ref = cosine_swing(np.pi / 2, p["amplitude"], p["freq"])
    task, task_ref = _task(p["task"], p["l"], ref, SLIDER_FRAME[p["model"]])
    try:
        actuated = [int(j) for j in p["actuated"].split(",") if j.strip()]
    except ValueError:
        raise ValueError(
            f"actuated must be comma-separated joint indices (0, 1), got {p['actuated']!r}"
        ) from None
    ctrl = ProjectedController(cset, task, task_ref, kp=p["kp"], kd=p["kd"], actuated=actuated)
    q1 = float(ref(0.0)[0][0]) + p["initial_error"]
    q0 = np.array([q1, -2 * q1])
    ctrl.check(q0)
    opt = SimOptions(
        dt=p["dt"],
        control_dt=p["dt"],
        potential_offset=-p["m"] * p["g"] * p["l"],
        engine=engine_of(p["model"]),
    )
    traj, wall = timed_simulate(cset, q0, np.zeros(2), p["t_end"], opt, controller=ctrl)
    a = traj.arrays()
    t = a["t"]
    passive = [j for j in range(2) if j not in ctrl.actuated]
    q1d = np.array([ref(ti)[0][0] for ti in t])
    err = a["q"][:, 0] - q1d
    after = t >= p["settle_s"]
    metrics = {
        "rms_tracking_error": float(np.sqrt(np.mean(err**2))),
        "max_tracking_error_after": float(np.abs(err[after]).max()) if after.any() else np.nan,
        "passive_torque_max": float(np.abs(a["tau"][:, passive]).max()) if passive else 0.0,
        "uncontrollable_samples": int(np.sum(a["controllable"] < 0.5)),
        "singular_crossings": sign_changes(np.cos(a["q"][:, 0])),
        **decoupling(cset, a["q"], every=10),
    }
    return ScenarioResult(
        traj,
        metrics,
        wall,
        **planar_animation(mech, t, a["q"]),
        static_lines=[(np.array([-2.2 * p["l"], 2.2 * p["l"]]), np.zeros(2))],
        extra_arrays={"q1_desired": q1d},
        series_doc={"q1_desired": "reference crank angle [rad]"},
        plots={
            "tracking": {
                "title": "crank-angle tracking error (PIDC, passive rod joint)",
                "ylabel": "|q1 - q1_d| [rad]",
                "log": True,
                "series": {
                    "|error|": np.abs(err),
                    "|cos q1| (singular at 0)": np.cos(a["q"][:, 0]),
                },
            },
            "torques": {
                "title": "joint torques (passive joints carry none)",
                "ylabel": "tau [N m]",
                "series": {
                    name + (" (passive)" if j in passive else ""): a["tau"][:, j]
                    for j, name in enumerate(("crank", "rod"))
                },
            },
        },
    )
