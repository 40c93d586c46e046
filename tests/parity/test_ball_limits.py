"""A ball joint's limit (:class:`pfaff.simulate.limits.BallLimit`: the rotation angle
``theta = 2 atan2(|xyz|, |w|)`` at most ``angle``, MuJoCo's ball limit), on the core and
in the NumPy reference: the angle and its row against MuJoCo's angle and finite
differences, the impacts against the closed form of Newton's law in the metric of M
(e = 0, 0.5), the energy kept with e = 1, the core's run against the NumPy phase loop,
a file's ball limit through the Simulator, and the refusals."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from both_engines import ENGINES, assert_limited_runs_agree

import pfaff
from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.constraints.ball_angle import BallAngle, ball_angle
from pfaff.constraints.base import check_derivatives
from pfaff.mechanism.base import ModelError
from pfaff.simulate import SimOptions
from pfaff.simulate.limit_bounds import Bound
from pfaff.simulate.limits import BallLimit, simulate_limited
from tests.parity.test_lowerings import _balls

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

PENDULUM = """
<mujoco>
  <option gravity="0 0 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="rod">
      <joint name="ball" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 -0.5" size="0.02" mass="0.7"/>
    </body>
  </worldbody>
</mujoco>
"""
ANGLE = 0.6


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    path = tmp_path_factory.mktemp("ball") / "pendulum.xml"
    path.write_text(PENDULUM)
    return pfaff.load(path)


def _start():
    """Tilted 0.3 rad about x, turning away from the vertical and sideways."""
    q0 = np.array([np.sin(0.15), 0.0, 0.0, np.cos(0.15)])
    return q0, np.array([2.5, 0.8, 0.3])


def _run(system, e: float, engine: str, t_end: float = 0.5):
    opt = SimOptions(dt=1e-3, engine=engine, progress=False)
    q0, v0 = _start()
    return simulate_limited(system.cset, q0, v0, t_end, [BallLimit("ball", ANGLE, e)], opt)


def test_the_angle_is_mujocos_and_its_row_and_drift_are_its_derivatives():
    """At 30 random states of a ball joint (on a free body): the angle equals MuJoCo's
    (the norm of mju_quat2Vel, 1e-12 rad), w < 0 among them; the row u and the drift
    |omega_perp|^2 / (2 tan(theta/2)) equal central differences (1e-7). The angle
    without the fold (2 atan2(|xyz|, w)) misses MuJoCo's where w < 0."""
    mech = _balls()
    rng = np.random.default_rng(1)
    negative, unfolded = 0, 0.0
    for _ in range(30):
        q = mech.integrate(mech.neutral(), rng.uniform(-2.0, 2.0, mech.nv))
        if rng.uniform() < 0.5:
            q[7:11] *= -1.0  # the same rotation
        quat = q[7:11]
        res = np.zeros(3)
        mujoco.mju_quat2Vel(res, np.r_[quat[3], quat[:3]], 1.0)
        assert abs(ball_angle(quat)[0] - np.linalg.norm(res)) <= 1e-12
        negative += quat[3] < 0
        raw = 2 * np.arctan2(np.linalg.norm(quat[:3]), quat[3])
        unfolded = max(unfolded, abs(raw - np.linalg.norm(res)))
        errs = check_derivatives(ConstraintSet(mech, [BallAngle("ball", 1.0)]), q,
                                 rng.normal(size=mech.nv))  # fmt: skip
        assert errs["jacobian"] <= 1e-7 and errs["drift"] <= 1e-7, errs
    assert negative >= 5 and unfolded > 1.0


@pytest.mark.parametrize("engine", ["core", "numpy"])
@pytest.mark.parametrize("e", [0.0, 0.5])
def test_ball_impacts_follow_newtons_law_in_the_metric_of_M(pendulum, engine, e):
    """The rod swings into its cone: the first impact names the joint, the angle's rate
    after is -e times before (1e-9 rad/s), the kinetic energy lost (1 - e^2) (u.w)^2 /
    (2 u M^-1 u) (1e-9 J); the angle never passes the bound by more than position_tol."""
    run = _run(pendulum, e, engine)
    first = run.events[0]
    assert (first.joint, first.kind, first.side) == ("ball", "impact", "upper")
    a = run.trajectory.arrays()
    k = int(np.flatnonzero(np.abs(a["t"] - first.t) <= 1e-12)[0])
    M = pendulum.mechanism.compute(a["q"][k], a["v"][k]).M
    u = ball_angle(a["q"][k])[1]
    assert abs(ball_angle(a["q"][k])[0] - ANGLE) <= 1e-9
    assert first.v_pre > 0.5 and abs(first.v_post + e * first.v_pre) <= 1e-9
    loss = 0.5 * (1 - e**2) * first.v_pre**2 / float(u @ np.linalg.solve(M, u))
    assert abs(first.energy_lost - loss) <= 1e-9
    angles = np.array([ball_angle(q)[0] for q in a["q"]])
    assert angles.max() <= ANGLE + SimOptions().position_tol


