"""``actearly`` looks one step of the run that steps it ahead: an actuator's elements
built once (their lowering knows no dt) and run at two steps, on both engines, through
``simulate``, a ``Simulator`` and ``rollout``, follow the closed form of a first-order
filter with that run's dt; the closed form with the other dt (the old rule: the dt the
elements were built for) is far from the run."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.actuators import Actuation

CART = """<mujoco>
  <option gravity="0 0 0"/>
  <worldbody><body name="cart">
    <joint name="x" type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.1 0.1" mass="2"/>
  </body></worldbody>
  <actuator>
    <general name="lag" joint="x" dyntype="filterexact" dynprm="0.1" gainprm="3"
             actearly="true"/>
  </actuator>
</mujoco>"""
MASS, GAIN, TAU, T_END = 2.0, 3.0, 0.1, 0.4
DTS = (1e-3, 4e-3)


def _closed_form(t: np.ndarray, dt: float) -> np.ndarray:
    """The cart's velocity from rest under ctrl 1 from act 0: the force ``GAIN act(t +
    dt)`` with ``act(s) = 1 - exp(-s / TAU)`` (actearly: the activation one step ahead),
    so ``v = GAIN / MASS (t - TAU exp(-dt / TAU) (1 - exp(-t / TAU)))``."""
    return GAIN / MASS * (t - TAU * np.exp(-dt / TAU) * (1.0 - np.exp(-t / TAU)))


@pytest.fixture(scope="module")
def cart(tmp_path_factory):
    path = tmp_path_factory.mktemp("actearly") / "cart.xml"
    path.write_text(CART)
    system = pfaff.load(path)
    assert [a.actearly for a in system.actuators] == [True]
    return system


@pytest.mark.parametrize("engine", ["core", "numpy"])
def test_simulate_looks_ahead_by_its_own_dt(cart, engine):
    """The same elements (built once, no dt) in runs of dt 1 and 4 ms: v equals the
    closed form with the run's dt (RK4's error on the filter's exponential: 1e-8 m/s),
    and differs from the closed form with the other dt by more than 1e-4 m/s."""
    act = Actuation(cart.actuators, cart.mechanism)
    act.tau(np.ones(1))
    runs = {}
    for dt in DTS:
        opt = SimOptions(dt=dt, engine=engine, progress=False)
        tr = simulate(cart.cset, cart.q0, cart.v0, T_END, opt, forces=act.elements,
                      act0=np.zeros(1))  # fmt: skip
        assert tr.engine == engine
        runs[dt] = tr.arrays()
    for dt, other in (DTS, DTS[::-1]):
        a = runs[dt]
        assert np.abs(a["v"][:, 0] - _closed_form(a["t"], dt)).max() <= 1e-8
        assert np.abs(a["v"][:, 0] - _closed_form(a["t"], other)).max() > 1e-4


@pytest.mark.parametrize("engine", ["core", "numpy"])
def test_a_simulator_and_a_rollout_look_ahead_by_their_dt(cart, engine):
    """A Simulator stepped with ctrl 1 and a rollout of the same ctrl, at 1 and 4 ms:
    the last velocity the closed form's with their dt (1e-8 m/s); the other dt's is off
    by more than 1e-4 m/s."""
    for dt, other in (DTS, DTS[::-1]):
        n = round(T_END / dt)
        sim = pfaff.Simulator(cart, dt=dt, engine=engine)
        sim.step(ctrl=np.ones(1), n=n)
        out = pfaff.rollout(cart, None, None, np.zeros((1, n, 1)), dt=dt, threads=1,
                            ctrls=np.ones((1, n, 1)), engine=engine)  # fmt: skip
        for v in (sim.v[0], out["v"][0, -1, 0]):
            assert abs(v - _closed_form(np.array(T_END), dt)) <= 1e-8
            assert abs(v - _closed_form(np.array(T_END), other)) > 1e-4
