"""Tests of pfaff.simulate: conservation, closed-form constraint forces, integrator
agreement, sampled-data control, error handling, and the slider-crank passing
through its singular configurations (Aghili Sec. 5.4, 6, 8).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from pfaff.constraints import ConstraintSet, PointOnCircle, PointOnPlane
from pfaff.mechanism import SliderCrankChain, planar_particle
from pfaff.simulate import (
    InitialStateError,
    SimOptions,
    SimulationError,
    project_state,
    simulate,
)

M_P, G, RHO = 0.7, 9.81, 0.8  # particle mass, gravity, circle radius
TH0, W0 = 0.3, 2.5  # initial angle and angular velocity


def _circle(mass=M_P):
    mech = planar_particle(mass, gravity=(0.0, -G, 0.0))
    return ConstraintSet(mech, [PointOnCircle("particle", radius=RHO)])


def _circle_state():
    c, s = np.cos(TH0), np.sin(TH0)
    return RHO * np.array([c, s]), RHO * W0 * np.array([-s, c])


@pytest.fixture(scope="module")
def circle_run():
    cs = _circle()
    q0, v0 = _circle_state()
    # potential zero at the circle's bottom: E > 0 throughout
    opt = SimOptions(dt=2e-3, potential_offset=-M_P * G * RHO)
    return simulate(cs, q0, v0, 2.0, opt)


def test_particle_on_circle_conserves_energy_and_constraint(circle_run):
    arr = circle_run.arrays()
    assert len(circle_run) == 1001 and circle_run.steps == 1000
    assert arr["t"][-1] == pytest.approx(2.0, abs=1e-12)
    E = arr["energy"]
    assert np.abs(E - E[0]).max() <= 1e-8 * M_P * G * RHO
    assert E[0] == pytest.approx(0.5 * M_P * (RHO * W0) ** 2 + M_P * G * RHO * (1 + np.sin(TH0)))
    assert circle_run.max_constraint_violation() <= 1e-12
    assert np.abs(np.linalg.norm(arr["q"], axis=1) - RHO).max() <= 1e-12
    assert circle_run.max_velocity_constraint_violation() <= 1e-12
    # the particle really moves around (more than a quarter turn)
    ang = np.unwrap(np.arctan2(arr["q"][:, 1], arr["q"][:, 0]))
    assert np.ptp(ang) > np.pi / 2


def test_particle_on_circle_force_matches_aghili_closed_form(circle_run):
    """F = f_perp + m |v|^2 / rho eps_perp with f = (0, -m g) (Aghili Sec. 5.4)."""
    arr = circle_run.arrays()
    q, v, F = arr["q"], arr["v"], arr["F"]
    eps = q / np.linalg.norm(q, axis=1)[:, None]
    f = np.array([0.0, -M_P * G])
    F_ref = (eps @ f)[:, None] * eps + M_P * (np.sum(v * v, axis=1) / RHO)[:, None] * eps
    assert np.abs(F - F_ref).max() <= 1e-9 * M_P * G
    # multipliers: F = A^T lambda with A = q^T / rho
    lam = arr["lambda"][:, 0]
    assert np.abs(lam[:, None] * eps - F).max() <= 1e-9 * M_P * G
    assert np.abs(F).max() > M_P * G  # centripetal part is present


def test_particle_on_circle_matches_pendulum_ode(circle_run):
    """Independent witness: rho theta'' = -g cos theta integrated by SciPy."""
    sol = solve_ivp(
        lambda t, y: [y[1], -G / RHO * np.cos(y[0])],
        (0.0, 2.0),
        [TH0, W0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
    )
    th, w = sol.y[0, -1], sol.y[1, -1]
    arr = circle_run.arrays()
    q_ref = RHO * np.array([np.cos(th), np.sin(th)])
    v_ref = RHO * w * np.array([-np.sin(th), np.cos(th)])
    assert np.abs(arr["q"][-1] - q_ref).max() <= 1e-6
    assert np.abs(arr["v"][-1] - v_ref).max() <= 1e-6


def test_energy_balance_with_constant_force():
    """E(t) - E(0) = work of tau + energy of the drift corrections; for a constant
    Cartesian force the work is also f . (q(t) - q(0))."""
    cs = _circle()
    q0, v0 = _circle_state()
    f = np.array([1.0, 0.5])
    traj = simulate(cs, q0, v0, 2.0, SimOptions(dt=2e-3), tau=f)
    arr = traj.arrays()
    E, W, C = arr["energy"], arr["work"], arr["correction_energy"]
    scale = M_P * G * RHO
    assert np.abs(W).max() > 0.2 * scale  # 1.78 J of 5.49 J
    assert np.abs(E - E[0] - W - C).max() <= 1e-8 * scale
    assert np.abs(W - (arr["q"] - q0) @ f).max() <= 1e-9 * scale
    assert np.all(arr["tau"] == f)
    # recording every 7th step samples the same trajectory
    sub = simulate(cs, q0, v0, 2.0, SimOptions(dt=2e-3, record_every=7), tau=f)
    assert len(sub) == 1000 // 7 + 2  # k = 0, 7, ..., 994 and the last step
    assert np.abs(sub.arrays()["q"] - arr["q"][[*range(0, 1000, 7), 1000]]).max() == 0.0


def test_rk4_and_dop853_agree():
    cs = _circle()
    q0, v0 = _circle_state()
    a = simulate(cs, q0, v0, 1.0, SimOptions(dt=2e-3))
    b = simulate(cs, q0, v0, 1.0, SimOptions(dt=1e-2, integrator="DOP853"))
    qa, qb = a.arrays()["q"][-1], b.arrays()["q"][-1]
    va, vb = a.arrays()["v"][-1], b.arrays()["v"][-1]
    assert a.t[-1] == pytest.approx(b.t[-1], abs=1e-12)
    assert np.abs(qa - qb).max() <= 1e-6
    assert np.abs(va - vb).max() <= 1e-6
    assert np.abs(qa - q0).max() > 0.1  # they did move


def test_sampled_data_controller_zero_order_hold():
    cs = _circle()
    q0, v0 = _circle_state()
    dt, n = 1e-3, 50
    calls = []

    def controller(t, snap):
        calls.append(t)
        # a torque that changes at every call
        return np.array([np.sin(40 * t) + 0.01 * len(calls), np.cos(40 * t)])

    opt = SimOptions(dt=dt, control_dt=4 * dt)
    traj = simulate(cs, q0, v0, n * dt, opt, controller=controller)
    # called at t = 0, 4 dt, 8 dt, ..., 48 dt: 13 times, never in between
    assert len(calls) == n // 4 + 1
    assert np.abs(np.array(calls) - 4 * dt * np.arange(len(calls))).max() <= 1e-12
    tau = traj.arrays()["tau"]
    assert tau.shape == (n + 1, 2)
    # zero-order hold: sample k carries the torque of the call at 4 * (k // 4)
    for k in range(n + 1):
        j = k // 4
        tj = calls[j]
        expected = [np.sin(40 * tj) + 0.01 * (j + 1), np.cos(40 * tj)]
        assert np.array_equal(tau[k], expected), k
    # piecewise constant: changes only at multiples of 4
    changes = np.flatnonzero(np.any(np.diff(tau, axis=0) != 0, axis=1)) + 1
    assert changes.tolist() == list(range(4, n + 1, 4))


@pytest.mark.parametrize("dt", [0.0, -1e-3, float("nan")])
def test_non_positive_dt_rejected(dt):
    cs = _circle()
    q0, v0 = _circle_state()
    with pytest.raises(ValueError, match="dt"):
        simulate(cs, q0, v0, 1.0, SimOptions(dt=dt))


def test_bad_options_rejected():
    cs = _circle()
    q0, v0 = _circle_state()
    with pytest.raises(ValueError, match="control_dt"):
        simulate(cs, q0, v0, 1.0, SimOptions(dt=1e-3, control_dt=1e-4))
    with pytest.raises(ValueError, match="rk4"):
        simulate(cs, q0, v0, 1.0, SimOptions(integrator="euler"))
    with pytest.raises(ValueError, match="t_end"):
        simulate(cs, q0, v0, 0.0)


def test_initial_state_that_cannot_be_projected():
    """At the circle's centre A = q^T/|q| is undefined: Newton cannot reach the circle."""
    cs = _circle()
    with np.errstate(invalid="ignore", divide="ignore"):
        with pytest.raises(InitialStateError, match="Phi"):
            simulate(cs, np.zeros(2), np.zeros(2), 0.1, SimOptions(dt=1e-3))


