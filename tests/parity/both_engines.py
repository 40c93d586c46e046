"""The parity tests' shared comparisons of the compiled core with the NumPy reference:
a run of ``simulate`` (or ``simulate_limited``) on both engines, series compared key by
key, the force elements' terms compared state by state, and two limited runs' events.
Each test keeps its own thresholds; these helpers only hold the idiom once."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterable

import numpy as np

from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.core_engine import build
from pfaff.simulate.forces import ForceSet

ENGINES = ("core", "numpy")


def simulate_both(cset, q0, v0, t_end, opt: SimOptions, strict: bool = False, **kw):
    """``simulate`` on the core and on NumPy with ``opt`` (its engine replaced), the
    arrays of both ``(core, numpy)``, each run checked to be on its engine; ``strict``:
    any warning (a fallback) is an error."""
    with warnings.catch_warnings():
        if strict:
            warnings.simplefilter("error")
        runs = {
            e: simulate(cset, q0, v0, t_end, dataclasses.replace(opt, engine=e), **kw)
            for e in ENGINES
        }
    assert runs["core"].engine == "core" and runs["numpy"].engine == "numpy"
    return runs["core"].arrays(), runs["numpy"].arrays()


def assert_series_agree(a: dict, b: dict, keys: Iterable[str], tol: float) -> None:
    """``|a[key] - b[key]| <= tol`` for every key (same shapes), naming the key."""
    for key in keys:
        assert a[key].shape == b[key].shape, key
        assert np.abs(a[key] - b[key]).max() <= tol, key


def assert_force_terms_agree(
    mech, cset, elements, states: Iterable, rel: float = 1e-12, before: Callable = None
) -> None:
    """The core's force terms (Q, V, power) of ``elements`` equal the NumPy ForceSet's at
    each ``(q, v)`` of ``states``, to ``rel`` times ``max(1, |Q|)``; ``before(system)``
    runs on the core system before each state (a control set into it)."""
    fset = ForceSet(mech, elements)
    system = build(cset, elements)
    for q, v in states:
        snap = mech.compute(q, v)
        Q, p = fset.evaluate(0.0, snap)
        if before is not None:
            before(system)
        Qc, Vc, pc = system.force_terms(q, v)
        scale = max(1.0, np.abs(Q).max())
        assert np.abs(Qc - Q).max() <= rel * scale
        assert abs(Vc - fset.potential(snap)) <= rel * scale and abs(pc - p) <= rel * scale


def assert_limited_runs_agree(a, b, t_tol: float, tol: float, min_events: int) -> None:
    """Two limited runs (``LimitedRun``s, the core's and the phase loop's): the same
    events (kind, side, joint), at least ``min_events``, their times to ``t_tol``, the
    same sample times, ``q``, ``v`` and ``lambda`` to ``tol``."""
    ea = [(x.kind, x.side, x.joint) for x in a.events]
    assert ea == [(x.kind, x.side, x.joint) for x in b.events] and len(ea) >= min_events
    assert max(abs(x.t - y.t) for x, y in zip(a.events, b.events)) <= t_tol
    ta, tb = a.trajectory.arrays(), b.trajectory.arrays()
    assert ta["t"].shape == tb["t"].shape
    assert_series_agree(ta, tb, ("q", "v", "lambda"), tol)
