"""System files: a constrained system described as data (TOML), run by ``pfaff run FILE.toml``.

The schema and its checks are in :mod:`pfaff.files.system`
(:func:`~pfaff.files.system.load_system`); here the loaded file
becomes a :class:`~pfaff.scenarios.registry.Scenario`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.files.controller import parse_controller
from pfaff.files.model import ModelSystem
from pfaff.files.system import SystemFile, load_system
from pfaff.scenarios.model_file import run_system
from pfaff.scenarios.registry import Param, Scenario, ScenarioResult
from pfaff.simulate import INTEGRATORS, SimOptions

__all__ = ["SystemFile", "load_system", "system_scenario"]


def _extra_plots(result: ScenarioResult, system: ModelSystem, plots: list[str]) -> None:
    a = result.trajectory.arrays()
    mech, cset = system.mechanism, ConstraintSet(system.mechanism, system.constraints)
    for name in plots:
        kind, _, arg = name.partition(":")
        if name == "lambda":
            series = {r: a["lambda"][:, i] for i, r in enumerate(cset.row_names)}
            spec = {"title": "multipliers", "ylabel": "lambda (N or N m)", "series": series}
        elif name == "phi_rows":
            rows = [cset.row_names[i] for i in cset.holonomic_rows]
            series = {r: np.abs(a["phi"][:, i]) for i, r in enumerate(rows)}
            spec = {"title": "|Phi_i|", "ylabel": "|Phi_i|", "log": True, "series": series}
        elif kind == "joint":
            jm = mech.model.joints[mech.model.getJointId(arg)]
            series = {f"{arg}[{k}]": a["q"][:, jm.idx_q + k] for k in range(jm.nq)}
            spec = {"title": f"joint {arg}", "ylabel": "q (rad or m)", "series": series}
        else:
            snaps = [mech.compute(q, None, [arg], dynamics=False).frames[arg].p for q in a["q"]]
            P = np.array(snaps)
            series = {f"{arg} {x}": P[:, k] for k, x in enumerate("xyz")}
            spec = {"title": f"frame {arg}", "ylabel": "position (m)", "series": series}
        result.plots[name.replace(":", "_")] = spec


def system_scenario(path: str | Path) -> Scenario:
    """A system file as a :class:`Scenario` (``--set t_end= dt= integrator=``)."""
    p = Path(path)
    sf = load_system(p)  # refuse a bad file before any output

    def run(params: dict) -> ScenarioResult:
        f = load_system(p)
        system = f.system
        opt = SimOptions(
            dt=params["dt"], integrator=params["integrator"], record_every=params["record_every"]
        )
        ctrl = None
        if f.controller is not None:
            cset = ConstraintSet(system.mechanism, system.constraints)
            ctrl, opt.control_dt = parse_controller(f.controller, cset, system.q)
        result = run_system(system, params["t_end"], opt, f.title, controller=ctrl)
        if ctrl is not None:
            q_end = result.trajectory.arrays()["q"][-1]
            target = ctrl.reference(0.0)[0]
            result.metrics["task_error_final"] = float(np.abs(target - q_end[ctrl.task.idx]).max())
        _extra_plots(result, system, f.plots)
        return result

    run.__doc__ = f"{sf.title} (system file {p.name}).\n\n" + (__doc__ or "").split("\n\n")[0]
    d = sf.simulation
    params = {
        "t_end": Param(d["t_end"], "simulated time [s]", positive=True),
        "dt": Param(d["dt"], "integrator step [s]", positive=True),
        "integrator": Param(d["integrator"], "time integrator", choices=INTEGRATORS),
        "record_every": Param(1, "record one step in this many (a long run's memory)", low=1),
    }
    cdt = (sf.controller or {}).get("control_dt")  # checked against dt with the parameters
    periods = {} if cdt is None else {"controller.control_dt": float(cdt)}
    return Scenario(str(path), run, params, periods)
