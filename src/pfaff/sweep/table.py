"""The results table of a sweep (design.md Sec. 4): one row per point.

Columns: ``point``, every parameter of the scenario, ``status``, ``message``,
``wall_time_s``, ``realtime_factor``, ``max_constraint_violation``, then every
metric that any point reported (a metric whose name is also a parameter's is
named ``metric.NAME``). Numbers keep their exact value; a metric that is a list
or a mapping is stored as its JSON text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from pfaff.sweep.points import Point

__all__ = ["HEADLINE", "build_table", "metric_columns"]

HEADLINE = ("status", "message", "wall_time_s", "realtime_factor", "max_constraint_violation")


def _metric_names(rows: Sequence[Mapping[str, Any]], params: Sequence[str]) -> dict[str, str]:
    """Metric name -> column name, in the order the metrics first appear."""
    names: dict[str, str] = {}
    taken = set(params) | set(HEADLINE) | {"point"}
    for row in rows:
        for key in row.get("metrics", {}):
            if key not in names:
                names[key] = f"metric.{key}" if key in taken else key
    return names


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _column(values: list[Any]) -> list[Any]:
    """One type per column: numbers, booleans, or text (JSON for containers)."""
    present = [v for v in values if v is not None]
    if all(_is_number(v) for v in present):
        return [math.nan if v is None else v for v in values]
    if all(isinstance(v, bool) for v in present):
        return values
    return [
        None if v is None else v if isinstance(v, str) else json.dumps(v, allow_nan=True)
        for v in values
    ]


def build_table(
    points: Sequence[Point], rows: Mapping[str, Mapping[str, Any]], missing: str = "pending"
) -> pd.DataFrame:
    """The table of ``points``; a point without a row gets status ``missing``.

    Parameters
    ----------
    points : the sweep's points, in order.
    rows : point id -> row (:func:`pfaff.sweep.task.row_from_summary`).
    missing : status of the points that have no row yet (``pending``, ``interrupted``).
    """
    params = list(points[0].params) if points else []
    present = [rows[p.id] for p in points if p.id in rows]
    names = _metric_names(present, params)
    data: dict[str, list[Any]] = {"point": [p.id for p in points]}
    for key in params:
        data[key] = [p.params[key] for p in points]
    empty = {"status": missing, "message": "not finished", "metrics": {}}
    full = [rows.get(p.id, empty) for p in points]
    for key in HEADLINE:
        data[key] = [r.get(key, math.nan) for r in full]
    for key, col in names.items():
        data[col] = _column([r.get("metrics", {}).get(key) for r in full])
    table = pd.DataFrame(data)
    for key in ("wall_time_s", "realtime_factor", "max_constraint_violation"):
        table[key] = table[key].astype(float)
    return table


def metric_columns(table: pd.DataFrame, params: Sequence[str]) -> list[str]:
    """The numeric columns worth plotting: ``max_constraint_violation`` and the metrics.

    (Wall time and real-time factor stay in the table: they measure the machine.)
    """
    skip = set(params) | {"point", "status", "message", "wall_time_s", "realtime_factor"}
    return [
        c
        for c in table.columns
        if c not in skip
        and pd.api.types.is_numeric_dtype(table[c])
        and not pd.api.types.is_bool_dtype(table[c])
    ]
