"""Tests of the benchmark suite's plumbing (pfaff.bench) -- no timing assertions.

Independent witness: Pinocchio's own constrained dynamics
(``pin.constraintDynamics``) against the projection direct dynamics on random
Panda states, the correctness figure that ``panda-dd`` reports.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from where import MODELS

from pfaff import bench
from pfaff.bench import format_table, meets_target, run_benchmarks

ROWS = [
    dict(benchmark="b1", figure="fast", value=12.3456, unit="us", target="<= 40", note="n"),
    dict(benchmark="b1", figure="slow", value=123.456, unit="us", target="<= 40", note=""),
    dict(benchmark="long-benchmark", figure="rtf", value=9.5, unit="x", target=">= 10", note=""),
    dict(benchmark="b2", figure="rtf ok", value=250.0, unit="x", target=">= 10", note=""),
    dict(benchmark="b2", figure="ratio", value=3.0, unit="", target="", note="no target"),
    dict(benchmark="b2", figure="status", value="ok", unit="", target="== ok", note=""),
    dict(benchmark="b2", figure="missing", value=math.nan, unit="us", target="<= 1", note=""),
]


def _columns(table: str) -> tuple[list[int], list[list[str]]]:
    """Column start offsets (from the rule of dashes) and the cells of every line."""
    lines = table.splitlines()
    rule = lines[1]
    starts = [i for i, ch in enumerate(rule) if ch == "-" and (i == 0 or rule[i - 1] == " ")]
    bounds = list(zip(starts, starts[1:] + [None]))
    return starts, [[ln[s:e].strip() for s, e in bounds] for ln in lines]


def test_format_table_aligns_columns_and_marks_ok() -> None:
    table = format_table(ROWS)
    lines = table.splitlines()
    assert len(lines) == 2 + len(ROWS) and "\t" not in table
    starts, cells = _columns(table)
    header = ["benchmark", "figure", "value", "unit", "target", "ok", "note"]
    assert cells[0] == header
    # every line is blank just before each column start: the columns line up
    for ln in lines[2:]:
        assert all(ln[s - 1] == " " for s in starts[1:] if s <= len(ln))
    body = cells[2:]
    assert [c[0] for c in body] == [r["benchmark"] for r in ROWS]
    assert [c[1] for c in body] == [r["figure"] for r in ROWS]
    assert [c[2] for c in body] == ["12.35", "123.5", "9.5", "250", "3", "ok", "nan"]
    assert [c[3] for c in body] == [r["unit"] for r in ROWS]
    assert [c[4] for c in body] == [r["target"] for r in ROWS]
    assert [c[5] for c in body] == ["yes", "no", "no", "yes", "-", "yes", "no"]
    # values are right-aligned: they all end in the value column's last character
    end = starts[3] - 2
    assert all(ln[end - 1] != " " for ln in lines[2:])


def test_meets_target_parses_bounds() -> None:
    assert meets_target(40.0, "<= 40") == "yes"
    assert meets_target(40.01, "<=40") == "no"
    assert meets_target(10, ">= 10") == "yes"
    assert meets_target(1e-11, "<= 1e-10") == "yes"
    assert meets_target("failed", "== ok") == "no"
    assert meets_target("n/a", "<= 1") == "no"
    assert meets_target(5.0, "") == "-"


def test_unknown_benchmark_names_the_valid_ones() -> None:
    with pytest.raises(ValueError) as err:
        run_benchmarks(["panda-dd", "nope"])
    msg = str(err.value)
    assert "'nope'" in msg
    assert "valid benchmarks: panda-dd, panda-control, panda-mujoco, scenarios" in msg


def test_unknown_name_runs_nothing(monkeypatch) -> None:
    called = []
    monkeypatch.setattr(bench, "BENCHMARKS", {"a": lambda: called.append("a") or []})
    with pytest.raises(ValueError, match="valid benchmarks: a"):
        run_benchmarks(["a", "nope"])
    assert called == []


def test_run_benchmarks_dispatch(monkeypatch) -> None:
    fake = {
        "x": lambda: [bench.row("x", "f", 1.0, "us", "<= 2")],
        "y": lambda: [bench.row("y", "g", "ok")],
    }
    monkeypatch.setattr(bench, "BENCHMARKS", fake)
    assert [r["benchmark"] for r in run_benchmarks(None)] == ["x", "y"]
    assert [r["benchmark"] for r in run_benchmarks([])] == ["x", "y"]
    rows = run_benchmarks(["y", "x"])
    assert [r["benchmark"] for r in rows] == ["y", "x"]
    assert set(rows[1]) == {"benchmark", "figure", "value", "unit", "target", "note"}


def test_scenario_rows_report_the_median_of_the_runs(monkeypatch) -> None:
    """Realtime factor: median of the runs (spread in the note); an issue's own
    figure gets its own row; a failed run's status is the one reported."""
    import pfaff.scenarios as sc

    factors = {"dual-panda-box": iter([4.0, 7.0, 5.5]), "b": iter([20.0, 30.0, 25.0])}

    def fake(name, overrides):
        rt = next(factors[name])
        status = "failed" if name == "b" and rt == 30.0 else "ok"
        return dict(realtime_factor=rt, sim_time_s=2.0, max_constraint_violation=rt * 1e-14,
                    status=status, message="boom" if status != "ok" else None)  # fmt: skip

    monkeypatch.setattr(sc, "SCENARIOS", {"dual-panda-box": None, "b": None})
    monkeypatch.setattr(sc, "run_scenario", fake)
    monkeypatch.setattr(bench.scenarios, "SCENARIO_VARIANTS", ())
    rows = {(r["figure"], r["target"]): r for r in bench.bench_scenarios(runs=3)}
    rt = rows[("dual-panda-box realtime factor", ">= 10")]
    assert rt["value"] == 5.5 and "median of 3 runs (4 .. 7)" in rt["note"]
    assert rows[("dual-panda-box realtime factor", ">= 5")]["value"] == 5.5
    assert rows[("dual-panda-box max |phi|", "<= 1e-10")]["value"] == 7e-14
    assert rows[("b realtime factor", ">= 10")]["value"] == 25.0
    assert ("b realtime factor", ">= 5") not in rows
    status = rows[("b status", "== ok")]
    assert status["value"] == "failed" and status["note"] == "boom"