def test_initial_state_is_projected_onto_the_manifold():
    cs = _circle()
    q0 = np.array([0.5, 0.9])  # |q0| = 1.03, off the circle of radius 0.8
    v0 = np.array([0.3, 0.4])
    q, v = project_state(cs, q0, v0)
    assert np.linalg.norm(q) == pytest.approx(RHO, abs=1e-12)
    # minimum-norm Newton steps move along the radius: direction preserved
    assert np.abs(q / RHO - q0 / np.linalg.norm(q0)).max() <= 1e-12
    assert abs(q @ v) <= 1e-12
    # M = m I: the metric projection is the orthogonal one
    e = q / RHO
    assert np.abs(v - (v0 - (v0 @ e) * e)).max() <= 1e-12


def test_initial_velocity_projection_uses_the_inertia_metric():
    """Slider-crank (M far from a multiple of I): the corrected velocity is the
    admissible one of least kinetic-energy change, from the KKT system of
    min 0.5 (w - v)^T M (w - v) s.t. A w = 0 -- not the orthogonal projection."""
    mech = SliderCrankChain(m=1.5, l=0.7, g=9.81)
    cs = ConstraintSet(mech, [PointOnPlane("slider", [0.0, 1.0, 0.0])])
    q1 = 0.6
    q0 = np.array([q1, -2 * q1])  # on the manifold: s1 + s12 = 0
    v0 = np.array([1.0, 1.0])
    q, v = project_state(cs, q0, v0)
    assert np.abs(q - q0).max() <= 1e-15
    snap = mech.compute(q, v0, cs.frames)
    A = cs.evaluate(snap).A
    K = np.block([[snap.M, A.T], [A, np.zeros((1, 1))]])
    w = np.linalg.solve(K, np.concatenate([snap.M @ v0, [0.0]]))[:2]
    assert np.abs(A @ v).max() <= 1e-13
    assert np.abs(v - w).max() <= 1e-12
    P = np.eye(2) - A.T @ A / (A @ A.T)
    assert np.abs(P @ v0 - w).max() > 0.05  # the orthogonal projection differs


