"""Arimoto Sec. 4-5: the handwriting robot and the same hybrid law on the Panda."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pinocchio as pin
from scipy.optimize import minimize_scalar

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.control import arimoto as ar
from pfaff.geometry.submanifold import submanifold_distance
from pfaff.mechanism import PinocchioMechanism, load_robot, robot_urdf
from pfaff.mechanism.robots import ROBOTS
from pfaff.scenarios.common import timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions

TIP = "tip"
H0 = 0.1  # shoulder height above the base [m]
LINKS = (0.2, 0.2, 0.12)  # upper arm, forearm, pencil [m]
MASSES = (0.04, 0.008, 0.005, 0.003)  # column, upper arm, forearm, pencil [kg]


def _rod(m: float, length: float, r: float = 0.005) -> pin.Inertia:
    """A solid cylinder of radius ``r`` along the local x axis from the joint."""
    i_ax, i_tr = 0.5 * m * r * r, m * (3 * r * r + length * length) / 12
    return pin.Inertia(m, np.array([length / 2, 0, 0]), np.diag([i_ax, i_tr, i_tr]))


def handwriting_arm(gravity: float = 9.81) -> PinocchioMechanism:
    """The 4-joint handwriting robot: base yaw (RZ) and three pitch joints (RY).

    A column of height ``H0`` carries the shoulder; links ``LINKS`` (the last is
    the pencil, frame ``tip`` at its end), masses ``MASSES`` (thin cylinders).
    Frames ``link1..3`` at the pitch joints, ``tip`` at the pencil tip.
    """
    model = pin.Model()
    model.gravity.linear[:] = [0.0, 0.0, -gravity]
    j = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "yaw")
    col = pin.Inertia(MASSES[0], np.array([0, 0, H0 / 2]), np.diag([4e-6, 4e-6, 2e-6]))
    model.appendBodyToJoint(j, col, pin.SE3.Identity())
    model.addFrame(pin.Frame("base", j, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    off = np.array([0.0, 0.0, H0])
    for i, (length, m) in enumerate(zip(LINKS, MASSES[1:])):
        j = model.addJoint(j, pin.JointModelRY(), pin.SE3(np.eye(3), off), f"pitch{i + 1}")
        model.appendBodyToJoint(j, _rod(m, length), pin.SE3.Identity())
        model.addFrame(pin.Frame(f"link{i + 1}", j, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
        off = np.array([length, 0.0, 0.0])
    model.addFrame(pin.Frame(TIP, j, 0, pin.SE3(np.eye(3), off), pin.FrameType.OP_FRAME))
    return PinocchioMechanism(model, "handwriting-robot")


def check_target(xd: float, yd: float, xi: float) -> None:
    """Refuse a target outside the reachable part of the plane ``z = xi`` (ValueError)."""
    reach = 0.95 * sum(LINKS)
    r, dz = math.hypot(xd, yd), xi - H0
    inner = max(abs(LINKS[0] - LINKS[1]) - LINKS[2], 0.0)
    r_max = math.sqrt(max(reach**2 - dz**2, 0.0))
    r_min = max(0.05, math.sqrt(max(inner**2 - dz**2, 0.0)))
    if not (r_min <= r <= r_max):
        raise ValueError(
            f"target (x_d, y_d) = ({xd:.4g}, {yd:.4g}) m is outside the reachable part of the "
            f"plane z = {xi:.4g} m: its distance from the base axis must lie in "
            f"[{r_min:.4g}, {r_max:.4g}] m (95 % of the reach {sum(LINKS):.3g} m), got {r:.4g} m"
        )


def posture_on_plane(xd: float, yd: float, xi: float, psi: float, elbow: float = 1.0):
    """Joint angles with the tip at ``(xd, yd, xi)`` and the pencil at angle ``psi``.

    ``psi`` is the pencil's elevation in the vertical plane through the base axis
    (``-pi/2`` points straight down); ``elbow = +1`` the elbow-up branch. The
    curve ``psi -> q`` parametrises EM1 (eq. 46) for a target. ``None`` when the
    wrist is out of reach.
    """
    l1, l2, l3 = LINKS
    r = math.hypot(xd, yd)
    wr, wz = r - l3 * math.cos(psi), xi - l3 * math.sin(psi) - H0
    c2 = (wr * wr + wz * wz - l1 * l1 - l2 * l2) / (2 * l1 * l2)
    if abs(c2) > 1:
        return None
    a2 = -elbow * math.acos(c2)
    a1 = math.atan2(wz, wr) - math.atan2(l2 * math.sin(a2), l1 + l2 * math.cos(a2))
    return np.array([math.atan2(yd, xd), -a1, -a2, -(psi - a1 - a2)])


def reference_point(cset, q0, xd, yd, xi, elbow=1.0, psi_range=(-2.6, -0.6)):
    """``q*``: the point of EM1 nearest to ``q0`` in the submanifold distance (Sec. 5).

    EM1 is the curve :func:`posture_on_plane` in ``psi``; a bounded scalar search
    over ``psi`` of :func:`~pfaff.geometry.submanifold.submanifold_distance`
    (one constrained shooting problem per evaluation). Returns ``(q*, d(q0, q*))``.
    """

    def dist(psi):
        q = posture_on_plane(xd, yd, xi, psi, elbow)
        if q is None:
            return 1e3
        try:
            return submanifold_distance(cset, q0, q, tol=1e-8)
        except ValueError:
            return 1e3

    res = minimize_scalar(dist, bounds=psi_range, method="bounded", options={"xatol": 1e-4})
    return posture_on_plane(xd, yd, xi, res.x, elbow), float(res.fun)


def monitor(mech, cset, ctrl: ar.ArimotoHybrid, arrays: dict, xi: float, alpha=None):
    """Monitors along a run: E, W_alpha, dlambda (eq. 62 and simulated), EM1 distance."""
    q, v, t = arrays["q"], arrays["v"], arrays["t"]
    rows = []
    for i in range(len(t)):
        snap = mech.compute(q[i], v[i], [ctrl.frame])
        x, J, w, dx, xdot = ctrl.task_terms(snap)
        J3 = snap.frames[ctrl.frame].J[:3]
        wdot_v = -float(snap.frames[ctrl.frame].drift[2])
        f = ctrl.zeta * math.sqrt(ctrl.k) * xdot + ctrl.k * dx
        rows.append(
            (
                snap.M,
                J,
                w,
                dx,
                ar.energy(snap.M, v[i], dx, ctrl.k),
                ar.delta_lambda(snap.M, snap.h, snap.g, v[i], J, w, wdot_v, f, ctrl.c),
                ar.distance_to_em1(snap.M, J3, ar.em1_residual(x, ctrl.target, xi)),
                ar.sigma_bounds(J, w),
                x,
                float(np.linalg.eigvalsh(snap.M)[-1]),
            )
        )
    sig = np.array([r[7] for r in rows])
    sigma_m, sigma_M = float(sig[:, 0].min()), float(sig[:, 1].max())
    a = ar.paper_alpha(ctrl.k, sigma_M) if alpha is None else alpha
    W = np.array([ar.w_alpha(r[0], v[i], r[1], r[2], r[3], ctrl.k, a) for i, r in enumerate(rows)])
    return {
        "E": np.array([r[4] for r in rows]),
        "W": W,
        "dlam62": np.array([r[5] for r in rows]),
        "dist_em1": np.array([r[6] for r in rows]),
        "x": np.array([r[8] for r in rows]),
        "g_M": max(r[9] for r in rows),
        "sigma_m": sigma_m,
        "sigma_M": sigma_M,
        "alpha": a,
        "target": ctrl.target,
    }


def fit_rate(t: np.ndarray, W: np.ndarray, floor: float) -> float:
    """Least-squares slope of ``-log W`` where ``W > floor`` (after the first 0.2 s)."""
    sel = (W > floor) & (t >= 0.2)
    if sel.sum() < 3:
        return float("nan")
    return float(-np.polyfit(t[sel], np.log(W[sel]), 1)[0])


def project_xz(mech, t, q, names, max_frames=150):
    """Planar drawing: the frames' (x, z) at (at most) ``max_frames`` samples."""
    idx = np.unique(np.linspace(0, len(q) - 1, min(len(q), max_frames)).astype(int))
    out = np.zeros((len(idx), len(names), 2))
    for k, i in enumerate(idx):
        snap = mech.compute(q[i], None, names, dynamics=False)
        for j, n in enumerate(names):
            out[k, j] = snap.frames[n].p[[0, 2]]
    return {"polylines_xy": [out], "animation_t": t[idx]}


