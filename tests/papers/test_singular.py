"""The slider-crank really meets its singular configuration (Aghili Sec. 8, eq. 65 and 70),
rank_deficient_samples counts what it should, and the KKT baseline at the same states."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff import dynamics
from pfaff.constraints import ConstraintSet, FunctionConstraint
from pfaff.mechanism import PlanarLink, planar_chain
from pfaff.scenarios import ParameterError, get_scenario
from pfaff.scenarios.singular import kkt_at_states, rank_deficient_samples
from pfaff.scenarios.slider_crank import build, singular_start

RANK_TOL = 1e-9  # SimOptions' default, in the units of A [m]


def _run(**overrides):
    sc = get_scenario("slider-crank")
    res = sc.func(sc.resolve(overrides))
    return res, res.trajectory.arrays()


def _closed_form_sigma(q1: np.ndarray, l: float = 1.0) -> np.ndarray:
    """sigma(A) = sqrt(5) l |cos q1| on the branch q2 = -2 q1 (Aghili Sec. 8.1)."""
    return np.sqrt(5.0) * l * np.abs(np.cos(q1))


def test_singular_start_has_rank_deficient_samples_and_kkt_sees_them():
    res, a = _run(start="singular", t_end="0.5")
    m = res.metrics
    assert res.status == "ok"
    # the first sample lies on q1 = pi/2, q2 = -pi: A = 0 up to round-off
    np.testing.assert_allclose(a["q"][0], [np.pi / 2, -np.pi], atol=1e-15)
    assert m["rank_deficient_samples"] >= 1
    assert m["constraint_rank_min"] == 0
    assert m["sigma_min_A_min"] <= 1e-12  # [m]
    # witness: the closed-form singular value of A, sample by sample
    below = _closed_form_sigma(a["q"][:, 0]) < RANK_TOL
    assert m["rank_deficient_samples"] == int(below.sum())
    # the constraint stays satisfied through the singular start
    assert res.trajectory.max_constraint_violation() <= 1e-10
    # KKT: its matrix is singular to working precision there, ...
    assert m["kkt_max_condition"] > 1e12 or m["kkt_failed"]
    k = res.extra_arrays["kkt_cond"]
    assert k[0] > 1e12 and np.all(k[~below] < 1e9)
    # ... yet with the same (q, v, tau) its acceleration and force agree with the
    # projection method's (F vanishes with A); only the undetermined multiplier differs
    assert m["kkt_accel_deviation_max"] <= 1e-9  # [rad/s^2]
    assert m["kkt_force_deviation_max"] <= 1e-9  # [N m]
    assert a["lambda"][0, 0] == pytest.approx(0.0, abs=1e-12)  # least norm where A = 0
    assert np.abs(a["F"][0]).max() <= 1e-12


def test_default_start_never_drops_rank():
    res, a = _run(t_end="2", kkt="false")
    m = res.metrics
    assert m["rank_deficient_samples"] == 0
    assert m["sigma_min_A_min"] > 1e-5
    assert np.all(_closed_form_sigma(a["q"][:, 0]) > 1e3 * RANK_TOL)
    assert m["singular_crossings"] >= 1  # it passes them between samples


@pytest.mark.parametrize("model", ["closed-form", "pinocchio"])
def test_singular_start_lies_on_the_orbit_of_the_default_start(model):
    """The energy at q1 = pi/2 equals the start's, computed by the mechanism itself."""
    m, l, g = 1.3, 0.7, 9.81
    mech, _ = build(m, l, g, model)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q1, w = rng.uniform(-np.pi, np.pi), rng.choice([-1, 1]) * rng.uniform(8.0, 15.0)
        qs, vs = singular_start(m, l, g, q1, w)
        e0 = mech.compute(np.array([q1, -2 * q1]), np.array([w, -2 * w]))
        e1 = mech.compute(qs, vs)
        E0, E1 = e0.kinetic + e0.potential, e1.kinetic + e1.potential
        assert abs(E1 - E0) <= 1e-9 * max(1.0, abs(E0))  # [J]
        assert np.sign(vs[0]) == np.sign(w)
        assert qs[0] == np.pi / 2 and qs[1] == -np.pi


