"""Ctrl-C loses nothing; numerical failures are failed runs; warnings are recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pfaff.cli import main
from pfaff.constraints import ConstraintSet, PointOnCircle
from pfaff.mechanism import planar_particle
from pfaff.scenarios import SCENARIOS, Param, ScenarioResult, scenario
from pfaff.scenarios.common import timed_simulate
from pfaff.scenarios.runner import execute
from pfaff.simulate import SimOptions, SimulationInterrupted, simulate


def _circle():
    mech = planar_particle(1.0)
    return ConstraintSet(mech, [PointOnCircle("particle", (0, 0), 1.0)])


def _raising_at(t_fail: float, exc: BaseException):
    def controller(t, snap):
        if t >= t_fail:
            raise exc
        return np.zeros(2)

    return controller


@pytest.fixture(scope="module", autouse=True)
def scenarios():
    """Scenarios whose controller is interrupted, breaks down numerically or warns."""

    def register(name, exc):
        @scenario(
            name,
            t_end=Param(0.5, "simulated time [s]", positive=True),
            t_fail=Param(0.2, "time at which the controller raises [s]", low=0.0),
        )
        def _run(p):
            """Particle on a circle (test scenario)."""
            traj, wall = timed_simulate(
                _circle(), np.array([1.0, 0.0]), np.zeros(2), p["t_end"],
                SimOptions(dt=1e-2), controller=_raising_at(p["t_fail"], exc),
            )  # fmt: skip
            return ScenarioResult(traj, {"samples": len(traj)}, wall)

    register("test-ctrl-c", KeyboardInterrupt())
    register("test-linalg", np.linalg.LinAlgError("singular matrix"))
    register("test-valueerror", ValueError("lambda_d has shape (3,)"))

    @scenario("test-warn", t_end=Param(0.1, "simulated time [s]", positive=True))
    def _warn(p):
        """Particle on a circle whose metric divides 0 by 0."""
        traj, wall = timed_simulate(
            _circle(), np.array([1.0, 0.0]), np.zeros(2), p["t_end"], SimOptions(dt=1e-2)
        )
        ratio = np.float64(0.0) / np.zeros(1)[0]
        return ScenarioResult(traj, {"ratio": float(ratio)}, wall)

    yield
    for name in ("test-ctrl-c", "test-linalg", "test-valueerror", "test-warn"):
        SCENARIOS.pop(name, None)


def test_python_api_interruption_carries_the_partial_trajectory():
    with pytest.raises(SimulationInterrupted, match="interrupted at t = 0.2") as info:
        simulate(
            _circle(), np.array([1.0, 0.0]), np.zeros(2), 1.0, SimOptions(dt=1e-2),
            controller=_raising_at(0.2, KeyboardInterrupt()),
        )  # fmt: skip
    traj = info.value.trajectory
    assert isinstance(info.value, KeyboardInterrupt)  # uncaught, it stops like any Ctrl-C
    assert len(traj) == 20 and abs(traj.t[-1] - 0.19) < 1e-9
    arrays = traj.arrays()
    assert {len(a) for a in arrays.values()} == {20}  # every series trimmed alike


def test_cli_interrupted_run_saves_what_it_has(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "test-ctrl-c", "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "interrupted at t = 0.2" in err[0] and str(out) in err[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] == 20
    assert isinstance(summary["wall_time_s"], float) and summary["realtime_factor"] > 0
    data = np.load(out / "trajectory.npz")
    assert data["t"].shape == (20,) and data["q"].shape == (20, 2)
    assert (out / "report.html").is_file()


def test_numerical_failure_is_a_failed_run_not_a_bad_parameter(tmp_path, capsys):
    """LinAlgError (a ValueError subclass) mid-run: exit 3, status failed, results kept."""
    for name, message in (("test-linalg", "LinAlgError"), ("test-valueerror", "ValueError")):
        out = tmp_path / name
        assert main(["run", name, "--out", str(out)]) == 3
        assert message in capsys.readouterr().err
        summary = json.loads((out / "summary.json").read_text())
        assert summary["status"] == "failed" and message in summary["message"]
        assert np.load(out / "trajectory.npz")["t"].shape == (20,)


def test_warnings_are_recorded_and_numbers_are_never_nan_strings(capsys):
    run = execute("test-warn")
    s = run.summary
    assert s["status"] == "ok"
    assert any("RuntimeWarning" in w and "test_interrupt.py" in w for w in s["warnings"])
    for key in ("wall_time_s", "realtime_factor"):
        assert isinstance(s[key], float) and np.isfinite(s[key])


def test_interrupted_before_the_first_sample_has_null_figures(tmp_path, capsys):
    """No sample at all: the figures that do not exist are JSON null, never "nan"."""
    out = tmp_path / "run"
    assert main(["run", "test-ctrl-c", "--set", "t_fail=0", "--out", str(out)]) == 130
    text = (out / "summary.json").read_text()
    summary = json.loads(text)
    assert summary["status"] == "interrupted" and summary["steps"] == 0
    assert summary["realtime_factor"] is None and summary["max_constraint_violation"] is None
    assert isinstance(summary["wall_time_s"], float) and '"nan"' not in text


def test_joint_limits_are_reported_once_per_joint():
    """Each joint that leaves its URDF limits gets one line, however often it leaves."""
    from pfaff.mechanism import load_robot
    from pfaff.simulate import Trajectory
    from pfaff.simulate.integrator import joint_limit_warnings

    mech = load_robot("panda")
    limits = mech.position_limits()
    assert [name for name, *_ in limits] == [f"panda_joint{i}" for i in range(1, 8)]
    traj = Trajectory(mech.nq, mech.nv, 0, 0)
    q = 0.5 * np.array([lo + hi for _, _, lo, hi in limits])  # mid-range
    for k in range(50):
        x = q.copy()
        if k % 10 == 5:  # joint 4 leaves its range five times, joint 6 once
            x[3] = limits[3][3] + 0.1
        if k == 20:
            x[5] = limits[5][2] - 0.01
        traj.append(t=0.01 * k, q=x)
    lines = joint_limit_warnings(mech, traj)
    assert len(lines) == 2
    assert "'panda_joint4'" in lines[0] and "t = 0.05 s" in lines[0]
    assert "'panda_joint6'" in lines[1]
    traj2 = Trajectory(mech.nq, mech.nv, 0, 0)
    traj2.append(t=0.0, q=q)
    assert joint_limit_warnings(mech, traj2) == []
    assert joint_limit_warnings(planar_particle(1.0), traj2) == []  # no declared limits


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_sigint_during_rolling_grasp(tmp_path):
    """SIGINT 4 s (of CPU time, so any machine load) into `pfaff run rolling-grasp`:
    exit 130, one line on stderr, status interrupted, trajectory.npz with the steps done.
    The command runs on the NumPy engine (about 17 s of simulation here): on the
    compiled core the whole run takes 0.5 s and 4 s would land in its post-processing."""
    out = tmp_path / "rg"
    cli = (
        "import sys\nfrom pfaff.cli import main\nfrom pfaff.simulate.options import use_engine\n"
        "with use_engine('numpy'):\n    sys.exit(main(sys.argv[1:]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", cli, "run", "rolling-grasp", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a background job inherits SIGINT ignored; give the child the terminal's default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 300
    while proc.poll() is None and _cpu_seconds(proc.pid) < 4.0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "interrupted at t = " in lines[0], stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] > 100
    data = np.load(out / "trajectory.npz")
    assert data["t"].shape[0] in (summary["steps"], summary["steps"] + 1)
    assert 0 < data["t"][-1] < 5.0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_sigint_during_a_limited_core_run(tmp_path):
    """SIGINT 6 s of CPU time into `pfaff run` of the biped on its joint stops for 2000 s
    (one call into the compiled core's limited run, minutes long): exit 130, status
    interrupted, trajectory.npz with the steps done. The core asks for the signal every
    64 steps."""
    out = tmp_path / "biped"
    biped = Path(__file__).parents[1] / "models" / "closed_chain_biped.xml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pfaff.cli", "run", str(biped), "--out", str(out),
         "--set", "t_end=2000", "--set", "record_every=50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while proc.poll() is None and _cpu_seconds(proc.pid) < 6.0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted at t = " in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] > 100
    data = np.load(out / "trajectory.npz")
    assert 0 < data["t"][-1] < 2000.0
