"""Arimoto & Yoshida 2010 Sec. 6: blind grasping of an arbitrary-shaped object under rolling."""

from __future__ import annotations

import numpy as np

from pfaff.control.blind_grasp import BlindGrasp
from pfaff.geometry.morse import leaf_hessian
from pfaff.manipulation.rolling import (
    frobenius_defect,
    integrate_arclength,
    integrate_arclength_angle,
)
from pfaff.scenarios.common import planar_animation, stage_projection_param, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions, project_state
from pfaff.systems.rolling_fingers import (
    FINGER_JOINTS,
    SHAPES,
    SPLINE_POINTS,
    contact_monitor,
    grasp_outlines,
    grasp_system,
    initial_configuration,
    make_contour,
)

#: the default spline object as a parameter string 'x,y;x,y;...' [m]
SPLINE_TEXT = ";".join(f"{x:.3f},{y:.3f}" for x, y in SPLINE_POINTS)


def parse_points(text: str) -> np.ndarray:
    """``"x,y;x,y;..."`` -> (N, 2) array (ValueError naming the bad entry)."""
    out = []
    for k, item in enumerate(text.split(";")):
        try:
            x, y = (float(v) for v in item.split(","))
        except ValueError:
            raise ValueError(f"spline point {k} {item!r} is not 'x,y'") from None
        out.append((x, y))
    return np.array(out)


@scenario(
    "rolling-grasp",
    shape=Param("ellipse", "object contour", choices=SHAPES),
    points=Param(SPLINE_TEXT, "spline object: 'x,y;x,y;...' in the object frame [m]"),
    f_d=Param(1.0, "desired squeezing force f_d [N] (> 0)", positive=True),
    damping=Param(0.008, "joint damping c_i [N m s/rad]", positive=True),
    k_r=Param(200.0, "rotational-moment gain k_r [N/m] (derived term, see blind_grasp)", low=0.0),
    k_q=Param(0.01, "joint posture gain k_q [N m/rad] (added term, see blind_grasp)", low=0.0),
    r1=Param(0.010, "fingertip radius r_1 [m]", positive=True),
    r2=Param(0.012, "fingertip radius r_2 [m]", positive=True),
    mass=Param(0.030, "object mass M [kg]", positive=True),
    x0=Param(0.006, "object centre x at the start [m] (off-centre)"),
    y0=Param(0.085, "object centre y at the start [m]"),
    theta0=Param(
        1.75, "object angle at the start [rad] (short axis 0.18 rad off the finger line)"
    ),
    gap=Param(0.0, "initial gap of fingertip 2 from the object [m]"),
    project_tol=Param(1e-3, "gaps up to this are projected onto contact [m]", positive=True),
    t_end=Param(5.0, "simulated time [s]", positive=True),
    dt=Param(2.5e-4, "integrator step = controller period [s] (4 kHz)", positive=True),
    law=Param(
        "sampled",
        "'sampled': the controller at 1/dt, torque held (a digital controller); "
        "'continuous': the law as force elements evaluated at every RK4 stage (the "
        "paper's continuous-time law; dt = 1e-3 suffices)",
        choices=("sampled", "continuous"),
    ),
    stage_projection=stage_projection_param(0.07),
)
def rolling_grasp(p: dict) -> ScenarioResult:
    """Two fingers (2 and 3 joints, horizontal plane, g = 0) grasp an object by rolling.

    The object (contour ``shape``: ellipse 26 x 18 mm semi-axes, superellipse
    p = 4 24 x 18 mm, or a periodic cubic spline through ``points``), mass 30 g,
    inertia of a uniform plate with its outline, starts off-centre and tilted;
    the fingertips (discs r_1 = 10 mm, r_2 = 12 mm) are pre-shaped in contact.
    Links (chosen, the paper gives no table here): finger 1 60/50 mm, 40/30 g;
    finger 2 50/40/30 mm, 40/30/20 g; uniform bars; bases at x = -/+ 45 mm.
    The blind grasping law (pfaff.control.blind_grasp) uses the finger joints
    only: f_d = 1 N, c = 0.008 N m s/rad, k_r = 200 N/m (derived rotational
    term), k_q = 0.01 N m/rad (added posture term; k_q = 0 leaves the ellipse
    and spline grasps drifting at 7e-4 / 5.5e-3 rad/s).
    Constraints: contact Q_i (eq. 67) and rolling (eq. 71) per finger.
    The contact arclength s_i is read from the geometry at every sample and,
    independently, integrated from the rolling ODE (kappa + 1/r_i) s' =
    phi_i' - theta' in the relative angle beta_i = phi_i - theta (exact for the
    sampled motion, see ``integrate_arclength_angle``); the same ODE in time from
    the sampled rates is reported as ``arclength_ode_mismatch_sampled_rate``
    (a spline through 4 kHz samples of the rate). Energy = kinetic + the
    controller's potential V. The controller runs at dt = 0.25 ms (4 kHz): its
    zero-order hold from rest injects ~dt^4 (pfaff.control.blind_grasp). With
    ``law=continuous`` the law is evaluated at every RK4 stage instead (force
    elements: the finger dampers and V), as in the paper's analysis; then the
    energy only falls and dt = 1 ms gives the same figures.
    rolling_slip_max is the largest tangential velocity of a fingertip's
    material contact point relative to the object's, from Pinocchio's frame
    velocities and the contour geometry (pfaff.manipulation.slip), not from
    the rolling rows that the velocity correction sets to zero.
    """
    contour = make_contour(p["shape"], parse_points(p["points"]))
    if not p["f_d"] > 0:
        raise ValueError(f"f_d must be > 0 N, got {p['f_d']}")
    radii = (p["r1"], p["r2"])
    mech, contacts, cset = grasp_system(contour, p["mass"], radii)
    q0 = initial_configuration(
        contour, (p["x0"], p["y0"], p["theta0"]), radii, (0.0, p["gap"]), (np.pi + 0.05, 0.05),
        tip2_angle=np.pi - 0.5,
    )  # fmt: skip
    gap0 = [
        float(c.geometry(mech.compute(q0, np.zeros(8), cset.frames)).d - c.r) for c in contacts
    ]
    worst = max(abs(g) for g in gap0)
    if worst > p["project_tol"]:
        raise ValueError(
            f"a fingertip is {worst:.4g} m from the object at the start "
            f"(more than project_tol = {p['project_tol']:g} m): refusing to project it "
            "onto contact"
        )
    opt = SimOptions(dt=p["dt"], control_dt=p["dt"], stage_projection=p["stage_projection"])
    q0, _ = project_state(cset, q0, np.zeros(8), opt)
    ctrl = BlindGrasp(
        ("f1_tip", "f2_tip"), FINGER_JOINTS, radii, p["f_d"], p["damping"], p["k_r"], 8,
        k_q=p["k_q"],
    )  # fmt: skip
    frob = frobenius_defect(cset, q0, [1, 3])
    # continuous: no hold, the law inside the integrator
    law = {"forces": ctrl.force_elements(q0)} if p["law"] == "continuous" else {"controller": ctrl}
    traj, wall = timed_simulate(cset, q0, np.zeros(8), p["t_end"], opt, **law)
    return _result(p, mech, cset, contacts, contour, ctrl, traj, wall, gap0, frob)


