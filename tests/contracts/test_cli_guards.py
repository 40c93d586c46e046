"""Guards of the command line against careless input (design.md Sec. 4 exit statuses).

Times that do not fit the step, an empty ``--out``, keyframe and controller-period
messages, sweeps that cannot write or are too large, and the output folder's lock
(``DIR/.pfaff.lock``): a live holder is refused, a dead one taken over, and the
lock is released on every exit path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from where import MODELS

import pfaff.sweep
from pfaff.cli import main
from pfaff.report.io import LOCK_NAME, FolderInUseError, FolderLock
from pfaff.scenarios import (
    SCENARIOS,
    Param,
    ParameterError,
    Scenario,
    ScenarioResult,
    get_scenario,
)
from pfaff.scenarios.registry import check_timing
from pfaff.sweep import MAX_POINTS, count_points, run_sweep

XML, TOML = str(MODELS / "four_bar.xml"), str(MODELS / "four_bar.toml")

_CTRL_TOML = """title = "controlled four-bar"
model.file = "four_bar.urdf"
start.joints = { crank = -1.0, coupler = 0.6, rocker = -1.3 }
[[constraints]]
type = "points_coincide"
frame1 = "coupler_tip"
frame2 = "rocker_tip"
directions = [[1, 0, 0], [0, 0, 1]]
[controller]
type = "pidc"
joints = ["crank"]
target = [-0.7]
control_dt = CDT
[simulation]
t_end = 0.01
dt = 1e-3
"""


def _controlled(tmp_path: Path, control_dt: str) -> str:
    (tmp_path / "four_bar.urdf").write_text((MODELS / "four_bar.urdf").read_text())
    f = tmp_path / "ctl.toml"
    f.write_text(_CTRL_TOML.replace("CDT", control_dt))
    return str(f)


def _fake(monkeypatch, name: str, func) -> str:
    """Register a scenario ``name`` running ``func`` for one test."""
    params = {
        "t_end": Param(0.01, "simulated time [s]", positive=True),
        "dt": Param(1e-3, "step [s]", positive=True),
    }
    monkeypatch.setitem(SCENARIOS, name, Scenario(name, func, params))
    return name


def _no_cluster(monkeypatch) -> None:
    """Fail the test if a sweep starts a Dask cluster."""

    @contextmanager
    def refuse(*args, **kwargs):
        raise AssertionError("the Dask cluster was started")
        yield  # pragma: no cover

    monkeypatch.setattr("pfaff.sweep.run.dask_client", refuse)


# -- times that do not fit the step -------------------------------------------------------


@pytest.mark.parametrize("name", ["particle-circle", XML, TOML])
def test_t_end_shorter_than_dt_exits_2_naming_both(tmp_path, capsys, name):
    out = tmp_path / "run"
    argv = ["run", name, "--out", str(out), "--set", "t_end=1e-4", "--set", "dt=1e-3"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "t_end = 0.0001 s" in err and "dt = 0.001 s" in err, err
    assert not out.exists()


@pytest.mark.parametrize("model", [XML, str(MODELS / "limited_pendulum.xml")])
def test_t_end_not_a_multiple_of_dt_says_what_it_simulates(model, tmp_path, capsys):
    # a file with joint limits (its run the core's event loop) ends on the grid too
    out = tmp_path / "run"
    argv = ["run", model, "--out", str(out), "--set", "t_end=0.0015", "--set", "dt=1e-3"]
    assert main(argv) == 0
    note = "t_end = 0.0015 s is not a multiple of dt = 0.001 s: simulating 2 steps to t = 0.002 s"
    err = capsys.readouterr().err
    assert err.count(note) == 1, err
    summary = json.loads((out / "summary.json").read_text())
    assert note in summary["warnings"]
    assert summary["steps"] == 2 and abs(summary["sim_time_s"] - 0.002) <= 1e-12


def test_timing_is_checked_for_every_point_of_a_sweep(monkeypatch, tmp_path):
    _no_cluster(monkeypatch)
    with pytest.raises(ParameterError, match=r"t_end = 0\.0001 s is shorter than one step"):
        run_sweep("particle-circle", tmp_path / "sw", grid={"t_end": ["0.5", "1e-4"]})
    assert not (tmp_path / "sw").exists()


def test_check_timing_rules():
    assert check_timing({"t_end": 1.0, "dt": 1e-3}) == []
    assert check_timing({"t_end": 0.3, "dt": 0.1}) == []  # 2.9999999999999996 steps
    assert check_timing({"t_end": 1.0}) == []  # no dt: nothing to check
    (note,) = check_timing({"t_end": 0.0025, "dt": 1e-3})
    assert "simulating 2 steps to t = 0.002 s" in note  # as simulate rounds it
    with pytest.raises(ParameterError, match="sweep_t_end = 0.0001 s"):
        check_timing({"sweep_t_end": 1e-4, "dt": 1e-3})
    assert check_timing({"dt": 1e-3, "control_dt": 3e-3}) == []
    with pytest.raises(ParameterError, match="controller.control_dt = 0.0025 s is not a mult"):
        check_timing({"dt": 1e-3}, {"controller.control_dt": 2.5e-3})


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("mujoco") is None, reason="needs mujoco"
)
def test_compare_with_t_end_below_dt_exits_2_and_names_no_report(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", XML, "--out", str(out), "--set", "t_end=1e-4"]) == 2
    captured = capsys.readouterr()
    assert "t_end = 0.0001 s" in captured.err and "dt = 0.002 s" in captured.err
    assert "report" not in captured.out and not out.exists()


def test_a_failed_run_names_only_the_files_it_wrote(monkeypatch, tmp_path, capsys):
    def divide(p):
        return 1.0 / 0.0

    name = _fake(monkeypatch, "guard-zero-division", divide)
    out = tmp_path / "run"
    assert main(["run", name, "--out", str(out)]) == 3
    captured = capsys.readouterr()
    assert "ZeroDivisionError" in captured.err
    assert "report:" not in captured.out and not (out / "report.html").exists()
    assert "summary.json" in captured.out and (out / "summary.json").is_file()


# -- --out, keyframes, controller periods -------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "particle-circle", "--out", ""],
        ["run", "particle-circle", "--out", "  "],
        ["compare", XML, "--out", ""],
        ["sweep", "particle-circle", "--out", "", "--grid", "theta0=0,1"],
    ],
)
def test_an_empty_out_is_refused(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "--out" in capsys.readouterr().err


def test_an_empty_sweep_folder_is_refused_by_the_api(monkeypatch):
    _no_cluster(monkeypatch)
    with pytest.raises(ParameterError, match="empty string"):
        run_sweep("particle-circle", "", grid={"theta0": ["0", "1"]})


@pytest.mark.parametrize(
    ("model", "choice"), [("four_bar.xml", "'open'"), ("four_bar_inertial.xml", "'key0'")]
)
def test_a_bad_keyframe_lists_the_real_choices(tmp_path, capsys, model, choice):
    out = tmp_path / "run"
    assert main(["run", str(MODELS / model), "--out", str(out), "--set", "keyframe=X"]) == 2
    err = capsys.readouterr().err
    assert f"must be one of {choice}; got 'X'" in err, err
    assert "one of ," not in err and "''" not in err
    assert get_scenario(str(MODELS / model)).params["keyframe"].default == choice.strip("'")


@pytest.mark.parametrize(
    ("control_dt", "words"),
    [
        ("0.0005", ["controller.control_dt = 0.0005 s is shorter than dt = 0.001 s"]),
        (
            "0.0025",
            [
                "controller.control_dt = 0.0025 s is not a multiple of dt = 0.001 s",
                "every 2 or 3 steps",
                "0.002 or 0.003",
            ],
        ),  # fmt: skip
    ],
)
def test_a_bad_controller_period_of_a_system_file_exits_2(tmp_path, capsys, control_dt, words):
    out = tmp_path / "run"
    assert main(["run", _controlled(tmp_path, control_dt), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err, err
    assert not out.exists()


def test_a_bad_controller_period_of_a_scenario_exits_2(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "yz-free", "--out", str(out), "--set", "control_dt=0.003"]) == 2
    assert "control_dt = 0.003 s is not a multiple of dt = 0.002 s" in capsys.readouterr().err
    assert main(["run", "dual-panda-box", "--out", str(out), "--set", "control_dt=1e-3"]) == 2
    assert "control_dt = 0.001 s is shorter than dt = 0.005 s" in capsys.readouterr().err
    assert not out.exists()


# -- sweeps: the folder and the size, before any cluster ---------------------------------


def test_a_sweep_into_an_unwritable_folder_exits_2_before_the_cluster(
    monkeypatch, tmp_path, capsys
):
    _no_cluster(monkeypatch)
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "sweep"
    argv = ["sweep", "particle-circle", "--out", str(out), "--grid", "theta0=0,0.1"]
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "cannot be written" in err and "a parent of it is a file" in err, err


def test_a_large_sweep_is_refused_unless_yes(monkeypatch, tmp_path, capsys):
    _no_cluster(monkeypatch)
    values = ",".join(str(i / 1000) for i in range(MAX_POINTS // 10 + 1))
    argv = ["sweep", "particle-circle", "--out", str(tmp_path / "sw"), "--grid",
            f"theta0={values}", "--grid", "omega0=" + ",".join(map(str, range(10)))]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{MAX_POINTS + 10} points" in err and "--yes" in err, err
    assert not (tmp_path / "sw").exists()
    seen = {}

    def fake_run_sweep(*args, **kwargs):
        seen.update(kwargs)
        raise ParameterError("stopped here")

    monkeypatch.setattr(pfaff.sweep, "run_sweep", fake_run_sweep)
    assert main([*argv, "--yes"]) == 2
    assert seen["max_points"] is None
    assert main(argv) == 2
    assert seen["max_points"] == MAX_POINTS


def test_the_help_of_yes_names_the_limit(capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert f"{MAX_POINTS} points" in " ".join(capsys.readouterr().out.split())


def test_count_points():
    assert count_points({"a": [1, 2, 3], "b": [1, 2]}, None) == 6
    assert count_points({"a": [1, 2]}, 5) == 10
    assert count_points(None, None) == 1


def test_a_sweep_says_how_many_points_and_when_it_will_finish(tmp_path):
    from distributed import Client

    notes: list[str] = []
    out = tmp_path / "sw"
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as c:
        res = run_sweep(
            "particle-circle",
            out,
            grid={"theta0": ["0", "0.1", "0.2"]},
            fixed={"t_end": "0.0225"},  # 4.5 steps of dt = 0.005 s
            scheduler=c,
            echo=notes.append,
        )
    assert res.count("ok") == 3
    rounded = "t_end = 0.0225 s is not a multiple of dt = 0.005 s: simulating 4 steps"
    assert sum(rounded in n for n in notes) == 1, notes  # once, not once per point
    assert any("3 points to run" in n for n in notes), notes
    assert any("first point in after" in n and "time to finish about" in n for n in notes)
    assert not (out / LOCK_NAME).exists()


# -- the output folder's lock -------------------------------------------------------------


@pytest.fixture
def sleeper():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # exited and reaped: its pid names no process
    return proc.pid


def test_a_folder_locked_by_a_live_process_is_refused(monkeypatch, tmp_path, capsys, sleeper):
    _no_cluster(monkeypatch)
    out = tmp_path / "busy"
    out.mkdir()
    (out / LOCK_NAME).write_text(f"{sleeper.pid}\n")
    runs = [
        ["run", "particle-circle", "--out", str(out), "--set", "t_end=0.01"],
        ["run", "particle-circle", "--out", str(out), "--set", "t_end=0.01", "--force"],
        ["sweep", "particle-circle", "--out", str(out), "--grid", "theta0=0,1", "--force"],
    ]
    for argv in runs:
        assert main(argv) == 2, argv
        assert f"is in use by pid {sleeper.pid}" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]  # nothing written
    assert (out / LOCK_NAME).read_text() == f"{sleeper.pid}\n"  # and the lock left alone


def test_a_stale_lock_is_taken_over_and_released(tmp_path, capsys):
    out = tmp_path / "stale"
    out.mkdir()
    (out / LOCK_NAME).write_text(f"{_dead_pid()}\n")
    assert main(["run", "particle-circle", "--out", str(out), "--set", "t_end=0.01"]) == 0
    assert (out / "summary.json").is_file() and not (out / LOCK_NAME).exists()


def test_a_lock_held_by_a_killed_process_is_taken_over(tmp_path):
    """A process holding the lock (flock and pid) is refused; after kill -9 it is stale."""
    out = tmp_path / "held"
    code = (
        "import sys, time; from pfaff.report.io import FolderLock; "
        f"FolderLock({str(out)!r}).acquire(); print('held', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(FolderInUseError, match=f"in use by pid {proc.pid}"):
            FolderLock(out).acquire()
    finally:
        proc.kill()
        proc.wait()
    assert (out / LOCK_NAME).read_text().split()[0] == str(proc.pid)  # left behind
    with FolderLock(out) as lock:
        assert lock.held
        assert (out / LOCK_NAME).read_text().split()[0] == str(os.getpid())
    assert not (out / LOCK_NAME).exists()


def test_one_process_cannot_take_a_held_lock_twice(tmp_path):
    with FolderLock(tmp_path / "d"):
        with pytest.raises(FolderInUseError):
            FolderLock(tmp_path / "d").acquire()
    assert not (tmp_path / "d").exists()  # the lock created the folder and removed it


@pytest.mark.parametrize(
    ("outcome", "code"),
    [("ok", 0), ("failed", 3), ("interrupted", 130), ("refused", 2), ("crash", None)],
)
def test_the_lock_is_released_on_every_exit_path(monkeypatch, tmp_path, capsys, outcome, code):
    from pfaff.simulate.trajectory import SimulationError

    def run(p):
        if outcome == "failed":
            raise SimulationError("diverged at t = 0 s", None)
        if outcome == "interrupted":
            raise KeyboardInterrupt
        if outcome == "refused":
            raise ValueError("a bad frame")
        if outcome == "crash":
            raise RuntimeError("a bug")
        return ScenarioResult(None, {"x": 1.0}, 0.0)

    name = _fake(monkeypatch, f"guard-{outcome}", run)
    out = tmp_path / "run"
    if code is None:
        with pytest.raises(RuntimeError, match="a bug"):
            main(["run", name, "--out", str(out)])
    else:
        assert main(["run", name, "--out", str(out)]) == code
    assert not (out / LOCK_NAME).exists()
    if outcome == "refused":  # found before any step: no folder left behind
        assert not out.exists()
    # and the next run into the folder is not refused as "in use"
    assert "in use" not in capsys.readouterr().err


def test_a_sweep_releases_its_lock_when_the_cluster_fails(monkeypatch, tmp_path):
    @contextmanager
    def broken(*args, **kwargs):
        raise ParameterError("no scheduler")
        yield  # pragma: no cover

    monkeypatch.setattr("pfaff.sweep.run.dask_client", broken)
    out = tmp_path / "sw"
    with pytest.raises(ParameterError, match="no scheduler"):
        run_sweep("particle-circle", out, grid={"theta0": ["0", "1"]}, fixed={"t_end": "0.02"})
    assert not out.exists()  # the lock created the folder: removed with it
