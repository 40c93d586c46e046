"""Arimoto & Yoshida 2010 Sec. 6: blind grasping of an arbitrary-shaped object under rolling."""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet
from pfaff.control.blind_grasp import BlindGrasp
from pfaff.geometry.morse import leaf_hessian
from pfaff.manipulation.contours import Contour, Ellipse, SplineContour, Superellipse
from pfaff.manipulation.rolling import (
    RollingContact,
    frobenius_defect,
    integrate_arclength,
    integrate_arclength_angle,
    rolling_constraints,
)
from pfaff.manipulation.slip import material_slip
from pfaff.mechanism import ModelBuilder, PlanarChain, PlanarLink
from pfaff.scenarios.common import planar_animation, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions, project_state

#: default spline object: an egg-like convex outline through 7 points [m]
SPLINE_POINTS = (
    "0.026,0.000;0.016,0.017;-0.004,0.021;-0.021,0.012;-0.024,-0.006;-0.010,-0.019;0.012,-0.016"
)

F1 = [PlanarLink(0.060, 0.040, inertia=0.040 * 0.060**2 / 12),
      PlanarLink(0.050, 0.030, inertia=0.030 * 0.050**2 / 12)]  # fmt: skip
F2 = [PlanarLink(0.050, 0.040, inertia=0.040 * 0.050**2 / 12),
      PlanarLink(0.040, 0.030, inertia=0.030 * 0.040**2 / 12),
      PlanarLink(0.030, 0.020, inertia=0.020 * 0.030**2 / 12)]  # fmt: skip
BASE1, BASE2 = (-0.045, 0.0), (0.045, 0.0)


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


def make_contour(shape: str, points: str = SPLINE_POINTS) -> Contour:
    """The object's contour for ``shape`` in {ellipse, superellipse, spline}."""
    if shape == "ellipse":
        return Ellipse(0.026, 0.018)
    if shape == "superellipse":
        return Superellipse(0.024, 0.018, 4)
    if shape == "spline":
        return SplineContour(parse_points(points))
    raise ValueError(f"unknown shape {shape!r}; valid: ellipse, superellipse, spline")


def grasp_mechanism(mass: float, inertia: float):
    """Finger 1 (2 joints), finger 2 (3 joints), the object (x, y, theta): one model, g = 0."""
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_planar_chain(PlanarChain(F1, name="f1", base=BASE1))
    b.add_planar_chain(PlanarChain(F2, name="f2", base=BASE2))
    b.add_planar_body("obj", mass, inertia)
    return b.build("two-fingers")


def _ik2(x, y, l1, l2, elbow: float) -> np.ndarray:
    c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2 * l1 * l2)
    if not -1.0 <= c2 <= 1.0:
        raise ValueError(f"fingertip target ({x:.4f}, {y:.4f}) m is out of the finger's reach")
    q2 = elbow * np.arccos(c2)
    q1 = np.arctan2(y, x) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.array([q1, q2])


def initial_configuration(contour: Contour, pose, radii, gaps, approach, tip2_angle):
    """Fingers pre-shaped so that each tip centre lies at ``r_i + gap_i`` along the normal.

    ``approach`` = world directions (rad) from the object centre towards the
    two contacts; ``tip2_angle`` = absolute angle of finger 2's last link.
    """
    x, y, th = pose
    R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    centres = []
    for ang, r, gap in zip(approach, radii, gaps):
        far = R.T @ (np.array([np.cos(ang), np.sin(ang)]) * 1.0)
        g, _, n, _ = contour.local(contour.foot_point(far))
        centres.append(np.array([x, y]) + R @ (g + (r + gap) * n))
    c1 = centres[0] - BASE1
    q1 = _ik2(c1[0], c1[1], F1[0].length, F1[1].length, elbow=-1.0)
    wrist = centres[1] - F2[2].length * np.array([np.cos(tip2_angle), np.sin(tip2_angle)])
    w = wrist - BASE2
    q2 = _ik2(w[0], w[1], F2[0].length, F2[1].length, elbow=1.0)
    q2 = np.append(q2, tip2_angle - q2.sum())
    return np.concatenate([q1, q2, [x, y, th]])


