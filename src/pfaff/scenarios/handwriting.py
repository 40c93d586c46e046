"""Arimoto Sec. 4-5: the handwriting robot presses its pencil on a plane (eq. 42)."""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.control import arimoto as ar
from pfaff.geometry.submanifold import submanifold_distance
from pfaff.scenarios.arimoto_common import (
    arimoto_plots,
    arrays_doc,
    check_gains_warn,
    common_metrics,
    law_params,
    run_monitored,
)
from pfaff.scenarios.common import project_xz
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.systems.handwriting import (
    LINKS,
    TIP,
    check_target,
    handwriting_arm,
    posture_on_plane,
    reference_point,
)

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
    **law_params(10.0, 0.03, 1.0, 5e-4, k_note=" (paper: 5 ... 20 kg/s^2)"),
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
    traj, wall, a, m = run_monitored(mech, cset, ctrl, q0, p["t_end"], p["dt"], p["xi"])
    dx0 = float(np.linalg.norm(m["x"][0, :2] - ctrl.target))
    gk = dict(k=p["k"], zeta=p["zeta"], c=p["c"], g_M=m["g_M"], l_0=max(LINKS))
    bad = check_gains_warn(
        "handwriting-robot", **gk, sigma_m=m["sigma_m"], sigma_M=m["sigma_M"], dx0=dx0
    )
    metrics = common_metrics(ctrl, a, m, 1e-14)
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
    plots = arimoto_plots(a, m, lam_d)
    arrays, doc = arrays_doc(m, -a["lambda"][:, 0])
    if p["sweep"]:
        series, rows = {}, []
        for i, (x0, y0, psi) in enumerate(SWEEP_STARTS):
            qi = posture_on_plane(x0, y0, p["xi"], psi)
            ctrl_i = ar.ArimotoHybrid(TIP, target, p["k"], p["zeta"], p["c"], lam_d)
            _, _, ai, mi = run_monitored(
                mech, cset, ctrl_i, qi, p["sweep_t_end"], p["dt"], p["xi"]
            )
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
