"""Tests of pfaff.mechanism: closed forms vs Pinocchio models, frame kinematics vs
finite differences, model loading errors, builders.

Independent witnesses:
- the closed-form slider-crank chain (Aghili eq. 68) vs the same chain built by
  ``planar_chain`` and evaluated by Pinocchio;
- the closed-form Yoshikawa-Zheng arm (reference/yoshikawa_zheng.md) vs a
  Pinocchio tree of the five-bar built here from the link placements only;
- Pinocchio frame Jacobians/drifts vs central finite differences along the motion.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import (
    YZ_TABLE1,
    ModelBuilder,
    ModelError,
    PlanarChain,
    PlanarLink,
    SliderCrankChain,
    YZArm,
    YZLink,
    from_mjcf,
    from_urdf,
    load_robot,
    planar_chain,
    planar_chains,
)


def _panda_q(mech, rng):
    lo, hi = mech.model.lowerPositionLimit, mech.model.upperPositionLimit
    return lo + (hi - lo) * rng.uniform(0.05, 0.95, mech.nq)


def _rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


# --------------------------------------------------------------- slider-crank


def test_slider_crank_closed_form_matches_pinocchio_chain():
    rng = np.random.default_rng(68)
    for _ in range(4):  # 4 parameter sets x 5 states = 20 random states
        m, l, g = rng.uniform(0.2, 5.0), rng.uniform(0.1, 2.0), rng.uniform(0.0, 20.0)
        cf = SliderCrankChain(m=m, l=l, g=g)
        # point masses at the distal ends: com = l, no rotational inertia
        pc = planar_chain(
            [PlanarLink(l, m, com=l), PlanarLink(l, m, com=l)], gravity=(0.0, -g, 0.0)
        )
        dV = []
        for _ in range(5):
            q = rng.uniform(-np.pi, np.pi, 2)
            v = rng.uniform(-5.0, 5.0, 2)
            a = cf.compute(q, v, ["slider", "crank_tip"])
            b = pc.compute(q, v, ["arm_tip", "arm_link2"])
            assert _rel(a.M, b.M) <= 1e-12
            # h has a gravity part m l g and a velocity part m l^2 |v|^2: compare on that scale
            hs = m * l * g + m * l * l * float(v @ v)
            assert np.abs(a.h - b.h).max() <= 1e-12 * hs
            assert np.abs(a.g - b.g).max() <= 1e-12 * max(m * l * g, 1e-300)
            assert a.kinetic == pytest.approx(b.kinetic, rel=1e-12)
            fa, fb = a.frame("slider"), b.frame("arm_tip")
            assert np.abs(fa.p - fb.p).max() <= 1e-14 * l * 4
            assert np.abs(fa.R - fb.R).max() <= 1e-14
            assert np.abs(fa.J - fb.J).max() <= 1e-13 * l
            assert np.abs(fa.drift - fb.drift).max() <= 1e-12 * l * float(v @ v)
            ca, cb = a.frame("crank_tip"), b.frame("arm_link2")
            assert np.abs(ca.p - cb.p).max() <= 1e-14 * l * 4
            assert np.abs(ca.J[:3] - cb.J[:3]).max() <= 1e-13 * l
            dV.append(a.potential - b.potential)
        # the two potentials may differ by their zero, but by a constant only
        assert np.ptp(dV) <= 1e-12 * m * g * l * 4 + 1e-300


def test_slider_crank_matches_aghili_eq_68_and_69():
    """Spot values of M (eq. 68) and of the constraint Jacobian A = l [c1+c12, c12] (eq. 69)."""
    m, l, g = 2.0, 0.5, 9.81
    cf = SliderCrankChain(m=m, l=l, g=g)
    q, v = np.array([0.4, -1.1]), np.array([0.7, 1.3])
    s = cf.compute(q, v, ["slider"])
    c1, c2, c12 = np.cos(0.4), np.cos(-1.1), np.cos(0.4 - 1.1)
    s2 = np.sin(-1.1)
    M = m * l * l * np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])
    h = [
        -m * l * l * s2 * (v[1] ** 2 + 2 * v[0] * v[1]) + m * l * g * (c12 + 2 * c1),
        m * l * l * s2 * v[0] ** 2 + m * l * g * c12,
    ]
    assert np.abs(s.M - M).max() <= 1e-15
    assert np.abs(s.h - h).max() <= 1e-14
    cs = ConstraintSet(cf, [PointOnPlane("slider", [0.0, 1.0, 0.0])])
    ev = cs.evaluate(s)
    assert np.abs(ev.A - l * np.array([[c1 + c12, c12]])).max() <= 1e-15
    assert ev.phi[0] == pytest.approx(l * (np.sin(0.4) + np.sin(0.4 - 1.1)), abs=1e-15)


# ------------------------------------------------------------ Yoshikawa-Zheng


def _disc(mass: float, x: float, izz: float) -> pin.Inertia:
    return pin.Inertia(mass, np.array([x, 0.0, 0.0]), np.diag([izz / 2, izz / 2, izz]))


def _yz_tree(links, base=(0.0, 0.0)) -> pin.Model:
    """The five-bar of reference/yoshikawa_zheng.md as an open Pinocchio tree.

    J1 (angle q1) carries link 0; J2 at (l0, 0) of link 0 (angle q2 - q1) carries the
    forearm: link 3 (com at -lg3) and link 4 (com at +lg4) in one body; J3 at the base
    (angle q2 + pi) carries link 1; J4 at (l1, 0) of link 1 (angle q1 - q2 - pi)
    carries link 2, which therefore stays parallel to link 0.
    """
    L0, L1, L2, L3, L4 = links
    md = pin.Model()
    md.gravity = pin.Motion.Zero()
    b = pin.SE3(np.eye(3), np.array([base[0], base[1], 0.0]))
    j1 = md.addJoint(0, pin.JointModelRZ(), b, "J1")
    md.appendBodyToJoint(j1, _disc(L0.m, L0.lg, L0.I), pin.SE3.Identity())
    j2 = md.addJoint(j1, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([L0.l, 0, 0.0])), "J2")
    forearm = _disc(L3.m, -L3.lg, L3.I) + _disc(L4.m, L4.lg, L4.I)
    md.appendBodyToJoint(j2, forearm, pin.SE3.Identity())
    j3 = md.addJoint(0, pin.JointModelRZ(), b, "J3")
    md.appendBodyToJoint(j3, _disc(L1.m, L1.lg, L1.I), pin.SE3.Identity())
    j4 = md.addJoint(j3, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([L1.l, 0, 0.0])), "J4")
    md.appendBodyToJoint(j4, _disc(L2.m, L2.lg, L2.I), pin.SE3.Identity())
    tip = pin.SE3(np.eye(3), np.array([L4.l, 0.0, 0.0]))
    md.addFrame(pin.Frame("tip", j2, tip, pin.FrameType.OP_FRAME))
    return md


# q_tree = T q + c
_T = np.array([[1.0, 0.0], [-1.0, 1.0], [0.0, 1.0], [1.0, -1.0]])
_C = np.array([0.0, 0.0, np.pi, -np.pi])


def _random_links(rng):
    return tuple(
        YZLink(
            m=rng.uniform(0.01, 0.1),
            l=rng.uniform(0.04, 0.2),
            lg=rng.uniform(0.01, 0.1),
            I=rng.uniform(1e-6, 1e-4),
        )
        for _ in range(5)
    )


@pytest.mark.parametrize("which", ["table1", "random"])
def test_yz_arm_closed_form_equals_five_bar_tree(which):
    rng = np.random.default_rng(1993)
    links = YZ_TABLE1 if which == "table1" else _random_links(rng)
    base = (0.0, 0.0) if which == "table1" else (0.3, -0.2)
    arm = YZArm(links, base=base)
    md = _yz_tree(links, base)
    dd = md.createData()
    fid = md.getFrameId("tip")
    L0, L4 = links[0], links[4]
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, 2)
        v = rng.uniform(-8.0, 8.0, 2)
        qt, vt = _T @ q + _C, _T @ v
        Mt = pin.crba(md, dd, qt)
        Mt = np.triu(Mt) + np.triu(Mt, 1).T
        ht = pin.nonLinearEffects(md, dd, qt, vt)
        s = arm.compute(q, v, ["tip", "elbow"])
        M_abs = _T.T @ Mt @ _T
        assert _rel(s.M, M_abs) <= 1e-12
        # h = Christoffel terms only (g = 0): scale |M| |v|^2
        hs = np.abs(M_abs).max() * float(v @ v)
        assert np.abs(s.h - _T.T @ ht).max() <= 1e-12 * hs
        assert s.kinetic == pytest.approx(0.5 * vt @ Mt @ vt, rel=1e-12)
        # tip kinematics: Pinocchio frame vs closed form vs J = [l0 u'(q1), l4 u'(q2)]
        pin.forwardKinematics(md, dd, qt, vt, np.zeros(4))
        pin.computeJointJacobians(md, dd)
        pin.updateFramePlacements(md, dd)
        tip = s.frame("tip")
        assert np.abs(tip.p - dd.oMf[fid].translation).max() <= 1e-15
        u = lambda a: np.array([np.cos(a), np.sin(a)])
        du = lambda a: np.array([-np.sin(a), np.cos(a)])
        p_ref = np.array(base) + L0.l * u(q[0]) + L4.l * u(q[1])
        assert np.abs(tip.p[:2] - p_ref).max() <= 1e-15
        J_ref = np.column_stack([L0.l * du(q[0]), L4.l * du(q[1])])
        assert np.abs(tip.J[:2] - J_ref).max() <= 1e-15
        Jt = pin.getFrameJacobian(md, dd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        assert np.abs(tip.J - Jt @ _T).max() <= 1e-15
        acc = pin.getFrameClassicalAcceleration(
            md, dd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        )
        assert np.abs(tip.drift[:3] - acc.linear).max() <= 1e-13 * (1 + v @ v)
        elbow = s.frame("elbow")
        assert np.abs(elbow.p[:2] - (np.array(base) + L0.l * u(q[0]))).max() <= 1e-15


@pytest.mark.parametrize("which", ["table1", "random", "large_R"])
def test_yz_arm_serial_equivalent_has_its_M_and_tip(which):
    """``YZArm.serial_equivalent`` as a Pinocchio chain (relative angles): the same M
    (through q_abs = T q_rel) and tip at 10 states, and positive inertias also with a
    heavy link 4 whose centre of mass is far out (R^2 = 0.74 M11 M22)."""
    rng = np.random.default_rng(7)
    links = {"table1": YZ_TABLE1, "random": _random_links(rng)}.get(which)
    if links is None:
        L = list(_random_links(rng))
        L[4] = YZLink(m=0.5, l=L[4].l, lg=0.3, I=1e-6)
        links = tuple(L)
    arm = YZArm(links, base=(0.1, -0.2))
    eq = arm.serial_equivalent()
    assert all(k[1] > 0 and k[3] > 0 for k in eq)
    chain = planar_chain([PlanarLink(*k) for k in eq], gravity=(0.0, 0.0, 0.0), base=arm.base)
    T = np.array([[1.0, 0.0], [1.0, 1.0]])  # q_abs = T q_rel
    for _ in range(10):
        q, v = rng.uniform(-np.pi, np.pi, 2), rng.uniform(-8.0, 8.0, 2)
        s = chain.compute(q, v, ["arm_tip"])
        c = arm.compute(T @ q, T @ v, ["tip"])
        assert _rel(s.M, T.T @ c.M @ T) <= 1e-12
        assert np.abs(s.h - T.T @ c.h).max() <= 1e-12 * np.abs(c.M).max() * (1 + v @ v)
        assert np.abs(s.frames["arm_tip"].p - c.frames["tip"].p).max() <= 1e-15


def test_yz_constants_table1():
    """A, B, R of the reference from Table 1 (hand-computed numbers)."""
    arm = YZArm()
    L = YZ_TABLE1
    A = L[0].m * L[0].lg ** 2 + L[2].m * L[2].lg ** 2 + (L[3].m + L[4].m) * L[0].l ** 2
    B = L[1].m * L[1].lg ** 2 + L[2].m * L[1].l ** 2 + L[3].m * L[3].lg ** 2
    B += L[4].m * L[4].lg ** 2
    R = L[2].m * L[1].l * L[2].lg + L[3].m * L[0].l * L[3].lg - L[4].m * L[0].l * L[4].lg
    assert arm.A == pytest.approx(A, rel=1e-15)
    assert arm.B == pytest.approx(B, rel=1e-15)
    assert arm.R == pytest.approx(R, rel=1e-15)
    # the same numbers worked out by hand from Table 1
    assert arm.A == pytest.approx(1.1339296e-3, rel=1e-12)
    assert arm.B == pytest.approx(1.517375e-4, rel=1e-12)
    assert arm.R == pytest.approx(1.408e-5, rel=1e-12)
    s = arm.compute(np.array([0.7, 0.7]), np.zeros(2))
    assert s.M[0, 1] == pytest.approx(-R, rel=1e-15)
    assert s.M[0, 0] == pytest.approx(A + L[0].I + L[2].I, rel=1e-15)


# ----------------------------------------------------------- Pinocchio backend


def test_panda_frame_jacobian_and_drift_vs_finite_differences(panda):
    rng = np.random.default_rng(42)
    names = ["panda_hand_tcp", "panda_link4", "panda_link7"]
    eps = 1e-6
    for _ in range(3):
        q = _panda_q(panda, rng)
        v = rng.uniform(-1.5, 1.5, panda.nv)
        s = panda.compute(q, v, names, dynamics=False)
        sp = panda.compute(panda.integrate(q, eps * v), v, names, dynamics=False)
        sm = panda.compute(panda.integrate(q, -eps * v), v, names, dynamics=False)
        for n in names:
            f, fp, fm = s.frame(n), sp.frame(n), sm.frame(n)
            vel = f.J @ v
            # linear velocity = d/dt p
            dp = (fp.p - fm.p) / (2 * eps)
            assert np.abs(vel[:3] - dp).max() <= 1e-8
            # angular velocity (world) = log(R+ R-^T) / 2 eps
            w = pin.log3(fp.R @ fm.R.T) / (2 * eps)
            assert np.abs(vel[3:] - w).max() <= 1e-8
            # drift J' v = d/dt (J v) with a = 0 (classical acceleration)
            dJv = (fp.J @ v - fm.J @ v) / (2 * eps)
            assert np.abs(f.drift - dJv).max() <= 1e-7
            # a drift check that cannot pass by accident: the drift is sizeable
            assert np.abs(f.drift).max() > 0.05
        # point offsets: Jacobian and drift of a point fixed in the frame
        off = np.array([0.03, -0.05, 0.11])
        f, fp, fm = s.frame(names[0]), sp.frame(names[0]), sm.frame(names[0])
        Jp = f.point_jacobian(off)
        assert np.abs(Jp @ v - (fp.point(off) - fm.point(off)) / (2 * eps)).max() <= 1e-8
        dJp = (fp.point_jacobian(off) @ v - fm.point_jacobian(off) @ v) / (2 * eps)
        assert np.abs(f.point_drift(off, v) - dJp).max() <= 1e-7


def test_panda_inertia_and_energy(panda):
    rng = np.random.default_rng(43)
    model = panda.model
    data = model.createData()
    for _ in range(3):
        q = _panda_q(panda, rng)
        v = rng.uniform(-2.0, 2.0, panda.nv)
        s = panda.compute(q, v)
        assert np.array_equal(s.M, s.M.T)
        assert np.linalg.eigvalsh(s.M).min() > 1e-4
        # kinetic energy: body-by-body sum (Pinocchio's own algorithm) vs 0.5 v M v
        T = pin.computeKineticEnergy(model, data, q, v)
        assert s.kinetic == pytest.approx(T, rel=1e-12)
        assert s.kinetic == pytest.approx(0.5 * v @ s.M @ v, rel=1e-12)
        # potential energy from the body centres of mass: V = -sum m_i g . c_i
        pin.forwardKinematics(model, data, q)
        V = 0.0
        for i in range(1, model.njoints):
            Y = model.inertias[i]
            c = data.oMi[i].act(Y.lever)
            V -= Y.mass * float(model.gravity.linear @ c)
        assert s.potential == pytest.approx(V, rel=1e-12, abs=1e-12)
        assert s.energy == pytest.approx(T + V, rel=1e-12)
        # h at v = 0 is the gravity torque g = dV/dq
        s0 = panda.compute(q, None)
        assert np.abs(s0.h - s.g).max() <= 1e-12 * np.abs(s.g).max()
        eps = 1e-6
        dV = [
            (
                panda.compute(panda.integrate(q, eps * e), None).potential
                - panda.compute(panda.integrate(q, -eps * e), None).potential
            )
            / (2 * eps)
            for e in np.eye(panda.nv)
        ]
        assert np.abs(np.array(dV) - s.g).max() <= 1e-7


def test_snapshots_do_not_alias_pinocchio_data(panda):
    """A snapshot must keep its values when the mechanism computes the next state
    (Pinocchio's Python bindings hand out views into its reused ``data``)."""
    rng = np.random.default_rng(44)
    names = ["panda_hand_tcp", "panda_link4"]
    q1, q2 = _panda_q(panda, rng), _panda_q(panda, rng)
    v1, v2 = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
    s1 = panda.compute(q1, v1, names)
    keep = {
        "M": s1.M.copy(),
        "h": s1.h.copy(),
        "g": s1.g.copy(),
        **{f"{n}.{k}": getattr(s1.frame(n), k).copy() for n in names for k in "pRJ"},
        **{f"{n}.drift": s1.frame(n).drift.copy() for n in names},
    }
    s2 = panda.compute(q2, v2, names)
    assert np.abs(s2.M - s1.M).max() > 1e-3  # the second state is different
    for key, val in keep.items():
        obj = s1 if "." not in key else s1.frame(key.split(".")[0])
        now = getattr(obj, key.split(".")[-1])
        assert np.array_equal(now, val), key
    # intermediate snapshots without the extras agree on M and h
    s3 = panda.compute(q1, v1, names, extras=False)
    assert np.array_equal(s3.M, keep["M"]) and np.array_equal(s3.h, keep["h"])


# ------------------------------------------------------------------ loaders


def test_from_urdf_missing_file(tmp_path):
    path = tmp_path / "nowhere" / "robot.urdf"
    with pytest.raises(ModelError, match="robot.urdf") as exc:
        from_urdf(path)
    assert str(path) in str(exc.value)
    assert "does not exist" in str(exc.value)


@pytest.mark.parametrize(
    "text",
    [
        "this is not xml <robot",
        "<robot name='x'><link name='a'/><joint name='j' type='revolute'>"
        "<parent link='a'/><child link='b'/></joint></robot>",
    ],
    ids=["garbage", "broken-joint"],
)
def test_from_urdf_malformed_file(tmp_path, text):
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    with pytest.raises(ModelError) as exc:
        from_urdf(path)
    assert str(path) in str(exc.value)


def test_from_mjcf_malformed_and_missing(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("garbage")
    with pytest.raises(ModelError) as exc:
        from_mjcf(bad)
    assert str(bad) in str(exc.value)
    with pytest.raises(ModelError, match="does not exist"):
        from_mjcf(tmp_path / "missing.xml")


_MJCF = """<mujoco model="pendulum2">
  {option}
  <worldbody>
    <body name="link1" pos="0 0 0">
      <joint name="j1" type="hinge" axis="0 0 1"/>
      <inertial pos="0.3 0 0" mass="1.5" diaginertia="0.01 0.01 0.02"/>
      <body name="link2" pos="0.6 0 0">
        <joint name="j2" type="hinge" axis="0 0 1"/>
        <inertial pos="0.25 0 0" mass="0.8" diaginertia="0.005 0.005 0.01"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
_MJCF_LINKS = [
    PlanarLink(0.6, 1.5, com=0.3, inertia=0.02),
    PlanarLink(0.5, 0.8, com=0.25, inertia=0.01),
]


def test_from_mjcf_two_link_pendulum_matches_planar_chain(tmp_path):
    """MuJoCo's default gravity (0, 0, -9.81) is normal to the hinges' plane: h is
    the velocity part only, and M and h must equal the planar chain's."""
    path = tmp_path / "pendulum2.xml"
    path.write_text(_MJCF.format(option=""))
    mj = from_mjcf(path)
    assert (mj.nq, mj.nv) == (2, 2)
    assert mj.name == "pendulum2"
    pc = planar_chain(_MJCF_LINKS, gravity=(0.0, 0.0, -9.81))
    rng = np.random.default_rng(9)
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, 2)
        v = rng.uniform(-3, 3, 2)
        a, b = mj.compute(q, v), pc.compute(q, v)
        assert _rel(a.M, b.M) <= 1e-12
        assert np.abs(a.h - b.h).max() <= 1e-12 * (1 + v @ v)
        assert np.abs(b.h).max() > 1e-3  # non-trivial Coriolis terms


def test_from_mjcf_honours_gravity_option(tmp_path):
    path = tmp_path / "pendulum2.xml"
    path.write_text(_MJCF.format(option='<option gravity="0 -9.81 0"/>'))
    mj = from_mjcf(path)
    pc = planar_chain(_MJCF_LINKS, gravity=(0.0, -9.81, 0.0))
    q, v = np.array([2.32634436, -1.33946698]), np.array([0.6188889, 1.6652045])
    a, b = mj.compute(q, v), pc.compute(q, v)
    assert np.abs(a.h - b.h).max() <= 1e-12 * (10 + v @ v)
    assert np.abs(mj.model.gravity.linear - [0.0, -9.81, 0.0]).max() <= 1e-15


def test_unknown_frame_lists_valid_frames(panda):
    q = panda.neutral()
    with pytest.raises(ModelError) as exc:
        panda.compute(q, None, ["panda_hand_tpc"])
    msg = str(exc.value)
    assert "'panda_hand_tpc'" in msg
    assert "panda_hand_tcp" in msg and "panda_link3" in msg
    with pytest.raises(ModelError, match="panda_hand_tcp"):
        ConstraintSet(panda, [PointOnPlane("no_such_frame", [0, 0, 1])])
    cf = SliderCrankChain()
    with pytest.raises(ModelError) as exc:
        cf.compute(np.zeros(2), None, ["tip"])
    assert "slider" in str(exc.value) and "crank_tip" in str(exc.value)


def test_unknown_robot_and_joint():
    with pytest.raises(ModelError, match="panda"):
        load_robot("pandas")
    with pytest.raises(ModelError, match="joint"):
        load_robot("panda", locked=("no_joint",))


# ----------------------------------------------------------------- builders


@pytest.mark.parametrize("mass", [0.0, -1.0, float("nan")])
def test_non_positive_mass_rejected(mass):
    with pytest.raises(ModelError, match="mass"):
        planar_chain([PlanarLink(1.0, 1.0), PlanarLink(1.0, mass)])
    with pytest.raises(ModelError, match="mass"):
        ModelBuilder().add_planar_body("box", mass, 0.1)
    with pytest.raises(ModelError, match="mass"):
        ModelBuilder().add_free_body("box", mass, np.eye(3))
    with pytest.raises(ModelError, match="mass"):
        SliderCrankChain(m=mass)
    links = list(YZ_TABLE1)
    links[2] = YZLink(mass, 0.1, 0.05, 1e-5)
    with pytest.raises(ModelError, match="mass"):
        YZArm(links)


def test_other_invalid_builder_input():
    with pytest.raises(ModelError, match="length"):
        planar_chain([PlanarLink(0.0, 1.0)])
    with pytest.raises(ModelError, match="inertia"):
        planar_chain([PlanarLink(1.0, 1.0, inertia=-0.1)])
    with pytest.raises(ModelError, match="no links"):
        planar_chain([])
    with pytest.raises(ModelError, match="length"):
        SliderCrankChain(l=-1.0)
    b = ModelBuilder()
    b.add_planar_body("box", 1.0, 0.1)
    with pytest.raises(ModelError, match="twice"):
        b.add_planar_body("box", 1.0, 0.1)
    with pytest.raises(ModelError, match="gravity"):
        ModelBuilder(gravity=(0.0, -9.81))


def test_planar_body_inertia_is_diag_m_m_I():
    m, I, g = 2.5, 0.3, 9.81
    b = ModelBuilder(gravity=(0.0, -g, 0.0))
    b.add_planar_body("box", m, I)
    mech = b.build()
    assert (mech.nq, mech.nv) == (3, 3)
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = rng.uniform(-2, 2, 3)
        v = rng.uniform(-2, 2, 3)
        s = mech.compute(q, v, ["box"])
        assert np.abs(s.M - np.diag([m, m, I])).max() <= 1e-14
        # no Coriolis terms for a body referenced at its centre; gravity along -y
        assert np.abs(s.h - [0.0, m * g, 0.0]).max() <= 1e-13
        f = s.frame("box")
        assert np.abs(f.p - [q[0], q[1], 0.0]).max() <= 1e-15
        assert (
            np.abs(
                f.R[:2, :2] - [[np.cos(q[2]), -np.sin(q[2])], [np.sin(q[2]), np.cos(q[2])]]
            ).max()
            <= 1e-15
        )


def test_planar_link_default_com_and_inertia():
    """One link about its joint: M = m c^2 + I, with c = l/2 by default."""
    m, l, I = 1.3, 0.8, 0.05
    mech = planar_chain([PlanarLink(l, m, inertia=I)], gravity=(0.0, -9.81, 0.0))
    s = mech.compute(np.array([0.3]), np.zeros(1))
    assert s.M[0, 0] == pytest.approx(m * (l / 2) ** 2 + I, rel=1e-14)
    assert s.g[0] == pytest.approx(m * 9.81 * (l / 2) * np.cos(0.3), rel=1e-14)


def test_free_body_lie_group_and_inertia():
    m = 1.7
    I3 = np.array([[0.2, 0.01, 0.0], [0.01, 0.3, 0.02], [0.0, 0.02, 0.25]])
    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_free_body("box", m, I3)
    mech = b.build()
    assert (mech.nq, mech.nv) == (7, 6)
    rng = np.random.default_rng(4)
    q0 = mech.neutral()
    assert np.array_equal(q0, [0, 0, 0, 0, 0, 0, 1.0])
    for _ in range(5):
        dv = rng.uniform(-1.0, 1.0, 6)
        q1 = mech.integrate(q0, dv)
        assert np.linalg.norm(q1[3:]) == pytest.approx(1.0, abs=1e-15)
        assert np.abs(mech.difference(q0, q1) - dv).max() <= 1e-12
        dv2 = rng.uniform(-1.0, 1.0, 6)
        q2 = mech.integrate(q1, dv2)
        assert np.abs(mech.difference(q1, q2) - dv2).max() <= 1e-12
        back = mech.integrate(q1, mech.difference(q1, q2))
        assert np.abs(back - q2).max() <= 1e-12
        # body-frame velocities: M = blockdiag(m I3, I) at every orientation
        s = mech.compute(q2, dv, ["box_body"])
        M_ref = np.zeros((6, 6))
        M_ref[:3, :3] = m * np.eye(3)
        M_ref[3:, 3:] = I3
        assert np.abs(s.M - M_ref).max() <= 1e-13
        assert np.abs(s.frame("box_body").p - q2[:3]).max() <= 1e-15
    with pytest.raises(ModelError, match="semi-definite"):
        ModelBuilder().add_free_body("bad", 1.0, -np.eye(3))


def test_two_chains_in_one_model():
    left = [PlanarLink(0.5, 1.0), PlanarLink(0.4, 0.7, com=0.3, inertia=0.01)]
    right = [PlanarLink(0.6, 2.0, com=0.2), PlanarLink(0.3, 0.5), PlanarLink(0.2, 0.3)]
    both = planar_chains(
        [
            PlanarChain(left, name="L", base=(-1.0, 0.0)),
            PlanarChain(right, name="R", base=(1.0, 0.5)),
        ]
    )
    sL = planar_chain(left, name="L", base=(-1.0, 0.0))
    sR = planar_chain(right, name="R", base=(1.0, 0.5))
    assert (both.nq, both.nv) == (5, 5)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, 5)
        v = rng.uniform(-2, 2, 5)
        s = both.compute(q, v, ["L_tip", "R_tip"])
        a = sL.compute(q[:2], v[:2], ["L_tip"])
        b = sR.compute(q[2:], v[2:], ["R_tip"])
        assert np.abs(s.M[:2, :2] - a.M).max() <= 1e-14
        assert np.abs(s.M[2:, 2:] - b.M).max() <= 1e-14
        assert np.abs(s.M[:2, 2:]).max() == 0.0
        assert np.abs(s.h - np.concatenate([a.h, b.h])).max() <= 1e-13
        assert np.abs(s.frame("L_tip").p - a.frame("L_tip").p).max() <= 1e-15
        assert np.abs(s.frame("R_tip").p - b.frame("R_tip").p).max() <= 1e-15
        assert np.abs(s.frame("L_tip").J[:, 2:]).max() == 0.0
        assert np.abs(s.frame("R_tip").J[:, 2:] - b.frame("R_tip").J).max() <= 1e-15
        # the right tip: base + sum of link vectors at the cumulative angles
        ang = np.cumsum(q[2:])
        tip = np.array([1.0, 0.5]) + sum(
            k.length * np.array([np.cos(a_), np.sin(a_)]) for k, a_ in zip(right, ang)
        )
        assert np.abs(s.frame("R_tip").p[:2] - tip).max() <= 1e-15
    with pytest.raises(ModelError, match="twice"):
        planar_chains([PlanarChain(left, name="X"), PlanarChain(right, name="X")])
