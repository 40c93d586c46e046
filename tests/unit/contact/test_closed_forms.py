"""The closed forms of rigid contact (pfaff.contact.closed_forms) against independent
derivations: the sum of a ball's flights, the M-metric plastic impact of Housner's block
(its mass matrix from MuJoCo's compiler), the rocking block's start against MuJoCo's geom
placement; and what MuJoCo's contacts make of the files (pfaff.contact.mujoco_cases)
against statics and the free fall."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

from pfaff.contact.closed_forms import (
    ball_impact_times,
    ball_rest_time,
    housner_ratio,
    incline_distance,
    rocking_block_start,
)
from pfaff.contact.mujoco_cases import run_mujoco

MODELS = Path(__file__).parents[2] / "models" / "contact"


@pytest.mark.parametrize("e", [0.1, 0.5, 0.8])
def test_the_flights_sum_to_the_rest_time(e):
    n = int(math.log(1e-12) / math.log(e))  # impacts until the flights are round-off
    times = ball_impact_times(1.0, e, n=n)
    assert times[0] == pytest.approx(math.sqrt(2.0 / 9.81), abs=1e-15)
    flights = np.diff(times)
    assert np.all(flights > 0)
    assert times[-1] == pytest.approx(ball_rest_time(1.0, e), abs=1e-9)  # seconds
    np.testing.assert_allclose(flights[1:6] / flights[:5], e, rtol=1e-9)
    # the first flight: up and down at e v1
    assert flights[0] == pytest.approx(2 * e * math.sqrt(2 * 9.81) / 9.81, abs=1e-12)


def test_a_plastic_ball_stays_at_its_first_impact():
    assert ball_impact_times(0.5, 0.0, n=5).tolist() == [math.sqrt(1.0 / 9.81)]
    assert ball_rest_time(0.5, 0.0) == pytest.approx(math.sqrt(1.0 / 9.81), abs=1e-15)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ball_impact_times(-1.0, 0.5),
        lambda: ball_impact_times(1.0, 1.0),
        lambda: ball_rest_time(1.0, -0.1),
        lambda: ball_impact_times(1.0, 0.5, n=0),
        lambda: incline_distance(2.0, 0.5, [1.0]),
        lambda: incline_distance(0.3, float("nan"), [1.0]),
        lambda: housner_ratio(0.0, 1.0),
    ],
)
def test_bad_input_is_named(call):
    with pytest.raises(ValueError, match="must be"):
        call()


def test_the_incline_holds_below_the_friction_angle_and_slides_above():
    t = np.linspace(0.0, 2.0, 9)
    mu = 0.5
    below, above = math.atan(mu) - 1e-3, math.atan(mu) + 0.2
    assert np.max(np.abs(incline_distance(below, mu, t))) < 1e-15
    a = 9.81 * (math.sin(above) - mu * math.cos(above))
    np.testing.assert_allclose(incline_distance(above, mu, t), 0.5 * a * t**2, atol=1e-15)
    # continuous at the friction angle: the acceleration there is 0
    assert incline_distance(math.atan(mu) + 1e-9, mu, [1.0])[0] < 1e-8


def _corner_rows(b: float, h: float, theta: float) -> np.ndarray:
    """Rows (2 x 3) mapping (x, z, pitch) rates of the block's centre to the velocity
    (x, z) of its bottom edge at local x = -b (the edge that lands)."""
    # local (-b, -h) rotated by pitch theta about y: (x, z) = (-b c - h s, b s - h c)
    c, s = math.cos(theta), math.sin(theta)
    dx = b * s - h * c  # d/dtheta of -b c - h s
    dz = b * c + h * s  # d/dtheta of  b s - h c
    return np.array([[1.0, 0.0, dx], [0.0, 1.0, dz]])


def _plastic_ratio(M: np.ndarray, b: float, h: float) -> float:
    """The ratio of pitch rates across the landing of the edge at -b, from the M-metric
    projection v+ = (I - M^-1 J^T (J M^-1 J^T)^-1 J) v- (no bounce, no slip), the block
    rocking on its edge at +b just before (upright, theta = 0)."""
    J = _corner_rows(b, h, 0.0)
    w = -1.0  # rad/s about y: rocking back towards the -b edge
    # rotating about the edge at (+b, -h): the centre moves at w e_y x (-b, 0, h)
    v = np.array([w * h, w * b, w])
    # the edge at +b is at rest before the impact: check the pre-impact state
    Jplus = np.array([[1.0, 0.0, -h], [0.0, 1.0, -b]])
    assert np.max(np.abs(Jplus @ v)) < 1e-14
    Minv_JT = np.linalg.solve(M, J.T)
    vplus = v - Minv_JT @ np.linalg.solve(J @ Minv_JT, J @ v)
    return vplus[2] / v[2]


@pytest.mark.parametrize("b, h", [(0.1, 0.3), (0.2, 0.5), (0.05, 0.6), (0.3, 0.3)])
def test_housner_ratio_is_the_m_metric_plastic_impact(b, h):
    m = 1.7
    I = m * ((2 * b) ** 2 + (2 * h) ** 2) / 12.0
    assert _plastic_ratio(np.diag([m, m, I]), b, h) == pytest.approx(
        housner_ratio(b, h), abs=1e-12
    )


def test_housner_ratio_on_the_files_mass_matrix_and_a_wrong_inertia_is_caught():
    model = mujoco.MjModel.from_xml_path(str(MODELS / "rocking_block.xml"))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    M = np.zeros((3, 3))
    mujoco.mj_fullM(model, data, M)
    assert _plastic_ratio(M, 0.1, 0.3) == pytest.approx(housner_ratio(0.1, 0.3), abs=1e-10)
    wrong = M.copy()
    wrong[2, 2] *= 0.5  # a block with half the inertia lands differently
    assert abs(_plastic_ratio(wrong, 0.1, 0.3) - housner_ratio(0.1, 0.3)) > 1e-2


def test_the_rocking_blocks_keyframe_stands_on_its_edge():
    model = mujoco.MjModel.from_xml_path(str(MODELS / "rocking_block.xml"))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    np.testing.assert_allclose(data.qpos, rocking_block_start(0.1, 0.3, 0.1), atol=1e-15)
    mujoco.mj_kinematics(model, data)
    R, p = data.geom_xmat[1].reshape(3, 3), data.geom_xpos[1]
    corners = [p + R @ np.array([sx * 0.1, 0.0, -0.3]) for sx in (1.0, -1.0)]
    np.testing.assert_allclose(corners[0][[0, 2]], [0.1, 0.0], atol=1e-12)  # m
    assert corners[1][2] > 0.01  # the other edge is up


def test_mujocos_ball_lands_after_the_free_fall_and_rests_on_its_weight():
    run = run_mujoco(MODELS / "ball_drop.xml", 1.5)
    dt = float(run.t[1] - run.t[0])
    t1 = ball_impact_times(1.0, 0.0)[0]
    assert t1 <= run.impacts[0] <= t1 + 2 * dt  # s: the soft contact starts at touch
    assert run.normal_force[-1] == pytest.approx(9.81, abs=1e-4)  # N: 1 kg at rest
    assert 0.0 < run.penetration[-1] < 1e-2  # m: soft contact sinks in


def test_mujocos_box_rests_on_four_contacts_summing_to_its_weight():
    run = run_mujoco(MODELS / "box_on_plane.xml", 0.5)
    assert run.ncon[-1] == 4
    assert run.normal_force[-1] == pytest.approx(2 * 9.81, abs=1e-4)  # N


def test_run_mujoco_refuses_a_run_too_long():
    with pytest.raises(ValueError, match="at most 1e5 steps"):
        run_mujoco(MODELS / "ball_drop.xml", 1e9)
    with pytest.raises(ValueError, match="keyframe 3"):
        run_mujoco(MODELS / "ball_drop.xml", 0.01, keyframe=3)
