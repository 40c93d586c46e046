"""Control with the sign of the contact force (pfaff.control.force_sign and
pfaff.api.contact_response): the pyramid's rows keep a force inside its cone and refuse
one outside or pulling, at many normals; the QP on a problem with a closed-form answer;
the response maps of a robot held on its feet predict the forces the Simulator's own
solve gives at other torques (they are affine) and the acceleration its next step takes;
and the standing scenario: every corner pushes inside its cone with no contact event,
while the least-norm motion control (the force conditions dropped) makes corners pull
and the feet rock."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff.api.contact_response import contact_response
from pfaff.control.force_sign import cone_rows, force_sign_qp
from pfaff.scenarios import execute
from pfaff.scenarios.stand import STAND


def _unit(x):
    return x / np.linalg.norm(x)


@pytest.mark.parametrize("seed", range(4))
def test_the_pyramid_keeps_the_cone_and_refuses_a_pull(seed):
    rng = np.random.default_rng(seed)
    for _ in range(20):
        n, mu, fn = _unit(rng.normal(size=3)), rng.uniform(0.1, 1.0), rng.uniform(1, 50)
        t = _unit(np.cross(n, rng.normal(size=3)))
        G, h = cone_rows(n[None], np.array([mu]), f_min=0.5)
        inside = fn * n + 0.69 * mu * fn * t  # inside the pyramid inscribed in the cone
        assert np.all(G @ inside <= h + 1e-9)
        for bad in (fn * n + 1.01 * mu * fn * t, -fn * n, 0.4 * n):  # slips, pulls, < f_min
            assert np.any(G @ bad > h + 1e-9)


def test_the_qp_clips_the_task_at_the_force_bound():
    """One driven torque u, the task acceleration a = u, one point's normal force
    f_n = 10 - 2 u: a wanted a_d = 8 needs f_n = -6 N; with f_min = 1 N the QP stops at
    u = 4.5 (f_n = 1 N), without the conditions it reaches u = a_d (to the weight)."""
    a0, K_a = np.zeros(1), np.ones((1, 1))
    n = np.array([[0.0, 0.0, 1.0]])
    f0, K_f = 10.0 * n, (-2.0 * n)[:, :, None]
    S, a_d, mu = np.ones((1, 1)), np.array([8.0]), np.array([0.5])
    sol = force_sign_qp(a0, K_a, f0, K_f, n, mu, S, a_d, f_min=1.0, weight=1e-8)
    assert sol.status == "solved" and sol.u[0] == pytest.approx(4.5, abs=1e-6)
    free = force_sign_qp(a0, K_a, f0, K_f, n, mu, S, a_d, f_min=1.0, weight=1e-8, cones=False)
    assert free.u[0] == pytest.approx(8.0, abs=1e-6)
    with pytest.raises(ValueError, match="f_min"):
        force_sign_qp(a0, K_a, f0, K_f, n, mu, S, a_d, f_min=-1.0)


@pytest.fixture(scope="module")
def standing():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        system = pfaff.load(STAND, contact=True)
    sim = pfaff.Simulator(system, dt=1e-4)
    sim.step()  # the feet land
    return system, sim


def test_the_response_maps_predict_the_simulators_forces_and_step(standing):
    system, sim = standing
    B = np.eye(system.nv)[:, 6:]
    r = contact_response(sim, B)
    assert r.f0.shape == (16, 3) and set(r.names) == {f"floor / {f}_foot" for f in
                                                      ("FL", "FR", "HL", "HR")}  # fmt: skip
    rng = np.random.default_rng(0)
    limited = sim._limited
    for _ in range(3):
        u = rng.normal(size=12)
        got = limited.closed_contacts(sim.q, sim.v, B @ u)
        f = np.array([c.normal_force * np.asarray(c.normal) + c.tangent for c in got])
        assert np.abs(f - (r.f0 + r.K_f @ u)).max() < 1e-9  # [N]
    # the acceleration the Simulator's next step takes (RK4, dt 0.1 ms), to O(dt)
    S = np.eye(system.nv)[[0, 2, 4]]
    u = force_sign_qp(r.a0, r.K_a, r.f0, r.K_f, r.normals, r.mu, S, np.ones(3), 1.0).u
    v0, a = sim.v, r.a0 + r.K_a @ u
    sim.step(B @ u)
    assert len(sim.events) == 4  # the landing's only: every corner still pushes
    assert np.abs((sim.v - v0) / 1e-4 - a).max() < 1e-3 * np.abs(a).max()
    with pytest.raises(ValueError, match="nothing is held"):
        contact_response(pfaff.Simulator(system), B)  # before the feet land
    with pytest.raises(ValueError, match="B must be"):
        contact_response(sim, B[:-1])


def test_standing_keeps_every_corner_pushing_inside_its_cone(tmp_path):
    run = execute("stand", {"t_end": "0.4"})
    m = run.summary["metrics"]
    assert run.summary["status"] == "ok"
    assert m["contact_events_after_landing"] == 0
    assert m["min_normal_force"] >= 1.0 - 1e-6  # [N] f_min
    assert m["max_cone_ratio"] <= 1 / np.sqrt(2) + 1e-6  # the pyramid inside the cone
    assert m["qp_failures"] == 0
    assert m["tracking_error_max"] < 0.01  # [m]
    # the scene draws each foot's force: pushing up, inside the friction cone (mu 0.6)
    arrows = run.result.scene3d["arrows"]
    assert len(arrows) == 4
    for a in arrows:
        f = a["vectors"][1:]  # [m] as drawn (after the landing's sample)
        assert np.all(f[:, 2] > 0) and np.all(np.hypot(f[:, 0], f[:, 1]) < 0.6 * f[:, 2])
    # the least-norm motion control makes corners pull: the simulator lets them go
    assert m["least_norm_min_normal_force"] < -1.0  # [N]
    assert m["least_norm_contact_events"] > 0


def _random_qp(seed=0):
    rng = np.random.default_rng(seed)
    k, nv, P = 12, 18, 16
    return dict(
        a0=rng.normal(size=nv), K_a=rng.normal(size=(nv, k)),
        f0=rng.normal(size=(P, 3)) + [0.0, 0.0, 5.0], K_f=0.1 * rng.normal(size=(P, 3, k)),
        normals=np.tile([0.0, 0.0, 1.0], (P, 1)), mu=np.full(P, 0.6),
        S=np.eye(nv)[:6], a_d=rng.normal(size=6), f_min=1.0,
    )  # fmt: skip


def _kkt_residual(qp, u) -> float:
    """|H u + g + C_a^T y| at the least-squares y >= 0 of the active conditions [N m]:
    the QP's optimality, witnessed apart from any solver."""
    J = qp["S"] @ qp["K_a"]
    H = J.T @ J + 1e-4 * np.eye(len(u))
    g = J.T @ (qp["S"] @ qp["a0"] - qp["a_d"])
    G, h = cone_rows(qp["normals"], qp["mu"], qp["f_min"])
    C = G @ qp["K_f"].reshape(-1, len(u))
    act = (h - G @ qp["f0"].reshape(-1)) - C @ u <= 1e-6
    y = np.linalg.lstsq(C[act].T, -(H @ u + g), rcond=None)[0]
    assert np.all(y >= -1e-9)
    return float(np.abs(H @ u + g + C[act].T @ y).max())


def test_the_qp_gives_one_torque_every_call_and_it_is_the_minimum():
    # proxsuite 0.8's dense QP returns last digits that differ between calls on the same
    # data; the torque is its solution made exact on its active set: the same bits each
    # call, stationary to round-off, within ProxQP's tolerance of ProxQP's own
    qp = _random_qp()
    for cones in (True, False):
        us = [force_sign_qp(**qp, cones=cones).u for _ in range(4)]
        assert all(np.array_equal(us[0], u) for u in us[1:])
    u = force_sign_qp(**qp).u
    assert _kkt_residual(qp, u) < 1e-9  # [N m]
    assert _kkt_residual(qp, u + 1e-3) > 1e-6  # a torque off the minimum is caught
    sol = force_sign_qp(**qp)
    assert sol.slack >= -1e-9 and sol.status == "solved"
