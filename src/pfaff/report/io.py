"""Atomic file output: write to a temporary name in the same folder, then rename.

An interrupted run must never leave a half-written file (design.md, section 4).
Every writer here writes into a temporary file next to the target, flushes and
fsyncs it, and only then ``os.replace``-s it over the target; on any exception
the temporary file is removed and the target is left untouched.
"""

from __future__ import annotations

import json
import math
import os
import socket
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows: the pid in the lock file only)
    fcntl = None

__all__ = [
    "LOCK_NAME",
    "FolderInUseError",
    "FolderLock",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_write_json",
    "atomic_savez",
    "to_jsonable",
]


def _fsync_dir(folder: Path) -> None:
    """Best-effort fsync of a directory so the rename itself is durable."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # e.g. Windows cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def _atomic_write(path: str | os.PathLike, fill: Callable[[IO[bytes]], None]) -> Path:
    """Create ``path`` atomically; ``fill`` writes the content into an open binary file."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    tmp = tempfile.NamedTemporaryFile(
        mode="wb", dir=folder, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    tmp_name = tmp.name
    try:
        with tmp:
            fill(tmp)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.chmod(tmp_name, 0o666 & ~_UMASK)  # mkstemp makes 0600; use the usual mode
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)
    return target


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically.

    Parameters
    ----------
    path : str or PathLike
        Target file; its folder must exist.
    data : bytes
        Content.

    Returns
    -------
    Path
        The written path.
    """
    payload = bytes(data)
    return _atomic_write(path, lambda f: f.write(payload))


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically.

    Parameters
    ----------
    path : str or PathLike
        Target file; its folder must exist.
    text : str
        Content.

    Returns
    -------
    Path
        The written path.
    """
    return atomic_write_bytes(path, text.encode("utf-8"))


