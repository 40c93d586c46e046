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

from .contact import bench_contact
from .derivatives import bench_derivatives
from .derivatives_files import bench_derivatives_files
from .models import bench_model_files
from .mujoco_rk4 import bench_mujoco_rk4
from .panda import (
    bench_panda_control,
    bench_panda_dd,
    bench_panda_mujoco,
    panda_states,
    projection_vs_pinocchio,
)
from .plant import bench_plant
from .scaling import bench_scaling
from .scenarios import bench_scenarios
from .step import bench_step
from .sweep import bench_sweep
from .timing import Row, median_us, paired_us, row
from .work_precision import bench_work_precision

__all__ = [
    "BENCHMARKS",
    "Row",
    "bench_derivatives",
    "bench_derivatives_files",
    "bench_panda_control",
    "bench_panda_dd",
    "bench_model_files",
    "bench_mujoco_rk4",
    "bench_panda_mujoco",
    "bench_plant",
    "bench_scaling",
    "bench_scenarios",
    "bench_contact",
    "bench_step",
    "bench_sweep",
    "bench_work_precision",
    "format_table",
    "load_robot",
    "median_us",
    "meets_target",
    "paired_us",
    "panda_states",
    "projection_vs_pinocchio",
    "row",
    "run_benchmarks",
    "run_info",
    "summary_json",
]

BENCHMARKS: dict[str, Callable[[], list[Row]]] = {
    "panda-dd": bench_panda_dd,
    "panda-control": bench_panda_control,
    "panda-mujoco": bench_panda_mujoco,
    "scenarios": bench_scenarios,
    "model-files": bench_model_files,
    "mujoco-rk4": bench_mujoco_rk4,
    "scaling": bench_scaling,
    "sweep": bench_sweep,
    "step": bench_step,
    "contact": bench_contact,
    "plant": bench_plant,
    "derivatives": bench_derivatives,
    "derivatives-files": bench_derivatives_files,
    "work-precision": bench_work_precision,
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
    ``scenarios`` holds each scenario's realtime factor and engine, ``mujoco_rk4``
    each model file's step costs, ratio to MuJoCo's RK4 step like for like, whether that
    ratio meets its bar and what MuJoCo ran without (``pfaff bench mujoco-rk4``),
    ``scaling`` the step's cost against the mechanism's size, both exponents and the
    bars met (``pfaff bench scaling``), ``derivatives`` the figures of ``pfaff bench
    derivatives`` by name; ``date``, ``host`` and ``versions`` say where and with what
    the figures were taken (:func:`run_info`).
    """
    fig = {(r["benchmark"], r["figure"]): r["value"] for r in rows}
    wp = {r["figure"].split(" cost ratio")[0]: r["data"] for r in rows
          if "data" in r and r["benchmark"] == "work-precision"}  # fmt: skip
    sc = next((r["data"] for r in rows if "data" in r and r["benchmark"] == "scaling"), None)
    rows = [{k: v for k, v in r.items() if k != "data"} for r in rows]
    out: dict = {"rows": rows}
    if wp:
        out["work_precision"] = wp  # pfaff bench work-precision: each model's full record
    if sc is not None:
        out["scaling"] = sc  # pfaff bench scaling: per-N costs, exponents, bars met
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
    rk4 = _mujoco_rk4_figures(rows)
    if rk4:
        out["mujoco_rk4"] = rk4
    der = {r["figure"]: r["value"] for r in rows if r["benchmark"] == "derivatives"}
    if der:
        out["derivatives"] = der
    out.update(run_info())
    return out


#: the rows of ``mujoco-rk4`` in the JSON, by key: figure suffix
_RK4_KEYS = {
    "pfaff_step_us": " pfaff step",
    "pfaff_step_fixed_cost_out_us": " pfaff step, fixed cost out",
    "mujoco_rk4_step_us": " MuJoCo RK4 step",
    "mujoco_rk4_step_file_as_is_us": " MuJoCo RK4 step, file as is",
    "mujoco_disabled": " MuJoCo disabled",
    "ratio_pfaff_mujoco": " ratio pfaff/MuJoCo",
    "engine": " engine",
}


def _mujoco_rk4_figures(rows: list[dict]) -> dict:
    """``{file label: {pfaff_step_us, mujoco_rk4_step_us, ratio_pfaff_mujoco, ...}}``;
    ``mujoco_disabled`` as a list, and the ratio's bar with ``ratio_met``."""
    out: dict = {}
    for r in rows:
        if r["benchmark"] != "mujoco-rk4":
            continue
        f = str(r["figure"])
        for key, suffix in _RK4_KEYS.items():
            if f.endswith(suffix):
                fig = out.setdefault(f[: -len(suffix)], {})
                if key == "mujoco_disabled":
                    fig[key] = [x for x in str(r["value"]).split(", ") if x]
                else:
                    fig[key] = r["value"]
                if key == "ratio_pfaff_mujoco" and r.get("target"):
                    fig["ratio_target"] = r["target"]
                    fig["ratio_met"] = meets_target(r["value"], str(r["target"])) == "yes"
    return out


def run_info() -> dict:
    """Where and with what the figures were taken: ``date`` (UTC, ISO 8601), ``host``
    (name, CPU, cores, platform) and ``versions`` (Python and the libraries timed)."""
    import datetime
    import os
    import platform
    from importlib import metadata

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    versions = {"python": platform.python_version()}
    for dist in ("pfaff", "numpy", "scipy", "pin", "mujoco"):
        versions[dist] = version(dist)
    if versions["pin"] is None:  # pinocchio from another channel (conda, a source build)
        try:
            import pinocchio

            versions["pin"] = pinocchio.__version__
        except ImportError:
            pass
    versions["pfaff_git"] = _git_describe()
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "date": now.isoformat(timespec="seconds"),
        "host": {
            "name": platform.node(),
            "cpu": cpu,
            "cores": os.cpu_count(),
            "platform": platform.platform(),
        },
        "versions": versions,
    }


def _git_describe() -> str | None:
    """The source checkout's commit (``+dirty`` with local changes), else None."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return None
    try:
        git = ["git", "-C", str(root)]
        kw = dict(capture_output=True, text=True, timeout=10, check=True)
        sha = subprocess.run([*git, "rev-parse", "HEAD"], **kw).stdout.strip()
        status = [*git, "status", "--porcelain", "--untracked-files=no"]
        dirty = subprocess.run(status, **kw).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return sha + ("+dirty" if dirty else "")


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
