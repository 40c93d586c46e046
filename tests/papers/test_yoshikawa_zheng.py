"""Yoshikawa & Zheng (IJRR 1993): grasp matrices, object constraints, eq. (31), the
decoupled closed loop (eq. 38'-40) and the yz-* scenarios."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfaff import dynamics as dyn
from pfaff.control.yoshikawa_zheng import check_whole_system, whole_system_matrix
from pfaff.errors import ParameterError
from pfaff.manipulation.grasp import (
    GraspError,
    GraspPoint,
    check_force_closure,
    contact_constraint_matrix,
    decompose_hand_force,
    grasp_matrices,
    grasp_matrix,
    grasp_rates,
    internal_force_basis,
    orient_squeeze,
    skew,
)
from pfaff.manipulation.objects import (
    ObjectConstraints,
    euler_zyz_R,
    euler_zyz_T,
    euler_zyz_T_rate,
    linear_function,
    planar_contact_surface,
    velocity_map,
    velocity_map_rate,
)
from pfaff.scenarios.runner import execute
from pfaff.simulate.record import StepRecord
from pfaff.systems import yz_planar as yz

S2 = math.sqrt(2.0)


def _setup():
    return yz.YZPlanarPlant(0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14, contact_h=0.01)


# ------------------------------------------------------------------ grasp (eq. 8-12)


def test_two_pins_in_the_plane_by_hand():
    s = 0.12
    S, W, W_S, r = grasp_matrices(yz.planar_grasp(s), np.eye(2), plane=True)
    np.testing.assert_allclose(W_S, [[1, 0, 1, 0], [0, 1, 0, 1], [0, -s / 2, 0, s / 2]])
    A = orient_squeeze(internal_force_basis(W_S), S, r)
    np.testing.assert_allclose(A[:, 0], np.array([1, 0, -1, 0]) / S2, atol=1e-15)
    check_force_closure(W_S)
    # turned object: S_i = diag(R, 1) [I_2 0]^T, r_i = R c_i
    th = 0.3
    R = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    S, W, W_S, r = grasp_matrices(yz.planar_grasp(s), R, plane=True)
    np.testing.assert_allclose(S[:2, :2], R)
    np.testing.assert_allclose(r[1][:2], R @ [s / 2, 0.0])


def test_3d_grasp_types_and_moment():
    assert contact_constraint_matrix("rigid").shape == (6, 6)
    np.testing.assert_array_equal(contact_constraint_matrix("frictional_point"), np.eye(6)[:, :3])
    np.testing.assert_array_equal(
        contact_constraint_matrix("frictionless_point")[:, 0], np.eye(6)[2]
    )
    r1, f = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, -0.5])
    F = grasp_matrix([r1]) @ np.concatenate([f, np.zeros(3)])
    np.testing.assert_allclose(F, np.concatenate([f, np.cross(r1, f)]))
    np.testing.assert_allclose(skew(r1) @ f, np.cross(r1, f))
    # three frictional fingers on a triangle: force-closure, d - 6 = 3 internal forces
    g = [GraspPoint("frictional_point", np.array(p)) for p in ([1, 0, 0], [0, 1, 0], [0, 0, 1])]
    S, W, W_S, _ = grasp_matrices(g, np.eye(3))
    check_force_closure(W_S)
    assert internal_force_basis(W_S).shape == (9, 3)
    with pytest.raises(GraspError, match="unknown grasp type"):
        contact_constraint_matrix("glue")


def test_not_force_closure_is_named():
    # frictionless pins pushing along the line between them cannot carry y or the moment
    g = yz.planar_grasp(0.12, "frictionless_point")
    _, _, W_S, _ = grasp_matrices(g, np.eye(2), plane=True)
    with pytest.raises(GraspError, match=r"not force-closure: rank W_S = 1 < 3"):
        check_force_closure(W_S)
    # two rigid grasps in 3D at one point: fine; two frictional points: the moment about
    # their line is missing
    g = [GraspPoint("frictional_point", np.array([x, 0.0, 0.0])) for x in (-1.0, 1.0)]
    _, _, W_S, _ = grasp_matrices(g, np.eye(3))
    with pytest.raises(GraspError, match="rank W_S = 5 < 6"):
        check_force_closure(W_S)


def test_force_decomposition_reconstructs():
    rng = np.random.default_rng(0)
    g = [
        GraspPoint("rigid", rng.normal(size=3)),
        GraspPoint("frictional_point", rng.normal(size=3)),
    ]
    S, W, W_S, _ = grasp_matrices(g, euler_zyz_R(rng.normal(size=6)))
    F_hS = rng.normal(size=9)
    split = decompose_hand_force(W_S, F_hS)
    np.testing.assert_allclose(split.manipulating + split.internal, F_hS, atol=1e-12)
    np.testing.assert_allclose(W_S @ split.internal, 0.0, atol=1e-12)
    np.testing.assert_allclose(W_S @ split.manipulating, split.F, atol=1e-12)
    A = internal_force_basis(W_S)
    np.testing.assert_allclose(A.T @ A, np.eye(3), atol=1e-12)


def test_grasp_rates_match_finite_differences():
    g = yz.planar_grasp(0.12)
    th, w, h = 0.4, 1.7, 1e-6

    def SW(a):
        R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        S, W, _, _ = grasp_matrices(g, R, plane=True)
        return S, W

    R = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    Sd, Wd = grasp_rates(g, R, w, plane=True)
    (Sp, Wp), (Sm, Wm) = SW(th + w * h), SW(th - w * h)
    np.testing.assert_allclose(Sd, (Sp - Sm) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(Wd, (Wp - Wm) / (2 * h), atol=1e-8)


def test_setup_pin_matrices_and_fixed_A_S_match_the_generic_grasp():
    su, rng = _setup(), np.random.default_rng(7)
    for th, w in rng.normal(size=(4, 2)):
        R = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
        S, W, W_S, r = grasp_matrices(su.grasps, R, plane=True)
        Sd, Wd = grasp_rates(su.grasps, R, w, plane=True)
        for mine, ref in zip(su.pin_matrices(th, w), (S, W, Sd, Wd)):
            np.testing.assert_allclose(mine, ref, atol=1e-15)
        A = orient_squeeze(internal_force_basis(W_S), S, r)
        np.testing.assert_allclose(su.A_S, A, atol=1e-12)
        np.testing.assert_allclose(W_S @ su.A_S, 0.0, atol=1e-15)


# ------------------------------------------------------------------ object constraints


def test_euler_T_is_the_angular_velocity_map():
    rng = np.random.default_rng(1)
    r, rd, h = rng.normal(size=6), rng.normal(size=6), 1e-6
    Rd = (euler_zyz_R(r + h * rd) - euler_zyz_R(r - h * rd)) / (2 * h)
    W = Rd @ euler_zyz_R(r).T
    w = np.array([W[2, 1], W[0, 2], W[1, 0]])
    np.testing.assert_allclose(euler_zyz_T(r)[3:, 3:] @ rd[3:], w, atol=1e-8)
    Td = (euler_zyz_T(r + h * rd) - euler_zyz_T(r - h * rd)) / (2 * h)
    np.testing.assert_allclose(euler_zyz_T_rate(r, rd), Td, atol=1e-8)
    # velocity_map (eq. 4) dispatches on the size of r: eq. (7) in 3D ...
    np.testing.assert_array_equal(velocity_map(r), euler_zyz_T(r))
    Td = (velocity_map(r + h * rd) - velocity_map(r - h * rd)) / (2 * h)
    np.testing.assert_allclose(velocity_map_rate(r, rd), Td, atol=1e-8)
    # ... and the identity in the plane, where theta' is the angular velocity
    rp = np.array([0.1, -0.2, 0.7])
    np.testing.assert_array_equal(velocity_map(rp), np.eye(3))
    np.testing.assert_array_equal(velocity_map_rate(rp, rd[:3]), np.zeros((3, 3)))


def test_contact_surface_E_F_and_rate():
    p = planar_contact_surface((0.02, 0.01), (0.0, 1.0), 0.14)
    r, rd, h = np.array([0.01, 0.12, 0.3]), np.array([0.2, -0.1, 1.5]), 1e-6
    gfd = np.array([(p.f(r + e) - p.f(r - e)) / (2 * h) for e in np.eye(3) * h])
    np.testing.assert_allclose(p.gradient(r), gfd, atol=1e-8)
    Hd = (p.gradient(r + h * rd) - p.gradient(r - h * rd)) / (2 * h)
    np.testing.assert_allclose(p.hessian(r) @ rd, Hd, atol=1e-8)
    su = _setup()
    with pytest.raises(ValueError, match="not independent"):
        type(su.constrained)([p], [linear_function((0, 1, 0)), linear_function((0, 0, 1))], 3).E(
            np.array([0.0, 0.13, 0.0])
        )


# ------------------------------------------------------------------ eq. (31) and the loop


def _state(su, rng):
    q = su.initial_q(np.array([0.0, 0.13, 0.0]))
    snap0 = su.mech.compute(q, None, su.contact.frames)
    ev = su.contact.evaluate(snap0)
    N = dyn.projection(ev.A, np.zeros(ev.A.shape[0]), with_null=True).N
    v = N @ rng.normal(size=N.shape[1]) * 0.2
    return q, v


def _plant_terms(su, q, v, tau):
    snap = su.mech.compute(q, v, (*su.contact.frames, "arm1_tip", "arm2_tip"))
    ev = su.contact.evaluate(snap)
    sol = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
    return snap, sol.a, sol.lam


def test_whole_system_model_eq31_matches_the_simulated_plant():
    """K X = B (eq. 31) built from S, W_S, E_F equals pfaff's constrained dynamics."""
    su, rng = _setup(), np.random.default_rng(2)
    q, v = _state(su, rng)
    tau = np.concatenate([rng.normal(size=4) * 0.05, np.zeros(3)])
    snap, a, lam = _plant_terms(su, q, v, tau)
    ctrl = su.controller(lambda t, m: None, mode=1)
    J, Jdqd = ctrl.arm_terms(snap)
    r, rd = q[4:], v[4:]
    g = su.grasp_state(su.object_at(r, rd), 1)
    W_S = g.W @ g.S
    M = snap.M[:4, :4]
    I_B = np.diag([yz.OBJECT_MASS, yz.OBJECT_MASS, yz.OBJECT_INERTIA])
    K = whole_system_matrix(M, J, g.S, W_S, g.T, I_B, g.E_F)
    assert check_whole_system(M, J, g.S, W_S, g.T, I_B, g.E_F) > 0
    b3 = (g.W_rate @ g.S + g.W @ g.S_rate).T @ rd - (g.S_rate.T @ J @ v[:4] + g.S.T @ Jdqd)
    B = np.concatenate([tau[:4] - snap.h[:4], np.zeros(3), b3, -g.E_F_rate @ rd])
    X = np.linalg.solve(K, B)
    np.testing.assert_allclose(X[:4], a[:4], atol=1e-9)
    np.testing.assert_allclose(X[4:7], a[4:], atol=1e-9)
    F_hS = g.S.T @ np.array([lam[0], lam[1], 0.0, lam[2], lam[3], 0.0])
    np.testing.assert_allclose(X[7:11], F_hS, atol=1e-9)
    np.testing.assert_allclose(X[11], -lam[4], atol=1e-9)


