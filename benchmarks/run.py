"""Run the pfaff benchmark suite without the console script.

Usage: ``python benchmarks/run.py [NAME...]`` (no name: every benchmark).
Same output as ``pfaff bench [NAME...]``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# one core: keep BLAS/OpenMP single-threaded (must be set before numpy loads)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# the source tree, so that the suite runs from a checkout without an install
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pfaff.bench import format_table, run_benchmarks  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Print the table of the named benchmarks; exit status 2 for an unknown name."""
    names = sys.argv[1:] if argv is None else argv
    try:
        rows = run_benchmarks(names or None)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
