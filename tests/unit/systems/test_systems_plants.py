"""systems.handwriting and systems.rolling_fingers against forward kinematics and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfaff.manipulation.contours import Ellipse
from pfaff.systems import handwriting as hw
from pfaff.systems import rolling_fingers as rf


@pytest.mark.parametrize("elbow", [1.0, -1.0])
def test_posture_on_plane_forward_kinematics(elbow):
    mech = hw.handwriting_arm()
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(200):
        xd, yd = rng.uniform(0.1, 0.35), rng.uniform(-0.15, 0.15)
        xi, psi = rng.uniform(-0.05, 0.08), rng.uniform(-2.6, -0.6)
        q = hw.posture_on_plane(xd, yd, xi, psi, elbow)
        if q is None:
            continue
        hits += 1
        fr = mech.compute(q, None, ["link3", hw.TIP], dynamics=False).frames
        assert np.abs(fr[hw.TIP].p - [xd, yd, xi]).max() < 1e-12
        pencil = fr[hw.TIP].p - fr["link3"].p  # elevation psi in the vertical plane
        radial = pencil[:2] @ np.array([xd, yd]) / math.hypot(xd, yd)
        assert abs(math.atan2(pencil[2], radial) - psi) < 1e-9
        assert np.sign(q[2]) == elbow  # the branch: elbow = +1 bends the forearm up
    assert hits > 150


def test_posture_on_plane_out_of_reach_is_none():
    assert hw.posture_on_plane(0.6, 0.0, 0.0, -1.6) is None


def test_check_target():
    hw.check_target(0.24, -0.02, 0.0)
    for xd, yd in [(0.6, 0.0), (0.01, 0.0)]:
        with pytest.raises(ValueError, match="outside the reachable part"):
            hw.check_target(xd, yd, 0.0)


def test_plate_inertia_of_an_ellipse():
    a, b, m = 0.026, 0.018, 0.03
    # uniform elliptic plate about its centre: m (a^2 + b^2) / 4 (the 400-gon: 1e-4 relative)
    assert abs(rf.plate_inertia(Ellipse(a, b), m) / (m * (a * a + b * b) / 4) - 1) < 1e-4


@pytest.mark.parametrize("shape", rf.SHAPES)
def test_initial_configuration_touches_at_the_gaps(shape):
    contour = rf.make_contour(shape)
    mech, contacts, cset = rf.grasp_system(contour, 0.03, (0.010, 0.012))
    rng = np.random.default_rng(11)
    for _ in range(20):
        pose = (rng.uniform(-0.005, 0.01), rng.uniform(0.08, 0.09), rng.uniform(1.4, 2.0))
        gaps = (0.0, rng.uniform(0.0, 0.002))
        q0 = rf.initial_configuration(
            contour, pose, (0.010, 0.012), gaps, (np.pi + 0.05, 0.05), np.pi - 0.5
        )
        assert np.all(q0[5:8] == pose)
        snap = mech.compute(q0, np.zeros(8), cset.frames)
        for c, gap in zip(contacts, gaps):
            assert abs(c.geometry(snap).d - c.r - gap) < 1e-12
        # finger 2's last link at the requested absolute angle
        assert abs(q0[2:5].sum() - (np.pi - 0.5)) < 1e-12


def test_unknown_shape():
    with pytest.raises(ValueError, match="valid: ellipse, superellipse, spline"):
        rf.make_contour("circle")


def _posture_on_plane_v0(xd, yd, xi, psi, elbow=1.0):
    """The closed form as scenarios/handwriting.py wrote it before systems.ik (math module)."""
    l1, l2, l3 = hw.LINKS
    r = math.hypot(xd, yd)
    wr, wz = r - l3 * math.cos(psi), xi - l3 * math.sin(psi) - hw.H0
    c2 = (wr * wr + wz * wz - l1 * l1 - l2 * l2) / (2 * l1 * l2)
    if abs(c2) > 1:
        return None
    a2 = -elbow * math.acos(c2)
    a1 = math.atan2(wz, wr) - math.atan2(l2 * math.sin(a2), l1 + l2 * math.cos(a2))
    return np.array([math.atan2(yd, xd), -a1, -a2, -(psi - a1 - a2)])


@pytest.mark.parametrize("elbow", [1.0, -1.0])
def test_posture_on_plane_same_numbers_as_before(elbow):
    rng = np.random.default_rng(8)
    for _ in range(500):
        args = (rng.uniform(0.0, 0.5), rng.uniform(-0.3, 0.3), rng.uniform(-0.1, 0.2))
        psi = rng.uniform(-3.0, 0.0)
        old, new = _posture_on_plane_v0(*args, psi, elbow), hw.posture_on_plane(*args, psi, elbow)
        assert (old is None) == (new is None)
        if old is not None:  # the same closed form: equal to round-off (angles of ~1-5 rad)
            assert np.abs(new - old).max() <= 1e-13
