"""The grasp under force-sign control (pfaff.scenarios.grasp): the fingers close on the
box, the QP lifts it with every finger corner pushing inside its friction pyramid, the
fingers' friction carries the box's weight plus m a (Newton, against the held mode's
acceleration, the recorded velocities and the Simulator's own forces), the box does not
move against the fingers; the least-norm control (the force conditions dropped) puts no
squeeze on the box and loses it; bad parameters are refused."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff.api.contact_response import contact_response
from pfaff.scenarios import ParameterError, execute
from pfaff.scenarios.grasp import GRASP, grasp_run

P = {"t_end": 0.7, "dt": 1e-3, "control_every": 5, "lift": 0.1, "t_lift": 0.3,
     "close_speed": 0.1, "f_min": 1.0, "kp": 100.0}  # fmt: skip


@pytest.fixture(scope="module")
def lifted():
    return grasp_run(pfaff.load(GRASP, contact=True), P, cones=True)


def test_the_fingers_friction_carries_the_weight_plus_m_a(lifted):
    run = lifted
    held = ~np.array(run["floor"])  # the instants after the floor let go
    assert held.sum() > 50 and run["events"][run["closed"]].kind == "release"
    friction, a = np.array(run["friction"])[held], np.array(run["a_box"])[held]
    m, g = run["m_box"], run["g"]
    assert m == pytest.approx(0.5, abs=1e-12) and g == pytest.approx(9.81, abs=1e-12)
    assert np.abs(friction - m * (g + a)).max() < 1e-6  # [N] Newton on the box
    # the held mode's acceleration is the box's: finite differences of the record over
    # each control interval (5 steps, the force held), to O(dt)
    rec = run["trajectory"].arrays()
    t = np.array(run["t"])[held][:-1]
    i = np.searchsorted(rec["t"], t - 1e-12)
    fd = (rec["v"][i + 5, 2] - rec["v"][i, 2]) / (rec["t"][i + 5] - rec["t"][i])
    assert np.abs(fd - a[:-1]).max() < 0.02  # [m/s^2] (a ranges over +-7 m/s^2)
    assert np.abs(a).max() > 5.0  # the reference's acceleration, 2 pi lift / t_lift^2
    # held at the top the fingers carry the weight, up to the m a of the tracking's decay
    hold = t > run["t_closed"] + P["t_lift"] + 0.1
    top = np.abs(friction[:-1][hold] - m * g)
    assert top.max() < 0.05 and top[-1] < top[0]  # [N]
    # every finger corner pushes with at least f_min inside its pyramid
    assert min(run["fn"]) >= P["f_min"] - 1e-6
    assert max(run["ratio"]) <= 1 / np.sqrt(2) + 1e-6


def test_the_simulators_own_forces_agree(lifted):
    """The Simulator's forces at the end (its own solve under the torque held last)
    against Newton with the held mode's acceleration at that torque."""
    sim = lifted["sim"]
    B = np.eye(sim.system.nv)[:, 6:]
    fingers = [c for c in sim.contacts if c.geom1 == "box" and "finger" in c.geom2]
    assert len(fingers) == 8 and not any(c.geom1 == "floor" for c in sim.contacts)
    r = contact_response(sim, B, tau0=sim._last_tau)
    pull = -sum(c.tangent[2] for c in fingers)  # on the box: the fingers' reaction
    assert abs(pull - 0.5 * (9.81 + r.a0[2])) < 1e-9  # [N]
    assert min(c.normal_force for c in fingers) >= P["f_min"] - 1e-6
    assert all(c.mode == "stick" for c in fingers)
    # the maps cover the contacts between two moving bodies (box and fingers): they
    # predict the Simulator's own forces at other torques that keep every corner pushing
    rng = np.random.default_rng(0)
    for _ in range(5):
        u = sim._last_tau[6:] + rng.normal(scale=[0.5, 0.3, 0.3])  # [N]
        got = sim._limited.closed_contacts(sim.q, sim.v, B @ u)
        f = np.array([c.normal_force * np.asarray(c.normal) + c.tangent for c in got])
        assert len(got) == 8 and np.abs(f - (r.f0 + r.K_f @ (u - sim._last_tau[6:]))).max() < 1e-9


def test_the_grasp_lifts_the_box_and_the_least_norm_control_loses_it():
    run = execute("grasp", {"t_end": "0.7", "t_lift": "0.3"})
    m = run.summary["metrics"]
    assert run.summary["status"] == "ok"
    assert m["contact_events_after_grasp"] == 0 and m["qp_failures"] == 0
    assert m["floor_releases"] >= 1
    assert m["min_normal_force"] >= 1.0 - 1e-6  # [N] f_min
    assert m["max_cone_ratio"] <= 1 / np.sqrt(2) + 1e-6
    assert m["box_slip"] < 1e-9  # [m] the corners stick
    assert m["height_error"] < 1e-3 and m["tracking_error_max"] < 1e-3  # [m]
    # the scene draws each finger's force on it: the box pushes it out and pulls it down
    arrows = run.result.scene3d["arrows"]
    assert len(arrows) == 2
    for a, out in zip(arrows, (-1.0, 1.0)):
        f = a["vectors"][np.isfinite(a["vectors"][:, 0])]
        assert len(f) > 100 and np.all(out * f[:, 0] > 0) and np.all(f[:, 2] < 0)
    # no force conditions: no squeeze (it moves nothing), the corners let go, the box stays
    assert m["least_norm_min_normal_force"] < 1e-6  # [N]
    assert m["least_norm_contact_events"] > 0
    assert m["least_norm_grasp_lost_s"] < 0.3  # [s] right after the grasp closed
    assert abs(m["least_norm_box_height_gained"]) < 1e-3  # [m]


def test_a_larger_squeeze_is_kept_and_the_least_norm_run_is_reported_failed():
    run = execute("grasp", {"t_end": "0.35", "t_lift": "0.1", "f_min": "3", "cones": "false"})
    assert run.summary["status"] == "failed" and "grasp was lost" in run.summary["message"]
    m = run.summary["metrics"]
    assert m["least_norm_min_normal_force"] < 1e-6  # this run is the least-norm one
    assert m["min_normal_force"] < 1e-6
    qp = grasp_run(pfaff.load(GRASP, contact=True), {**P, "t_end": 0.35, "f_min": 3.0}, True)
    assert min(qp["fn"]) >= 3.0 - 1e-6 and "lost" not in qp


@pytest.mark.parametrize(
    "key, value, said",
    [("lift", "-0.1", "lift"), ("close_speed", "0", "close_speed"),
     ("f_min", "-1", "f_min"), ("cones", "maybe", "cones"), ("t_lift", "0", "t_lift")],
)  # fmt: skip
def test_bad_parameters_are_refused(key, value, said):
    with pytest.raises(ParameterError, match=said):
        execute("grasp", {key: value})
