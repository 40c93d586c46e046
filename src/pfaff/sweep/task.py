"""What a Dask worker does for one point: run the scenario, return its row and files.

The worker writes nothing into the sweep's folder: it renders the point's run
folder (summary, trajectory, plots, report) into a private temporary folder and
returns the bytes, so the client is the only writer. A worker that dies
mid-point therefore leaves nothing behind, and the retried point is written
once -- on any Dask deployment, with or without a shared file system.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["FINAL_STATUSES", "row_from_summary", "failed_row", "run_point"]

#: statuses of a point that has finished; any other point runs again on resume
FINAL_STATUSES = ("ok", "failed")


def row_from_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """The table row of a run: status, message, headline numbers and metrics."""
    return {
        "status": summary["status"],
        "message": summary.get("message") or "",
        "wall_time_s": summary["wall_time_s"],
        "realtime_factor": summary["realtime_factor"],
        "max_constraint_violation": summary["max_constraint_violation"],
        "metrics": dict(summary.get("metrics") or {}),
    }


def failed_row(message: str, status: str = "failed") -> dict[str, Any]:
    """The row of a point that produced no run (bad combination, lost worker, ...)."""
    return {
        "status": status,
        "message": message,
        "wall_time_s": math.nan,
        "realtime_factor": math.nan,
        "max_constraint_violation": math.nan,
        "metrics": {},
    }


def _render(run: Any) -> dict[str, bytes]:
    """The run folder of ``run`` as ``{relative path: bytes}``."""
    from pfaff.report.output import write_run

    with tempfile.TemporaryDirectory(prefix="pfaff-point-") as tmp:
        write_run(run, tmp)
        root = Path(tmp)
        return {
            p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }


def run_point(scenario: str, params: dict[str, Any], point_files: bool) -> dict[str, Any]:
    """Run one point (on a Dask worker).

    Returns
    -------
    dict
        ``{"row": row, "files": {relative path: bytes}}``; a scenario that raises
        (a parameter combination the scenario refuses, a simulation error) gives
        a ``failed`` row with the message, never an exception.
    """
    from pfaff.scenarios import execute

    try:
        run = execute(scenario, params)
    except Exception as exc:  # one bad point must not stop the sweep
        return {"row": failed_row(f"{type(exc).__name__}: {exc}"), "files": {}}
    row = row_from_summary(run.summary)
    files: dict[str, bytes] = {}
    if point_files:
        try:
            files = _render(run)
        except Exception as exc:  # the numbers stand; say why the folder is missing
            note = f"point files not written: {type(exc).__name__}: {exc}"
            row["message"] = f"{row['message']}; {note}" if row["message"] else note
    return {"row": row, "files": files}