def test_K_singular_is_named():
    M, J = np.eye(4), np.zeros((6, 4))
    J[0, 0] = J[1, 1] = J[3, 2] = 1.0  # arm 2 cannot move along y: S^T J rank 3
    su = _setup()
    g = su.grasp_state(su.object_at(np.zeros(3), np.zeros(3)), 1)
    with pytest.raises(ValueError, match="S\\^T J is rank-deficient"):
        check_whole_system(M, J, g.S, g.W @ g.S, g.T, np.eye(3), g.E_F)


@pytest.mark.parametrize("mode", [0, 1])
def test_exact_model_decouples_eq_39_38_40(mode):
    """With the exact model the plant realises r_P'' = u1, f_F = u2, f_IS = u3."""
    su, rng = _setup(), np.random.default_rng(3 + mode)
    q, v = _state(su, rng)
    cset = su.contact if mode else su.free
    ref = (
        (lambda t, m: (np.array([0.01, 0.02]), np.zeros(2), np.array([0.3, -1.0]),
                       np.array([0.6]), np.array([1.1])))
        if mode else
        (lambda t, m: (np.array([0.01, 0.13, 0.02]), np.zeros(3), np.array([0.3, 0.2, -1.0]),
                       np.zeros(0), np.array([1.1])))
    )  # fmt: skip
    ctrl = su.controller(ref, mode=mode)
    snap = su.mech.compute(q, v, (*cset.frames, "arm1_tip", "arm2_tip"))
    tau = ctrl(0.0, StepRecord.at(cset, snap, sensors={"lambda": np.zeros(cset.dim)}))
    ev = cset.evaluate(snap)
    sol = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
    a, lam = sol.a, sol.lam
    u = ctrl.last
    g = su.grasp_state(su.object_at(q[4:], v[4:]), mode)
    rP_dd = g.E_P @ a[4:] + g.E_P_rate @ v[4:]
    np.testing.assert_allclose(rP_dd, u["u1"], atol=1e-8)
    f_IS = g.A_S.T @ g.S.T @ np.array([lam[0], lam[1], 0.0, lam[2], lam[3], 0.0])
    np.testing.assert_allclose(f_IS, u["u3"], atol=1e-10)
    if mode:
        np.testing.assert_allclose(-lam[4], u["u2"][0], atol=1e-10)


