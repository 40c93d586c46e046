"""Each scenario reaches the figures of its issue, with independent witnesses."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.scenarios import ParameterError, get_scenario, run_scenario
from pfaff.scenarios.particle_circle import closed_form_force, pendulum_period


def test_particle_circle_figures():
    s = run_scenario("particle-circle")
    m = s["metrics"]
    assert s["status"] == "ok"
    assert s["max_constraint_violation"] <= 1e-10
    assert m["energy_drift_rel"] <= 1e-6
    assert m["constraint_force_max_error"] <= 1e-8
    assert m["period_error_rel"] <= 1e-4


def test_pendulum_period_small_amplitude_limit():
    # K(0) = pi/2: the small-amplitude period 2 pi sqrt(rho/g)
    assert pendulum_period(1e-6, 9.81, 2.0) == pytest.approx(2 * np.pi * np.sqrt(2.0 / 9.81))
    # a 90 degree swing is 18.0% slower (tabulated K(1/2) = 1.854075)
    ratio = pendulum_period(np.pi / 2, 9.81, 1.0) / (2 * np.pi * np.sqrt(1 / 9.81))
    assert ratio == pytest.approx(4 * 1.8540746773 / (2 * np.pi), rel=1e-9)


def test_closed_form_force_at_rest_at_the_bottom():
    # hanging at rest: the rod carries the weight, F points down along the outward normal
    F = closed_form_force(np.array([[0.0, -1.0]]), np.zeros((1, 2)), 2.0, 9.81, 1.0)
    np.testing.assert_allclose(F, [[0.0, -2.0 * 9.81]], atol=1e-12)


def test_slider_crank_figures_and_kkt_comparison():
    s = run_scenario("slider-crank")
    m = s["metrics"]
    assert s["status"] == "ok"
    assert s["engine"] == "core" and s["warnings"] == []  # the KKT baseline asks for NumPy
    assert m["singular_crossings"] >= 4
    assert s["max_constraint_violation"] <= 1e-10
    assert m["energy_drift_rel"] <= 1e-4
    # the KKT matrix becomes ill-conditioned near the singular configurations
    assert m["kkt_max_condition"] > 1e4
    assert isinstance(m["kkt_failed"], bool)


def test_slider_crank_closed_form_and_pinocchio_backends_agree():
    """Two implementations of the same mechanism give the same motion: the closed form on
    the NumPy engine (the independent witness; by default it runs on the core too) and
    the Pinocchio chain on the core."""
    from pfaff.simulate.options import use_engine

    sc = get_scenario("slider-crank")
    assert sc.resolve({})["model"] == "pinocchio"  # the default runs on the core
    runs = []
    for model, engine in (("closed-form", "numpy"), ("pinocchio", "auto")):
        with use_engine(engine):
            runs.append(sc.func(sc.resolve({"model": model, "t_end": "2"})))
    assert [r.trajectory.engine for r in runs] == ["numpy", "core"]
    qa, qb = (r.trajectory.arrays()["q"] for r in runs)
    np.testing.assert_allclose(qa, qb, atol=1e-9)  # rad
    va, vb = (r.trajectory.arrays()["v"] for r in runs)
    np.testing.assert_allclose(va, vb, atol=1e-8)  # rad/s
    # F and lambda = F / |A| change like 1/|cos q1| with q near the singular
    # configurations, where a 1e-9 difference in q is amplified; compare away from there
    away = np.abs(np.cos(qa[:, 0])) > 0.05
    for key in ("F", "lambda"):
        xa, xb = (r.trajectory.arrays()[key][away] for r in runs)
        np.testing.assert_allclose(xa, xb, atol=1e-7)
    # the metrics: counts equal, values to round-off in their units
    ma, mb = (r.metrics for r in runs)
    assert ma.keys() == mb.keys()
    for key in ("singular_crossings", "constraint_rank_min", "rank_deficient_samples",
                "decoupled", "kkt_failed", "kkt_solve_failures"):  # fmt: skip
        assert ma[key] == mb[key], key
    tol = {
        "energy_reference": 1e-9,  # J
        "energy_drift_rel": 1e-9,  # -
        "decoupling_residual_max": 1e-9,  # -
        "min_abs_cos_q1_sampled": 1e-9,  # -
        "sigma_min_A_min": 1e-9,  # m
        "kkt_max_condition": 1e-3,  # - (1.8e5 here)
    }
    for key, atol in tol.items():
        assert abs(ma[key] - mb[key]) <= atol, (key, ma[key], mb[key])
    # KKT vs projection at the run's own states: round-off on both models (lambda
    # carries 1 / sigma_min(A) = 3e2 1/m)
    for m in (ma, mb):
        assert m["kkt_accel_deviation_max"] <= 1e-9  # rad/s^2
        assert m["kkt_force_deviation_max"] <= 1e-9  # N m
        assert m["kkt_lambda_deviation_max"] <= 1e-7  # N


@pytest.mark.parametrize("parallelogram", ["false", "true"])
def test_four_bar_figures(parallelogram):
    s = run_scenario("four-bar", {"parallelogram": parallelogram})
    m = s["metrics"]
    assert s["status"] == "ok"
    assert s["max_constraint_violation"] <= 1e-10
    assert m["energy_drift_rel"] <= 1e-5
    if parallelogram == "true":
        assert m["constraint_rank_min"] == 1  # a loop row is redundant at the fold
        assert m["fold_crossings"] >= 4  # it swings through the folded configurations
        assert m["branch_deviation_max"] <= 1e-8  # and stays on the parallelogram branch
    else:
        assert m["constraint_rank_min"] == 2
        assert m["crank_turns"] > 5  # the crank turns over: not a small oscillation


def test_four_bar_kite_has_a_finite_energy():
    """A kite (ground = crank, coupler = rocker): at crank angle 0 the crank tip lies on
    the rocker pivot and the closure is not unique. The potential's zero skips that
    angle (it made every energy NaN, and energy_drift_rel with it, in a run whose
    status was ok); the run keeps its energy through the folds it crosses."""
    from pfaff.scenarios.four_bar import closure_state

    with pytest.raises(ValueError, match="not unique"):
        closure_state(0.0, 0.5, 0.5, 1.0, 1.0)
    kite = {"ground": "0.5", "crank": "0.5", "coupler": "1.0", "rocker": "1.0"}
    s = run_scenario("four-bar", {**kite, "t_end": "1", "omega0": "6", "dt": "1e-3"})
    m = s["metrics"]
    assert s["status"] == "ok" and s["max_constraint_violation"] <= 1e-10
    assert m["fold_crossings"] >= 1 and m["min_sigma"] <= 1e-3
    assert np.isfinite(m["energy_reference"]) and m["energy_drift_rel"] <= 1e-5


def test_panda_contact_runs_on_the_plane():
    s = run_scenario("panda-contact", {"t_end": "1"})
    assert s["status"] == "ok"
    assert s["max_constraint_violation"] <= 1e-10
    assert s["metrics"]["tool_height_error_max"] <= 1e-10
    assert s["metrics"]["energy_drift_rel"] <= 1e-4
    assert s["metrics"]["tool_travel"] > 0.05


def test_panda_contact_bad_frame_and_unreachable_plane():
    with pytest.raises(ParameterError, match="unknown frame 'nope'.*valid frames"):
        run_scenario("panda-contact", {"frame": "nope"})
    with pytest.raises(ParameterError, match="cannot be brought onto the constraint manifold"):
        run_scenario("panda-contact", {"height": "5.0"})


def test_parameters_are_validated():
    with pytest.raises(ParameterError, match="valid keys: .*dt"):
        run_scenario("particle-circle", {"nope": "1"})
    with pytest.raises(ParameterError, match="expects a float"):
        run_scenario("particle-circle", {"dt": "fast"})
    with pytest.raises(ParameterError, match="must be > 0"):
        run_scenario("particle-circle", {"dt": "0"})
    with pytest.raises(ParameterError, match="must be > 0"):
        run_scenario("particle-circle", {"m": "-1"})
    with pytest.raises(ParameterError, match="one of"):
        run_scenario("slider-crank", {"model": "mujoco"})
    with pytest.raises(ParameterError, match="does not exist"):
        run_scenario("panda-contact", {"urdf": "/no/such/robot.urdf"})
