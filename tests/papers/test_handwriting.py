"""Arimoto Sec. 4-5: the hybrid law (eq. 42), its monitors, and the two scenarios."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from pfaff import dynamics
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.control import arimoto as ar
from pfaff.geometry.metric import christoffel_fd, quadratic
from pfaff.scenarios import get_scenario
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.record import StepRecord
from pfaff.systems import handwriting as hw

K, ZETA, C, LAM = 10.0, math.sqrt(0.5), 0.03, 1.0
TARGET = (0.24, -0.02)


def run(name: str, **over):
    sc = get_scenario(name)
    return sc.func(sc.resolve(over))


@pytest.fixture(scope="module")
def arm():
    mech = hw.handwriting_arm()
    cset = ConstraintSet(mech, [PointOnPlane(hw.TIP, (0, 0, 1), 0.0)])
    return mech, cset


def _state_on_plane(mech, seed=0):
    """A posture on the plane and a velocity tangent to it."""
    rng = np.random.default_rng(seed)
    q = hw.posture_on_plane(0.21, -0.05, 0.0, -1.95)
    w = -mech.compute(q, np.zeros(4), [hw.TIP]).frames[hw.TIP].J[2]
    v = rng.normal(size=4)
    return q, v - w * (w @ v) / (w @ w)


def _closed_loop(mech, q, v):
    ctrl = ar.ArimotoHybrid(hw.TIP, TARGET, K, ZETA, C, LAM)
    snap = mech.compute(q, v, [hw.TIP])
    tau = ctrl(0.0, StepRecord.at(ConstraintSet(mech), snap))
    Jz = snap.frames[hw.TIP].J[2:3]
    drift = snap.frames[hw.TIP].drift[2:3]
    sol = dynamics.solve_constrained(snap.M, snap.h, tau, Jz, drift)
    return ctrl, snap, sol.a, sol.lam


def test_energy_rate_eq44_pointwise(arm):
    """dE/dt from the dynamics (Mdot by finite differences) = -c|q'|^2 - zeta sqrt(k)|x'|^2."""
    mech, _ = arm
    q, v = _state_on_plane(mech)
    ctrl, snap, a, _ = _closed_loop(mech, q, v)
    x, J, w, dx, xd = ctrl.task_terms(snap)
    h = 1e-6
    Mdot = (mech.compute(q + h * v, v).M - mech.compute(q - h * v, v).M) / (2 * h)
    dE = v @ snap.M @ a + 0.5 * v @ Mdot @ v + K * dx @ xd
    expect = ar.energy_rate(v, xd, K, ZETA, C)
    assert expect < 0
    assert dE == pytest.approx(expect, rel=1e-7)
    # without the damping the rate would differ: the test can fail
    assert abs(ar.energy_rate(v, xd, K, ZETA, 0.0) - dE) > 1e-3 * abs(dE)


def test_delta_lambda_eq62_vs_dynamics_and_christoffel(arm):
    """eq. (62) matches the multiplier of the projection dynamics; its Gamma term matches
    finite-difference Christoffel symbols (geometry layer)."""
    mech, _ = arm
    q, v = _state_on_plane(mech, seed=3)
    ctrl, snap, a, lam = _closed_loop(mech, q, v)
    x, J, w, dx, xd = ctrl.task_terms(snap)
    f = ZETA * math.sqrt(K) * xd + K * dx
    wdot_v = -float(snap.frames[hw.TIP].drift[2])
    dl = ar.delta_lambda(snap.M, snap.h, snap.g, v, J, w, wdot_v, f, C)
    assert dl == pytest.approx(-lam[0] - LAM, rel=1e-9, abs=1e-12)
    G1 = christoffel_fd(mech, q)
    assert np.allclose(quadratic(G1, v), snap.h - snap.g, rtol=1e-6, atol=1e-10)


def test_monitors_along_a_run(arm):
    """E and W_alpha non-increasing, x -> x_d, lambda -> lambda_d on a 2 s run."""
    mech, _ = arm
    cset = ConstraintSet(mech, [PointOnPlane(hw.TIP, (0, 0, 1), 0.0, unilateral=True)])
    q0 = hw.posture_on_plane(0.2, -0.06, 0.0, -1.9)
    ctrl = ar.ArimotoHybrid(hw.TIP, TARGET, K, ZETA, C, LAM)
    tr = simulate(cset, q0, np.zeros(4), 2.0, SimOptions(dt=5e-4), controller=ctrl)
    a = tr.arrays()
    m = hw.monitor(mech, cset, ctrl, a, 0.0)
    # E: the integral of eq. (44) along the run (trapezoid) reproduces its change
    rate = [
        ar.energy_rate(v, J @ v, K, ZETA, C)
        for v, J in zip(
            a["v"],
            (mech.compute(q, v, [hw.TIP]).frames[hw.TIP].J[:2] for q, v in zip(a["q"], a["v"])),
        )
    ]
    dE_int = np.trapezoid(rate, a["t"])
    assert m["E"][-1] - m["E"][0] == pytest.approx(dE_int, rel=2e-3)
    assert np.diff(m["W"]).max() <= 1e-12
    assert m["W"][-1] < 1e-5 * m["W"][0]
    assert np.linalg.norm(m["x"][-1, :2] - ctrl.target) < 1e-4
    assert m["g_M"] <= 1e-3
    # W_alpha is positive definite (eq. 55) with the paper's alpha
    assert m["W"].min() > 0


def test_equilibrium_satisfies_eq62(arm):
    """On EM1 at rest: dlambda = 0 exactly, so lambda = lambda_d (eq. 62)."""
    mech, _ = arm
    for psi in (-2.3, -1.9, -1.4):
        q = hw.posture_on_plane(*TARGET, 0.0, psi)
        ctrl, snap, a, lam = _closed_loop(mech, q, np.zeros(4))
        x = snap.frames[hw.TIP].p
        assert np.allclose(x, [*TARGET, 0.0], atol=1e-12)  # EM1 (eq. 46)
        assert -lam[0] == pytest.approx(LAM, abs=1e-10)
        assert np.abs(a).max() < 1e-8  # an equilibrium
        J3 = snap.frames[hw.TIP].J[:3]
        assert ar.distance_to_em1(snap.M, J3, ar.em1_residual(x, TARGET, 0.0)) < 1e-12


def test_distance_to_em1_first_order(arm):
    """The first-order distance equals |dq|_M for a displacement M-orthogonal to EM1."""
    mech, _ = arm
    q = hw.posture_on_plane(*TARGET, 0.0, -1.9)
    snap = mech.compute(q, np.zeros(4), [hw.TIP])
    J3 = snap.frames[hw.TIP].J[:3]
    r = np.array([1e-5, -2e-5, 0.0])
    dq = np.linalg.solve(snap.M, J3.T @ np.linalg.solve(J3 @ np.linalg.solve(snap.M, J3.T), r))
    x1 = mech.compute(q + dq, None, [hw.TIP], dynamics=False).frames[hw.TIP].p
    s1 = mech.compute(q + dq, np.zeros(4), [hw.TIP])
    d = ar.distance_to_em1(s1.M, s1.frames[hw.TIP].J[:3], ar.em1_residual(x1, TARGET, 0.0))
    assert d == pytest.approx(math.sqrt(dq @ snap.M @ dq), rel=1e-3)


def test_p_phi_and_sigma_bounds():
    w = np.array([1.0, -2.0, 0.5, 0.3])
    P = ar.p_phi(w)
    assert np.allclose(P @ w, 0) and np.allclose(P @ P, P)
    J = np.array([[1.0, 0.2, 0.0, 0.1], [0.0, 1.0, 0.3, 0.0]])
    sm, sM = ar.sigma_bounds(J, w)
    assert 0 < sm <= sM
    assert sM == pytest.approx(np.linalg.svd(J, compute_uv=False)[0] ** 2)


def test_gain_checker_flags_violations():
    base = dict(g_M=5e-4, l_0=0.2, sigma_m=0.04, sigma_M=0.09, dx0=0.05)
    names = lambda **kw: " ".join(ar.violated_conditions(**{**base, **kw}))  # noqa: E731
    assert "(57b)" in names(k=3.0, zeta=ZETA, c=C)  # 1 + zeta k = 3.12 > 3
    assert "(57b)" not in names(k=10.0, zeta=ZETA, c=C)
    assert "(60b)" in names(k=10.0, zeta=ZETA, c=0.001)
    assert "(60b)" not in names(k=10.0, zeta=ZETA, c=C)
    assert "(56a)" in names(k=10.0, zeta=ZETA, c=C, g_M=0.01)
    assert "(57a)" in names(k=10.0, zeta=ZETA, c=C, dx0=0.4)
    # (57c) as printed fails with the paper's alpha = k / (2 sigma_M) ...
    assert "(57c)" in names(k=10.0, zeta=ZETA, c=C)
    # ... and holds for a small alpha
    assert "(57c)" not in names(k=10.0, zeta=ZETA, c=C, alpha=1.0)


def test_bad_inputs():
    with pytest.raises(ValueError, match="outside the reachable part of the plane"):
        run("handwriting-robot", xd=0.6, sweep=False, qstar=False)
    with pytest.raises(ValueError, match="outside the reachable"):
        run("panda-surface", dx_target=1.0)
    for lam in (0.0, -1.0):
        with pytest.raises(ValueError, match="unilateral"):
            run("handwriting-robot", lambda_d=lam, sweep=False, qstar=False)
        with pytest.raises(ValueError, match="unilateral"):
            ar.ArimotoHybrid(hw.TIP, TARGET, K, ZETA, C, lam)


def test_violated_gains_warn_and_run():
    with pytest.warns(UserWarning, match=r"\(57b\) 1 \+ zeta k <= k"):
        res = run("handwriting-robot", k=3.0, t_end=0.3, sweep=False, qstar=False)
    assert res.status == "ok" and res.metrics["gain_conditions_violated"] >= 2
    assert "(57b)" in res.notes


def test_handwriting_robot_figures():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (57c): see test_gain_checker_flags_violations
        res = run("handwriting-robot", sweep=False)
    m = res.metrics
    assert m["final_position_error"] <= 1e-4
    assert m["final_force_error"] <= 1e-3
    assert m["lyapunov_increase_max"] <= 1e-9
    assert m["final_distance_to_em1"] <= 1e-4
    assert res.trajectory.max_constraint_violation() <= 1e-10
    assert m["lyapunov_decay_rate"] >= m["lyapunov_decay_rate_paper_bound"]
    assert m["eq62_max_error"] < 1e-8
    # q* is the nearest point of EM1: no closer than q_inf
    assert m["riemannian_distance_q0_qstar"] <= m["riemannian_distance_q0_qinf"] + 1e-9
    assert m["riemannian_distance_qinf_qstar"] > 0
    assert len(res.polylines_xy) == 1 and res.polylines_xy[0].shape[1:] == (5, 2)


def test_panda_surface_figures():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Panda is not of the paper's scale (56)
        res = run("panda-surface")
    m = res.metrics
    assert m["final_position_error"] <= 1e-3
    assert m["final_force_error"] <= 1e-2
    assert res.trajectory.max_constraint_violation() <= 1e-10
    assert m["min_contact_force"] > 0
    assert res.scene3d is not None and len(res.scene3d["q"]) == len(res.trajectory.arrays()["t"])


@pytest.mark.parametrize("robot", ["handwriting", "panda"])
def test_held_forces_are_the_law(robot):
    """``ArimotoHybrid.held_forces`` (what the compiled core samples and holds) sums to
    the law's torque (eq. 42) at 20 random states of the arm and of the Panda, to 1e-12
    relative; wrong input: elements built for another lambda_d miss it by > 1e-3."""
    from pfaff.mechanism import load_robot
    from pfaff.simulate.forces import ForceSet

    if robot == "panda":
        mech, frame, point = load_robot("panda"), "panda_hand_tcp", None
    else:
        mech, frame, point = hw.handwriting_arm(), hw.TIP, (0.0, 0.0, 0.01)
    ctrl = ar.ArimotoHybrid(frame, TARGET, K, ZETA, C, LAM, point=point)
    other = ar.ArimotoHybrid(frame, TARGET, K, ZETA, C, 1.1 * LAM, point=point)
    rng = np.random.default_rng(5)
    q0 = rng.uniform(-1.0, 1.0, mech.nq)
    held = ForceSet(mech, ctrl.held_forces(q0))
    wrong = ForceSet(mech, other.held_forces(q0))
    for _ in range(20):
        q, v = rng.uniform(-2.0, 2.0, mech.nq), rng.normal(0.0, 1.0, mech.nv)
        snap = mech.compute(q, v, held.frames)
        tau = ctrl(0.0, StepRecord.at(ConstraintSet(mech), snap))
        Q = held.evaluate(0.0, snap)[0]
        assert np.abs(Q - tau).max() <= 1e-12 * np.abs(tau).max()
        assert np.abs(wrong.evaluate(0.0, snap)[0] - tau).max() > 1e-3