def test_an_elastic_ball_stop_keeps_the_energy(pendulum):
    """e = 1: the rod rebounds off its cone; energy + impact_loss stays at its start to
    1e-6 J over 1 s and every impact's loss is below 1e-9 J."""
    run = _run(pendulum, 1.0, "core", 1.0)
    impacts = [x for x in run.events if x.kind == "impact"]
    assert len(impacts) >= 2
    assert max(abs(x.energy_lost) for x in impacts) <= 1e-9
    E = run.trajectory.arrays()["energy"] + run.impact_loss
    assert np.abs(E - E[0]).max() <= 1e-6


def test_the_cores_ball_limit_run_is_the_numpy_reference(pendulum):
    """e = 0.5 over 0.8 s: the core's limited run (its events in C++, the held row the
    kind BallAngle) and the NumPy phase loop give the same events, their times to 1e-9 s,
    q, v and lambda to 1e-8."""
    a, b = (_run(pendulum, 0.5, eng, 0.8) for eng in ENGINES)
    assert (a.trajectory.engine, b.trajectory.engine) == ENGINES
    assert_limited_runs_agree(a, b, 1e-9, 1e-8, 2)


def test_a_files_ball_limit_runs_in_the_simulator(tmp_path):
    """An MJCF ball joint's range (0, 0.6) and solref (dampratio 0.4) become a BallLimit
    (no warning); the Simulator's steps in pieces give simulate_limited's events on the
    fixed grid (named by the joint, times to 1e-9 s) and q to 1e-9."""
    xml = PENDULUM.replace('<joint name="ball" type="ball"/>',
                           '<joint name="ball" type="ball" range="0 0.6" limited="true" '
                           'solreflimit="0.02 0.4"/>')  # fmt: skip
    xml = xml.replace("<mujoco>", '<mujoco><compiler angle="radian"/>')
    q0, v0 = _start()
    qpos = " ".join(f"{x:.17g}" for x in (q0[3], *q0[:3]))
    xml = xml.replace("</mujoco>", f'<keyframe><key qpos="{qpos}" qvel="2.5 0.8 0.3"/>'
                                   "</keyframe></mujoco>")  # fmt: skip
    path = tmp_path / "limited_ball.xml"
    path.write_text(xml)
    system = pfaff.load(path)
    (lim,) = system.limits
    e = np.exp(-np.pi * 0.4 / np.sqrt(1 - 0.16))
    assert isinstance(lim, BallLimit) and lim.joint == "ball" and lim.upper == 0.6
    assert abs(lim.restitution - e) <= 1e-12 and not system.warnings
    sim = pfaff.Simulator(system, dt=1e-3)
    for n in (150, 200, 150):
        sim.step(n=n)
    opt = SimOptions(dt=1e-3, progress=False)
    run = simulate_limited(system.cset, system.q0, system.v0, 0.5, system.limits, opt,
                           grid="fixed")  # fmt: skip
    got = [(x.joint, x.kind, x.side) for x in sim.events]
    assert got == [(x.joint, x.kind, x.side) for x in run.events] and len(got) >= 2
    assert max(abs(x.t - y.t) for x, y in zip(sim.events, run.events)) <= 1e-9
    assert np.abs(sim.record().arrays()["q"] - run.trajectory.arrays()["q"]).max() <= 1e-9


def test_ball_limits_are_refused_where_they_cannot_run(pendulum):
    """A bad angle or restitution, a joint that is not a ball, and on the core a ball
    limit on a hinge's coordinates, an angle past pi or a lower bound are refused naming
    the problem."""
    with pytest.raises(ValueError, match="valid: \\(0, pi\\)"):
        BallLimit("ball", 3.5)
    with pytest.raises(ValueError, match="restitution"):
        BallLimit("ball", 0.5, 1.5)
    with pytest.raises(ModelError, match="not a ball joint"):
        Bound(BallLimit("root", 0.5), _balls())
    sys_ = core.build(pendulum.cset)
    inf = float("inf")
    with pytest.raises(ValueError, match="spec.value = 3.5.*valid: an angle in \\(0, pi\\)"):
        core.add_limit(sys_, 0, 0, -inf, 3.5, 0.0, 0.0, ball=True)
    with pytest.raises(ValueError, match="lower = -inf"):
        core.add_limit(sys_, 0, 0, -1.0, 0.5, 0.0, 0.0, ball=True)
    arm = core.build(ConstraintSet(_balls(), []))
    with pytest.raises(ValueError, match="not a ball joint's coordinates"):
        core.add_limit(arm, 0, 0, -inf, 0.5, 0.0, 0.0, ball=True)
    core.add_limit(sys_, 0, 0, -inf, 0.5, 0.0, 0.0, ball=True)  # valid