def check_gains_warn(where: str, **kw) -> list[str]:
    """Evaluate (56)-(60); warn (``warnings.warn``) naming each violated inequality."""
    bad = ar.violated_conditions(**kw)
    for name in bad:
        warnings.warn(
            f"{where}: gain condition {name} of Arimoto (56)-(60) is violated; running anyway",
            stacklevel=3,
        )
    return bad


def _run(mech, cset, ctrl, q0, t_end, dt, xi):
    opt = SimOptions(dt=dt, control_dt=dt)
    traj, wall = timed_simulate(cset, q0, np.zeros(mech.nv), t_end, opt, controller=ctrl)
    a = traj.arrays()
    return traj, wall, a, monitor(mech, cset, ctrl, a, xi)


def _common_metrics(ctrl, a, m, decay_floor):
    lam = -a["lambda"][:, 0]
    W = m["W"]
    return {
        "final_position_error": float(np.linalg.norm(m["x"][-1, :2] - ctrl.target)),
        "final_force_error": float(abs(lam[-1] - ctrl.lambda_d)),
        "lyapunov_increase_max": float(np.diff(W).max()),
        "lyapunov_decay_rate": fit_rate(a["t"], W, decay_floor),
        "lyapunov_decay_rate_paper_bound": ar.paper_rate(ctrl.k, m["sigma_m"], m["sigma_M"]),
        "energy_increase_max": float(np.diff(m["E"]).max()),
        "final_distance_to_em1": float(m["dist_em1"][-1]),
        "eq62_max_error": float(np.abs(m["dlam62"] - (lam - ctrl.lambda_d)).max()),
        "min_contact_force": float(lam.min()),
        "alpha": m["alpha"],
        "sigma_m": m["sigma_m"],
        "sigma_M": m["sigma_M"],
        "inertia_eigenvalue_max": m["g_M"],
    }


