"""A fixed tendon's limit (:class:`pfaff.simulate.limits.TendonLimit`, a joint limit
generalised to ``lower <= sum_j c_j q_j <= upper``): on a two-joint arm the run's tendon
length never past its bound by more than the tolerance, the impacts against the closed
form of Newton's law in the metric of M (e = 0, 0.5), the energy kept with e = 1, the
core's run against the NumPy reference's, the limit read from an MJCF, and the
refusals."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from both_engines import ENGINES, assert_limited_runs_agree

import pfaff
from pfaff import core
from pfaff.mechanism.base import ModelError
from pfaff.simulate import SimOptions
from pfaff.simulate.limit_bounds import Bound
from pfaff.simulate.limits import TendonLimit, simulate_limited

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

ARM = """
<mujoco>
  <compiler angle="radian"/>
  <option gravity="0 -9.81 0"><flag contact="disable"/></option>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 0 1" ref="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.8"/>
      <body name="b" pos="0.4 0 0">
        <joint name="j2" type="hinge" axis="0 0 1" ref="-0.1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="reach" limited="true" range="-0.4 0.5" solreflimit="0.02 {zeta}">
      <joint joint="j1" coef="1"/><joint joint="j2" coef="0.5"/>
    </fixed>
  </tendon>
</mujoco>
"""
C = np.array([1.0, 0.5])


def _arm(tmp_path, zeta: float = 1.0):
    path = tmp_path / "arm.xml"
    path.write_text(ARM.replace("{zeta}", f"{zeta:g}"))
    return pfaff.load(path)


def _limit(e: float, lower=-0.6, upper=0.25) -> TendonLimit:
    return TendonLimit("reach", ("j1", "j2"), (1.0, 0.5), lower, upper, e)


def _run(system, lim, engine: str, t_end: float = 0.6, v0=(2.0, 1.0)):
    opt = SimOptions(dt=1e-3, engine=engine, progress=False)
    q0 = np.zeros(2)
    return simulate_limited(system.cset, q0, np.array(v0), t_end, [lim], opt)


def _inverse_mass(system, run, event) -> float:
    """``r M^-1 r`` (r = c, the tendon's row) at the event's state: Newton's law in the
    metric of M gives ``v+ = v- - (1 + e) (r . v-) M^-1 r / (r M^-1 r)``, so ``r . v+ =
    -e r . v-`` and the kinetic energy lost is ``(1 - e^2) (r . v-)^2 / (2 r M^-1 r)``."""
    a = run.trajectory.arrays()
    k = int(np.flatnonzero(np.abs(a["t"] - event.t) <= 1e-12)[0])
    M = system.mechanism.compute(a["q"][k], a["v"][k]).M
    return float(C @ np.linalg.solve(M, C))


@pytest.mark.parametrize("engine", ["core", "numpy"])
@pytest.mark.parametrize("e", [0.0, 0.5])
def test_impacts_follow_newtons_law_in_the_metric_of_M(tmp_path, engine, e):
    """The arm swings into the tendon's upper bound: the first impact names the tendon,
    its rate after is -e times before (1e-9 rad/s) and the kinetic energy lost the closed
    form's (1e-9 J); the length never passes the bound by more than position_tol."""
    system = _arm(tmp_path)
    run = _run(system, _limit(e), engine)
    assert run.trajectory.engine == engine
    first = run.events[0]
    assert (first.joint, first.kind, first.side) == ("reach", "impact", "upper")
    v_pre, w = first.v_pre, _inverse_mass(system, run, first)
    assert v_pre > 0.5
    assert abs(first.v_post + e * v_pre) <= 1e-9
    assert abs(first.energy_lost - 0.5 * (1 - e**2) * v_pre**2 / w) <= 1e-9
    L = run.trajectory.arrays()["q"] @ C
    assert L.max() <= 0.25 + SimOptions().position_tol
    if e == 0.0:  # plastic: held at the bound until it pulls
        assert run.held == {0: "upper"} or any(x.kind == "release" for x in run.events)


def test_an_elastic_tendon_stop_keeps_the_energy(tmp_path):
    """e = 1 on both bounds: the arm rebounds between them; energy + impact_loss stays at
    its start to 1e-6 J over 1 s and every impact's loss is below 1e-9 J."""
    system = _arm(tmp_path)
    run = _run(system, _limit(1.0, -0.3, 0.2), "core", 1.0, (3.0, -1.0))
    impacts = [x for x in run.events if x.kind == "impact"]
    assert len(impacts) >= 3 and {x.side for x in impacts} == {"lower", "upper"}
    assert max(abs(x.energy_lost) for x in impacts) <= 1e-9
    E = run.trajectory.arrays()["energy"] + run.impact_loss
    assert np.abs(E - E[0]).max() <= 1e-6


def test_the_cores_tendon_limit_run_is_the_numpy_reference(tmp_path):
    """The core's run (events in C++) and the NumPy phase loop: the same events, their
    times to 1e-9 s, q, v and lambda to 1e-8."""
    system = _arm(tmp_path)
    lim = _limit(0.5, -0.3, 0.2)
    a, b = (_run(system, lim, eng, 0.8, (3.0, -1.0)) for eng in ENGINES)
    assert_limited_runs_agree(a, b, 1e-9, 1e-8, 3)


def test_a_joint_limit_in_place_of_the_tendons_is_caught(tmp_path):
    """The deliberate wrong input: the bound on j1 alone (coefficient 0.5 of j2 dropped)
    gives other events than the tendon's (the comparison above would fail)."""
    system = _arm(tmp_path)
    right = _run(system, _limit(0.5, -0.3, 0.2), "core")
    wrong = _run(system, TendonLimit("reach", ("j1",), (1.0,), -0.3, 0.2, 0.5), "core")
    assert abs(right.events[0].t - wrong.events[0].t) > 1e-3


def test_the_mjcf_tendon_limit_is_read(tmp_path):
    """The file's range (minus the joints' ref offset, sum c_j ref_j = 0.15) and solref
    (dampratio 0.3: e = exp(-pi 0.3 / sqrt(0.91))) become the System's TendonLimit; the
    length MuJoCo computes (ten_length) minus the offset is pfaff's c . q."""
    system = _arm(tmp_path, 0.3)
    (lim,) = system.limits
    assert isinstance(lim, TendonLimit) and lim.joint == "reach"
    assert abs(lim.lower - (-0.4 - 0.15)) <= 1e-12 and abs(lim.upper - (0.5 - 0.15)) <= 1e-12
    assert abs(lim.restitution - np.exp(-np.pi * 0.3 / np.sqrt(0.91))) <= 1e-12
    assert not any("reach" in w for w in system.warnings), system.warnings
    m = mujoco.MjModel.from_xml_string(ARM.replace("{zeta}", "0.3"))
    d = mujoco.MjData(m)
    q = np.array([0.3, -0.2])
    d.qpos[:] = system.q_to_qpos(q)
    mujoco.mj_forward(m, d)
    assert abs(d.ten_length[0] - 0.15 - C @ q) <= 1e-12


@pytest.mark.parametrize(
    "args, words",
    [
        ((("j1", "j2"), (1.0,), -1.0, 1.0), "one coefficient per joint"),
        ((("j1", "j2"), (0.0, 0.0), -1.0, 1.0), "not all 0"),
        ((("j1", "j2"), (1.0, 0.5), 1.0, -1.0), "must be < upper"),
    ],
)
def test_tendon_limit_refuses_bad_parameters(args, words):
    with pytest.raises(ValueError, match=words):
        TendonLimit("t", *args)


def test_the_core_refuses_a_bad_tendon_limit(tmp_path):
    """pfaff._core.add_limit: a tendon coordinate that is not a one-dof joint's, and
    coefficients all 0, are refused naming the problem."""
    system = _arm(tmp_path)
    sys_ = core.build(system.cset)
    with pytest.raises(ValueError, match="iqs, ivs, coefs: one q index"):
        core.add_limit(sys_, -1, -1, -1.0, 1.0, 0.0, 0.0, [0, 1], [0], [1.0, 0.5])
    with pytest.raises(ValueError, match="iqs\\[j\\] = 5 is out of range"):
        core.add_limit(sys_, -1, -1, -1.0, 1.0, 0.0, 0.0, [0, 5], [0, 1], [1.0, 0.5])
    with pytest.raises(ValueError, match="coefs are all 0"):
        core.add_limit(sys_, -1, -1, -1.0, 1.0, 0.0, 0.0, [0, 1], [0, 1], [0.0, 0.0])
    core.add_limit(sys_, -1, -1, -1.0, 1.0, 0.0, 0.0, [0, 1], [0, 1], [1.0, 0.5])  # valid


def test_a_start_outside_the_tendon_limit_is_refused(tmp_path):
    """A start past the tendon's bound is refused naming the tendon; a tendon limit on a
    joint the mechanism lacks names the joint."""
    system = _arm(tmp_path)
    opt = SimOptions(dt=1e-3, progress=False)
    with pytest.raises(ValueError, match="outside the limit of tendon 'reach'"):
        simulate_limited(system.cset, np.array([0.3, 0.0]), np.zeros(2), 0.01, [_limit(0.0)],
                         opt)  # fmt: skip
    with pytest.raises(ModelError, match="nope"):
        Bound(TendonLimit("t", ("nope",), (1.0,), -1.0, 1.0), system.mechanism)


def test_a_simulator_on_a_file_with_a_tendon_spring_and_limit(tmp_path):
    """A file's tendon with a spring, a damper and a limit: the Simulator (the core's
    limited run, stepped in pieces) and one simulate_limited run on the fixed grid give the
    same events, named by the tendon, their times to 1e-9 s, and q to 1e-9."""
    xml = ARM.replace("{zeta}", "0.3").replace(
        '<fixed name="reach"', '<fixed name="reach" stiffness="2" damping="0.1"'
    )
    xml = xml.replace(
        "</mujoco>", '<keyframe><key qpos="0.2 -0.1" qvel="3 1"/></keyframe></mujoco>'
    )
    path = tmp_path / "arm.xml"
    path.write_text(xml)
    system = pfaff.load(path)
    assert [type(f).__name__ for f in system.forces] == ["TendonSpring"] and not system.warnings
    sim = pfaff.Simulator(system, dt=1e-3)
    for n in (120, 260, 120):
        sim.step(n=n)
    opt = SimOptions(dt=1e-3, progress=False)
    run = simulate_limited(system.cset, system.q0, system.v0, 0.5, system.limits, opt,
                           forces=system.forces, grid="fixed")  # fmt: skip
    got = [(x.joint, x.kind, x.side) for x in sim.events]
    assert got == [(x.joint, x.kind, x.side) for x in run.events] and got
    assert got[0][0] == "reach"
    assert max(abs(x.t - y.t) for x, y in zip(sim.events, run.events)) <= 1e-9
    a, b = sim.record().arrays(), run.trajectory.arrays()
    assert np.abs(a["q"] - b["q"]).max() <= 1e-9


@pytest.mark.parametrize("engine", ["core", "numpy"])
def test_a_one_joint_tendon_limit_is_the_joint_limit(tmp_path, engine):
    """A tendon of one joint with coefficient 1 is that joint's limit: the same events
    and the same run as JointLimit's to round-off (1e-12), on both engines."""
    from pfaff.simulate.limits import JointLimit

    system = _arm(tmp_path)
    tendon = _run(system, TendonLimit("j1", ("j1",), (1.0,), -0.3, 0.2, 0.5), engine, 0.8)
    joint = _run(system, JointLimit("j1", -0.3, 0.2, 0.5), engine, 0.8)
    got = [(x.joint, x.kind, x.side) for x in tendon.events]
    assert got == [(x.joint, x.kind, x.side) for x in joint.events] and len(got) >= 2
    assert max(abs(x.t - y.t) for x, y in zip(tendon.events, joint.events)) <= 1e-12
    a, b = tendon.trajectory.arrays(), joint.trajectory.arrays()
    assert a["q"].shape == b["q"].shape
    assert np.abs(a["q"] - b["q"]).max() <= 1e-12 and np.abs(a["v"] - b["v"]).max() <= 1e-12
