"""pfaff.gym: Gymnasium's own checker on the environment, a random-action episode that
stays on the constraint manifold (Phi evaluated by the NumPy constraints at each
observation: a second implementation), seeding, the registered task."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="the optional extra: pip install pfaff[gym]")

import pfaff  # noqa: E402
import pfaff.gym  # noqa: E402
from pfaff import core  # noqa: E402
from pfaff.api.examples import five_bar  # noqa: E402
from tests.where import MODELS, REPO  # noqa: E402

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def _phi(system, obs):
    phi, _ = system.cset.holonomic_terms_at(obs[: system.nq])
    return float(np.max(np.abs(phi), initial=0.0))


def test_check_env_passes():
    from gymnasium.utils.env_checker import check_env

    env = pfaff.gym.ConstrainedEnv(five_bar())
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a checker warning fails the test
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("path", [MODELS / "five_bar.xml", REPO / "examples" / "quadruped.xml"])
def test_random_episode_of_1000_steps_stays_on_the_manifold(path):
    sys = pfaff.load(path)
    env = pfaff.gym.ConstrainedEnv(sys, frame_skip=1, max_steps=1000)
    obs, info = env.reset(seed=3)
    env.action_space.seed(3)
    worst, steps, truncated, terminated = _phi(sys, obs), 0, False, False
    while not (truncated or terminated):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        worst = max(worst, _phi(sys, obs), info["constraint_violation"])
        steps += 1
        assert np.isfinite(reward) and reward <= 0.0
    assert steps == 1000 and truncated and not terminated
    assert worst <= 1e-10
    assert info["t"] == pytest.approx(1.0, abs=1e-9)
    # the witness can fail: a state off the manifold shows
    off = obs.copy()
    off[: sys.nq] = sys.integrate(obs[: sys.nq], 1e-3 * np.arange(1.0, sys.nv + 1))
    assert _phi(sys, off) > 1e-10


def test_actions_spaces_and_default_reward():
    sys = five_bar()
    env = pfaff.gym.ConstrainedEnv(sys, actuated=("left", "right"), max_torque=[2.0, 3.0])
    assert env.action_space.shape == (2,) and env.observation_space.shape == (8,)
    np.testing.assert_array_equal(env.action_space.high, [2.0, 3.0])
    env.reset(seed=0)
    env.step(np.array([10.0, -10.0]))  # clipped to the bounds
    np.testing.assert_array_equal(env.sim.last.tau, [2.0, 0.0, -3.0, 0.0])
    # the default reward: 0 at rest at the start, the closed form elsewhere
    z = np.zeros(sys.nv)
    assert pfaff.gym.default_reward(sys, sys.q0, z, np.zeros(2)) == 0.0
    v = np.array([1.0, 0.0, 0.0, 0.0])
    r = pfaff.gym.default_reward(sys, sys.q0, v, np.array([1.0, 2.0]))
    assert r == pytest.approx(-(0.1 + 1e-3 * 5.0), abs=1e-15)


def test_seeding_repeats_an_episode():
    env = pfaff.gym.ConstrainedEnv(five_bar())
    runs = []
    for _ in range(2):
        obs, _ = env.reset(seed=7)
        env.action_space.seed(7)
        traj = [obs]
        for _ in range(20):
            traj.append(env.step(env.action_space.sample())[0])
        runs.append(np.array(traj))
    np.testing.assert_array_equal(runs[0], runs[1])
    other, _ = env.reset(seed=8)
    assert np.abs(other - runs[0][0]).max() > 1e-6


def test_registered_task_terminates_far_from_the_start():
    env = gymnasium.make("pfaff/FiveBar-v0")
    obs, _ = env.reset(seed=0)
    assert env.action_space.shape == (2,) and float(env.action_space.high[0]) == 5.0
    done, n = False, 0
    while not done and n < 1000:  # full torque one way: the loop swings away
        _, _, terminated, truncated, _ = env.step(np.array([5.0, 5.0]))
        done, n = terminated or truncated, n + 1
    assert terminated and n < 1000
    env.close()


def test_bad_arguments_are_refused():
    sys = five_bar()
    with pytest.raises(ValueError, match=r"actuated: \['nope'\] .* valid: left, left_distal"):
        pfaff.gym.ConstrainedEnv(sys, actuated=["nope"])
    with pytest.raises(ValueError, match="max_torque must be finite and > 0"):
        pfaff.gym.ConstrainedEnv(sys, max_torque=0.0)
    with pytest.raises(ValueError, match="frame_skip must be an integer >= 1"):
        pfaff.gym.ConstrainedEnv(sys, frame_skip=0)
    env = pfaff.gym.ConstrainedEnv(sys)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be finite of shape \(4,\)"):
        env.step(np.zeros(3))
    with pytest.raises(ValueError, match="action must be finite"):
        env.step(np.array([np.nan, 0, 0, 0]))


def test_ctrl_actions_drive_an_mjcfs_actuators():
    """An MJCF with actuators: the action is their ctrl within each ctrlrange; the same
    action sequence gives the same run as a Simulator stepped with that ctrl."""
    from gymnasium.utils.env_checker import check_env

    sys = pfaff.load(MODELS / "actuated_arm.xml")
    sys.actuators = [a for a in sys.actuators if a.forcerange is None and not any(a.gain_terms)]
    env = pfaff.gym.ConstrainedEnv(sys, init_noise=0.0)
    assert env.ctrl and env.action_space.shape == (sys.nu,)
    assert env.action_space.low[0] == -1.0 and env.action_space.high[0] == 1.0  # servo
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    env.reset(seed=0)
    sim = pfaff.Simulator(sys, dt=1e-3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        u = rng.uniform(-2.0, 2.0, sys.nu)
        obs, *_ = env.step(u)
        sim.step(ctrl=np.clip(u, env.action_space.low, env.action_space.high), n=10)
    np.testing.assert_allclose(obs[: sys.nq], sim.q, atol=1e-12)
    with pytest.raises(ValueError, match="action='ctrl' needs actuators"):
        pfaff.gym.ConstrainedEnv(five_bar(), action="ctrl")