def _plots(a, m, lam_d):
    lam = -a["lambda"][:, 0]
    tiny = 1e-300
    return {
        "lyapunov": {
            "title": "Lyapunov functions E (eq. 45) and W_alpha (eq. 47)",
            "ylabel": "[J]",
            "log": True,
            "series": {"E": np.maximum(m["E"], tiny), "W_alpha": np.maximum(m["W"], tiny)},
        },
        "force": {
            "title": "pressing force error |lambda - lambda_d|: simulated and eq. (62)",
            "ylabel": "[N]",
            "log": True,
            "series": {
                "simulated": np.maximum(np.abs(lam - lam_d), tiny),
                "eq. (62)": np.maximum(np.abs(m["dlam62"]), tiny),
            },
        },
        "em1": {
            "title": "tip error |dx| and distance of the posture to EM1 (eq. 46)",
            "ylabel": "[m], [sqrt(kg) m]",
            "log": True,
            "series": {
                "|dx|": np.maximum(np.linalg.norm(m["x"][:, :2] - m["target"], axis=1), tiny),
                "distance to EM1": np.maximum(m["dist_em1"], tiny),
            },
        },
    }


def _arrays_doc(m, lam):
    arrays = {
        "tip_position": m["x"],
        "energy_E": m["E"],
        "W_alpha": m["W"],
        "delta_lambda_eq62": m["dlam62"],
        "distance_to_em1": m["dist_em1"],
        "pressing_force": lam,
    }
    doc = {
        "tip_position": "pencil tip / tool point in the world (T, 3) [m]",
        "energy_E": "E = q'^T H q'/2 + k |dx|^2/2, Arimoto eq. (45) [J]",
        "W_alpha": "W_alpha = E + alpha q'^T H P_phi J^T dx, eq. (47), alpha = k/(2 sigma_M) [J]",
        "delta_lambda_eq62": "lambda - lambda_d from eq. (62) (with the c q' term) [N]",
        "distance_to_em1": "first-order Riemannian distance of q to EM1 [sqrt(kg) m]",
        "pressing_force": "normal force lambda = -lambda_pfaff [N]",
    }
    return arrays, doc


