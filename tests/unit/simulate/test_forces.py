"""Force elements evaluated at every stage: springs, dampers and a
continuous applied force, against reduced ODEs derived by hand, with the energy
balance E - E0 = work + force_work + correction_energy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from pfaff.constraints import ConstraintSet, PointOnCircle
from pfaff.mechanism import ModelError, PlanarLink, planar_chain, planar_particle
from pfaff.simulate import (
    AnchorDamper,
    AnchorSpring,
    AppliedForce,
    GravityCompensation,
    JointDamper,
    JointSpring,
    PointDamper,
    PointForce,
    PointSpring,
    SimOptions,
    simulate,
)

M, G, RHO = 0.7, 9.81, 0.8  # particle on a circle
ANCHOR = np.array([0.9, 0.5, 0.0])  # spring anchor in the world
K, L0, K3 = 6.0, 0.4, 30.0  # linear stiffness, rest length, cubic coefficient
TH0, W0 = 0.3, 2.0


def _circle_with_spring(k3=K3):
    mech = planar_particle(M, gravity=(0.0, -G, 0.0))
    cs = ConstraintSet(mech, [PointOnCircle("particle", radius=RHO)])
    spring = PointSpring("particle", stiffness=K, rest_length=L0, cubic=k3, target=ANCHOR)
    q0 = RHO * np.array([np.cos(TH0), np.sin(TH0)])
    v0 = RHO * W0 * np.array([-np.sin(TH0), np.cos(TH0)])
    return cs, spring, q0, v0


def _spring_reduced(th, k3=K3):
    """Extension s(theta) and ds/dtheta of the spring for p = rho (cos, sin)."""
    p = RHO * np.array([np.cos(th), np.sin(th)])
    dp = RHO * np.array([-np.sin(th), np.cos(th)])
    d = p - ANCHOR[:2]
    r = np.sqrt(d @ d)
    return r - L0, (d @ dp) / r


def _reference(t_end, k3=K3):
    """m rho^2 theta'' = -m g rho cos theta - T(s) ds/dtheta (Lagrange in theta)."""

    def f(_t, y):
        s, ds = _spring_reduced(y[0], k3)
        T = K * s + k3 * s**3
        return [y[1], (-M * G * RHO * np.cos(y[0]) - T * ds) / (M * RHO**2)]

    sol = solve_ivp(f, (0, t_end), [TH0, W0], method="DOP853", rtol=1e-13, atol=1e-14)
    return sol.y[:, -1]


@pytest.mark.parametrize("stage_projection", [True, False])
def test_point_spring_converges_at_fourth_order_and_conserves_energy(stage_projection):
    """On the circle, a curved constraint without folds, RK4 is 4th order with the
    stages on the manifold (the default) and with the stages as they fall."""
    cs, spring, q0, v0 = _circle_with_spring()
    T_END = 1.0
    th, w = _reference(T_END)
    q_ref = RHO * np.array([np.cos(th), np.sin(th)])
    errs, drifts = [], []
    for dt in (8e-3, 4e-3, 2e-3, 1e-3):
        opt = SimOptions(dt=dt, stage_projection=stage_projection)
        a = simulate(cs, q0, v0, T_END, opt, forces=[spring]).arrays()
        errs.append(np.abs(a["q"][-1] - q_ref).max())
        E = a["energy"]
        drifts.append(np.abs(E - E[0]).max())
        # the recorded potential holds the spring's: V_g + k s^2/2 + k3 s^4/4
        s = np.array([_spring_reduced(np.arctan2(y, x))[0] for x, y in a["q"]])
        V_ref = M * G * a["q"][:, 1] + 0.5 * K * s**2 + 0.25 * K3 * s**4
        assert np.abs(a["potential"] - V_ref).max() <= 1e-12
        assert np.abs(a["force_potential"] - (V_ref - M * G * a["q"][:, 1])).max() <= 1e-12
    errs, drifts = np.array(errs), np.array(drifts)
    print("spring errors", errs, "energy drift", drifts)
    # the spring really matters: its force is of the order of the weight
    assert K * (np.ptp(s)) > 0.3 * M * G
    assert np.all(errs[:-1] / errs[1:] >= 12.0), errs  # 4th order: 16x per halving
    assert np.all(drifts[:-1] / drifts[1:] >= 12.0), drifts
    assert errs[-1] <= 1e-9 and drifts[-1] <= 1e-9


def test_held_spring_torque_is_only_first_order():
    """Witness that the stage evaluation matters: the same spring applied by a
    controller (zero-order hold over each step) converges at first order only."""
    cs, spring, q0, v0 = _circle_with_spring()
    spring.bind(cs.mechanism)
    th, _ = _reference(0.5)
    q_ref = RHO * np.array([np.cos(th), np.sin(th)])

    def ctrl(t, snap):
        return spring.force(t, snap)

    ctrl.frames = spring.frames
    ctrl.needs_sensors = False
    errs = []
    for dt in (4e-3, 2e-3):
        tr = simulate(cs, q0, v0, 0.5, SimOptions(dt=dt), controller=ctrl)
        errs.append(np.abs(tr.arrays()["q"][-1] - q_ref).max())
    assert 1.5 <= errs[0] / errs[1] <= 3.0, errs
    assert errs[1] > 1e-5


def test_point_damper_dissipates_exactly_its_work():
    """A damper between the particle and a world point: E - E0 = force_work
    (+ corrections), the work equals -int c s'^2 dt from the recorded samples
    (independent quadrature), and halving dt shrinks the balance error 16x."""
    cs, spring, q0, v0 = _circle_with_spring(k3=0.0)
    c = 0.8
    damper = PointDamper("particle", damping=c, target=ANCHOR)
    balances = []
    for dt in (4e-3, 2e-3):
        tr = simulate(cs, q0, v0, 1.0, SimOptions(dt=dt), forces=[spring, damper])
        a = tr.arrays()
        E, W, C = a["energy"], a["force_work"], a["correction_energy"]
        balances.append(np.abs(E - E[0] - W - C).max())
    assert W[-1] < -0.05 * E[0]  # it dissipates a fair share of the energy
    assert np.all(np.diff(W) <= 1e-15)  # never gains energy
    # independent witness: the dissipated power c s'^2 from the samples (Simpson)
    d = np.c_[a["q"], np.zeros(len(a["q"]))] - ANCHOR
    e = d / np.linalg.norm(d, axis=1)[:, None]
    sdot = np.sum(e[:, :2] * a["v"], axis=1)
    from scipy.integrate import simpson

    assert simpson(-c * sdot**2, x=a["t"]) == pytest.approx(W[-1], rel=1e-6)
    print("damper balance", balances)
    assert balances[1] <= 1e-9 * abs(E[0]) and balances[0] / balances[1] >= 12.0


def test_joint_spring_damper_and_applied_force_match_the_pendulum_ode():
    """One uniform bar on a revolute joint: I_p th'' = -m g c cos th - k (th - th_r)
    - b th' + A sin(w t), against DOP853."""
    m, L, k, th_r, b, A, om = 1.3, 0.6, 4.0, 0.2, 0.15, 0.9, 5.0
    mech = planar_chain([PlanarLink(L, m, com=L / 2, inertia=m * L**2 / 12)], name="bar")
    cs = ConstraintSet(mech, [])
    forces = [
        JointSpring("bar_joint1", k, rest=th_r),
        JointDamper(0, b),
        AppliedForce(lambda t, q, v: np.array([A * np.sin(om * t)])),
    ]
    Ip = m * L**2 / 3

    def f(t, y):
        tq = -m * G * L / 2 * np.cos(y[0]) - k * (y[0] - th_r) - b * y[1] + A * np.sin(om * t)
        return [y[1], tq / Ip]

    ref = solve_ivp(f, (0, 2.0), [0.5, 0.0], method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]
    tr = simulate(cs, np.array([0.5]), np.zeros(1), 2.0, SimOptions(dt=2e-3), forces=forces)
    a = tr.arrays()
    assert abs(a["q"][-1, 0] - ref[0]) <= 1e-9 and abs(a["v"][-1, 0] - ref[1]) <= 1e-8
    assert np.abs(a["force_potential"] - 0.5 * k * (a["q"][:, 0] - th_r) ** 2).max() <= 1e-14
    E = a["energy"]
    assert np.abs(E - E[0] - a["force_work"] - a["correction_energy"]).max() <= 1e-9
    # the same with an adaptive SciPy integrator: work integrated as an extra state
    tr2 = simulate(
        cs,
        np.array([0.5]),
        np.zeros(1),
        2.0,
        SimOptions(dt=2e-2, integrator="DOP853"),
        forces=forces,
    )
    a2 = tr2.arrays()
    assert abs(a2["q"][-1, 0] - ref[0]) <= 1e-8
    E2 = a2["energy"]
    assert np.abs(E2 - E2[0] - a2["force_work"]).max() <= 1e-8