def test_mujoco_peer_is_skipped_not_crashing(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "mujoco", None)  # `import mujoco` raises ImportError
    rows = bench.bench_panda_mujoco()
    assert len(rows) == 1 and rows[0]["benchmark"] == "panda-mujoco"
    assert rows[0]["note"].startswith("skipped:") and "mujoco" in rows[0]["note"]
    assert meets_target(rows[0]["value"], rows[0]["target"]) == "-"
    assert "panda-mujoco" in format_table(rows)


def test_panda_states_in_limits_and_reproducible() -> None:
    Q, V, TAU = bench.panda_states(50, seed=3)
    model = bench.load_robot("panda").model
    assert Q.shape == V.shape == TAU.shape == (50, 7)
    assert np.all(Q >= model.lowerPositionLimit) and np.all(Q <= model.upperPositionLimit)
    assert np.all(np.abs(V) <= 1) and np.all(np.abs(TAU) <= 1)
    np.testing.assert_array_equal(bench.panda_states(50, seed=3)[0], Q)


def test_projection_agrees_with_pinocchio_constraint_dynamics() -> None:
    wit = bench.projection_vs_pinocchio(bench.panda_states(8, seed=1))
    assert wit["max_rel"] <= 1e-9
    assert 0.0 <= wit["max_abs"] <= 1e-9 * 1e3  # accelerations are O(1e2) at most here


