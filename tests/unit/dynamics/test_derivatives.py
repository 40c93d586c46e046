"""Derivatives of the projection dynamics (pfaff.derivatives) against central finite
differences with Richardson extrapolation (step 1e-6 in the tangent space) at random
on-manifold states, against Pinocchio's own constrained derivatives, and at a fold."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pfaff
from pfaff import dynamics as dyn
from pfaff.constraints import ConstraintSet, PointOnPlane, PointOnSurface, PointsCoincide
from pfaff.derivatives import forward_dynamics_derivatives, projection
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism
from pfaff.simulate.assembly import assemble
from pfaff.simulate.forces_joint import JointDamper, JointSpring
from tests.where import MODELS

TOL = 1e-6  # relative error of a derivative against the extrapolated difference
H = 1e-6  # tangent step in q
# a is affine in tau and quadratic in v (lambda too): their central differences have no
# truncation error, so a larger step there only lowers the rounding error
H_LIN = 1e-3


def _fd(f, x, plus, n, h=H):
    """Central differences along the n unit directions, Richardson-extrapolated:
    ``(4 D(h/2) - D(h)) / 3`` (truncation O(h^4))."""
    cols = []
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1.0

        def D(s, e=e):
            return (f(plus(x, s * e)) - f(plus(x, -s * e))) / (2 * s)

        cols.append((4 * D(h / 2) - D(h)) / 3)
    return np.array(cols).T


def _rel(an, ref) -> float:
    """Largest error over the largest reference entry (below 1e-6 the error counts as
    absolute: a derivative that is zero, e.g. da_dtau when A fixes a, has no scale)."""
    return float(np.abs(an - ref).max(initial=0.0) / max(np.abs(ref).max(initial=0.0), 1e-6))


def _check(cset, q, v, tau, integrate, tol=TOL):
    """Every derivative of (a, lam) against finite differences of the dynamics."""
    mech, nv = cset.mechanism, cset.mechanism.nv

    def out(qq, vv, tt):
        snap = mech.compute(qq, vv, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        sol = dyn.solve_constrained(snap.M, snap.h, tt, ev.A, ev.drift)
        return np.concatenate([sol.a, sol.lam])

    d = forward_dynamics_derivatives(cset, q, v, tau)
    add = lambda x, dx: x + dx  # noqa: E731
    Jq = _fd(lambda x: out(x, v, tau), q, integrate, nv)
    Jv = _fd(lambda x: out(q, x, tau), v, add, nv, H_LIN)
    Jt = _fd(lambda x: out(q, v, x), tau, add, nv, H_LIN)
    errs = {}
    for name, J in (("q", Jq), ("v", Jv), ("tau", Jt)):
        errs[f"da_d{name}"] = _rel(getattr(d, f"da_d{name}"), J[:nv])
        errs[f"dlam_d{name}"] = _rel(getattr(d, f"dlam_d{name}"), J[nv:])
    assert max(errs.values()) <= tol, errs
    return d, errs


def _tangent(A, v):
    return v - np.linalg.pinv(A, rcond=1e-9) @ (A @ v) if A.shape[0] else v


def _panda_contact(panda, rng, extra=()):
    """The Panda's tool point held at where it is (3 rows), at a random posture and a
    velocity tangent to the contact."""
    q = pin.randomConfiguration(panda.model)
    p = panda.compute(q, None, ["panda_hand_tcp"], dynamics=False).frame("panda_hand_tcp").p
    rows = [PointsCoincide("panda_hand_tcp", target=p)]
    rows += [
        cls("panda_hand_tcp", **{**kw, "offset": kw.get("offset", 0.0) + p[2]})
        for cls, kw in extra
    ]
    cset = ConstraintSet(panda, rows)
    A = cset.evaluate(panda.compute(q, None, cset.frames, dynamics=False)).A
    return cset, q, _tangent(A, rng.standard_normal(panda.nv)), rng.standard_normal(panda.nv)


def test_panda_contact_matches_finite_differences(panda):
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(50):
        cset, q, v, tau = _panda_contact(panda, rng)
        d, errs = _check(cset, q, v, tau, panda.integrate)
        assert d.rank == 3 and d.rank_stable and d.fd_constraints == ()
        worst = max(worst, *errs.values())
    assert worst < TOL


def test_panda_contact_matches_pinocchio_constraint_dynamics_derivatives(panda):
    """Pinocchio's computeConstraintDynamicsDerivatives (proximal KKT, mu = 1e-12) on the
    same 3D point contact, world-aligned: a, lambda (opposite sign) and all derivatives."""
    model = panda.model
    fr = model.frames[panda.frame_id("panda_hand_tcp")]
    cm = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D, model, int(fr.parentJoint), fr.placement,
        pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    )  # fmt: skip
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    cms.append(cm)
    cds.append(cm.createData())
    data = model.createData()
    pin.initConstraintDynamics(model, data, cms, cds)
    settings = pin.ProximalSettings(1e-14, 1e-12, 100)
    rng = np.random.default_rng(2)
    for _ in range(20):
        cset, q, v, tau = _panda_contact(panda, rng)
        d = forward_dynamics_derivatives(cset, q, v, tau)
        a = pin.constraintDynamics(model, data, q, v, tau, cms, cds, settings)
        pin.computeConstraintDynamicsDerivatives(model, data, cms, cds, settings)
        assert _rel(d.a, a) < 1e-10
        for ours, theirs, sign in [
            (d.da_dq, data.ddq_dq, 1), (d.da_dv, data.ddq_dv, 1), (d.da_dtau, data.ddq_dtau, 1),
            (d.dlam_dq, data.dlambda_dq, -1), (d.dlam_dv, data.dlambda_dv, -1),
            (d.dlam_dtau, data.dlambda_dtau, -1),
        ]:  # fmt: skip
            assert _rel(ours, sign * np.asarray(theirs)) < 1e-8


def _closed(name, rng, n):
    sys = pfaff.load(MODELS / name)
    for _ in range(n):
        q = sys.integrate(sys.q0, 0.3 * rng.standard_normal(sys.nv))
        q = assemble(sys.cset, q, None, 1e-12, 100, sys.rank_tol).q
        _, A = sys.cset.holonomic_terms_at(q)
        yield sys, q, _tangent(A, rng.standard_normal(sys.nv)), rng.standard_normal(sys.nv)


@pytest.mark.parametrize("name", ["four_bar.xml", "five_bar.xml"])
def test_planar_loop_closed_in_3d_rank_2_of_3(name):
    """A planar loop closed by a 3D point constraint: the out-of-plane row is zero at
    every configuration, so the rank is constant (2 of 3) and the derivative exact."""
    rng = np.random.default_rng(3)
    for sys, q, v, tau in _closed(name, rng, 50):
        d, _ = _check(sys.cset, q, v, tau, sys.integrate)
        assert d.rank == 2 and d.sigma.size == 3 and d.rank_stable


def test_duplicated_rows(panda):
    """Redundant stacks: the five-bar's closure twice (6 rows, rank 2) and the Panda's
    contact with a plane row through the same point (4 rows, rank 3)."""
    rng = np.random.default_rng(4)
    for sys, q, v, tau in _closed("five_bar.xml", rng, 25):
        c = sys.cset.constraints[0]
        twice = ConstraintSet(
            sys.mechanism, [c, PointsCoincide(c.frame1, c.frame2, c.point1, c.point2)]
        )
        d, _ = _check(twice, q, v, tau, sys.integrate)
        assert (d.rank, twice.dim, d.rank_stable) == (2, 6, True)
    for _ in range(25):
        cset, q, v, tau = _panda_contact(panda, rng, [(PointOnPlane, {"normal": (0.3, 0.1, 1.0)})])
        d, _ = _check(cset, q, v, tau, panda.integrate)
        assert (d.rank, cset.dim, d.rank_stable) == (3, 4, True)


def _floating_ball() -> PinocchioMechanism:
    """A free-flying box carrying a pendulum on a ball joint (nq 14, nv 9)."""
    m = pin.Model()
    base = m.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    m.appendBodyToJoint(base, pin.Inertia.FromBox(2.0, 0.3, 0.2, 0.1), pin.SE3.Identity())
    ball = m.addJoint(
        base, pin.JointModelSpherical(), pin.SE3(np.eye(3), np.array([0.2, 0, 0.1])), "ball"
    )
    m.appendBodyToJoint(
        ball, pin.Inertia.FromBox(1.0, 0.1, 0.5, 0.1), pin.SE3(np.eye(3), np.array([0, 0, 0.25]))
    )
    for name, j, p in [("tip", ball, (0.05, 0.02, 0.5)), ("corner", base, (0.15, -0.1, 0.05))]:
        m.addFrame(pin.Frame(name, j, 0, pin.SE3(np.eye(3), np.array(p)), pin.FrameType.OP_FRAME))
    return PinocchioMechanism(m, "floating ball")


def test_floating_base_with_ball_joint():
    """Free flyer + ball joint (Lie-group q): the pendulum's tip on a world point
    (analytic) and the base's corner on a sphere (a kind differentiated by central
    differences of its own A and drift: named in the result)."""
    mech = _floating_ball()
    rng = np.random.default_rng(5)
    for _ in range(50):
        q = pin.integrate(mech.model, pin.neutral(mech.model), rng.standard_normal(mech.nv))
        snap = mech.compute(q, None, ["tip", "corner"], dynamics=False)
        ctr = snap.frame("corner").p - 0.7 * np.array([0.0, 0.6, 0.8])
        sphere = PointOnSurface(
            "corner", lambda p, ctr=ctr: (p - ctr) @ (p - ctr) - 0.49,
            grad=lambda p, ctr=ctr: 2 * (p - ctr), hess=lambda p: 2 * np.eye(3),
        )  # fmt: skip
        cset = ConstraintSet(mech, [PointsCoincide("tip", target=snap.frame("tip").p), sphere])
        A = cset.evaluate(snap).A
        v, tau = _tangent(A, rng.standard_normal(mech.nv)), rng.standard_normal(mech.nv)
        d, _ = _check(cset, q, v, tau, mech.integrate)
        assert d.rank == 4 and d.fd_constraints == ("PointOnSurface",)


@pytest.mark.parametrize("shape", ["ellipse", "superellipse"])
def test_rolling_contact(shape):
    """Two fingertips rolling on a planar object (contact rows eq. 67 and the Pfaffian
    rolling rows eq. 71 of Arimoto's grasp): kinds differentiated by central
    differences of their own A and drift, named in the result."""
    from pfaff.manipulation.contours import Ellipse, Superellipse
    from pfaff.systems import rolling_fingers as rf

    contour = {"ellipse": Ellipse(0.026, 0.018), "superellipse": Superellipse(0.024, 0.018, 4)}
    c = contour[shape]
    mech, _, cset = rf.grasp_system(c, 0.03, (0.01, 0.012))
    q0 = rf.initial_configuration(
        c, (0.006, 0.085, 1.75), (0.01, 0.012), (0, 0), (np.pi, 0), np.pi - 0.5
    )
    rng = np.random.default_rng(10)
    for _ in range(10):
        q = assemble(cset, q0 + 0.01 * rng.standard_normal(mech.nq), None, 1e-12, 100, 1e-9).q
        A = cset.evaluate(mech.compute(q, None, cset.frames, dynamics=False)).A
        v = _tangent(A, 0.3 * rng.standard_normal(mech.nv))
        d, _ = _check(cset, q, v, 1e-3 * rng.standard_normal(mech.nv), mech.integrate)
        assert d.rank == 4 and d.rank_stable
        assert d.fd_constraints == ("ContactConstraint", "RollingConstraint")


def _two_link() -> PinocchioMechanism:
    """A planar 2R arm (links 1 m, 0.8 m) about z, its tip frame at the end."""
    m = pin.Model()
    j1 = m.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "j1")
    m.appendBodyToJoint(
        j1, pin.Inertia.FromBox(1.0, 1.0, 0.05, 0.05), pin.SE3(np.eye(3), np.array([0.5, 0, 0]))
    )
    j2 = m.addJoint(j1, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([1.0, 0, 0])), "j2")
    m.appendBodyToJoint(
        j2, pin.Inertia.FromBox(1.0, 0.8, 0.05, 0.05), pin.SE3(np.eye(3), np.array([0.4, 0, 0]))
    )
    m.addFrame(
        pin.Frame("tip", j2, 0, pin.SE3(np.eye(3), np.array([0.8, 0, 0])), pin.FrameType.OP_FRAME)
    )
    return PinocchioMechanism(m, "2R")


def test_fold_is_reported_not_hidden():
    """The 2R arm's tip held at a point in the plane (rows x, y): stretched out (q2 = 0)
    the rank drops to 1 and grows back under any perturbation of q2, so the rank is
    not locally constant: rank_stable is False there and just beside it, True away
    from it. The z row is structurally zero and never makes the rank unstable."""
    mech = _two_link()
    cset = ConstraintSet(mech, [PointsCoincide("tip", target=(1.8, 0.0, 0.0))])
    v, tau = np.array([0.3, -0.2]), np.array([0.5, 0.1])
    for q2, stable in [(0.0, False), (1e-7, False), (0.4, True)]:
        d = forward_dynamics_derivatives(cset, np.array([0.2, q2]), v, tau)
        assert d.rank_stable is stable, (q2, d.rank_radius, d.sigma)
    assert d.rank == 2 and d.sigma.size == 2
    _check(cset, np.array([0.2, 0.4]), v, tau, mech.integrate)


def _sphere_twice(panda, rng):
    """The Panda's tool point on a sphere, stated twice: ``|p - c|^2 - r^2`` and
    ``|p - c| - r``. The rows are parallel everywhere (rank 1 of 2 on and off the
    sphere) with the ratio ``2 |p - c|`` changing with q: the left null space of A
    turns, the case where all three Golub-Pereyra terms count."""
    q = pin.randomConfiguration(panda.model)
    p = panda.compute(q, None, ["panda_hand_tcp"], dynamics=False).frame("panda_hand_tcp").p
    c = p - 0.4 * np.array([0.0, 0.6, 0.8])
    sq = PointOnSurface(
        "panda_hand_tcp", lambda x: (x - c) @ (x - c) - 0.16,
        grad=lambda x: 2 * (x - c), hess=lambda x: 2 * np.eye(3),
    )  # fmt: skip
    dist = PointOnSurface(
        "panda_hand_tcp", lambda x: np.linalg.norm(x - c) - 0.4,
        grad=lambda x: (x - c) / np.linalg.norm(x - c),
        hess=lambda x: (np.eye(3) - np.outer(x - c, x - c) / ((x - c) @ (x - c)))
        / np.linalg.norm(x - c),
    )  # fmt: skip
    cset = ConstraintSet(panda, [sq, dist])
    A = cset.evaluate(panda.compute(q, None, cset.frames, dynamics=False)).A
    return cset, q, _tangent(A, rng.standard_normal(panda.nv)), rng.standard_normal(panda.nv)


def test_rows_parallel_with_a_turning_left_null_space(panda):
    rng = np.random.default_rng(8)
    for _ in range(20):
        cset, q, v, tau = _sphere_twice(panda, rng)
        d, _ = _check(cset, q, v, tau, panda.integrate)
        assert (d.rank, cset.dim, d.rank_stable) == (1, 2, True)


def test_contracted_forms_equal_golub_pereyra_tensors(panda):
    """The contractions the solver uses equal the explicit d(A^+) and dP tensors, and
    those satisfy the identities of a pseudo-inverse differentiated at constant rank:
    ``d(A A^+ A) = dA``, ``d(A^+ A A^+) = d(A^+)`` (checked to rounding)."""
    rng = np.random.default_rng(9)
    cset, q, v, _ = _sphere_twice(panda, rng)
    from pfaff.derivatives.terms import constraint_partials

    A = cset.evaluate(panda.compute(q, v, cset.frames, dynamics=False)).A
    f = projection.factors(A, 1e-9)
    dA = constraint_partials(cset, q, v).dA_dq
    dAp, dP = projection.pinv_derivative(f, dA), projection.projector_derivative(f, dA)
    x, y = rng.standard_normal(A.shape[0]), rng.standard_normal(A.shape[1])
    dx, dy = projection.pinv_derivative_apply(f, dA, x, y)
    np.testing.assert_allclose(dx, (dAp @ x).T, atol=1e-10 * np.abs(dAp).max())
    np.testing.assert_allclose(dy, (np.swapaxes(dAp, 1, 2) @ y).T, atol=1e-10 * np.abs(dAp).max())
    np.testing.assert_allclose(
        projection.projector_derivative_apply(f, dA, y), (dP @ y).T, atol=1e-12 * np.abs(dP).max()
    )
    a, drift, F = rng.standard_normal(A.shape[1]), rng.standard_normal(A.shape[0]), f.V1 @ y[:1]
    a = a - f.V1 @ (f.V1.T @ a) - f.Ap @ drift  # (I - P) a = -A^+ drift, P F = 0
    t1, tl = projection.pseudo_inverse_terms(f, dA, a, drift, f.Ap.T @ F)
    V1 = f.V1
    np.testing.assert_allclose(t1, V1 @ V1.T @ ((dP @ a).T - (dAp @ drift).T), atol=1e-9)
    np.testing.assert_allclose(tl, (np.swapaxes(dAp, 1, 2) @ F).T, atol=1e-9)
    Ap = f.Ap
    for k in range(dA.shape[0]):
        dk = dA[k] @ Ap @ A + A @ dAp[k] @ A + A @ Ap @ dA[k]
        np.testing.assert_allclose(dk, dA[k], atol=1e-10 * (1 + np.abs(dA[k]).max()))
        dk = dAp[k] @ A @ Ap + Ap @ dA[k] @ Ap + Ap @ A @ dAp[k]
        np.testing.assert_allclose(dk, dAp[k], atol=1e-10 * (1 + np.abs(dAp[k]).max()))
        np.testing.assert_allclose(dP[k], -(dAp[k] @ A + Ap @ dA[k]), atol=1e-10)


def test_the_witness_catches_a_wrong_pseudo_inverse_derivative(panda, monkeypatch):
    """Keeping only the first Golub-Pereyra term ``-A^+ dA A^+`` (right for a regular
    square A) makes the comparison with finite differences fail where the left null
    space turns: the check can fail, and the other two terms matter."""
    cset, q, v, tau = _sphere_twice(panda, np.random.default_rng(6))
    _check(cset, q, v, tau, panda.integrate)

    def first_term_only(f, dA, a, drift, lam):
        return -f.Ap @ (dA @ a).T, -f.Ap.T @ (lam @ dA).T

    monkeypatch.setattr(projection, "pseudo_inverse_terms", first_term_only)
    with pytest.raises(AssertionError, match="dlam_dq"):
        _check(cset, q, v, tau, panda.integrate)


def test_system_method_with_force_elements_and_bad_input():
    """System.forward_dynamics_derivatives adds the force elements' derivatives (a
    spring, a damper) and refuses a wrong-sized input with a message naming it."""
    from pfaff.files.model import load_model

    model = load_model(MODELS / "four_bar.xml")
    model.forces += [JointSpring("crank", 4.0, 0.3), JointDamper("rocker", 0.7)]
    sys = pfaff.System(model)
    rng = np.random.default_rng(7)
    _, A = sys.cset.holonomic_terms_at(sys.q0)
    q, v, tau = sys.q0, _tangent(A, rng.standard_normal(sys.nv)), rng.standard_normal(sys.nv)
    d = sys.forward_dynamics_derivatives(q, v, tau, engine="numpy")
    res = sys.forward_dynamics(q, v, tau)
    np.testing.assert_allclose(d.a, res.a, atol=1e-10 * (1 + np.abs(res.a).max()))
    add = lambda x, dx: x + dx  # noqa: E731
    for got, f, x, plus in [
        (d.da_dq, lambda x: sys.forward_dynamics(x, v, tau).a, q, sys.integrate),
        (d.da_dv, lambda x: sys.forward_dynamics(q, x, tau).a, v, add),
        (d.da_dtau, lambda x: sys.forward_dynamics(q, v, x).a, tau, add),
    ]:
        assert _rel(got, _fd(f, x, plus, sys.nv, H if plus is not add else H_LIN)) < TOL
    without = pfaff.System(load_model(MODELS / "four_bar.xml")).forward_dynamics_derivatives(
        q, v, tau
    )
    assert _rel(without.da_dv, d.da_dv) > 1e-3  # the damper is seen
    with pytest.raises(ValueError, match=r"tau has shape \(2,\), expected \(3,\)"):
        sys.forward_dynamics_derivatives(q, v, np.zeros(2), engine="numpy")
    with pytest.raises(ValueError, match="non-finite"):
        sys.forward_dynamics_derivatives(q, np.full(sys.nv, np.inf))