def test_force_elements_refuse_bad_input():
    mech = planar_particle(1.0)
    cs = ConstraintSet(mech, [])
    q, v = np.zeros(2), np.zeros(2)
    with pytest.raises(ModelError, match="stiffness.*>= 0"):
        PointSpring("particle", stiffness=-1.0)
    with pytest.raises(ModelError, match="damping.*>= 0"):
        PointDamper("particle", damping=float("nan"))
    with pytest.raises(ModelError, match="unknown frame 'nope'.*valid frames"):
        simulate(cs, q, v, 0.01, forces=[PointSpring("nope", stiffness=1.0)])
    with pytest.raises(ModelError, match="coordinate index 5 is invalid.*0..1"):
        simulate(cs, q, v, 0.01, forces=[JointSpring(5, 1.0)])
    with pytest.raises(ModelError, match="ForceElement instances"):
        simulate(cs, q, v, 0.01, forces=[lambda t, q, v: q])
    with pytest.raises(ValueError, match=r"returned shape \(3,\), expected \(2,\)"):
        simulate(cs, q, v, 0.01, forces=[AppliedForce(lambda t, q, v: np.zeros(3))])


def test_spring_between_two_frames_is_minus_the_gradient_of_its_potential():
    """Q = -dV/dq by central differences for a nonlinear spring between points
    fixed (with offsets) in two moving frames; a damper's power is -c s'^2 with s'
    the finite-difference rate of the distance along v."""
    from pfaff.mechanism import PlanarChain, planar_chains

    mech = planar_chains(
        [
            PlanarChain([PlanarLink(0.5, 1.0), PlanarLink(0.7, 1.0)], name="a"),
            PlanarChain([PlanarLink(0.6, 1.0)], name="b", base=(1.0, 0.0)),
        ]
    )
    spring = PointSpring(
        "a_link2",
        "b_tip",
        stiffness=5.0,
        rest_length=0.3,
        cubic=2.0,
        point1=(0.2, 0.05, 0.0),
        point2=(-0.1, 0.0, 0.0),
    )
    damper = PointDamper("a_link2", "b_tip", damping=0.7, point1=(0.2, 0.05, 0.0))
    for e in (spring, damper):
        e.bind(mech)
    rng = np.random.default_rng(7)
    frames = ("a_link2", "b_tip")
    for _ in range(8):
        q, v = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3)
        snap = mech.compute(q, v, frames, dynamics=False)
        Q = spring.force(0.0, snap)
        h = 1e-6
        grad = np.array(
            [
                (
                    spring.potential(mech.compute(q + h * e, None, frames, dynamics=False))
                    - spring.potential(mech.compute(q - h * e, None, frames, dynamics=False))
                )
                / (2 * h)
                for e in np.eye(3)
            ]
        )
        np.testing.assert_allclose(Q, -grad, rtol=0, atol=1e-7)

        def dist(x):
            s = mech.compute(x, None, frames, dynamics=False)
            return np.linalg.norm(damper._geometry(s)[0])

        sdot = (dist(q + h * v) - dist(q - h * v)) / (2 * h)
        P = float(damper.force(0.0, snap) @ v)
        assert P == pytest.approx(-0.7 * sdot**2, abs=1e-7)
        assert P <= 0.0


