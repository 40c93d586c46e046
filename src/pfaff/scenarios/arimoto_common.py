"""What the scenarios of Arimoto's hybrid law share: runs with monitors, metrics, plots.

Used by ``handwriting-robot`` and ``panda-surface`` (Arimoto Sec. 4-5); the arm
and the monitors themselves live in :mod:`pfaff.systems.handwriting`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from pfaff.control import arimoto as ar
from pfaff.scenarios.common import timed_simulate
from pfaff.scenarios.registry import Param
from pfaff.simulate import SimOptions
from pfaff.systems.handwriting import monitor


def law_params(
    k: float, c: float, lambda_d: float, dt: float, k_note: str = "", dt_note: str = ""
):
    """The parameters of eq. (42) and the run, shared by the Arimoto scenarios.

    ``k_note`` / ``dt_note`` are appended to the descriptions of ``k`` / ``dt``.
    """
    return dict(
        k=Param(k, f"position gain k [N/m]{k_note}", positive=True),
        zeta=Param(math.sqrt(0.5), "damping factor zeta (paper: sqrt(2)/2)", positive=True),
        c=Param(c, "joint damping c [N m s/rad]", low=0.0),
        lambda_d=Param(lambda_d, "desired pressing force lambda_d [N] (> 0: unilateral contact)"),
        t_end=Param(5.0, "simulated time [s]", positive=True),
        dt=Param(dt, f"integrator step = control period [s]{dt_note}", positive=True),
    )


def fit_rate(t: np.ndarray, W: np.ndarray, floor: float) -> float:
    """Least-squares slope of ``-log W`` where ``W > floor`` (after the first 0.2 s)."""
    sel = (W > floor) & (t >= 0.2)
    if sel.sum() < 3:
        return float("nan")
    return float(-np.polyfit(t[sel], np.log(W[sel]), 1)[0])


def check_gains_warn(where: str, **kw) -> list[str]:
    """Evaluate (56)-(60); warn (``warnings.warn``) naming each violated inequality."""
    bad = ar.violated_conditions(**kw)
    for name in bad:
        warnings.warn(
            f"{where}: gain condition {name} of Arimoto (56)-(60) is violated; running anyway",
            stacklevel=3,
        )
    return bad


def run_monitored(mech, cset, ctrl, q0, t_end, dt, xi):
    """Simulate from rest with control period = step; ``(traj, wall, arrays, monitors)``."""
    opt = SimOptions(dt=dt, control_dt=dt)
    traj, wall = timed_simulate(cset, q0, np.zeros(mech.nv), t_end, opt, controller=ctrl)
    a = traj.arrays()
    return traj, wall, a, monitor(mech, cset, ctrl, a, xi)


def common_metrics(ctrl, a, m, decay_floor):
    """The metrics both scenarios of Arimoto's hybrid law report (eq. 45-48, 56-62)."""
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


def arimoto_plots(a, m, lam_d):
    """Plots of E, W_alpha, the force error vs eq. (62) and the distance to EM1."""
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


def arrays_doc(m, lam):
    """The monitors as trajectory arrays, with their documentation."""
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
