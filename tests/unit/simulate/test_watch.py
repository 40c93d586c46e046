"""Watchers see the run as it goes: on both engines the states they are handed are
the trajectory's own, in order, up to its last."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.watch import active, watching
from tests.where import MODELS


def test_watchers_see_the_trajectory_in_order(engine):
    sys = pfaff.load(MODELS / "five_bar.xml")
    seen: list[tuple[float, np.ndarray]] = []
    with watching(lambda t, q: seen.append((t, np.array(q)))):
        assert active()
        traj = simulate(sys.cset, sys.q0, sys.v0, 0.1, SimOptions(dt=1e-3, engine=engine))
    assert not active()
    arr = traj.arrays()
    ts = np.array([t for t, _ in seen])
    assert len(seen) >= 10 and np.all(np.diff(ts) > 0)
    assert abs(ts[-1] - arr["t"][-1]) < 1e-12
    for t, q in seen:  # each handed state is the recorded one at its time
        k = int(np.argmin(np.abs(arr["t"] - t)))
        assert abs(arr["t"][k] - t) < 1e-12
        np.testing.assert_allclose(q, arr["q"][k], atol=1e-14)


def test_a_failing_watcher_is_removed():
    def boom(t, q):
        raise RuntimeError("viewer gone")

    sys = pfaff.load(MODELS / "five_bar.xml")
    with pytest.raises(RuntimeError, match="viewer gone"), watching(boom):
        simulate(sys.cset, sys.q0, sys.v0, 0.01, SimOptions(dt=1e-3))
    assert not active()