def test_nan_controller_raises_with_time_step_and_partial_trajectory():
    cs = _circle()
    q0, v0 = _circle_state()
    dt = 1e-3

    def controller(t, snap):
        return np.array([np.nan, 0.0]) if t >= 0.05 - 1e-12 else np.zeros(2)

    with pytest.raises(SimulationError) as exc:
        simulate(cs, q0, v0, 0.2, SimOptions(dt=dt), controller=controller)
    msg = str(exc.value)
    assert "t = 0.05 s" in msg and "step 50" in msg and "controller torque" in msg
    traj = exc.value.trajectory
    assert traj is not None and len(traj) == 50
    assert np.abs(traj.t - dt * np.arange(50)).max() <= 1e-12
    arr = traj.arrays()
    assert np.all(np.isfinite(arr["q"])) and arr["q"].shape == (50, 2)
    assert traj.max_constraint_violation() <= 1e-12


def test_slider_crank_passes_singular_configurations():
    """Aghili Sec. 8: SliderCrankChain + slider on the x axis, from q = (0, 0),
    v = (6, -12) (A v = l [2, 1] v = 0). The crank turns past q1 = pi/2 + k pi, where
    A -> 0 and the KKT matrix is singular; the projection method carries on."""
    mech = SliderCrankChain(m=1.0, l=1.0, g=9.81)
    cs = ConstraintSet(mech, [PointOnPlane("slider", [0.0, 1.0, 0.0])])
    traj = simulate(cs, np.zeros(2), np.array([6.0, -12.0]), 3.0, SimOptions(dt=5e-3))
    arr = traj.arrays()
    assert traj.steps == 600
    c1 = np.cos(arr["q"][:, 0])
    crossings = np.count_nonzero(np.sign(c1[1:]) != np.sign(c1[:-1]))
    assert crossings >= 2
    # the samples come within half a step (|q1'| dt / 2 < 5e-3) of the singularity
    assert np.abs(c1).min() < 5e-3
    assert arr["sigma_min"].min() < 1e-2
    assert traj.max_constraint_violation() <= 1e-10
    assert traj.max_velocity_constraint_violation() <= 1e-9
    assert traj.energy_drift_rel() <= 1e-4
    assert arr["energy"][0] == pytest.approx(18.0, rel=1e-12)  # 0.5 v^T M v at q = 0


