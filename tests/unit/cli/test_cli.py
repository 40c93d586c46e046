"""The command-line contract (design.md Sec. 4): outputs, refusals, exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from pfaff.cli import main
from pfaff.constraints import ConstraintSet, PointOnCircle
from pfaff.mechanism import planar_particle
from pfaff.scenarios import SCENARIOS, Param, ScenarioResult, scenario
from pfaff.scenarios.common import timed_simulate
from pfaff.simulate import SimOptions

SUMMARY_KEYS = {
    "scenario",
    "pfaff_version",
    "parameters",
    "status",
    "message",
    "sim_time_s",
    "steps",
    "wall_time_s",
    "warnings",
    "realtime_factor",
    "engine",
    "max_constraint_violation",
    "max_velocity_constraint_violation",
    "metrics",
}


@pytest.fixture(scope="module", autouse=True)
def failing_scenario():
    """A scenario whose controller returns NaN at t = 0.2 s (registered for these tests)."""

    @scenario("test-nan", t_end=Param(0.5, "simulated time [s]", positive=True))
    def _nan(p):
        """Particle on a circle whose controller breaks down."""
        mech = planar_particle(1.0)
        cset = ConstraintSet(mech, [PointOnCircle("particle", (0, 0), 1.0)])

        def controller(t, snap):
            return np.full(2, np.nan) if t >= 0.2 else np.zeros(2)

        traj, wall = timed_simulate(
            cset,
            np.array([1.0, 0.0]),
            np.zeros(2),
            p["t_end"],
            SimOptions(dt=1e-2),
            controller=controller,
        )
        return ScenarioResult(traj, {}, wall)

    yield
    SCENARIOS.pop("test-nan", None)


def test_list_names_every_scenario(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("particle-circle", "slider-crank", "four-bar"):
        assert name in out


def test_run_writes_the_contract(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "particle-circle", "--out", str(out), "--set", "t_end=1"]) == 0
    files = {p.name for p in out.iterdir()}
    assert {"summary.json", "trajectory.npz", "report.html", "animation.gif"} <= files
    assert {"states.png", "constraint_violation.png", "energy.png"} <= files
    assert not [f for f in files if f.endswith(".tmp")]
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) == SUMMARY_KEYS
    assert summary["status"] == "ok" and summary["parameters"]["t_end"] == 1.0
    assert summary["engine"] == "core"  # a Pinocchio particle on a circle: the core runs it
    data = np.load(out / "trajectory.npz")
    for key in ("t", "q", "v", "tau", "lambda", "F", "phi"):
        assert key in data.files
    assert data["q"].shape == (len(data["t"]), 2)
    # the summary's violation is the trajectory's
    assert summary["max_constraint_violation"] == pytest.approx(np.abs(data["phi"]).max())
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "energy_drift_rel" in html
    assert "report:" in capsys.readouterr().out


def test_run_refuses_a_non_empty_folder_without_force(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["run", "particle-circle", "--out", str(out), "--set", "t_end=0.1"]) == 2
    assert "--force" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert (
        main(["run", "particle-circle", "--out", str(out), "--set", "t_end=0.1", "--force"]) == 0
    )


@pytest.mark.parametrize(
    "sets, message",
    [
        (["bogus=1"], "unknown parameter 'bogus'.*valid keys: .*dt"),
        (["dt=0"], "'dt' must be > 0"),
        (["dt=-1e-3"], "'dt' must be > 0"),
        (["dt=fast"], "'dt' expects a float"),
        (["m=0"], "'m' must be > 0"),
        (["dt"], "KEY=VALUE"),
    ],
)
def test_bad_parameters_exit_2_and_write_nothing(tmp_path, capsys, sets, message):
    out = tmp_path / "run"
    argv = ["run", "particle-circle", "--out", str(out)]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert pytest.importorskip("re").search(message, err)
    assert not out.exists()


def test_bad_model_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")  # truncated XML
    cases = [
        (["--set", f"urdf={tmp_path / 'missing.urdf'}"], "does not exist"),
        (["--set", f"urdf={bad}"], "does not parse"),
        (["--set", "frame=nope"], "unknown frame 'nope'"),
        (["--set", "height=5"], "cannot be brought onto the constraint manifold"),
    ]
    for extra, message in cases:
        out = tmp_path / "out"
        assert main(["run", "panda-contact", "--out", str(out), *extra]) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()


def test_unknown_scenario_exit_2(capsys):
    assert main(["run", "no-such-scenario"]) == 2
    assert "valid scenarios" in capsys.readouterr().err


def test_failed_simulation_exit_3_saves_partial_results(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "test-nan", "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "non-finite controller torque" in err and "t = 0.2" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed"
    data = np.load(out / "trajectory.npz")
    assert 0.1 < data["t"][-1] < 0.2 + 1e-9  # the samples before the failure are kept
    assert (out / "report.html").exists()


def test_console_script_version():
    res = subprocess.run(
        [sys.executable, "-m", "pfaff.cli", "--version"], capture_output=True, text=True
    )
    assert res.returncode == 0 and res.stdout.startswith("pfaff ")


@pytest.mark.parametrize(
    "sets, message",
    [
        (["task=slider_y"], "do not parametrise N(A)"),
        (["kp=-3"], "gain kp must be > 0"),
        (["actuated=5"], "joint index 5 out of range; valid: 0..1"),
        (["actuated=crank"], "comma-separated joint indices"),
    ],
)
def test_control_bad_input_exits_2(tmp_path, capsys, sets, message):
    out = tmp_path / "run"
    argv = ["run", "slider-crank-pidc", "--out", str(out)]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
