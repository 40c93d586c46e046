"""The sweep folder: per-point results written as points finish, resume, ``--force``.

Layout of ``DIR``::

    sweep.json              scenario and pfaff version (marks DIR as a sweep folder)
    rows/<point>.json       the row of a finished point (written last: the commit mark)
    points/<point>/         the point's run folder (unless --no-point-files)
    results.parquet/.csv    the table, rebuilt from the rows (atomically)
    report.html             the sweep report

Every file is written atomically, so a client that crashes loses nothing that
finished; a point counts as finished when its ``rows/<point>.json`` exists.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pfaff import __version__
from pfaff.report.io import (
    LOCK_NAME,
    FolderInUseError,
    FolderLock,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)
from pfaff.scenarios import ParameterError
from pfaff.sweep.task import FINAL_STATUSES

__all__ = ["SweepFolderError", "SweepStore"]

MARKER = "sweep.json"
OWN = (MARKER, "rows", "points", "results.parquet", "results.csv", "report.html")


class SweepFolderError(ParameterError):
    """The output folder cannot take this sweep (exit status 2)."""


class SweepStore:
    """The files of one sweep folder.

    Parameters
    ----------
    out : the sweep folder.
    scenario : the scenario swept.
    """

    def __init__(self, out: str | Path, scenario: str) -> None:
        self.out = Path(out)
        self.scenario = scenario

    @property
    def rows_dir(self) -> Path:
        return self.out / "rows"

    @property
    def points_dir(self) -> Path:
        return self.out / "points"

    def check(self, force: bool) -> None:
        """Refuse a folder that cannot take this sweep, before any cluster starts.

        Refused: a path that is (or lies under) a file, a folder that cannot be
        written, one another live process holds (its lock), and one that holds
        something else than a sweep of this scenario. A sweep of the same
        scenario is resumed; ``force`` starts over. Nothing is changed here
        (see :meth:`lock` and :meth:`prepare`).
        """
        from pfaff.report.output import probe_writable, unwritable

        out = self.out
        if out.exists() and not out.is_dir():
            raise SweepFolderError(f"output path {str(out)!r} exists and is not a folder")
        try:
            probe_writable(out)
        except OSError as exc:
            raise SweepFolderError(unwritable(out, exc)) from None
        try:
            FolderLock(out).check()
        except FolderInUseError as exc:
            raise SweepFolderError(str(exc)) from None
        if not out.is_dir() or force or not any(p.name != LOCK_NAME for p in out.iterdir()):
            return
        marker = out / MARKER
        if not marker.is_file():
            raise SweepFolderError(
                f"output folder {str(out)!r} is not empty and holds no sweep; "
                "use --force to write into it, or another --out"
            )
        try:
            other = json.loads(marker.read_text()).get("scenario")
        except (OSError, ValueError, AttributeError):
            other = None
        if other != self.scenario:
            raise SweepFolderError(
                f"output folder {str(out)!r} holds a sweep of {other!r}, not of "
                f"{self.scenario!r}; use --force to start over, or another --out"
            )

    def lock(self) -> FolderLock:
        """Take the folder's lock (creating the folder); release it when the sweep ends.

        Raises :class:`SweepFolderError` if another live process holds it or the
        folder cannot be written.
        """
        from pfaff.report.output import unwritable

        try:
            return FolderLock(self.out).acquire()
        except FolderInUseError as exc:
            raise SweepFolderError(str(exc)) from None
        except OSError as exc:
            raise SweepFolderError(unwritable(self.out, exc)) from None

    def prepare(self, force: bool) -> None:
        """Create the folder; with ``force``, remove a previous sweep's files first."""
        if force and self.out.is_dir():
            for name in OWN:
                path = self.out / name
                if path.is_dir():
                    shutil.rmtree(path)
                elif path.exists():
                    path.unlink()
        self.rows_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(
            self.out / MARKER, {"scenario": self.scenario, "pfaff_version": __version__}
        )

    def finished(self) -> dict[str, dict[str, Any]]:
        """The rows of the points that finished in earlier runs: ``{point: row}``."""
        rows = {}
        if not self.rows_dir.is_dir():
            return rows
        for path in sorted(self.rows_dir.glob("*.json")):
            try:
                row = json.loads(path.read_text())
            except (OSError, ValueError):
                continue  # unreadable: the point runs again
            if isinstance(row, dict) and row.get("status") in FINAL_STATUSES:
                rows[path.stem] = row
        return rows

    def record(self, point: str, row: dict[str, Any], files: dict[str, bytes]) -> None:
        """Write a finished point: its run folder first, then its row (the commit mark)."""
        if files:
            folder = self.points_dir / point
            for rel, data in files.items():
                path = folder / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(path, data)
        # Python's JSON keeps NaN/inf and reads every float back to the last bit
        atomic_write_text(self.rows_dir / f"{point}.json", json.dumps(row, allow_nan=True))

    def write_table(self, table: Any) -> list[Path]:
        """Write ``results.parquet`` and ``results.csv`` from a DataFrame, atomically."""
        import io

        buf = io.BytesIO()
        table.to_parquet(buf, index=False)
        return [
            atomic_write_bytes(self.out / "results.parquet", buf.getvalue()),
            atomic_write_text(self.out / "results.csv", table.to_csv(index=False)),
        ]
