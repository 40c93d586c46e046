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
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = [
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
