"""Parameter studies: many runs of one scenario on Dask, resumable, as a table.

``pfaff.sweep(...)`` (this module is callable) runs the points on a local Dask
cluster (or an existing scheduler) and returns the results table as a pandas
DataFrame; :func:`run_sweep` also says what was skipped or interrupted.
"""

from __future__ import annotations

import sys
import types

from pfaff.sweep.points import (
    Point,
    count_points,
    parse_grid,
    parse_random,
    plan_points,
    point_id,
)
from pfaff.sweep.run import MAX_POINTS, SweepResult, run_sweep, sweep

__all__ = [
    "MAX_POINTS",
    "Point",
    "count_points",
    "SweepResult",
    "parse_grid",
    "parse_random",
    "plan_points",
    "point_id",
    "run_sweep",
    "sweep",
]


class _CallableModule(types.ModuleType):
    """``pfaff.sweep(...)`` calls :func:`pfaff.sweep.sweep`."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
