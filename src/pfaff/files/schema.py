"""The system file's element tables, derived from the elements' classes.

A ``[[constraints]]``, ``[[forces]]`` or ``[[limits]]`` table names a ``type`` and the
keyword arguments of that type's class. Its keys, which of them are required (no
default in the signature) and the kind of each value are read from the class's
``__init__`` signature and annotations by :func:`derive`, so a class and its file schema
cannot drift apart; only a parameter whose annotation does not say how it is written
in TOML (an unannotated ``point1``, a rotation given as ``offset``) is named in
``kinds=``. A value kind is one of :data:`KINDS`.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Sequence
from dataclasses import is_dataclass
from typing import Any

import numpy as np

from pfaff.errors import ParameterError

#: the value kinds of an element's keys (how each is written in TOML)
KINDS = ("str", "float", "bound", "vec3", "dirs", "rot", "strs", "floats", "band")


def _err(path: str, value: Any, valid: str) -> ParameterError:
    return ParameterError(f"{path} = {value!r}: {valid}")


def _args(hint) -> tuple:
    """The members of a union (``None`` dropped), else ``(hint,)``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(hint) if a is not type(None))
    return (hint,)


def _sequence_of(hint) -> tuple | None:
    """The members of the element type of a ``Sequence[...]``, ``list[...]`` or
    ``tuple[X, ...]`` annotation (None for anything else)."""
    origin = typing.get_origin(hint)
    if origin not in (Sequence, list, tuple, typing.Sequence):
        return None
    args = [a for a in typing.get_args(hint) if a is not Ellipsis]
    return _args(args[0]) if len(args) == 1 else None


def _kind(hint) -> str | None:
    """The value kind of an annotation (None where it does not say)."""
    members = _args(hint)
    if members and all(m in (str, int) for m in members) and str in members:
        return "str"  # a name (an index is Python's, not a file's)
    if members == (float,) or members == (int,):
        return "float"
    if len(members) == 2 and float in members:  # a number or a list of numbers
        other = _sequence_of(members[0] if members[1] is float else members[1])
        return "band" if other == (float,) else None
    if len(members) != 1:
        return None
    inner = _sequence_of(members[0])
    if inner is None:
        return None
    if str in inner:
        return "strs"
    if inner == (float,):
        return "floats"
    if _sequence_of(inner[0]) == (float,):
        return "dirs"
    return None


def derive(
    cls: type,
    kinds: dict[str, str] | None = None,
    required: tuple[str, ...] = (),
    skip: tuple[str, ...] = (),
) -> tuple[type, dict[str, tuple[str, bool]]]:
    """``(cls, {key: (kind, required)})``: the file schema of ``cls``.

    Parameters
    ----------
    cls : the element's class; its ``__init__`` parameters are the keys, in order.
    kinds : the kinds of the parameters whose annotation does not give one.
    required : keys required in a file although the signature has a default (a
        stiffness whose default only serves a Python-only alternative).
    skip : parameters a file does not give (a Python callable).

    The optional ``name`` label is not a key here: :func:`parse_element` takes it apart
    for every class whose signature has one. A parameter without a kind is an error
    (TypeError naming it), so a new parameter never drops out of the file silently.
    """
    kinds = kinds or {}
    sig = inspect.signature(cls)
    try:
        hints = typing.get_type_hints(cls if is_dataclass(cls) else cls.__init__)
    except Exception:  # an annotation not evaluable at run time: every kind given
        hints = {}
    out: dict[str, tuple[str, bool]] = {}
    for key, p in sig.parameters.items():
        optional = p.default is not inspect.Parameter.empty
        if key in skip or (key == "name" and optional):
            continue
        kind = kinds.get(key) or (_kind(hints[key]) if key in hints else None)
        if kind not in KINDS:
            raise TypeError(
                f"{cls.__name__}.{key}: no system-file kind for its annotation "
                f"{hints.get(key, 'none')!r}; give one in kinds= (one of {', '.join(KINDS)}) "
                "or skip it"
            )
        out[key] = (kind, not optional or key in required)
    return cls, out