def test_qr_stages_give_the_svd_trajectory(monkeypatch):
    """The RK4 stages take the certified QR (pfaff.linalg.full_row_rank_qr) where A
    has full row rank: the trajectory through the slider-crank's singular
    configurations is the one of SVD-only stages, to rounding."""
    import pfaff.dynamics as dyn

    mech = SliderCrankChain(m=1.0, l=1.0, g=9.81)
    cs = ConstraintSet(mech, [PointOnPlane("slider", [0.0, 1.0, 0.0])])

    def run():  # the NumPy engine's stages (the core's own are tests/parity's)
        opt = SimOptions(dt=5e-3, engine="numpy")
        return simulate(cs, np.zeros(2), np.array([6.0, -12.0]), 1.0, opt)

    taken = []
    qr = dyn.full_row_rank_qr

    def counted(A, tol):
        taken.append(qr(A, tol))
        return taken[-1]

    monkeypatch.setattr(dyn, "full_row_rank_qr", counted)
    with_qr = run().arrays()
    monkeypatch.setattr(dyn, "full_row_rank_qr", lambda A, tol: None)
    svd_only = run().arrays()
    assert sum(f is not None for f in taken) == 3 * 200  # every stage of every step
    for k in ("q", "v", "lambda", "sigma_min"):
        np.testing.assert_allclose(with_qr[k], svd_only[k], rtol=0, atol=1e-10)


def test_simulation_runs_blas_on_one_thread_and_restores_the_pool():
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    seen = []

    def ctrl(t, snap):
        seen.append(blas_threads())
        return np.zeros(2)

    cs = _circle()
    q0, v0 = _circle_state()
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        simulate(cs, q0, v0, 0.01, SimOptions(dt=2e-3), controller=ctrl)
        assert blas_threads() == before
    assert seen and all(n == [1] * len(before) for n in seen)


def test_stop_event_ends_the_run_and_t0_shifts_time():
    """A falling particle stopped when it reaches y = 0.5 (free fall: t = sqrt(2 * 0.5 / g))."""
    from pfaff.mechanism import planar_particle

    mech = planar_particle(1.0)
    cs = ConstraintSet(mech, [])
    tr = simulate(
        cs,
        np.array([0.0, 1.0]),
        np.zeros(2),
        5.0,
        SimOptions(dt=1e-3),
        stop=lambda t, s, c: s.q[1] <= 0.5,
        t0=3.0,
    )
    a = tr.arrays()
    t_hit = np.sqrt(2 * 0.5 / 9.81)
    assert tr.stopped_at == a["t"][-1]
    assert abs(tr.stopped_at - 3.0 - t_hit) <= 1e-3 + 1e-12
    assert a["q"][-1, 1] <= 0.5 < a["q"][-2, 1]


def test_controller_period_holds_for_runs_started_at_t0():
    """With t0 > 0 the controller is still sampled every control_dt (not every step)."""
    from pfaff.mechanism import planar_particle

    mech = planar_particle(1.0)
    cs = ConstraintSet(mech, [])
    calls = []

    def ctrl(t, snap):
        calls.append(t)
        return np.zeros(2)

    simulate(cs, np.zeros(2), np.zeros(2), 5.1, SimOptions(dt=1e-3, control_dt=4e-3), ctrl, t0=5.0)
    assert len(calls) == 26  # samples at 5.000, 5.004, ..., 5.100
    np.testing.assert_allclose(np.diff(calls), 4e-3, atol=1e-9)
