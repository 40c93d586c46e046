"""A whole sweep: plan and validate, check the folder, run on Dask, write the table and report."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from pfaff.sweep.engine import dask_client, default_workers, run_points
from pfaff.sweep.points import Point, count_points, plan_points
from pfaff.sweep.store import SweepStore
from pfaff.sweep.table import build_table

__all__ = ["SweepResult", "run_sweep", "sweep"]

#: at most one rewrite of results.parquet/.csv per this many seconds while running
TABLE_EVERY_S = 2.0
#: the files a finished sweep has (kept as they are when a resumed sweep has nothing to run)
OUTPUTS = ("results.parquet", "results.csv", "report.html")
#: ``pfaff sweep`` refuses more points than this unless ``--yes`` (``max_points``)
MAX_POINTS = 2000


@dataclass
class SweepResult:
    """What a sweep did.

    Attributes
    ----------
    table : one row per point (see :mod:`pfaff.sweep.table`).
    points : the points, in table order.
    skipped : points that had finished in an earlier run of the sweep (resume).
    interrupted : Ctrl-C stopped the sweep; unfinished points have status ``interrupted``.
    written : files written (tables, report).
    """

    table: pd.DataFrame
    points: list[Point]
    skipped: int = 0
    interrupted: bool = False
    written: list[Path] = field(default_factory=list)

    def count(self, status: str) -> int:
        return int((self.table["status"] == status).sum())


class _Progress:
    """A tqdm bar with the points done, failed and the ETA (or nothing)."""

    def __init__(self, total: int, initial: int, failed: int, label: str, show: bool) -> None:
        self.failed = failed
        self.bar = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, initial=initial, desc=label, unit="point", file=sys.stderr
            )
            self.bar.set_postfix(failed=failed)

    def note(self, text: str, echo: Callable[[str], None] | None) -> None:
        """A one-line note that does not break the bar."""
        if self.bar is not None:
            self.bar.write(text)
        elif echo is not None:
            echo(text)

    def update(self, status: str) -> None:
        self.failed += status != "ok"
        if self.bar is not None:
            self.bar.set_postfix(failed=self.failed, refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _canonical(name: str) -> str:
    """A model or system file by its absolute path (the workers may not share the cwd)."""
    path = Path(name)
    if name.lower().endswith((".xml", ".urdf", ".toml")) and path.is_file():
        return str(path.resolve())
    return name


def _duration(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3.5 h``, ``2.1 days``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _eta(per_point: float, todo: int, workers: int) -> str:
    """The time ``todo`` points of ``per_point`` seconds take on ``workers`` workers."""
    waves = -(-todo // max(workers, 1))
    return f"about {_duration(per_point * waves)} ({per_point:.3g} s a point, {workers} at a time)"


def _workers(client: Any, workers: int | None) -> int:
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # an older or unusual client: the requested count
        return workers or 1


def _timing_notes(scenario: str, points: list[Point], most: int = 5) -> list[str]:
    """The distinct notes on end times rounded to whole steps (the first ``most``)."""
    from pfaff.scenarios import get_scenario

    sc = get_scenario(scenario)
    notes: dict[str, None] = {}
    for p in points:
        notes.update(dict.fromkeys(sc.timing_notes(p.params)))
        if len(notes) > most:
            return [*list(notes)[:most], "(more points with end times rounded to whole steps)"]
    return list(notes)


def _check_size(n: int, max_points: int | None) -> None:
    if max_points is not None and n > max_points:
        from pfaff.scenarios import ParameterError

        raise ParameterError(
            f"the sweep has {n} points, more than the {max_points} that pfaff sweep runs "
            "without asking; check the --grid/--samples values, or add --yes to run them all"
        )


def run_sweep(
    scenario: str,
    out: str | Path | None = None,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    random: Mapping[str, tuple[Any, Any]] | None = None,
    samples: int | None = None,
    seed: int = 0,
    fixed: Mapping[str, Any] | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    force: bool = False,
    point_files: bool = True,
    progress: bool = False,
    echo: Callable[[str], None] | None = None,
    max_points: int | None = None,
) -> SweepResult:
    """Run a sweep; see :func:`sweep` for the parameters.

    ``echo`` receives one-line notes: the number of points and the workers
    before the cluster starts, how many were already finished, and an
    estimate of the time to finish (from the finished points of a resumed
    sweep, else once the first point is in). ``max_points``: refuse a sweep of
    more points (``pfaff sweep`` passes :data:`MAX_POINTS` unless ``--yes``).
    Raises :class:`pfaff.scenarios.ParameterError` (bad parameters, too many
    points, a folder that cannot be written or is in use, a scheduler out of
    reach) before any point runs. The folder's lock (``DIR/.pfaff.lock``) is
    held from before the cluster starts until the sweep returns or raises.
    """
    from pfaff.scenarios import ParameterError

    if workers is not None and workers < 1:
        raise ParameterError(f"--workers must be >= 1, got {workers}")
    if out is not None and not str(out).strip():
        raise ParameterError("the sweep folder is an empty string; name a folder")
    scenario = _canonical(scenario)
    _check_size(count_points(grid, samples), max_points)  # before planning a huge grid
    points = plan_points(scenario, grid, random, samples, seed, fixed)
    _check_size(len(points), max_points)
    if echo is not None:
        for note in _timing_notes(scenario, points):
            echo(f"warning: {note}")
    store = SweepStore(out, scenario) if out is not None else None
    if store is None:
        return _run(scenario, points, None, grid, random, workers, scheduler, force,
                    point_files, progress, echo)  # fmt: skip
    store.check(force)
    lock = store.lock()
    try:
        return _run(scenario, points, store, grid, random, workers, scheduler, force,
                    point_files, progress, echo)  # fmt: skip
    finally:
        lock.release()


def _run(
    scenario: str,
    points: list[Point],
    store: SweepStore | None,
    grid: Mapping[str, Sequence[Any]] | None,
    random: Mapping[str, tuple[Any, Any]] | None,
    workers: int | None,
    scheduler: Any,
    force: bool,
    point_files: bool,
    progress: bool,
    echo: Callable[[str], None] | None,
) -> SweepResult:
    """The sweep once its points are planned and its folder (if any) is locked."""
    out = store.out if store is not None else None
    varied = list(grid or {}) + list(random or {})
    done: dict[str, dict[str, Any]] = {}
    ids = {p.id for p in points}
    if store is not None and not force:
        done = {k: v for k, v in store.finished().items() if k in ids}
    rows = dict(done)
    todo = [p for p in points if p.id not in done]
    if done and echo is not None:
        echo(f"{len(done)} of {len(points)} points already finished in {out}: skipped")
    if todo and echo is not None:  # before the cluster starts
        where = f"the scheduler {scheduler}" if scheduler is not None else (
            f"{workers or default_workers()} local workers")  # fmt: skip
        echo(
            f"{scenario}: {len(todo)} points to run on {where}; the time to finish is "
            "estimated when the first point is in"
        )
    failed = sum(r["status"] != "ok" for r in done.values())
    bar = _Progress(len(points), len(done), failed, scenario, False)
    last = [time.monotonic()]
    clock: dict[str, Any] = {"submitted": None, "workers": 1}

    def on_result(point: Point, result: dict[str, Any], final: bool) -> None:
        if clock["submitted"] is not None:  # the first point: the wall time of one point
            per_point, clock["submitted"] = time.monotonic() - clock["submitted"], None
            if len(todo) > clock["workers"]:
                eta = _eta(per_point, len(todo), clock["workers"])
                bar.note(f"first point in after {per_point:.3g} s: time to finish {eta}", echo)
        row = result["row"]
        if store is not None and final:
            store.record(point.id, row, result["files"] if point_files else {})
        rows[point.id] = row
        bar.update(row["status"])
        if store is not None and time.monotonic() - last[0] > TABLE_EVERY_S:
            store.write_table(build_table(points, rows))
            last[0] = time.monotonic()

    interrupted = prepared = False
    try:
        with dask_client(workers, scheduler) if todo else nullcontext() as client:
            # the scheduler is reachable: only now is the folder touched
            if store is not None:
                store.prepare(force)
                prepared = True
            bar = _Progress(len(points), len(done), failed, scenario, progress and bool(todo))
            if todo:
                clock.update(submitted=time.monotonic(), workers=_workers(client, workers))
                interrupted = run_points(client, scenario, todo, point_files, on_result)
    except KeyboardInterrupt:  # while the cluster was starting or stopping
        interrupted = True
    finally:
        bar.close()
    if store is not None and prepared:  # the files are the truth (Ctrl-C may hit a write)
        rows.update({k: v for k, v in store.finished().items() if k in ids})
    table = build_table(points, rows, missing="interrupted" if interrupted else "pending")
    result = SweepResult(table, points, len(done), interrupted)
    unchanged = not todo and all((store.out / n).is_file() for n in OUTPUTS) if store else False
    if store is not None and prepared and not unchanged:
        from pfaff.sweep.report import write_sweep_report

        result.written = store.write_table(table)
        result.written.append(
            write_sweep_report(store.out, scenario, table, varied, list(grid or {}))
        )
    return result


def sweep(
    scenario: str,
    out: str | Path | None = None,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    random: Mapping[str, tuple[Any, Any]] | None = None,
    samples: int | None = None,
    seed: int = 0,
    fixed: Mapping[str, Any] | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    force: bool = False,
    point_files: bool = True,
    progress: bool = False,
) -> pd.DataFrame:
    """Run one scenario over many parameter sets on Dask; return the results table.

    Parameters
    ----------
    scenario : a scenario name (``pfaff list``) or a model / system file
        (``.xml``, ``.urdf``, ``.toml``, as ``pfaff run`` takes).
    out : the sweep folder (``results.parquet``, ``results.csv``, ``report.html``,
        ``points/``); None writes nothing. A folder holding an earlier run of
        the same sweep is resumed: its finished points are not run again.
    grid : key -> values; the points are their Cartesian product.
    random : key -> (low, high): ``samples`` uniform draws (integers inclusive)
        with ``seed``, combined with every grid point.
    fixed : key -> value for every point.
    workers : worker processes of the local Dask cluster (default: the cores).
    scheduler : an existing Dask scheduler's address (``tcp://HOST:PORT``) or a
        ``distributed.Client``; then ``workers`` is not used.
    force : start over in ``out``: remove an earlier sweep's files first.
    point_files : write each point's run folder under ``out/points/<point>/``.
    progress : show a progress bar on stderr.

    Returns
    -------
    pandas.DataFrame
        One row per point: ``point``, the parameters, ``status``, ``message``,
        ``wall_time_s``, ``realtime_factor``, ``max_constraint_violation`` and
        the scenario's metrics.

    Examples
    --------
    >>> import pfaff.sweep
    >>> table = pfaff.sweep("particle-circle", grid={"theta0": [0.0, 0.5]},
    ...                     fixed={"t_end": 0.5}, workers=2)  # doctest: +SKIP
    """
    return run_sweep(
        scenario,
        out,
        grid=grid,
        random=random,
        samples=samples,
        seed=seed,
        fixed=fixed,
        workers=workers,
        scheduler=scheduler,
        force=force,
        point_files=point_files,
        progress=progress,
    ).table