#: sweep starts (x0, y0, psi0); the pencil trails the motion (psi0 < -1.8 rad): with the
#: pencil leaning into it (psi0 >= -1.7 rad) the J^T k dx term lifts the pencil at t = 0
SWEEP_STARTS = ((0.28, 0.0, -1.9), (0.22, 0.02, -2.1), (0.26, -0.06, -1.8), (0.20, -0.02, -2.3))


@scenario(
    "handwriting-robot",
    xd=Param(0.24, "target x_d on the plane [m]"),
    yd=Param(-0.02, "target y_d on the plane [m]"),
    x0=Param(0.20, "initial tip x on the plane [m]"),
    y0=Param(-0.06, "initial tip y on the plane [m]"),
    psi0=Param(-1.9, "initial pencil elevation [rad] (-pi/2: straight down)"),
    xi=Param(0.0, "plane height xi [m] (the base stands on it)", low=-0.1, high=0.1),
    k=Param(10.0, "position gain k [N/m] (paper: 5 ... 20 kg/s^2)", positive=True),
    zeta=Param(math.sqrt(0.5), "damping factor zeta (paper: sqrt(2)/2)", positive=True),
    c=Param(0.03, "joint damping c [N m s/rad]", low=0.0),
    lambda_d=Param(1.0, "desired pressing force lambda_d [N] (> 0: unilateral contact)"),
    t_end=Param(5.0, "simulated time [s]", positive=True),
    dt=Param(5e-4, "integrator step = control period [s]", positive=True),
    qstar=Param(True, "compute q* and the Riemannian distances (shooting, ~5 s)"),
    sweep=Param(True, "also run the initial-posture sweep (4 postures)"),
    sweep_t_end=Param(4.0, "simulated time of each sweep run [s]", positive=True),
)
def handwriting_robot(p: dict) -> ScenarioResult:
    """Arimoto's handwriting robot (Sec. 4-5): a 4-joint arm presses its pencil on z = xi.

    The arm: base yaw joint, shoulder 0.1 m above the base, three pitch joints,
    links 0.2 / 0.2 m and a 0.12 m pencil (l_0 = 0.2 m), masses 0.04 / 0.008 /
    0.005 / 0.003 kg (thin cylinders): the largest inertia eigenvalue stays
    below 0.001 kg m^2 (measured: inertia_eigenvalue_max). Gravity 9.81 m/s^2,
    compensated by g(q). The tip starts at rest on the plane at (x0, y0) with
    pencil elevation psi0 and is regulated by eq. (42) to (x_d, y_d) while
    pressing with lambda_d = 1 N; k = 10 N/m, zeta = sqrt(2)/2 (the paper's
    choices), c = 0.03 N m s/rad (chosen to satisfy (60a), (60b)). The contact
    is unilateral (the run fails if the pencil would lift). The step is 0.5 ms:
    the task damping zeta sqrt(k) acting on the ~1 g effective tip mass gives a
    closed-loop pole near -2300 1/s, which bounds an explicit step. alpha =
    k / (2 sigma_M) with sigma_m, sigma_M (eq. 48) measured over the run. q* is
    the point of EM1 nearest to q(0) in the submanifold distance (a search over
    the one-dimensional EM1 with one shooting problem per point).
    """
    check_target(p["xd"], p["yd"], p["xi"])
    check_target(p["x0"], p["y0"], p["xi"])
    lam_d = ar.check_lambda_d(p["lambda_d"])
    mech = handwriting_arm()
    contact = PointOnPlane(TIP, (0.0, 0.0, 1.0), p["xi"], name="pencil on plane", unilateral=True)
    cset = ConstraintSet(mech, [contact])
    q0 = posture_on_plane(p["x0"], p["y0"], p["xi"], p["psi0"])
    if q0 is None:
        raise ValueError(f"psi0 = {p['psi0']} rad: no posture with the tip at (x0, y0)")
    target = (p["xd"], p["yd"])
    ctrl = ar.ArimotoHybrid(TIP, target, p["k"], p["zeta"], p["c"], lam_d)
    traj, wall, a, m = _run(mech, cset, ctrl, q0, p["t_end"], p["dt"], p["xi"])
    dx0 = float(np.linalg.norm(m["x"][0, :2] - ctrl.target))
    gk = dict(k=p["k"], zeta=p["zeta"], c=p["c"], g_M=m["g_M"], l_0=max(LINKS))
    bad = check_gains_warn(
        "handwriting-robot", **gk, sigma_m=m["sigma_m"], sigma_M=m["sigma_M"], dx0=dx0
    )
    metrics = _common_metrics(ctrl, a, m, 1e-14)
    metrics["gain_conditions_violated"] = len(bad)
    q_inf = a["q"][-1]
    notes = f"Violated gain conditions: {'; '.join(bad) or 'none'}."
    if p["qstar"]:
        qs, d0s = reference_point(cset, a["q"][0], p["xd"], p["yd"], p["xi"])
        metrics["riemannian_distance_q0_qstar"] = d0s
        metrics["riemannian_distance_q0_qinf"] = submanifold_distance(cset, a["q"][0], q_inf)
        metrics["riemannian_distance_qinf_qstar"] = submanifold_distance(cset, qs, q_inf)
        notes += (
            f" q* = {np.round(qs, 5).tolist()} rad, q_inf = {np.round(q_inf, 5).tolist()} rad."
        )
    plots = _plots(a, m, lam_d)
    arrays, doc = _arrays_doc(m, -a["lambda"][:, 0])
    if p["sweep"]:
        series, rows = {}, []
        for i, (x0, y0, psi) in enumerate(SWEEP_STARTS):
            qi = posture_on_plane(x0, y0, p["xi"], psi)
            ctrl_i = ar.ArimotoHybrid(TIP, target, p["k"], p["zeta"], p["c"], lam_d)
            _, _, ai, mi = _run(mech, cset, ctrl_i, qi, p["sweep_t_end"], p["dt"], p["xi"])
            row = [float(mi["dist_em1"][-1]), float(np.diff(mi["W"]).max())]
            if p["qstar"]:
                qs_i, d0 = reference_point(cset, ai["q"][0], p["xd"], p["yd"], p["xi"])
                row += [d0, submanifold_distance(cset, qs_i, ai["q"][-1])]
            rows.append(row)
            series[f"start {i + 1} ({x0}, {y0}, psi {psi})"] = np.maximum(mi["dist_em1"], 1e-300)
        rows = np.array(rows)
        metrics["sweep_final_distance_to_em1_max"] = float(rows[:, 0].max())
        metrics["sweep_lyapunov_increase_max"] = float(rows[:, 1].max())
        if p["qstar"]:
            metrics["sweep_distance_q0_qstar"] = rows[:, 2].tolist()
            metrics["sweep_distance_qinf_qstar"] = rows[:, 3].tolist()
        plots["sweep"] = {
            "title": "sweep over initial postures: distance to EM1",
            "ylabel": "[sqrt(kg) m]",
            "log": True,
            "series": series,
        }
        arrays["sweep_table"] = rows
        doc["sweep_table"] = "per sweep start: final distance to EM1, max increase of W_alpha" + (
            ", d(q0, q*), d(q_inf, q*)" if p["qstar"] else ""
        )
    names = ["base", "link1", "link2", "link3", TIP]
    anim = project_xz(mech, a["t"], a["q"], names)
    return ScenarioResult(
        traj,
        metrics,
        wall,
        plots=plots,
        extra_arrays=arrays,
        series_doc=doc,
        static_lines=[(np.array([-0.1, 0.45]), np.array([p["xi"], p["xi"]]))],
        notes=notes + " Animation: projection on the x-z plane.",
        **anim,
    )


