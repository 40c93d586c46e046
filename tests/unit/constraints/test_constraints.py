"""Tests of pfaff.constraints: Jacobians and drifts vs finite differences (and vs
analytic counterparts for the finite-difference-based constraints), the
ConstraintSet bookkeeping, and Aghili's particle on a circle (Sec. 5.4).
"""

from __future__ import annotations

import numpy as np
import pytest

from pfaff import dynamics as D
from pfaff.constraints import (
    ConstraintSet,
    FunctionConstraint,
    LockedJoint,
    PointOnCircle,
    PointOnPlane,
    PointOnSurface,
    PointsCoincide,
    check_derivatives,
    require_consistent,
)
from pfaff.mechanism import (
    ModelBuilder,
    ModelError,
    SliderCrankChain,
    from_urdf,
    planar_particle,
)


def _states(mech, seed: int, k: int = 3):
    rng = np.random.default_rng(seed)
    lo, hi = mech.model.lowerPositionLimit, mech.model.upperPositionLimit
    return [
        (lo + (hi - lo) * rng.uniform(0.05, 0.95, mech.nq), rng.uniform(-1.5, 1.5, mech.nv))
        for _ in range(k)
    ]


# a wavy surface z = 0.5 + 0.1 sin(3x) cos(2y) with analytic derivatives
def _wavy(p):
    return p[2] - 0.1 * np.sin(3 * p[0]) * np.cos(2 * p[1]) - 0.5


def _wavy_grad(p):
    x, y = p[0], p[1]
    return np.array(
        [-0.3 * np.cos(3 * x) * np.cos(2 * y), 0.2 * np.sin(3 * x) * np.sin(2 * y), 1.0]
    )


def _wavy_hess(p):
    x, y = p[0], p[1]
    hxx = 0.9 * np.sin(3 * x) * np.cos(2 * y)
    hxy = 0.6 * np.cos(3 * x) * np.sin(2 * y)
    hyy = 0.4 * np.sin(3 * x) * np.cos(2 * y)
    return np.array([[hxx, hxy, 0.0], [hxy, hyy, 0.0], [0.0, 0.0, 0.0]])


# a holonomic user constraint on the joint coordinates, with analytic derivatives
def _fphi(q):
    return np.array([np.sin(q[0]) * q[1] + q[2] ** 2 - 0.3, np.cos(q[3] + q[4]) * q[5]])


def _fjac(q):
    A = np.zeros((2, 7))
    A[0, :3] = [np.cos(q[0]) * q[1], np.sin(q[0]), 2 * q[2]]
    s, c = np.sin(q[3] + q[4]), np.cos(q[3] + q[4])
    A[1, 3:6] = [-s * q[5], -s * q[5], c]
    return A


def _fdrift(q, v):
    """d/dt (A(q) v) v-part, worked out by hand."""
    d0 = -np.sin(q[0]) * q[1] * v[0] ** 2 + 2 * np.cos(q[0]) * v[0] * v[1] + 2 * v[2] ** 2
    w = v[3] + v[4]
    s, c = np.sin(q[3] + q[4]), np.cos(q[3] + q[4])
    d1 = -c * q[5] * w * w - 2 * s * w * v[5]
    return np.array([d0, d1])


# a non-integrable Pfaffian constraint A(q) v = 0
def _pf_jac(q):
    return np.array([[np.cos(q[0]), np.sin(q[0]), 0, 0, 0, 0, q[1]]])


def _pf_drift(q, v):
    return np.array([-np.sin(q[0]) * v[0] ** 2 + np.cos(q[0]) * v[0] * v[1] + v[1] * v[6]])