# ------------------------------------------------------------------ scenarios


def test_yz_constrained_figures_and_force_rates():
    run = execute("yz-constrained")
    s, m = run.summary, run.summary["metrics"]
    assert s["status"] == "ok"
    assert m["max_position_error"] <= 1e-4
    assert m["max_orientation_error"] <= 1e-4
    assert m["max_constraint_force_error"] <= 1e-3
    assert m["max_internal_force_error"] <= 1e-3
    assert s["max_constraint_violation"] <= 1e-10
    assert m["min_contact_force"] > 0.45
    # eq. (45)-(46) sampled: e_{k+1} = (1 - K dt) e_k
    assert m["constraint_force_decay_rate"] == pytest.approx(100.0, rel=0.05)
    assert m["internal_force_decay_rate"] == pytest.approx(70.0, rel=0.05)
    assert m["internal_force_decay_rate_exp"] == pytest.approx(
        -math.log(1 - 0.14) / 2e-3, rel=0.02
    )


def test_yz_free_figures():
    run = execute("yz-free", {"probe": False})
    s, m = run.summary, run.summary["metrics"]
    assert s["status"] == "ok"
    assert m["max_position_error"] <= 1e-4
    assert s["max_constraint_violation"] <= 1e-10
    assert m["max_internal_force_error"] <= 1e-3


