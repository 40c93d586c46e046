"""pfaff.rollout: K rollouts on a thread pool against K Simulators run one after another
(the second implementation), bit for bit, for any number of threads; a failed rollout
leaves the others as they are; the checks at its boundary."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff import core
from tests.where import MODELS, REPO

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


@pytest.fixture(scope="module")
def five_bar():
    return pfaff.load(MODELS / "five_bar.xml", contact=False)


def _inputs(sys, K, T, seed=0):
    rng = np.random.default_rng(seed)
    q0s = np.array([sys.integrate(sys.q0, 0.05 * rng.standard_normal(sys.nv)) for _ in range(K)])
    v0s = 0.1 * rng.standard_normal((K, sys.nv))
    return q0s, v0s, 0.5 * rng.standard_normal((K, T, sys.nv))


def _sequential(sys, q0s, v0s, taus, **options):
    out = {k: [] for k in ("q", "v", "lambda", "phi")}
    sim = pfaff.Simulator(sys, **options)
    for q0, v0, tau in zip(q0s, v0s, taus):
        sim.reset(q0, v0)
        for tk in tau:
            sim.step(tk)
        arr = sim.record().arrays()
        arr["lambda"] = arr["lambda"][:, : sys.cset.dim]  # the loop's rows (not the limits')
        for k in out:
            out[k].append(arr[k])
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("path", [MODELS / "five_bar.xml", REPO / "examples" / "quadruped.xml"])
def test_rollouts_equal_sequential_simulators_bit_for_bit(path):
    sys = pfaff.load(path, contact=False)
    K, T = 5, 120
    q0s, v0s, taus = _inputs(sys, K, T)
    ref = _sequential(sys, q0s, v0s, taus)
    for threads in (1, 3):
        out = pfaff.rollout(sys, q0s, v0s, taus, dt=1e-3, threads=threads)
        assert out["q"].shape == (K, T + 1, sys.nq) and out["v"].shape == (K, T + 1, sys.nv)
        assert out["lambda"].shape == (K, T + 1, sys.cset.dim)
        assert list(out["status"]) == [0] * K and out["message"] == [""] * K
        for key in ref:
            assert np.max(np.abs(out[key] - ref[key]), initial=0.0) <= 1e-12, (key, threads)
    np.testing.assert_allclose(out["t"], np.arange(T + 1) * 1e-3, atol=1e-15)
    assert np.max(np.abs(out["phi"])) <= 1e-10  # on the manifold all along
    # the witness can fail: a torque changed by 1e-6 in one rollout shows in that one only
    bad = taus.copy()
    bad[2, 60, 0] += 1e-6
    diff = np.abs(pfaff.rollout(sys, q0s, v0s, bad, threads=2)["q"] - out["q"]).max(axis=(1, 2))
    assert diff[2] > 1e-12 and np.all(np.delete(diff, 2) <= 1e-12)


def test_one_start_for_all_and_the_default_start(five_bar):
    sys = five_bar
    taus = np.zeros((3, 10, sys.nv))
    out = pfaff.rollout(sys, None, None, taus, threads=2)
    assert np.array_equal(out["q"][0], out["q"][2])
    sim = pfaff.Simulator(sys)
    sim.step(n=10)
    np.testing.assert_array_equal(out["q"][1], sim.record().arrays()["q"])
    same = pfaff.rollout(sys, sys.q0, sys.v0, taus)
    np.testing.assert_array_equal(same["q"], out["q"])


def test_a_failed_rollout_leaves_the_others(five_bar):
    sys = five_bar
    q0s, v0s, taus = _inputs(sys, 3, 20, seed=4)
    taus[1, 5:] = 1e308  # overflows at step 5
    out = pfaff.rollout(sys, q0s, v0s, taus, threads=2)
    assert list(out["status"]) == [0, 1, 0]
    assert "non-finite" in out["message"][1] and out["message"][0] == ""
    assert np.isnan(out["q"][1, -1]).all() and np.isfinite(out["q"][1, :5]).all()
    ok = _sequential(sys, q0s[[0, 2]], v0s[[0, 2]], taus[[0, 2]])
    np.testing.assert_array_equal(out["q"][[0, 2]], ok["q"])


def test_bad_input_is_refused_naming_it(five_bar):
    sys = five_bar
    taus = np.zeros((2, 5, sys.nv))
    with pytest.raises(ValueError, match=r"taus has shape \(2, 5, 3\), expected \(K, T, 4\)"):
        pfaff.rollout(sys, None, None, taus[:, :, :3])
    with pytest.raises(ValueError, match=r"q0s has shape \(3, 4\), expected \(2, 4\)"):
        pfaff.rollout(sys, np.zeros((3, 4)), None, taus)
    bad = taus.copy()
    bad[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="taus has non-finite entries"):
        pfaff.rollout(sys, None, None, bad)
    with pytest.raises(ValueError, match="threads must be in 1 .. 1024"):
        pfaff.rollout(sys, None, None, taus, threads=0)
    with pytest.raises(ValueError, match="no rollout"):
        pfaff.rollout(sys, None, None, np.zeros((0, 5, sys.nv)))


def test_the_core_checks_its_own_boundary(five_bar):
    """The compiled entry point refuses arrays that pfaff.rollout would not pass it."""
    sys = five_bar
    proto = core.build(sys.cset)
    K, T = 2, 3
    q0s, v0s = np.tile(sys.q0, (K, 1)), np.tile(sys.v0, (K, 1))
    taus = np.zeros((K, T, sys.nv))
    m, mh = sys.cset.dim, len(sys.cset.holonomic_rows)
    outs = [np.empty((K, T + 1, w)) for w in (sys.nq, sys.nv, m, mh)]
    with pytest.raises(ValueError, match=r"rollout: out q has shape \(2, 3, 4\)"):
        core.rollout(proto, q0s, v0s, taus, 0.0, 1, outs[0][:, :T].copy(), *outs[1:])
    with pytest.raises(ValueError, match=r"rollout: v0s has shape \(2, 3\)"):
        core.rollout(proto, q0s, v0s[:, :3].copy(), taus, 0.0, 1, *outs)
    nan = q0s.copy()
    nan[1, 2] = np.nan
    with pytest.raises(ValueError, match="q0s has a non-finite entry"):
        core.rollout(proto, nan, v0s, taus, 0.0, 1, *outs)
    status = core.rollout(proto, q0s, v0s, taus, 0.0, 2, *outs)
    assert [s.code for s in status] == [0, 0]


def test_rollouts_on_the_numpy_engine_are_its_simulators():
    """four_bar.toml (a frame name twice: the core and NumPy both hold its last frame)
    asked on the NumPy engine: Simulators one after another, no warning, the same results
    as those Simulators; on the core (no fallback) the same trajectories to 1e-9."""
    sys = pfaff.load(MODELS / "four_bar.toml")
    q0s, v0s, taus = _inputs(sys, 2, 15, seed=2)
    taus *= 0.2
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*(NumPy engine|cannot run).*")
        out = pfaff.rollout(sys, q0s, v0s, taus, threads=2, engine="numpy")
        ref = _sequential(sys, q0s, v0s, taus, engine="numpy")
        fast = pfaff.rollout(sys, q0s, v0s, taus, threads=2)
    assert list(out["status"]) == [0, 0] and list(fast["status"]) == [0, 0]
    for key in ref:
        np.testing.assert_array_equal(out[key], ref[key])
    for key in ("q", "v"):
        np.testing.assert_allclose(fast[key], ref[key], atol=1e-9, err_msg=key)


def test_options_reach_every_rollout(five_bar):
    """Heun's method and a looser position tolerance: the rollouts equal Simulators with
    the same options, and differ from the defaults."""
    sys = five_bar
    q0s, v0s, taus = _inputs(sys, 3, 50, seed=9)
    opts = dict(integrator="heun", position_tol=1e-10)
    out = pfaff.rollout(sys, q0s, v0s, taus, threads=2, **opts)
    ref = _sequential(sys, q0s, v0s, taus, **opts)
    for key in ref:
        np.testing.assert_array_equal(out[key], ref[key])
    default = pfaff.rollout(sys, q0s, v0s, taus, threads=2)
    assert np.abs(default["q"] - out["q"]).max() > 1e-9
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['bogus'\]"):
        pfaff.rollout(sys, q0s, v0s, taus, bogus=1)


def _limited_sequential(sys, q0s, v0s, taus):
    """K limited Simulators one after another: the state after each step, the events."""
    sim = pfaff.Simulator(sys, dt=1e-3)
    qs, vs, events = [], [], []
    for q0, v0, tau in zip(q0s, v0s, taus):
        sim.reset(q0, v0)
        q, v = [sim.q.copy()], [sim.v.copy()]
        for tk in tau:
            sim.step(tk)
            q.append(sim.q.copy())
            v.append(sim.v.copy())
        qs.append(q)
        vs.append(v)
        events.append([(e.t, e.kind, e.side) for e in sim.events])
    return np.array(qs), np.array(vs), events


@pytest.mark.parametrize("threads", [1, 2])
def test_a_rollout_holds_the_limits_as_limited_simulators_do(threads):
    """Pendulums swung into their stops: the rollout's states on the step grid and its
    events are those of K limited Simulators, bit for bit; every state is inside the
    range (the stop holds), where the rollout told to step through the limits leaves
    it."""
    sys = pfaff.load(MODELS / "limited_pendulum.xml", contact=False)
    (lim,) = sys.limits
    K, T = 4, 400
    rng = np.random.default_rng(5)
    q0s = np.tile(sys.q0, (K, 1))
    v0s = rng.uniform(4.0, 8.0, (K, sys.nv)) * rng.choice([-1.0, 1.0], (K, 1))
    taus = 0.3 * rng.standard_normal((K, T, sys.nv))
    out = pfaff.rollout(sys, q0s, v0s, taus, dt=1e-3, threads=threads)
    q, v, events = _limited_sequential(sys, q0s, v0s, taus)
    assert (out["status"] == 0).all()
    assert np.array_equal(out["q"], q) and np.array_equal(out["v"], v)
    got = [[(e.t, e.kind, e.side) for e in ev] for ev in out["events"]]
    assert got == events and all(any(k == "impact" for _, k, _ in ev) for ev in got)
    i = sys.mechanism.joint_v_index(lim.joint)
    assert (out["q"][..., i] >= lim.lower - 1e-9).all() and (
        out["q"][..., i] <= lim.upper + 1e-9
    ).all()
    with pytest.warns(UserWarning, match="not held"):
        free = pfaff.rollout(sys, q0s, v0s, taus, dt=1e-3, threads=threads, limits=False)
    assert ((free["q"][..., i] < lim.lower - 1e-3) | (free["q"][..., i] > lim.upper + 1e-3)).any()
    assert free["events"] == [[]] * K
