"""The points of a sweep: grid, random samples and fixed parameters, validated up front.

Every point is resolved with the scenario's own validation
(:meth:`pfaff.scenarios.Scenario.resolve`) before any work starts, so a bad key
or value is refused (exit 2) with the message that names it and the valid ones.
A point's id is a stable hash of its scenario and its full, resolved
parameters: the same point has the same id in every run, on every machine.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pfaff.scenarios import ParameterError, get_scenario

__all__ = ["Point", "count_points", "parse_grid", "parse_random", "plan_points", "point_id"]


@dataclass(frozen=True)
class Point:
    """One run of a sweep.

    Attributes
    ----------
    id : stable hash of the scenario and ``params`` (12 hex digits).
    params : the full, resolved parameter set (defaults included), typed.
    """

    id: str
    params: dict[str, Any]


def point_id(scenario: str, params: Mapping[str, Any]) -> str:
    """A stable id of a point: the first 12 hex digits of the SHA-256 of its canonical JSON.

    ``params`` must be resolved (typed) values, so that ``0.5`` given as ``"0.5"``
    or ``".50"`` has one id.
    """
    text = json.dumps({"scenario": scenario, "parameters": dict(params)}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _key_value(item: str, option: str, form: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise ParameterError(f"{option} expects {form}, got {item!r}")
    return key.strip(), value.strip()


def parse_grid(items: Sequence[str]) -> dict[str, list[str]]:
    """Parse ``--grid KEY=V1,V2,...`` options into ``{key: [values]}``."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, text = _key_value(item, "--grid", "KEY=V1,V2,...")
        values = [v.strip() for v in text.split(",")]
        if any(not v for v in values):
            raise ParameterError(f"--grid {key}: empty value in {text!r}")
        if key in out:
            raise ParameterError(f"--grid {key} given twice; list all its values in one option")
        out[key] = values
    return out


def parse_random(items: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Parse ``--random KEY=LO:HI`` options into ``{key: (lo, hi)}``."""
    out: dict[str, tuple[str, str]] = {}
    for item in items:
        key, text = _key_value(item, "--random", "KEY=LO:HI")
        lo, sep, hi = text.partition(":")
        if not sep or not lo.strip() or not hi.strip():
            raise ParameterError(f"--random expects KEY=LO:HI, got {item!r}")
        if key in out:
            raise ParameterError(f"--random {key} given twice")
        out[key] = (lo.strip(), hi.strip())
    return out


def _check_disjoint(**groups: Mapping[str, Any]) -> None:
    seen: dict[str, str] = {}
    for option, keys in groups.items():
        for key in keys:
            if key in seen:
                raise ParameterError(
                    f"parameter {key!r} is given by both --{seen[key]} and --{option}; "
                    "give each parameter once"
                )
            seen[key] = option


def _random_table(
    scenario: str, random: Mapping[str, tuple[Any, Any]], samples: int, seed: int
) -> list[dict[str, Any]]:
    """``samples`` draws of the random parameters (uniform; integers inclusive)."""
    sc = get_scenario(scenario)
    bounds = {}
    for key, (lo_raw, hi_raw) in random.items():
        sc.resolve({key: lo_raw})  # the key exists and each bound is a valid value
        sc.resolve({key: hi_raw})
        par = sc.params[key]
        if par.type not in (int, float):
            raise ParameterError(
                f"--random {key}: the parameter is a {par.type.__name__}; only int and float "
                "parameters can be sampled (use --grid for the others)"
            )
        lo, hi = par.parse(key, lo_raw), par.parse(key, hi_raw)
        if not lo < hi:
            raise ParameterError(f"--random {key}: LO must be < HI, got {lo!r}:{hi!r}")
        bounds[key] = (par.type, lo, hi)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(samples):
        draw = {}
        for key, (typ, lo, hi) in bounds.items():
            if typ is int:
                draw[key] = int(rng.integers(lo, hi, endpoint=True))
            else:
                draw[key] = float(rng.uniform(lo, hi))
        rows.append(draw)
    return rows


def count_points(
    grid: Mapping[str, Sequence[Any]] | None = None, samples: int | None = None
) -> int:
    """The number of points a grid and ``samples`` random draws make, found without
    planning them (points that resolve to the same parameters are counted twice)."""
    n = 1
    for values in (grid or {}).values():
        n *= len(values)
    return n * (samples if samples is not None and samples > 0 else 1)


def plan_points(
    scenario: str,
    grid: Mapping[str, Sequence[Any]] | None = None,
    random: Mapping[str, tuple[Any, Any]] | None = None,
    samples: int | None = None,
    seed: int = 0,
    fixed: Mapping[str, Any] | None = None,
) -> list[Point]:
    """The validated points of a sweep, in a fixed order.

    The points are the Cartesian product of the ``grid`` values (in the order
    the keys are given), each combined with every one of the ``samples`` random
    draws (the same draws for every grid point), all with the ``fixed`` values.
    Points that resolve to the same parameters are kept once.

    Parameters
    ----------
    scenario : a scenario name (``pfaff list``).
    grid : key -> values (strings as on the command line, or typed values).
    random : key -> (low, high): uniform draws, integers inclusive of both ends.
    samples : number of random draws; required with ``random``, refused without.
    seed : seed of the random draws (``numpy.random.default_rng``).
    fixed : key -> value for every point (``--set``).

    Raises
    ------
    ParameterError
        An unknown scenario or key, a bad value, a key given twice, a bad
        sample count: before anything runs.
    """
    sc = get_scenario(scenario)
    grid, random, fixed = dict(grid or {}), dict(random or {}), dict(fixed or {})
    _check_disjoint(set=fixed, grid=grid, random=random)
    if random and samples is None:
        raise ParameterError("--random needs --samples N (the number of random points)")
    if samples is not None and not random:
        raise ParameterError("--samples needs at least one --random KEY=LO:HI")
    if samples is not None and samples < 1:
        raise ParameterError(f"--samples must be >= 1, got {samples}")
    for key, values in grid.items():
        if len(values) == 0:
            raise ParameterError(f"--grid {key}: no values")
        for value in values:
            sc.resolve({**fixed, key: value})  # names the key if it or the value is bad
    sc.resolve(fixed)
    draws = _random_table(scenario, random, samples, seed) if random else [{}]
    points: dict[str, Point] = {}
    for combo in itertools.product(*grid.values()):
        for draw in draws:
            params = sc.resolve({**fixed, **dict(zip(grid, combo)), **draw})
            pid = point_id(scenario, params)
            points.setdefault(pid, Point(pid, params))
    return list(points.values())