def _result(p, mech, cset, contacts, contour, ctrl, traj, wall, gap0, frob) -> ScenarioResult:
    a = traj.arrays()
    t, q, v, lam = a["t"], a["q"], a["v"], a["lambda"]
    mon = contact_monitor(mech, cset, contacts, ctrl, q, v, lam)
    slip, L = mon["slip"], contour.length
    s_unw = np.unwrap(mon["s"], period=L, axis=0)
    beta = np.column_stack([q[:, 0:2].sum(1) - q[:, 7], q[:, 2:5].sum(1) - q[:, 7]])
    s_ode = np.column_stack(
        [
            integrate_arclength_angle(beta[:, i], s_unw[0, i], contour, c.r)
            for i, c in enumerate(contacts)
        ]
    )
    mismatch = np.abs(s_ode - s_unw)
    tail = max(1, (len(t) - 1) // 10)
    # diagnostic: the same ODE in time, driven by the sampled rates (spline of phi' - theta')
    s_rate = np.column_stack(
        [
            integrate_arclength(t, mon["rel_rate"][:, i], s_unw[0, i], contour, c.r)
            for i, c in enumerate(contacts)
        ]
    )
    energy = a["kinetic"] + mon["potential"]
    fn = -lam[:, [0, 2]]
    ft = -lam[:, [1, 3]]
    ratio = np.abs(ft) / np.maximum(fn, 1e-300)
    resid = mon["wrench"] / p["f_d"]
    R_unw = s_unw + np.array([c.r for c in contacts]) * np.unwrap(mon["angle"], axis=0)
    # Morse test of V restricted to the constraint leaf at the final state (geometry.morse)
    leaf = leaf_hessian(
        lambda qq: ctrl.potential(mech.compute(qq, None, cset.frames, dynamics=False)), cset, q[-1]
    )
    metrics = {
        "final_wrench_residual": float(resid[-1]),
        "final_speed": float(np.abs(v[-1]).max()),
        "rolling_slip_max": float(np.abs(slip).max()),
        "arclength_ode_mismatch": float(mismatch.max()),
        "arclength_ode_mismatch_sampled_rate": float(np.abs(s_rate - s_unw).max()),
        "energy_increase_max": float(max(0.0, np.diff(energy).max())),
        "min_normal_force": float(fn.min()),
        "max_tangential_ratio": float(ratio.max()),
        "final_normal_forces": [float(x) for x in fn[-1]],
        "energy_drop": float(energy[0] - energy[-1]),
        "final_dissipation_rate": float(  # over the last tenth of the run (J/s)
            (energy[-1 - tail] - energy[-1]) / (t[-1] - t[-1 - tail])
        ),
        "frobenius_defect": frob,
        "leaf_gradient_norm": float(np.linalg.norm(leaf.gradient)),
        "morse_hessian_eigenvalues": [float(x) for x in leaf.eigenvalues],
        "morse_minimum": leaf.is_morse_minimum(),
        "morse_hessian_error": leaf.error,
        "rolling_integral_drift": float(np.abs(R_unw - R_unw[0]).max()),
        "initial_gap": [float(g) for g in gap0],
        "contour_length": L,
        "reparametrisation_error": contour.reparametrisation_error(),
        "contact_arclength_travel": [float(np.ptp(s_unw[:, i])) for i in range(2)],
    }
    anim = planar_animation(mech, t, q)
    idx = np.searchsorted(t, anim["animation_t"])
    lines = list(anim["polylines_xy"])
    lines += grasp_outlines(mech, contour, contacts, q, idx, mon["point"], mon["normal"])
    return ScenarioResult(
        traj,
        metrics,
        wall,
        polylines_xy=lines,
        animation_t=anim["animation_t"],
        extra_arrays={
            "s_geometry": s_unw,
            "s_ode": s_ode,
            "normal_force": fn,
            "tangential_force": ft,
            "energy_closed_loop": energy,
            "wrench_residual": resid,
            "slip": slip,
        },  # fmt: skip
        series_doc={
            "s_geometry": "contact arclength on the object from the geometry (unwrapped) [m]",
            "s_ode": "contact arclength integrated from the rolling ODE [m]",
            "normal_force": "contact normal forces -lambda_Q [N]",
            "tangential_force": "contact tangential forces -lambda_R [N]",
            "energy_closed_loop": "kinetic energy + controller potential V [J]",
            "wrench_residual": "|sum of the wrench vectors (eq. 77)| / f_d",
            "slip": "tangential velocity of the fingertip's material contact point relative "
            "to the object's, from Pinocchio frame velocities (T, 2) [m/s]",
        },
        plots={
            "wrench_residual": {
                "title": "force/torque balance: |sum w_i| / f_d",
                "ylabel": "residual",
                "log": True,
                "series": {"residual": np.maximum(resid, 1e-16)},
            },
            "energy": {
                "title": "closed-loop energy K + V",
                "ylabel": "energy [J]",
                "series": {"E": energy},
            },
            "contact_forces": {
                "title": "contact forces",
                "ylabel": "force [N]",
                "series": {
                    "normal 1": fn[:, 0],
                    "normal 2": fn[:, 1],
                    "tangential 1": ft[:, 0],
                    "tangential 2": ft[:, 1],
                },  # fmt: skip
            },
            "arclength": {
                "title": "contact arclength: geometry vs rolling ODE",
                "ylabel": "|s_ode - s_geometry| [m]",
                "log": True,
                "series": {
                    f"contact {i + 1}": np.maximum(mismatch[:, i], 1e-16) for i in range(2)
                },
            },
        },
        notes=(
            "Rotational-moment term of the blind grasping law derived as the gradient of "
            "k_r/2 (r1 phi1 - r2 phi2 - Phi0)^2 (the paper's magnitude N was not recovered), "
            "plus a weak joint posture term k_q/2 |q - q_ref|^2 (not in the paper: without it "
            "the ellipse and spline grasps drift, see pfaff.control.blind_grasp); "
            f"Frobenius defect of the rolling forms at the start: {frob:.2g}."
        ),
    )
