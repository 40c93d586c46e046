"""What the yz-* scenarios share: parameters, the plant from them, the force-loop
probe, the step mask, the plots (Yoshikawa & Zheng, IJRR 1993, Sec. 5).

The plant is :class:`~pfaff.systems.yz_planar.YZPlanarPlant`, the references are in
:mod:`pfaff.systems.yz_references`.
"""

from __future__ import annotations

import math

import numpy as np

from pfaff.manipulation.grasp import GRASP_TYPES
from pfaff.scenarios.common import stage_projection_param, timed_simulate
from pfaff.scenarios.registry import Param
from pfaff.simulate import SimOptions, simulate
from pfaff.systems.yz_planar import YZ_MODELS, YZPlanarPlant, internal_force
from pfaff.systems.yz_references import table2

YZ_COMMON_PARAMS = dict(
    spacing=Param(
        0.12, "hole spacing on the object [m] (chosen; 0 is not force-closure)", low=0.0
    ),
    base_x=Param(0.08, "arm bases at (-base_x, 0) and (+base_x, 0) [m] (chosen)", positive=True),
    x0=Param(-0.025, "initial object x [m] (chosen); x moves +0.05 m in 0.8 s (Sec. 5.3)"),
    y0=Param(0.13, "initial object y [m] (chosen)"),
    distance=Param(0.05, "x travel [m] (Sec. 5.3)"),
    t_move=Param(0.8, "duration of the motion [s] (Sec. 5.3)", positive=True),
    t_acc=Param(0.2, "quartic acceleration / deceleration time [s] (chosen)", positive=True),
    model_mass_error=Param(0.0, "relative error of the controller's object mass", low=-0.9),
    model_inertia_error=Param(0.0, "relative error of the controller's object inertia", low=-0.9),
    step_exclusion_s=Param(
        0.03, "force errors exclude this long after each Table 2 step [s]", low=0.0
    ),
    dt=Param(2e-3, "integrator step [s] (= control period, 500 Hz, Sec. 5.1)", positive=True),
    control_dt=Param(2e-3, "controller period [s] (500 Hz, Sec. 5.1)", positive=True),
    stage_projection=stage_projection_param(0.037),
    grasp_type=Param(
        "frictional_point",
        "grasp type of both arms (Sec. 2.3; the plant models pins)",
        choices=GRASP_TYPES,
    ),
    model=Param(
        "pinocchio",
        "the plant: a Pinocchio model (relative arm angles in q), or the closed form "
        "(absolute arm angles, its compute called from the compiled loop), its witness",
        choices=YZ_MODELS,
    ),
    integral_rule=Param(
        "trapezoid",
        "force integral over a hold (eq. 42-43): mean of its start and end "
        "forces, or the end reading only",
        choices=("trapezoid", "end"),
    ),
)


def yz_plant(
    p: dict, wall_y: float | None = None, kind: str = "frictional_point"
) -> YZPlanarPlant:
    """The planar plant of the yz-* scenarios from their parameters."""
    return YZPlanarPlant(
        p["spacing"], [(-p["base_x"], 0.0), (p["base_x"], 0.0)], wall_y=wall_y,
        contact_h=p.get("contact_h", 0.01), grasp_kind=p.get("grasp_type", kind),
        mass_error=p["model_mass_error"], inertia_error=p["model_inertia_error"],
        model=p["model"],
    )  # fmt: skip


#: the contact point of the object for the scenarios with a surface
CONTACT_H_PARAM = Param(0.01, "the object's contact point is (0, contact_h) in its frame [m]")

#: the yz-* scenarios' own series in trajectory.npz
YZ_SERIES_DOC = {
    "constraint_force": "f_F: normal force of the object on the surface [N]",
    "internal_force": "average push of the two pins f_IS/sqrt(2) [N]",
    "desired_forces": "Table 2 (constraint, internal) [N]",
}


def run_task(su: YZPlanarPlant, cset, r0, ref, p: dict, mode: int, T: float):
    """One run of the paper's controller from the object at ``r0`` for ``T`` seconds:
    returns ``(q0, trajectory, its arrays, wall seconds)``."""
    q0 = su.initial_q(np.array(r0))
    ctrl = su.controller(ref, p["control_dt"], mode=mode, rule=p["integral_rule"])
    opt = SimOptions(
        dt=p["dt"], control_dt=p["control_dt"], stage_projection=p["stage_projection"]
    )
    traj, wall = timed_simulate(cset, q0, np.zeros(7), T, opt, controller=ctrl)
    return q0, traj, traj.arrays(), wall


