"""Scenario registry and parameter validation (design.md Sec. 5).

A scenario is a function of a validated parameter set that builds a system,
runs it and computes its metrics. Parameters are declared with a default, a
type, an optional range and a description; ``--set KEY=VALUE`` overrides are
parsed with the declared type (never ``eval``), and unknown keys or
out-of-range values are refused with a message that names the valid ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pfaff.errors import ParameterError
from pfaff.simulate.policy import STEP_TOL, steps_of


@dataclass(frozen=True)
class Param:
    """A scenario parameter.

    Attributes
    ----------
    default : default value; its type (bool, int, float, str) is the parameter's.
    doc : one-line description with units and source (paper table / equation).
    low, high : inclusive bounds for numbers (None: unbounded).
    positive : the value must be > 0.
    choices : allowed values for strings.
    """

    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    positive: bool = False
    choices: tuple[str, ...] | None = None

    @property
    def type(self) -> type:
        return type(self.default)

    def parse(self, key: str, raw: Any) -> Any:
        typ = self.type
        if isinstance(raw, str):
            text = raw.strip()
            try:
                if typ is bool:
                    low = text.lower()
                    if low not in ("true", "false", "1", "0", "yes", "no"):
                        raise ValueError
                    value = low in ("true", "1", "yes")
                elif typ is int:
                    value = int(text)
                elif typ is float:
                    value = float(text)
                else:
                    value = text
            except ValueError:
                raise ParameterError(
                    f"parameter {key!r} expects a {typ.__name__}, got {raw!r}"
                ) from None
        else:
            value = raw
            if typ is float and isinstance(raw, int) and not isinstance(raw, bool):
                value = float(raw)
            if not isinstance(value, typ) or (typ is not bool and isinstance(value, bool)):
                raise ParameterError(f"parameter {key!r} expects a {typ.__name__}, got {raw!r}")
        return self.check(key, value)

    def check(self, key: str, value: Any) -> Any:
        if isinstance(value, float) and not np.isfinite(value):
            raise ParameterError(f"parameter {key!r} must be finite, got {value!r}")
        if self.positive and not value > 0:
            raise ParameterError(f"parameter {key!r} must be > 0, got {value!r}")
        if self.low is not None and value < self.low:
            raise ParameterError(f"parameter {key!r} must be >= {self.low}, got {value!r}")
        if self.high is not None and value > self.high:
            raise ParameterError(f"parameter {key!r} must be <= {self.high}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            valid = ", ".join(repr(c) for c in self.choices) or "(none)"
            raise ParameterError(f"parameter {key!r} must be one of {valid}; got {value!r}")
        return value


def _is_end_time(key: str) -> bool:
    return key == "t_end" or key.endswith("_t_end")


def _is_period(key: str) -> bool:
    return key == "control_dt" or key.endswith(".control_dt") or key.endswith("_control_dt")


def check_timing(values: dict[str, Any], periods: dict[str, float] | None = None) -> list[str]:
    """Check a parameter set's times against its step ``dt``; return notes for the user.

    Every end time (``t_end``, ``*_t_end``) must be at least one step: a shorter
    one is refused, since the run would take no step. An end time that is not a
    whole number of steps is run to the nearest step (as :func:`pfaff.simulate`
    does); the note says how many steps and to which time. A controller period
    (``control_dt``, or the ``periods`` a file sets, e.g. ``controller.control_dt``)
    must be a whole multiple of ``dt``, at least ``dt``: the controller runs on
    the step grid, so any other period would make it run every ``floor`` or
    ``ceil`` steps in turn -- a jittered rate no digital controller has.

    Parameters
    ----------
    values : the resolved parameters; without a float ``dt`` nothing is checked.
    periods : controller periods set outside the parameters, by the key that sets them.

    Returns
    -------
    list of str
        One line per end time that is not a whole number of steps.

    Raises
    ------
    ParameterError
        An end time shorter than one step, a controller period shorter than
        ``dt`` or not a multiple of it; the message names both keys and values.
    """
    dt = values.get("dt")
    if not isinstance(dt, float) or not dt > 0 or not np.isfinite(dt):
        return []
    notes = []
    for key, t in values.items():
        if not _is_end_time(key) or not isinstance(t, (int, float)):
            continue
        n = steps_of(t, dt)
        if n == 0:
            raise ParameterError(
                f"{key} = {t:g} s is shorter than one step of dt = {dt:g} s: the run would "
                f"take no step; choose {key} >= dt (e.g. {key}={dt:g}) or a smaller dt"
            )
        if abs(t - n * dt) > STEP_TOL * dt:
            notes.append(
                f"{key} = {t:g} s is not a multiple of dt = {dt:g} s: "
                f"simulating {n} steps to t = {n * dt:g} s"
            )
    every = {k: v for k, v in values.items() if _is_period(k)}
    every.update(periods or {})
    for key, cdt in every.items():
        if not isinstance(cdt, (int, float)) or isinstance(cdt, bool):
            continue
        k = cdt / dt
        if k < 1 - STEP_TOL:
            raise ParameterError(
                f"{key} = {cdt:g} s is shorter than dt = {dt:g} s: the controller runs at "
                f"most once a step; choose {key} = k dt with a whole k >= 1 (e.g. {dt:g})"
            )
        if abs(k - round(k)) > STEP_TOL * max(1.0, k):
            lo, hi = int(np.floor(k)), int(np.ceil(k))
            raise ParameterError(
                f"{key} = {cdt:g} s is not a multiple of dt = {dt:g} s ({k:.4g} steps): the "
                f"controller would run every {lo} or {hi} steps in turn; choose "
                f"{key} = {lo * dt:g} or {hi * dt:g}, or a dt that divides it"
            )
    return notes


@dataclass
class ScenarioResult:
    """What a scenario function returns to the runner.

    Attributes
    ----------
    trajectory : the main simulation's Trajectory (possibly partial).
    metrics : scenario-specific numbers (names are contracts).
    wall_time_s : wall time of the main simulation only.
    status, message : "ok" or "failed" and why.
    polylines_xy : for planar animations, one (T', npts, 2) array per polyline.
    animation_t : (T',) times of the polyline samples.
    static_lines : grey background lines [(xs, ys), ...] (ground, guides).
    plots : scenario plots as data, drawn by the report layer: file stem ->
        ``{"title", "ylabel", "log", "series": {label: (T,) array}}``, against the
        trajectory's time, or against ``"x"`` (an array of the series' length) labelled
        ``"xlabel"`` when those keys are given.
    series_doc : documentation of scenario-specific arrays in ``extra_arrays``.
    extra_arrays : arrays added to trajectory.npz.
    scene3d : a 3D scene as data, written as a standalone ``scene.html`` by
        the report layer: ``{"urdf", "q", "t", "locked", "points", "plane"}``.
    notes : text shown in the report (chosen values, discrepancies).
    """

    trajectory: Any
    metrics: dict[str, Any]
    wall_time_s: float
    status: str = "ok"
    message: str = ""
    polylines_xy: list[np.ndarray] | None = None
    animation_t: np.ndarray | None = None
    static_lines: list[tuple[np.ndarray, np.ndarray]] | None = None
    plots: dict[str, dict[str, Any]] = field(default_factory=dict)
    series_doc: dict[str, str] = field(default_factory=dict)
    extra_arrays: dict[str, np.ndarray] = field(default_factory=dict)
    scene3d: dict[str, Any] | None = None
    notes: str = ""


@dataclass(frozen=True)
class Scenario:
    """A registered scenario (or a model / system file run as one).

    Attributes
    ----------
    name : the scenario name (or the file's path).
    func : runs the scenario on a resolved parameter set.
    params : the declared parameters.
    periods : controller periods fixed outside ``params`` (a system file's
        ``controller.control_dt``), by the key that sets them: checked against
        ``dt`` with the parameters (:func:`check_timing`).
    """

    name: str
    func: Callable[[dict[str, Any]], ScenarioResult]
    params: dict[str, Param]
    periods: dict[str, float] = field(default_factory=dict)

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()

    @property
    def description(self) -> str:
        return self.doc.splitlines()[0] if self.doc else ""

    def resolve(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """Defaults plus validated overrides; unknown keys are refused, and so are
        times that do not fit the step ``dt`` (:func:`check_timing`)."""
        values = {k: p.default for k, p in self.params.items()}
        for key, raw in (overrides or {}).items():
            if key not in self.params:
                raise ParameterError(
                    f"unknown parameter {key!r} for scenario {self.name!r}; valid keys: "
                    + ", ".join(sorted(self.params))
                )
            values[key] = self.params[key].parse(key, raw)
        check_timing(values, self.periods)
        return values

    def timing_notes(self, values: dict[str, Any]) -> list[str]:
        """What the run makes of times that are not whole steps (one line each)."""
        return check_timing(values, self.periods)


SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str, **params: Param):
    """Register a scenario function under ``name`` with its parameters."""

    def deco(func):
        old = SCENARIOS.get(name)
        if old is not None and old.func.__module__ != func.__module__:
            raise ValueError(
                f"scenario name {name!r} of {func.__module__} is taken by {old.func.__module__}"
            )
        SCENARIOS[name] = Scenario(name, func, dict(params))
        return func

    return deco


PLUGIN_GROUP = "pfaff.scenarios"
"""Entry-point group through which another package adds scenarios."""


def load_plugins() -> list[str]:
    """Import the scenarios other packages declare in the ``pfaff.scenarios`` group.

    A package adds scenarios with, in its ``pyproject.toml``::

        [project.entry-points."pfaff.scenarios"]
        my_study = "my_package.scenarios"

    The module (or object) named is imported; its ``@scenario`` functions
    register themselves. A plugin that fails to import is skipped with a
    warning naming it; pfaff's own scenarios stay usable. Returns the names
    of the entry points loaded.
    """
    import warnings
    from importlib.metadata import entry_points

    loaded = []
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            ep.load()
        except Exception as exc:  # a broken plugin must not take pfaff down
            warnings.warn(
                f"scenario plugin {ep.name!r} ({ep.value}) failed to load: "
                f"{type(exc).__name__}: {exc}",
                stacklevel=2,
            )
            continue
        loaded.append(ep.name)
    return loaded


def parse_sets(items: list[str]) -> dict[str, str]:
    """Parse ``KEY=VALUE`` strings of ``--set``; a key given twice is refused (the last
    would silently win), as a repeated ``--grid`` is."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--set expects KEY=VALUE, got {item!r}")
        key = key.strip()
        if key in out:
            raise ParameterError(
                f"--set {key} given twice ({key}={out[key]} and {key}={value}); give each "
                "parameter once"
            )
        out[key] = value
    return out