def test_singular_start_refused_when_the_orbit_does_not_reach_it():
    with pytest.raises(ParameterError, match="does not reach q1 = pi/2"):
        _run(start="singular", q1_0="-1.5707963", omega0="1.0")
    with pytest.raises(ParameterError, match="one of .*default.*singular"):
        _run(start="upright")


def test_rank_deficient_samples_counts_only_rank_drops():
    """Fed full-rank Jacobians it reports 0; fed rank drops it counts each one."""
    rng = np.random.default_rng(7)
    n, m_rows = 7, 3

    def ranks(As):
        return np.array([dynamics.projection(A, np.zeros(m_rows), RANK_TOL).rank for A in As])

    full = [rng.standard_normal((m_rows, n)) for _ in range(40)]
    assert rank_deficient_samples(ranks(full), m_rows) == 0
    dropped = [A.copy() for A in full]
    hit = [3, 11, 12, 30]
    for i in hit[:2]:
        dropped[i][2] = dropped[i][0] + 1e-13 * rng.standard_normal(n)  # a redundant row
    for i in hit[2:]:
        dropped[i][1] = 0.0  # a row that vanishes (A = 0 at a singular configuration)
    assert rank_deficient_samples(ranks(dropped), m_rows) == len(hit)
    # a row kept well above the threshold is not a drop
    near = [A.copy() for A in full]
    near[5][2] = near[5][0] + 1e-6 * rng.standard_normal(n)
    assert rank_deficient_samples(ranks(near), m_rows) == 0
    with pytest.raises(ValueError, match=r"\(T,\) array"):
        rank_deficient_samples(np.zeros((3, 2)), 2)


def test_kkt_at_states_agrees_at_full_rank_and_counts_exact_singularities():
    arm = planar_chain([PlanarLink(1.0, 1.0, com=1.0), PlanarLink(1.0, 1.0, com=1.0)])

    # Phi = q1^2 / 2: A = [q1, 0] is exactly zero at q1 = 0, where LU meets a zero pivot
    def phi(q):
        return np.array([0.5 * q[0] ** 2])

    def jac(q):
        return np.array([[q[0], 0.0]])

    def drift(q, v):
        return np.array([v[0] ** 2])

    cset = ConstraintSet(arm, [FunctionConstraint(1, phi, jac, drift)])
    rng = np.random.default_rng(5)
    T = 30
    q = rng.uniform(-2, 2, (T, 2))
    q[[4, 17], 0] = 0.0
    v = rng.uniform(-1, 1, (T, 2))
    tau = rng.uniform(-3, 3, (T, 2))
    arrays = {"q": q, "v": v, "tau": tau, "a": np.zeros((T, 2)), "lambda": np.zeros((T, 1))}
    arrays["F"] = np.zeros((T, 2))
    for k in range(T):
        snap = arm.compute(q[k], v[k], cset.frames)
        ev = cset.evaluate(snap)
        sol = dynamics.solve_constrained(snap.M, snap.h, tau[k], ev.A, ev.drift)
        arrays["a"][k], arrays["lambda"][k], arrays["F"][k] = sol.a, sol.lam, sol.F
    out = kkt_at_states(cset, arrays)
    assert out["kkt_solve_failures"] == 2
    assert np.isinf(out["kkt_cond"][[4, 17]]).all()
    ok = np.isfinite(out["kkt_cond"])
    assert ok.sum() == T - 2
    assert np.nanmax(out["kkt_accel_deviation"][ok]) <= 1e-9
    assert np.nanmax(out["kkt_force_deviation"][ok]) <= 1e-9
    # a wrong recorded acceleration is caught
    arrays["a"][9, 1] += 1e-3
    assert kkt_at_states(cset, arrays)["kkt_accel_deviation"][9] == pytest.approx(1e-3, rel=1e-3)
