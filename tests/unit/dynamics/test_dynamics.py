"""Tests of pfaff.dynamics: the three constraint inertia matrices (Aghili eq. 22, 27,
29), constraint force and multipliers, KKT, Pinocchio's constrained dynamics, and the
slider-crank at its singular configurations (Aghili Sec. 8, eq. 69-71).

Independent witnesses: the KKT system where A has full rank (also on the independent
rows of a redundant stack), Pinocchio's ``constraintDynamics`` (proximal/Cholesky
algorithm on the same URDF), the equation of motion itself, and closed forms.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff import dynamics as D
from pfaff.constraints import ConstraintSet, PointOnCircle, PointOnPlane, PointsCoincide
from pfaff.mechanism import SliderCrankChain, planar_particle

VARIANTS = ("Mc", "Mc1", "Mc2")
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def _rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def _state(mech, rng):
    lo, hi = mech.model.lowerPositionLimit, mech.model.upperPositionLimit
    q = lo + (hi - lo) * rng.uniform(0.05, 0.95, mech.nq)
    v = rng.uniform(-1.5, 1.5, mech.nv)
    return q, v


def _panda_contact(panda, seed):
    """Panda with a 3D point contact at the TCP: snapshot, evaluation, torque."""
    rng = np.random.default_rng(seed)
    q, v = _state(panda, rng)
    cs = ConstraintSet(panda, [PointsCoincide("panda_hand_tcp", target=[0.4, 0.0, 0.5])])
    snap = panda.compute(q, v, cs.frames)
    tau = snap.g + rng.uniform(-10.0, 10.0, panda.nv)
    return cs, snap, cs.evaluate(snap), tau


def _spd(rng, n, cond=30.0):
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return Q @ np.diag(np.geomspace(1.0, cond, n)) @ Q.T


def _kkt_ref(M, h, tau, A, drift):
    """Independent solve of [M A^T; A 0][a; lam] = [tau - h; -drift] (full row rank A)."""
    n, m = M.shape[0], A.shape[0]
    K = np.block([[M, A.T], [A, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([tau - h, -drift]))
    return x[:n], x[n:]


# ------------------------------------------------------------ three variants


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_variants_agree_panda_and_match_kkt(panda, seed):
    _, snap, ev, tau = _panda_contact(panda, seed)
    M, h = snap.M, snap.h
    proj = D.projection(ev.A, ev.drift)
    assert proj.rank == 3
    a_ref, lam_ref = _kkt_ref(M, h, tau, ev.A, ev.drift)
    for variant in VARIANTS:
        a = D.direct_dynamics(M, h, tau, proj, variant)
        assert _rel(a, a_ref) <= 1e-10, variant
    for gamma in (0.1, 1.0, 50.0):
        a = D.direct_dynamics(M, h, tau, proj, "Mc2", gamma=gamma)
        assert _rel(a, a_ref) <= 1e-10, gamma
    a_k, lam_k, cond = D.kkt_dynamics(M, h, tau, ev.A, ev.drift)
    assert _rel(a_k, a_ref) <= 1e-12 and _rel(lam_k, lam_ref) <= 1e-12
    assert np.isfinite(cond) and cond > 1.0
    sol = D.solve_constrained(M, h, tau, ev.A, ev.drift)
    assert _rel(sol.lam, lam_ref) <= 1e-9
    for variant in VARIANTS:
        s = D.solve_constrained(M, h, tau, ev.A, ev.drift, variant=variant)
        assert _rel(s.a, a_ref) <= 1e-10 and _rel(s.lam, lam_ref) <= 1e-9


@pytest.mark.parametrize("kind", ["full-rank", "redundant", "tall-redundant"])
def test_variants_agree_random_matrices(kind):
    rng = np.random.default_rng({"full-rank": 10, "redundant": 11, "tall-redundant": 12}[kind])
    n = 6
    for _ in range(5):
        M = _spd(rng, n)
        h, tau = rng.standard_normal(n), rng.standard_normal(n)
        A0, d0 = rng.standard_normal((2, n)), rng.standard_normal(2)
        if kind == "full-rank":
            A, drift = A0, d0
        else:
            # extra rows are combinations of A0 and their drifts the same
            # combinations: the stack is consistent, of rank 2
            T = rng.standard_normal((1 if kind == "redundant" else 5, 2))
            A, drift = np.vstack([A0, T @ A0]), np.concatenate([d0, T @ d0])
        a_ref, lam0 = _kkt_ref(M, h, tau, A0, d0)  # witness: KKT on independent rows
        proj = D.projection(A, drift)
        assert proj.rank == 2
        for variant in VARIANTS:
            a = D.direct_dynamics(M, h, tau, proj, variant)
            assert _rel(a, a_ref) <= 1e-10, variant
        # the certified QR: taken only for full row rank, the same dynamics and forces
        pq = D.projection(A, drift, qr=True)
        assert (pq.Rinv is not None) == (kind == "full-rank") and pq.rank == 2
        a = D.direct_dynamics(M, h, tau, pq)
        assert _rel(a, a_ref) <= 1e-10
        F = D.constraint_force(M, h, tau, pq.P, a)
        if kind == "full-rank":
            assert _rel(D.projected_multipliers(pq, F), lam0) <= 1e-9
        sol = D.solve_constrained(M, h, tau, A, drift)
        # the force is unique even where the multipliers are not
        assert _rel(sol.F, A0.T @ lam0) <= 1e-10
        assert np.abs(A.T @ sol.lam - sol.F).max() <= 1e-10 * np.abs(sol.F).max()


def test_unknown_variant():
    M, P = np.eye(2), np.eye(2)
    with pytest.raises(ValueError, match="Mc1"):
        D.constraint_inertia(M, P, "Mc3")
    proj = D.projection(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(ValueError, match="Mc2"):
        D.direct_dynamics(M, np.zeros(2), np.zeros(2), proj, "bogus")


# ----------------------------------------------------------------- Pinocchio


def _pin_constraint_dynamics(model, cm, q, v, tau):
    cms = pin.StdVec_RigidConstraintModel()
    cms.append(cm)
    cds = pin.StdVec_RigidConstraintData()
    cds.append(cm.createData())
    data = model.createData()
    pin.initConstraintDynamics(model, data, cms, cds)
    a = pin.constraintDynamics(model, data, q, v, tau, cms, cds)
    return np.array(a), np.array(data.lambda_c)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_pinocchio_point_contact(panda, seed):
    _, snap, ev, tau = _panda_contact(panda, seed)
    m = panda.model
    fr = m.frames[m.getFrameId("panda_hand_tcp")]
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, m, fr.parentJoint, fr.placement, LWA)
    a_pin, lam_pin = _pin_constraint_dynamics(m, cm, snap.q, snap.v, tau)
    sol = D.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
    assert _rel(sol.a, a_pin) <= 1e-9
    # Pinocchio's multiplier is the force on the robot: lambda_c = -our lambda
    assert _rel(sol.lam, -lam_pin) <= 1e-9
    assert np.abs(lam_pin).max() > 1.0


def _loop_case(panda, seed, gap=(0.0, 0.0, 0.0)):
    """A TCP point tied to a point of link 3, which coincides at q (plus ``gap``)."""
    rng = np.random.default_rng(seed)
    q, v = _state(panda, rng)
    m = panda.model
    f1, f2 = m.getFrameId("panda_hand_tcp"), m.getFrameId("panda_link3")
    data = m.createData()
    pin.framesForwardKinematics(m, data, q)
    off1 = np.array([0.02, -0.01, 0.05])
    p1 = data.oMf[f1].act(off1)
    off2 = data.oMf[f2].actInv(p1) + np.asarray(gap)  # same world point, in link 3
    cs = ConstraintSet(
        panda, [PointsCoincide("panda_hand_tcp", "panda_link3", point1=off1, point2=off2)]
    )
    snap = panda.compute(q, v, cs.frames)
    ev = cs.evaluate(snap)
    tau = snap.g + rng.uniform(-10.0, 10.0, panda.nv)
    fr1, fr2 = m.frames[f1], m.frames[f2]
    # placements of the two points in their joints' frames; the rotations are
    # irrelevant for a 3D point constraint
    pl1 = fr1.placement * pin.SE3(np.eye(3), off1)
    pl2 = fr2.placement * pin.SE3(pin.utils.rotate("x", 0.3), off2)
    cm = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D, m, fr1.parentJoint, pl1, fr2.parentJoint, pl2, LWA
    )
    return snap, ev, tau, cm


@pytest.mark.parametrize("seed", [3, 4])
def test_matches_pinocchio_loop_constraint(panda, seed):
    """Loop closure between the TCP and link 3 at a state where the points coincide.

    Convention check (Pinocchio 4.1): for CONTACT_3D between two joints,
    constraintDynamics imposes that the *classical* (not spatial) linear
    accelerations of the two contact points are equal, a_1 - a_2 = 0 in world
    coordinates -- exactly our d^2/dt^2 (p1 - p2) = 0 with drift J1'v - J2'v.
    (With LOCAL instead of LOCAL_WORLD_ALIGNED the same accelerations result, and the
    agreement even holds where the points do not coincide: see the next test.)
    """
    snap, ev, tau, cm = _loop_case(panda, seed)
    assert np.abs(ev.phi).max() <= 1e-15
    a_pin, lam_pin = _pin_constraint_dynamics(panda.model, cm, snap.q, snap.v, tau)
    sol = D.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
    assert sol.proj.rank == 3
    assert _rel(sol.a, a_pin) <= 1e-9
    assert _rel(sol.lam, -lam_pin) <= 1e-9
    assert np.abs(lam_pin).max() > 1.0


def test_pinocchio_loop_constraint_away_from_closure(panda):
    """Documented finding: with the points 10 cm apart (phi != 0) Pinocchio 4.1 and
    pfaff still agree, i.e. neither adds a stabilisation term (Pinocchio's Baumgarte
    gains default to 0) and both constrain the same classical point accelerations."""
    snap, ev, tau, cm = _loop_case(panda, 5, gap=(0.1, 0.0, 0.0))
    assert np.abs(ev.phi).max() > 0.05
    a_pin, lam_pin = _pin_constraint_dynamics(panda.model, cm, snap.q, snap.v, tau)
    sol = D.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
    assert _rel(sol.a, a_pin) <= 1e-9
    assert _rel(sol.lam, -lam_pin) <= 1e-9


# ---------------------------------------------------------- redundant rows


def test_duplicated_constraint_changes_nothing_and_breaks_kkt(panda):
    rng = np.random.default_rng(7)
    q, v = _state(panda, rng)
    c1 = PointsCoincide("panda_hand_tcp", target=[0.4, 0.0, 0.5])
    one, two = ConstraintSet(panda, [c1]), ConstraintSet(panda, [c1, c1])
    snap = panda.compute(q, v, one.frames)
    tau = snap.g + rng.uniform(-10.0, 10.0, panda.nv)
    e1, e2 = one.evaluate(snap), two.evaluate(snap)
    assert (one.dim, two.dim) == (3, 6)
    s1 = D.solve_constrained(snap.M, snap.h, tau, e1.A, e1.drift)
    s2 = D.solve_constrained(snap.M, snap.h, tau, e2.A, e2.drift)
    assert s2.proj.rank == 3
    assert _rel(s2.a, s1.a) <= 1e-10
    assert _rel(s2.F, s1.F) <= 1e-10
    # least-norm multipliers: the force is shared equally by the two copies
    assert _rel(s2.lam, 0.5 * np.concatenate([s1.lam, s1.lam])) <= 1e-10
    for variant in VARIANTS:
        a = D.solve_constrained(snap.M, snap.h, tau, e2.A, e2.drift, variant=variant).a
        assert _rel(a, s1.a) <= 1e-10
    # the KKT matrix is singular: rank nv + 3 of nv + 6
    K = D.kkt_matrix(snap.M, e2.A)
    assert np.linalg.matrix_rank(K) == panda.nv + 3 < K.shape[0]
    # the baseline refuses it on any BLAS kernel (rank of A judged by rank_tol, not by
    # whether LU happens to meet an exactly zero pivot)
    with pytest.raises(np.linalg.LinAlgError, match="A has rank 3 < 6 rows"):
        D.kkt_dynamics(snap.M, snap.h, tau, e2.A, e2.drift)


# ------------------------------------------------- matrices and the force


@pytest.mark.parametrize("seed", [0, 1])
def test_constraint_inertia_properties(panda, seed):
    _, snap, ev, tau = _panda_contact(panda, seed)
    M = snap.M
    P = D.projection(ev.A, ev.drift).P
    Mc = D.constraint_inertia(M, P, "Mc")
    Mc1 = D.constraint_inertia(M, P, "Mc1")
    Mc2 = D.constraint_inertia(M, P, "Mc2")
    # M_c = M + skew: its symmetric part is M (Theorem 2), so it is p.d.
    assert np.abs(0.5 * (Mc + Mc.T) - M).max() <= 1e-13 * np.abs(M).max()
    assert np.linalg.eigvalsh(0.5 * (Mc + Mc.T)).min() > 0
    assert np.abs(Mc - Mc.T).max() > 1e-3 * np.abs(M).max()  # genuinely not symmetric
    # M'_c symmetric p.d. (Prop. 1)
    assert np.abs(Mc1 - Mc1.T).max() <= 1e-14 * np.abs(M).max()
    assert np.linalg.eigvalsh(0.5 * (Mc1 + Mc1.T)).min() > 0
    # M''_c invertible (Prop. 2); default gamma = ||M||_2
    assert np.linalg.matrix_rank(Mc2) == M.shape[0]
    Q = np.eye(M.shape[0]) - P
    g = np.linalg.norm(M, 2)
    assert np.abs(Mc2 - (P @ M + g * Q)).max() <= 1e-13 * g
    # kinetic energy is the same with M_c (Remark 3)
    v = snap.v
    assert v @ Mc @ v == pytest.approx(v @ M @ v, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_force_and_admissibility(panda, seed):
    _, snap, ev, tau = _panda_contact(panda, seed)
    M, h = snap.M, snap.h
    sol = D.solve_constrained(M, h, tau, ev.A, ev.drift)
    P = sol.proj.P
    fs = np.abs(tau - h).max()
    # the equation of motion itself: M a + h = tau - F
    assert np.abs(M @ sol.a + h - tau + sol.F).max() <= 1e-10 * fs
    # A a = -drift
    assert np.abs(ev.A @ sol.a + ev.drift).max() <= 1e-10 * max(1.0, np.abs(ev.drift).max())
    # F orthogonal to N(A), F = A^T lambda
    assert np.abs(P @ sol.F).max() <= 1e-12 * np.abs(sol.F).max()
    assert np.abs(ev.A.T @ sol.lam - sol.F).max() <= 1e-12 * np.abs(sol.F).max()
    assert np.abs(sol.F).max() > 1.0
    # Aghili eq. 32 form of F
    a = sol.a
    assert np.abs(D.constraint_force(M, h, tau, P, a) - sol.F).max() == 0.0
    lam, r = D.multipliers(ev.A, sol.F)
    assert r == 3 and np.array_equal(lam, sol.lam)
    # the acceleration ignores the impotent part of tau
    f_perp = (np.eye(7) - P) @ np.random.default_rng(seed).standard_normal(7) * 50
    a2 = D.solve_constrained(M, h, tau + f_perp, ev.A, ev.drift).a
    assert _rel(a2, a) <= 1e-10


@pytest.mark.parametrize("seed", [0, 1])
def test_projected_inverse_dynamics(panda, seed):
    _, snap, ev, tau = _panda_contact(panda, seed)
    M, h = snap.M, snap.h
    sol = D.solve_constrained(M, h, tau, ev.A, ev.drift)
    P = sol.proj.P
    f_par = D.projected_inverse_dynamics(M, h, P, sol.a)
    assert np.abs(f_par - P @ tau).max() <= 1e-10 * np.abs(tau).max()
    # and f_par itself (least-norm torque) reproduces the acceleration
    assert _rel(D.solve_constrained(M, h, f_par, ev.A, ev.drift).a, sol.a) <= 1e-9
    assert np.linalg.norm(f_par) <= np.linalg.norm(tau)


def test_decoupling_residual():
    # particle on a circle, M = m I: N(A) is invariant under M (Prop. 3)
    mech = planar_particle(2.3)
    cs = ConstraintSet(mech, [PointOnCircle("particle", radius=0.8)])
    q = 0.8 * np.array([np.cos(0.7), np.sin(0.7)])
    snap = mech.compute(q, np.zeros(2), cs.frames)
    P = D.projection(cs.evaluate(snap).A, np.zeros(1)).P
    assert D.decoupling_residual(snap.M, P) <= 1e-15
    assert D.is_decoupled(snap.M, P)
    # ... and then the force does not depend on the potent input f_par (mu = 0)
    ev = cs.evaluate(snap)
    F1 = D.solve_constrained(snap.M, snap.h, np.zeros(2), ev.A, ev.drift).F
    F2 = D.solve_constrained(snap.M, snap.h, P @ np.array([3.0, -1.0]), ev.A, ev.drift).F
    assert np.abs(F1 - F2).max() <= 1e-14


def test_decoupling_residual_generic_arm(panda):
    for seed in (0, 1):
        _, snap, ev, tau = _panda_contact(panda, seed)
        P = D.projection(ev.A, ev.drift).P
        r = D.decoupling_residual(snap.M, P)
        assert r > 0.01
        assert not D.is_decoupled(snap.M, P)
        Q = np.eye(7) - P
        assert r == pytest.approx(
            np.linalg.norm(Q @ snap.M @ P, "fro") / np.linalg.norm(snap.M, "fro"), rel=1e-12
        )


# --------------------------------------------- Aghili Sec. 8: slider-crank


def _slider_crank(m=2.0, l=0.5):
    mech = SliderCrankChain(m=m, l=l, g=9.81)
    return mech, ConstraintSet(mech, [PointOnPlane("slider", [0.0, 1.0, 0.0])])


def _on_branch(c1):
    """q on the branch q2 = 2 pi - 2 q1 of the manifold, with cos q1 = c1 (q1 near pi/2)."""
    q1 = np.arccos(c1)
    return np.array([q1, 2 * np.pi - 2 * q1])


def test_slider_crank_singular_configuration_drops_constraint():
    m, l = 2.0, 0.5
    mech, cs = _slider_crank(m, l)
    # exactly singular: q1 = pi/2, q2 = pi
    snap = mech.compute(np.array([np.pi / 2, np.pi]), np.array([0.8, -1.6]), cs.frames)
    ev = cs.evaluate(snap)
    assert np.abs(ev.A).max() <= 1e-15 * l  # A = l [c1 + c12, c12] = 0
    proj = D.projection(ev.A, ev.drift)
    assert proj.rank == 0
    assert np.array_equal(proj.P, np.eye(2))
    # then the constrained dynamics is the open chain's: M a + h = tau
    tau = np.array([0.3, -0.2])
    a = D.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift).a
    assert np.abs(snap.M @ a + snap.h - tau).max() <= 1e-13
    with pytest.raises(np.linalg.LinAlgError):
        D.kkt_dynamics(snap.M, snap.h, tau, np.zeros((1, 2)), np.zeros(1))

    # sigma(A) = sqrt(5) l |c1| on the branch (Aghili, text before eq. 70)
    bound = D.DEFAULT_RANK_TOL / (l * np.sqrt(5))
    for c1, rank in [(0.8 * bound, 0), (-0.8 * bound, 0), (1.2 * bound, 1), (1e-3, 1)]:
        q = _on_branch(c1)
        ev = cs.evaluate(mech.compute(q, np.zeros(2), cs.frames))
        assert abs(ev.phi[0]) <= 1e-15
        assert np.linalg.svd(ev.A, compute_uv=False)[0] == pytest.approx(
            np.sqrt(5) * l * abs(c1), rel=1e-6
        )
        proj = D.projection(ev.A, np.zeros(1))
        assert proj.rank == rank, c1
        if rank == 0:
            assert np.array_equal(proj.P, np.eye(2))
        else:
            # A = l c1 [2, 1]: P = I - n n^T with n = (2, 1)/sqrt(5)
            # (A's direction carries roundoff ~1e-16 / |c1| near the singularity)
            P70 = np.array([[1 / 5, -2 / 5], [-2 / 5, 4 / 5]])
            assert np.abs(proj.P - P70).max() <= 1e-15 / abs(c1)


def test_slider_crank_eq_71_constraint_inertia():
    """Aghili eq. 70 prints its two cases swapped; eq. 71 carries the same label.

    Paper: P = [[1/5, -2/5], [-2/5, 4/5]] "if |c1| < eps/(l sqrt 5)", I otherwise.
    Below the threshold, however, the SVD drops the only singular value, A^+ = 0 (the
    paper's own sentence), so P = I - A^+ A = I; the rank-1 projector belongs to
    |c1| >= eps/(l sqrt 5). Eq. 71, M''_c = m l^2 [[1, (1 + c2)/5], [0, (3 - 2 c2)/5]],
    also labelled "if |c1| < eps/(l sqrt 5)", is P M + gamma (I - P) with that rank-1 P,
    so it too holds where the constraint is kept. pfaff (m = 2, l = 0.5, gamma = 0.5,
    threshold |c1| < 8.94e-10) gives:
      c1 = 0.3:     c2 = -0.82,      P = [[.2, -.4], [-.4, .8]], M''_c = [[0.5, 0.018], [0, 0.464]]
      c1 = 1e-3:    c2 = -0.999998,  P as above,  M''_c = [[0.5, 2e-7], [0, 0.4999996]]
      c1 = 2.7e-10: c2 = -1,         P = I,       M''_c = M = [[0.5, 0], [0, 0.5]]
    The first two equal eq. 71. With c2 = -1 (the exact singular position) M = m l^2 I,
    so every P gives M''_c = m l^2 I = M: the mislabel is harmless for eq. 71 exactly
    there (and the paper's "M'_c = M at the singular positions" holds), but not for
    eq. 70's P, which is I, not the printed rank-1 matrix.
    """
    m, l = 2.0, 0.5
    gamma = m * l * l
    mech, cs = _slider_crank(m, l)
    bound = D.DEFAULT_RANK_TOL / (l * np.sqrt(5))
    # constraint kept (|c1| = 1e-3): eq. 70's first matrix and eq. 71
    for c1 in (1e-3, -1e-3, 0.3):
        q = _on_branch(c1)
        snap = mech.compute(q, np.zeros(2), cs.frames)
        P = D.projection(cs.evaluate(snap).A, np.zeros(1)).P
        c2 = np.cos(q[1])
        Mc2 = D.constraint_inertia(snap.M, P, "Mc2", gamma=gamma)
        eq71 = gamma * np.array([[1.0, (1 + c2) / 5], [0.0, (3 - 2 * c2) / 5]])
        assert np.abs(Mc2 - eq71).max() <= 1e-12 * gamma
        assert np.linalg.det(Mc2) == pytest.approx(gamma**2 * (3 - 2 * c2) / 5, rel=1e-10)
    # constraint dropped (|c1| < eps / (l sqrt 5)): P = I, M''_c = M'_c = M_c = M
    q = _on_branch(0.3 * bound)
    snap = mech.compute(q, np.zeros(2), cs.frames)
    P = D.projection(cs.evaluate(snap).A, np.zeros(1)).P
    assert np.array_equal(P, np.eye(2))
    for variant in VARIANTS:
        Mx = D.constraint_inertia(snap.M, P, variant, gamma=gamma)
        assert np.abs(Mx - snap.M).max() <= 1e-15
    # On the other branch of the manifold, q2 = pi (rod folded back onto the crank),
    # A = l [0, -c1]: the kept projector is diag(1, 0), not eq. 70's matrix -- eq. 70
    # holds on the branch q2 = 2 pi - 2 q1 only, as the paper assumes.
    q = np.array([np.arccos(1e-3), np.pi])
    ev = cs.evaluate(mech.compute(q, np.zeros(2), cs.frames))
    assert abs(ev.phi[0]) <= 1e-15
    P = D.projection(ev.A, np.zeros(1)).P
    assert np.abs(P - np.diag([1.0, 0.0])).max() <= 1e-12


def test_slider_crank_normal_acceleration_vanishes_on_manifold():
    """Aghili Sec. 8: "C = 0 for this example" -- for admissible velocities."""
    mech, cs = _slider_crank()
    rng = np.random.default_rng(70)
    for c1 in (0.9, 0.2, -0.5, 1e-3):
        q = _on_branch(c1)
        snap = mech.compute(q, np.zeros(2), cs.frames)
        n = D.projection(cs.evaluate(snap).A, np.zeros(1)).P
        v = n @ rng.standard_normal(2) * 3
        ev = cs.evaluate(mech.compute(q, v, cs.frames))
        assert np.abs(ev.A @ v).max() <= 1e-12
        proj = D.projection(ev.A, ev.drift)
        # C v = -A^+ drift: roundoff in drift is amplified by 1/sigma ~ 1/(l |c1|)
        assert np.abs(proj.Cv).max() <= 1e-12 * (1 + v @ v) / abs(c1)
    # off the manifold's tangent space C v != 0 (the check above is not vacuous)
    q = _on_branch(0.5)
    ev = cs.evaluate(mech.compute(q, np.array([1.0, 1.0]), cs.frames))
    assert np.abs(D.projection(ev.A, ev.drift).Cv).max() > 0.1
