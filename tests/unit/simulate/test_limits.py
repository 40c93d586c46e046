"""Joint limits as unilateral constraints (pfaff.simulate.limits): located events against
the pendulum's closed form (elliptic integrals), Newton's impact law in the metric of M,
held rows whose multipliers push, releases, the energy balance, both engines."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import ellipk, ellipkinc

import pfaff
from pfaff.mechanism.mjcf_compiled import restitution
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.limits import JointLimit, metric_impact, simulate_limited
from pfaff.simulate.options import use_engine
from tests.where import MODELS

PENDULUM = MODELS / "limited_pendulum.xml"
I_PIVOT, MGC = 0.01 + 1.0 * 0.5**2, 1.0 * 9.81 * 0.5  # the file's inertia about the hinge
TH0 = 1.0  # the keyframe: released from rest at 1 rad


def _fall_time(th: float) -> float:
    """Time for the pendulum ``I th'' = -m g c sin th`` from rest at TH0 to reach ``th``
    (first passage): ``(K(k) - F(phi, k)) / w0``, ``sin(th/2) = k sin(phi)``,
    ``k = sin(TH0/2)`` (scipy's parameter m = k^2)."""
    k = np.sin(TH0 / 2)
    phi = np.arcsin(np.sin(th / 2) / k)
    return float((ellipk(k * k) - ellipkinc(phi, k * k)) / np.sqrt(MGC / I_PIVOT))


def _speed(th: float) -> float:
    """``|th'|`` at ``th`` by energy conservation."""
    return float(np.sqrt(2 * MGC / I_PIVOT * (np.cos(th) - np.cos(TH0))))


def _run(limits, t_end, dt, engine="numpy", path=PENDULUM):
    s = pfaff.load(path)
    with use_engine(engine):
        return s, simulate_limited(
            s.cset, s.q0, s.v0, t_end, limits, SimOptions(dt=dt, progress=False)
        )


@pytest.mark.parametrize("dt", [1e-3, 1e-4])
def test_pendulum_hits_the_stop_at_the_closed_form_time_and_rebounds(dt, engine):
    """The stop at -0.5 rad on the up-swing, e = 0.5: the event time and the velocities
    before and after equal the closed form to 1e-10; no penetration beyond 1e-12 rad."""
    e, stop = 0.5, -0.5
    s, run = _run([JointLimit("hinge", stop, 2.0, e)], 0.6, dt, engine)
    assert run.trajectory.engine == engine
    ev = run.events[0]
    assert (ev.kind, ev.side) == ("impact", "lower")
    assert abs(ev.t - _fall_time(stop)) < 1e-10
    assert abs(ev.v_pre - (-_speed(stop))) < 1e-10
    assert abs(ev.v_post - e * _speed(stop)) < 1e-10
    assert abs(ev.energy_lost - 0.5 * I_PIVOT * (1 - e * e) * _speed(stop) ** 2) < 1e-9
    a = run.trajectory.arrays()
    assert (stop - a["q"][:, 0]).max() <= 1e-12
    # the balance: E(t) - E(0) + the impacts' loss is the integrator's drift only
    balance = a["energy"] - a["energy"][0] + run.impact_loss
    assert np.abs(balance).max() < 1e-8
    assert np.abs(a["energy"] - a["energy"][0]).max() > 0.1  # the loss is really there
    # a wrong locator (the first sample past the stop, no root finding) is caught
    free = simulate(s.cset, s.q0, s.v0, 0.6, SimOptions(dt=dt, progress=False))
    t_naive = free.t[np.argmax(free.arrays()["q"][:, 0] < stop)]
    assert abs(t_naive - _fall_time(stop)) > 1e-6


def test_plastic_stop_on_the_up_swing_releases_at_once():
    """e = 0 where gravity pulls the pendulum back off the stop: the held row's multiplier
    would pull (lambda > 0 at a lower bound), so the limit is released at the impact."""
    _, run = _run([JointLimit("hinge", -0.5, 2.0)], 0.7, 1e-3)
    kinds = [(ev.kind, ev.side) for ev in run.events]
    assert kinds[:2] == [("impact", "lower"), ("release", "lower")]
    assert run.events[1].t == run.events[0].t
    assert abs(run.events[0].v_post) < 1e-12
    q = run.trajectory.arrays()["q"][:, 0]
    assert q[-1] > -0.5 + 0.1  # it swings back


def test_plastic_stop_on_the_down_swing_holds_with_the_static_multiplier(engine):
    """The stop at 0.3 rad on the down-swing, e = 0: held for the rest of the run, the
    multiplier equal to the static torque ``lambda = -m g c sin(0.3)`` (pushing: <= 0 at
    a lower bound), the kinetic energy at impact all lost."""
    stop = 0.3
    _, run = _run([JointLimit("hinge", stop, 2.0)], 0.8, 1e-3, engine)
    assert [ev.kind for ev in run.events] == ["impact"]
    ev = run.events[0]
    assert abs(ev.t - _fall_time(stop)) < 1e-10
    assert abs(ev.energy_lost - MGC * (np.cos(stop) - np.cos(TH0))) < 1e-10
    a = run.trajectory.arrays()
    after = a["t"] >= ev.t
    assert np.abs(a["q"][after, 0] - stop).max() <= 1e-12
    assert np.abs(a["v"][after, 0]).max() <= 1e-12
    np.testing.assert_allclose(a["lambda"][after, 0], -MGC * np.sin(stop), rtol=0, atol=1e-9)


def test_four_bar_driven_into_a_crank_limit(engine):
    """The four-bar falls onto an upper crank limit: one dof, so the impact reverses the
    whole velocity (v+ = -e v-, e = 0.5) and takes (1 - e^2) of the kinetic energy; the
    loop's rows plus the limit row have rank nv (SVD)."""
    s = pfaff.load(MODELS / "four_bar.xml")
    e = 0.5
    with use_engine(engine):
        run = simulate_limited(
            s.cset,
            s.q0,
            s.v0,
            0.6,
            [JointLimit("crank", -1.0, 1.0, e)],
            SimOptions(dt=1e-3, progress=False),
        )
    a = run.trajectory.arrays()
    assert run.trajectory.engine == engine
    assert (a["q"][:, 0] - 1.0).max() <= 1e-12
    impacts = [ev for ev in run.events if ev.kind == "impact"]
    assert len(impacts) >= 2
    for ev in impacts:
        k = int(np.flatnonzero(a["t"] == ev.t)[-1])  # the post-impact sample
        snap = s.mechanism.compute(a["q"][k], a["v"][k], s.cset.frames)
        A = s.cset.evaluate(snap).A
        G = np.vstack([A, np.eye(s.nv)[:1]])
        assert np.sum(np.linalg.svd(G, compute_uv=False) > 1e-8) == s.nv == 3
        assert abs(ev.v_post + e * ev.v_pre) < 1e-12
        T_post = a["kinetic"][k]  # = e^2 T_pre: the whole velocity scaled by -e
        assert abs(ev.energy_lost - (1 - e * e) / (e * e) * T_post) < 1e-12
    balance = a["energy"] - a["energy"][0] + run.impact_loss
    assert np.abs(balance).max() < 1e-7


def test_four_bar_limit_the_same_on_both_engines():
    """The same run on the NumPy engine and the compiled core: the same events."""
    runs = [
        _run([JointLimit("crank", -1.0, 1.0, 0.5)], 0.6, 1e-3, eng, MODELS / "four_bar.xml")[1]
        for eng in ("numpy", "core")
    ]
    a, b = (r.events for r in runs)
    assert len(a) == len(b) >= 2
    for x, y in zip(a, b):
        assert (x.kind, x.side) == (y.kind, y.side)
        assert abs(x.t - y.t) < 1e-12 and abs(x.v_post - y.v_post) < 1e-10


def test_metric_impact_is_the_least_kinetic_energy_change():
    """metric_impact against a brute-force minimisation of (v+ - v)^T M (v+ - v) over
    the admissible set (a null-space parametrisation)."""
    rng = np.random.default_rng(3)
    B = rng.normal(size=(4, 4))
    M = B @ B.T + 4 * np.eye(4)
    A = rng.normal(size=(1, 4))
    v = rng.normal(size=4)
    vp = metric_impact(M, A, v, 2, -0.3)
    assert abs(A @ vp)[0] < 1e-12 and abs(vp[2] + 0.3) < 1e-12
    G = np.vstack([A, np.eye(4)[2:3]])
    _, _, Vt = np.linalg.svd(G)
    N = Vt[2:].T  # basis of the admissible directions
    v_part = np.linalg.lstsq(G, np.array([0.0, -0.3]), rcond=None)[0]
    z = np.linalg.solve(N.T @ M @ N, N.T @ M @ (v - v_part))
    np.testing.assert_allclose(vp, v_part + N @ z, atol=1e-12)


def test_bad_limits_are_refused():
    with pytest.raises(ValueError, match="lower = 1.0 must be < upper = -1.0"):
        JointLimit("hinge", 1.0, -1.0)
    with pytest.raises(ValueError, match="restitution = 1.5, valid"):
        JointLimit("hinge", -1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="start is outside the limit of joint 'hinge'"):
        _run([JointLimit("hinge", -0.5, 0.5)], 0.1, 1e-3)


def test_mjcf_limits_are_read_and_no_longer_warned():
    """The file's range becomes a JointLimit (ref subtracted); solref's damping ratio
    gives the restitution of its spring-damper: 0 at MuJoCo's default (critical)."""
    s = pfaff.load(PENDULUM)
    assert [(lim.joint, lim.lower, lim.upper) for lim in s.limits] == [("hinge", -0.5, 2.0)]
    assert s.limits[0].restitution == 0.0
    assert not any("limit" in w for w in s.warnings)
    z = 0.2
    assert restitution(0.02, z) == pytest.approx(np.exp(-np.pi * z / np.sqrt(1 - z * z)), 1e-15)
    assert restitution(0.02, 1.0) == 0.0 and restitution(-100.0, -10.0) == 0.0


def test_a_file_limit_the_start_is_outside_of_is_listed_not_modelled():
    """five_bar_passive.xml starts at qpos 0, outside its joint's range [-170, -10] deg:
    that limit is in warnings, not in limits (MuJoCo's soft limit would push it in)."""
    s = pfaff.load(MODELS / "five_bar_passive.xml")
    assert s.limits == []
    assert any("'left': limits" in w and "outside them" in w for w in s.warnings)


def test_running_the_file_simulates_its_limits():
    """The command line's run of a file with a limited hinge (run_system): the limit's
    events, and the energy balance closed by the impacts' loss (MuJoCo's default solref:
    plastic, so the impact takes the kinetic energy m g c (cos(-0.5) - cos 1))."""
    from pfaff.files.model import load_model
    from pfaff.scenarios.model_file import run_system

    res = run_system(load_model(PENDULUM), 0.7, SimOptions(dt=1e-3, progress=False), "f")
    m = res.metrics
    assert m["limit_events"] >= 1
    assert abs(m["limit_impact_loss"] - MGC * (np.cos(-0.5) - np.cos(TH0))) < 1e-9
    assert m["energy_balance_rel"] < 1e-9
    assert m["energy_drift_rel"] > 0.5  # without the loss counted, the balance is off


def test_a_held_limit_is_released_when_its_multiplier_would_pull(engine):
    """Held at the stop 0.3 rad, a controller's torque ramps up ``tau = 3 t``: at rest on
    the stop ``lambda = tau - m g c sin(0.3)``, pushing (<= 0) until ``t* = m g c
    sin(0.3) / 3``; the limit is released at the first sample past t*, and the pendulum
    leaves the stop."""
    stop = 0.3
    s = pfaff.load(PENDULUM)
    with use_engine(engine):
        run = simulate_limited(
            s.cset,
            s.q0,
            s.v0,
            0.8,
            [JointLimit("hinge", stop, 2.0)],
            SimOptions(dt=1e-3, progress=False),
            controller=lambda t, snap: np.array([3.0 * t]),
        )
    kinds = [ev.kind for ev in run.events]
    assert kinds == ["impact", "release"]
    t_star = MGC * np.sin(stop) / 3.0
    assert run.events[0].t < t_star
    assert t_star - 1e-12 <= run.events[1].t <= t_star + 1e-3 + 1e-12
    a = run.trajectory.arrays()
    held = (a["t"] >= run.events[0].t) & (a["t"] < run.events[1].t)
    assert held.sum() > 10 and (a["lambda"][held, 0] <= 1e-10).all()
    assert a["q"][:, 0].min() >= stop - 1e-12
    assert a["q"][-1, 0] > stop + 1e-3  # it left the stop


def test_a_simulator_and_a_rollout_hold_the_limits_and_say_so_when_told_not_to():
    """A Simulator and a rollout hold the file's limits (tests/unit/api/test_simulator_limits.py,
    tests/unit/api/test_rollout.py) without a warning; ``limits=False`` steps through them
    and says so."""
    sys = pfaff.load(MODELS / "limited_pendulum.xml")
    assert sys.limits
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = pfaff.Simulator(sys, dt=1e-3)
        pfaff.rollout(sys, None, None, np.zeros((1, 2, sys.nv)), dt=1e-3)
    assert sim.warnings == []
    with pytest.warns(UserWarning, match="joint limits of hinge are not held by pfaff.rollout"):
        pfaff.rollout(sys, None, None, np.zeros((1, 2, sys.nv)), dt=1e-3, limits=False)


@pytest.mark.parametrize("grid", ["event", "fixed"])
def test_a_crossing_in_the_run_s_last_step_is_located(grid):
    """simulate calls ``stop`` at every sample but the last: a run that ends one step past
    the stop still locates the impact there (the closed-form time to 1e-10) and ends on
    the bound, not past it (the free run ends past it: what an unlocated end leaves)."""
    dt, t_hit = 1e-3, _fall_time(-0.5)
    t_end = np.ceil(t_hit / dt) * dt
    s, run = _run([JointLimit("hinge", -0.5, 2.0)], t_end, dt)
    if grid == "fixed":
        run = simulate_limited(
            s.cset, s.q0, s.v0, t_end, s.limits, SimOptions(dt=dt, progress=False), grid=grid
        )
    assert [e.kind for e in run.events][:1] == ["impact"]
    assert abs(run.events[0].t - t_hit) < 1e-10
    assert run.trajectory.arrays()["q"][:, 0].min() >= -0.5 - 1e-12
    free = simulate(s.cset, s.q0, s.v0, t_end, SimOptions(dt=dt, progress=False))
    assert free.arrays()["q"][-1, 0] < -0.5 - 1e-6
