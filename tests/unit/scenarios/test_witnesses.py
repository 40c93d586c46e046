"""Witnesses that can fail: each is small on the correct run and large
when a deliberately wrong controller or torque is fed in."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff import dynamics as D
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.control import ComputedTorque, hybrid_torque, pidc_torque, task_acceleration
from pfaff.linalg import null_space
from pfaff.scenarios import get_scenario
from pfaff.scenarios import planar_arm_force as paf
from pfaff.scenarios.witnesses import force_before_sample, least_norm_torque, min_norm_gap
from pfaff.simulate import SimOptions, simulate


def _arm(**overrides):
    p = get_scenario("planar-arm-force").resolve({"dt": 4e-3, **overrides})
    return p, *paf.build(p)


class Wrapped:
    """The scenario's controller with a torque ``extra(snap)`` added to its output."""

    def __init__(self, ctrl, extra):
        self.ctrl, self.extra = ctrl, extra
        self.frames, self.needs_sensors = ctrl.frames, ctrl.needs_sensors

    @property
    def signals(self):
        return self.ctrl.signals

    def __call__(self, t, rec):
        return self.ctrl(t, rec) + self.extra(rec.snap)


def _gap(extra=None, t_end=0.3):
    p, mech, cset, ctrl, q0 = _arm()
    c = ctrl if extra is None else Wrapped(ctrl, lambda s: extra(cset, s))
    opt = SimOptions(dt=p["dt"], control_dt=p["dt"])
    a = simulate(cset, q0, np.zeros(2), t_end, opt, controller=c).arrays()
    return min_norm_gap(ctrl, a), a


