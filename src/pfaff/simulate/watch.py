"""Watchers of a simulation while it runs: ``fn(t, q)`` after steps, e.g. a live 3D
view (:class:`pfaff.api.viewer.Viewer`, ``pfaff run FILE --view``).

Both engines call :func:`notify` with the state they reached: the NumPy engine after
every step, the compiled core after every stretch of at most :data:`STEPS_PER_CALL`
steps while a watcher is registered (without one it runs its usual long stretches), a
limited run on the core (joint limits, contacts: one call into C++) every
:data:`LIMITED_STEPS` steps with its last recorded sample and at its end. A watcher
registered with ``contacts=True`` is called ``fn(t, q, contact_force)``: the contact
pairs' recorded forces at that sample, (pairs, 4) per pair its normal force and its
friction force's world x, y, z on the moving geom [N]
(``LimitedRun.contact_force``), None where the run holds no contact.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np

from pfaff.core import _core

__all__ = ["LIMITED_STEPS", "STEPS_PER_CALL", "active", "notify", "watching"]

#: steps per call into the compiled core while a watcher is registered
STEPS_PER_CALL = 10
#: a limited run on the core hands its last sample every this many steps (the core's
#: interrupt check, ``LimitControl::kInterruptEvery``)
LIMITED_STEPS: int = _core.LIMITED_CHECK_EVERY

_WATCHERS: list[tuple[Callable[..., object], bool]] = []


@contextlib.contextmanager
def watching(fn: Callable[..., object], contacts: bool = False) -> Iterator[None]:
    """Call ``fn(t, q)`` after the steps of every simulation run inside the block
    (``contacts``: ``fn(t, q, contact_force)``, module docstring)."""
    entry = (fn, bool(contacts))
    _WATCHERS.append(entry)
    try:
        yield
    finally:
        _WATCHERS.remove(entry)


def active() -> bool:
    """Whether a watcher is registered."""
    return bool(_WATCHERS)


def notify(t: float, q: np.ndarray, contact_force: np.ndarray | None = None) -> None:
    """Hand the state reached at time ``t`` (and the contact forces recorded there, if
    any) to every watcher."""
    for fn, contacts in list(_WATCHERS):
        if contacts:
            fn(t, q, contact_force)
        else:
            fn(t, q)
