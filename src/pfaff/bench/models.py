"""Realtime factors of model files (``pfaff bench model-files``).

The model-file figure: ``pfaff run FILE.xml`` on a 30-DOF model with 12 loop rows
runs at least 10x real time at dt = 1 ms. The model is ``examples/quadruped.xml``
(a free trunk and four legs of six hinges, each knee a four-bar closed by a 3D
connect: 12 rows of rank 8), run as ``pfaff run`` runs it, t_end = 5 s. With MuJoCo
installed, ``pfaff compare`` on the same file gives the cost against MuJoCo's.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from .timing import Row, row

#: the examples folder of a source checkout (an installed wheel has none)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
#: (file, overrides, realtime target, issue)
MODEL_FILES = (("quadruped.xml", {"t_end": 5.0, "dt": 1e-3}, 10.0, "30-dof model, 12 loop rows"),)
RUNS = 3


def bench_model_files(runs: int = RUNS) -> list[Row]:
    """Each model file ``runs`` times: median real-time factor, engine, rows, rank,
    largest constraint violation, status."""
    from pfaff.scenarios import run_scenario

    rows: list[Row] = []
    for name, overrides, target, issue in MODEL_FILES:
        path = EXAMPLES / name
        label = name + "".join(f" {k}={v:g}" for k, v in overrides.items())
        if not path.is_file():
            rows.append(row("model-files", f"{label} status", "missing", "", "== ok", str(path)))
            continue
        out = [run_scenario(str(path), overrides) for _ in range(runs)]
        s = out[0]
        rt = sorted(float(x["realtime_factor"] or float("nan")) for x in out)
        med = statistics.median(rt)
        m = s["metrics"]
        rows_, rank = m.get("constraint_rows"), m.get("constraint_rank")
        note = (
            f"{issue}; median of {runs} runs ({rt[0]:.3g} .. {rt[-1]:.3g}); "
            f"{m.get('dof')} dof, {rows_} rows of rank {rank}"
        )
        worst = next((x for x in out if x["status"] != "ok"), s)
        phi = max(float(x["max_constraint_violation"]) for x in out)
        rows += [
            row("model-files", f"{label} realtime factor", med, "x", f">= {target:g}", note),
            row("model-files", f"{label} engine", s.get("engine") or "", "", "== core"),
            row("model-files", f"{label} max |phi|", phi, "", "<= 1e-10"),
            row("model-files", f"{label} status", worst["status"], "", "== ok",
                worst.get("message") or ""),
        ]  # fmt: skip
        rows += _mujoco_peer(path, overrides, label)
    return rows


def _mujoco_peer(path: Path, overrides: dict, label: str) -> list[Row]:
    """The same file, the same assembled start, timed in one run by ``pfaff compare``:
    MuJoCo's cost per simulated second (its own integrator and soft equality
    constraints) against pfaff's -- the realtime target as a ratio that a slower or
    faster machine does not move. No rows without MuJoCo (an optional extra)."""
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return []
    from pfaff.scenarios import run_scenario

    m = run_scenario(f"compare:{path}", overrides)["metrics"]
    pf, mj = m["pfaff_cost_per_sim_second_s"], m["mujoco_cost_per_sim_second_s"]
    note = (
        f"pfaff compare, one run: MuJoCo {1 / mj:.3g}x real time, its largest violation "
        f"{m['mujoco_violation_max']:.2g} against pfaff's {m['pfaff_violation_max']:.2g}"
    )
    return [row("model-files", f"{label} cost pfaff / MuJoCo", pf / mj, "", "", note)]