def test_yz_free_internal_force_error_is_centred_over_each_hold():
    """Under a held torque the force drifts by ~1.1e-3 N per 2 ms hold at the fastest y.

    Integrating only the end-of-hold reading zeroes the error at the end of each hold and
    leaves the whole drift at its start; the trapezoid rule centres it (half the drift).
    With dt = 1 ms the record also holds the mid-hold forces: the bound holds there too.
    """
    end = execute("yz-free", {"probe": False, "integral_rule": "end"}).summary["metrics"]
    fine = execute("yz-free", {"probe": False, "dt": 1e-3}).summary["metrics"]
    assert end["max_internal_force_error"] > 1e-3
    assert fine["max_internal_force_error"] <= 1e-3
    assert fine["max_internal_force_error"] / end["max_internal_force_error"] == pytest.approx(
        0.5, abs=0.05
    )


def test_model_error_is_absorbed_by_the_servo():
    exact = execute("yz-free", {"probe": False}).summary["metrics"]
    off = execute(
        "yz-free", {"probe": False, "model_mass_error": 1.0, "model_inertia_error": 1.0}
    ).summary["metrics"]
    assert off["max_position_error"] > 1.5 * exact["max_position_error"]
    assert off["max_position_error"] <= 1e-4
    assert off["max_internal_force_error"] <= 1e-2


@pytest.mark.parametrize(
    "name, sets, match",
    [
        ("yz-free", {"spacing": 0.0}, "not force-closure"),
        ("yz-free", {"base_x": 0.4}, "outside the arms' workspace"),
        ("yz-constrained", {"surface_y": 0.5}, "constraint surface y = 0.5 m cannot be reached"),
    ],
)
def test_bad_input(name, sets, match):
    with pytest.raises(ParameterError, match=match):
        execute(name, sets)


