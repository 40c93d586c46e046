"""The ``pfaff`` command (design.md Sec. 4).

::

    pfaff list                                     scenario names with a description
    pfaff run NAME|FILE.toml|FILE.xml|FILE.urdf [--out DIR] [--set KEY=VALUE]... [--force]
    pfaff compare FILE.xml [--out DIR] [--set KEY=VALUE]... [--force]
    pfaff sweep NAME --out DIR [--grid KEY=V1,V2,...]... [--random KEY=LO:HI --samples N
                [--seed S]] [--set KEY=VALUE]... [--workers N | --scheduler ADDRESS]
                [--force] [--no-point-files] [--yes]  many runs on Dask, a results table
    pfaff bench [NAME...] [--json FILE]            the benchmark suite, a table of figures
    pfaff --version

Exit status: 0 ok; 2 bad command line, parameters, model file or output folder
(found before any step is simulated: an end time shorter than one step, a
controller period that is not a whole number of steps, an empty ``--out``, a
folder another live process holds, a sweep of more than ``MAX_POINTS`` points
without ``--yes``); 3 the simulation failed (results so far are saved; for a
sweep: some point failed); 130 interrupted by Ctrl-C (results so far are saved,
status "interrupted"; a sweep keeps its finished points).

While ``run``, ``compare`` or ``sweep`` writes into DIR it holds ``DIR/.pfaff.lock``
(its pid), released on every exit path; a lock left by a dead process is taken over.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
import warnings
from pathlib import Path

from pfaff import __version__
from pfaff.cli.sweep import add_sweep_parser, run_sweep_command
from pfaff.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit status 2
        self.exit(EXIT_USAGE, f"pfaff: error: {message}\n")


def _out_dir(text: str) -> Path:
    """``--out DIR``: a folder name (an empty one would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "the output folder is an empty string; name a folder (--out . for this one)"
        )
    return Path(text)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pfaff", description="Constrained multibody dynamics on the manifold.")
    p.add_argument("--version", action="version", version=f"pfaff {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.add_parser("list", help="list the scenarios")
    run = sub.add_parser("run", help="run a scenario and write its outputs")
    run.add_argument(
        "name", help="scenario name (see `pfaff list`), FILE.xml, FILE.urdf or FILE.toml"
    )
    run.add_argument(
        "--out", type=_out_dir, default=None, help="output folder (default runs/NAME)"
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario parameter (repeatable)",
    )
    run.add_argument("--force", action="store_true", help="write into a non-empty folder")
    run.add_argument("--params", action="store_true", help="list the scenario's parameters")
    run.add_argument(
        "--view",
        action="store_true",
        help="watch a model or system file's run in a live 3D view (meshcat on loopback), "
        "paced to real time",
    )
    view = sub.add_parser("view", help="a model or system file in a live 3D viewer")
    view.add_argument("file", help="FILE.xml (MJCF), FILE.urdf or FILE.toml (system file)")
    view.add_argument("--keyframe", default=None, help="an MJCF keyframe to start from")
    view.add_argument(
        "--seconds",
        type=float,
        default=None,
        metavar="S",
        help="serve for S seconds, then exit (default: until Ctrl-C)",
    )
    view.add_argument("--open", action="store_true", help="also open the web browser")
    cmp_ = sub.add_parser("compare", help="an MJCF model in MuJoCo and in pfaff, side by side")
    cmp_.add_argument("file", help="MJCF file (.xml), compiled by MuJoCo")
    cmp_.add_argument("--out", type=_out_dir, default=None, help="output folder")
    cmp_.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="t_end=..., dt=..."
    )
    cmp_.add_argument("--force", action="store_true", help="write into a non-empty folder")
    add_sweep_parser(sub, _out_dir)
    bench = sub.add_parser("bench", help="run the benchmark suite")
    bench.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    return p


def _cmd_list() -> int:
    from pfaff.scenarios import SCENARIOS

    width = max(len(n) for n in SCENARIOS)
    for name in sorted(SCENARIOS):
        print(f"{name:<{width}}  {SCENARIOS[name].description}")
    return EXIT_OK


def _cmd_params(name: str) -> int:
    from pfaff.scenarios import get_scenario

    sc = get_scenario(name)
    for key, par in sc.params.items():
        print(f"{key:<14} {par.type.__name__:<6} default {par.default!r:<14} {par.doc}")
    return EXIT_OK


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _warn(lines: list[str]) -> None:
    for line in lines:
        print(f"pfaff: warning: {line}", file=sys.stderr)


def _cmd_run(args: argparse.Namespace) -> int:
    """``pfaff run`` (and ``pfaff compare``): the output folder's lock is released on
    every exit path."""
    locks: list = []
    try:
        return _run_locked(args, locks)
    finally:
        for lock in locks:
            lock.release()


