"""The series ``act``: the activations of the actuators with activation dynamics per
recorded sample (width na), on both engines, against their closed forms under a held
ctrl -- a ``filter``'s ``ctrl + (act0 - ctrl) exp(-t / tau)``, an ``integrator``'s
``act0 + ctrl t`` -- from the ``act0`` a run starts with; a model without them records
width 0; a wrong ``act0`` is refused naming what is valid."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.actuators import Actuation
from pfaff.simulate.limits import JointLimit, simulate_limited
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
CARTS = MODELS / "activation_carts.xml"
# the carts' actuators (activation_carts.xml): lag, filter of 0.05 s; servo, filterexact
# of 0.03 s, ctrl clamped to [-1, 1]; integrating, integrator in [-0.3, 0.3]; early,
# filter of 0.02 s in [-0.5, 0.8]
CTRL = np.array([0.7, 0.4, 0.25, -0.3])
ACT0 = np.array([-0.2, 0.1, -0.1, 0.3])


def _closed(t: np.ndarray, act0=ACT0, ctrl=CTRL) -> np.ndarray:
    """The activations at the times ``t`` from ``act0`` at 0 under ``ctrl`` held."""
    out = np.empty((len(t), 4))
    for j, tau in ((0, 0.05), (1, 0.03), (3, 0.02)):
        out[:, j] = ctrl[j] + (act0[j] - ctrl[j]) * np.exp(-t / tau)
    out[:, 2] = act0[2] + ctrl[2] * t  # 0.25 s -> at most -0.1 + 0.0625: inside its range
    return out


def _run(engine: str, act0=ACT0, t_end=0.25, **kw):
    sys = pfaff.load(CARTS)
    actuation = Actuation(sys.actuators, sys.mechanism)
    tau = actuation.tau(CTRL)  # the held part; sets the elements' ctrl
    opt = SimOptions(dt=1e-3, engine=engine, **kw)
    forces = [*sys.forces, *actuation.elements]
    return simulate(sys.cset, sys.q0, sys.v0, t_end, opt, tau=tau, forces=forces, act0=act0)


def test_act_follows_its_closed_form(engine):
    traj = _run(engine)
    a = traj.arrays()
    assert traj.na == 4 and a["act"].shape == (len(a["t"]), 4) and len(a["t"]) == 251
    assert np.abs(a["act"] - _closed(a["t"])).max() < 1e-9
    # the witness sees another start: the default zeros
    zeros = _run(engine, act0=None).arrays()["act"]
    assert np.abs(zeros - _closed(a["t"], np.zeros(4))).max() < 1e-9
    assert np.abs(zeros - a["act"]).max() > 0.05


def test_act_is_the_same_on_both_engines_and_with_a_stride():
    ref = _run("numpy").arrays()
    fast = _run("core").arrays()
    assert np.abs(ref["act"] - fast["act"]).max() < 1e-12
    assert np.abs(ref["q"] - fast["q"]).max() < 1e-9
    strided = _run("core", record_every=7).arrays()
    assert np.abs(strided["act"] - _closed(strided["t"])).max() < 1e-9


def test_the_simulator_records_act_as_sim_act():
    sys = pfaff.load(CARTS)
    sim = pfaff.Simulator(sys, dt=1e-3)
    sim.reset(act=ACT0)
    sim.step(ctrl=CTRL, n=120)
    mid = sim.act
    sim.step(ctrl=CTRL, n=80)
    a = sim.record().arrays()
    assert a["act"].shape == (201, 4)
    assert np.abs(a["act"] - _closed(a["t"])).max() < 1e-9
    assert np.abs(a["act"][120] - mid).max() < 1e-12
    assert np.abs(a["act"][-1] - sim.act).max() < 1e-12


def test_a_limited_run_records_act_from_its_act0():
    sys = pfaff.load(CARTS)
    actuation = Actuation(sys.actuators, sys.mechanism)
    tau = actuation.tau(CTRL)
    far = [JointLimit("x1", -10.0, 10.0)]  # a limit never met: the core's limited run
    run = simulate_limited(
        sys.cset, sys.q0, sys.v0, 0.2, far, SimOptions(dt=1e-3), forces=actuation.elements,
        tau=tau, act0=ACT0,
    )  # fmt: skip
    assert run.trajectory.engine == "core" and not run.events
    a = run.trajectory.arrays()
    assert np.abs(a["act"] - _closed(a["t"])).max() < 1e-9


def test_a_model_without_activations_records_width_zero(engine):
    sys = pfaff.load(MODELS / "five_bar.xml")
    traj = simulate(sys.cset, sys.q0, sys.v0, 0.05, SimOptions(dt=1e-3, engine=engine))
    a = traj.arrays()
    assert traj.na == 0 and a["act"].shape == (len(a["t"]), 0)
    with pytest.raises(ValueError, match=r"act0 has shape \(1,\), expected \(0,\)"):
        simulate(sys.cset, sys.q0, sys.v0, 0.05, SimOptions(dt=1e-3), act0=[0.0])


@pytest.mark.parametrize(
    ("act0", "message"),
    [
        (np.zeros(3), r"act0 has shape \(3,\), expected \(4,\): one activation per actuator"),
        ([0.0, np.nan, 0.0, 0.0], "act0 must be finite"),
        ([0.0, 0.0, 0.5, 0.0], r"act0 of actuator 'integrating' is 0.5, outside its actrange"),
        (np.zeros((4, 1)), r"act0 has shape \(4, 1\)"),
    ],
)
def test_a_wrong_act0_is_refused(engine, act0, message):
    with pytest.raises(ValueError, match=message):
        _run(engine, act0=act0)
