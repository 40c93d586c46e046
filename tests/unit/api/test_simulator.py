"""pfaff.Simulator: n calls of step() against one simulate of the same torques (the
second implementation: simulate's own loop), bit for bit on the compiled core; last
against the NumPy reference dynamics; the checks at its boundary."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.simulate import SimOptions, SimulationError, simulate
from tests.where import MODELS, REPO

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

FILES = {"five_bar": MODELS / "five_bar.xml", "quadruped": REPO / "examples" / "quadruped.xml"}
SERIES = ("t", "q", "v", "a", "tau", "F", "lambda", "phi", "energy", "work")


@pytest.fixture(scope="module", params=list(FILES))
def system(request):
    return pfaff.load(FILES[request.param], contact=False)


def _torques(sys, T, seed=0, scale=0.5):
    return scale * np.random.default_rng(seed).standard_normal((T, sys.nv))


def _simulate(sys, taus, dt=1e-3, **options):
    """One simulate whose controller returns taus[k] at step k (held at the last)."""
    T = len(taus)

    def controller(t, snap):
        return taus[min(int(round(t / dt)), T - 1)]

    opt = SimOptions(dt=dt, engine="core", progress=False, **options)
    return simulate(sys.cset, sys.q0, sys.v0, T * dt, opt, controller, forces=sys.forces)


def _worst(a, b):
    return max(float(np.max(np.abs(a[k] - b[k]), initial=0.0)) for k in SERIES)


def test_steps_with_a_new_torque_each_step_equal_one_simulate(system):
    T = 1000
    taus = _torques(system, T)
    sim = pfaff.Simulator(system, dt=1e-3)
    assert sim.engine == "core"
    for tau in taus:
        sim.step(tau)
    got, ref = sim.record().arrays(), _simulate(system, taus).arrays()
    assert got["q"].shape == ref["q"].shape == (T + 1, system.nq)
    for key in ("q", "v", "lambda"):
        assert np.max(np.abs(got[key] - ref[key]), initial=0.0) <= 1e-12, key
    assert _worst(got, ref) <= 1e-12
    assert sim.t == pytest.approx(T * 1e-3, abs=1e-12) and sim.steps == T
    np.testing.assert_array_equal(sim.q, got["q"][-1])
    # the witness can fail: one torque changed by 1e-6 N m in one step shows
    bad = taus.copy()
    bad[500, 0] += 1e-6
    assert np.max(np.abs(_simulate(system, bad).arrays()["q"] - got["q"])) > 1e-12


def test_constant_torque_in_one_call_and_in_many_equal_simulate(system):
    T = 1500 if system.nv < 10 else 400  # crosses a record chunk on the five-bar
    tau = _torques(system, 1, seed=3)[0]
    opt = SimOptions(dt=1e-3, engine="core", progress=False)
    ref = simulate(system.cset, system.q0, system.v0, T * 1e-3, opt, tau=tau, forces=system.forces)
    one, many = pfaff.Simulator(system), pfaff.Simulator(system)
    one.step(tau, n=T)
    for n in (1, 7, T // 2, T - T // 2 - 8):
        many.step(tau, n=n)
        many.record()  # a record mid-run changes nothing after it
    ref = ref.arrays()
    for sim in (one, many):
        assert _worst(sim.record().arrays(), ref) <= 1e-12


def test_reset_starts_again_and_assembles(system):
    sim = pfaff.Simulator(system)
    sim.step(n=20)
    q20 = sim.q
    sim.reset()
    assert sim.t == 0.0 and sim.last is None and len(sim.record().arrays()["t"]) == 1
    sim.step(n=20)
    np.testing.assert_array_equal(sim.q, q20)
    # a start off the manifold is brought onto it
    q = system.integrate(system.q0, 1e-3 * np.ones(system.nv))
    sim.reset(q=q)
    phi = sim.record().arrays()["phi"][0]
    assert np.max(np.abs(phi), initial=0.0) <= 1e-10


def test_last_is_the_sample_the_step_started_from(system):
    sim = pfaff.Simulator(system)
    taus = _torques(system, 5, seed=1)
    for tau in taus:
        q, v = sim.q, sim.v
        sim.step(tau)
    last = sim.last
    np.testing.assert_array_equal(last.q, q)
    np.testing.assert_array_equal(last.v, v)
    np.testing.assert_array_equal(last.tau, taus[-1])
    assert last.t == pytest.approx(4e-3, abs=1e-15)
    # the NumPy reference dynamics at that state (a second implementation)
    ref = system.forward_dynamics(last.q, last.v, last.tau)
    scale = 1 + np.abs(ref.a).max()
    np.testing.assert_allclose(last.a, ref.a, atol=1e-8 * scale)
    np.testing.assert_allclose(last.F, ref.F, atol=1e-8 * (1 + np.abs(ref.F).max()))
    assert last.rank == ref.rank
    assert last.energy == pytest.approx(last.kinetic + last.potential, abs=1e-12)


def test_record_false_keeps_only_last():
    sys = pfaff.load(FILES["five_bar"], contact=False)
    a, b = pfaff.Simulator(sys, record=False), pfaff.Simulator(sys)
    for k in range(2100):  # wraps the record buffers twice
        tau = np.full(sys.nv, 0.1 * np.sin(0.01 * k))
        a.step(tau)
        b.step(tau)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.last.lam, b.last.lam)
    with pytest.raises(ValueError, match="record=False"):
        a.record()


def test_bad_input_is_refused_naming_it():
    sys = pfaff.load(FILES["five_bar"], contact=False)
    sim = pfaff.Simulator(sys)
    with pytest.raises(ValueError, match=r"tau has shape \(3,\), expected \(4,\)"):
        sim.step(np.zeros(3))
    with pytest.raises(ValueError, match="tau has a non-finite entry"):
        sim.step([0.0, np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="n must be >= 1"):
        sim.step(n=0)
    for n in (2.5, "3", None):
        with pytest.raises(TypeError, match=f"n must be a whole number of steps >= 1, got {n!r}"):
            sim.step(n=n)
    with pytest.raises(ValueError, match="ctrl= drives actuators"):
        sim.step(ctrl=np.zeros(1))
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['bogus'\]; valid: .*rank_tol"):
        pfaff.Simulator(sys, bogus=1)
    with pytest.raises(ValueError, match="dt must be > 0"):
        pfaff.Simulator(sys, dt=-1.0)
    with pytest.raises(ValueError, match=r"q has shape \(2,\)"):
        sim.reset(q=np.zeros(2))
    with pytest.raises(TypeError, match="pfaff.System"):
        pfaff.Simulator(sys.cset)
    assert sim.steps == 0  # nothing was stepped by the refused calls


def test_a_failed_step_raises_and_keeps_the_last_good_state():
    sys = pfaff.load(FILES["five_bar"], contact=False)
    sim = pfaff.Simulator(sys)
    sim.step(n=3)
    q3 = sim.q
    with pytest.raises(SimulationError, match=r"non-finite .* \(step 3\)") as err:
        sim.step(np.full(sys.nv, 1e308), n=5)
    assert sim.steps == 3
    np.testing.assert_array_equal(sim.q, q3)
    assert len(err.value.trajectory.arrays()["t"]) >= 3


def test_an_adaptive_simulator_runs_on_the_core_as_the_reference():
    """RK45 in a Simulator is the core's, equal to the NumPy reference's run; Radau is the
    reference's alone, asked for explicitly."""
    sys = pfaff.load(FILES["five_bar"], contact=False)
    with pytest.raises(ValueError, match="'Radau'.*engine='numpy'"):
        pfaff.Simulator(sys, integrator="Radau")
    assert pfaff.Simulator(sys, integrator="Radau", engine="numpy").engine == "numpy"
    sim = pfaff.Simulator(sys, integrator="RK45")
    assert sim.engine == "core" and not sim.warnings
    taus = _torques(sys, 50, seed=2)
    for tau in taus:
        sim.step(tau)
    got = sim.record().arrays()
    opt = SimOptions(dt=1e-3, integrator="RK45", engine="numpy", progress=False)
    T = len(taus)
    ref = simulate(
        sys.cset, sys.q0, sys.v0, T * 1e-3, opt, lambda t, s: taus[min(round(t / 1e-3), T - 1)]
    ).arrays()
    # each call re-assembles its start: equal to round-off, not bit for bit
    np.testing.assert_allclose(got["q"], ref["q"], atol=1e-10)
    assert got["q"].shape == ref["q"].shape
    np.testing.assert_array_equal(sim.last.tau, taus[-1])


