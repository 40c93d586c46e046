"""Run a scenario: validate its parameters, simulate, and summarise (design.md Sec. 4-5).

Writing the outputs (summary.json, trajectory.npz, plots, report.html) is the
report layer's job (:func:`pfaff.report.output.write_run`); this module only
produces the :class:`Run` it writes.
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from pfaff import __version__
from pfaff.mechanism.base import ModelError
from pfaff.scenarios.lookup import get_scenario
from pfaff.scenarios.registry import ParameterError, Scenario, ScenarioResult
from pfaff.simulate.trajectory import (
    SERIES_DOC,
    InitialStateError,
    SimulationError,
    SimulationInterrupted,
    Trajectory,
)

_LIBRARY_NOISE = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@dataclass
class Run:
    """A finished (or failed) scenario run: what the report layer writes.

    Attributes
    ----------
    scenario : the scenario that ran.
    summary : the summary.json contract.
    arrays : the trajectory.npz contents.
    series_doc : documentation of every array in ``arrays``.
    result : what the scenario returned (None if the simulation raised).
    """

    scenario: Scenario
    summary: dict[str, Any]
    arrays: dict[str, np.ndarray]
    series_doc: dict[str, str]
    result: ScenarioResult | None

    @property
    def description(self) -> str:
        notes = self.result.notes if self.result is not None else ""
        return self.scenario.doc + ("\n\n" + notes if notes else "")


def _number(x: float) -> float | None:
    """A finite float, or None (JSON null) for a figure that does not exist."""
    return float(x) if x is not None and np.isfinite(x) else None


def _summary(name, params, result, traj, status, msg, wall, warns):
    has = traj is not None and len(traj) > 0
    sim_time = float(traj.t[-1]) if has else 0.0
    return {
        "scenario": name,
        "pfaff_version": __version__,
        "parameters": params,
        "status": status,
        "message": msg,
        "sim_time_s": sim_time,
        "steps": int(traj.steps) if traj is not None else 0,
        "wall_time_s": _number(wall),
        "realtime_factor": _number(sim_time / wall) if wall and wall > 0 and has else None,
        "engine": traj.engine if traj is not None else None,
        "max_constraint_violation": traj.max_constraint_violation() if has else None,
        "max_velocity_constraint_violation": (
            traj.max_velocity_constraint_violation() if has else None
        ),
        "warnings": warns,
        "metrics": dict(result.metrics) if result is not None else {},
    }


def _warning_lines(caught: list[warnings.WarningMessage]) -> list[str]:
    """One line per distinct warning: category, text and where in the code it arose.

    NumPy reports a floating-point problem (``invalid value encountered in
    divide``) at the line of pfaff that did the arithmetic; that line names the
    quantity.
    """
    out: list[str] = []
    for w in caught:
        if issubclass(w.category, _LIBRARY_NOISE):
            continue
        where = f"{w.filename.rsplit('/src/', 1)[-1]}:{w.lineno}"
        text = " ".join(str(w.message).split())
        line = f"{w.category.__name__}: {text} ({where})"
        if line not in out:
            out.append(line)
    return out


_NON_FINITE = re.compile(r"\b(nan|inf)\b", re.IGNORECASE)


def _blame(message: str, sc: Scenario, params: dict, overrides: dict | None) -> str:
    """``message`` of a run that met non-finite numbers before its first step, with the
    parameters set (``--set``) named: their values are the likely cause."""
    if not overrides or not _NON_FINITE.search(message):
        return message
    given = ", ".join(f"{k} = {params[k]!r}" for k in overrides if k in params)
    defaults = ", ".join(f"{k} = {sc.params[k].default!r}" for k in overrides if k in sc.params)
    return (
        f"{message}; the parameters set ({given}) give a non-finite state: choose values of "
        f"a physical magnitude (defaults: {defaults})"
    )


def execute(name: str, overrides: dict[str, Any] | None = None) -> Run:
    """Validate parameters and run the scenario.

    Raises :class:`ParameterError` for a bad name, key or value, bad model
    data (URDF, frame, mass) or an initial state off the constraint manifold
    -- anything found before the first step. A simulation failure (including
    a ``LinAlgError``) does not raise: the run has ``status = "failed"`` and
    keeps the partial trajectory; a Ctrl-C gives ``status = "interrupted"``
    with the samples so far. Warnings raised during the run (NumPy
    floating-point warnings, violated gain conditions), joints that left
    their limits and an end time rounded to whole steps are listed in
    ``summary["warnings"]``.
    """
    sc = get_scenario(name)
    params = sc.resolve(overrides)
    result: ScenarioResult | None = None
    traj: Trajectory | None = None
    t_start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = sc.func(params)
            traj, status, msg = result.trajectory, result.status, result.message
        except SimulationInterrupted as exc:
            traj, status, msg = exc.trajectory, "interrupted", str(exc)
        except KeyboardInterrupt:
            status, msg = "interrupted", "interrupted"
        except SimulationError as exc:
            traj, status, msg = exc.trajectory, "failed", str(exc)
        except (np.linalg.LinAlgError, ArithmeticError) as exc:
            status, msg = "failed", f"{type(exc).__name__}: {exc}"
        except (ModelError, InitialStateError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ParameterError(_blame(str(exc), sc, params, overrides)) from None
    if status == "failed" and (traj is None or traj.steps == 0):
        msg = _blame(msg, sc, params, overrides)
    wall = result.wall_time_s if result is not None else time.perf_counter() - t_start
    warns = sc.timing_notes(params) + _warning_lines(caught)
    if traj is not None:
        # a trajectory warning also raised as a Python warning is listed once
        warns += [w for w in traj.warnings if not any(w in x for x in warns)]
    arrays = traj.arrays() if traj is not None else {}
    docs = dict(SERIES_DOC)
    if traj is not None:
        docs.update({k: "controller signal" for k in traj.signals})
    if result is not None:
        arrays.update(result.extra_arrays)
        docs.update(result.series_doc)
    summary = _summary(name, params, result, traj, status, msg, wall, warns)
    return Run(sc, summary, arrays, {k: v for k, v in docs.items() if k in arrays}, result)


def run_scenario(name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run a scenario and return its summary (no files; see ``pfaff.report.write_run``)."""
    return execute(name, overrides).summary
