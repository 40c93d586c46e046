"""dual-panda-box: the weld constraint, the composed plant and the 3D YZ scenario."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import pfaff.scenarios.dual_panda  # noqa: E402,F401  (registers the scenario)
from pfaff.constraints import check_derivatives  # noqa: E402
from pfaff.manipulation.grasp import grasp_matrices, grasp_rates  # noqa: E402
from pfaff.scenarios.dual_panda import dual_panda_plant  # noqa: E402
from pfaff.scenarios.runner import execute  # noqa: E402

DEFAULTS = {
    "base_distance": 0.55, "table_z": 0.05, "box_x": 0.2, "box_y": 0.1, "box_z": 0.1,
    "box_mass": 1.0, "model_mass_error": 0.0, "model_inertia_error": 0.0,
}  # fmt: skip


@pytest.fixture(scope="module")
def setup():
    return dual_panda_plant(DEFAULTS)


def test_plant_shape_and_initial_grasp(setup):
    assert (setup.mech.nq, setup.mech.nv) == (21, 20)
    q = setup.initial_q(-0.05)
    phi, _ = setup.cset.holonomic_terms_at(q)
    assert np.abs(phi).max() < 1e-9  # the IK closes both welds and the box lies flat


def test_weld_and_table_derivatives_off_the_manifold(setup):
    """Analytic Jacobian and drift of Weld / FrameAligned vs finite differences,
    at a state where the welds are violated (R_e != I) and every body moves."""
    rng = np.random.default_rng(3)
    q = setup.initial_q(0.0)
    q = setup.mech.integrate(q, 0.05 * rng.standard_normal(20))
    v = rng.standard_normal(20)
    err = check_derivatives(setup.cset, q, v)
    assert err["jacobian"] < 1e-7 and err["drift"] < 1e-6, err
    assert np.abs(setup.cset.holonomic_terms_at(q)[0][3:6]).max() > 1e-3  # really off the manifold


def test_rigid_matrices_equal_generic(setup):
    R = pin.rpy.rpyToMatrix(0.1, -0.2, 0.3)
    w = np.array([0.3, -0.5, 0.7])
    S, W, Sd, Wd = setup.rigid_matrices(R, w)
    S0, W0, _, _ = grasp_matrices(setup.grasps, R)
    Sd0, Wd0 = grasp_rates(setup.grasps, R, w)
    for a, b in ((S, S0), (W, W0), (Sd, Sd0), (Wd, Wd0)):
        assert np.allclose(a, b, atol=1e-14)


def test_squeeze_basis(setup):
    S, _, W_S, r = grasp_matrices(setup.grasps, np.eye(3))
    A = setup.A_S
    assert A.shape == (12, 6)
    assert np.allclose(A.T @ A, np.eye(6), atol=1e-12) and np.abs(W_S @ A).max() < 1e-12
    F_h = S @ A[:, 0] * np.sqrt(2)  # unit push per hand toward the centre
    assert np.allclose(F_h[:3], [0, 1, 0]) and np.allclose(F_h[6:9], [0, -1, 0])


def test_dual_panda_box_figures():
    run = execute("dual-panda-box", {"probe": True})
    s, m = run.summary, run.summary["metrics"]
    assert s["status"] == "ok", s["message"]
    assert m["max_position_error"] <= 1e-3
    assert m["max_constraint_force_error"] <= 1e-2
    assert m["max_internal_force_error"] <= 1e-2
    assert s["max_constraint_violation"] <= 1e-10
    assert m["min_normal_force"] > 4.9
    # the box really moved 10 cm, the forces are the plant's multipliers
    pos = run.arrays["box_position"]
    assert abs(pos[-1, 0] - pos[0, 0] - 0.1) < 1e-3
    # sampled integral loops (eq. 45-46): fitted rates near K_IF = 100, K_II = 70
    assert abs(m["constraint_force_decay_rate"] - 100) < 15
    assert abs(m["internal_force_decay_rate"] - 70) < 15
    # the 3D scene: both arms at their bases, the box keyed along its simulated pose
    sc = run.result.scene3d
    assert [r["prefix"] for r in sc["robots"]] == ["arm1", "arm2"]
    assert np.allclose(sc["robots"][1]["base"][:3, 3], [0.0, 0.55, 0.0])
    assert np.allclose(sc["boxes"][0]["poses"][:, :3], pos)
    assert sc["robots"][0]["q"].shape == (len(pos), 7)