@pytest.mark.parametrize(
    "name",
    ["five_bar_passive.xml", "leg_passive.xml", "gripper.xml", "four_bar.xml", "slider_crank.xml"],
)
def test_other_model_files_step_as_one_simulate(name):
    """Force elements (joint springs and dampers), a floating base (a free joint: nq !=
    nv), redundant rows: 200 step() calls equal one simulate."""
    sys = pfaff.load(MODELS / name, contact=False)
    taus = _torques(sys, 200, seed=5, scale=0.1)
    sim = pfaff.Simulator(sys)
    assert sim.engine == "core"
    for tau in taus:
        sim.step(tau)
    got, ref = sim.record().arrays(), _simulate(sys, taus).arrays()
    assert _worst(got, ref) <= 1e-12
    for key in ("force_work", "force_potential", "correction_energy"):
        assert np.max(np.abs(got[key] - ref[key]), initial=0.0) <= 1e-12, key


def test_a_simulator_on_the_numpy_engine_is_one_simulate():
    """four_bar.toml names a frame twice (both engines hold its last frame) asked on the
    NumPy engine: no warning, the trajectory of one simulate to round-off, and the
    core's Simulator (no fallback) the same to 1e-9."""
    sys = pfaff.load(MODELS / "four_bar.toml")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*(NumPy engine|cannot run).*")
        sim, fast = pfaff.Simulator(sys, engine="numpy"), pfaff.Simulator(sys)
    assert (sim.engine, fast.engine) == ("numpy", "core") and sim.warnings == []
    T = 100
    taus = _torques(sys, T, seed=6, scale=0.1)
    for tau in taus:
        sim.step(tau)
        fast.step(tau)
    got = sim.record()
    assert got.engine == "numpy" and got.steps == T
    np.testing.assert_allclose(fast.record().arrays()["q"], got.arrays()["q"], atol=1e-9)
    opt = SimOptions(dt=1e-3, engine="numpy", progress=False)
    ref = simulate(
        sys.cset, sys.q0, sys.v0, T * 1e-3, opt, lambda t, s: taus[min(round(t / 1e-3), T - 1)]
    ).arrays()
    got = got.arrays()
    # the URDF's joint limits (+-10 rad, never reached) are held: a column each after
    # the loop's rows, zero while free
    m = sys.cset.dim
    assert len(sys.limits) == 3 and np.abs(got["lambda"][:, m:]).max() <= 1e-12
    got["lambda"] = got["lambda"][:, :m]
    for key in ("q", "v", "lambda"):
        np.testing.assert_allclose(got[key], ref[key], atol=1e-9, err_msg=key)


