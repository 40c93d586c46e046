"""pfaff sweep on Dask: a loopback scheduler, the local default, a killed worker, Ctrl-C.

The points are cheap particle-circle runs (short t_end). Metrics are compared
with serial runs of the same points in this process, to the last bit.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import pfaff
from pfaff.cli import main
from pfaff.scenarios import execute

PC = "particle-circle"
BIN = Path(sys.executable).parent


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _same(a, b) -> bool:
    """Equal to the last bit (a figure that does not exist, None or NaN, on both sides)."""
    return (_missing(a) and _missing(b)) or a == b


def _assert_serial_equal(row: pd.Series, overrides: dict[str, str]) -> None:
    summary = execute(PC, overrides).summary
    assert row["status"] == summary["status"]
    assert _same(row["max_constraint_violation"], summary["max_constraint_violation"])
    for key, value in summary["metrics"].items():
        assert _same(row[key], value), (key, row[key], value)


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def loopback(tmp_path_factory):
    """A Dask scheduler and two single-threaded workers on 127.0.0.1, as docs/sweeps.md
    starts them."""
    from distributed import Client

    file = tmp_path_factory.mktemp("dask") / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    sched = subprocess.Popen(
        [BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", file], **quiet,
    )  # fmt: skip
    worker = None
    try:
        for _ in range(600):
            if file.exists() and file.stat().st_size > 0:
                break
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        worker = subprocess.Popen(
            [BIN / "dask", "worker", address, "--nworkers", "2", "--nthreads", "1",
             "--no-dashboard"], **quiet,
        )  # fmt: skip
        with Client(address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        if worker is not None:
            _stop(worker)
        _stop(sched)


def test_loopback_scheduler_metrics_equal_serial_runs_and_resume(loopback, tmp_path, capsys):
    out = tmp_path / "sw"
    grid = {"theta0": ["0", "0.7"], "m": ["1", "2.5"]}
    table = pfaff.sweep(
        PC, out, grid=grid, fixed={"t_end": "0.1"}, scheduler=loopback, point_files=False
    )
    assert len(table) == 4 and table["point"].is_unique
    assert list(table["status"]) == ["ok"] * 4
    for _, row in table.iterrows():
        _assert_serial_equal(
            row, {"theta0": str(float(row["theta0"])), "m": str(float(row["m"])), "t_end": "0.1"}
        )
    pd.testing.assert_frame_equal(pd.read_parquet(out / "results.parquet"), table)
    assert len(list((out / "rows").glob("*.json"))) == 4
    report = (out / "report.html").read_text()
    assert "energy_drift_rel over theta0 and m" in report and "data:image/png" in report

    # the same command again runs nothing; more grid values run only the new points
    cmd = ["sweep", PC, "--out", str(out), "--grid", "theta0=0,0.7", "--grid", "m=1,2.5",
           "--set", "t_end=0.1", "--scheduler", loopback, "--no-progress",
           "--no-point-files"]  # fmt: skip
    stamp = {p: p.stat().st_mtime_ns for p in (out / "rows").iterdir()}
    assert main(cmd) == 0
    assert "4 of 4 points already finished" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in (out / "rows").iterdir()} == stamp
    cmd[5] = "theta0=0,0.7,1.4"
    assert main(cmd) == 0
    assert "4 of 6 points already finished" in capsys.readouterr().out
    again = pd.read_parquet(out / "results.parquet")
    assert len(again) == 6 and again["point"].is_unique and set(again["status"]) == {"ok"}
    pd.testing.assert_frame_equal(again.iloc[:4], table)  # read back, not run again
    assert not (out / "points").exists() and len(list((out / "rows").iterdir())) == 6
    # --force starts over
    assert (
        main([*cmd[:5], "theta0=0", "--set", "t_end=0.1", "--scheduler", loopback, "--force"]) == 0
    )
    assert "already finished" not in capsys.readouterr().out
    assert [p.stem for p in (out / "rows").iterdir()] == [
        p.name for p in (out / "points").iterdir()
    ]
    assert len(pd.read_csv(out / "results.csv")) == 1


def test_a_failed_point_is_a_row_and_the_sweep_goes_on(loopback, tmp_path, capsys):
    out = tmp_path / "sw"
    cmd = ["sweep", PC, "--out", str(out), "--grid", "omega0=0,1e200,1",
           "--set", "t_end=0.05", "--scheduler", loopback]  # fmt: skip
    assert main(cmd) == 3
    captured = capsys.readouterr()
    assert "3 points, 2 ok, 1 failed" in captured.out
    assert "3/3" in captured.err and "failed=1" in captured.err  # the progress bar
    table = pd.read_csv(out / "results.csv")
    for point in table["point"]:  # each point's run folder, a failed one too
        files = {p.name for p in (out / "points" / point).iterdir()}
        assert {"summary.json", "trajectory.npz", "report.html"} <= files
    assert list(table["status"]) == ["ok", "failed", "ok"]
    assert "non-finite" in table["message"][1]
    summary = json.loads((out / "points" / table["point"][1] / "summary.json").read_text())
    assert summary["status"] == "failed"
    report = (out / "report.html").read_text()
    assert "non-finite" in report and "energy_drift_rel against omega0" in report
    # a failed point has finished: a resumed sweep does not run it again
    assert main(cmd) == 3
    assert "3 of 3 points already finished" in capsys.readouterr().out


def test_a_worker_killed_mid_point_loses_nothing_and_counts_nothing_twice(tmp_path):
    from distributed import Client, LocalCluster

    from pfaff.sweep import run_sweep
    from pfaff.sweep.engine import NO_DASHBOARD

    grid = {"theta0": ["0", "0.1", "0.6", "0.9"]}
    fixed = {"t_end": "2"}
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, **NO_DASHBOARD) as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        client.wait_for_workers(2, timeout=120)
        box = {}
        thread = threading.Thread(
            target=lambda: box.update(res=run_sweep(
                PC, tmp_path, grid=grid, fixed=fixed, scheduler=client, point_files=False
            ))
        )  # fmt: skip
        thread.start()
        victim = key = None
        for _ in range(1200):
            busy = {w: ks for w, ks in client.processing().items() if ks}
            if busy:
                victim, keys = next(iter(busy.items()))
                key = sorted(keys)[0]
                break
            time.sleep(0.05)
        assert victim is not None, "no point started"
        time.sleep(0.3)
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        thread.join(timeout=300)
        assert not thread.is_alive()
        assert pid not in client.run(os.getpid).values()  # the worker did die
    res = box["res"]
    table = res.table
    assert len(table) == 4 and table["point"].is_unique
    assert list(table["status"]) == ["ok"] * 4
    assert sorted(p.stem for p in (tmp_path / "rows").glob("*.json")) == sorted(table["point"])
    killed = table[[p in str(key) for p in table["point"]]]
    assert len(killed) == 1
    _assert_serial_equal(killed.iloc[0], {"theta0": str(float(killed.iloc[0]["theta0"])), **fixed})


def test_ctrl_c_keeps_what_finished_and_exits_130(tmp_path):
    out = tmp_path / "sw"
    # t_end = 1000 s: 1.3 .. 2.5 s of work per point on the compiled core (particle-circle
    # runs 400 .. 800x real time on the 2-core VMs here), so that three points are
    # still to run when the first row appears (with t_end = 200 a fast host finished
    # them within 0.8 s, and a loaded test runner could miss that window)
    cmd = [BIN / "pfaff", "sweep", PC, "--out", out, "--grid", "theta0=0,0.2,0.4,0.6",
           "--set", "t_end=1000", "--workers", "1", "--no-point-files",
           "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # a background job inherits SIGINT ignored; give the child the terminal's default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for _ in range(3000):
            if list((out / "rows").glob("*.json")) or proc.poll() is not None:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the workers get it too
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    table = pd.read_parquet(out / "results.parquet")
    assert len(table) == 4 and table["point"].is_unique
    finished = set(table[table["status"] == "ok"]["point"])
    assert finished and set(table["status"]) <= {"ok", "interrupted"}
    assert {p.stem for p in (out / "rows").glob("*.json")} == finished


_DESTRUCTOR = """
import os, signal, sys, time
from pfaff.sweep.engine import sigint_latch

signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job ignores it
with sigint_latch() as hit:

    class Finalised:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            end = time.monotonic() + 10.0  # the handler runs between these bytecodes
            while not hit.is_set() and time.monotonic() < end:
                pass

    Finalised()  # dropped at once: "Exception ignored in ... KeyboardInterrupt"
    seen = hit.is_set()
restored = signal.getsignal(signal.SIGINT) is signal.default_int_handler
print(seen, restored)
"""


def test_a_ctrl_c_swallowed_inside_a_destructor_is_still_seen():
    """Python swallows a KeyboardInterrupt raised in a __del__ or a gc callback (Dask
    installs one); the sweep's SIGINT handler records the Ctrl-C first. In a fresh
    interpreter: the suite's worker may hold threads or handlers of other tests."""
    out = subprocess.run(
        [sys.executable, "-c", _DESTRUCTOR], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"], (out.stdout, out.stderr)


def test_ctrl_c_inside_dask_gc_callback_sets_the_latch_without_a_traceback():
    """A Ctrl-C that lands in Dask's gc callback sets the latch and raises nothing there
    (the interpreter would print the exception's traceback as "Exception ignored");
    anywhere else it raises KeyboardInterrupt (the wrong frame is caught)."""
    from pfaff.sweep.engine import in_gc_callback, sigint_latch

    def _gc_callback():
        return sys._getframe()

    inside = _gc_callback()
    assert in_gc_callback(inside) and not in_gc_callback(sys._getframe())
    # a background job (CI) ignores SIGINT, where no latch is installed: Python's own
    # handler while the test runs
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with sigint_latch() as hit:
            handler = signal.getsignal(signal.SIGINT)
            handler(signal.SIGINT, inside)
            assert hit.is_set()
            with pytest.raises(KeyboardInterrupt):
                handler(signal.SIGINT, sys._getframe())
    finally:
        signal.signal(signal.SIGINT, previous)
