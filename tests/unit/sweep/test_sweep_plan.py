"""pfaff sweep without a cluster: points, ids, validation, the table and the folder checks."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from where import MODELS

from pfaff.cli import main
from pfaff.scenarios import ParameterError
from pfaff.sweep import parse_grid, parse_random, plan_points, point_id
from pfaff.sweep.store import SweepStore
from pfaff.sweep.table import build_table

PC = "particle-circle"


def test_grid_is_the_cartesian_product_in_the_given_order():
    pts = plan_points(PC, grid={"theta0": ["0", "0.5"], "m": ["1", "2", "3"]}, fixed={"t_end": 1})
    assert [(p.params["theta0"], p.params["m"]) for p in pts] == [
        (0.0, 1.0), (0.0, 2.0), (0.0, 3.0), (0.5, 1.0), (0.5, 2.0), (0.5, 3.0),
    ]  # fmt: skip
    assert all(p.params["t_end"] == 1.0 and p.params["rho"] == 1.0 for p in pts)
    assert len({p.id for p in pts}) == 6


def test_point_id_is_a_hash_of_the_resolved_parameters():
    a = plan_points(PC, grid={"theta0": ["0.5"]})[0]
    b = plan_points(PC, grid={"theta0": [".50"]})[0]
    c = plan_points(PC, fixed={"theta0": 0.5})[0]
    assert a.id == b.id == c.id
    assert a.id == point_id(PC, a.params) and len(a.id) == 12
    assert a.id != plan_points(PC, fixed={"theta0": 0.5000001})[0].id
    assert a.id != point_id("slider-crank", a.params)
    # the same point given twice is one point
    assert len(plan_points(PC, grid={"theta0": ["0.5", ".5"]})) == 1


def test_random_samples_are_reproducible_and_within_bounds():
    spec = {"theta0": ("-1", "1"), "m": ("0.5", "2")}
    a = plan_points(PC, random=spec, samples=20, seed=7)
    b = plan_points(PC, random=spec, samples=20, seed=7)
    c = plan_points(PC, random=spec, samples=20, seed=8)
    assert [p.params for p in a] == [p.params for p in b]
    assert [p.params for p in a] != [p.params for p in c]
    assert all(-1 <= p.params["theta0"] <= 1 and 0.5 <= p.params["m"] <= 2 for p in a)
    # the same draws for every grid point
    g = plan_points(PC, grid={"rho": ["1", "2"]}, random=spec, samples=20, seed=7)
    assert [p.params["theta0"] for p in g[:20]] == [p.params["theta0"] for p in a]
    assert [p.params["theta0"] for p in g[20:]] == [p.params["theta0"] for p in a]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"grid": {"nope": ["1"]}}, ["nope", "valid keys", "theta0"]),
        ({"grid": {"m": ["1", "-2"]}}, ["'m'", "> 0"]),
        ({"grid": {"m": ["heavy"]}}, ["'m'", "float"]),
        ({"grid": {"m": []}}, ["m", "no values"]),
        ({"grid": {"m": ["1"]}, "fixed": {"m": "2"}}, ["'m'", "--set", "--grid"]),
        ({"random": {"m": ("1", "2")}}, ["--samples"]),
        ({"random": {"m": ("2", "1")}, "samples": 3}, ["LO must be < HI"]),
        ({"random": {"m": ("-1", "2")}, "samples": 3}, ["'m'", "> 0"]),
        ({"random": {"integrator": ("a", "b")}, "samples": 3}, ["integrator"]),
        ({"samples": 3}, ["--random"]),
    ],
)
def test_bad_points_are_refused_naming_the_problem(kwargs, words):
    with pytest.raises(ParameterError) as err:
        plan_points(PC, **kwargs)
    for word in words:
        assert word in str(err.value)


def test_option_parsing():
    assert parse_grid(["m=1,2", "rho=3"]) == {"m": ["1", "2"], "rho": ["3"]}
    assert parse_random(["theta0=-1:1"]) == {"theta0": ("-1", "1")}
    for bad in (["m"], ["m="], ["m=1,,2"], ["m=1", "m=2"]):
        with pytest.raises(ParameterError, match="--grid"):
            parse_grid(bad)
    for bad in (["m=1"], ["m=1:"], ["m=1:2", "m=2:3"]):
        with pytest.raises(ParameterError, match="--random"):
            parse_random(bad)


@pytest.mark.parametrize(
    "extra, word",
    [
        (["--grid", "nope=1,2"], "nope"),
        (["--grid", "theta0=0,x"], "theta0"),
        (["--random", "m=1:2"], "--samples"),
        (["--grid", "m=1,2", "--set", "m=3"], "'m'"),
        (["--workers", "0", "--grid", "m=1,2"], "--workers"),
    ],
)
def test_cli_refuses_bad_input_with_exit_2_before_any_work(tmp_path, capsys, extra, word):
    out = tmp_path / "sw"
    assert main(["sweep", PC, "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pfaff: error:") and word in err
    assert not out.exists()  # nothing written, no cluster started


def test_cli_refuses_a_folder_that_holds_something_else(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["sweep", PC, "--out", str(tmp_path), "--grid", "m=1,2"]) == 2
    assert "--force" in capsys.readouterr().err
    other = tmp_path / "other"
    SweepStore(other, "slider-crank").prepare(force=False)
    assert main(["sweep", PC, "--out", str(other), "--grid", "m=1,2"]) == 2
    assert "slider-crank" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "other"]


def test_table_has_one_row_per_point_with_typed_columns(tmp_path):
    pts = plan_points(PC, grid={"theta0": ["0", "0.5", "1"]})
    rows = {
        pts[0].id: {
            "status": "ok", "message": "", "wall_time_s": 0.5, "realtime_factor": 2.0,
            "max_constraint_violation": 1e-13,
            "metrics": {"x": 0.1 + 0.2, "flag": True, "list": [1.0, 2.0], "m": 3.0},
        },
        pts[1].id: {
            "status": "failed", "message": "boom", "wall_time_s": math.nan,
            "realtime_factor": math.nan, "max_constraint_violation": math.nan, "metrics": {},
        },
    }  # fmt: skip
    table = build_table(pts, rows, missing="interrupted")
    assert list(table["point"]) == [p.id for p in pts]
    assert list(table["status"]) == ["ok", "failed", "interrupted"]
    assert list(table.columns[:9]) == ["point", *pts[0].params]
    assert table["x"][0] == 0.1 + 0.2 and math.isnan(table["x"][1])
    assert json.loads(table["list"][0]) == [1.0, 2.0] and pd.isna(table["list"][1])
    assert table["metric.m"][0] == 3.0  # a metric named like a parameter
    # the table's own files read back to the last bit
    store = SweepStore(tmp_path, PC)
    store.prepare(force=False)
    store.write_table(table)
    back = pd.read_parquet(tmp_path / "results.parquet")
    csv = pd.read_csv(tmp_path / "results.csv")
    assert back["x"][0] == csv["x"][0] == 0.1 + 0.2
    assert back["max_constraint_violation"][0] == csv["max_constraint_violation"][0] == 1e-13


def test_store_keeps_only_finished_rows(tmp_path):
    store = SweepStore(tmp_path, PC)
    store.prepare(force=False)
    row = {"status": "ok", "message": "", "wall_time_s": 1.0, "realtime_factor": math.inf,
           "max_constraint_violation": math.nan, "metrics": {"e": 1 / 3}}  # fmt: skip
    store.record("aaa", row, {"sub/x.txt": b"hi"})
    (tmp_path / "rows" / "bbb.json").write_text('{"status": "interrupted"}')
    (tmp_path / "rows" / "ccc.json").write_text('{"status": "ok", ')  # torn: runs again
    done = store.finished()
    assert list(done) == ["aaa"] and done["aaa"]["metrics"]["e"] == 1 / 3
    assert math.isinf(done["aaa"]["realtime_factor"])
    assert (tmp_path / "points" / "aaa" / "sub" / "x.txt").read_bytes() == b"hi"
    store.prepare(force=True)
    assert store.finished() == {} and not (tmp_path / "points").exists()


def test_an_unreachable_scheduler_is_exit_2_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "sw"
    cmd = ["sweep", PC, "--out", str(out), "--grid", "m=1", "--scheduler", "tcp://127.0.0.1:1"]
    assert main(cmd) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
    assert not out.exists()


def _synthetic(points, failed=()):
    """Rows whose metric is a known function of the parameters."""
    rows = {}
    for p in points:
        bad = p.id in failed
        rows[p.id] = {
            "status": "failed" if bad else "ok", "message": "diverged" if bad else "",
            "wall_time_s": 1.0, "realtime_factor": 2.0, "max_constraint_violation": 1e-13,
            "metrics": {} if bad else {"y": p.params["m"] * 10 + p.params["rho"]},
        }  # fmt: skip
    return rows


def test_sweep_report_line_heat_scatter_and_failed_points():
    from pfaff.sweep.report import render_sweep_report, sweep_plots

    one = plan_points(PC, grid={"m": ["1", "2", "3"]})
    table = build_table(one, _synthetic(one, failed={one[1].id}))
    plots = sweep_plots(table, ["m"], ["m"])
    assert list(plots) == ["y against m"] and plots["y against m"][:4] == b"\x89PNG"
    html = render_sweep_report(PC, table, ["m"], ["m"])
    assert "diverged" in html and one[1].id in html and "ok: 2" in html
    two = plan_points(PC, grid={"m": ["1", "2"], "rho": ["1", "2", "3"]})
    grid_table = build_table(two, _synthetic(two, failed={two[0].id}))  # a blank cell
    assert "y over m and rho" in sweep_plots(grid_table, ["m", "rho"], ["m", "rho"])
    rnd = plan_points(PC, random={"m": ("1", "2"), "rho": ("1", "2")}, samples=5)
    assert "y over m and rho" in sweep_plots(build_table(rnd, _synthetic(rnd)), ["m", "rho"])
    three = plan_points(PC, grid={"m": ["1", "2"], "rho": ["1", "2"], "g": ["1", "2"]})
    assert "y against m, rho, g" in sweep_plots(
        build_table(three, _synthetic(three)), ["m", "rho", "g"]
    )


def test_a_system_file_is_swept_like_a_scenario():
    from pathlib import Path

    from pfaff.sweep.run import _canonical

    name = _canonical(str(MODELS / "four_bar.toml"))
    assert Path(name).is_absolute() and Path(name).is_file()
    pts = plan_points(name, grid={"t_end": ["0.1", "0.2"]})
    assert [p.params["t_end"] for p in pts] == [0.1, 0.2]
    with pytest.raises(ParameterError, match="nope"):
        plan_points(name, grid={"nope": ["1"]})
