"""Report layer: plots, animation, self-contained HTML report, atomic file output.

The plotting and writing functions take plain arrays and dicts; only
:mod:`pfaff.report.output` (writing a scenario ``Run`` into a folder) reads
the scenarios layer above. Figures are drawn on private matplotlib ``Figure``
objects (no pyplot).
"""

from .animation import animate_planar
from .html import format_value, render_report
from .io import atomic_savez, atomic_write_bytes, atomic_write_json, atomic_write_text, to_jsonable
from .plots import (
    plot_constraint_forces,
    plot_constraint_violation,
    plot_energy,
    plot_series,
    plot_states,
)
from .writer import STANDARD_PLOTS, write_report

__all__ = [
    "STANDARD_PLOTS",
    "animate_planar",
    "atomic_savez",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "format_value",
    "plot_constraint_forces",
    "plot_constraint_violation",
    "plot_energy",
    "plot_series",
    "plot_states",
    "render_report",
    "to_jsonable",
    "write_report",
]
