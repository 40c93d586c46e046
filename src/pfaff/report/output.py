"""Write a scenario run into a folder (design.md Sec. 4).

Outputs in DIR: ``summary.json``, ``trajectory.npz``, PNG plots, ``report.html``
and, for planar scenarios, ``animation.gif`` -- each written atomically. A
failed run still writes what it has, with ``"status": "failed"``.
"""

from __future__ import annotations

from pathlib import Path

from pfaff.report.io import atomic_savez, atomic_write_json, atomic_write_text
from pfaff.report.plots import plot_series
from pfaff.report.writer import write_report
from pfaff.scenarios.registry import ParameterError
from pfaff.scenarios.runner import Run


class OutputExistsError(ParameterError):
    """The output folder is not empty and ``force`` was not given."""


def check_out_dir(out_dir: str | Path, force: bool) -> None:
    """Refuse a non-empty folder (or a file in the way) unless ``force``."""
    out = Path(out_dir)
    if out.exists():
        if not out.is_dir():
            raise OutputExistsError(f"output path {str(out)!r} exists and is not a folder")
        if any(out.iterdir()) and not force:
            raise OutputExistsError(
                f"output folder {str(out)!r} is not empty; use --force to overwrite"
            )


def _scenario_plots(run: Run) -> dict:
    """The scenario's plot specifications as callables drawing PNGs."""
    t = run.arrays["t"]
    return {
        name: (
            lambda spec=spec: plot_series(
                t, spec["series"], spec["title"], spec["ylabel"], spec.get("log", False)
            )
        )
        for name, spec in run.result.plots.items()
    }


def _write_scene(out: Path, run: Run) -> Path:
    """The scenario's 3D scene as a standalone ``scene.html``."""
    from pfaff.mechanism.robots import package_dir
    from pfaff.report.scene3d import scene_html

    sc = run.result.scene3d
    html = scene_html(
        sc.get("urdf"),
        package_dir(),
        sc.get("q"),
        sc["t"],
        locked_joints=sc.get("locked"),
        extra_points=sc.get("points"),
        plane=sc.get("plane"),
        title=run.summary["scenario"],
        robots=sc.get("robots"),
        boxes=sc.get("boxes"),
    )
    return atomic_write_text(out / "scene.html", html)


def write_run(run: Run, out_dir: str | Path, report: bool = True) -> list[Path]:
    """Write ``trajectory.npz``, ``summary.json`` and the report of a run."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [
        atomic_savez(out / "trajectory.npz", **run.arrays),
        atomic_write_json(out / "summary.json", run.summary),
    ]
    res = run.result
    description = run.description
    if report and res is not None and res.scene3d is not None:
        written.append(_write_scene(out, run))
        description += (
            "\n\n3D scene: open scene.html (in this folder) in a browser; it needs no network."
        )
    if report and run.arrays:
        written += write_report(
            out,
            run.summary,
            run.arrays,
            run.series_doc,
            description=description,
            polylines_xy=res.polylines_xy if res is not None else None,
            animation_t=res.animation_t if res is not None else None,
            static_lines=res.static_lines if res is not None else None,
            extra_plots=_scenario_plots(run) if res is not None else None,
        )
    return written