def _analytic_cases():
    return {
        "plane-offset": PointOnPlane(
            "panda_hand_tcp", normal=[0.3, -0.2, 1.0], offset=0.4, point=[0.05, -0.02, 0.1]
        ),
        "surface-analytic": PointOnSurface(
            "panda_hand_tcp", _wavy, _wavy_grad, _wavy_hess, point=[0.02, 0.03, 0.04]
        ),
        "coincide-two-frames": PointsCoincide(
            "panda_hand_tcp",
            "panda_link3",
            point1=[0.01, 0.02, 0.03],
            point2=[0.1, -0.05, 0.02],
            directions=[[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]],
        ),
        "coincide-world": PointsCoincide(
            "panda_link5", point1=[0.0, 0.1, 0.0], target=[0.3, 0, 0.5]
        ),
        "circle": PointOnCircle(
            "panda_hand_tcp", center=(0.1, 0.2), radius=0.3, point=[0, 0, 0.05]
        ),
        "locked-by-name": LockedJoint("panda_joint4", -1.5),
        "locked-by-index": LockedJoint(2, 0.3),
        "function-analytic": FunctionConstraint(2, _fphi, _fjac, _fdrift),
        "function-analytic-jacobian": FunctionConstraint(2, _fphi, _fjac),
        "pfaffian": FunctionConstraint(1, jacobian=_pf_jac, drift=_pf_drift),
        "pfaffian-fd-drift": FunctionConstraint(1, jacobian=_pf_jac),
    }


ANALYTIC = list(_analytic_cases())


@pytest.mark.parametrize("name", ANALYTIC)
def test_jacobian_and_drift_vs_finite_differences(panda, name):
    """check_derivatives: central differences with step 1e-6 have truncation error
    ~1e-12 |phi'''| and roundoff ~1e-16 / 1e-6 = 1e-10 -- far below the bounds."""
    c = _analytic_cases()[name]
    cs = ConstraintSet(panda, [c])
    drift_seen = 0.0
    for q, v in _states(panda, seed=100 + ANALYTIC.index(name)):
        err = check_derivatives(cs, q, v)
        assert err["jacobian"] <= 1e-8
        assert err["drift"] <= 1e-6
        ev = cs.evaluate(panda.compute(q, v, cs.frames, dynamics=False))
        assert np.abs(ev.A).max() > 0.05
        drift_seen = max(drift_seen, np.abs(ev.drift).max())
    if not name.startswith("locked"):
        # the drift check is not vacuous: a missing drift term would be caught
        assert drift_seen > 1e-2


def test_locked_joint_rows(panda):
    by_name = ConstraintSet(panda, [LockedJoint("panda_joint4", -1.5)])
    by_index = ConstraintSet(panda, [LockedJoint(3, -1.5)])
    q, v = _states(panda, 5, 1)[0]
    a = by_name.evaluate(panda.compute(q, v, (), dynamics=False))
    b = by_index.evaluate(panda.compute(q, v, (), dynamics=False))
    assert np.array_equal(a.A, np.eye(1, 7, 3))
    assert np.array_equal(a.A, b.A)
    assert a.phi[0] == pytest.approx(q[3] + 1.5, abs=1e-15)
    assert np.array_equal(a.phi, b.phi)
    with pytest.raises(ModelError, match="panda_joint1"):
        ConstraintSet(panda, [LockedJoint("panda_joint9")])
    with pytest.raises(ModelError, match="0..6"):
        ConstraintSet(panda, [LockedJoint(7)])


def test_free_body_constraints_on_the_lie_group():
    """nq = 7, nv = 6: Jacobians are in the tangent space, FD along integrate()."""
    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_free_body("box", 1.2, np.diag([0.1, 0.2, 0.3]))
    mech = b.build()
    cs = ConstraintSet(
        mech,
        [
            PointsCoincide("box_body", point1=[0.1, 0.2, -0.3], target=[0.0, 0.0, 0.0]),
            PointOnPlane("box_body", [0.0, 0.3, 1.0], point=[-0.2, 0.1, 0.05]),
        ],
    )
    rng = np.random.default_rng(17)
    for _ in range(3):
        q = mech.integrate(mech.neutral(), rng.uniform(-1, 1, 6))
        v = rng.uniform(-2, 2, 6)
        err = check_derivatives(cs, q, v)
        assert err["jacobian"] <= 1e-8 and err["drift"] <= 1e-6
        ev = cs.evaluate(mech.compute(q, v, cs.frames, dynamics=False))
        assert ev.A.shape == (4, 6) and np.abs(ev.drift).max() > 0.1