def _run_locked(args: argparse.Namespace, locks: list) -> int:
    from pfaff.report.output import check_out_dir, lock_out_dir, write_run
    from pfaff.scenarios import ParameterError, execute, get_scenario, parse_sets

    try:
        if args.params:
            return _cmd_params(args.name)
        sc = get_scenario(args.name)
        overrides = parse_sets(args.set)
        sc.resolve(overrides)  # refuse bad parameters before touching the folder
        out = args.out if args.out is not None else Path("runs") / Path(args.name).stem
        check_out_dir(out, args.force)  # an unwritable or busy folder is found before the run
        locks.append(lock_out_dir(out))
        if getattr(args, "view", False):
            run = _run_viewed(args.name, overrides)
        else:
            run = execute(args.name, overrides)
    except ParameterError as exc:
        print(f"pfaff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # before any step: nothing to save
        print("pfaff: interrupted before the simulation started", file=sys.stderr)
        return EXIT_INTERRUPTED
    summary = run.summary
    try:
        written = write_run(run, out)
    except KeyboardInterrupt:
        print(f"pfaff: interrupted while writing {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        print(f"pfaff: error: could not write the outputs to {str(out)!r}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    _warn(summary["warnings"])  # e.g. an end time rounded to whole steps
    if summary["status"] == "interrupted":
        print(f"pfaff: {summary['message']}; results so far saved in {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(
        f"{args.name}: {summary['status']}  (sim {summary['sim_time_s']:.3g} s, "
        f"{summary['steps']} steps, realtime x{_fmt(summary['realtime_factor'])}, "
        f"max |Phi| {_fmt(summary['max_constraint_violation'])})"
    )
    for key, value in summary["metrics"].items():
        print(f"  {key} = {value}")
    report = out / "report.html"
    if any(p.name == report.name for p in written):  # never a path that was not written
        print(f"report: {report.resolve()}")
    else:
        print(f"outputs: {out.resolve()} ({', '.join(sorted(p.name for p in written))})")
    if summary["status"] != "ok":
        print(f"pfaff: simulation failed: {summary['message']}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _cmd_bench(names: list[str], json_file: str | None = None) -> int:
    from pfaff.bench import format_table, run_benchmarks, summary_json
    from pfaff.report.io import atomic_write_json

    try:
        rows = run_benchmarks(names or None)
    except ValueError as exc:
        print(f"pfaff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(format_table(rows))
    if json_file:
        atomic_write_json(json_file, summary_json(rows))
    return EXIT_OK


def _live_view(path: str, keyframe: str | None = None, open: bool = False, contact=True):
    """A live view of a model or system file (ParameterError for anything else; its
    contact pairs modelled with ``contact``)."""
    from pfaff.api import load
    from pfaff.api.viewer import Viewer
    from pfaff.errors import ModelError, ParameterError

    if Path(path).suffix.lower() not in (".xml", ".urdf", ".toml"):
        raise ParameterError(
            f"{path!r}: the live view draws model and system files (.xml, .urdf, .toml); "
            "a named scenario's report has its scene.html"
        )
    if not Path(path).is_file():
        raise ParameterError(f"{path!r}: no such file")
    try:
        view = Viewer(load(path, keyframe, contact=contact), open=open)
    except ModelError as exc:
        raise ParameterError(str(exc)) from None
    print(f"live view: {view.url}  (open it in a browser)", flush=True)
    return view


def _run_viewed(name: str, overrides: dict):
    """``pfaff run FILE --view``: the run watched in a live view, paced to real time,
    its contact forces drawn (``--set contact=false``: none)."""
    from pfaff.scenarios import execute, get_scenario
    from pfaff.simulate.watch import watching

    params = get_scenario(name).resolve(overrides)
    view = _live_view(name, params.get("keyframe") or None, contact=params.get("contact", True))
    try:
        with watching(view.follow, contacts=True):
            return execute(name, overrides)
    finally:
        view.close()


def _cmd_view(args: argparse.Namespace) -> int:
    from pfaff.scenarios import ParameterError

    if args.seconds is not None and not args.seconds >= 0:
        print(f"pfaff: error: --seconds {args.seconds}: expected >= 0", file=sys.stderr)
        return EXIT_USAGE
    try:
        view = _live_view(args.file, args.keyframe, args.open, contact=False)  # no forces: opaque
    except ParameterError as exc:
        print(f"pfaff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # `kill PID` stops the view as Ctrl-C does, so meshcat's server (a child process)
    # is stopped too rather than left running on its port
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if args.seconds is None:
            print("serving until Ctrl-C", flush=True)
            while True:
                time.sleep(3600)
        time.sleep(args.seconds)
    except KeyboardInterrupt:
        pass
    finally:
        view.close()
    return EXIT_OK


def _interrupt(signum, frame) -> None:
    """A signal handler that stops the program as Ctrl-C does."""
    raise KeyboardInterrupt


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr (e.g. a violated gain condition)."""
    print(f"pfaff: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    warnings.showwarning = _show_warning
    if argv is None and hasattr(signal, "SIGPIPE"):  # `pfaff list | head`: quiet, like ls
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        args = _parser().parse_args(argv)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    if args.command == "list":
        return _cmd_list()
    if args.command == "run":
        return _cmd_run(args)
    if args.command == "sweep":
        return run_sweep_command(args)
    if args.command == "compare":
        out = args.out or Path("runs") / f"{Path(args.file).stem}-compare"
        ns = argparse.Namespace(
            name=f"compare:{args.file}", out=out, set=args.set, force=args.force, params=False
        )
        return _cmd_run(ns)
    if args.command == "view":
        return _cmd_view(args)
    if args.command == "bench":
        return _cmd_bench(args.names, args.json)
    _parser().print_help()
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
