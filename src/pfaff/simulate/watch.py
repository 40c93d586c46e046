"""Watchers of a simulation while it runs: ``fn(t, q)`` after steps, e.g. a live 3D
view (:class:`pfaff.api.viewer.Viewer`, ``pfaff run FILE --view``).

Both engines call :func:`notify` with the state they reached: the NumPy engine after
every step, the compiled core after every stretch of at most :data:`STEPS_PER_CALL`
steps while a watcher is registered (without one it runs its usual long stretches).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["STEPS_PER_CALL", "active", "notify", "watching"]

#: steps per call into the compiled core while a watcher is registered
STEPS_PER_CALL = 10

_WATCHERS: list[Callable[[float, np.ndarray], object]] = []


@contextlib.contextmanager
def watching(fn: Callable[[float, np.ndarray], object]) -> Iterator[None]:
    """Call ``fn(t, q)`` after the steps of every simulation run inside the block."""
    _WATCHERS.append(fn)
    try:
        yield
    finally:
        _WATCHERS.remove(fn)


def active() -> bool:
    """Whether a watcher is registered."""
    return bool(_WATCHERS)


def notify(t: float, q: np.ndarray) -> None:
    """Hand the state reached at time ``t`` to every watcher."""
    for fn in _WATCHERS:
        fn(t, q)
