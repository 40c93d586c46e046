"""The compiled derivatives (src/cpp/algorithms/derivatives.cpp) against the NumPy reference
(pfaff.derivatives), field by field to 1e-10, on the systems the reference is witnessed
on by finite differences (tests/unit/dynamics/test_derivatives.py)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pfaff
from pfaff import core
from pfaff.constraints import (
    ConstraintSet,
    LockedJoint,
    PointOnPlane,
    PointsCoincide,
)
from pfaff.derivatives import forward_dynamics_derivatives
from pfaff.files.model import load_model
from pfaff.simulate.forces_joint import AppliedForce, JointDamper
from tests.unit.dynamics.test_derivatives import (
    _closed,
    _floating_ball,
    _panda_contact,
    _tangent,
    _two_link,
)
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

FIELDS = ("a", "lam", "F", "sigma", "da_dq", "da_dv", "da_dtau", "dlam_dq", "dlam_dv")
FIELDS += ("dlam_dtau", "dF_dq", "dF_dv", "dF_dtau")


def _same(cset, states, tol=1e-10):
    """Every field equal to ``tol`` relative (times the condition number of the kept
    part of A: two SVD implementations' rounding, amplified by 1 / sigma_r)."""
    compiled = core.differentiator(cset, 1e-9)
    worst = 0.0
    for q, v, tau in states:
        c, d = compiled(q, v, tau), forward_dynamics_derivatives(cset, q, v, tau)
        assert c["rank"] == d.rank
        cond = d.sigma[0] / d.sigma[d.rank - 1] if d.rank else 1.0
        for name in FIELDS:
            ref = getattr(d, name)
            err = np.abs(c[name] - ref).max(initial=0.0) / max(1.0, np.abs(ref).max(initial=0.0))
            assert err <= tol * cond, (name, err, cond)
            worst = max(worst, err)
        r1, r2 = c["rank_radius"], d.rank_radius
        assert r1 == r2 or abs(r1 - r2) <= 1e-8 * abs(r2) + 1e-12, (r1, r2)  # rad, m
    return worst


def test_panda_contact_and_a_redundant_plane_row(panda):
    rng = np.random.default_rng(11)
    for extra in ([], [(PointOnPlane, {"normal": (0.3, 0.1, 1.0)})]):
        for _ in range(10):
            cset, q, v, tau = _panda_contact(panda, rng, extra)
            _same(cset, [(q, v, tau)])


@pytest.mark.parametrize("name", ["four_bar.xml", "five_bar.xml"])
def test_planar_loops_and_duplicated_rows(name):
    rng = np.random.default_rng(12)
    for sys, q, v, tau in _closed(name, rng, 10):
        c = sys.cset.constraints[0]
        twice = ConstraintSet(
            sys.mechanism, [c, PointsCoincide(c.frame1, c.frame2, c.point1, c.point2)]
        )
        _same(sys.cset, [(q, v, tau)])
        _same(twice, [(q, v, tau)])


def test_floating_base_with_ball_joint():
    mech = _floating_ball()
    rng = np.random.default_rng(13)
    for _ in range(10):
        q = pin.integrate(mech.model, pin.neutral(mech.model), rng.standard_normal(mech.nv))
        snap = mech.compute(q, None, ["tip", "corner"], dynamics=False)
        p = snap.frame("corner").p
        cset = ConstraintSet(
            mech,
            [
                PointsCoincide("tip", target=snap.frame("tip").p),
                PointOnPlane("corner", (0.2, 0.3, 1.0), offset=p @ (np.array([0.2, 0.3, 1.0]))),
            ],
        )
        A = cset.evaluate(snap).A
        v, tau = _tangent(A, rng.standard_normal(mech.nv)), rng.standard_normal(mech.nv)
        _same(cset, [(q, v, tau)])


def test_fold_radius_and_unconstrained():
    """The 2R arm at and beside its fold (the rank radius agrees), and the same arm
    without constraints (no rows: da_dtau = M^-1)."""
    mech = _two_link()
    cset = ConstraintSet(mech, [PointsCoincide("tip", target=(1.8, 0.0, 0.0))])
    v, tau = np.array([0.3, -0.2]), np.array([0.5, 0.1])
    _same(cset, [(np.array([0.2, q2]), v, tau) for q2 in (0.0, 1e-7, 0.4)])
    free = ConstraintSet(mech, [])
    _same(free, [(np.array([0.2, 0.4]), v, tau)])
    d = core.differentiator(free, 1e-9)(np.array([0.2, 0.4]), v, tau)
    M = mech.compute(np.array([0.2, 0.4]), v).M
    np.testing.assert_allclose(d["da_dtau"], np.linalg.inv(M), atol=1e-12)


@pytest.mark.parametrize(
    "con",
    [PointsCoincide("tip", target=(1.8, 0.0, 0.0)), PointOnPlane("tip", (1.0, 0.2, 0.0))],
    ids=["3-rows-on-nv-2", "1-row"],
)
def test_rows_all_below_the_rank_tolerance(con):
    """Rows whose singular values all fall below rank_tol (rank 0: the SVD of A beyond
    nv rows, of the QR's triangle within): no row is kept, da_dtau = M^-1, dF and
    dlambda vanish, as in the NumPy reference."""
    mech = _two_link()
    cset = ConstraintSet(mech, [con])
    q, v, tau = np.array([0.2, 0.4]), np.array([0.3, -0.2]), np.array([0.5, 0.1])
    c = core.differentiator(cset, 1e3)(q, v, tau)
    d = forward_dynamics_derivatives(cset, q, v, tau, rank_tol=1e3)
    assert c["rank"] == d.rank == 0
    for name in FIELDS:
        ref = getattr(d, name)
        scale = max(1.0, np.abs(ref).max(initial=0.0))
        np.testing.assert_allclose(c[name], ref, rtol=0, atol=1e-10 * scale, err_msg=name)
    M = mech.compute(q, v).M
    np.testing.assert_allclose(c["da_dtau"], np.linalg.inv(M), atol=1e-12)
    np.testing.assert_allclose(c["dF_dtau"], 0.0, atol=1e-12)  # a force per force


def test_range_space_form_rank_deficient_and_rank_zero():
    """The range-space form (nv >= 16: the biped, nv 22) where A has a redundant loop's
    rows (9 rows of rank 6: the SVD of the QR's triangle, the left null space's terms)
    and where no row is kept (rank_tol above every singular value): equal to the NumPy
    reference on 4 states."""
    sys_ = pfaff.load(MODELS / "closed_chain_biped.xml")
    c = sys_.cset.constraints[0]
    twice = ConstraintSet(
        sys_.mechanism,
        [*sys_.cset.constraints, PointsCoincide(c.frame1, c.frame2, c.point1, c.point2)],
    )
    assert sys_.nv >= 16 and twice.dim == 9
    rng = np.random.default_rng(17)
    states = []
    for _ in range(4):
        q = sys_.integrate(sys_.q0, rng.normal(0.0, 0.05, sys_.nv))
        _, A = sys_.cset.holonomic_terms_at(q)
        v = _tangent(A, rng.normal(0.0, 0.5, sys_.nv))
        states.append((q, v, rng.normal(0.0, 0.5, sys_.nv)))
    _same(twice, states)
    compiled = core.differentiator(twice, 1e3)
    for q, v, tau in states[:2]:
        got, ref = (
            compiled(q, v, tau),
            forward_dynamics_derivatives(twice, q, v, tau, rank_tol=1e3),
        )
        assert got["rank"] == ref.rank == 0
        for name in FIELDS:
            want = getattr(ref, name)
            scale = max(1.0, np.abs(want).max(initial=0.0))
            np.testing.assert_allclose(got[name], want, rtol=0, atol=1e-10 * scale, err_msg=name)


def test_system_engines_agree_and_refusals():
    """System.forward_dynamics_derivatives: "auto" takes the core for a four-bar, equal
    to "numpy", also with a damper (its partials analytic in the core) and with a force
    law in Python (its partials by central differences in the core); a wrong input is a
    ValueError naming it."""
    sys = pfaff.load(MODELS / "four_bar.xml")
    rng = np.random.default_rng(14)
    _, A = sys.cset.holonomic_terms_at(sys.q0)
    q, v, tau = sys.q0, _tangent(A, rng.standard_normal(sys.nv)), rng.standard_normal(sys.nv)
    c = sys.forward_dynamics_derivatives(q, v, tau)
    n = sys.forward_dynamics_derivatives(q, v, tau, engine="numpy")
    assert (c.engine, n.engine, c.rank_stable, c.rank) == ("core", "numpy", True, 2)
    np.testing.assert_allclose(c.da_dq, n.da_dq, atol=1e-10 * np.abs(n.da_dq).max())
    with pytest.raises(ValueError, match="engine='gpu'; valid"):
        sys.forward_dynamics_derivatives(q, v, tau, engine="gpu")
    sys.cset.add(LockedJoint("crank", float(q[0])))  # a row more: the core system is remade
    c2 = sys.forward_dynamics_derivatives(q, v, tau)
    assert (c2.engine, c2.lam.shape, c2.rank) == ("core", (4,), 3)
    np.testing.assert_allclose(c2.da_dtau, 0.0, atol=1e-9)  # no motion left: a fixed by rows

    model = load_model(MODELS / "four_bar.xml")
    model.forces.append(JointDamper("rocker", 0.7))
    damped = pfaff.System(model)
    d = damped.forward_dynamics_derivatives(q, v, tau)
    nd = damped.forward_dynamics_derivatives(q, v, tau, engine="numpy")
    assert (d.engine, nd.engine) == ("core", "numpy")
    np.testing.assert_allclose(d.da_dv, nd.da_dv, atol=1e-8 * np.abs(nd.da_dv).max())
    model = load_model(MODELS / "four_bar.xml")
    model.forces.append(AppliedForce(lambda t, q, v: -0.1 * v * np.abs(v), name="drag"))
    dragged = pfaff.System(model)
    d = dragged.forward_dynamics_derivatives(q, v, tau)  # the law's partials: differences
    nd = dragged.forward_dynamics_derivatives(q, v, tau, engine="numpy")
    assert (d.engine, nd.engine) == ("core", "numpy")
    np.testing.assert_allclose(d.da_dv, nd.da_dv, atol=1e-6 * np.abs(nd.da_dv).max())

    mech = _two_link()
    compiled = core.differentiator(ConstraintSet(mech, []), 1e-9)
    with pytest.raises(ValueError, match=r"Differentiator.compute: tau has shape \(3,\)"):
        compiled(np.zeros(2), np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="Differentiator.compute: v"):
        compiled(np.zeros(2), np.array([np.nan, 0.0]), np.zeros(2))


def test_the_comparison_catches_a_wrong_field(panda, monkeypatch):
    """The comparison can fail: one entry of the compiled da_dq off by 1e-6 of its largest."""
    cset, q, v, tau = _panda_contact(panda, np.random.default_rng(15))
    _same(cset, [(q, v, tau)])
    right = core.differentiator

    def wrong(cs, tol):
        f = right(cs, tol)

        def g(q, v, tau):
            out = f(q, v, tau)
            out["da_dq"] = out["da_dq"].copy()
            out["da_dq"][0, 0] += 1e-6 * np.abs(out["da_dq"]).max()
            return out

        return g

    monkeypatch.setattr(core, "differentiator", wrong)
    with pytest.raises(AssertionError, match="da_dq"):
        _same(cset, [(q, v, tau)])


@pytest.mark.parametrize(
    "rows",
    [
        [("panda_hand_tcp", (0.3, 0.1, 1.0))],  # 1 row: sigma = |R|
        [("panda_hand_tcp", (0.0, 0.0, 1.0)), ("panda_link5", (1.0, 0.0, 0.0))],  # 2 rows
        [("panda_hand_tcp", (0.0, 0.0, 1.0)), ("panda_hand_tcp", (1e-3, 0.0, 1.0))],
        [(f, n) for f in ("panda_hand_tcp", "panda_link4") for n in ((1, 0, 0), (0, 1, 0))],
    ],
    ids=["one", "two", "two-ill-conditioned", "four"],
)
def test_full_rank_rows_of_every_count(panda, rows):
    """Full-rank A of 1, 2 and 4 rows, well and ill conditioned (two nearly parallel
    planes: sigma_max / sigma_min ~ 1e3, where the singular values come from the SVD
    rather than from R^T R's eigenvalues): equal to the NumPy reference at 10 states."""
    rng = np.random.default_rng(13)
    for _ in range(10):
        q = pin.randomConfiguration(panda.model)
        frames = sorted({f for f, _ in rows})
        snap = panda.compute(q, None, frames, dynamics=False)
        cons = [
            PointOnPlane(f, normal=n, offset=float(np.dot(n, snap.frame(f).p)) / np.linalg.norm(n))
            for f, n in rows
        ]
        cset = ConstraintSet(panda, cons)
        A = cset.evaluate(panda.compute(q, None, cset.frames, dynamics=False)).A
        assert np.linalg.matrix_rank(A) == len(rows)
        v, tau = _tangent(A, rng.standard_normal(panda.nv)), rng.standard_normal(panda.nv)
        _same(cset, [(q, v, tau)])


@pytest.mark.parametrize(
    ("name", "locked"),
    [
        ("parallel_gripper", ()),
        ("closed_chain_biped", ()),
        ("closed_chain_biped", ("left_ankle", "right_ankle")),
    ],
    ids=["gripper", "biped", "biped-8-rows"],
)
def test_user_files_rows_on_branched_trees(name, locked):
    """The rows of the user-style files without their force elements, equal to the NumPy
    reference at 1e-10 on 8 states: the biped's two knee loops on a free base (A of full
    row rank; each loop's points move with one leg's coordinates alone, the Hessian rows
    walk that support), with both ankles locked too (8 rows: R^T R's eigenvalues beyond
    6 rows), the gripper's two planar loops and joint coupling (7 rows of rank 5: the SVD
    of the QR's triangle)."""
    sys_ = pfaff.load(MODELS / f"{name}.xml")
    model = sys_.mechanism.model
    for joint in locked:
        sys_.cset.add(
            LockedJoint(joint, float(sys_.q0[model.joints[model.getJointId(joint)].idx_q]))
        )
    rng = np.random.default_rng(16)
    states = []
    for _ in range(8):
        q = sys_.integrate(sys_.q0, rng.normal(0.0, 0.05, sys_.nv))
        _, A = sys_.cset.holonomic_terms_at(q)
        v = _tangent(A, rng.normal(0.0, 0.5, sys_.nv))
        states.append((q, v, rng.normal(0.0, 0.5, sys_.nv)))
    assert sys_.cset.dim == {"parallel_gripper": 7}.get(name, 6 + len(locked))
    _same(sys_.cset, states)


@pytest.mark.parametrize("name", ["parallel_gripper", "closed_chain_biped"])
def test_loop_points_acceleration_partials_off_the_tangent(name):
    """The loop points' acceleration partials (formed in the rows' support walk, in world
    axes at the point: a free base's columns, whose joint hangs on the world, and the
    rods' ball joints) equal the NumPy reference at 20 states to 1e-10 where v leaves
    the constraints' tangent (every velocity term of the point's acceleration at work);
    the same comparison at a state whose v is scaled after the reference was taken (the
    wrong input) misses by far more."""
    sys_ = pfaff.load(MODELS / f"{name}.xml")
    rng = np.random.default_rng(29)
    states = []
    for _ in range(20):
        q = sys_.integrate(sys_.q0, rng.normal(0.0, 0.1, sys_.nv))
        states.append((q, rng.normal(0.0, 1.0, sys_.nv), rng.normal(0.0, 0.5, sys_.nv)))
    assert _same(sys_.cset, states) <= 1e-10 * 1e3
    q, v, tau = states[0]
    compiled = core.differentiator(sys_.cset, 1e-9)
    ref = forward_dynamics_derivatives(sys_.cset, q, v, tau)
    wrong = compiled(q, 1.5 * v, tau)["da_dq"]
    assert np.abs(wrong - ref.da_dq).max() > 1e-3 * max(1.0, np.abs(ref.da_dq).max())
