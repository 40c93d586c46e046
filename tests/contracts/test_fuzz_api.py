"""Fuzzing what users feed the step API: Simulator.step (tau, ctrl, n), reset (q, v),
rollout's arrays and a Gymnasium action. Each call either runs, leaving a finite state
on the constraint manifold, or is refused by a ValueError/TypeError (or a documented
simulation error) whose message is not empty; nothing crashes the process."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pfaff
from pfaff import core
from pfaff.simulate.trajectory import InitialStateError, SimulationError
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
REFUSED = (ValueError, TypeError, SimulationError, InitialStateError)
#: entries of the arrays: ordinary values, large ones, NaN and inf
FILLS = st.sampled_from([0.0, 0.4, -3.0, 1e3, float("nan"), float("inf")])


def shapes(n: int):
    """The right length n six times in ten, else a wrong shape."""
    return st.integers(0, 9).flatmap(
        lambda i: st.just((n,)) if i < 6 else st.sampled_from([(), (0,), (n - 1,), (n, 1), (9,)])
    )


def _on_manifold(sys, q) -> float:
    phi, _ = sys.cset.holonomic_terms_at(q)
    return float(np.max(np.abs(phi), initial=0.0))


@pytest.fixture(scope="module")
def five_bar():
    return pfaff.load(MODELS / "five_bar.xml")


@pytest.fixture(scope="module")
def arm():
    return pfaff.load(MODELS / "actuated_arm.xml")  # nq = nv = 2, 6 actuators


def test_fuzzed_simulator_steps(five_bar):
    sim = pfaff.Simulator(five_bar, dt=1e-3, record=False)

    @SETTINGS
    @given(
        tau_shape=st.one_of(st.none(), shapes(4)), fill=FILLS,
        n=st.sampled_from([1, 1, 3, 0, -2, 2.5, "3"]), as_list=st.booleans(),
    )  # fmt: skip
    def check(tau_shape, fill, n, as_list):
        tau = None if tau_shape is None else np.full(tau_shape, fill)
        if as_list and tau is not None:
            tau = tau.tolist()
        try:
            sim.step(tau, n=n)
        except REFUSED as exc:
            assert str(exc).strip()
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.v))
        assert _on_manifold(five_bar, sim.q) <= 1e-9

    check()


def test_fuzzed_ctrl_and_reset(arm):
    sim = pfaff.Simulator(arm, dt=1e-3, record=False)

    @SETTINGS
    @given(
        ctrl_shape=st.one_of(st.none(), shapes(6)), fill=FILLS,
        q_shape=st.one_of(st.none(), shapes(2)), q_fill=FILLS,
    )  # fmt: skip
    def check(ctrl_shape, fill, q_shape, q_fill):
        try:
            sim.reset(None if q_shape is None else np.full(q_shape, q_fill))
        except REFUSED as exc:
            assert str(exc).strip()
        ctrl = None if ctrl_shape is None else np.full(ctrl_shape, fill)
        try:
            sim.step(ctrl=ctrl, n=2)
        except REFUSED as exc:
            assert str(exc).strip()
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.v))

    check()


def test_fuzzed_rollout_arrays(five_bar):
    @SETTINGS
    @given(
        k=st.sampled_from([1, 2, 0]), t=st.sampled_from([3, 1, 0]),
        width=st.sampled_from([4, 4, 3, 5]), fill=FILLS,
        starts=st.sampled_from(["none", "one", "each", "wrong"]),
    )  # fmt: skip
    def check(k, t, width, fill, starts):
        taus = np.full((k, t, width), fill)
        q0s = {"none": None, "one": five_bar.q0, "each": np.tile(five_bar.q0, (max(k, 1), 1)),
               "wrong": np.zeros(3)}[starts]  # fmt: skip
        try:
            out = pfaff.rollout(five_bar, q0s, None, taus, dt=1e-3, threads=2)
        except REFUSED as exc:
            assert str(exc).strip()
            return
        ok = out["status"] == 0
        assert np.all(np.isfinite(out["q"][ok]))
        assert all(m for s, m in zip(out["status"], out["message"]) if s != 0)

    check()
