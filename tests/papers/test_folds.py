"""Through folds of the constraint manifold: rows of parallelograms whose
reduced ODE is a 1-DOF pendulum, the Newton correction stopped on its step in q,
the branch check of the adaptive integrators, and the fold metrics."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from where import MODELS

from pfaff.constraints import ConstraintSet
from pfaff.constraints.mjcf_equality import equality_constraints
from pfaff.mechanism import PinocchioMechanism
from pfaff.mechanism.mjcf import read_mjcf
from pfaff.scenarios.common import fold_crossings, sign_changes
from pfaff.scenarios.parallelogram_chain import (
    branch_state,
    parallelogram_chain,
    reduced_energy,
    reduced_rk4,
    reduced_solution,
)
from pfaff.scenarios.runner import execute
from pfaff.simulate import SimOptions, SimulationError, newton_project, simulate
from pfaff.simulate.assembly import assemble
from pfaff.simulate.correction import position_scale

TH0, W0 = 0.2, -3.0  # swings through the folds theta = 0 and theta = -pi


@pytest.mark.parametrize("n", [1, 2, 10])
def test_reduced_ode_matches_the_model_on_the_branch(n):
    """T and V of the Pinocchio model on the branch equal J w^2/2 + K g l sin(theta)
    (the reduced ODE's Lagrangian), at many states; the branch closes every loop."""
    cs = parallelogram_chain(n)
    mech = cs.mechanism
    z = None
    for th, w in zip(np.linspace(-3.0, 3.0, 13), np.linspace(-2.0, 4.0, 13)):
        q, v = branch_state(n, th, w)
        snap = mech.compute(q, v, cs.frames)
        ev = cs.evaluate(snap)
        assert np.abs(ev.phi).max() <= 1e-14
        assert np.abs(ev.A @ v).max() <= 1e-13
        if z is None:  # the model's potential zero: at theta = 0 reduced V = 0
            z = mech.compute(branch_state(n, 0.0, 0.0)[0]).potential
        E = snap.kinetic + snap.potential - z
        assert E == pytest.approx(float(reduced_energy(n, th, w)), abs=1e-12)


def test_newton_stops_on_its_step_near_a_fold():
    """Near the fold |Phi| < 1e-12 leaves q off the branch by |Phi| / sigma: the
    step criterion brings it back to the round-off resolution 1e-15 / sigma; the
    |Phi|-only rule (step_tol =
    inf, the former criterion) is shown to miss it."""
    cs = parallelogram_chain(1)
    for th in (3e-4, 1e-4, -2e-4):
        q, _ = branch_state(1, th, 0.0)
        # off the branch along the row-space direction of the smallest singular
        # value of A, sigma_min ~ 0.4 |theta|
        _, s, Vt = np.linalg.svd(cs.holonomic_terms_at(q)[1])
        assert s[-1] < 2e-4
        qp = q + 2e-9 * Vt[1]  # Vt[2] spans N(A)
        phi0 = np.abs(cs.holonomic_terms_at(qp)[0]).max()
        assert 1e-15 < phi0 < 1e-12  # the former rule accepts it as it is
        old, _, it_old, _ = newton_project(cs, qp, step_tol=np.inf)
        new, err, it, _ = newton_project(cs, qp)
        off = lambda x: max(abs(x[2] - x[0]), abs(x[0] + x[1]))  # noqa: E731
        assert it_old == 0 and off(old) > 1e-9
        # back to the round-off resolution of Phi near the fold: 1e-15 / sigma
        assert it >= 1 and off(new) <= 1e-15 / s[-1] < 1e-10 and err <= 1e-15


def test_newton_takes_no_step_from_round_off():
    """A state on the branch (|Phi| at round-off): no step, q unchanged."""
    cs = parallelogram_chain(2)
    for th in (1e-5, 0.3, -2.0):
        q, _ = branch_state(2, th, 0.0)
        q1, err, it, _ = newton_project(cs, q)
        assert err <= 1e-15 and it == 0 and np.array_equal(q1, q)


# The convergence mechanisms: crank l = 0.8 m, g = 88 m/s^2, started at
# theta = 0.3 rad, -9 rad/s -- five fold crossings in 1 s. The speed puts the RK4
# truncation error at 5 ms (5e-7 .. 6e-7 rad) well above the floor near folds: a
# state on the level set Phi = c, c ~ 1e-16 (round-off of q), follows its hyperbola
# near a fold, and an RK4 stage that lands at a distance x from the fold sees an
# error ~ c v^2 / x^3: an event when a stage lands within ~5e-5 rad of a fold (1e-11
# .. 1e-8 rad at t_end, depending on the last bits), nothing measurable beyond. Over
# 120 runs (40 nearby parameter sets x N = 1, 2, 10) the three halvings all reached
# 12x in every one of the 86 runs with no stage within FOLD_MARGIN of a fold (least
# ratios 12.3 / 14.3 / 14.7) and failed in 3 of the 34 others (docs/forces-and-folds.md).
# The tests' mechanisms are checked to keep that margin (reduced_rk4 gives the stages exactly),
# and each run is checked to be the reduced ODE's RK4 to round-off.
CONV = {"l": 0.8, "g": 88.0}
TH_C, W_C, T_C = 0.3, -9.0, 1.0
DTS = (5e-3, 2.5e-3, 1.25e-3, 6.25e-4)
FOLD_MARGIN = 1e-4  # rad: no RK4 stage of the tests' runs lands closer to a fold
RK4_AGREEMENT = 5e-11  # rad: the run against the reduced ODE's RK4 (measured <= 7e-12)


def _crossing_steps(q0: np.ndarray) -> np.ndarray:
    """Mask of the steps whose interval contains a fold (sin(theta) changes sign)."""
    s = np.sign(np.sin(q0))
    return s[:-1] != s[1:]


@functools.cache
def _fold_runs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The runs at each dt of DTS against the reduced ODE (DOP853, rtol 1e-13): the
    error at t_end, the largest energy deviation |E(t) - E(0)|, the largest distance
    [rad] of the run's theta from the reduced ODE's RK4 with the same dt (every
    sample), and the least distance of an RK4 stage from a fold, per dt. Each run's
    own samples are checked here: five sign changes of sin(theta); fold_crossings
    counts them (dt <= 1.25 ms: coarser samples may miss the V of sigma_min of 10
    loops); the steps that cross a fold change the energy no more than the other
    steps at 5 and 2.5 ms (no jump above the RK4 truncation level); below, the per-step
    changes reach the energy's round-off (1e-9 J of 635 J for N = 10 at 0.625 ms, in
    crossing and other steps alike) and are bounded absolutely."""
    cs = parallelogram_chain(n, **CONV)
    q0, v0 = branch_state(n, TH_C, W_C)
    q_ref = branch_state(n, *reduced_solution(n, TH_C, W_C, [T_C], **CONV)[-1])[0]
    errs, devs, rk4_dev, margin = [], [], [], []
    for dt in DTS:
        a = simulate(cs, q0, v0, T_C, SimOptions(dt=dt)).arrays()
        th = a["q"][:, 0]
        assert sign_changes(np.sin(th)) == 5
        if dt <= 1.25e-3:
            assert fold_crossings(a["sigma_min"]) == 5
        errs.append(np.abs(a["q"][-1] - q_ref).max())
        E = a["energy"]
        devs.append(np.abs(E - E[0]).max())
        dE = np.abs(np.diff(E))
        cross = _crossing_steps(th)
        if dt >= 2.5e-3:
            assert dE[cross].max() <= dE[~cross].max(), (dt, dE[cross].max(), dE[~cross].max())
        assert dE[cross].max() <= max(dE[~cross].max(), 5e-8)  # round-off [J]
        y, dist = reduced_rk4(n, TH_C, W_C, T_C, dt, **CONV)
        rk4_dev.append(np.abs(th - y[:, 0]).max())
        margin.append(dist)
    return np.array(errs), np.array(devs), np.array(rk4_dev), np.array(margin)


@pytest.mark.parametrize("n", [1, 2, 10])
def test_rk4_is_fourth_order_through_folds(n):
    """Through five fold crossings, the error at t_end falls >= 12x per halving of dt
    over the three halvings from 5 ms, and so does the largest energy deviation (the
    reduced ODE conserves E). The witness beside the exact solution: every sample of
    every run is the reduced ODE's own RK4 with that dt to RK4_AGREEMENT, so the
    error is RK4's truncation and nothing else; no stage lands within FOLD_MARGIN
    of a fold, where round-off of Phi would add an event (the module comment)."""
    errs, devs, rk4_dev, margin = _fold_runs(n)
    assert np.all(margin >= FOLD_MARGIN), margin
    assert np.all(rk4_dev <= RK4_AGREEMENT), rk4_dev
    assert np.all(errs[:-1] / errs[1:] >= 12.0), errs
    assert np.all(devs[:-1] / devs[1:] >= 12.0), devs
    assert errs[0] >= 1e-7  # truncation-dominated at 5 ms


def test_reduced_rk4_sees_a_stage_near_a_fold():
    """The margin check can fail (wrong input): from theta = 0.303 rad a stage at 1.25
    ms lands 2.3e-5 rad from a fold; and the agreement check fails against the RK4 of
    a pendulum with g off by 1e-8 (relative)."""
    _, dist = reduced_rk4(1, 0.303, W_C, T_C, 1.25e-3, **CONV)
    assert dist < FOLD_MARGIN / 2
    y, _ = reduced_rk4(1, TH_C, W_C, T_C, 5e-3, l=CONV["l"], g=CONV["g"] * (1 + 1e-8))
    cs = parallelogram_chain(1, **CONV)
    th = simulate(cs, *branch_state(1, TH_C, W_C), T_C, SimOptions(dt=5e-3)).arrays()["q"][:, 0]
    assert np.abs(th - y[:, 0]).max() > 10 * RK4_AGREEMENT


def test_convergence_check_fails_against_a_wrong_reference():
    """The order check can fail (wrong input): against a reference started 1e-8 rad
    off, the errors stop falling at ~1e-8 rad and the 12x ratio fails."""
    n = 1
    cs = parallelogram_chain(n, **CONV)
    q0, v0 = branch_state(n, TH_C, W_C)
    wrong = branch_state(n, *reduced_solution(n, TH_C + 1e-8, W_C, [T_C], **CONV)[-1])[0]
    errs = np.array(
        [
            np.abs(simulate(cs, q0, v0, T_C, SimOptions(dt=dt)).arrays()["q"][-1] - wrong).max()
            for dt in DTS
        ]
    )
    assert not np.all(errs[:-1] / errs[1:] >= 12.0)


@pytest.mark.parametrize("n", [2, 10])
def test_rank_drops_when_a_sample_lands_on_the_fold(n):
    """Started exactly on the fold (theta = 0): rank 2n - n = n and min_sigma below
    rank_tol at that sample; one step later sigma_min ~ l |theta| again and the rank
    is full."""
    cs = parallelogram_chain(n, **CONV)
    q0, v0 = branch_state(n, 0.0, W_C)
    a = simulate(cs, q0, v0, 0.01, SimOptions(dt=1e-3)).arrays()
    assert a["rank"][0] == n and a["sigma_min"][0] <= 1e-9
    assert np.all(a["rank"][1:] == 2 * n) and a["sigma_min"][1:].min() > 1e-4


def _on_branch_error(a, th0: float = TH0) -> float:
    """Largest distance [rad] of the recorded q from the parallelogram branch."""
    th = reduced_solution(1, th0, W0, a["t"])[:, 0]
    return np.abs(a["q"] - np.array([branch_state(1, x, 0.0)[0] for x in th])).max()


def test_adaptive_integrators_never_leave_the_branch_silently():
    """Without a forced offset, whether RK45 meets the fold with Phi = 0 exactly or at
    a round-off level c != 0 depends on the machine's last bits. Either way the run
    stays on the branch (to 1e-6 rad) or the branch check stops it at a fold,
    having stayed on the branch up to there. Over several starts."""
    cs = parallelogram_chain(1)
    for th0 in (TH0, TH0 + 1e-3, TH0 - 2e-3):
        q0, v0 = branch_state(1, th0, W0)
        try:
            a = simulate(cs, q0, v0, 0.6, SimOptions(dt=5e-3, integrator="RK45")).arrays()
        except SimulationError as exc:
            assert "branch check" in str(exc)
            a = exc.trajectory.arrays()
        assert _on_branch_error(a, th0) <= 1e-6, th0


@pytest.mark.parametrize("offset", [1e-11, -1e-11])
def test_adaptive_integrators_refuse_a_branch_switch(monkeypatch, offset):
    """From a level set Phi = c != 0 (here forced: after every step the state is put on
    the branch, then the rocker turned by ``offset``, |Phi| ~ 4e-12 m) RK45 resolves
    the turn of the level set at the first fold (theta = 0, t = 0.05 s) and leaves on
    the anti-parallelogram branch, conserving the energy: the branch check stops the
    run there. With the check disabled (wrong input: no check) the run leaves the
    branch by O(1) rad, which is what the check is for."""
    import pfaff.simulate.integrator as integrator
    import pfaff.simulate.steppers as steppers

    def off_branch(cset, q, v, opt, svd_fn=None):
        qb, vb = branch_state(1, q[0], v[0])
        qb[2] += offset
        return qb, vb, 0.0, 0, 0.0

    monkeypatch.setattr(integrator, "correct_state", off_branch)
    cs = parallelogram_chain(1)
    q0, v0 = branch_state(1, TH0, W0)
    opt = SimOptions(dt=5e-3, integrator="RK45", engine="numpy")
    with pytest.raises(SimulationError, match=r"t = 0\.05 s.*branch check") as exc:
        simulate(cs, q0, v0, 0.3, opt)
    assert _on_branch_error(exc.value.trajectory.arrays()) <= 1e-9
    monkeypatch.setattr(steppers, "branch_check", lambda *args, **kw: None)
    assert _on_branch_error(simulate(cs, q0, v0, 0.3, opt).arrays()) >= 0.1


def test_fold_crossings_counts_v_shaped_minima_and_rejects_smooth_ones():
    t = np.linspace(0.0, 5.0, 501)
    x = np.sin(2.0 * t + 0.1)
    assert fold_crossings(np.abs(x)) == sign_changes(x) == 3
    # a singular value with smooth minima (no fold: it never reaches zero)
    assert fold_crossings(0.3 + np.abs(x) ** 2) == 0
    assert fold_crossings(np.abs(x) + 0.05) == 0  # a kink that stays away from zero
    assert fold_crossings(np.array([1.0, 0.0])) == 0


def test_four_bar_fold_metrics_from_the_sigma_series():
    """The four-bar parallelogram: fold_crossings from sigma_min equals the sign
    changes of sin(crank angle) (geometry, independent); min_sigma is the smallest
    recorded sigma_min (rank 1 at the start, on the fold). The crank-rocker has
    none; a shuffled series (wrong input) does not give the count."""
    run = execute("four-bar", {"parallelogram": "true", "t_end": "3"})
    m, a = run.summary["metrics"], run.arrays
    assert m["fold_crossings"] == sign_changes(np.sin(a["q"][:, 0])) >= 4
    assert m["min_sigma"] == a["sigma_min"].min() <= 1e-9
    assert a["rank"][0] == 1
    rng = np.random.default_rng(0)
    assert fold_crossings(rng.permutation(a["sigma_min"])) != m["fold_crossings"]
    crank = execute("four-bar", {"t_end": "3"})
    assert crank.summary["metrics"]["fold_crossings"] == 0
    assert crank.summary["metrics"]["min_sigma"] > 0.1


def test_rk4_is_fourth_order_through_folds_from_exact_branch_states(monkeypatch):
    """Diagnosis of the remaining error: with an oracle correction that
    puts the state exactly on the parallelogram branch after every step (q and v
    of the form (x, -x, x): Phi = 0 exactly, not to round-off), RK4 on the
    projected dynamics converges at 4th order through the folds (>= 12x per
    halving over three halvings from 5 ms). With the Newton correction the true
    Phi keeps a round-off value c ~ 1e-16 m, and from Phi = c the projected ODE
    leaves a fold along the level set Phi = c (docs/forces-and-folds.md)."""
    import pfaff.simulate.integrator as integrator

    def oracle(cset, q, v, opt, svd_fn=None):
        qb, vb = branch_state(1, q[0], v[0])
        return qb, vb, 0.0, 0, 0.0

    monkeypatch.setattr(integrator, "correct_state", oracle)  # the NumPy engine's hook
    cs = parallelogram_chain(1)
    q0, v0 = branch_state(1, TH0, W0)
    T = 1.0
    q_ref = branch_state(1, *reduced_solution(1, TH0, W0, [T])[-1])[0]
    errs = []
    for dt in (5e-3, 2.5e-3, 1.25e-3, 6.25e-4):
        a = simulate(cs, q0, v0, T, SimOptions(dt=dt, engine="numpy")).arrays()
        assert fold_crossings(a["sigma_min"]) == 3
        errs.append(np.abs(a["q"][-1] - q_ref).max())
    errs = np.array(errs)
    assert np.all(errs[:-1] / errs[1:] >= 12.0), errs
    assert errs[-1] <= 1e-10


def test_newton_round_off_thresholds_scale_with_the_positions():
    """The leg of tests/models (a free trunk, a knee loop closed by a 3D connect)
    moved 1 km from the origin: its Phi rounds at ~1e-13 there, a level the unit
    thresholds (position_floor 1e-15) take for drift. Scaled by position_scale
    (~1e3) Newton takes no step from such states; with the scale forced to 1 it
    steps on noise, which is what the scaling prevents."""
    mj = read_mjcf(MODELS / "leg.xml")
    mech = PinocchioMechanism(mj.model, "leg")
    cs = ConstraintSet(mech, equality_constraints(mj.equalities))
    rng = np.random.default_rng(3)
    unit_steps = 0
    for _ in range(8):
        q0 = mech.integrate(mj.q0, 0.3 * rng.standard_normal(mech.nv))
        q = assemble(cs, q0).q
        q[:3] += [1e3, -2e2, 5e2]  # the free flyer's translation: still on the manifold
        snap = mech.compute(q, None, cs.frames, dynamics=False)
        assert 0.99e3 <= position_scale(cs, snap) <= 1.01e3
        phi = np.abs(cs.holonomic_terms_at(q)[0]).max()
        assert phi <= 1e-12  # on the manifold, at the round-off of km-sized positions
        q1, err, it, _ = newton_project(cs, q)
        assert it == 0 and np.array_equal(q1, q)
        unit_steps += newton_project(cs, q, scale=1.0)[2]
    assert unit_steps >= 1  # the unit thresholds would have stepped


# The kite four-bar: ground = crank = 0.5 m, coupler = rocker = 1 m; its
# branch through the folds (crank angle 0, crank tip on the rocker pivot) is curved
# in joint space, so RK4 stage points leave it by O(dt^2), and near a fold the
# index-reduced dynamics off the manifold is singular (an acceleration error
# ~ dt^2 v^4 / x^2 at a distance x from it). Reference: energy conservation and a
# quadrature along the branch (pfaff.scenarios.kite), no ODE solver.
KITE_DTS = (4e-3, 2e-3, 1e-3)


@functools.cache
def _kite_errors(theta0: float, engine: str, stage_projection: bool = True) -> np.ndarray:
    from pfaff.scenarios.kite import kite_trial

    errs = []
    for dt in KITE_DTS if stage_projection else KITE_DTS[:1]:
        opt = SimOptions(dt=dt, engine=engine, stage_projection=stage_projection)
        run = kite_trial(theta0, 6.0, 1.0, opt)
        assert run["crank_sign_changes"] >= 3  # the crank turns over: 2 folds
        errs.append(run["error"])
    return np.array(errs)


@pytest.mark.parametrize("engine", ["core", "numpy"])
@pytest.mark.parametrize("theta0", [np.pi / 2, 1.0])
def test_rk4_is_fourth_order_through_the_folds_of_a_curved_branch(theta0, engine):
    """With the stages put on the manifold (SimOptions.stage_projection): >= 12x per
    halving of dt from 4 ms through two folds of the kite, against the reference
    (measured 5.2e-9, 2.9e-10, 1.9e-11 rad from pi/2)."""
    errs = _kite_errors(theta0, engine)
    assert errs[0] <= 1e-7 and np.all(errs[:-1] / errs[1:] >= 12.0), errs


def test_curved_branch_without_stage_projection_is_caught():
    """Wrong input: the stages as they fall (stage_projection=False) -- the index-reduced
    dynamics at stage points off the curved branch near a fold -- leaves an error
    >= 1e3 times larger at 4 ms (measured 2.5e-4 against 5.2e-9 rad), which the
    order check above does not pass."""
    off = _kite_errors(np.pi / 2, "core", stage_projection=False)[0]
    assert off >= 1e3 * _kite_errors(np.pi / 2, "core")[0] and off >= 1e-6


def test_kite_reference_closes_the_loop_and_matches_a_fine_run():
    """The witness itself: kite_branch closes the loop with A q' = 0 at many angles
    through the folds (Phi and the velocity rows at round-off), and its reduced angle
    at t_end agrees with a fine RK4 run (62.5 us) to 1e-9 rad."""
    from pfaff.scenarios.kite import kite_branch, kite_four_bar, kite_reduced_angle

    cs = kite_four_bar()
    for th in np.linspace(-7.0, 7.0, 29):
        q, dq = kite_branch(th)
        ev = cs.evaluate(cs.mechanism.compute(q, dq, cs.frames))
        assert np.abs(ev.phi).max() <= 1e-14 and np.abs(ev.A @ dq).max() <= 1e-13
    th_T = kite_reduced_angle(cs, 1.0, 6.0, 0.3)
    q, dq = kite_branch(1.0)
    fine = simulate(cs, q, 6.0 * dq, 0.3, SimOptions(dt=6.25e-5)).arrays()["q"][-1]
    assert np.abs(np.angle(np.exp(1j * (fine - kite_branch(th_T)[0])))).max() <= 1e-9
    with pytest.raises(ValueError, match="does not turn over"):
        kite_reduced_angle(cs, 1.0, 0.5, 1.0)


def test_a_stage_that_newton_leaves_keeps_its_velocity():
    """correction.on_manifold: states on the parallelogram branch (exact in q) pass at
    many angles, so their stage projection is skipped, also with a velocity 1e-9
    off the tangent (by design: N(A) there is no better than the velocity); 1e-9
    off in q along the row space (wrong input) is caught, and so is a velocity off
    a Pfaffian row (which the velocity projection alone enforces)."""
    from pfaff.constraints import FunctionConstraint
    from pfaff.simulate.correction import on_manifold

    cs = parallelogram_chain(2)
    nv = cs.mechanism.nv
    row = np.zeros((1, nv))
    row[0, 0] = 1.0
    pfaff_row = FunctionConstraint(1, jacobian=lambda q: row, drift=lambda q, v: np.zeros(1))
    with_rolling = ConstraintSet(cs.mechanism, [*cs.constraints, pfaff_row])
    opt = SimOptions()
    for th in np.linspace(-3.0, 3.0, 13):
        q, v = branch_state(2, th, 2.5)
        snap = cs.mechanism.compute(q, v, cs.frames)
        ev = cs.evaluate(snap)
        n = np.linalg.svd(ev.A)[2][0]  # the row space's leading direction
        assert on_manifold(cs, snap, ev, v, opt) and on_manifold(cs, snap, ev, v + 1e-9 * n, opt)
        off = cs.mechanism.compute(q + 1e-9 * n, v, cs.frames)
        assert not on_manifold(cs, off, cs.evaluate(off), v, opt)
        v0 = v - row[0] * v[0]  # on the Pfaffian row
        ev2 = with_rolling.evaluate(snap)
        assert on_manifold(with_rolling, snap, ev2, v0, opt)
        assert not on_manifold(with_rolling, snap, ev2, v0 + 1e-9 * row[0], opt)


@pytest.mark.parametrize(
    "name, over, sigma", [("dual-panda-box", {"probe": "false"}, 0.12), ("yz-free", {}, 0.1)]
)
def test_grasps_meet_no_fold_so_their_stages_need_no_projection(name, over, sigma):
    """The grasp scenarios run with stage_projection=false (their parameter's default):
    sigma_min(A) stays above the bound their parameter states, and the run with the
    stages on the manifold agrees with it to 1e-8 rad (measured 1.4e-10, 7e-12) --
    both are RK4 of the same order; the figures agree to 1e-8 too."""
    off = execute(name, {**over, "stage_projection": "false"})
    on = execute(name, {**over, "stage_projection": "true"})
    assert off.arrays["sigma_min"].min() >= sigma
    assert np.abs(off.arrays["q"] - on.arrays["q"]).max() <= 1e-8
    for key, x in off.summary["metrics"].items():
        if isinstance(x, float) and np.isfinite(x):
            assert x == pytest.approx(on.summary["metrics"][key], abs=1e-8), key