def _number(path: str, x: Any, finite: bool = True) -> float:
    ok = not isinstance(x, bool) and isinstance(x, (int, float)) and not np.isnan(x)
    if not ok or (finite and not np.isfinite(x)):
        raise _err(path, x, "expected a finite number" if finite else "expected a number")
    return float(x)


def _vector(path: str, x: Any, n: int | None) -> np.ndarray:
    if not isinstance(x, list) or (n is not None and len(x) != n) or not x:
        raise _err(path, x, f"expected a list of {n if n is not None else 'some'} numbers")
    return np.array([_number(f"{path}[{i}]", xi) for i, xi in enumerate(x)])


def value(path: str, kind: str, x: Any):
    """A value of kind ``kind`` (one of :data:`KINDS`) checked (ParameterError naming
    ``path``, the value and what is valid)."""
    if kind == "str":
        if not isinstance(x, str) or not x:
            raise _err(path, x, "expected a non-empty string")
        return x
    if kind == "float":
        return _number(path, x)
    if kind == "bound":
        return _number(path, x, finite=False)  # inf / -inf: a one-sided limit
    if kind == "vec3":
        return _vector(path, x, 3)
    if kind == "floats":
        return tuple(float(c) for c in _vector(path, x, None))
    if kind == "band":
        return _number(path, x) if not isinstance(x, list) else tuple(_vector(path, x, 2))
    if kind == "strs":
        if not isinstance(x, list) or not x:
            raise _err(path, x, "expected a list of joint names")
        return tuple(value(f"{path}[{i}]", "str", n) for i, n in enumerate(x))
    if kind == "dirs":
        if not isinstance(x, list) or not x:
            raise _err(path, x, "expected a list of [x, y, z] directions")
        return np.array([_vector(f"{path}[{i}]", d, 3) for i, d in enumerate(x)])
    R = np.array([_vector(f"{path}[{i}]", r, 3) for i, r in enumerate(x)]) if x else None
    if R is None or R.shape != (3, 3):
        raise _err(path, x, "expected a 3 x 3 rotation matrix (three rows of three numbers)")
    return R


def takes_name(cls: type) -> bool:
    """Whether ``cls`` takes an optional ``name`` label (every constraint and force
    element does; a joint limit is named by its joint)."""
    p = inspect.signature(cls).parameters.get("name")
    return p is not None and p.default is not inspect.Parameter.empty


def parse_element(path: str, spec: Any, table: dict, errors: tuple = ()) -> Any:
    """One element table ``spec`` of a type in ``table`` (``{type: (cls, keys)}``) as
    an instance of its class; a bad key, value or combination is a ParameterError
    naming the key path (``errors``: the exceptions of the class's own checks)."""
    if not isinstance(spec, dict):
        raise _err(path, spec, "expected a table")
    ctype = spec.get("type")
    if ctype not in table:
        raise _err(f"{path}.type", ctype, f"valid types: {', '.join(table)}")
    cls, keys = table[ctype]
    named = takes_name(cls)
    kwargs: dict[str, Any] = {}
    for k, x in spec.items():
        if k == "type" or (k == "name" and named):
            continue
        if k not in keys:
            valid = ", ".join(["type", *(["name"] if named else []), *keys])
            raise _err(f"{path}.{k}", x, f"unknown key for {ctype}; valid keys: {valid}")
        kwargs[k] = value(f"{path}.{k}", keys[k][0], x)
    missing = [k for k, (_, req) in keys.items() if req and k not in kwargs]
    if missing:
        raise ParameterError(f"{path} ({ctype}): missing key {missing[0]!r}")
    if named and "name" in spec:
        kwargs["name"] = value(f"{path}.name", "str", spec["name"])
    try:
        return cls(**kwargs)
    except errors as exc:
        raise ParameterError(f"{path} ({ctype}): {exc}") from None