def test_a_failed_position_correction_keeps_one_sample_per_state():
    """max_newton=0: no Newton step, so a hard push opens the loop past 1e-6 and the
    step fails after the core recorded its start; that sample is dropped, to be taken
    anew by the next step (one sample per state, times strictly increasing)."""
    sys = pfaff.load(FILES["five_bar"], contact=False)
    sim = pfaff.Simulator(sys, max_newton=0)
    push = np.full(sys.nv, 20.0)
    with pytest.raises(SimulationError, match=r"position correction failed .* after 0 it") as e:
        for _ in range(2000):
            sim.step(push)
    k = sim.steps
    t = e.value.trajectory.arrays()["t"]
    assert len(t) == k + 1 and np.all(np.diff(t) > 0.5e-3)
    assert sim.last.t == pytest.approx((k - 1) * 1e-3, abs=1e-12)
    with pytest.raises(SimulationError, match=f"step {k + 1}"):  # the loop is open by
        sim.step(np.zeros(sys.nv))  # ~1e-6 there: the next step fails again, from k
    arr = sim.record().arrays()
    assert sim.steps == k and len(arr["t"]) == k + 1 and np.all(np.diff(arr["t"]) > 0.5e-3)
    np.testing.assert_array_equal(arr["tau"][k - 1], push)
    np.testing.assert_array_equal(arr["tau"][k], np.zeros(sys.nv))  # the last torque held


@pytest.mark.parametrize("integrator", ["rk3", "heun"])
def test_other_tableaus_step_as_one_simulate(integrator):
    """The core runs any explicit tableau of the registry: a Simulator with rk3 or Heun
    steps as one simulate with it, and differs from RK4 (the option reaches the core)."""
    sys = pfaff.load(FILES["five_bar"], contact=False)
    taus = _torques(sys, 200, seed=8)
    sim = pfaff.Simulator(sys, integrator=integrator)
    assert sim.engine == "core"
    for tau in taus:
        sim.step(tau)
    got = sim.record().arrays()
    assert _worst(got, _simulate(sys, taus, integrator=integrator).arrays()) <= 1e-12
    assert np.abs(got["q"] - _simulate(sys, taus).arrays()["q"]).max() > 1e-9