@scenario(
    "rolling-grasp",
    shape=Param("ellipse", "object contour", choices=("ellipse", "superellipse", "spline")),
    points=Param(SPLINE_POINTS, "spline object: 'x,y;x,y;...' in the object frame [m]"),
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
    zero-order hold from rest injects ~dt^4 (pfaff.control.blind_grasp).
    rolling_slip_max is the largest tangential velocity of a fingertip's
    material contact point relative to the object's, from Pinocchio's frame
    velocities and the contour geometry (pfaff.manipulation.slip), not from
    the rolling rows that the velocity correction sets to zero.
    """
    contour = make_contour(p["shape"], p["points"])
    if not p["f_d"] > 0:
        raise ValueError(f"f_d must be > 0 N, got {p['f_d']}")
    P = contour.outline(400)[:-1]
    area = 0.5 * np.sum(P[:, 0] * np.roll(P[:, 1], -1) - np.roll(P[:, 0], -1) * P[:, 1])
    cross = P[:, 0] * np.roll(P[:, 1], -1) - np.roll(P[:, 0], -1) * P[:, 1]
    nxt = np.roll(P, -1, axis=0)
    J0 = np.sum(cross * (P[:, 0] ** 2 + P[:, 0] * nxt[:, 0] + nxt[:, 0] ** 2
                         + P[:, 1] ** 2 + P[:, 1] * nxt[:, 1] + nxt[:, 1] ** 2)) / 12  # fmt: skip
    inertia = p["mass"] * J0 / area  # polar moment of a uniform plate (about the frame origin)
    mech = grasp_mechanism(p["mass"], inertia)
    radii = (p["r1"], p["r2"])
    contacts = [RollingContact(contour, "obj", f"f{i + 1}_tip", radii[i]) for i in range(2)]
    cset = ConstraintSet(mech, rolling_constraints(contacts[0]) + rolling_constraints(contacts[1]))
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
    opt = SimOptions(dt=p["dt"], control_dt=p["dt"])
    q0, _ = project_state(cset, q0, np.zeros(8), opt)
    ctrl = BlindGrasp(
        ("f1_tip", "f2_tip"),
        ([0, 1], [2, 3, 4]),
        radii,
        p["f_d"],
        p["damping"],
        p["k_r"],
        8,
        k_q=p["k_q"],
    )
    frob = frobenius_defect(cset, q0, [1, 3])
    traj, wall = timed_simulate(cset, q0, np.zeros(8), p["t_end"], opt, controller=ctrl)
    return _result(p, mech, cset, contacts, contour, ctrl, traj, wall, gap0, frob)


def radii_of(contacts) -> list[float]:
    return [c.r for c in contacts]


def _result(p, mech, cset, contacts, contour, ctrl, traj, wall, gap0, frob) -> ScenarioResult:
    a = traj.arrays()
    t, q, v, lam = a["t"], a["q"], a["v"], a["lambda"]
    T = len(t)
    s_geo, rel, slip, wr, Rang = (np.zeros((T, 2)) for _ in range(5))
    pot = np.zeros(T)
    pts, nrm = np.zeros((T, 2, 2)), np.zeros((T, 2, 2))
    for k in range(T):
        snap = mech.compute(q[k], v[k], cset.frames, dynamics=False)
        ev = cset.evaluate(snap)
        wr_k = ev.A[:, 5:8].T @ lam[k]  # sum of the wrench vectors (eq. 77) = -M_0 x''
        wr[k] = [np.linalg.norm(wr_k), 0.0]
        pot[k] = ctrl.potential(snap)
        for i, c in enumerate(contacts):
            g = c.geometry(snap)
            pts[k, i], nrm[k, i] = g.point, g.n
            rel[k, i] = -g.Jrot @ v[k]  # phi' - theta'
            slip[k, i] = material_slip(mech.model, c, q[k], v[k])[0]
            s_geo[k, i], Rang[k, i] = c.rolling_integral(snap)
    L = contour.length
    s_unw = np.unwrap(s_geo, period=L, axis=0)
    beta = np.column_stack([q[:, 0:2].sum(1) - q[:, 7], q[:, 2:5].sum(1) - q[:, 7]])
    s_ode = np.column_stack(
        [
            integrate_arclength_angle(beta[:, i], s_unw[0, i], contour, c.r)
            for i, c in enumerate(contacts)
        ]
    )
    mismatch = np.abs(s_ode - s_unw)
    tail = max(1, (T - 1) // 10)
    # diagnostic: the same ODE in time, driven by the sampled rates (spline of phi' - theta')
    s_rate = np.column_stack(
        [
            integrate_arclength(t, rel[:, i], s_unw[0, i], contour, c.r)
            for i, c in enumerate(contacts)
        ]
    )
    energy = a["kinetic"] + pot
    fn = -lam[:, [0, 2]]
    ft = -lam[:, [1, 3]]
    ratio = np.abs(ft) / np.maximum(fn, 1e-300)
    resid = wr[:, 0] / p["f_d"]
    R_unw = s_unw + np.array(radii_of(contacts)) * np.unwrap(Rang, axis=0)
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
    outline = contour.outline(120)
    ang = np.linspace(0, 2 * np.pi, 41)
    lines = list(anim["polylines_xy"])
    obj = np.zeros((len(idx), len(outline), 2))
    tips = [np.zeros((len(idx), 41, 2)) for _ in range(2)]
    normals = [np.zeros((len(idx), 2, 2)) for _ in range(2)]
    for j, k in enumerate(idx):
        x, y, th = q[k, 5:8]
        Rm = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        obj[j] = np.array([x, y]) + outline @ Rm.T
        for i, c in enumerate(contacts):
            ctr = mech.compute(q[k], None, [c.tip], dynamics=False).frames[c.tip].p[:2]
            tips[i][j] = ctr + c.r * np.column_stack([np.cos(ang), np.sin(ang)])
            normals[i][j] = [pts[k, i], pts[k, i] + 0.015 * nrm[k, i]]
    lines += [obj, *tips, *normals]
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
