"""systems.ik: the two-link and the numerical IK against forward kinematics."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff.mechanism import load_robot, named_configuration
from pfaff.systems.ik import frame_ik, two_link_ik


def _fk(q, l1, l2):
    a, b = q[0], q[0] + q[1]
    return np.array([l1 * np.cos(a) + l2 * np.cos(b), l1 * np.sin(a) + l2 * np.sin(b)])


@pytest.mark.parametrize("elbow", [1.0, -1.0])
@pytest.mark.parametrize("l1, l2", [(0.5, 0.4), (0.06, 0.05), (0.2, 0.2), (0.3, 0.7)])
def test_two_link_round_trip(elbow, l1, l2):
    rng = np.random.default_rng(7)
    for _ in range(300):
        q = np.array([rng.uniform(-np.pi, np.pi), elbow * rng.uniform(0.05, np.pi - 0.05)])
        x = _fk(q, l1, l2)
        qi = two_link_ik(x[0], x[1], l1, l2, elbow)
        assert np.abs(_fk(qi, l1, l2) - x).max() < 1e-12
        assert np.sign(qi[1]) == elbow
        # the same branch is the same posture (angles modulo 2 pi)
        assert np.abs(np.angle(np.exp(1j * (qi - q)))).max() < 1e-9


def test_two_link_unreachable():
    for x, y in [(1.0, 0.0), (0.0, 0.95), (0.05, 0.0), (0.0, 0.0)]:
        with pytest.raises(ValueError, match="out of reach"):
            two_link_ik(x, y, 0.5, 0.4, 1.0)


def test_frame_ik_panda_round_trip():
    mech = load_robot("panda")
    model = mech.model
    data = model.createData()
    fid = model.getFrameId("panda_hand_tcp")
    ready = named_configuration("panda", "ready")
    rng = np.random.default_rng(3)
    for _ in range(12):
        q = ready + rng.uniform(-0.3, 0.3, 7)
        pin.framesForwardKinematics(model, data, q)
        target = data.oMf[fid].copy()
        # bounded least squares stalls at a few 1e-9 on some targets: accept 1e-8
        qi = frame_ik(model, "panda_hand_tcp", target, ready, posture=ready, tol=1e-8)
        pin.framesForwardKinematics(model, data, qi)
        assert np.linalg.norm(pin.log6(data.oMf[fid].actInv(target)).vector) < 1e-8
        lo, hi = model.lowerPositionLimit, model.upperPositionLimit
        assert np.all(qi >= lo + 0.05 - 1e-12) and np.all(qi <= hi - 0.05 + 1e-12)


def test_frame_ik_unreachable_and_bad_frame():
    model = load_robot("panda").model
    ready = named_configuration("panda", "ready")
    far = pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.5]))
    with pytest.raises(ValueError, match="cannot reach"):
        frame_ik(model, "panda_hand_tcp", far, ready)
    with pytest.raises(ValueError, match="unknown frame"):
        frame_ik(model, "nope", far, ready)


def test_named_configuration():
    from pfaff.mechanism.base import ModelError

    q = named_configuration("panda", "ready")
    assert q.shape == (7,) and q[3] == -2.356
    q[0] = 5.0  # a fresh copy each call
    assert named_configuration("panda", "ready")[0] == 0.0
    with pytest.raises(ModelError, match="valid: ready"):
        named_configuration("panda", "home")
    with pytest.raises(ModelError, match="no named configurations"):
        named_configuration("ur5", "ready")
