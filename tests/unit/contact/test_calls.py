"""A contact run cut into ``Simulator.step`` calls is the run of one call: the event
guard's clocks (a stop pinned for a step, a release) and the slip watch's (a slipping
point's direction, a stuck point held stuck to a step's end) carry from call to call in
a ``pfaff._core.RunMemory``, as the held points do. Before they did not: a hold that a
call ended inside was forgotten, and the landing of ``quadruped_floor.xml`` stepped one
step per call let a shin go a step early (0.33075 s instead of 0.331 s) and then ran
another landing (62 impacts and 27 jams against 48 and 2 in one call). Witnesses: the
same events, at the same times and the same states to what round-off grows to in the
landing, the one call's run against the calls'; a look-ahead between calls
(step_derivatives) leaves them as they were."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff import core
from tests.unit.contact.test_slip_onset import idle_jams, idle_stops

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

MODEL = Path(__file__).parents[2] / "models" / "contact" / "quadruped_floor.xml"
# the landing's first 0.05 s (it starts at 0.32 s: 35 events, a jam and a slip among
# them). The calls' starts are projected again, to round-off (q 1e-14 apart before
# 0.365 s); the slow impact at 0.365 s is then located 2e-9 s apart, and the states
# differ by 4e-9 (q) and 9e-7 (v) at 0.37 s, by 6e-4 (q) at 0.45 s: the landing's
# twenty shins make it chaotic, so the comparison ends at 0.37 s
DT, T_END = 2.5e-4, 0.37


def _sim() -> pfaff.Simulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pfaff.Simulator(pfaff.load(MODEL, keyframe="stand", contact=True), dt=DT)


def _events(sim) -> list[tuple[float, str, str, str]]:
    return [(e.t, e.kind, e.geom1, e.geom2) for e in sim.events]


def same_run(a: pfaff.Simulator, b: pfaff.Simulator) -> str | None:
    """Why two Simulators' runs differ (None: the same events, their times to 1e-7 s,
    and q to 1e-6, v to 1e-4 at every common sample time; a call that forgets its clocks
    lets a shin go 2.5e-4 s early and lands otherwise)."""
    ea, eb = _events(a), _events(b)
    if [e[1:] for e in ea] != [e[1:] for e in eb]:
        first = next(
            (i for i, (x, y) in enumerate(zip(ea, eb)) if x[1:] != y[1:]), min(len(ea), len(eb))
        )
        return f"the events differ from the {first}th: {ea[first:][:1]} {eb[first:][:1]}"
    dt = max((abs(x[0] - y[0]) for x, y in zip(ea, eb)), default=0.0)
    if dt > 1e-7:
        return f"event times differ by {dt:.3g} s"
    ra, rb = a.record().arrays(), b.record().arrays()
    ta, tb = np.round(ra["t"], 12), np.round(rb["t"], 12)
    common = np.intersect1d(ta, tb)
    if len(common) < 0.9 * min(len(ta), len(tb)):
        return f"only {len(common)} of {len(ta)} samples at common times"
    ia, ib = np.searchsorted(ta, common), np.searchsorted(tb, common)
    for name, tol in (("q", 1e-6), ("v", 1e-4)):
        err = float(np.abs(ra[name][ia] - rb[name][ib]).max())
        if err > tol:
            return f"{name} differs by {err:.3g}"
    return None


@pytest.fixture(scope="module")
def one_call():
    sim = _sim()
    sim.step(n=int(round(T_END / DT)))
    return sim


def test_a_landing_in_calls_of_one_step_is_the_landing_in_one_call(one_call):
    sim = _sim()
    for _ in range(int(round(T_END / DT))):
        sim.step()
    kinds = {e.kind for e in one_call.events}
    assert {"impact", "slip", "jam", "release"} <= kinds  # the run has what the memory carries
    assert same_run(one_call, sim) is None, same_run(one_call, sim)


def test_calls_of_various_lengths_are_one_run(one_call):
    sim = _sim()
    n, rng = int(round(T_END / DT)), np.random.default_rng(3)
    while sim.steps < n:
        sim.step(n=int(min(n - sim.steps, rng.integers(1, 40))))
    assert same_run(one_call, sim) is None, same_run(one_call, sim)


def test_a_run_that_forgets_its_clocks_is_another_run(one_call):
    # the comparison catches what the memory changes: calls of one step that begin each
    # with new clocks (the stepper's memory dropped) let the shin go early
    sim = _sim()
    stepper = sim._limited
    for _ in range(int(round(T_END / DT))):
        stepper._memory = core.run_memory()
        sim.step()
    assert same_run(one_call, sim) is not None


def test_a_look_ahead_between_calls_leaves_the_clocks_as_they_were(one_call):
    # step_derivatives runs the next step to say whether it meets an event (a run not
    # kept): on a copy of the clocks, else the next call, at the time before it, would
    # find them at the look-ahead's end and leave them aside
    sim = _sim()
    for k in range(int(round(T_END / DT))):
        if 1318 <= k <= 1330:  # the shins' impacts and releases at 0.3307 - 0.331 s
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sim.step_derivatives()
        sim.step()
    assert same_run(one_call, sim) is None, same_run(one_call, sim)


def _stick_landing_in_calls(memory: bool = True) -> tuple[pfaff.Simulator, bool]:
    # the landing under the stick law in calls of 1 ms: a shin's slip started at a call's
    # end (0.319 s) stops at the next call's start, at once and at zero slip speed. The
    # Simulator, and whether sim.events only grew from call to call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        system = pfaff.load(MODEL, keyframe="stand", contact=True)
    sim = pfaff.Simulator(system, dt=2e-4, impact_friction="stick")
    grew, before = True, []
    for _ in range(330):
        if not memory:
            sim._limited._memory = core.run_memory()
        sim.step(n=5)
        grew = grew and sim.events[: len(before)] == before
        before = sim.events
    return sim, grew


def test_a_slip_a_call_ends_on_is_the_next_calls_event():
    # as in one call, the slip and its stop at once are no events; the events a call
    # reported stay (the slip is reported by the call that goes on, with its stop)
    sim, grew = _stick_landing_in_calls()
    assert grew
    assert idle_stops(sim.events) == [] and idle_jams(sim.events) == []
    assert [e.kind for e in sim.events if e.kind in ("slip", "stick")] == []
    # the check catches the calls that forget: the stop at the next call's start comes
    # alone, at zero slip speed, and the slip is never reported
    forgot, _ = _stick_landing_in_calls(memory=False)
    kinds = [(round(e.t, 9), e.kind) for e in forgot.events if e.kind in ("slip", "stick")]
    assert kinds == [(0.319, "stick")]
    assert next(e for e in forgot.events if e.kind == "stick").v_pre < 1e-9


def test_a_memory_is_written_where_its_run_succeeds():
    sim = _sim()
    sim.step(n=20)
    m = core.run_memory()
    assert np.isnan(m.t_end)  # no call before
    sim._limited._memory = m
    sim.step()
    assert m.t_end == pytest.approx(21 * DT, abs=1e-12)
    copy = m.copy()
    sim.step()
    assert m.t_end == pytest.approx(22 * DT, abs=1e-12)
    assert copy.t_end == pytest.approx(21 * DT, abs=1e-12)  # a copy stays as it was
    sim.reset()
    assert sim._limited._memory is not m and np.isnan(sim._limited._memory.t_end)


def test_a_pickled_simulator_steps_on_with_new_clocks():
    sim = _sim()
    sim.step(n=40)
    again = pickle.loads(pickle.dumps(sim))
    again.step(n=10)
    assert again.t == pytest.approx(50 * DT, abs=1e-12)


def test_step_derivatives_do_not_warn_of_the_slip_the_last_call_started():
    # the landing's shin slips at 0.40125 s, a grid instant: stepped one step per call,
    # that slip is the next call's event, and the mode the next step starts in
    sim = _sim()
    for _ in range(1605):
        sim.step()
    assert sim._limited._memory.pending == 1
    assert [c.mode for c in sim.contacts].count("slip") >= 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim.step_derivatives()
    assert not [w for w in caught if "slip of" in str(w.message)], caught
    sim.step()  # and the next call reports it
    assert [e.kind for e in sim.events if abs(e.t - 0.40125) < 1e-9].count("slip") == 1