_CONTINUOUS_URDF = """<robot name="wheel_arm">
  <link name="base"/>
  <link name="l1">
    <inertial><origin xyz="0.3 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="l2">
    <inertial><origin xyz="0.3 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="wheel" type="continuous">
    <parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="l1"/><child link="l2"/><origin xyz="0.6 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
</robot>
"""


def test_locked_continuous_joint(tmp_path):
    """A URDF continuous joint is stored as (cos t, sin t): Phi = wrap(t - value)."""
    path = tmp_path / "wheel_arm.urdf"
    path.write_text(_CONTINUOUS_URDF)
    mech = from_urdf(path)
    # Pinocchio loads a URDF continuous joint as JointModelRUBZ: q = (cos, sin)
    assert (mech.nq, mech.nv) == (3, 2)
    cs = ConstraintSet(mech, [LockedJoint("wheel", 0.4)])
    q = np.array([np.cos(0.4), np.sin(0.4), 0.2])  # wheel angle theta = 0.4
    q2 = mech.integrate(q, np.array([0.5, 0.0]))  # theta = 0.9
    err = check_derivatives(cs, q2, np.array([1.0, 0.3]))
    phi, _ = cs.holonomic_terms_at(q)
    assert abs(phi[0]) <= 1e-15 and err["jacobian"] <= 1e-8


def test_surface_with_finite_difference_derivatives(panda):
    """PointOnSurface without grad/hess vs the same surface with analytic ones.

    The FD gradient (step h = 1e-5) is off by ~h^2 |f'''| / 6 ~ 5e-11 plus roundoff
    1e-16 / h = 1e-11; the FD Hessian (step 1e-4) by ~1e-8 |f''''| plus 1e-16 / 1e-8 =
    1e-8. So A agrees to ~1e-10 and the drift (v_p^T H v_p with |v_p| ~ 1-3) to ~1e-7.
    check_derivatives itself differentiates the noisy FD gradient once more with step
    1e-6 (noise ~1e-11 / 1e-6 = 1e-5 |v|): hence its looser drift bound there.
    """
    fd = PointOnSurface("panda_hand_tcp", _wavy, point=[0.02, 0.03, 0.04])
    grad_only = PointOnSurface("panda_hand_tcp", _wavy, _wavy_grad, point=[0.02, 0.03, 0.04])
    ref = PointOnSurface("panda_hand_tcp", _wavy, _wavy_grad, _wavy_hess, point=[0.02, 0.03, 0.04])
    sets = [ConstraintSet(panda, [c]) for c in (fd, grad_only, ref)]
    for q, v in _states(panda, 11):
        snap = panda.compute(q, v, sets[0].frames, dynamics=False)
        e_fd, e_g, e_ref = (s.evaluate(snap) for s in sets)
        assert np.abs(e_fd.A - e_ref.A).max() <= 1e-9
        assert np.abs(e_fd.drift - e_ref.drift).max() <= 1e-6
        assert np.abs(e_g.A - e_ref.A).max() == 0.0
        assert np.abs(e_g.drift - e_ref.drift).max() <= 1e-9
        err = check_derivatives(sets[0], q, v)
        assert err["jacobian"] <= 1e-8
        assert err["drift"] <= 5e-5 * (1 + v @ v)
        # with a step matched to the FD noise the check is tight again
        err = check_derivatives(sets[0], q, v, eps=1e-4)
        assert err["drift"] <= 1e-6


