"""The ``pfaff`` command (design.md Sec. 4).

::

    pfaff list                                     scenario names with a description
    pfaff run NAME [--out DIR] [--set KEY=VALUE]... [--force]
    pfaff bench [NAME...] [--json FILE]            the benchmark suite, a table of figures
    pfaff --version

Exit status: 0 ok; 2 bad command line, parameters, model file or output folder
(found before any step is simulated); 3 the simulation failed (results so far
are saved); 130 interrupted by Ctrl-C (results so far are saved, status
"interrupted").
"""

from __future__ import annotations

import argparse
import signal
import sys
import warnings
from pathlib import Path

from pfaff import __version__

EXIT_OK, EXIT_USAGE, EXIT_FAILED, EXIT_INTERRUPTED = 0, 2, 3, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit status 2
        self.exit(EXIT_USAGE, f"pfaff: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pfaff", description="Constrained multibody dynamics on the manifold.")
    p.add_argument("--version", action="version", version=f"pfaff {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.add_parser("list", help="list the scenarios")
    run = sub.add_parser("run", help="run a scenario and write its outputs")
    run.add_argument("name", help="scenario name (see `pfaff list`)")
    run.add_argument("--out", type=Path, default=None, help="output folder (default runs/NAME)")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario parameter (repeatable)",
    )
    run.add_argument("--force", action="store_true", help="write into a non-empty folder")
    run.add_argument("--params", action="store_true", help="list the scenario's parameters")
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


def _cmd_run(args: argparse.Namespace) -> int:
    from pfaff.report.output import check_out_dir, write_run
    from pfaff.scenarios import ParameterError, execute, get_scenario, parse_sets

    try:
        if args.params:
            return _cmd_params(args.name)
        sc = get_scenario(args.name)
        overrides = parse_sets(args.set)
        sc.resolve(overrides)  # refuse bad parameters before touching the folder
        out = args.out if args.out is not None else Path("runs") / args.name
        check_out_dir(out, args.force)  # an unwritable folder is found before the run
        run = execute(args.name, overrides)
    except ParameterError as exc:
        print(f"pfaff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # before any step: nothing to save
        print("pfaff: interrupted before the simulation started", file=sys.stderr)
        return EXIT_INTERRUPTED
    summary = run.summary
    try:
        write_run(run, out)
    except KeyboardInterrupt:
        print(f"pfaff: interrupted while writing {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        print(f"pfaff: error: could not write the outputs to {str(out)!r}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    for line in summary["warnings"]:
        print(f"pfaff: warning: {line}", file=sys.stderr)
    if summary["status"] == "interrupted":
        print(f"pfaff: {summary['message']}; results so far saved in {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(
        f"{args.name}: {summary['status']}  (sim {summary['sim_time_s']:.3g} s, "
        f"realtime x{_fmt(summary['realtime_factor'])}, "
        f"max |Phi| {_fmt(summary['max_constraint_violation'])})"
    )
    for key, value in summary["metrics"].items():
        print(f"  {key} = {value}")
    print(f"report: {(out / 'report.html').resolve()}")
    if summary["status"] != "ok":
        print(f"pfaff: simulation failed: {summary['message']}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _cmd_bench(names: list[str], json_file: str | None = None) -> int:
    from pfaff.bench import format_table, run_benchmarks, summary_json

    try:
        rows = run_benchmarks(names or None)
    except ValueError as exc:
        print(f"pfaff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(format_table(rows))
    if json_file:
        import json

        Path(json_file).write_text(json.dumps(summary_json(rows), indent=1, default=str) + "\n")
    return EXIT_OK


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
    if args.command == "bench":
        return _cmd_bench(args.names, args.json)
    _parser().print_help()
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
