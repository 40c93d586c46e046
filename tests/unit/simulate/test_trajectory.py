"""Trajectory: series appended a sample at a time (the NumPy engine) and handed over as
blocks of samples (the compiled core) read back alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff.simulate import SimOptions, Trajectory, simulate

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_blocks_and_rows_hold_the_same_samples():
    """Three samples as rows on one trajectory, as two blocks on another: the lists
    (rows), the arrays (series, arrays) and len agree; a block is taken after the
    samples already there; a block of times is refused."""
    rng = np.random.default_rng(3)
    q = rng.normal(size=(3, 2))
    by_rows, by_blocks = Trajectory(2, 2, 0, 0), Trajectory(2, 2, 0, 0)
    for i in range(3):
        by_rows.rows["t"].append(0.1 * i)
        by_rows.rows["q"].append(q[i])
        by_blocks.rows["t"].append(0.1 * i)
    by_blocks.add_block("q", q[:1])
    by_blocks.add_block("q", q[1:])
    assert len(by_blocks) == len(by_rows) == 3
    assert np.array_equal(by_blocks.series("q"), q)
    assert np.array_equal(by_blocks.arrays()["q"], by_rows.arrays()["q"])
    assert [list(r) for r in by_blocks.rows["q"]] == [list(r) for r in q]  # moved in
    by_blocks.add_block("q", q[:1])  # after the three: a fourth sample
    assert np.array_equal(by_blocks.series("q")[-1], q[0])
    assert len(by_blocks.rows["q"]) == 4
    with pytest.raises(ValueError, match="times"):
        by_blocks.add_block("t", np.zeros(2))


def test_a_core_run_reads_as_a_numpy_run():
    """The five-bar for 50 ms on both engines: every series of arrays() has the same
    shape, and q agrees to 1e-9 rad; the NumPy run's rows are lists, the core's too
    once read."""
    sys_ = pfaff.load(MODELS / "five_bar.xml")
    runs = {}
    for engine in ("numpy", "core"):
        opt = SimOptions(dt=1e-3, engine=engine, progress=False)
        runs[engine] = simulate(sys_.cset, sys_.q0, sys_.v0 + 0.5, 0.05, opt)
    a, b = runs["numpy"].arrays(), runs["core"].arrays()
    assert set(a) == set(b)
    for k in a:
        assert a[k].shape == b[k].shape, k
    assert np.abs(a["q"] - b["q"]).max() <= 1e-9
    assert np.ptp(b["q"], axis=0).max() > 1e-3  # it moved: the agreement says something
    assert isinstance(runs["core"].rows["v"], list) and len(runs["core"].rows["v"]) == 51
    assert runs["core"].max_constraint_violation() <= 1e-10