def test_least_norm_torque_is_the_pidc_and_the_hybrid_torque_at_many_states():
    """Two implementations: SciPy's constrained least squares vs. eq. 45 and eq. 45 + 51."""
    p, mech, cset, ctrl, q0 = _arm()
    rng = np.random.default_rng(11)
    J_rows = np.array([[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    for _ in range(25):
        q = q0 + rng.uniform(-0.4, 0.4, 2)
        snap = mech.compute(q, rng.normal(size=2), cset.frames)
        ev = cset.evaluate(snap)
        proj = D.projection(ev.A, ev.drift, with_null=True)
        J = J_rows @ snap.frames["arm_tip"].J
        rhs = rng.normal(size=1)
        u_p, ok = task_acceleration(J, np.zeros(1), proj.N, proj.Cv, rhs)
        assert ok
        scale = 1.0 + np.abs(snap.M @ u_p + snap.h).max()
        tau, infeasible = least_norm_torque(snap.M, snap.h, ev.A, ev.drift, J, rhs)
        assert infeasible <= 1e-12 * (1 + np.abs(rhs).max())
        np.testing.assert_allclose(
            tau, pidc_torque(snap.M, snap.h, proj.P, u_p), atol=1e-10 * scale
        )
        lam = rng.normal(size=1) * 5
        tau, _ = least_norm_torque(snap.M, snap.h, ev.A, ev.drift, J, rhs, lam)
        hyb = hybrid_torque(snap.M, snap.h, proj, u_p, ev.A.T @ lam)
        np.testing.assert_allclose(tau, hyb, atol=1e-10 * (scale + 5))


def test_min_norm_gap_small_on_the_hybrid_controller():
    gap, a = _gap()
    assert gap <= 1e-9  # N m; torques here are ~10 N m


@pytest.mark.parametrize(
    "name, extra",
    [
        # in N(A)^perp: the motion is unchanged, the contact is pressed 1 N harder
        ("constraint-space torque", lambda cset, s: cset.evaluate(s).A[0] * -1.0),
        # in N(A): changes the motion
        ("null-space-of-A torque", lambda cset, s: 0.2 * null_space(cset.evaluate(s).A)[:, 0]),
    ],
)
def test_min_norm_gap_catches_an_added_torque(name, extra):
    gap, a = _gap(extra)
    assert gap >= 0.1, name  # the added torques are 0.2 N m and |A| ~ 0.3 m x 1 N


def test_min_norm_gap_catches_a_controller_without_projection_and_a_random_torque():
    p, mech, cset, ctrl, q0 = _arm()
    opt = SimOptions(dt=p["dt"], control_dt=p["dt"])
    line = ConstraintSet(mech, [PointOnPlane("arm_tip", (0.0, 1.0, 0.0), p["line_y"])])
    base = ComputedTorque(line, ctrl.task, ctrl.reference, kp=p["kp"], kd=p["kd"])
    a = simulate(line, q0, np.zeros(2), 0.3, opt, controller=base).arrays()
    a["lambda_u"] = np.zeros((len(a["t"]), 1))  # the baseline commands no force
    assert min_norm_gap(ctrl, a) >= 0.1
    # the former identity held for any torque (5.7e-14 for random torques); this does not
    rng = np.random.default_rng(2)
    gap, a = _gap()
    a["tau"] = a["tau"] + rng.normal(size=a["tau"].shape)
    assert min_norm_gap(ctrl, a) >= 0.1


def test_force_before_sample_is_the_force_of_the_held_torque():
    """KKT from the recorded state and the held torque vs. the simulator's own force
    at the next sample when the torque does not change (no controller: tau held)."""
    p, mech, _, ctrl, q0 = _arm()
    cset = ConstraintSet(mech, [PointOnPlane("arm_tip", (0.0, 1.0, 0.0), p["line_y"])])
    opt = SimOptions(dt=p["dt"])
    tau = np.array([2.0, 6.0])
    a = simulate(cset, q0, np.zeros(2), 0.2, opt, tau=tau).arrays()
    pre = force_before_sample(cset, a)
    np.testing.assert_allclose(pre, a["lambda"][1:], atol=1e-9)
    # a different held torque gives a different reading
    a["tau"] = a["tau"] + np.array([0.0, 1.0])
    assert np.abs(force_before_sample(cset, a) - a["lambda"][1:]).min() >= 0.1  # N


# -- passive joints (Aghili Sec. 7.4): the torque the plant receives ---------------------
def _crank(actuated, extra=None, t_end=1.0):
    """The slider-crank-pidc set-up (q1 task, through q1 = pi/2), run directly."""
    from pfaff.control import ProjectedController
    from pfaff.control.references import cosine_swing
    from pfaff.scenarios import slider_crank_pidc as sc
    from pfaff.scenarios.slider_crank import SLIDER_FRAME, build, engine_of

    p = get_scenario("slider-crank-pidc").resolve({})
    _mech, cset = build(p["m"], p["l"], p["g"], p["model"])  # the scenario's default model
    ref = cosine_swing(np.pi / 2, p["amplitude"], p["freq"])
    task, task_ref = sc._task("q1", p["l"], ref, SLIDER_FRAME[p["model"]])
    ctrl = ProjectedController(cset, task, task_ref, kp=p["kp"], kd=p["kd"], actuated=actuated)
    c = ctrl if extra is None else Wrapped(ctrl, lambda s: extra)
    q1 = float(ref(0.0)[0][0]) + p["initial_error"]
    opt = SimOptions(dt=p["dt"], control_dt=p["dt"], engine=engine_of(p["model"]))
    return simulate(cset, np.array([q1, -2 * q1]), np.zeros(2), t_end, opt, controller=c).arrays()


def test_passive_torque_max_reads_the_applied_torque_and_catches_a_loaded_passive_joint():
    from pfaff.scenarios import slider_crank_pidc as sc

    res = sc.slider_crank_pidc({**get_scenario("slider-crank-pidc").resolve({}), "t_end": 1.0})
    a, m = res.trajectory.arrays(), res.metrics
    assert np.cos(a["q"][:, 0]).min() < 0 < np.cos(a["q"][:, 0]).max()  # through q1 = pi/2
    assert m["passive_torque_max"] <= 1e-9  # N m
    assert m["passive_torque_max"] == np.abs(a["tau"][:, 1]).max()  # what the plant received
    np.testing.assert_allclose(a["q"], _crank([0])["q"], rtol=0, atol=1e-12)  # same set-up
    # the same motion as the PIDC with both joints actuated: the torque taken off the
    # rod lies in N(A)^perp (eq. 57-61), so the zero is not bought with the motion
    full = _crank(None)
    assert np.abs(full["q"] - a["q"]).max() < 1e-9  # rad
    assert np.abs(full["tau"][:, 1]).max() > 1.0  # N m: plain PIDC loads the rod joint
    # a controller that puts 0.3 N m on the passive joint is caught
    bad = _crank([0], extra=np.array([0.0, 0.3]))
    assert np.abs(bad["tau"][:, 1]).max() == pytest.approx(0.3, abs=1e-9)


def test_force_before_sample_sees_the_drift_the_samples_hide():
    """At 250 Hz the held torque lets the force drift 3.3e-3 N before each sample, while
    the samples (where the feedforward is exact) show 8.2e-4 N: the metric tells them apart."""
    from pfaff.scenarios import run_scenario

    m = run_scenario("planar-arm-force", {"dt": "4e-3", "t_end": "1.6", "baseline": "false"})
    m = m["metrics"]
    assert m["max_force_error_after"] <= 1e-3
    assert m["max_force_error_before_sample"] >= 2.5e-3  # N


def test_min_norm_gap_on_the_panda_catches_a_constraint_space_torque():
    from pfaff.scenarios import panda_table as pt

    p = get_scenario("panda-table").resolve({})
    gaps = []
    for push in (0.0, 2.0):  # N along the table normal, through A^T
        mech, cset, ctrl, q0 = pt.build(p)
        c = Wrapped(ctrl, lambda s, push=push, cs=cset: -push * cs.evaluate(s).A[0])
        opt = SimOptions(dt=p["dt"], control_dt=p["dt"])
        a = simulate(cset, q0, np.zeros(7), 0.2, opt, controller=c).arrays()
        gaps.append(min_norm_gap(ctrl, a))
    assert gaps[0] <= 1e-9  # N m; the Panda's torques are ~20 N m
    assert gaps[1] >= 0.1
