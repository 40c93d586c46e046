"""Ball and free joints' springs and dampers, and MuJoCo's affine actuators with force
ranges and affine gains, on the compiled core: the NumPy elements against MuJoCo's own
``qfrc_passive`` and ``qfrc_actuator`` (the witness of the equations), the core's Q, V
and power against the NumPy elements at many states, and whole runs of the two
engines."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from both_engines import assert_force_terms_agree, assert_series_agree, simulate_both

import pfaff
from pfaff import core
from pfaff.mechanism.base import ModelError
from pfaff.simulate import BallSpring, DofDamper, SimOptions
from pfaff.simulate.actuators import Actuation, ActuatorForce
from pfaff.simulate.core_engine import build, set_ctrl
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.forces_ball import quat_rotation, sub_quat

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

BALLS = """
<mujoco>
  <option gravity="0 0 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="base" pos="0 0 1">
      <freejoint name="root"/>
      <joint name="unused" type="slide" axis="0 0 1" stiffness="0" damping="0"/>
      <geom type="box" size="0.1 0.2 0.05" mass="2"/>
      <body name="arm" pos="0.1 0 0">
        <joint name="ball" type="ball" stiffness="3.5" damping="0.2"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.4"/>
        <body name="hand" pos="0.3 0 0">
          <joint name="wrist" type="hinge" axis="0 1 0" stiffness="1" damping="0.1"/>
          <geom type="sphere" size="0.03" mass="0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _balls(tmp_path, stiffness_free: float = 5.0):
    xml = BALLS.replace(
        '<joint name="unused" type="slide" axis="0 0 1" stiffness="0" damping="0"/>', ""
    )
    xml = xml.replace('<freejoint name="root"/>',
                      f'<joint name="root" type="free" stiffness="{stiffness_free}" '
                      'damping="0.3"/>')  # fmt: skip
    path = tmp_path / "balls.xml"
    path.write_text(xml)
    return path


def _random_state(sys_, rng):
    """A random (qpos, qvel) in MuJoCo's coordinates and pfaff's (q, v) of it."""
    m = sys_.model.coords
    qpos = np.zeros(m.nq_mj)
    qpos[:3] = rng.normal(0, 0.5, 3)
    for a in (3, 7):  # the free joint's and the ball's quaternions
        quat = rng.normal(size=4)
        qpos[a : a + 4] = quat / np.linalg.norm(quat)
    qpos[11] = rng.uniform(-2, 2)
    qvel = rng.normal(0, 2, m.nv_mj)
    q = sys_.qpos_to_q(qpos)
    return qpos, qvel, q, sys_.qvel_to_v(q, qvel)


def test_ball_and_free_springs_and_dampers_equal_mujocos_qfrc_passive(tmp_path):
    """MuJoCo's qfrc_passive (spring + damper) equals pfaff's elements' Q at 30 random
    states, the free joint's translation mapped to the body frame (R^T); 1e-10 N or
    N m. A spring about the wrong reference (the deliberate wrong input) is seen."""
    path = _balls(tmp_path)
    sys_ = pfaff.load(path)
    kinds = sorted(type(e).__name__ for e in sys_.forces)
    assert kinds == ["BallSpring", "BallSpring", "DofDamper", "DofDamper", "JointDamper",
                     "JointSpring"]  # fmt: skip
    assert not any("ball" in w for w in sys_.warnings), sys_.warnings
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mech = sys_.mechanism
    fset = ForceSet(mech, list(sys_.forces))
    rng = np.random.default_rng(3)
    for _ in range(30):
        qpos, qvel, q, v = _random_state(sys_, rng)
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        Q, _ = fset.evaluate(0.0, mech.compute(q, v))
        mj = d.qfrc_passive.copy()
        R = quat_rotation(q[3:7])
        mj[:3] = R.T @ mj[:3]  # world force -> Pinocchio's body-frame translation
        assert np.abs(Q - mj).max() <= 1e-10, (Q, mj)
    wrong = BallSpring("ball", 3.5, (0.0, 0.0, np.sin(0.01), np.cos(0.01)))
    wrong.bind(mech)
    right = next(e for e in sys_.forces if isinstance(e, BallSpring) and e.joint == "ball")
    snap = mech.compute(q, v)
    assert np.abs(wrong.force(0.0, snap) - right.force(0.0, snap)).max() > 1e-3


