"""Run a scenario and write its outputs (design.md Sec. 4).

Outputs in DIR: ``summary.json``, ``trajectory.npz``, PNG plots, ``report.html``
and, for planar scenarios, ``animation.gif`` -- each written atomically. A
run that fails midway still writes what it has, with ``"status": "failed"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pfaff import __version__
from pfaff.mechanism.base import ModelError
from pfaff.report import atomic_savez, atomic_write_json, write_report
from pfaff.scenarios.registry import ParameterError, ScenarioResult, get_scenario
from pfaff.simulate.trajectory import (
    SERIES_DOC,
    InitialStateError,
    SimulationError,
    Trajectory,
)


class OutputExistsError(ParameterError):
    """The output folder is not empty and ``force`` was not given."""


def check_out_dir(out_dir: Path, force: bool) -> None:
    if out_dir.exists():
        if not out_dir.is_dir():
            raise OutputExistsError(f"output path {str(out_dir)!r} exists and is not a folder")
        if any(out_dir.iterdir()) and not force:
            raise OutputExistsError(
                f"output folder {str(out_dir)!r} is not empty; use --force to overwrite"
            )


def _summary(name, params, result: ScenarioResult | None, traj: Trajectory | None, status, msg):
    arrays = traj.arrays() if traj is not None and len(traj) else {}
    t = arrays.get("t", np.zeros(0))
    sim_time = float(t[-1]) if t.size else 0.0
    wall = result.wall_time_s if result is not None else float("nan")
    return {
        "scenario": name,
        "pfaff_version": __version__,
        "parameters": params,
        "status": status,
        "message": msg,
        "sim_time_s": sim_time,
        "steps": int(traj.steps) if traj is not None else 0,
        "wall_time_s": wall,
        "realtime_factor": sim_time / wall if wall and wall > 0 else float("nan"),
        "max_constraint_violation": traj.max_constraint_violation() if arrays else float("nan"),
        "max_velocity_constraint_violation": (
            traj.max_velocity_constraint_violation() if arrays else float("nan")
        ),
        "metrics": dict(result.metrics) if result is not None else {},
    }


def run_scenario(
    name: str,
    overrides: dict[str, Any] | None = None,
    out_dir: str | Path | None = None,
    force: bool = False,
    report: bool = True,
) -> dict[str, Any]:
    """Validate parameters, run the scenario, write its outputs; return the summary.

    Raises :class:`ParameterError` (bad name, key, value, or a non-empty
    output folder without ``force``) before anything is run or written.
    Simulation failures do not raise: the summary has ``status = "failed"``
    and the partial results are written.
    """
    sc = get_scenario(name)
    params = sc.resolve(overrides)
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        check_out_dir(out, force)
    result: ScenarioResult | None = None
    traj = None
    try:
        result = sc.func(params)
        traj = result.trajectory
        status, msg = result.status, result.message
    except (ModelError, InitialStateError, ValueError) as exc:
        if isinstance(exc, ParameterError):
            raise
        # bad model data or an initial state off the manifold: bad parameters
        raise ParameterError(str(exc)) from None
    except SimulationError as exc:
        traj = exc.trajectory
        status, msg = "failed", str(exc)
    summary = _summary(name, params, result, traj, status, msg)
    if out is None:
        return summary
    out.mkdir(parents=True, exist_ok=True)
    arrays = traj.arrays() if traj is not None else {}
    docs = dict(SERIES_DOC)
    if traj is not None:
        docs.update({k: "controller signal" for k in traj.signals})
    if result is not None:
        arrays.update(result.extra_arrays)
        docs.update(result.series_doc)
    atomic_savez(out / "trajectory.npz", **arrays)
    atomic_write_json(out / "summary.json", summary)
    if report and arrays:
        description = sc.doc + (
            "\n\n" + result.notes if result is not None and result.notes else ""
        )
        write_report(
            out,
            summary,
            arrays,
            {k: v for k, v in docs.items() if k in arrays},
            description=description,
            polylines_xy=result.polylines_xy if result is not None else None,
            animation_t=result.animation_t if result is not None else None,
            static_lines=result.static_lines if result is not None else None,
            extra_plots=result.extra_plots if result is not None else None,
        )
    return summary
