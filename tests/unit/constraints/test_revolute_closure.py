"""RevoluteClosure: a revolute loop closure of 5 independent rows,
checked against finite differences, against the 6-row closure by two PointsCoincide
(the same manifold: the same motion, rank 5 of 6 there, 5 of 5 here), and refused
with a clear message on bad input."""

from __future__ import annotations

import re

import numpy as np
import pinocchio as pin
import pytest

from pfaff import core, lowering
from pfaff.constraints import ConstraintSet, PointsCoincide, RevoluteClosure, check_derivatives
from pfaff.mechanism import ModelError, from_urdf
from pfaff.simulate import SimOptions, simulate

AXES = ["0 0 1", "1 0 0", "0 1 0", "1 0 0", "0 0 1", "0 1 0"]
Q_STAR = np.array([0.3, -0.6, 0.8, 0.4, -0.5, 0.7])


def _chain(closure: str = "") -> str:
    links, joints = ['<link name="base"/>'], []
    parent = "base"
    for i, ax in enumerate(AXES, start=1):
        links.append(
            f'<link name="l{i}"><inertial><origin xyz="0.15 0 0"/><mass value="{1 + 0.1 * i}"/>'
            '<inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        )
        xyz = "0 0 0" if i == 1 else "0.3 0 0"
        joints.append(
            f'<joint name="j{i}" type="revolute"><parent link="{parent}"/><child link="l{i}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{ax}"/>'
            '<limit lower="-10" upper="10" effort="1" velocity="1"/></joint>'
        )
        parent = f"l{i}"
    links.append('<link name="tip"/>')
    joints.append(
        '<joint name="tipj" type="fixed"><parent link="l6"/><child link="tip"/>'
        '<origin xyz="0.3 0 0"/></joint>'
    )
    body = "".join(links + joints) + closure
    return f'<robot name="loop6r">{body}</robot>'


def _loop() -> tuple[object, str]:
    """A 6R chain whose tip is hinged (axis z of the tip) to a base frame placed at the
    tip's pose at Q_STAR: one degree of freedom, Q_STAR on the manifold."""
    mech = from_urdf(_chain())
    data = mech.model.createData()
    pin.framesForwardKinematics(mech.model, data, Q_STAR)
    M = data.oMf[mech.model.getFrameId("tip")]
    rpy = pin.rpy.matrixToRpy(M.rotation)
    closure = (
        '<link name="hinge"/><joint name="hj" type="fixed"><parent link="base"/>'
        f'<child link="hinge"/><origin xyz="{" ".join(f"{x:.17g}" for x in M.translation)}" '
        f'rpy="{" ".join(f"{x:.17g}" for x in rpy)}"/></joint>'
    )
    return from_urdf(_chain(closure), gravity=(0.0, 0.0, -9.81)), "hinge"


def test_revolute_closure_derivatives_against_finite_differences():
    mech, hinge = _loop()
    cs = ConstraintSet(mech, [RevoluteClosure("tip", hinge, axis=(0, 0, 1))])
    rng = np.random.default_rng(3)
    for _ in range(10):
        q = Q_STAR + rng.normal(0, 0.3, 6)
        v = rng.normal(0, 1.0, 6)
        err = check_derivatives(cs, q, v)
        assert err["jacobian"] <= 1e-8 and err["drift"] <= 1e-6, err


def test_revolute_closure_moves_like_two_coincident_points():
    """The same hinge as two PointsCoincide (centre and a point 0.2 m along the axis):
    6 rows of rank 5. RevoluteClosure: 5 rows of rank 5, the same motion to 1e-9 rad."""
    mech, hinge = _loop()
    five = ConstraintSet(mech, [RevoluteClosure("tip", hinge, axis=(0, 0, 1))])
    six = ConstraintSet(
        mech,
        [
            PointsCoincide("tip", hinge),
            PointsCoincide("tip", hinge, point1=(0, 0, 0.2), point2=(0, 0, 0.2)),
        ],
    )
    assert np.abs(five.holonomic_terms_at(Q_STAR)[0]).max() <= 1e-12
    v0 = np.linalg.svd(five.holonomic_terms_at(Q_STAR)[1])[2][-1]  # the one admissible direction
    a5 = simulate(five, Q_STAR, v0, 0.5, SimOptions(dt=1e-3, engine="numpy")).arrays()
    a6 = simulate(six, Q_STAR, v0, 0.5, SimOptions(dt=1e-3, engine="numpy")).arrays()
    assert a5["rank"].min() == 5 and a5["phi"].shape[1] == 5
    assert a6["rank"].max() == 5 and a6["phi"].shape[1] == 6
    assert np.ptp(a5["q"][:, 0]) > 0.05  # it moves
    assert np.abs(a5["q"] - a6["q"]).max() <= 1e-9
    assert np.abs(a5["phi"]).max() <= 1e-10
    # the hinge allows rotation about the axis only: the tip's axis stays on the hinge's
    data = mech.model.createData()
    for q in a5["q"][::50]:
        pin.framesForwardKinematics(mech.model, data, q)
        za = data.oMf[mech.model.getFrameId("tip")].rotation[:, 2]
        zb = data.oMf[mech.model.getFrameId(hinge)].rotation[:, 2]
        assert np.linalg.norm(np.cross(za, zb)) <= 1e-10


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"axis": (0, 0, 0)}, ["axis", "non-zero"]),
        ({"axis": (1, 2)}, ["axis", "3 finite numbers"]),
        ({"axis_b": (0, float("nan"), 1)}, ["axis_b", "3 finite numbers"]),
    ],
)
def test_revolute_closure_refuses_bad_axes(kwargs, words):
    with pytest.raises(ModelError) as exc:
        RevoluteClosure("tip", "hinge", **kwargs)
    for w in words:
        assert w in str(exc.value)


def test_revolute_closure_unknown_frame_names_the_valid_ones():
    mech, _ = _loop()
    with pytest.raises(ModelError, match="ghost"):
        ConstraintSet(mech, [RevoluteClosure("tip", "ghost")])


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
def test_the_core_refuses_a_hinge_spec_it_cannot_write():
    """The core's hinge rows read two frames and two directions u_1, u_2 of frame a: a
    spec without them is a ValueError naming the field at System.add, never a read past
    an array."""
    mech, hinge = _loop()
    cset = ConstraintSet(mech, [RevoluteClosure("tip", hinge, axis=(0, 0, 1))])
    assert core.unsupported_reason(cset) is None
    system = core.build(cset)
    into = core.Build(system, mech)
    good = lowering.lower(cset.constraints[0], "constraint", into)
    for field, value, words in [
        ("s2", -1, "spec.s2 = -1"),
        ("D", np.zeros((3, 3)), "spec.D has shape (3, 3), expected (2, 3)"),
        ("dim", 6, "spec.dim = 6"),
    ]:
        s = lowering.lower(cset.constraints[0], "constraint", into)
        setattr(s, field, value)
        with pytest.raises(ValueError, match=re.escape(words)):
            system.add(s)
    system.add(good)  # the lowering's own spec is taken