def internal_vs_table2(su: YZPlanarPlant, a: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(f_I, f_d)``: the pins' average push at every sample and Table 2 there."""
    fI = np.array([internal_force(su, q, lam) for q, lam in zip(a["q"], a["lambda"])])
    return fI, np.array([table2(ti) for ti in a["t"]])


def step_mask(t, steps, excl) -> np.ndarray:
    """False within ``excl`` seconds after each step time."""
    keep = np.ones(t.size, bool)
    for ts in steps:
        keep &= ~((t >= ts - 1e-12) & (t < ts + excl))
    return keep


def fit_decay(t, e) -> tuple[float, float]:
    """Fit ``e_k = e_0 rho^k`` on a sampled error: returns ``((1 - rho)/dt, -ln(rho)/dt)``.

    ``(1 - rho)/dt`` is the gain K of the sampled integral loop ``e_{k+1} = (1 - K dt) e_k``
    (eq. 45-46 with the force held over each period); ``-ln(rho)/dt`` the exponential rate.
    """
    ok = np.abs(e) > 1e-4 * np.abs(e).max()
    ok &= np.cumprod(ok).astype(bool)
    tt, ee = t[ok][1:], np.log(np.abs(e[ok][1:]))
    slope = np.polyfit(tt, ee, 1)[0]
    dt = float(np.median(np.diff(t)))
    rho = math.exp(slope * dt)
    return (1 - rho) / dt, -slope


def decay_probe(su, cset, q0, ref, p, f_index) -> tuple[float, float, float, float]:
    """A short run from an unloaded grasp (integrators at -f_d/K): fitted force-loop rates."""
    ctrl = su.controller(ref, p["control_dt"], True, 1 if f_index else 0, p["integral_rule"])
    opt = SimOptions(
        dt=p["control_dt"],
        control_dt=p["control_dt"],
        progress=False,
        stage_projection=p["stage_projection"],
    )
    tr = simulate(cset, q0, np.zeros(7), 0.06, opt, controller=ctrl)
    a = tr.arrays()
    t = a["t"]
    fI, fd = internal_vs_table2(su, a)
    kI = fit_decay(t, fd[:, 1] - fI)
    kF = fit_decay(t, fd[:, 0] + a["lambda"][:, 4]) if f_index else (np.nan, np.nan)
    return (*kF, *kI)


def yz_plots(t, pos, pos_d, labels, fF, fFd, fI, fId, tau):
    plots = {
        "positions": {
            "title": "object position vs desired (Figs. 7-9)",
            "ylabel": "x, y [m], phi [rad]",
            "series": {
                **{labels[i]: pos[:, i] for i in range(pos.shape[1])},
                **{labels[i] + " desired": pos_d[:, i] for i in range(pos.shape[1])},
            },
        },
        "position_errors": {
            "title": "position errors",
            "ylabel": "|error| [m, rad]",
            "log": True,
            "series": {labels[i]: np.abs(pos - pos_d)[:, i] + 1e-16 for i in range(pos.shape[1])},
        },
        "forces": {
            "title": "constraint and internal force vs Table 2",
            "ylabel": "force [N]",
            "series": {"internal force": fI, "internal desired": fId},
        },
        "torques": {
            "title": "joint torques",
            "ylabel": "torque [N m]",
            "series": {f"arm{i // 2 + 1} tau{i % 2 + 1}": tau[:, i] for i in range(4)},
        },
    }
    if fF is not None:
        plots["forces"]["series"].update({"constraint force": fF, "constraint desired": fFd})
    return plots


def yz_static_lines(su: YZPlanarPlant, xs):
    lines = [(np.array([b[0] for b in (a.base for a in su.arms)]), np.zeros(2))]
    if su.wall_y is not None:
        lines.append((np.array([xs[0] - 0.08, xs[1] + 0.08]), np.full(2, su.wall_y)))
    return lines
