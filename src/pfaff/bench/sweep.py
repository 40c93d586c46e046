"""``pfaff sweep`` on local Dask clusters (``pfaff bench sweep``)."""

from __future__ import annotations

import math
import statistics
import time

from .timing import Row, row

# -- sweep -------------------------------------------------------------------------------
#: the throughput points: particle-circle runs of about 0.5-1 s of work each on the
#: compiled core (500x real time), so that Dask's fixed costs do not hide the scaling
SWEEP_POINTS = 8
SWEEP_FIXED = {"t_end": "300"}
SWEEP_REPEATS = 3
#: the overhead points: particle-circle runs of two steps
SWEEP_TRIVIAL = {"t_end": "0.01"}
SWEEP_TRIVIAL_POINTS = 60


def _timed_sweep(client, grid: dict, fixed: dict, out) -> tuple[float, object]:
    from pfaff.sweep import run_sweep

    t0 = time.perf_counter()
    res = run_sweep("particle-circle", out, grid=grid, fixed=fixed, scheduler=client,
                    point_files=False, force=True)  # fmt: skip
    return time.perf_counter() - t0, res


def _warm_worker() -> None:
    """Import the scenarios and run one trivial point (on a Dask worker)."""
    from pfaff.scenarios import execute

    execute("particle-circle", SWEEP_TRIVIAL)


def _missing(x: object) -> bool:
    """A figure that does not exist: None (summary.json's null) or NaN (the table's)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def _thetas(n: int, first: int = 0) -> dict:
    """``n`` distinct initial angles (distinct points, so no Dask result is reused)."""
    return {"theta0": [f"{0.01 * i:.2f}" for i in range(first, first + n)]}


def _record_ms(folder: str, n: int = 50) -> float:
    """Median time of writing one finished point's row file (atomic, fsync-ed)."""
    from pfaff.sweep.store import SweepStore

    store = SweepStore(folder, "particle-circle")
    store.prepare(force=True)
    row_ = {"status": "ok", "message": "", "wall_time_s": 1.0, "realtime_factor": 1.0,
            "max_constraint_violation": 1e-13, "metrics": {"x": 1.0}}  # fmt: skip
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        store.record(f"p{i}", row_, {})
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def bench_sweep() -> list[Row]:
    """``pfaff sweep`` on local Dask clusters (design.md Sec. 8).

    The same 8 points on a 1-worker and a 2-worker cluster (started and warmed
    up beforehand), 3 times, interleaved, no files; Dask's cost per trivial
    point (a sweep of 60 two-step points on 1 worker, no files, median of 3,
    less the same points run serially here); the sweep's metrics against those
    serial runs, to the last bit; the time to write a finished point's row file.
    """
    import tempfile

    from distributed import Client, LocalCluster

    from pfaff.scenarios import execute
    from pfaff.sweep.engine import NO_DASHBOARD

    b = "sweep"
    times: dict[int, list[float]] = {1: [], 2: []}
    ok, per_point = True, []
    with (
        tempfile.TemporaryDirectory(prefix="pfaff-bench-sweep-") as tmp,
        LocalCluster(n_workers=1, threads_per_worker=1, silence_logs=40, **NO_DASHBOARD) as c1,
        Client(c1, set_as_default=False) as one,
    ):
        t0 = time.perf_counter()
        with (
            LocalCluster(n_workers=2, threads_per_worker=1, silence_logs=40, **NO_DASHBOARD) as c2,
            Client(c2, set_as_default=False) as two,
        ):
            two.wait_for_workers(2)
            two.run(_warm_worker)  # imports, caches
            start = time.perf_counter() - t0
            one.run(_warm_worker)
            # interleaved, so that a change of the host's load hits both alike
            for rep in range(SWEEP_REPEATS):
                for n, client in ((1, one), (2, two)):
                    grid = _thetas(SWEEP_POINTS, rep * SWEEP_POINTS)
                    t, res = _timed_sweep(client, grid, SWEEP_FIXED, None)
                    times[n].append(t)
                    ok &= res.count("ok") == SWEEP_POINTS
        for rep in range(4):  # the first one warms up
            grid = _thetas(SWEEP_TRIVIAL_POINTS, rep * SWEEP_TRIVIAL_POINTS)
            t, trivial = _timed_sweep(one, grid, SWEEP_TRIVIAL, None)
            per_point.append(t / SWEEP_TRIVIAL_POINTS)
        record_ms = _record_ms(f"{tmp}/rows")
    serial, same = [], True
    for _, point in trivial.table.iterrows():
        t0 = time.perf_counter()
        summary = execute(
            "particle-circle", {**SWEEP_TRIVIAL, "theta0": float(point["theta0"])}
        ).summary
        serial.append(time.perf_counter() - t0)
        values = [summary["max_constraint_violation"], *summary["metrics"].values()]
        got = [point["max_constraint_violation"], *(point[k] for k in summary["metrics"])]
        same &= all(a == c or (_missing(a) and _missing(c)) for a, c in zip(values, got))
    overhead_ms = (statistics.median(per_point[1:]) - statistics.median(serial)) * 1e3
    t1, t2 = statistics.median(times[1]), statistics.median(times[2])
    ratio = t2 / t1
    n = f"{SWEEP_POINTS} particle-circle points, t_end={SWEEP_FIXED['t_end']} s"
    return [
        row(b, "8 points: 2 workers / 1 worker", ratio, "", "<= 0.6",
            f"{n}: {t1:.3g} s on 1 worker, {t2:.3g} s on 2 (medians of {SWEEP_REPEATS}, "
            "interleaved)"),
        row(b, "throughput gain per added worker", t1 / t2 - 1, "", ">= 0.85",
            "design.md Sec. 8: (T1/T2 - 1) for one added worker"),
        row(b, "points ok", "yes" if ok else "no", "", "== yes", n),
        row(b, "Dask overhead per trivial point", overhead_ms, "ms", "<= 50",
            f"{SWEEP_TRIVIAL_POINTS} two-step points on 1 worker, median of 3, "
            f"less a serial run ({statistics.median(serial) * 1e3:.3g} ms)"),
        row(b, "row file per finished point", record_ms, "ms", "",
            "atomic write + fsync, on the client"),
        row(b, "sweep metrics == serial runs", "yes" if same else "no", "", "== yes",
            f"{SWEEP_TRIVIAL_POINTS} trivial points, to the last bit"),
        row(b, "local cluster start", start, "s", "", "2 workers, until each ran a point"),
    ]  # fmt: skip
