"""The rules and tables both languages read, written once in C++ (src/cpp/tables/tables.hpp,
options.def, series.def, status.def) and read by Python (pfaff.simulate.policy,
SimOptions): the record rule, the controller's due rule, the options' defaults, the
series' widths and the status codes. Each test holds the two sides to an independent
witness and feeds a wrong input that the check catches."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from where import MODELS

from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.dynamics import VARIANTS
from pfaff.files.model import load_model
from pfaff.simulate import SimOptions, SimulationError, options, simulate
from pfaff.simulate.actuators import Actuation, activation_count
from pfaff.simulate.core_engine import attach_buffers, build, record_shapes
from pfaff.simulate.integrator import step_count
from pfaff.simulate.policy import (
    CORE_SERIES,
    FORCE_SERIES,
    POSITION_FAILURE,
    SAMPLE_TOL,
    SERIES,
    SampleClock,
    StatusCode,
    record_count,
    record_due,
)

_core = core._core

#: (n_steps, every) pairs: edges (no step, every = 1, every = n, every > n, n a multiple
#: of every or not) and large counts
PAIRS = [
    *itertools.product(range(0, 13), range(1, 15)),
    (1000, 7), (1000, 1000), (999, 1000), (1001, 1000), (2**40 + 3, 5), (2**40, 2**20),
]  # fmt: skip


def brute_count(n: int, every: int) -> int:
    """The samples a run of n steps records, counted from the rule's statement: the
    multiples of every in 0 .. n (Python's range), and n itself when it is none."""
    return len(range(0, n + 1, every)) + (n not in range(0, n + 1, every))


@pytest.mark.parametrize(("n", "every"), PAIRS)
def test_record_count_is_the_count_of_the_steps_the_rule_records(n, every):
    assert record_count(n, every) == brute_count(n, every)
    if n <= 2000:  # the per-step rule, summed, gives the same count
        assert sum(record_due(k, every, n) for k in range(n + 1)) == brute_count(n, every)
        assert record_due(n, every, n) and record_due(0, every, n)


def test_a_count_without_the_last_step_is_caught():
    """Wrong rule: n // every + 1 forgets the last step when every does not divide n;
    the witness of the test above tells them apart."""
    wrong = [(n, e) for n, e in PAIRS if n // e + 1 != brute_count(n, e)]
    assert wrong and all(n % e for n, e in wrong)


def test_the_rules_refuse_what_they_cannot_count():
    with pytest.raises(ValueError, match="every = 0 is out of range"):
        record_count(10, 0)
    with pytest.raises(ValueError, match="k = 11 is out of range"):
        record_due(11, 1, 10)
    with pytest.raises(ValueError, match="n_steps = -1 is out of range"):
        record_count(-1, 1)
    with pytest.raises(ValueError, match="more than a run counts"):
        step_count(0.0, 1e300, 1e-3)


@pytest.mark.parametrize("every", [1, 2, 3, 5, 7])
def test_both_engines_record_the_steps_of_the_rule(every):
    """A run of 10 steps on each engine records the samples record_due names, at the
    same times."""
    m = load_model(MODELS / "five_bar.xml")
    cset = ConstraintSet(m.mechanism, m.constraints)
    times = {}
    for engine in ("numpy", "core"):
        opt = SimOptions(dt=1e-3, record_every=every, engine=engine, progress=False)
        traj = simulate(cset, m.q, m.v, 0.01, opt)
        assert traj.engine == engine and len(traj) == record_count(10, every)
        times[engine] = traj.t
    expected = [k * 1e-3 for k in range(11) if record_due(k, every, 10)]
    np.testing.assert_allclose(times["numpy"], expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(times["core"], expected, rtol=0, atol=1e-15)


@given(
    t=st.floats(-1e3, 1e3),
    off=st.floats(-3.0, 3.0),
    dt=st.sampled_from([1e-4, 1e-3, 1e-3 / 3, 0.1]),
)
def test_the_due_rule_is_its_statement(t, off, dt):
    """The clock's due (the core's sample_due) is t >= next - SAMPLE_TOL dt, written
    here again as the witness, at instants around the threshold."""
    for nxt in (t + off * SAMPLE_TOL * dt, t + off * dt):
        assert SampleClock(dt, nxt).due(t, dt) == (t >= nxt - SAMPLE_TOL * dt)
    assert SAMPLE_TOL == 1e-9


def test_a_due_rule_without_its_tolerance_is_caught():
    """Wrong rule: the exact test t >= next says a sample half a tolerance late is not
    due; the clock's rule takes it."""
    dt, t = 1e-3, 0.25
    late = t + 0.5 * SAMPLE_TOL * dt
    assert not t >= late
    assert SampleClock(dt, late).due(t, dt)
    assert not SampleClock(dt, t + 2 * SAMPLE_TOL * dt).due(t, dt)


# -- the options: one default each ---------------------------------------------------------
def literal_defaults(cls, names) -> list[str]:
    """The fields of dataclass ``cls`` among ``names`` whose default its source writes
    as a literal (a default written a second time) instead of reading the core's."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id in names and node.value is not None:
                if any(isinstance(x, ast.Constant) for x in ast.walk(node.value)):
                    out.append(node.target.id)
    return out


def test_every_shared_option_has_one_default():
    """Every field of the core's Options except the core-only ones is a SimOptions field
    whose default is the core's (read from it, no literal written again)."""
    shared = set(core.option_names())
    assert shared == {n for n, _ in _core.OPTIONS} - set(core.CORE_ONLY_OPTIONS)
    sim = {f.name: f.default for f in dataclasses.fields(SimOptions)}
    assert shared <= set(sim), shared - set(sim)
    defaults = _core.Options()
    for name in shared:
        got = core.option_value(name, sim[name])
        assert got == getattr(defaults, name), name
    assert literal_defaults(SimOptions, shared) == []
    assert SimOptions().position_failure == POSITION_FAILURE == defaults.position_failure


def test_a_default_written_again_is_caught():
    """Wrong input: a copy of SimOptions with a literal default of a core option."""

    @dataclasses.dataclass
    class Copy:
        dt: float = options.CORE_DEFAULTS.dt
        rank_tol: float = 1e-9
        variant: str = VARIANTS[options.CORE_DEFAULTS.variant]
        integrator: str = "rk4"

    assert literal_defaults(Copy, set(core.option_names())) == ["rank_tol"]


def test_the_position_failure_option_stops_both_engines(engine):
    """With a tolerance below round-off every correction counts as a Newton failure; a
    threshold below what the correction reaches then stops the run with the position
    message on either engine, the default lets it run."""
    m = load_model(MODELS / "five_bar.xml")
    cset = ConstraintSet(m.mechanism, m.constraints)
    kw = dict(dt=1e-2, engine=engine, progress=False, position_tol=1e-300, position_floor=0.0)
    traj = simulate(cset, m.q, m.v, 0.05, SimOptions(**kw))
    assert traj.newton_failures > 0 and traj.steps == 5
    with pytest.raises(SimulationError, match="position correction failed"):
        simulate(cset, m.q, m.v, 0.05, SimOptions(position_failure=1e-300, **kw))
    with pytest.raises(ValueError, match="position_failure must be > 0"):
        SimOptions(position_failure=float("nan")).validate()


# -- the series: one table of names and widths ---------------------------------------------
def test_the_series_table_gives_the_core_buffers_their_widths():
    """Buffers shaped by Python's SERIES are what the core's record_width asks: each
    one value short is refused, naming its index; the force series come last."""
    m = load_model(MODELS / "five_bar.xml")
    cset = ConstraintSet(m.mechanism, m.constraints)
    system = build(cset)
    shapes = record_shapes(cset)
    assert [s.name for s in SERIES] == [r[0] for r in _core.SERIES]
    assert SERIES == (*CORE_SERIES, *FORCE_SERIES) and len(FORCE_SERIES) == 2
    cap = 4
    attach_buffers(system, shapes, cap)  # accepted: every width at least the core's
    for i, shape in enumerate(shapes):
        if not np.prod(shape):  # act: width na = 0 here (below with activations)
            continue
        bufs = [np.empty((cap, *s)) for s in shapes]
        bufs[i] = np.empty(cap * int(np.prod(shape)) - 1)
        with pytest.raises(ValueError, match=f"record buffer {i} holds"):
            system.set_buffers(bufs, cap)
    with pytest.raises(ValueError, match=f"expected {len(CORE_SERIES)} record buffers"):
        system.set_buffers([np.empty((cap, *s)) for s in shapes[:-1]], cap)
    # a model with 4 activations: the act buffer's width is na
    carts = load_model(MODELS / "activation_carts.xml")
    elements = Actuation(carts.actuators, carts.mechanism).elements
    cset = ConstraintSet(carts.mechanism, carts.constraints)
    system = build(cset, elements)
    shapes = record_shapes(cset, activation_count(elements))
    i = [s.name for s in CORE_SERIES].index("act")
    assert shapes[i] == (4,)
    attach_buffers(system, shapes, cap)
    bufs = [np.empty((cap, *s)) for s in shapes]
    bufs[i] = np.empty(4 * cap - 1)
    with pytest.raises(ValueError, match=f"record buffer {i} holds {4 * cap - 1} values"):
        system.set_buffers(bufs, cap)


def test_the_frame_row_layout_is_read_by_name():
    """The observed frame's row of a Sample: p, R, J, drift back to back, J 6 x nv."""
    nv = 4
    rows = {name: (a, b, r, c) for name, a, b, r, c in _core.frame_row(nv)}
    assert list(rows) == ["p", "R", "J", "drift"]
    assert rows["p"] == (0, 3, 3, 1) and rows["R"] == (3, 12, 3, 3)
    assert rows["J"] == (12, 12 + 6 * nv, 6, nv) and rows["drift"][1] == 18 + 6 * nv
    with pytest.raises(ValueError, match="nv = -1 is out of range"):
        _core.frame_row(-1)


# -- the status codes ----------------------------------------------------------------------
def test_the_status_codes_are_the_tables():
    assert {s.name.lower(): int(s) for s in StatusCode} == {n: c for n, c, _ in _core.STATUS}
    assert (StatusCode.OK, StatusCode.NON_FINITE, StatusCode.CONTACT_OPENS) == (0, 1, 2)
    assert (StatusCode.POSITION_FAILED, StatusCode.EXCEPTION) == (3, -1)
    assert _core.Status().code == StatusCode.OK
