"""The report figures of the paper case studies shown on the documentation site.

Runs each scenario below with its defaults, as ``pfaff run NAME`` does, and copies the
named plots of its report into ``docs/figures/NAME-PLOT.png``, where
``docs/papers.md`` shows them. Run it after a change to a scenario or its plots::

    python tools/docs_figures.py            # every scenario below
    python tools/docs_figures.py geodesic   # only the named ones
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "docs" / "figures"
#: scenario -> the plots of its report shown on the site
FIGURES = {
    "handwriting-robot": ("lyapunov", "em1"),
    "yz-contact": ("contact", "forces"),
    "rolling-grasp": ("wrench_residual",),
    "geodesic": ("geodesic_vs_line",),
}


def figure_paths() -> list[Path]:
    """Every figure file the site shows."""
    return [FOLDER / f"{name}-{plot}.png" for name, plots in FIGURES.items() for plot in plots]


def make(names: list[str] | None = None) -> list[Path]:
    """Run the scenarios and copy their plots; returns the files written."""
    from pfaff.cli import main

    unknown = sorted(set(names or ()) - set(FIGURES))
    if unknown:
        raise SystemExit(f"unknown scenario(s) {unknown}; valid: {', '.join(FIGURES)}")
    FOLDER.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names or list(FIGURES):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / name
            if main(["run", name, "--out", str(out)]) != 0:
                raise SystemExit(f"pfaff run {name} failed")
            for plot in FIGURES[name]:
                target = FOLDER / f"{name}-{plot}.png"
                shutil.copyfile(out / f"{plot}.png", target)
                written.append(target)
    return written


if __name__ == "__main__":
    for path in make(sys.argv[1:] or None):
        print(path.relative_to(REPO))
