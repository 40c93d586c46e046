"""Screws, Riemannian submersion and line coordinates (Altafini; Kool), each with a witness."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pfaff.scenarios.redundant_chain  # noqa: F401  (registers redundant-chain)
from pfaff.geometry.lines import (
    generalized_forces,
    joint_frames,
    kinetic_energy,
    kinetic_energy_gradient,
    kool_vs_rnea_max_err,
    line_rates,
    line_vectors,
    link_inertias,
    link_twists,
    subtree_momenta,
)
from pfaff.geometry.screws import (
    body_jacobian,
    body_jacobian_dot_v,
    poe_fk,
    poe_vs_pinocchio_fk_err,
    screw_chain,
    twist_exp,
)
from pfaff.geometry.submersion import (
    SingularPostureError,
    bracket_defect,
    follow_loop,
    horizontal_lift,
    horizontal_lift_matrix,
    inverses,
    lift_closed_form,
    task_jacobian,
    vertical_basis,
)
from pfaff.linalg import pinv
from pfaff.mechanism import PlanarLink, planar_chain
from pfaff.scenarios import execute
from pfaff.scenarios.redundant_chain import LINKS_3R, Q0_3R, W_OTHER_3R

TCP = "panda_hand_tcp"


@pytest.fixture(scope="module")
def arm():
    return planar_chain(LINKS_3R, gravity=(0.0, 0.0, 0.0), name="arm")


def _postures(model, n, seed=0):
    rng = np.random.default_rng(seed)
    lo = np.maximum(model.lowerPositionLimit, -np.pi)
    hi = np.minimum(model.upperPositionLimit, np.pi)
    return rng.uniform(lo, hi, (n, model.nq))


# -- product of exponentials (Altafini eq. (2), (4)) --------------------------------------
def test_twist_exp_matches_pin_exp6():
    rng = np.random.default_rng(1)
    for _ in range(10):
        xi, th = rng.normal(size=6), rng.normal()
        ref = pin.exp6(pin.Motion(xi * th)).homogeneous
        assert np.abs(twist_exp(xi, th) - ref).max() < 1e-13
    xi = np.r_[0.3, -0.2, 0.5, 0, 0, 0]  # prismatic: pure translation
    assert np.allclose(twist_exp(xi, 2.0)[:3, 3], 2.0 * xi[:3], atol=1e-15)


def test_poe_fk_and_body_jacobian_vs_pinocchio(panda):
    e_fk, e_j = poe_vs_pinocchio_fk_err(panda.model, TCP, _postures(panda.model, 25))
    assert e_fk < 1e-12 and e_j < 1e-12
    # the witness can fail: a perturbed posture gives a visibly different pose
    chain = screw_chain(panda.model, TCP)
    q = _postures(panda.model, 1)[0]
    assert np.abs(poe_fk(chain, q + 1e-3) - poe_fk(chain, q)).max() > 1e-4


def test_body_jacobian_dot_v_vs_pinocchio_acceleration(panda):
    model, data = panda.model, panda.model.createData()
    chain, fid = screw_chain(model, TCP), model.getFrameId(TCP)
    rng = np.random.default_rng(2)
    for q in _postures(model, 5):
        v = rng.normal(size=7)
        pin.forwardKinematics(model, data, q, v, np.zeros(7))
        ref = pin.getFrameAcceleration(model, data, fid, pin.ReferenceFrame.LOCAL).vector
        assert np.abs(body_jacobian_dot_v(chain, q, v) - ref).max() < 1e-12
        # finite-difference witness of J^b itself: g^-1 dg/dq_i
        g, h = poe_fk(chain, q), 1e-6
        Jb = body_jacobian(chain, q)
        for i in (0, 3, 6):
            dq = np.zeros(7)
            dq[i] = h
            dg = (poe_fk(chain, q + dq) - poe_fk(chain, q - dq)) / (2 * h)
            T = np.linalg.solve(g, dg)
            col = np.r_[T[:3, 3], T[2, 1], T[0, 2], T[1, 0]]
            assert np.abs(col - Jb[:, i]).max() < 1e-8


# -- submersion: vertical / horizontal spaces and the lift (Altafini Sec. II-III) ----------
@pytest.mark.parametrize("which", ["arm", "panda"])
def test_lift_is_horizontal_maps_onto_X_and_equals_closed_form(which, arm, panda):
    mech, frame, rows = (arm, "arm_tip", [0, 1]) if which == "arm" else (panda, TCP, slice(None))
    task = task_jacobian(mech, frame, rows)
    rng = np.random.default_rng(3)
    for q in (Q0_3R,) if which == "arm" else _postures(panda.model, 5):
        J, M, _ = task(q)
        X = rng.normal(size=J.shape[0])
        v = horizontal_lift(J, M, X)
        V = vertical_basis(J)
        assert V.shape == (J.shape[1], J.shape[1] - J.shape[0])
        assert np.abs(J @ V).max() < 1e-12
        assert np.abs(J @ v - X).max() < 1e-10  # maps onto X
        assert np.abs(V.T @ M @ v).max() < 1e-10 * np.abs(M).max()  # M-orthogonal to the fiber
        assert np.abs(horizontal_lift_matrix(J, M) - lift_closed_form(J, M)).max() < 1e-10
        # least kinetic energy among all solutions of J v = X (the lift's variational meaning)
        w = v + V @ rng.normal(size=V.shape[1])
        assert v @ M @ v < w @ M @ w


def test_theorem_iii2_lift_equals_pinv_iff_metric_is_identity(arm, panda):
    for mech, frame, rows, q in (
        (arm, "arm_tip", [0, 1], Q0_3R),
        (panda, TCP, slice(None), _postures(panda.model, 1)[0]),
    ):
        J, M, _ = task_jacobian(mech, frame, rows)(q)
        Jp = pinv(J)
        n = J.shape[1]
        assert np.abs(horizontal_lift_matrix(J, np.eye(n)) - Jp).max() < 1e-10
        assert np.abs(horizontal_lift_matrix(J, 3.7 * np.eye(n)) - Jp).max() < 1e-10
        diff = np.abs(horizontal_lift_matrix(J, M) - Jp).max() / np.abs(Jp).max()
        assert diff > 0.05  # the real inertia: Theorem III.2 does not hold
        # a metric that keeps ker J invariant (M = c I on ker J and on its complement) does
        V = vertical_basis(J)
        P = V @ V.T
        Minv = 2.0 * P + 0.5 * (np.eye(n) - P)
        assert np.abs(horizontal_lift_matrix(J, np.linalg.inv(Minv)) - Jp).max() < 1e-10


def test_singular_posture_raises(arm, panda):
    J, M, _ = task_jacobian(arm, "arm_tip", [0, 1])(np.zeros(3))  # stretched arm
    with pytest.raises(SingularPostureError, match="singular value"):
        horizontal_lift_matrix(J, M)
    J, M, _ = task_jacobian(panda, TCP, slice(None))(np.zeros(7))
    with pytest.raises(ValueError, match="undefined"):
        horizontal_lift(J, M, np.ones(6))


# -- repeatability: Lie brackets and loop drift (Altafini Sec. III, Shamir-Yomdin) ---------
def test_bracket_defect_nonzero_and_small_loop_holonomy_matches_it(arm):
    task = task_jacobian(arm, "arm_tip", [0, 1])
    r, T = 1e-3, 1.0
    w = 2 * np.pi / T
    xdot = lambda t: r * w * np.array([-np.sin(w * t), np.cos(w * t)])  # noqa: E731
    for name, G in inverses(W_OTHER_3R).items():
        b = bracket_defect(task, G, Q0_3R)
        assert b > 1e-2, name  # not involutive: not repeatable
        _, q = follow_loop(task, G, xdot, Q0_3R, T, 100)
        drift = np.linalg.norm(q[-1] - q[0])
        # holonomy of a small loop = bracket x enclosed area + O(r^3)
        assert drift / (np.pi * r**2) == pytest.approx(b, rel=0.02), name


def test_loop_drift_is_geometric_not_numerical(arm):
    task = task_jacobian(arm, "arm_tip", [0, 1])
    r, T = 0.1, 1.0
    w = 2 * np.pi / T
    xdot = lambda t: r * w * np.array([-np.sin(w * t), np.cos(w * t)])  # noqa: E731
    G = inverses(W_OTHER_3R)["pinv"]
    _, qa = follow_loop(task, G, xdot, Q0_3R, T, 100)
    _, qb = follow_loop(task, G, xdot, Q0_3R, T, 200)
    da, db = np.linalg.norm(qa[-1] - qa[0]), np.linalg.norm(qb[-1] - qb[0])
    assert db > 1e-3 and abs(da - db) < 1e-6 * db  # converged in the step
    assert np.abs(task(qb[-1])[2] - task(Q0_3R)[2]).max() < 1e-10  # the tool closed its loop


# -- Kool's line coordinates --------------------------------------------------------------
def test_kool_generalized_forces_vs_rnea(panda, arm):
    rng = np.random.default_rng(4)
    for mech, frame in ((panda, TCP), (arm, "arm_tip")):
        model = mech.model
        chain = screw_chain(model, frame)
        states = [
            (q, rng.normal(size=model.nv), rng.normal(size=model.nv)) for q in _postures(model, 10)
        ]
        assert kool_vs_rnea_max_err(model, chain, states) < 1e-9
    # gravity matters in the check: rnea at rest is the gravity torque, not zero
    q = _postures(panda.model, 1)[0]
    tau = generalized_forces(panda.model, screw_chain(panda.model, TCP), q, 0 * q, 0 * q)
    assert np.abs(tau["tau"]).max() > 1.0


def test_kool_momenta_and_energy_gradient(panda):
    model = panda.model
    chain = screw_chain(model, TCP)
    data = model.createData()
    rng = np.random.default_rng(5)
    q, qd = _postures(model, 1)[0], rng.normal(size=7)

    def parts(x):
        fr = joint_frames(model, chain, x)
        L = line_vectors(model, fr)
        T = link_twists(L, qd)
        return L, T, link_inertias(model, fr)

    L, T, N = parts(q)
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    # eq. (8) p = M qd and eq. (2) E = qd^T M qd / 2
    p = generalized_forces(model, chain, q, qd, 0 * qd)["p"]
    assert np.abs(p - M @ qd).max() < 1e-12
    assert kinetic_energy(N, T) == pytest.approx(0.5 * qd @ M @ qd, rel=1e-13)
    # the analytical dE/dq vs central differences of E
    g = kinetic_energy_gradient(line_rates(L, T), subtree_momenta(N, T))
    h = 1e-6
    fd = [
        (kinetic_energy(*parts(q + h * e)[2:], parts(q + h * e)[1])
         - kinetic_energy(*parts(q - h * e)[2:], parts(q - h * e)[1])) / (2 * h)
        for e in np.eye(7)
    ]  # fmt: skip
    assert np.abs(g - fd).max() < 1e-7
    assert np.abs(g).max() > 0.1


# -- the scenario ----------------------------------------------------------------------
def test_redundant_chain_scenario_reaches_its_figures():
    run = execute("redundant-chain")
    m = run.summary["metrics"]
    assert run.summary["status"] == "ok"
    assert m["lift_residual"] <= 1e-10
    assert m["lift_vs_pinv_identity_metric"] <= 1e-10
    assert m["kool_vs_rnea_max_err"] <= 1e-9
    assert m["poe_vs_pinocchio_fk_err"] <= 1e-12
    assert m["euler_poincare_residual"] <= 1e-10
    assert m["euler_poincare_paper_form_rel"] > 1e-2  # eq. (18) as printed does not hold
    assert m["lift_vs_pinv_max_diff"] > 0.1
    for name in ("lift", "pinv", "other"):
        assert m[f"loop_drift_{name}"] > 1e-3
        assert m[f"loop_task_closure_{name}"] < 1e-8
    arrays = run.arrays
    assert arrays["q"].shape == (401, 3) and np.isfinite(arrays["v"]).all()
    for plot in ("joint_drift_3r", "joint_drift_panda"):  # drawn against the trajectory's t
        series = run.result.plots[plot]["series"]
        assert set(series) == {"lift", "pinv", "other"}
        assert all(len(x) == len(arrays["t"]) for x in series.values())
    assert run.result.polylines_xy[0].shape[1:] == (5, 2)


def test_screw_chain_refuses_unknown_frame_and_tree():
    arm = planar_chain([PlanarLink(0.5, 1.0)], gravity=(0, 0, 0))
    with pytest.raises(ValueError, match="unknown frame"):
        screw_chain(arm.model, "nope")
