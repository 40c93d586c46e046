"""Chained runs: Trajectory.concat and pfaff.simulate.phases.PhaseChain (one controller
clock across switches of the constraint set)."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.simulate import SimOptions, Trajectory, simulate
from pfaff.simulate.phases import PhaseChain
from pfaff.systems import YZPlanarPlant


def _plant():
    su = YZPlanarPlant(0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14, contact_h=0.01)
    return su, su.initial_q(np.array([0.0, 0.13, 0.0]))


def _walled(su):
    """The pins and a bilateral wall at the object's contact point (5 rows)."""
    wall = PointOnPlane("object", (0.0, -1.0, 0.0), -0.14, point=(0.0, 0.01, 0.0), name="wall")
    return ConstraintSet(su.mech, [*su.free.constraints, wall])


class _Clock:
    """Records its sample times; a small torque so the state moves."""

    needs_sensors = False
    frames = ()

    def __init__(self):
        self.times: list[float] = []
        self.signals: dict[str, float] = {}

    def __call__(self, t, snap):
        self.times.append(t)
        self.signals = {"k": float(len(self.times))}
        return 1e-3 * len(self.times) * np.array([1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 0.0])


def test_concat_joins_without_duplicating_the_switch_sample():
    su, q0 = _plant()
    opt = SimOptions(dt=1e-3, progress=False)
    a = simulate(su.free, q0, np.zeros(7), 0.005, opt)
    qa, va = a.arrays()["q"][-1], a.arrays()["v"][-1]
    b = simulate(_walled(su), qa, va, a.t[-1] + 0.004, opt, t0=a.t[-1], controller=_Clock())
    out = Trajectory.concat([a, b])
    arr = out.arrays()
    assert len(out) == len(a) + len(b) - 1 == 10
    assert np.all(np.diff(arr["t"]) > 0)
    assert all(len(x) == len(out) for x in arr.values())
    # the switch sample is the second part's first one
    np.testing.assert_array_equal(arr["q"][len(a) - 1], b.arrays()["q"][0])
    # constraint rows padded with zeros: the wall row is absent in the free part
    assert arr["lambda"].shape == (10, 5) and arr["phi"].shape[1] == 5
    np.testing.assert_array_equal(arr["lambda"][: len(a) - 1, 4], 0.0)
    # signals of the second part only: NaN before it
    assert np.isnan(arr["k"][: len(a) - 1]).all() and not np.isnan(arr["k"][len(a) - 1 :]).any()
    assert out.steps == a.steps + b.steps
    with pytest.raises(ValueError, match="before part 0 ends"):
        Trajectory.concat([b, a])


def test_one_controller_clock_across_switches():
    """Phases that switch between samples (off the step grid, with other step sizes)
    keep the controller's samples at exactly k control_dt; resample restarts the clock."""
    su, q0 = _plant()
    cdt = 3e-3
    ctrl = _Clock()
    chain = PhaseChain(q0, np.zeros(7), SimOptions(dt=1e-3, control_dt=cdt, progress=False), ctrl)
    chain.run(su.free, 0.0071)  # ends between samples (at 7.1 ms; next sample 9 ms)
    chain.run(su.free, 0.0020, options=SimOptions(dt=5e-4, control_dt=5e-4, progress=False))
    chain.run(su.free, 0.0123)  # starts at 9.1 ms, off the sample grid
    t_end = chain.t
    np.testing.assert_allclose(ctrl.times, cdt * np.arange(len(ctrl.times)), rtol=0, atol=1e-12)
    assert len(ctrl.times) == int(t_end / cdt) + 1
    traj = chain.trajectory()
    assert np.all(np.diff(traj.t) > 0)
    # the torque is held across the switches: each recorded sample carries the torque
    # of the latest controller sample at or before it
    tau = traj.arrays()["tau"][:, 0]
    k_latest = np.searchsorted(np.array(ctrl.times), traj.t + 1e-12, side="right")
    np.testing.assert_allclose(tau, 1e-3 * k_latest, rtol=0, atol=1e-15)
    # an event restarts the clock at the switch
    chain.resample()
    t_r, n = chain.t, len(ctrl.times)
    chain.run(su.free, 0.0065)
    after = ctrl.times[n:]
    np.testing.assert_allclose(after, t_r + cdt * np.arange(len(after)), rtol=0, atol=1e-12)


def test_chain_carries_state_and_held_torque():
    su, q0 = _plant()
    opt = SimOptions(dt=1e-3, progress=False)
    chain = PhaseChain(q0, np.zeros(7), opt, _Clock())
    tr = chain.run(su.free, 0.004)
    np.testing.assert_array_equal(chain.q, tr.arrays()["q"][-1])
    assert chain.t == pytest.approx(0.004)
    walled = _walled(su)
    chain.impact(walled)  # the object's contact point is on the wall: sample now
    assert chain.next_sample == chain.t
    n = len(chain.controller.times)
    chain.run(walled, 0.002, stop=lambda t, s, c: True)
    assert chain.controller.times[n] == pytest.approx(0.004, abs=1e-15)


def test_next_control_hook_in_both_engines(engine):
    """``simulate(next_control=...)`` takes the first sample there, in both engines, and
    ``trajectory.next_control`` is the time of the sample after the run."""
    pytest.importorskip("pinocchio")
    from pfaff.mechanism import load_robot

    panda = load_robot("panda")
    cset = ConstraintSet(panda, [PointOnPlane("panda_hand_tcp", (0.0, 0.0, 1.0), 0.4)])
    q0 = panda.neutral() + 0.2

    class PandaClock(_Clock):
        def __call__(self, t, snap):
            self.times.append(t)
            return np.zeros(panda.nv)

    ctrl = PandaClock()
    opt = SimOptions(dt=1e-3, control_dt=2e-3, engine=engine, progress=False)
    tr = simulate(cset, q0, np.zeros(panda.nv), 0.01, opt, controller=ctrl, next_control=0.0025)
    assert tr.engine == engine
    np.testing.assert_allclose(ctrl.times, [0.003, 0.005, 0.007, 0.009], rtol=0, atol=1e-15)
    assert tr.next_control == pytest.approx(0.0105, abs=1e-15)