def test_function_constraint_finite_difference_jacobian_and_drift(panda):
    """FunctionConstraint from phi only: both A and A'v by central differences.

    A (step s = 1e-6) carries roundoff ~u |phi| / s ~ 1e-10; the drift differentiates
    this noisy A once more along v with step s / |v|, amplifying the noise by |v|^2 / s:
    ~1e-16 |v|^2 / s^2 = 1e-4 |v|^2. That is the bound asserted here for the default
    step; a step 1e-4 brings it to ~1e-8 (roundoff 1e-16/1e-8 plus truncation 1e-8).
    """
    fd = FunctionConstraint(2, _fphi)
    fd4 = FunctionConstraint(2, _fphi, fd_step=1e-4)
    sets = [ConstraintSet(panda, [c]) for c in (fd, fd4)]
    for q, v in _states(panda, 12):
        snap = panda.compute(q, v, (), dynamics=False)
        e, e4 = (s.evaluate(snap) for s in sets)
        assert np.abs(e.A - _fjac(q)).max() <= 1e-8
        assert np.abs(e.drift - _fdrift(q, v)).max() <= 1e-3 * (v @ v)
        assert np.abs(e4.drift - _fdrift(q, v)).max() <= 1e-6
        assert np.abs(_fdrift(q, v)).max() > 0.1


def test_function_constraint_default_fd_is_self_consistent(panda):
    """phi alone: the drift is one second difference of Phi (step 1e-4 / |v|), accurate
    to ~1e-8 against the analytic drift; the check skips FD-vs-FD rows and passes."""
    cs = ConstraintSet(panda, [FunctionConstraint(2, _fphi)])
    for q, v in _states(panda, 12):
        require_consistent(cs, q, v)
        e = cs.evaluate(panda.compute(q, v, (), dynamics=False))
        assert np.abs(e.drift - _fdrift(q, v)).max() <= 1e-6 * (1 + v @ v)


def test_require_consistent_rejects_wrong_jacobian(panda):
    def wrong_jac(q):
        A = _fjac(q)
        A[0, 1] *= 1.01  # a 1 % slip in one entry
        return A

    q, v = _states(panda, 13, 1)[0]
    require_consistent(ConstraintSet(panda, [FunctionConstraint(2, _fphi, _fjac, _fdrift)]), q, v)
    with pytest.raises(ModelError, match="jacobian"):
        require_consistent(ConstraintSet(panda, [FunctionConstraint(2, _fphi, wrong_jac)]), q, v)

    def wrong_drift(q, v):
        return _fdrift(q, v) + [0.0, 1e-3]

    with pytest.raises(ModelError, match="drift"):
        require_consistent(
            ConstraintSet(panda, [FunctionConstraint(2, _fphi, _fjac, wrong_drift)]), q, v
        )


def test_function_constraint_shape_errors(panda):
    q, v = _states(panda, 14, 1)[0]
    cs = ConstraintSet(panda, [FunctionConstraint(2, _fphi, lambda q: np.zeros((2, 6)))])
    with pytest.raises(ModelError, match="jacobian"):
        cs.evaluate(panda.compute(q, v, (), dynamics=False))
    with pytest.raises(ModelError):
        FunctionConstraint(0, _fphi)
    with pytest.raises(ModelError):
        FunctionConstraint(1)


