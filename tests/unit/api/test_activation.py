"""Actuators with activation dynamics (MuJoCo's dyntype integrator, filter,
filterexact; actrange, actearly): the closed form of the activation against the ODE
integrated numerically, the force against MuJoCo's ``qfrc_actuator``, the compiled
core against the NumPy engine, runs against MuJoCo's RK4 on the same file and the
Jacobians in MuJoCo's convention against their closed form and ``mjd_transitionFD``."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import pfaff
from pfaff import core
from pfaff.api.ctrl_derivatives import ctrl_derivatives
from pfaff.mechanism.actuators import Actuator
from pfaff.simulate.actuators import Actuation, step_ahead
from pfaff.simulate.forces import ForceSet
from tests.where import MODELS

CARTS = MODELS / "activation_carts.xml"
pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def _one(dyntype, actrange=None, tau=0.05):
    return Actuator("a", ("x",), (1.0,), (0.0,), 1.0, 1.0, dyntype=dyntype,
                    timeconst=tau, actrange=actrange)  # fmt: skip


@pytest.mark.parametrize("dyntype", ["integrator", "filter", "filterexact"])
@pytest.mark.parametrize("actrange", [None, (-0.4, 0.6)])
def test_activation_is_the_odes_solution(dyntype, actrange):
    """The closed form against MuJoCo's rate integrated by solve_ivp (the limited ODE:
    the rate stopped at a bound it pushes out of), over 0.3 s from several starts."""
    a = _one(dyntype, actrange)
    ts = np.linspace(0.0, 0.3, 31)
    for act0, ctrl in [(0.0, 1.5), (0.5, -2.0), (-0.3, 0.2), (0.1, 0.1)]:

        def rate(t, y, ctrl=ctrl):
            r = a.act_dot(y[0], ctrl)
            if actrange is not None and (
                (y[0] >= actrange[1] and r > 0) or (y[0] <= actrange[0] and r < 0)
            ):
                return [0.0]
            return [r]

        ode = solve_ivp(rate, (0, 0.3), [act0], t_eval=ts, rtol=1e-11, atol=1e-13, max_step=1e-3)
        closed = [a.activation(act0, ctrl, t) for t in ts]
        assert np.max(np.abs(ode.y[0] - closed)) < 1e-6  # (activation units)
    # the witness catches a wrong time constant
    wrong = _one(dyntype, actrange, tau=0.06)
    if dyntype != "integrator":
        assert abs(wrong.activation(0.0, 1.5, 0.01) - a.activation(0.0, 1.5, 0.01)) > 1e-2


def test_bad_actuators_and_activations_are_refused():
    with pytest.raises(ValueError, match="dyntype 'muscle'"):
        _one("muscle")
    with pytest.raises(ValueError, match="time constant > 0"):
        _one("filter", tau=0.0)
    with pytest.raises(ValueError, match="lo <= hi"):
        _one("integrator", actrange=(1.0, -1.0))
    sys = pfaff.load(CARTS)
    sim = pfaff.Simulator(sys, dt=1e-3)
    with pytest.raises(ValueError, match=r"act has shape \(3,\), expected \(4,\)"):
        sim.reset(act=np.zeros(3))
    with pytest.raises(ValueError, match="outside its actrange"):
        sim.reset(act=[0.0, 0.0, 0.5, 0.0])  # 'integrating' is within -0.3 .. 0.3
    with pytest.raises(ValueError, match="non-finite"):
        sim.reset(act=[np.nan, 0, 0, 0])


def test_the_core_refuses_a_bad_activation_spec():
    sys = pfaff.load(CARTS)
    forces = Actuation(sys.actuators, sys.mechanism).elements
    from pfaff.simulate.core_engine import build

    proto = build(sys.cset, forces[:1])
    into = core.Build(proto, sys.mechanism)
    from pfaff import lowering

    spec = lowering.lower(forces[0], "force", into)
    for field, value, words in [
        ("dyn", 7, "0 none, 1 integrator"),
        ("tau_act", 0.0, "time constant"),
        ("alo", float("nan"), "activation range"),
    ]:
        bad = lowering.lower(forces[0], "force", into)
        setattr(bad, field, value)
        with pytest.raises(ValueError, match=words):
            proto.add_force(bad)
    proto.add_force(spec)  # the good one passes
    with pytest.raises(ValueError, match="set_act: 0 activations given"):
        proto.set_act(np.zeros(0), 0.0)


def test_mjcf_reads_the_activation_dynamics():
    sys = pfaff.load(CARTS)
    got = {a.name: (a.dyntype, a.timeconst, a.actrange, a.actearly) for a in sys.actuators}
    assert got == {
        "lag": ("filter", 0.05, None, False),
        "servo": ("filterexact", 0.03, None, False),
        "integrating": ("integrator", 1.0, (-0.3, 0.3), False),
        "early": ("filter", 0.02, (-0.5, 0.8), True),
    }
    assert not [w for w in sys.warnings if "actuator" in w]


def _mujoco(path=CARTS, dt=1e-3):
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = dt
    return m, mujoco.MjData(m)


def test_force_is_mujocos_at_the_activation():
    """The elements (at the step's start, their act0) plus the held torque against
    MuJoCo's qfrc_actuator at random (q, v, act, ctrl); actearly: MuJoCo's next
    activation is Euler's, pfaff's the exact one: they differ by O(dt^2)."""
    sys = pfaff.load(CARTS)
    dt = 1e-3
    act = Actuation(sys.actuators, sys.mechanism)
    step_ahead(act.elements, dt)  # as a run of step dt sets it
    fs = ForceSet(sys.mechanism, act.elements)
    m, d = _mujoco(dt=dt)
    rng = np.random.default_rng(0)
    for _ in range(20):
        d.qpos[:], d.qvel[:] = rng.uniform(-1, 1, 4), rng.uniform(-2, 2, 4)
        d.act[:], d.ctrl[:] = rng.uniform(-0.3, 0.3, 4), rng.uniform(-2, 2, 4)
        mujoco.mj_forward(m, d)
        q = sys.qpos_to_q(d.qpos)
        v = sys.qvel_to_v(q, d.qvel)
        held = act.tau(d.ctrl)
        act.set_act(d.act, 0.0)
        Q = fs.evaluate(0.0, sys.mechanism.compute(q, v, (), extras=False))[0] + held
        assert np.max(np.abs(Q[:3] - d.qfrc_actuator[:3])) < 1e-12  # N
        assert np.max(np.abs(Q[:3] - act.torque(q, v, d.ctrl, d.act)[:3])) < 1e-12
        assert 1e-9 < abs(Q[3] - d.qfrc_actuator[3]) < 5 * 2 * 2 * dt**2 / 0.02**2
    # the witness catches a wrong activation: half of it
    assert np.max(np.abs(act.torque(q, v, d.ctrl, 0.5 * d.act) - d.qfrc_actuator)) > 0.1


def _run(engine, steps=300, dt=1e-3, seed=3):
    sys = pfaff.load(CARTS)
    sim = pfaff.Simulator(sys, dt=dt, engine=engine)
    sim.reset(act=[0.1, -0.2, 0.05, 0.3])
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(0, steps, 25):
        sim.step(ctrl=rng.uniform(-1.5, 1.5, 4), n=25)
        out.append(np.concatenate([sim.q, sim.v, sim.act]))
    return np.array(out), sim


def test_core_run_equals_the_numpy_engine():
    core_run, sim = _run("core")
    numpy_run, _ = _run("numpy")
    assert sim.engine == "core"
    assert np.max(np.abs(core_run - numpy_run)) < 1e-10
    other, _ = _run("core", seed=4)  # another ctrl: the witness can fail
    assert np.max(np.abs(core_run - other)) > 1e-3


@pytest.mark.parametrize("name", ["lag", "integrating", "servo", "early"])
def test_run_follows_mujoco_rk4_to_its_order(name):
    """Each actuator alone on its cart (the others at ctrl 0, act 0), 1 s with the ctrl
    changed every 0.1 s, against MuJoCo's RK4: act and qpos agree, and the gap shrinks
    with dt at the order of the two integrations of act: RK4 on a filter (4; pfaff's
    exact), the integrator's clamp met inside a step (1), MuJoCo's RK4 average of the
    rate in filterexact's formula (1) and actearly's Euler look-ahead (2; its ctrl
    within actrange, as a clamp met inside a step is first order)."""
    i = [a.name for a in pfaff.load(CARTS).actuators].index(name)
    gaps = []
    for dt in (2e-3, 1e-3):
        sys = pfaff.load(CARTS)
        sim = pfaff.Simulator(sys, dt=dt)
        m, d = _mujoco(dt=dt)
        rng = np.random.default_rng(5)
        per = round(0.1 / dt)
        for _ in range(10):
            u = np.zeros(4)
            u[i] = rng.uniform(-0.45, 0.75) if name == "early" else rng.uniform(-1.5, 1.5)
            d.ctrl[:] = u
            for _ in range(per):
                mujoco.mj_step(m, d)
            sim.step(ctrl=u, n=per)
        q = sys.q_to_qpos(sim.q)
        gaps.append(max(abs(sim.act[i] - d.act[i]), abs(q[i] - d.qpos[i])))
    order = {"lag": 4, "integrating": 1, "servo": 1, "early": 2}[name]
    bound = {"lag": 1e-8, "integrating": 1e-4, "servo": 1e-2, "early": 5e-5}[name]
    assert gaps[1] < bound  # (activation units and m) at dt = 1 ms
    assert gaps[0] / gaps[1] > 2 ** (order - 0.5)


def test_derivatives_in_mujocos_convention():
    """A (2nv+na)^2 and B (2nv+na) x nu of ctrl_derivatives: the activation rows their
    closed form, and the filter's and integrator's carts against MuJoCo's
    mjd_transitionFD of its RK4 step at the same state."""
    sys = pfaff.load(CARTS)
    sys.actuators = [a for a in sys.actuators if a.name in ("lag", "integrating")]
    dt, nv, na = 1e-3, 4, 2
    q = sys.qpos_to_q(np.array([0.1, -0.2, 0.15, 0.05]))
    v = np.array([0.3, -0.1, 0.2, 0.4])
    act, ctrl = np.array([0.2, 0.1]), np.array([0.7, -0.5])
    d_ = ctrl_derivatives(sys, q, v, act, ctrl, dt)
    A, B = d_
    assert A.shape == (2 * nv + na, 2 * nv + na) and B.shape == (2 * nv + na, 2)
    e = np.exp(-dt / 0.05)
    np.testing.assert_allclose(A[2 * nv :, 2 * nv :], np.diag([e, 1.0]), atol=1e-8)
    np.testing.assert_allclose(B[2 * nv :], np.diag([1 - e, dt]), atol=1e-8)
    assert np.max(np.abs(A[2 * nv :, : 2 * nv])) < 1e-8
    # MuJoCo's Jacobians of its RK4 step (central differences of mj_step, as
    # mjd_transitionFD takes them for its other integrators), the file with those two
    spec = mujoco.MjSpec.from_file(str(CARTS))
    for a in list(spec.actuators):
        if a.name not in ("lag", "integrating"):
            spec.delete(a)
    m = spec.compile()
    m.opt.integrator, m.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, dt
    Am, Bm = _mujoco_jacobians(m, np.concatenate([sys.q_to_qpos(q), v, act]), ctrl)
    assert np.max(np.abs(A - Am)) < 1e-6 and np.max(np.abs(B - Bm)) < 1e-6
    np.testing.assert_allclose(d_.act, [ctrl[0] + (act[0] - ctrl[0]) * e, act[1] + dt * ctrl[1]])
    # the witness can fail: the filter's time constant changed
    sys.actuators = [dataclasses.replace(sys.actuators[0], timeconst=0.06), sys.actuators[1]]
    A2, _ = ctrl_derivatives(sys, q, v, act, ctrl, dt)
    assert np.max(np.abs(A2 - Am)) > 1e-3


def _mujoco_jacobians(m, x, u, eps=1e-6):
    """Central differences of MuJoCo's step of the state x = (qpos, qvel, act) (slide
    joints: qpos is a vector space) under the ctrl u."""
    d = mujoco.MjData(m)
    nq, nv = m.nq, m.nv

    def step(x, u):
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = x[:nq], x[nq : nq + nv], x[nq + nv :], u
        mujoco.mj_step(m, d)
        return np.concatenate([d.qpos, d.qvel, d.act])

    cols = [[], []]
    for j, z in enumerate((x, u)):
        for k in range(len(z)):
            e = np.zeros(len(z))
            e[k] = eps
            plus = step(x + e, u) if j == 0 else step(x, u + e)
            minus = step(x - e, u) if j == 0 else step(x, u - e)
            cols[j].append((plus - minus) / (2 * eps))
    return np.array(cols[0]).T, np.array(cols[1]).T


def test_simulator_step_derivatives_wrt_ctrl_and_tau():
    sys = pfaff.load(CARTS)
    sim = pfaff.Simulator(sys, dt=1e-3)
    sim.reset(act=[0.1, -0.2, 0.05, 0.3])
    sim.step(ctrl=[0.5, 0.2, -0.3, 0.4], n=20)
    A, B = sim.step_derivatives(ctrl=[0.5, 0.2, -0.3, 0.4], wrt="ctrl")
    assert A.shape == (12, 12) and B.shape == (12, 4)
    At, Bt = sim.step_derivatives(ctrl=[0.5, 0.2, -0.3, 0.4])  # tau in, unchanged
    assert At.shape == (8, 8) and Bt.shape == (8, 4)
    # (q, v) of the tau-input Jacobian at the same activations: the same step
    assert np.max(np.abs(A[:8, :8] - At)) < 1e-6
    with pytest.raises(ValueError, match="wrt='act'"):
        sim.step_derivatives(wrt="act")


def test_simulator_act_over_steps_is_the_closed_form():
    """One filter cart: act after 1 s of steps, ctrl held, from act0 = 0.4, is ctrl +
    (act0 - ctrl) exp(-t/tau) (sim.act), the same whether in one call or many."""
    sys = pfaff.load(CARTS)
    sim = pfaff.Simulator(sys, dt=1e-3)
    sim.reset(act=[0.4, 0, 0, 0])
    u = np.array([1.2, 0.0, 0.0, 0.0])
    for _ in range(10):
        sim.step(ctrl=u, n=100)
    assert abs(sim.act[0] - (1.2 + (0.4 - 1.2) * np.exp(-1.0 / 0.05))) < 1e-12
    one = pfaff.Simulator(sys, dt=1e-3)
    one.reset(act=[0.4, 0, 0, 0])
    one.step(ctrl=u, n=1000)
    assert np.max(np.abs(one.q - sim.q)) < 1e-12 and np.max(np.abs(one.act - sim.act)) < 1e-12


def test_kkt_failure_in_a_limited_simulator_is_a_simulation_error():
    """A singular KKT matrix inside a Simulator holding joint limits (the slider-crank's
    connect: 3 rows of rank 2) stops with SimulationError, as without limits."""
    from pfaff.simulate import SimulationError
    from pfaff.simulate.limits import JointLimit

    sys = pfaff.load(MODELS / "slider_crank.xml")
    plain = pfaff.Simulator(sys, dt=1e-3, method="kkt")
    with pytest.raises(SimulationError, match="KKT"):
        plain.step()
    sys.limits = [JointLimit("slide", -1.0, 1.0)]
    sim = pfaff.Simulator(sys, dt=1e-3, method="kkt")
    with pytest.raises(SimulationError, match="KKT"):
        sim.step()


@pytest.mark.parametrize("engine", ["core", "numpy"])
def test_rollout_with_ctrls_and_act_is_the_simulators(engine):
    """rollout(ctrls=, act0s=) equals Simulators stepped with the same ctrl, act
    included (bit for bit on the core, as its steps are the Simulator's)."""
    sys = pfaff.load(CARTS)
    rng = np.random.default_rng(7)
    K, T = 3, 40
    ctrls = rng.uniform(-1.5, 1.5, (K, T, 4))
    act0s = rng.uniform(-0.3, 0.3, (K, 4))
    taus = rng.uniform(-0.5, 0.5, (K, T, 4))
    out = pfaff.rollout(sys, None, None, taus, 1e-3, ctrls=ctrls, act0s=act0s, engine=engine)
    assert out["act"].shape == (K, T + 1, 4) and (out["status"] == 0).all()
    for i in range(K):
        sim = pfaff.Simulator(sys, dt=1e-3, engine=engine)
        sim.reset(act=act0s[i])
        for k in range(T):
            sim.step(taus[i, k], ctrl=ctrls[i, k])
        assert np.max(np.abs(out["q"][i, -1] - sim.q)) < 1e-13
        assert np.max(np.abs(out["act"][i, -1] - sim.act)) < 1e-13
    # the witness can fail: another rollout's ctrl gives another end
    assert np.max(np.abs(out["act"][0, -1] - out["act"][1, -1])) > 1e-2
    with pytest.raises(ValueError, match=r"ctrls has shape \(3, 40, 2\)"):
        pfaff.rollout(sys, None, None, taus, 1e-3, ctrls=ctrls[..., :2])
    with pytest.raises(ValueError, match="outside its actrange"):
        pfaff.rollout(sys, None, None, taus, 1e-3, act0s=np.ones(4))


def test_gym_observation_holds_the_activations():
    from pfaff.gym import ConstrainedEnv

    env = ConstrainedEnv(pfaff.load(CARTS), frame_skip=5)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (12,) and env.observation_space.shape == (12,)
    obs, *_ = env.step(np.array([0.5, 0.5, 0.5, 0.5]))
    np.testing.assert_array_equal(obs[8:], env.sim.act)
    assert np.min(np.abs(obs[8:])) > 1e-4  # the activations moved off their zero start


def test_activation_dynamics_pfaff_does_not_model_are_warned_and_left_out(tmp_path):
    text = CARTS.read_text().replace(
        '<general name="lag" joint="x1" dyntype="filter"',
        '<general name="lag" joint="x1" dyntype="user"',
    )
    path = tmp_path / "user_dyn.xml"
    path.write_text(text)
    sys = pfaff.load(path)
    assert [a.name for a in sys.actuators] == ["servo", "integrating", "early"]
    assert any("actuator 'lag': activation dynamics other than" in w for w in sys.warnings)


def test_a_pickled_simulator_goes_on_with_its_activations():
    import pickle

    sim = pfaff.Simulator(pfaff.load(CARTS), dt=1e-3)
    sim.reset(act=[0.1, -0.2, 0.05, 0.3])
    sim.step(ctrl=[0.5, 0.2, -0.3, 0.4], n=30)
    copy = pickle.loads(pickle.dumps(sim))
    np.testing.assert_array_equal(copy.act, sim.act)
    for s in (sim, copy):
        s.step(ctrl=[-0.5, 0.1, 0.3, -0.4], n=30)
    assert np.max(np.abs(copy.act - sim.act)) < 1e-14
    assert np.max(np.abs(copy.q - sim.q)) < 1e-14