def test_anchor_point_and_gravity_elements_are_minus_the_gradient_of_their_potentials():
    """On the Panda (3D, a point offset in the hand frame) at 10 random states: Q =
    -dV/dq by central differences for AnchorSpring (x and z rows), PointForce and
    GravityCompensation (Q = g(q) = dV_g/dq: it cancels gravity); AnchorDamper's power is
    -c |J_a v|^2 with J_a v the finite-difference rate of the point along v. Wrong input:
    the spring's gradient with the y row left in misses Q by > 1e-3 N m; bad axes are
    refused by name."""
    from pfaff.mechanism import load_robot

    mech = load_robot("panda")
    frame, off = "panda_hand", (0.02, -0.01, 0.1)
    spring = AnchorSpring(frame, (0.4, 0.1, 0.3), 7.0, axes=(0, 2), point=off)
    full = AnchorSpring(frame, (0.4, 0.1, 0.3), 7.0, point=off)
    push = PointForce(frame, (1.0, -2.0, -5.0), point=off)
    comp = GravityCompensation()
    damper = AnchorDamper(frame, 0.8, axes=(0, 1), point=off)
    for e in (spring, full, push, comp, damper):
        e.bind(mech)
    rng = np.random.default_rng(3)
    h = 1e-6

    def at(q):
        return mech.compute(q, None, (frame,))

    for _ in range(10):
        q, v = rng.uniform(-1.5, 1.5, mech.nq), rng.normal(0.0, 1.0, mech.nv)
        snap = mech.compute(q, v, (frame,))
        for e in (spring, push, comp):
            grad = np.array(
                [(e.potential(at(q + h * d)) - e.potential(at(q - h * d))) / (2 * h)
                 for d in np.eye(mech.nq)]
            )  # fmt: skip
            np.testing.assert_allclose(e.force(0.0, snap), -grad, rtol=0, atol=1e-6)
        np.testing.assert_allclose(comp.force(0.0, snap), snap.g, rtol=0, atol=1e-12)
        rate = (at(q + h * v).frames[frame].point(np.array(off))
                - at(q - h * v).frames[frame].point(np.array(off)))[:2] / (2 * h)  # fmt: skip
        P = float(damper.force(0.0, snap) @ v)
        assert abs(P + 0.8 * float(rate @ rate)) <= 1e-6 * max(1.0, abs(P))
    assert np.abs(full.force(0.0, snap) - spring.force(0.0, snap)).max() > 1e-3
    with pytest.raises(ModelError, match="distinct world axes among 0, 1, 2.*got \\(0, 3\\)"):
        AnchorSpring(frame, (0, 0, 0), 1.0, axes=(0, 3))
    with pytest.raises(ModelError, match="force must be 3 finite numbers"):
        PointForce(frame, (1.0, 2.0))
