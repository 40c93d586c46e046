"""One registry of how built-in types reach the compiled core (design.md Sec. 1).

A type that the core runs registers its *lowering* next to its own definition::

    @lowers(PointOnPlane, category="constraint")
    def _lower(c: PointOnPlane, into) -> spec:
        s = into.spec("PointOnPlane", c)
        ...

``into`` is the system being built (:class:`pfaff.core.Build`: ``spec``,
``force_spec``, ``frame``, ``contour``, ``contact``). The categories:

- ``constraint``: rows of the step core (returns a ``pfaff._core.Spec``);
- ``force``: force elements evaluated at every stage (a ``pfaff._core.ForceSpec``);
- ``contour``: 2D contours of rolling contacts (the keywords of
  :func:`pfaff.core.contour`);
- ``held_law``: a controller whose law is built-in force elements, sampled and held
  by the core itself (returns the elements, given the controller and ``q0``).

Dispatch is on the exact type: a subclass, which may change what its parent
computes, has no lowering until it registers one (``lowers(Sub, ...)(parent_fn)``).
A lowering may refuse one instance (``refuse(obj) -> reason | None``, e.g. a spring
with a Python law). A category may have a *fallback* (:func:`lowers_any`) that takes
what no lowering of its own takes: the force elements' is a law written in Python,
called from the compiled loop at every stage (:mod:`pfaff.simulate.python_law`); the
constraints' are rows written in Python (:mod:`pfaff.constraints.python_rows`).
An object the core cannot take at all runs on the NumPy engine, and
``engine="auto"`` then says which type and why (:func:`reason`).

This module imports nothing of pfaff: every layer may register here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CATEGORIES = ("constraint", "force", "contour", "held_law")


@dataclass(frozen=True)
class Lowering:
    """How one type reaches the core: ``lower(obj, into)`` and an optional
    ``refuse(obj) -> str | None`` for instances it cannot take."""

    category: str
    lower: Callable[..., Any]
    refuse: Callable[[Any], str | None] | None = None


_REGISTRY: dict[type, Lowering] = {}
_FALLBACK: dict[str, Callable[..., Any]] = {}


def lowers(
    *types: type, category: str, refuse: Callable[[Any], str | None] | None = None
) -> Callable:
    """Decorator: register the decorated function as the lowering of ``types`` (exact
    types; each registered once) in ``category`` (one of :data:`CATEGORIES`)."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown lowering category {category!r}; valid: {CATEGORIES}")

    def register(fn: Callable) -> Callable:
        for t in types:
            if t in _REGISTRY:
                raise ValueError(f"{t.__qualname__} already has a lowering")
            _REGISTRY[t] = Lowering(category, fn, refuse)
        return fn

    return register


def lowers_any(category: str) -> Callable:
    """Decorator: register the decorated function ``fn(obj, into)`` as the fallback of
    ``category``: it lowers what no exact-type lowering takes (none, or refused)."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown lowering category {category!r}; valid: {CATEGORIES}")

    def register(fn: Callable) -> Callable:
        if category in _FALLBACK:
            raise ValueError(f"category {category!r} already has a fallback")
        _FALLBACK[category] = fn
        return fn

    return register


def native(obj: Any, category: str) -> bool:
    """True when ``obj`` has a lowering of its own type that takes it (not the
    category's fallback)."""
    lw = lowering(obj, category)
    return lw is not None and (lw.refuse is None or lw.refuse(obj) is None)


def lowering(obj: Any, category: str) -> Lowering | None:
    """The lowering of ``type(obj)`` in ``category`` (exact type), or None."""
    lw = _REGISTRY.get(type(obj))
    return lw if lw is not None and lw.category == category else None


def reason(obj: Any, category: str) -> str | None:
    """Why the core cannot take ``obj`` (None when it can): "no lowering for TYPE"
    or the lowering's own refusal."""
    lw = lowering(obj, category)
    if category in _FALLBACK and not native(obj, category):
        return None  # the fallback takes it
    name = getattr(obj, "name", None)
    label = f"{type(obj).__name__}" + (f" {name!r}" if isinstance(name, str) else "")
    if lw is None:
        kinds = ", ".join(t.__name__ for t in lowered_types(category))
        return f"no lowering for {label} (the core runs the {category} types {kinds})"
    why = lw.refuse(obj) if lw.refuse is not None else None
    return None if why is None else f"{label}: {why}"


def first_reason(objs, category: str) -> str | None:
    """:func:`reason` of the first of ``objs`` the core cannot take (None: it takes all)."""
    for obj in objs:
        why = reason(obj, category)
        if why is not None:
            return why
    return None


def lower(obj: Any, category: str, into: Any) -> Any:
    """Lower ``obj`` into the system being built (check :func:`reason` first)."""
    if not native(obj, category) and category in _FALLBACK:
        return _FALLBACK[category](obj, into)
    lw = lowering(obj, category)
    if lw is None:
        raise TypeError(reason(obj, category))
    return lw.lower(obj, into)


def lowered_types(category: str) -> tuple[type, ...]:
    """The types registered in ``category``, in registration order (of the modules
    imported so far)."""
    return tuple(t for t, lw in _REGISTRY.items() if lw.category == category)
