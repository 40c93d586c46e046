"""from_urdf takes the URDF text and a gravity vector; PlanarLink
takes a centre of mass off the link axis."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff.mechanism import ModelError, PlanarLink, from_urdf, planar_chain
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism

URDF = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="l1">
    <inertial><origin xyz="0.2 0 0.05"/><mass value="1.5"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>
  </link>
  <link name="l2">
    <inertial><origin xyz="0.15 0.02 0"/><mass value="0.8"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>
"""


def test_from_urdf_text_equals_the_file(tmp_path):
    path = tmp_path / "two_link.urdf"
    path.write_text(URDF)
    a, b = from_urdf(path), from_urdf(URDF)
    assert b.name == "two_link" and (a.nq, a.nv) == (b.nq, b.nv) == (2, 2)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, v = rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
        sa, sb = a.compute(q, v), b.compute(q, v)
        np.testing.assert_allclose(sb.M, sa.M, rtol=0, atol=1e-14)
        np.testing.assert_allclose(sb.h, sa.h, rtol=0, atol=1e-13)


def test_from_urdf_gravity_argument():
    """The gravity torque is linear in g: doubling g doubles it; g = 0 removes it;
    the default is Pinocchio's (0, 0, -9.81)."""
    base = from_urdf(URDF)
    same = from_urdf(URDF, gravity=(0.0, 0.0, -9.81))
    double = from_urdf(URDF, gravity=[0.0, 0.0, -19.62])
    none = from_urdf(URDF, gravity=np.zeros(3))
    for q in ([0.3, -0.7], [1.2, 0.4], [-2.0, 2.5]):
        q = np.array(q)
        g = base.compute(q).g
        assert np.abs(g).max() > 0.1
        np.testing.assert_allclose(same.compute(q).g, g, rtol=0, atol=1e-14)
        np.testing.assert_allclose(double.compute(q).g, 2 * g, rtol=0, atol=1e-13)
        assert np.abs(none.compute(q).g).max() <= 1e-15


def test_from_urdf_text_and_gravity_refuse_bad_input():
    with pytest.raises(ModelError, match="URDF text does not parse"):
        from_urdf("<robot name='x'><link name='a'></robot>")
    bad_mass = URDF.replace('mass value="0.8"', 'mass value="-1"')
    with pytest.raises(ModelError, match="link 'l2' has mass = '-1'"):
        from_urdf(bad_mass)
    with pytest.raises(ModelError, match="gravity must be 3 finite numbers"):
        from_urdf(URDF, gravity=(0.0, -9.81))
    with pytest.raises(ModelError, match="gravity must be 3 finite numbers"):
        from_urdf(URDF, gravity=(0.0, float("nan"), 0.0))


def test_planar_link_with_an_off_axis_centre_of_mass():
    """One link, com (cx, cy) in the link frame: M = Izz + m (cx^2 + cy^2),
    V = m g (cx sin t + cy cos t), gravity torque dV/dt = m g (cx cos t - cy sin t)."""
    m, L, cx, cy, izz, g = 1.2, 0.5, 0.2, -0.07, 0.013, 9.81
    mech = planar_chain([PlanarLink(L, m, com=cx, inertia=izz, com_y=cy)], name="p")
    axis = planar_chain([PlanarLink(L, m, com=cx, inertia=izz)], name="p")
    for t in np.linspace(-3.0, 3.0, 11):
        s = mech.compute(np.array([t]), np.array([0.0]))
        assert s.M[0, 0] == pytest.approx(izz + m * (cx**2 + cy**2), abs=1e-14)
        assert s.potential == pytest.approx(m * g * (cx * np.sin(t) + cy * np.cos(t)), abs=1e-13)
        assert s.g[0] == pytest.approx(m * g * (cx * np.cos(t) - cy * np.sin(t)), abs=1e-13)
    # the on-axis link differs (the offset is really used)
    assert (
        abs(axis.compute(np.array([0.0])).potential - mech.compute(np.array([0.0])).potential)
        > 0.5
    )
    with pytest.raises(ModelError, match="centre of mass .* must be finite"):
        planar_chain([PlanarLink(L, m, com_y=float("inf"))])


def _unit_joints() -> PinocchioMechanism:
    """A free, a ball, a planar and an unbounded revolute joint side by side."""
    m = pin.Model()
    for jm in (pin.JointModelFreeFlyer(), pin.JointModelSpherical(), pin.JointModelPlanar(),
               pin.JointModelRUBX()):  # fmt: skip
        j = m.addJoint(0, jm, pin.SE3.Identity(), jm.shortname())
        m.appendBodyToJoint(j, pin.Inertia(1.0, np.zeros(3), np.eye(3)), pin.SE3.Identity())
    return PinocchioMechanism(m, "units")


# (slice of q, joint name) of each unit-norm part of _unit_joints' q (nq 17)
_UNITS = [(slice(3, 7), "JointModelFreeFlyer"), (slice(7, 11), "JointModelSpherical"),
          (slice(13, 15), "JointModelPlanar"), (slice(15, 17), "JointModelRUBX")]  # fmt: skip


@pytest.mark.parametrize(("part", "joint"), _UNITS)
@pytest.mark.parametrize("scale", [2.0, 0.5, 1.0 + 2e-5])
def test_a_q_whose_quaternion_or_cos_sin_is_not_unit_is_refused_naming_the_joint(
    part, joint, scale
):
    mech = _unit_joints()
    q = pin.neutral(mech.model)
    q[part] *= scale
    with pytest.raises(ModelError, match=f"joint '{joint}'.*norm") as exc:
        mech.check_state(q, np.zeros(mech.nv))
    assert f"{scale:.9g}" in str(exc.value)  # the norm it found


@pytest.mark.parametrize("scale", [1.0 - 9e-6, 1.0 + 9e-6])
def test_a_q_unit_to_the_tolerance_passes(scale):
    mech = _unit_joints()
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = pin.randomConfiguration(mech.model, -np.ones(17), np.ones(17))
        for part, _ in _UNITS:
            q[part] *= scale
        mech.check_state(q, np.zeros(mech.nv))
        with pytest.raises(ModelError, match="v has shape"):  # still checks the sizes
            mech.check_state(q, np.zeros(mech.nv + int(rng.integers(1, 3))))


def test_frame_index_names_an_unknown_frame_and_the_valid_ones():
    from pfaff.mechanism.base import frame_ids, frame_index

    model = from_urdf(URDF).model
    assert frame_index(model, "l2") == frame_ids(model)["l2"]
    with pytest.raises(ModelError, match="unknown frame 'l3'; valid frames: .*l2"):
        frame_index(model, "l3")