def test_bench_json_has_the_contract_keys(monkeypatch, tmp_path) -> None:
    """``pfaff bench --json FILE``: projection_dynamics_us, pinocchio_constraint_dynamics_us,
    ratio_vs_pinocchio and scenarios {NAME: {realtime_factor, engine}} (design.md Sec. 4)."""
    import json

    from pfaff.cli import main

    fake = {
        "panda-dd": lambda: [
            bench.row("panda-dd", "core projection dynamics", 4.0, "us"),
            bench.row("panda-dd", "projection dynamics", 30.0, "us"),
            bench.row("panda-dd", "pinocchio constraintDynamics", 2.5, "us"),
        ],
        "scenarios": lambda: [
            bench.row("scenarios", "four-bar realtime factor", 300.0, "x", ">= 10"),
            bench.row("scenarios", "four-bar engine", "core"),
            bench.row("scenarios", "dual-panda-box realtime factor", 30.0, "x", ">= 10"),
            bench.row("scenarios", "dual-panda-box realtime factor", 30.0, "x", ">= 5"),
            bench.row("scenarios", "dual-panda-box engine", "core"),
        ],
    }
    monkeypatch.setattr(bench, "BENCHMARKS", fake)
    monkeypatch.setattr(bench, "WARMUP_S", 0.0)
    out = tmp_path / "bench.json"
    assert main(["bench", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["projection_dynamics_us"] == 4.0 and data["projection_dynamics_engine"] == "core"
    assert data["pinocchio_constraint_dynamics_us"] == 2.5
    assert math.isclose(data["ratio_vs_pinocchio"], 1.6)
    assert data["scenarios"] == {
        "four-bar": {"realtime_factor": 300.0, "engine": "core"},
        "dual-panda-box": {"realtime_factor": 30.0, "engine": "core"},
    }
    assert len(data["rows"]) == 8


def test_mujoco_rk4_rows_on_the_five_bar(monkeypatch, tmp_path) -> None:
    """``pfaff bench mujoco-rk4`` on the five-bar with a tiny N: its rows, from the same
    start (MuJoCo's equality rows vanish at pfaff's assembled start), on the core; and
    their place in ``pfaff bench --json`` (no timing asserted)."""
    pytest.importorskip("mujoco")
    import json

    from pfaff.cli import main

    five_bar = MODELS / "five_bar.xml"
    rows = bench.bench_mujoco_rk4([("five_bar", five_bar)], steps=3, repeats=1)
    got = {r["figure"]: r for r in rows}
    assert all(r["benchmark"] == "mujoco-rk4" for r in rows)
    for suffix in ("pfaff step", "pfaff one-step run", "MuJoCo RK4 step",
                   "ratio pfaff/MuJoCo"):  # fmt: skip
        value = got[f"five_bar {suffix}"]["value"]
        assert isinstance(value, float) and math.isfinite(value) and value > 0, suffix
    # a difference of two timings: any sign on a loaded machine with 3 steps
    assert math.isfinite(got["five_bar pfaff step, fixed cost out"]["value"])
    assert got["five_bar ratio pfaff/MuJoCo"]["target"] == "<= 1"
    assert got["five_bar engine"]["value"] == "core"
    assert got["five_bar status"]["value"] == "ok"
    assert got["five_bar start residual MuJoCo"]["value"] <= 1e-9  # m
    # like for like: MuJoCo runs without what pfaff's step does not model, and says so;
    # the file as it is (contacts on) is timed beside, for scale only
    assert got["five_bar MuJoCo disabled"]["value"] == "CONTACT, FRICTIONLOSS, LIMIT"
    assert got["five_bar MuJoCo RK4 step, file as is"]["value"] > 0
    assert got["five_bar ratio pfaff/MuJoCo file as is"]["target"] == ""
    # a missing file is a row, not an exception
    missing = bench.bench_mujoco_rk4([("nope", tmp_path / "nope.xml")], steps=2, repeats=1)
    assert [(r["figure"], r["value"]) for r in missing] == [("nope status", "missing")]
    with pytest.raises(ValueError, match="steps must be >= 1"):
        bench.bench_mujoco_rk4([("five_bar", five_bar)], steps=0)
    # the group by name, and its figures in the JSON with where they were taken
    monkeypatch.setattr(bench, "WARMUP_S", 0.0)
    monkeypatch.setitem(bench.BENCHMARKS, "mujoco-rk4", lambda: rows)
    out = tmp_path / "bench.json"
    assert main(["bench", "mujoco-rk4", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    fig = data["mujoco_rk4"]["five_bar"]
    assert fig["ratio_pfaff_mujoco"] == got["five_bar ratio pfaff/MuJoCo"]["value"]
    assert fig["engine"] == "core" and fig["mujoco_rk4_step_us"] > 0
    assert fig["mujoco_disabled"] == ["CONTACT", "FRICTIONLOSS", "LIMIT"]
    assert fig["ratio_target"] == "<= 1" and fig["ratio_met"] == (fig["ratio_pfaff_mujoco"] <= 1)
    assert {"date", "host", "versions"} <= data.keys()
    assert data["versions"]["mujoco"] and data["host"]["cores"] >= 1


def test_mujoco_rk4_is_skipped_without_mujoco(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "mujoco", None)  # `import mujoco` raises ImportError
    rows = bench.bench_mujoco_rk4(steps=2, repeats=1)
    assert len(rows) == 1 and rows[0]["benchmark"] == "mujoco-rk4"
    assert rows[0]["note"].startswith("skipped:") and "mujoco" in rows[0]["note"]


def test_derivatives_rows_and_their_witness(monkeypatch, tmp_path) -> None:
    """``pfaff bench derivatives`` with 3 states: its rows, the analytic derivatives
    agreeing with Pinocchio's to 1e-8, and a wrong derivative caught by that row."""
    import json

    from pfaff.bench import derivatives as bd
    from pfaff.cli import main

    monkeypatch.setattr(bd, "N_STATES", 3)
    monkeypatch.setattr(bd, "REPEATS", 1)
    monkeypatch.setattr(bench, "WARMUP_S", 0.0)
    out = tmp_path / "bench.json"
    assert main(["bench", "derivatives", "--json", str(out)]) == 0
    fig = json.loads(out.read_text())["derivatives"]
    assert fig["max rel |da - da_pin|"] <= 1e-8
    for name in ("derivatives (numpy)", "dynamics (numpy)", "finite differences (numpy)"):
        assert fig[name] > 0
    right = bd.forward_dynamics_derivatives

    def wrong(cset, q, v, tau):
        d = right(cset, q, v, tau)
        d.da_dv[0, 0] += 1e-3 * (1 + abs(d.da_dv[0, 0]))
        return d

    monkeypatch.setattr(bd, "forward_dynamics_derivatives", wrong)
    rows = {r["figure"]: r["value"] for r in bd.bench_derivatives()}
    assert rows["max rel |da - da_pin|"] > 1e-6
