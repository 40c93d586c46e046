"""Arimoto Sec. 4-5: the same hybrid law (eq. 42) on the Panda, its tool point on a table."""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.control import arimoto as ar
from pfaff.mechanism import load_robot, named_configuration, robot_urdf
from pfaff.mechanism.robots import ROBOTS
from pfaff.scenarios.arimoto_common import (
    arimoto_plots,
    arrays_doc,
    check_gains_warn,
    common_metrics,
    law_params,
    run_monitored,
)
from pfaff.scenarios.registry import Param, ScenarioResult, scenario

PANDA_TOOL = "panda_hand_tcp"


@scenario(
    "panda-surface",
    dx_target=Param(0.05, "target x_d - x(0) on the table [m]"),
    dy_target=Param(0.03, "target y_d - y(0) on the table [m]"),
    **law_params(100.0, 2.0, 5.0, 5e-3, dt_note=" (200 Hz)"),
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
    q0 = named_configuration("panda", "ready")
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
    traj, wall, a, m = run_monitored(mech, cset, ctrl, q0, p["t_end"], p["dt"], xi)
    dx0 = float(np.linalg.norm(m["x"][0, :2] - ctrl.target))
    l_0 = 0.384  # the Panda's longest link offset (URDF: 0.316 / 0.384 / 0.088 / 0.107 m)
    gk = dict(k=p["k"], zeta=p["zeta"], c=p["c"], g_M=m["g_M"], l_0=l_0)
    bad = check_gains_warn(
        "panda-surface", **gk, sigma_m=m["sigma_m"], sigma_M=m["sigma_M"], dx0=dx0
    )
    metrics = common_metrics(ctrl, a, m, 1e-14)
    metrics["gain_conditions_violated"] = len(bad)
    arrays, doc = arrays_doc(m, -a["lambda"][:, 0])
    return ScenarioResult(
        traj,
        metrics,
        wall,
        plots=arimoto_plots(a, m, lam_d),
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
