"""Parity of every lowering (pfaff.lowering) with the NumPy engine, generated from the
registry: each registered constraint and force type has an example here, and a type
registered without one fails :func:`test_every_lowering_has_a_parity_example`.

Per example: the core's rows (A, drift, Phi) and dynamics (a, F, lambda, rank) or the
force terms (Q, V, power) against the NumPy reference at 20 random states; a whole
run of both engines for the constraints.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pfaff.manipulation.rolling  # noqa: F401 - registers the rolling rows' lowerings
from pfaff import core, lowering
from pfaff import dynamics as dyn
from pfaff.constraints import (
    BallAngle,
    ConstraintSet,
    CoordinateLock,
    LockedJoint,
    PointOnBodyPlane,
    PointOnCircle,
    PointOnPlane,
)
from pfaff.constraints import PointsCoincide as Coincide
from pfaff.constraints.ball_angle import ball_angle
from pfaff.constraints.coupling import JointCoupling, Scaled
from pfaff.constraints.quat_aligned import QuatAligned
from pfaff.constraints.revolute import RevoluteClosure
from pfaff.constraints.weld import FrameAligned, Weld
from pfaff.contact.rim import RimOnPlane, RimRolling
from pfaff.contact.rolling import RollingPoint
from pfaff.manipulation.rolling import ContactConstraint, RollingConstraint
from pfaff.mechanism import from_urdf, load_robot, planar_particle
from pfaff.mechanism.actuators import Actuator
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism
from pfaff.simulate import SimOptions, project_state, simulate
from pfaff.simulate import forces as F
from pfaff.simulate.actuators import ActuatorForce
from pfaff.simulate.core_engine import build
from pfaff.systems import rolling_fingers as rf

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
TCP = "panda_hand_tcp"


@pytest.fixture(scope="module")
def panda():
    return load_robot("panda")


def _grasp():
    contour = rf.make_contour("ellipse")
    mech, contacts, cset = rf.grasp_system(contour, 0.03, (0.01, 0.012))
    q0 = rf.initial_configuration(
        contour, (0.006, 0.085, 1.75), (0.01, 0.012), (0.0, 0.0), (np.pi + 0.05, 0.05), 2.64
    )
    q0, _ = project_state(cset, q0, np.zeros(8), SimOptions(stage_projection=False))
    return mech, cset.constraints, q0


def _hinged_loop():
    """A spatial 6R chain whose tip is hinged (axis z) to a base frame placed at the tip's
    pose at q_star: a closed loop of one degree of freedom, q_star on its manifold (rank 5
    of the hinge's 5 rows)."""
    axes, q_star = (
        ["0 0 1", "1 0 0", "0 1 0", "1 0 0", "0 0 1", "0 1 0"],
        np.linspace(0.3, -0.5, 6),
    )

    def urdf(closure: str) -> str:
        parts, parent = ['<robot name="loop6r"><link name="base"/>'], "base"
        for i, ax in enumerate(axes, start=1):
            parts.append(
                f'<link name="l{i}"><inertial><origin xyz="0.15 0 0"/><mass value="{1 + i / 10}"/>'
                '<inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>'
                f'</link><joint name="j{i}" type="revolute"><parent link="{parent}"/>'
                f'<child link="l{i}"/><origin xyz="{0.3 if i > 1 else 0} 0 0"/><axis xyz="{ax}"/>'
                '<limit lower="-10" upper="10" effort="1" velocity="1"/></joint>'
            )
            parent = f"l{i}"
        parts.append(
            '<link name="tip"/><joint name="tipj" type="fixed"><parent link="l6"/>'
            '<child link="tip"/><origin xyz="0.3 0 0"/></joint>'
        )
        return "".join(parts) + closure + "</robot>"

    open_chain = from_urdf(urdf(""))
    tip = open_chain.compute(q_star, np.zeros(6), ("tip",)).frame("tip")
    rpy = pin.rpy.matrixToRpy(tip.R)
    hinge = (
        '<link name="hinge"/><joint name="hj" type="fixed"><parent link="base"/>'
        f'<child link="hinge"/><origin xyz="{" ".join(f"{x:.17g}" for x in tip.p)}" '
        f'rpy="{" ".join(f"{x:.17g}" for x in rpy)}"/></joint>'
    )
    mech = from_urdf(urdf(hinge), gravity=(0.0, 0.0, -9.81))
    return mech, [RevoluteClosure("tip", "hinge", (0, 0, 1), (0, 0, 0.1), (0, 0, 0.1))], q_star


def _ball_angle():
    """A ball joint on a free body, its rotation angle held at that of the start (0.45)."""
    mech = _balls()
    q0 = mech.integrate(mech.neutral(), np.r_[np.zeros(6), 0.3, -0.2, 0.25])
    return mech, [BallAngle("ball", ball_angle(q0[7:11])[0])], q0


#: one example per registered constraint type: (robot, constraints, a whole run from the
#: robot's neutral posture is feasible); robot "panda", "grasp" (two rolling fingers), a
#: mechanism, or a function returning (mechanism, constraints, a start on the manifold)
CONSTRAINTS = {
    PointOnPlane: ("panda", lambda: [PointOnPlane("panda_link5", (0.1, 0.2, 1.0), 0.3)], True),
    Coincide: ("panda", lambda: [Coincide(TCP, target=(0.3, 0.0, 0.6))], True),
    PointOnBodyPlane: (
        "panda",
        lambda: [PointOnBodyPlane(TCP, "panda_link3", (0.2, -0.3, 1.0), 0.1, (0, 0.02, 0.05))],
        True,
    ),
    PointOnCircle: (
        planar_particle(2.0),
        lambda: [PointOnCircle("particle", (0.1, -0.2), 0.7)],
        True,
    ),
    LockedJoint: ("panda", lambda: [LockedJoint("panda_joint2", 0.3)], True),
    CoordinateLock: (
        "panda",
        lambda: [
            CoordinateLock(
                ["panda_joint2", "panda_joint4", "panda_joint2"], [1.0, -0.5, 0.3], -0.2
            )
        ],
        True,
    ),
    BallAngle: (_ball_angle, None, True),
    FrameAligned: ("panda", lambda: [FrameAligned("panda_link7", "panda_link4")], False),
    Weld: ("panda", lambda: [Weld("panda_link7", "panda_link3")], False),
    JointCoupling: (
        "panda",
        lambda: [JointCoupling("panda_joint2", "panda_joint4", -0.7, 0.2)],
        True,
    ),
    QuatAligned: ("panda", lambda: [QuatAligned("panda_link7", "panda_link2")], False),
    Scaled: ("panda", lambda: [Scaled(LockedJoint("panda_joint1", 0.1), (3.0,))], True),
    RevoluteClosure: (_hinged_loop, None, True),
    ContactConstraint: ("grasp", None, True),
    RollingConstraint: ("grasp", None, True),
    RollingPoint: (
        "panda",
        lambda: [
            RollingPoint("panda_link7", (1.0, 0.2, 0.0), (0.0, 0.0, -0.05), (0.0, 0.02, 0.1)),
            RollingPoint("panda_link7", (-0.2, 1.0, 0.3), (0.0, 0.0, -0.05), (0.0, 0.02, 0.1)),
            # on a plane fixed in a moving link (t, l in its axes, turning with it)
            RollingPoint(
                "panda_link7",
                (0.3, -1.0, 0.2),
                (0.01, 0.0, -0.05),
                (0.0, 0.02, 0.1),
                frame2="panda_link3",
            ),
        ],
        True,
    ),
    RimOnPlane: (
        "panda",
        lambda: [
            RimOnPlane("panda_link7", (0.0, 0.02, 0.1), (0.3, 1.0, 0.2), 0.05, (0, 0, 1), 0.5)
        ],
        True,
    ),
    RimRolling: (
        "panda",
        lambda: [
            RimRolling(
                "panda_link7", (0.0, 0.02, 0.1), (0.3, 1.0, 0.2), 0.05, (0, 0, 1), (1, 0, 0)
            ),
            RimRolling(
                "panda_link7", (0.0, 0.02, 0.1), (0.3, 1.0, 0.2), 0.05, (0, 0, 1), (0, 1, 0)
            ),
        ],
        True,
    ),
}

#: one example per registered force type, on the Panda
FORCES = {
    F.PointSpring: lambda: F.PointSpring(TCP, "panda_link3", stiffness=3.0, rest_length=0.2),
    F.PointDamper: lambda: F.PointDamper(TCP, damping=0.7, target=(0.3, 0.1, 0.4)),
    F.JointSpring: lambda: F.JointSpring("panda_joint3", 1.5, rest=-0.4),
    F.JointDamper: lambda: F.JointDamper("panda_joint5", 0.3),
    F.CoordinateSpring: lambda: F.CoordinateSpring(
        ["panda_joint1", "panda_joint2"], [1.0, -0.5], 2.0
    ),
    F.TendonSpring: lambda: F.TendonSpring(
        ["panda_joint1", "panda_joint3", "panda_joint1"], [1.0, -0.7, 0.2], 2.0, 0.4, (-0.2, 0.3)
    ),
    F.AnchorSpring: lambda: F.AnchorSpring(TCP, (0.4, 0.0, 0.5), 4.0, axes=(0, 2)),
    F.AnchorDamper: lambda: F.AnchorDamper("panda_link6", 0.6, axes=(0, 1)),
    F.PointForce: lambda: F.PointForce(TCP, (0.5, -2.0, 1.0), point=(0.0, 0.02, 0.0)),
    F.GravityCompensation: lambda: F.GravityCompensation(),
    F.BallSpring: lambda: F.BallSpring("ball", 2.5, (0.1, -0.2, 0.3, np.sqrt(0.86))),
    F.DofDamper: lambda: F.DofDamper("root", (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)),
    ActuatorForce: lambda: _actuator(),
}


#: the force types that need joints the Panda lacks: on a free body carrying a ball joint
ON_BALLS = (F.BallSpring, F.DofDamper)


def _actuator() -> ActuatorForce:
    """A tendon actuator with an affine gain, an affine bias and a force range, its
    ctrl set (the lowering carries it)."""
    a = Actuator(
        "tendon", ("panda_joint2", "panda_joint4"), (1.0, -0.5), (0.1, 0.0), gear=2.0,
        gain=3.0, bias=(0.1, -4.0, -0.3), gain_terms=(0.5, -0.2), forcerange=(-2.0, 2.5),
    )  # fmt: skip
    e = ActuatorForce(a, 0)
    e.ctrl = 0.7
    return e


def _balls():
    """A free body carrying a body on a ball joint (Pinocchio, built here)."""
    model = pin.Model()
    inertia = pin.Inertia(1.5, np.array([0.1, 0.0, 0.05]), np.diag([0.02, 0.03, 0.04]))
    root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
    model.appendBodyToJoint(root, inertia, pin.SE3.Identity())
    ball = model.addJoint(
        root, pin.JointModelSpherical(), pin.SE3(np.eye(3), np.array([0.2, 0, 0])), "ball"
    )
    model.appendBodyToJoint(ball, inertia, pin.SE3.Identity())
    return PinocchioMechanism(model, name="balls")


def test_every_lowering_has_a_parity_example():
    assert set(lowering.lowered_types("constraint")) == set(CONSTRAINTS)
    assert set(lowering.lowered_types("force")) == set(FORCES)


def _system(panda, kind):
    where, make, _ = CONSTRAINTS[kind]
    if where == "grasp":
        mech, cons, q0 = _grasp()
        cons = [c for c in cons if type(c) is kind]
        return ConstraintSet(mech, cons), q0
    if callable(where):
        mech, cons, q0 = where()
        return ConstraintSet(mech, cons), q0
    mech = panda if where == "panda" else where
    return ConstraintSet(mech, make()), None


@pytest.mark.parametrize("kind", list(CONSTRAINTS), ids=lambda t: t.__name__)
def test_constraint_lowering_agrees_with_numpy(panda, kind):
    """A, drift, Phi [units of the rows] and a, F, lambda, rank: core vs NumPy to 1e-10
    relative (the multipliers of 6 rows near a singular Jacobian lose a few digits to
    conditioning) at 20 states; a whole run of 20 steps of both engines to 1e-9."""
    cset, q0 = _system(panda, kind)
    mech = cset.mechanism
    assert core.unsupported_reason(cset) is None
    s = core.build(cset)
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(20):
        base = mech.neutral() if q0 is None else q0
        q = mech.integrate(base, rng.uniform(-0.3, 0.3, mech.nv))
        v, tau = rng.uniform(-1.0, 1.0, mech.nv), rng.uniform(-2.0, 2.0, mech.nv)
        snap = mech.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        _, _, A, drift, phi = s.evaluate(q, v)
        ref = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
        a, Fc, lam, rank = s.solve(q, v, tau)
        assert rank == ref.proj.rank
        for x, r in ((A, ev.A), (drift, ev.drift), (a, ref.a), (Fc, ref.F), (lam, ref.lam)):
            worst = max(worst, float(np.abs(x - r).max() / max(np.abs(r).max(), 1.0)))
        worst = max(worst, float(np.abs(phi - ev.phi).max(initial=0.0)))
    assert worst <= 1e-10
    if not CONSTRAINTS[kind][2]:
        return  # no feasible start near the neutral posture: runs in tests/test_core.py
    start = mech.neutral() if q0 is None else q0
    opt = {e: SimOptions(dt=1e-3, engine=e, progress=False) for e in ("numpy", "core")}
    runs = {e: simulate(cset, start, np.zeros(mech.nv), 0.02, o).arrays() for e, o in opt.items()}
    assert np.abs(runs["numpy"]["q"] - runs["core"]["q"]).max() < 1e-9  # rad or m


@pytest.mark.parametrize("kind", list(FORCES), ids=lambda t: t.__name__)
def test_force_lowering_agrees_with_numpy(panda, kind):
    """Q [N m], V [J] and power [W] of the core's element against the NumPy element at
    20 states to 1e-12 (relative to max(1, |reference|))."""
    e = FORCES[kind]()
    if kind in ON_BALLS:
        panda = _balls()
    fset = F.ForceSet(panda, [e])
    system = build(ConstraintSet(panda, []), [e])
    rng = np.random.default_rng(9)
    for _ in range(20):
        q = panda.integrate(panda.neutral(), rng.uniform(-1.0, 1.0, panda.nv))
        v = rng.uniform(-1.0, 1.0, panda.nv)
        snap = panda.compute(q, v, fset.frames)
        Q, power = fset.evaluate(0.0, snap)
        Qc, Vc, Pc = system.force_terms(q, v)
        assert np.abs(Qc - Q).max() <= 1e-12 * max(1.0, np.abs(Q).max())
        assert abs(Vc - fset.potential(snap)) <= 1e-12 * max(1.0, abs(Vc))
        if not e.conservative:
            assert abs(Pc - power) <= 1e-12 * max(1.0, abs(power))
