"""The benchmark suite behind ``pfaff bench`` (design.md Sec. 4, 8).

Each benchmark is a function of no arguments that returns result rows::

    {"benchmark", "figure", "value", "unit", "target", "note"}

``target`` is ``"<= x"``, ``">= x"``, ``"== word"`` or ``""``. Times are the
median over repeated loops (``time.perf_counter``, after a warm-up, garbage
collector off) divided by the calls per loop, on the calling thread. Peers
(Pinocchio's constrained dynamics, MuJoCo) do the same work in the same process.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable

import numpy as np

from pfaff.linalg import single_threaded_blas
from pfaff.mechanism import load_robot

from .models import bench_model_files
from .panda import (
    bench_panda_control,
    bench_panda_dd,
    bench_panda_mujoco,
    panda_states,
    projection_vs_pinocchio,
)
from .scenarios import bench_scenarios
from .sweep import bench_sweep
from .timing import Row, median_us, paired_us, row

__all__ = [
    "BENCHMARKS",
    "Row",
    "bench_panda_control",
    "bench_panda_dd",
    "bench_model_files",
    "bench_panda_mujoco",
    "bench_scenarios",
    "bench_sweep",
    "format_table",
    "load_robot",
    "median_us",
    "meets_target",
    "paired_us",
    "panda_states",
    "projection_vs_pinocchio",
    "row",
    "run_benchmarks",
    "summary_json",
]

BENCHMARKS: dict[str, Callable[[], list[Row]]] = {
    "panda-dd": bench_panda_dd,
    "panda-control": bench_panda_control,
    "panda-mujoco": bench_panda_mujoco,
    "scenarios": bench_scenarios,
    "model-files": bench_model_files,
    "sweep": bench_sweep,
}


def run_benchmarks(names: list[str] | None = None) -> list[dict]:
    """Run the named benchmarks (all when ``names`` is empty or None), in order.

    Raises
    ------
    ValueError
        If a name is unknown; the message lists the valid ones. Nothing is run then.
    """
    names = list(names) if names else list(BENCHMARKS)
    bad = [n for n in names if n not in BENCHMARKS]
    if bad:
        raise ValueError(
            f"unknown benchmark {', '.join(map(repr, bad))}; "
            f"valid benchmarks: {', '.join(BENCHMARKS)}"
        )
    _spin(WARMUP_S)
    rows: list[dict] = []
    with single_threaded_blas():  # one core, as benchmarks/run.py's environment asks
        for n in names:
            rows += BENCHMARKS[n]()
    return rows


def summary_json(rows: list[dict]) -> dict:
    """The machine-readable figures of ``pfaff bench --json`` (design.md Sec. 4).

    ``projection_dynamics_us`` is the compiled core's time when it is built (the
    engine a simulation uses), else the NumPy engine's; ``ratio_vs_pinocchio`` is its
    ratio to Pinocchio's ``constraintDynamics`` on the same states, same process.
    """
    fig = {(r["benchmark"], r["figure"]): r["value"] for r in rows}
    out: dict = {"rows": rows}
    dd = "panda-dd"
    if (dd, "pinocchio constraintDynamics") in fig:
        core_t = fig.get((dd, "core projection dynamics"))
        t = core_t if core_t is not None else fig[(dd, "projection dynamics")]
        out["projection_dynamics_us"] = t
        out["projection_dynamics_engine"] = "core" if core_t is not None else "numpy"
        out["numpy_projection_dynamics_us"] = fig[(dd, "projection dynamics")]
        paired = fig.get((dd, "pinocchio (paired with core)"))
        t_pin = paired if core_t is not None and paired is not None else None
        t_pin = t_pin or fig[(dd, "pinocchio constraintDynamics")]
        out["pinocchio_constraint_dynamics_us"] = t_pin
        out["ratio_vs_pinocchio"] = fig.get((dd, "ratio core/pinocchio")) or t / t_pin
    scen: dict = {}
    for r in rows:
        if r["benchmark"] != "scenarios":
            continue
        f = str(r["figure"])
        for key, suffix in (("realtime_factor", " realtime factor"), ("engine", " engine")):
            if f.endswith(suffix) and key not in scen.get(f[: -len(suffix)], {}):
                scen.setdefault(f[: -len(suffix)], {})[key] = r["value"]
    if scen:
        out["scenarios"] = scen
    return out


#: busy time before the first figure, so that the CPU clock has ramped up
WARMUP_S = 0.5


def _spin(seconds: float) -> None:
    """Keep one core busy for ``seconds`` (a cold core reads 30-60 % slower)."""
    end = time.perf_counter() + seconds
    x = np.ones((64, 64))
    while time.perf_counter() < end:
        x = x @ x * 1e-3


# -- table -------------------------------------------------------------------------------
def format_value(value: object) -> str:
    """4 significant digits for floats, ``str`` otherwise."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return str(value)


def meets_target(value: object, target: str) -> str:
    """``"yes"``/``"no"`` against ``"<= x"``, ``">= x"`` or ``"== word"``; ``"-"`` without one."""
    m = re.fullmatch(r"\s*(<=|>=|==)\s*(\S+)\s*", target or "")
    if m is None:
        return "-"
    op, ref = m.groups()
    if op == "==":
        return "yes" if str(value) == ref else "no"
    try:
        x, r = float(value), float(ref)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "no"
    if math.isnan(x):
        return "no"
    return "yes" if (x <= r if op == "<=" else x >= r) else "no"


COLUMNS = ("benchmark", "figure", "value", "unit", "target", "ok", "note")


def format_table(rows: list[dict]) -> str:
    """An aligned text table: benchmark, figure, value, unit, target, ok, note.

    Values are right-aligned, the other columns left-aligned; ``ok`` is
    ``yes``/``no`` when the row has a target, ``-`` otherwise.
    """
    cells = [
        [
            str(r.get("benchmark", "")),
            str(r.get("figure", "")),
            format_value(r.get("value", "")),
            str(r.get("unit", "")),
            str(r.get("target", "")),
            meets_target(r.get("value"), str(r.get("target", ""))),
            str(r.get("note", "")),
        ]
        for r in rows
    ]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(COLUMNS)]

    def line(cols: list[str]) -> str:
        parts = [
            c.rjust(w) if i == 2 else c.ljust(w) for i, (c, w) in enumerate(zip(cols, widths))
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(COLUMNS)), line(["-" * w for w in widths])]
    out += [line(c) for c in cells]
    return "\n".join(out)