def test_yz_contact_impact_switch_release():
    """Task 3: impact at the paper's 0.068 m/s, force control, departure; chained runs."""
    run = execute("yz-contact")
    s, m, a = run.summary, run.summary["metrics"], run.arrays
    assert s["status"] == "ok"
    # the surface sits where the desired y speed (quartic decel, by hand) is 0.068 m/s
    V, ta, tc = 0.025 / (0.4 - 0.1), 0.1, m["contact_time_s"]
    u = (0.4 - tc) / ta
    assert V * (3 * u**2 - 2 * u**3) == pytest.approx(0.068, rel=3e-3)  # lag ~5 um
    assert m["impact_velocity"] == pytest.approx(0.068, rel=2e-3)
    assert tc < m["switch_time_s"] < m["release_time_s"]
    assert m["release_time_s"] == pytest.approx(0.8 - tc, abs=2e-3 + 1e-9)
    assert m["max_constraint_force_error"] <= 5e-3
    assert m["max_position_error_approach"] <= 1e-4
    assert m["min_gap_after_release"] >= -1e-12
    assert s["max_constraint_violation"] <= 1e-10
    # plastic impact: the contact point stops along the normal and kinetic energy is lost
    t, k = a["t"], int(np.searchsorted(a["t"], tc - 1e-12))
    assert np.all(np.diff(t) > 0)
    assert abs(a["v"][k, 5]) <= 1e-9 < a["v"][k - 1, 5]
    assert a["kinetic"][k] < a["kinetic"][k - 1]
    # forces: zero while free, at the threshold or above in contact, positive until release
    fF, gap = a["constraint_force"], a["gap"]
    contact = (t >= tc) & (t < m["release_time_s"])
    np.testing.assert_array_equal(fF[~contact], 0.0)
    assert fF[contact].min() > 0.2
    assert np.abs(gap[contact]).max() <= 1e-12 and gap[t < tc].min() > 0


@pytest.mark.parametrize("name", ["yz-free", "yz-contact"])
def test_not_force_closure_grasp_fails_through_cli(name, tmp_path, capsys):
    """Frictionless pins push only along the line between them: rank W_S = 1 < 3."""
    from pfaff.cli import main

    with pytest.raises(GraspError, match="not force-closure: rank W_S = 1 < 3"):
        yz.YZPlanarPlant(0.12, [(-0.08, 0.0), (0.08, 0.0)], grasp_kind="frictionless_point")
    out = tmp_path / "run"
    assert main(["run", name, "--out", str(out), "--set", "grasp_type=frictionless_point"]) == 2
    err = capsys.readouterr().err
    assert "two frictionless_point grasps" in err
    assert "not force-closure: rank W_S = 1 < 3" in err
    assert not (out / "summary.json").exists()
    # the same grasp, spaced 0: coincident pins cannot carry the moment
    assert main(["run", name, "--out", str(out), "--set", "spacing=0"]) == 2
    assert "not force-closure: rank W_S = 2 < 3" in capsys.readouterr().err


def test_linear_rows_are_evaluated_once_and_equal_the_generic_ones():
    """ObjectConstraints keeps the rows of linear functions (constant E, zero E'), read-
    only; they equal the rows of the same functions evaluated at each r, and a mixed set
    (a surface that turns with theta) is still evaluated at each r."""
    rng = np.random.default_rng(5)
    cs = [rng.normal(size=3) for _ in range(3)]
    fast = ObjectConstraints([], [linear_function(c) for c in cs], 3)
    slow_fns = [linear_function(c) for c in cs]
    for f in slow_fns:
        f.linear = False
    slow = ObjectConstraints([], slow_fns, 3)
    for _ in range(5):
        r, rd = rng.normal(size=3), rng.normal(size=3)
        np.testing.assert_array_equal(fast.E_P(r), slow.E_P(r))
        np.testing.assert_array_equal(fast.E_P_rate(r, rd), slow.E_P_rate(r, rd))
        assert fast.E_F(r).shape == (0, 3) and fast.E_F_rate(r, rd).shape == (0, 3)
    with pytest.raises(ValueError, match="read-only"):
        fast.E_P(r)[0, 0] = 1.0
    wall = planar_contact_surface((0.0, 0.01), (0.0, 1.0), 0.14)
    mixed = ObjectConstraints([wall], [linear_function((1, 0, 0)), linear_function((0, 0, 1))], 3)
    e0, e1 = mixed.E_F(np.array([0, 0, 0.0])), mixed.E_F(np.array([0, 0, 0.5]))
    assert abs(e1[0, 2] - e0[0, 2]) > 1e-3  # d p / d theta turns with theta