PANDA_TOOL = "panda_hand_tcp"
#: the Panda's "ready" posture: tool pointing down in front of the base
PANDA_READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


@scenario(
    "panda-surface",
    dx_target=Param(0.05, "target x_d - x(0) on the table [m]"),
    dy_target=Param(0.03, "target y_d - y(0) on the table [m]"),
    k=Param(100.0, "position gain k [N/m]", positive=True),
    zeta=Param(math.sqrt(0.5), "damping factor zeta (paper: sqrt(2)/2)", positive=True),
    c=Param(2.0, "joint damping c [N m s/rad]", low=0.0),
    lambda_d=Param(5.0, "desired pressing force lambda_d [N] (> 0: unilateral contact)"),
    t_end=Param(5.0, "simulated time [s]", positive=True),
    dt=Param(5e-3, "integrator step = control period [s] (200 Hz)", positive=True),
)
def panda_surface(p: dict) -> ScenarioResult:
    """Arimoto's law (eq. 42) on the Panda (7 joints): the tool point on a table.

    The table is the horizontal plane through the tool point in the ready
    posture (unilateral contact). The tool is regulated from rest to a point
    (dx_target, dy_target) away on the table while pressing with 5 N;
    u = g(q) + lambda_d w - c q' - J^T (zeta sqrt(k) x' + k dx) with the paper's
    zeta = sqrt(2)/2 and gains scaled to the Panda (k = 100 N/m, c = 2 N m s/rad;
    the paper's 5 ... 20 N/m are for a 1-gram-scale arm). EM1 is 4-dimensional
    here (7 joints, 3 conditions); the Riemannian distances to q* are not
    computed (a shooting problem over a 4-dimensional EM1 at 7 joints, each
    evaluation an ODE boundary-value problem: too costly for a scenario).
    The Panda is not of the paper's "ordinary scale" (56): its inertia and link
    lengths exceed g_M <= 0.001 kg m^2, l_0 <= 0.2 m, so the conditions
    (56)-(60) cannot hold; the violated ones are warned about and listed.
    """
    lam_d = ar.check_lambda_d(p["lambda_d"])
    mech = load_robot("panda")
    q0 = PANDA_READY.copy()
    tool0 = mech.compute(q0, None, [PANDA_TOOL], dynamics=False).frames[PANDA_TOOL]
    xi = float(tool0.p[2])
    target = tool0.p[:2] + np.array([p["dx_target"], p["dy_target"]])
    r = float(np.hypot(*target))
    if not (0.25 <= r <= 0.75):
        raise ValueError(
            f"target (x_d, y_d) = ({target[0]:.4g}, {target[1]:.4g}) m is outside the reachable "
            f"part of the table z = {xi:.4g} m used here: distance from the base axis must lie "
            f"in [0.25, 0.75] m, got {r:.4g} m"
        )
    contact = PointOnPlane(PANDA_TOOL, (0.0, 0.0, 1.0), xi, name="tool on table", unilateral=True)
    cset = ConstraintSet(mech, [contact])
    ctrl = ar.ArimotoHybrid(PANDA_TOOL, target, p["k"], p["zeta"], p["c"], lam_d)
    traj, wall, a, m = _run(mech, cset, ctrl, q0, p["t_end"], p["dt"], xi)
    dx0 = float(np.linalg.norm(m["x"][0, :2] - ctrl.target))
    l_0 = 0.384  # the Panda's longest link offset (URDF: 0.316 / 0.384 / 0.088 / 0.107 m)
    gk = dict(k=p["k"], zeta=p["zeta"], c=p["c"], g_M=m["g_M"], l_0=l_0)
    bad = check_gains_warn(
        "panda-surface", **gk, sigma_m=m["sigma_m"], sigma_M=m["sigma_M"], dx0=dx0
    )
    metrics = _common_metrics(ctrl, a, m, 1e-14)
    metrics["gain_conditions_violated"] = len(bad)
    arrays, doc = _arrays_doc(m, -a["lambda"][:, 0])
    return ScenarioResult(
        traj,
        metrics,
        wall,
        plots=_plots(a, m, lam_d),
        extra_arrays=arrays,
        series_doc=doc,
        scene3d={
            "urdf": str(robot_urdf("panda")),
            "q": a["q"],
            "t": a["t"],
            "locked": {j: 0.0 for j in ROBOTS["panda"][1]},
            "points": m["x"],
            "plane": (tool0.p.copy(), np.array([0.0, 0.0, 1.0]), 0.4),
        },
        notes=f"table at z = {xi:.4f} m; target ({target[0]:.4f}, {target[1]:.4f}) m. "
        f"Violated gain conditions: {'; '.join(bad) or 'none'}. Riemannian distances "
        "(q*, q_inf) not computed at 7 joints (4-dimensional EM1; see the docstring).",
    )
