"""Actuators driven by ctrl: MuJoCo's actuator force against MuJoCo's own
``qfrc_actuator``, its split into force elements and a held torque against the whole
formula, and a stepped run against MuJoCo's RK4 on the same file and controls."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest

import pfaff
from pfaff.simulate.actuators import Actuation
from pfaff.simulate.forces import ForceSet
from tests.where import MODELS

ARM = MODELS / "actuated_arm.xml"


def _states(n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield rng.uniform(-1.5, 1.5, 2), rng.uniform(-3, 3, 2), rng.uniform(-2, 2, 6)


def test_actuator_force_is_mujocos():
    sys = pfaff.load(ARM)
    act = Actuation(sys.actuators, sys.mechanism)
    m = mujoco.MjModel.from_xml_path(str(ARM))
    d = mujoco.MjData(m)
    for qpos, qvel, u in _states(30):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, u
        mujoco.mj_forward(m, d)
        q = sys.qpos_to_q(qpos)
        tau = act.torque(q, sys.qvel_to_v(q, qvel), u)
        assert np.max(np.abs(tau - d.qfrc_actuator)) < 1e-12  # N m
    # the witness catches a wrong model: the servo's gear dropped
    wrong = Actuation(
        [dataclasses.replace(sys.actuators[0], gear=1.0)],
        sys.mechanism,
    )
    d.ctrl[:] = [0.5, 0, 0, 0, 0, 0]
    mujoco.mj_forward(m, d)
    q = sys.qpos_to_q(d.qpos)
    assert abs(wrong.torque(q, sys.qvel_to_v(q, d.qvel), [0.5])[0] - d.qfrc_actuator[0]) > 0.1


def test_elements_plus_held_torque_are_the_whole_force():
    sys = pfaff.load(ARM)
    act = Actuation(sys.actuators, sys.mechanism)
    fs = ForceSet(sys.mechanism, act.elements)
    for qpos, qvel, u in _states(20, 1):
        q = sys.qpos_to_q(qpos)
        v = sys.qvel_to_v(q, qvel)
        held = act.tau(u)  # sets the ActuatorForce elements' ctrl too
        Q = fs.evaluate(0.0, sys.mechanism.compute(q, v, (), extras=False))[0]
        np.testing.assert_allclose(Q + held, act.torque(q, v, u), atol=1e-12)


@pytest.mark.parametrize("engine", ["core", "numpy"])
def test_simulator_with_ctrl_follows_mujoco_rk4(engine):
    sys = pfaff.load(ARM)
    keep = [(a.forcerange is None and not any(a.gain_terms)) or engine == "numpy"
            for a in sys.actuators]  # fmt: skip
    sys.actuators = [a for a, k in zip(sys.actuators, keep) if k]  # the core: no clamp
    dt, steps = 1e-3, 400
    sim = pfaff.Simulator(sys, dt=dt, engine=engine)
    m = mujoco.MjModel.from_xml_path(str(ARM))
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = dt
    d = mujoco.MjData(m)
    d.qpos[:] = sys.q_to_qpos(sys.q0)
    rng = np.random.default_rng(2)
    worst = 0.0
    for k in range(steps):
        u = rng.uniform(-1.5, 1.5, 6) if k % 50 == 0 else u  # noqa: F821 - set at k = 0
        d.ctrl[:] = np.where(keep, u, 0.0)  # a left-out actuator at ctrl 0 applies nothing
        mujoco.mj_step(m, d)
        sim.step(ctrl=u[keep])
        worst = max(worst, float(np.max(np.abs(sim.q - sys.qpos_to_q(d.qpos)))))
    assert worst < 1e-9, worst  # rad: the same RK4 on the same forces
    assert sys.nu == sum(keep) and "servo" in sys.actuators[0].name


def test_ctrl_is_checked():
    sys = pfaff.load(ARM)
    sim = pfaff.Simulator(sys, dt=1e-3)
    with pytest.raises(ValueError, match=r"ctrl has shape \(3,\), expected \(6,\)"):
        sim.step(ctrl=np.zeros(3))
    with pytest.raises(ValueError, match="non-finite"):
        sim.step(ctrl=[0, np.nan, 0, 0, 0, 0])
    plain = pfaff.Simulator(pfaff.load(MODELS / "five_bar.xml"), dt=1e-3)
    with pytest.raises(ValueError, match="has none"):
        plain.step(ctrl=[1.0])
