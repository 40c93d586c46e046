"""The ``pfaff sweep`` command: its arguments and its run (design.md Sec. 4); the
``pfaff`` command (:mod:`pfaff.cli`) adds it to its subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from pfaff.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE


def add_sweep_parser(sub, out_dir: Callable[[str], Path]) -> None:
    """The ``pfaff sweep`` subcommand on the subparsers ``sub`` (``out_dir``: the
    command line's check of an output folder)."""
    sw = sub.add_parser("sweep", help="run a scenario over a grid or random samples on Dask")
    sw.add_argument("name", help="scenario name (see `pfaff list`) or FILE.toml/.xml/.urdf")
    sw.add_argument(
        "--out",
        type=out_dir,
        required=True,
        metavar="DIR",
        help="sweep folder (resumed if it holds one)",
    )
    sw.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="values of a parameter; several --grid make the Cartesian product",
    )
    sw.add_argument(
        "--random",
        action="append",
        default=[],
        metavar="KEY=LO:HI",
        help="uniform random values of a parameter (with --samples, --seed)",
    )
    sw.add_argument("--samples", type=int, default=None, metavar="N", help="random points")
    sw.add_argument("--seed", type=int, default=0, metavar="S", help="seed of --random (0)")
    sw.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a fixed parameter of every point (repeatable)",
    )
    where = sw.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes of the local Dask cluster (default: the cores)",
    )
    where.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="an existing Dask scheduler, e.g. tcp://127.0.0.1:8786",
    )
    sw.add_argument("--force", action="store_true", help="start over: remove an earlier sweep")
    sw.add_argument(
        "--no-point-files",
        action="store_true",
        help="only the table and report, no run folder per point",
    )
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")  # fmt: skip
    sw.add_argument(
        "--yes",
        action="store_true",
        help="run more than 2000 points (pfaff.sweep.MAX_POINTS) without refusing",
    )


def run_sweep_command(args: argparse.Namespace) -> int:
    """Run ``pfaff sweep`` with the parsed ``args``; the exit status."""
    from pfaff.scenarios import ParameterError, parse_sets
    from pfaff.sweep import MAX_POINTS, parse_grid, parse_random, run_sweep

    try:
        res = run_sweep(
            args.name,
            args.out,
            grid=parse_grid(args.grid),
            random=parse_random(args.random),
            samples=args.samples,
            seed=args.seed,
            fixed=parse_sets(args.set),
            workers=args.workers,
            scheduler=args.scheduler,
            force=args.force,
            point_files=not args.no_point_files,
            progress=not args.no_progress,
            echo=print,
            max_points=None if args.yes else MAX_POINTS,
        )
    except ParameterError as exc:
        print(f"pfaff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # while writing the table: every finished point is in rows/
        print("pfaff: interrupted; run the same command again to finish", file=sys.stderr)
        return EXIT_INTERRUPTED
    n, ok, failed = len(res.points), res.count("ok"), res.count("failed")
    print(f"{args.name}: {n} points, {ok} ok, {failed} failed" + (
        f", {n - ok - failed} not finished" if res.interrupted else ""))  # fmt: skip
    for label, name in (("table", "results.parquet"), ("report", "report.html")):
        if (args.out / name).is_file():  # never a path that was not written
            print(f"{label}: {(args.out / name).resolve()}")
    if res.interrupted:
        print("pfaff: interrupted; run the same command again to finish", file=sys.stderr)
        return EXIT_INTERRUPTED
    if failed:
        print(f"pfaff: {failed} points failed (see the table's message column)", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