def test_sub_quat_is_mujocos():
    """sub_quat against mujoco.mju_subQuat at 50 random pairs (1e-12 rad), including
    rotations beyond pi (the angle wrapped)."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        a, b = rng.normal(size=4), rng.normal(size=4)
        a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
        res = np.zeros(3)
        mujoco.mju_subQuat(res, a, b)  # MuJoCo's order (w, x, y, z)
        ours = sub_quat(np.r_[a[1:], a[0]], np.r_[b[1:], b[0]])
        assert np.abs(ours - res).max() <= 1e-12


def test_core_ball_terms_agree_with_numpy_and_runs_agree(tmp_path):
    """The core's Q [N, N m], V [J], power [W] equal the NumPy elements' at 40 states
    (1e-12 relative); 0.3 s of the two engines agree to 1e-9 on q, v and energy."""
    sys_ = pfaff.load(_balls(tmp_path))
    mech, cs = sys_.mechanism, sys_.cset
    els = list(sys_.forces)
    rng = np.random.default_rng(5)
    states = (_random_state(sys_, rng)[2:] for _ in range(40))
    assert_force_terms_agree(mech, cs, els, states, 1e-12)
    q0, v0 = sys_.q0, np.linspace(-1, 1, sys_.nv)
    a, b = simulate_both(cs, q0, v0, 0.3, SimOptions(dt=1e-3), forces=els)
    assert_series_agree(a, b, ("q", "v", "energy", "force_work", "force_potential"), 1e-9)


def test_dof_damper_refuses_a_wrong_count():
    with pytest.raises(ModelError, match="3 \\(ball\\) or 6 \\(free\\)"):
        DofDamper("ball", [0.1, 0.2])


ACTUATED = """
<mujoco>
  <option><flag contact="disable"/></option>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
      <body name="b" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 0 1" ref="10"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.4"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t"><joint joint="j1" coef="1"/><joint joint="j2" coef="-0.5"/></fixed>
  </tendon>
  <actuator>
    <general name="clamped" tendon="t" gear="2" gaintype="fixed" gainprm="3"
             biastype="affine" biasprm="0.1 -4 -0.3" ctrlrange="-1 1" forcerange="-2 2.5"/>
    <general name="affine_gain" joint="j2" gaintype="affine" gainprm="1 0.5 -0.2"
             biastype="affine" biasprm="0 -1 -0.1" ctrlrange="-2 2"/>
    <position name="servo" joint="j1" kp="5" kv="0.4" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
"""


def test_actuators_with_force_ranges_and_affine_gains_run_on_the_core(tmp_path):
    """A tendon actuator with a force range and an affine-gain actuator: the Simulator
    runs on the core (no warning); at 40 random states and controls the core's Q and
    the NumPy elements' equal MuJoCo's qfrc_actuator (1e-10 N m), the clamp active at
    some; a Simulator's steps with changing ctrl equal the NumPy engine's (1e-10)."""
    path = tmp_path / "actuated.xml"
    path.write_text(ACTUATED)
    sys_ = pfaff.load(path)
    sim = pfaff.Simulator(sys_, dt=1e-3)
    assert sim.engine == "core" and not sim.warnings
    act = Actuation(sys_.actuators, sys_.mechanism)
    assert sum(isinstance(e, ActuatorForce) for e in act.elements) == 2
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mech = sys_.mechanism
    fset = ForceSet(mech, act.elements)  # binds them
    system = build(sys_.cset, act.elements)
    rng = np.random.default_rng(11)
    clamped = 0
    for _ in range(40):
        q, v, u = rng.uniform(-2, 2, 2), rng.normal(0, 3, 2), rng.uniform(-3, 3, 3)
        d.qpos[:], d.qvel[:], d.ctrl[:] = sys_.q_to_qpos(q), v, u
        mujoco.mj_forward(m, d)
        tau = act.tau(u)
        Q_np = fset.evaluate(0.0, mech.compute(q, v))[0] + tau
        set_ctrl(system, act.elements)
        Q_core = system.force_terms(q, v)[0] + tau
        assert np.abs(Q_np - d.qfrc_actuator).max() <= 1e-10
        assert np.abs(Q_core - d.qfrc_actuator).max() <= 1e-10
        clamped += abs(d.actuator_force[0]) in (2.0, 2.5)
    assert clamped >= 3
    sims = [pfaff.Simulator(sys_, dt=1e-3, engine=e) for e in ("core", "numpy")]
    for k in range(30):
        u = np.array([np.sin(0.3 * k), np.cos(0.2 * k) * 2, 0.5])
        for s in sims:
            s.step(ctrl=u, n=2)
    assert sims[0].engine == "core" and sims[1].engine == "numpy"
    assert np.abs(sims[0].q - sims[1].q).max() <= 1e-10
    assert np.abs(sims[0].v - sims[1].v).max() <= 1e-10
    with pytest.raises(ValueError, match="ctrl"):
        sims[0]._sys.set_ctrl(np.array([np.nan, 0.0, 0.0]))
