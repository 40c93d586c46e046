"""five-bar-ilqr: iLQR through the five-bar's singular configuration, with the step's
analytic Jacobians and with central differences; the Jacobians' agreement along the
plan is the witness, and a wrong Jacobian is caught by it."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.api.examples import five_bar
from pfaff.api.step_derivatives import step_derivatives
from pfaff.scenarios import ParameterError, execute
from pfaff.scenarios.five_bar_ilqr import FiveBarGeometry, jacobian_disagreement

SHORT = {"horizon": "8", "dt": "0.04", "iterations": "4", "tol": "0"}


@pytest.fixture(scope="module")
def run():
    return execute("five-bar-ilqr", SHORT)


def test_the_plan_reaches_the_other_mode_through_the_singularity(run):
    s, m = run.summary, run.summary["metrics"]
    assert s["status"] == "ok" and s["warnings"] == []
    assert m["goal_error_q"] < 0.2 * m["goal_error_q_initial"]  # [rad]
    assert m["goal_error_v"] < 0.2 * m["goal_error_v_initial"]  # [rad/s]
    assert m["cost_final_analytic"] < 0.05 * m["cost_initial"]
    assert m["phi_max"] <= 1e-10  # [m] the loop stays closed
    assert m["singularity_crossings"] == 1 and m["sigma_A_kept_min"] > 0.1  # rank 2 kept
    assert m["replay_deviation_max"] <= 1e-9  # [rad] the simulator runs the plan
    # the witness: analytic and difference step Jacobians agree along the plan
    assert m["step_jacobian_disagreement_rel"] <= 1e-5
    # the same iterates with both kinds: same count, same costs
    assert m["iterations_analytic"] == m["iterations_differences"] == 4
    assert m["cost_final_differences"] == pytest.approx(m["cost_final_analytic"], rel=1e-6)
    a = run.arrays
    assert np.sign(a["distal_sin"][0]) == -np.sign(a["distal_sin"][-1])


def test_a_wrong_jacobian_is_caught_by_the_agreement_metric():
    """Wrong input: B scaled by 1 + 1e-3 at one state of the five-bar."""
    sys = five_bar()
    q, v, tau = sys.q0, sys.v0, np.array([0.3, 0.0, -0.2, 0.0])
    a = step_derivatives(sys, q, v, tau, 0.02, method="sensitivities")
    d = step_derivatives(sys, q, v, tau, 0.02, method="differences")
    assert jacobian_disagreement([((a.A, a.B), (d.A, d.B))]) <= 1e-5
    assert jacobian_disagreement([((a.A, (1 + 1e-3) * a.B), (d.A, d.B))]) > 1e-5


def test_the_singularity_measure_and_the_other_mode():
    """The sine between the distal links is the determinant of A's distal columns over
    their lengths (an independent route); the other mode has the start's crank angles
    and the opposite sign."""
    sys = five_bar()
    geo = FiveBarGeometry(sys)
    rng = np.random.default_rng(1)
    for q in [sys.q0, geo.other_mode(sys.q0, rng.uniform(-0.2, 0.2, 2))]:
        A = sys.cset.evaluate(sys.mechanism.compute(q, None, sys.cset.frames)).A
        cl, cr = A[:, geo.distal[0]], A[:, geo.distal[1]]
        det = np.cross(cl, cr)[1] / (np.linalg.norm(cl) * np.linalg.norm(cr))
        assert abs(abs(det) - abs(geo.singularity(q))) <= 1e-12
    g = geo.other_mode(sys.q0, np.array([0.1, -0.05]))
    np.testing.assert_allclose(g[geo.cranks] - sys.q0[geo.cranks], [0.1, -0.05], atol=1e-12)
    assert np.sign(geo.singularity(g)) == -np.sign(geo.singularity(sys.q0))
    with pytest.raises(ValueError, match="cannot close the loop"):
        geo.other_mode(sys.q0, np.array([-1.0, 1.0]))  # elbows 0.78 m apart


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ParameterError, match="jacobians"):
        execute("five-bar-ilqr", {"jacobians": "exact"})
    with pytest.raises(ParameterError, match="horizon"):
        execute("five-bar-ilqr", {"horizon": "0"})
