"""The step loop's policy written once (pfaff.simulate.policy): the sampling clock and
the recorded series hold for both engines."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from where import MODELS

from pfaff.constraints import ConstraintSet
from pfaff.files.model import load_model
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.policy import SERIES, SERIES_DOC, SampleClock, series_shape

OWN = MODELS


@given(
    t0=st.floats(-10.0, 10.0),
    next_off=st.integers(0, 20),
    dt=st.sampled_from([1e-3, 2e-3, 1e-3 / 3, 0.1]),
    ratio=st.integers(1, 7),
)
def test_clock_finds_the_steps_its_rule_makes_due(t0, next_off, dt, ratio):
    """first_due_step is the first step whose time the due rule accepts; samples one
    period apart land ``ratio`` steps apart on the step grid, despite round-off."""
    n = 60
    clock = SampleClock(ratio * dt, t0 + next_off * dt)
    k = clock.first_due_step(0, t0, dt, n)
    brute = next((j for j in range(n + 1) if clock.due(t0 + j * dt, dt)), n + 1)
    assert k == brute == min(next_off, n + 1)
    steps = []
    while k <= n:
        steps.append(k)
        clock.advance()
        k = clock.first_due_step(k + 1, t0, dt, n)
    assert all(b - a == ratio for a, b in zip(steps, steps[1:]))


def test_a_clock_without_the_round_off_rule_would_skip_a_sample():
    """Wrong input: after 15 periods of 0.1 s the clock's instant is
    1.5000000000000002 while the step time 15 * 0.1 is 1.5; the exact test t >= next
    would skip that sample, the clock's rule takes it."""
    clock = SampleClock(0.1, 0.0)
    for _ in range(15):
        clock.advance()
    t = 15 * 0.1
    assert t < clock.next  # round-off puts the instant above the step time
    assert clock.due(t, 0.1)
    assert clock.first_due_step(0, 0.0, 0.1, 20) == 15


def test_both_engines_record_every_series_of_the_table(engine):
    m = load_model(OWN / "five_bar.xml")
    cset = ConstraintSet(m.mechanism, m.constraints)
    traj = simulate(cset, m.q, m.v, 0.005, SimOptions(dt=1e-3, engine=engine, progress=False))
    assert traj.engine == engine
    a = traj.arrays()
    sizes = {"nq": 4, "nv": 4, "m": cset.dim, "m_h": len(cset.holonomic_rows), "na": 0}
    for s in SERIES:
        assert a[s.name].shape == (6, *series_shape(s, sizes)), s.name
        assert np.isfinite(a[s.name]).all(), s.name
    assert set(SERIES_DOC) == {s.name for s in SERIES}
    assert all(SERIES_DOC[s.name].startswith(s.doc) for s in SERIES)


def test_the_core_options_mirror_simoptions_by_name():
    """Every field of the core's Options is copied from the SimOptions field of the same
    name, except those listed as core-only; a field added to one side only fails here."""
    import dataclasses

    from pfaff import core

    sim_fields = {f.name for f in dataclasses.fields(SimOptions)}
    names = set(core.option_names())
    assert names <= sim_fields, names - sim_fields
    assert {"dt", "rank_tol", "position_tol", "variant", "record_every"} <= names
    cpp = {n for n in dir(core._core.Options) if not n.startswith("_")}
    assert cpp == names | set(core.CORE_ONLY_OPTIONS)
    s = core.build(ConstraintSet(load_model(OWN / "five_bar.xml").mechanism, []))
    opt = SimOptions(dt=2.5e-3, rank_tol=3e-9, variant="Mc2", record_every=3)
    core.options(s, opt)
    got = s.options
    assert (got.dt, got.rank_tol, got.variant, got.record_every) == (2.5e-3, 3e-9, 2, 3)
