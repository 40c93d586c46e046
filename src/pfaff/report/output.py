"""Write a scenario run into a folder (design.md Sec. 4).

Outputs in DIR: ``summary.json``, ``trajectory.npz``, PNG plots, ``report.html``
and, for planar scenarios, ``animation.gif`` -- each written atomically. A
failed or interrupted run still writes what it has, with ``"status": "failed"``
or ``"interrupted"``. The list of files a run wrote is kept in
``DIR/.pfaff-files.json``: with ``--force`` the next run removes the files of
the earlier run that it does not write again, and never a file pfaff did not
write. While a run writes into DIR it holds ``DIR/.pfaff.lock``
(:func:`lock_out_dir`), so a second run into the same folder is refused
instead of replacing the first one's files.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path

from pfaff.errors import ParameterError
from pfaff.report.io import (
    LOCK_NAME,
    FolderInUseError,
    FolderLock,
    atomic_savez,
    atomic_write_json,
    atomic_write_text,
)
from pfaff.report.plots import plot_series
from pfaff.report.writer import write_report
from pfaff.scenarios.runner import Run


class OutputExistsError(ParameterError):
    """The output folder is not empty and ``force`` was not given."""


class OutputInUseError(ParameterError):
    """Another live process holds the output folder's lock (exit status 2)."""


MANIFEST = ".pfaff-files.json"
"""Name of the file (in DIR) that lists the files the last run wrote."""


def probe_writable(out: Path) -> None:
    """Create the folder, write, sync and remove a small file in it; then remove the
    folders this created (a refused or failed run leaves nothing behind)."""
    created = [p for p in (out, *out.parents) if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    try:
        fd, name = tempfile.mkstemp(prefix=".pfaff-probe.", dir=out)
        try:
            os.write(fd, b"\0" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(name)
    finally:
        for p in created:
            p.rmdir()


def check_out_dir(out_dir: str | Path, force: bool) -> None:
    """Refuse an output folder that cannot take the run, before anything is simulated.

    Refused (``OutputExistsError``, exit status 2): an empty path, a path that
    is (or lies under) a file, a folder without write permission, a full disk,
    and a non-empty folder unless ``force``; ``OutputInUseError`` when another
    live process holds the folder's lock (:func:`lock_out_dir`). The folder is
    not left behind when this creates it.
    """
    if not str(out_dir).strip():
        raise OutputExistsError(
            "the output folder is an empty string; name a folder (--out . for this one)"
        )
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"output path {str(out)!r} exists and is not a folder")
    if out.is_dir():
        try:
            FolderLock(out).check()
        except FolderInUseError as exc:
            raise OutputInUseError(str(exc)) from None
        if not force and any(p.name != LOCK_NAME for p in out.iterdir()):
            raise OutputExistsError(
                f"output folder {str(out)!r} is not empty; use --force to overwrite"
            )
    try:
        probe_writable(out)
    except OSError as exc:
        raise OutputExistsError(unwritable(out, exc)) from None


def unwritable(out: Path, exc: OSError) -> str:
    """The message for an output folder that cannot be written (``exc`` says why)."""
    reason = {
        errno.ENOTDIR: "a parent of it is a file",
        errno.EEXIST: "a parent of it is a file",
        errno.ENOENT: "it cannot be created there",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "read-only file system",
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "disk quota exceeded",
    }.get(exc.errno, exc.strerror or str(exc))
    return f"output folder {str(out)!r} cannot be written: {reason}; choose another --out"


def lock_out_dir(out_dir: str | Path) -> FolderLock:
    """Take the output folder's lock (``DIR/.pfaff.lock`` holding this pid), creating it.

    Release it with ``.release()`` (or use it in a ``with``) on every exit path.

    Raises
    ------
    OutputInUseError
        Another live process holds the lock (a stale one is taken over).
    OutputExistsError
        The folder cannot be created or written.
    """
    out = Path(out_dir)
    try:
        return FolderLock(out).acquire()
    except FolderInUseError as exc:
        raise OutputInUseError(str(exc)) from None
    except OSError as exc:
        raise OutputExistsError(unwritable(out, exc)) from None


def _previous_files(out: Path) -> list[Path]:
    """The files the earlier run in ``out`` wrote (from its manifest)."""
    try:
        names = json.loads((out / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    files = []
    for name in names:
        p = out / str(name)
        if isinstance(name, str) and p.parent == out and p.is_file():
            files.append(p)
    return files


def _scenario_plots(run: Run) -> dict:
    """The scenario's plot specifications as callables drawing PNGs."""
    t = run.arrays["t"]
    return {
        name: (
            lambda spec=spec: plot_series(
                spec.get("x", t),
                spec["series"],
                spec["title"],
                spec["ylabel"],
                spec.get("log", False),
                spec.get("xlabel"),
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
        arrows=sc.get("arrows"),
    )
    return atomic_write_text(out / "scene.html", html)


def write_run(run: Run, out_dir: str | Path, report: bool = True) -> list[Path]:
    """Write ``trajectory.npz``, ``summary.json`` and the report of a run.

    Files of an earlier run in the folder that this run does not write again
    are removed afterwards (only those listed in its manifest).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stale = _previous_files(out)
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
    names = sorted({p.name for p in written})
    for p in stale:
        if p.name not in names:
            p.unlink(missing_ok=True)
    atomic_write_json(out / MANIFEST, {"files": names})
    return written