def test_constraint_set_bookkeeping_mixed(panda):
    cs = ConstraintSet(
        panda,
        [
            PointsCoincide("panda_hand_tcp", target=[0.4, 0.0, 0.5]),  # 3 holonomic
            FunctionConstraint(1, jacobian=_pf_jac, drift=_pf_drift, name="pf"),  # Pfaffian
            PointOnPlane("panda_link5", [0, 0, 1], offset=0.3),  # 1 holonomic
            FunctionConstraint(2, _fphi, _fjac, _fdrift, name="fn"),  # 2 holonomic
        ],
    )
    assert cs.dim == 7
    assert cs.holonomic_rows.tolist() == [0, 1, 2, 4, 5, 6]
    assert cs.frames == ("panda_hand_tcp", "panda_link5")
    assert cs.row_names[3] == "pf" and cs.row_names[5] == "fn[0]"
    q, v = _states(panda, 15, 1)[0]
    snap = panda.compute(q, v, cs.frames, dynamics=False)
    ev = cs.evaluate(snap)
    assert ev.A.shape == (7, 7) and ev.drift.shape == (7,) and ev.phi.shape == (6,)
    assert np.array_equal(ev.A[3], _pf_jac(q)[0])
    assert np.array_equal(ev.A[5:], _fjac(q))
    assert np.abs(ev.phi[4:] - _fphi(q)).max() == 0.0
    tcp = snap.frame("panda_hand_tcp").p
    assert np.abs(ev.phi[:3] - (tcp - [0.4, 0.0, 0.5])).max() <= 1e-15
    phi, A_h = cs.holonomic_terms_at(q)
    assert np.array_equal(phi, ev.phi)
    assert np.array_equal(A_h, ev.A[cs.holonomic_rows])
    err = check_derivatives(cs, q, v)
    assert err["jacobian"] <= 1e-8 and err["drift"] <= 1e-6
    # adding a constraint invalidates the cached rows
    cs.add(LockedJoint(0))
    assert cs.dim == 8 and cs.holonomic_rows.tolist() == [0, 1, 2, 4, 5, 6, 7]


def test_empty_constraint_set(panda):
    cs = ConstraintSet(panda)
    q, v = _states(panda, 16, 1)[0]
    ev = cs.evaluate(panda.compute(q, v))
    assert ev.A.shape == (0, 7) and ev.drift.shape == (0,) and cs.dim == 0


def test_invalid_constraint_input():
    with pytest.raises(ModelError, match="normal"):
        PointOnPlane("f", [0, 0, 0])
    with pytest.raises(ModelError, match="radius"):
        PointOnCircle("f", radius=0.0)
    with pytest.raises(ModelError, match="directions"):
        PointsCoincide("f", directions=[[0, 0, 0]])
    with pytest.raises(ModelError, match="offset"):
        PointOnPlane("f", [0, 0, 1], point=[1.0, 2.0])
    with pytest.raises(ModelError, match="index"):
        ConstraintSet(SliderCrankChain(), [LockedJoint(2)])
    with pytest.raises(ModelError, match="joint names"):
        ConstraintSet(SliderCrankChain(), [LockedJoint("j1")])


# ------------------------------------------------ Aghili Sec. 5.4 (eq. 33, 36)


@pytest.mark.parametrize("theta", [0.0, 0.4, 2.0, -2.6, np.pi / 2])
def test_particle_on_circle_aghili_5_4(theta):
    rho, m = 0.7, 1.9
    mech = planar_particle(m, gravity=(0.0, -9.81, 0.0))
    cs = ConstraintSet(mech, [PointOnCircle("particle", radius=rho)])
    c, s = np.cos(theta), np.sin(theta)
    q = rho * np.array([c, s])
    v = 1.3 * np.array([-s, c])  # tangent velocity |v| = 1.3
    snap = mech.compute(q, v, cs.frames)
    ev = cs.evaluate(snap)
    assert ev.phi[0] == pytest.approx(0.0, abs=1e-15)
    assert np.abs(ev.A - q[None] / rho).max() <= 1e-15  # A = q^T / rho
    pr = D.projection(ev.A, ev.drift)
    P_ref = np.array([[s * s, -s * c], [-s * c, c * c]])  # eq. 33
    assert np.abs(pr.P - P_ref).max() <= 1e-15
    Cv_ref = -(v @ v) / rho**2 * q  # eq. 36
    assert np.abs(pr.Cv - Cv_ref).max() <= 1e-14
    # eq. 37: C v = -rho theta'^2 eps_perp with theta' = |v| / rho
    assert np.abs(pr.Cv + rho * (1.3 / rho) ** 2 * np.array([c, s])).max() <= 1e-14
    # the Jacobian's time derivative A' = v^T / rho: drift A' v = |v|^2 / rho
    assert ev.drift[0] == pytest.approx((v @ v) / rho, rel=1e-14)
    assert snap.M == pytest.approx(m * np.eye(2), abs=0)