def _float(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def to_jsonable(obj: Any) -> Any:
    """Convert ``obj`` into plain JSON types.

    NumPy scalars and arrays become Python numbers and (nested) lists, tuples
    become lists, ``Path`` becomes ``str`` and non-finite floats become the
    strings ``"nan"``, ``"inf"`` and ``"-inf"`` (never a silent ``null``).

    Raises
    ------
    TypeError
        If ``obj`` contains something JSON cannot represent, or a mapping key
        that is not a string, number or boolean.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return _float(float(obj))
    if isinstance(obj, (complex, np.complexfloating)):
        raise TypeError(f"complex value {obj!r} is not JSON serializable")
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"array of dtype {obj.dtype} is not JSON serializable")
        return to_jsonable(obj.tolist())
    if isinstance(obj, Mapping):
        out = {}
        for key, value in obj.items():
            if isinstance(key, (np.generic, bool, int, float)):
                key = str(to_jsonable(key))
            if not isinstance(key, str):
                raise TypeError(f"mapping key {key!r} is not a string")
            out[key] = to_jsonable(value)
        return out
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(item) for item in obj]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable")


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented JSON (``indent=2``) to ``path`` atomically.

    The object is converted with :func:`to_jsonable` and serialized *before*
    the file is touched, so an unserializable object leaves nothing behind.

    Raises
    ------
    TypeError
        If ``obj`` cannot be represented in JSON.
    """
    text = json.dumps(to_jsonable(obj), indent=2, allow_nan=False) + "\n"
    return atomic_write_text(path, text)


def atomic_savez(path: str | os.PathLike, **arrays: Any) -> Path:
    """Save ``arrays`` with ``np.savez_compressed`` to ``path`` atomically.

    The data goes through an open file object, so NumPy does not append a
    second ``.npz`` suffix; name the target ``*.npz`` yourself.
    """
    return _atomic_write(path, lambda f: np.savez_compressed(f, **arrays))


LOCK_NAME = ".pfaff.lock"
"""Name of the lock file a run, comparison or sweep holds in its output folder."""


class FolderInUseError(RuntimeError):
    """Another live process holds the output folder's lock."""

    def __init__(self, folder: Path, pid: int | None, host: str | None = None) -> None:
        who = f"pid {pid}" if pid is not None else "another process"
        if host and host != socket.gethostname():
            who += f" on host {host}"
        super().__init__(
            f"{str(folder)!r} is in use by {who} (lock file {LOCK_NAME}); wait for it to "
            "finish or choose another --out"
        )
        self.folder, self.pid = folder, pid


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (a zombie counts)."""
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill would terminate it: assume alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except OSError:
        return False
    return True


def _read_holder(text: str) -> tuple[int | None, str | None]:
    """``(pid, host)`` from a lock file's text (first line the pid, second the host)."""
    lines = text.split("\n")
    try:
        pid = int(lines[0].strip())
    except ValueError:
        pid = None
    host = lines[1].strip() if len(lines) > 1 and lines[1].strip() else None
    return pid, host


class FolderLock:
    """An exclusive lock on an output folder: ``DIR/.pfaff.lock`` holding this pid.

    :meth:`acquire` creates the folder if needed and takes the lock;
    :meth:`release` removes the lock file (and the folders :meth:`acquire`
    created, if they are still empty). Use it as a context manager so the lock
    is released on every exit path (an exception, ``KeyboardInterrupt``).

    A lock held by a live process (``flock`` where the OS has it, else the pid
    in the file) is refused with :class:`FolderInUseError`; a lock file left by
    a process that has died is stale and taken over. A lock from another host
    counts as held (its pid cannot be checked from here).

    Parameters
    ----------
    folder : the output folder.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._fd: int | None = None
        self._created: list[Path] = []

    @property
    def held(self) -> bool:
        return self._fd is not None

    def check(self) -> None:
        """Raise :class:`FolderInUseError` if a live process holds the lock (changes nothing)."""
        try:
            text = self.path.read_text()
        except (OSError, UnicodeDecodeError):
            return
        pid, host = _read_holder(text)
        if self._busy(pid, host):
            raise FolderInUseError(self.folder, pid, host)

    @staticmethod
    def _busy(pid: int | None, host: str | None) -> bool:
        if host and host != socket.gethostname():
            return True
        return pid is not None and pid != os.getpid() and _pid_alive(pid)

    def acquire(self) -> FolderLock:
        """Take the lock (see the class); ``OSError`` if the folder cannot be written."""
        if self._fd is not None:
            raise RuntimeError(f"the lock on {str(self.folder)!r} is already held")
        self._created = [p for p in (self.folder, *self.folder.parents) if not p.exists()]
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            for _ in range(10):  # the file may be replaced between open and lock: retry
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    if self._take(fd):
                        self._fd = fd
                        return self
                except BaseException:
                    os.close(fd)
                    raise
                os.close(fd)
            raise FolderInUseError(self.folder, None)
        except BaseException:
            self._remove_created()
            raise

    def _take(self, fd: int) -> bool:
        """Lock ``fd`` (the file at ``self.path``) and write this pid; False: retry."""
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid, host = _read_holder(os.pread(fd, 256, 0).decode("utf-8", "replace"))
                raise FolderInUseError(self.folder, pid, host) from None
            try:
                if os.fstat(fd).st_ino != os.stat(self.path).st_ino:
                    return False  # released and removed meanwhile: lock the new file
            except FileNotFoundError:
                return False
        pid, host = _read_holder(os.pread(fd, 256, 0).decode("utf-8", "replace"))
        if self._busy(pid, host):  # a live holder without flock (another host, no fcntl)
            raise FolderInUseError(self.folder, pid, host)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{socket.gethostname()}\n".encode(), 0)
        os.fsync(fd)
        return True

    def release(self) -> None:
        """Remove the lock file and unlock; remove the folders ``acquire`` created if empty."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            os.close(self._fd)
            self._fd = None
        self._remove_created()

    def _remove_created(self) -> None:
        for p in self._created:
            try:
                p.rmdir()
            except OSError:  # not empty (the run wrote into it) or gone
                break
        self._created = []

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
