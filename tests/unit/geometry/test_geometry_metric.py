"""Geometry layer, first half: metric, geodesics, curvature, submanifolds (Arimoto Sec. 2-4)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.dynamics import kkt_dynamics
from pfaff.geometry import (
    BVPError,
    MetricError,
    arimoto_S,
    christoffel_fd,
    christoffel_first,
    christoffel_second,
    coriolis_matrix,
    distance,
    dM_dq,
    geodesic_acceleration,
    identity_13_16_residual,
    induced_metric,
    integrate_geodesic,
    is_flat,
    kinetic_energy,
    linearizing_isometry,
    m_orthonormal_kernel_basis,
    max_curvature,
    mdot,
    pulled_back_metric,
    quadratic,
    scalar_curvature,
    sectional_curvature,
    shoot_constrained_geodesic,
    shoot_geodesic,
    split_velocity,
    straightness,
    submanifold_distance,
)
from pfaff.mechanism import PlanarLink, YZArm, planar_chain
from pfaff.scenarios.geometry_scenarios import flat_yz_links
from pfaff.scenarios.registry import SCENARIOS
from pfaff.simulate import newton_project

RODS = [(1.0, 1.0), (0.8, 0.7)]  # (length, mass) of the 2-link arm
POSTURES = [np.array(q) for q in ([0.3, 1.1], [-0.7, 0.4], [1.2, -0.9], [2.0, 2.5])]


def arm(gravity=(0.0, 0.0, 0.0), rods=RODS):
    links = [PlanarLink(length, m, inertia=m * length**2 / 12) for length, m in rods]
    return planar_chain(links, gravity=gravity, name="arm")


@pytest.fixture(scope="module")
def mech():
    return arm()


# -- metric ---------------------------------------------------------------------


def test_christoffel_pinocchio_matches_finite_differences(mech):
    for q in POSTURES:
        G = christoffel_first(mech, q)
        assert np.abs(G).max() > 0.1  # non-trivial symbols
        assert np.abs(G - christoffel_fd(mech, q)).max() < 1e-9
        assert np.allclose(G, np.transpose(G, (0, 2, 1)), atol=1e-15)  # symmetric in j, k


def test_christoffel_second_kind_is_inverse_metric_times_first(mech):
    q = POSTURES[0]
    M = mech.compute(q).M
    np.testing.assert_allclose(
        np.einsum("ij,jkl->ikl", M, christoffel_second(mech, q)),
        christoffel_first(mech, q),
        atol=1e-13,
    )


def test_closed_form_model_uses_finite_differences():
    yz = YZArm()
    q, v = np.array([0.4, 1.3]), np.array([0.7, -1.1])
    G = christoffel_first(yz, q)
    # YZ: M12 = -R cos(q1 - q2) => h = Gamma1(v, v) in closed form
    np.testing.assert_allclose(quadratic(G, v), yz.compute(q, v).h, atol=1e-12)


def test_arimoto_S_skew_and_identity_13_16(mech):
    rng = np.random.default_rng(0)
    for q in POSTURES:
        v = rng.normal(size=2)
        dM = dM_dq(mech, q)
        S = arimoto_S(dM, v)
        assert np.abs(S).max() > 1e-3
        np.testing.assert_allclose(S, -S.T, atol=1e-15)
        C = coriolis_matrix(christoffel_first(mech, q), v)
        np.testing.assert_allclose(C, 0.5 * mdot(dM, v) + S, atol=1e-14)  # S = C - M'/2
        M_dot_minus_2C = mdot(dM, v) - 2 * C
        np.testing.assert_allclose(M_dot_minus_2C, -M_dot_minus_2C.T, atol=1e-14)
        assert identity_13_16_residual(mech, q, v) < 1e-14


def test_coriolis_terms_three_ways():
    """h(q, v) - g(q) == C(q, v) v == Gamma1(v, v), and -M^-1 h == geodesic acceleration."""
    grav, free = arm(gravity=(0.0, -9.81, 0.0)), arm()
    v = np.array([1.3, -0.6])
    for q in POSTURES:
        s = grav.compute(q, v)
        cv = pin.computeCoriolisMatrix(grav.model, grav.data, q, v) @ v
        gvv = quadratic(christoffel_first(grav, q), v)
        np.testing.assert_allclose(s.h - s.g, cv, atol=1e-13)
        np.testing.assert_allclose(gvv, cv, atol=1e-13)
        h0 = pin.nonLinearEffects(free.model, free.data, q, v)
        np.testing.assert_allclose(gvv, h0, atol=1e-13)
        a = np.linalg.solve(s.M, -h0)
        np.testing.assert_allclose(geodesic_acceleration(free, q, v), a, atol=1e-13)
        np.testing.assert_allclose(-quadratic(christoffel_second(free, q), v), a, atol=1e-12)


# -- geodesics ------------------------------------------------------------------


def test_geodesic_conserves_kinetic_energy(mech):
    geo = integrate_geodesic(mech, [0.2, 0.8], [1.0, 2.0], T=2.0, n_samples=101)
    E = kinetic_energy(mech, geo.q, geo.v)
    assert np.abs(E - E[0]).max() / E[0] < 1e-9
    assert np.abs(geo.v[-1] - geo.v[0]).max() > 0.1  # the velocity does change


def test_bvp_endpoint_and_shorter_than_line(mech):
    p0, p1 = np.array([0.2, 0.8]), np.array([1.2, 1.8])
    geo = shoot_geodesic(mech, p0, p1)
    assert geo.residual < 1e-10
    assert np.abs(geo.q[0] - p0).max() == 0.0
    from pfaff.geometry import curve_length, segment_length

    assert abs(curve_length(mech, geo.t, geo.q, geo.v) - geo.length) < 1e-9
    assert geo.length < segment_length(mech, p0, p1)


def test_distance_symmetric_and_triangle(mech):
    a, b, c = np.array([0.2, 0.8]), np.array([1.0, 1.4]), np.array([0.5, 2.0])
    dab, dba = distance(mech, a, b), distance(mech, b, a)
    assert abs(dab - dba) < 1e-9 * dab
    dbc, dac = distance(mech, b, c), distance(mech, a, c)
    assert dac <= dab + dbc
    assert dab <= dac + dbc and dbc <= dab + dac


def test_bad_inputs_raise(mech):
    with pytest.raises(ValueError, match="size 2"):
        shoot_geodesic(mech, [0.0, 0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="size 2"):
        integrate_geodesic(mech, [0.0, 0.0], [1.0])
    with pytest.raises(MetricError, match="symmetric"):
        shoot_geodesic(lambda q: np.array([[1.0, 0.5], [0.0, 1.0]]), [0, 0], [1, 1])
    with pytest.raises(MetricError, match="positive definite"):
        integrate_geodesic(lambda q: np.diag([1.0, -1.0]), [0, 0], [1, 1])
    with pytest.raises(BVPError, match=r"max \|q\(1\) - p1\| = "):
        shoot_geodesic(mech, [0.2, 0.8], [1.2, 1.8], max_nfev=1)


# -- curvature ------------------------------------------------------------------


def sphere(q):
    return np.diag([1.0, np.sin(q[0]) ** 2])


def test_curvature_known_cases():
    q = np.array([0.9, 0.3])
    assert abs(sectional_curvature(sphere, q, [1, 0], [0.3, 1]) - 1.0) < 1e-6
    assert abs(scalar_curvature(sphere, q) - 2.0) < 1e-6
    # flat but non-constant metric: the plane in polar coordinates
    assert is_flat(lambda q: np.diag([1.0, q[0] ** 2]), [[1.3, 0.2], [0.7, 2.0]], tol=1e-6)
    assert not is_flat(sphere, [q], tol=1e-6)


def brioschi_scalar(q2: float) -> float:
    """Scalar curvature 2K from Brioschi's formula with E, F, G of the rod arm by hand."""
    (l1, m1), (l2, m2) = RODS
    c1, c2, I1, I2 = l1 / 2, l2 / 2, m1 * l1**2 / 12, m2 * l2**2 / 12
    a, b, d = I1 + I2 + m1 * c1**2 + m2 * (l1**2 + c2**2), m2 * l1 * c2, I2 + m2 * c2**2
    E, F, G = a + 2 * b * np.cos(q2), d + b * np.cos(q2), d
    Ev, Evv, Fv = -2 * b * np.sin(q2), -2 * b * np.cos(q2), -b * np.sin(q2)
    num = np.linalg.det([[-Evv / 2, 0, -Ev / 2], [Fv, E, F], [0, F, G]]) - np.linalg.det(
        [[0, Ev / 2, 0], [Ev / 2, E, F], [0, F, G]]
    )
    return 2 * num / (E * G - F * F) ** 2


def test_2link_scalar_curvature_vs_brioschi(mech):
    for q2 in (0.3, 1.0, 2.2, -1.5):
        q = np.array([0.4, q2])
        (l1, m1), (l2, m2) = RODS
        c = np.cos(q2)
        E = m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c)
        F, G = m2 * (l2**2 / 3 + l1 * l2 * c / 2), m2 * l2**2 / 3
        np.testing.assert_allclose(mech.compute(q).M, [[E, F], [F, G]], rtol=1e-12)
        assert abs(scalar_curvature(mech, q) - brioschi_scalar(q2)) < 1e-6


def test_flat_yz_arm_and_isometry():
    flat = YZArm(flat_yz_links())
    assert abs(flat.R) < 1e-18
    assert max_curvature(flat, POSTURES) < 1e-12
    assert max_curvature(YZArm(), POSTURES) > 1e-2  # Table 1 (R != 0) is curved
    M = flat.compute(np.zeros(2)).M
    for kind in ("cholesky", "sqrt"):
        N = linearizing_isometry(M, kind)
        np.testing.assert_allclose(N.T @ N, M, rtol=1e-13)
        np.testing.assert_allclose(pulled_back_metric(M, N), np.eye(2), atol=1e-12)
    geo = shoot_geodesic(flat, [0.1, 0.5], [1.4, -0.6])
    x = geo.q @ linearizing_isometry(M).T
    chord = np.linalg.norm(x[-1] - x[0])
    assert straightness(x) < 1e-12 * chord
    # the same map does not straighten the geodesic of the curved Table 1 arm
    xc = shoot_geodesic(YZArm(), [0.1, 0.5], [1.4, -0.6]).q @ linearizing_isometry(M).T
    assert straightness(xc) > 1e-3 * np.linalg.norm(xc[-1] - xc[0])


# -- submanifold ----------------------------------------------------------------


@pytest.fixture(scope="module")
def arm3():
    links = [PlanarLink(1.0, 1.0), PlanarLink(0.8, 0.7), PlanarLink(0.5, 0.4)]
    m = planar_chain(links, gravity=(0.0, 0.0, 0.0))
    cset = ConstraintSet(m, [PointOnPlane("arm_tip", (1.0, 0.0, 0.0), 1.2)])
    p0 = newton_project(cset, np.array([0.2, 0.9, 0.8]))[0]
    p1 = newton_project(cset, np.array([0.7, 0.3, 0.6]))[0]
    return m, cset, p0, p1


def test_kernel_image_split(arm3):
    m, cset, p0, _ = arm3
    M = m.compute(p0).M
    _, A = cset.holonomic_terms_at(p0)
    K, G = induced_metric(M, A)
    np.testing.assert_allclose(K.T @ K, np.eye(2), atol=1e-14)
    np.testing.assert_allclose(A @ K, 0, atol=1e-14)
    np.testing.assert_allclose(G, K.T @ M @ K)
    E = m_orthonormal_kernel_basis(M, A)
    np.testing.assert_allclose(E.T @ M @ E, np.eye(2), atol=1e-13)
    v = np.array([0.3, -1.0, 2.0])
    vk, vi = split_velocity(M, A, v)
    np.testing.assert_allclose(vk + vi, v)
    np.testing.assert_allclose(A @ vk, 0, atol=1e-13)
    assert abs(vk @ M @ vi) < 1e-13 and np.abs(vi).max() > 0.1


def test_constrained_geodesic(arm3):
    m, cset, p0, p1 = arm3
    geo = shoot_constrained_geodesic(cset, p0, p1)
    assert geo.residual < 1e-9
    assert np.abs(geo.phi).max() < 1e-9
    E = kinetic_energy(m, geo.q, geo.v)
    assert np.abs(E - E[0]).max() / E[0] < 1e-9
    # eq. (34) multiplier == the KKT multiplier of the unforced constrained dynamics
    for k in (10, 50, 90):
        s = m.compute(geo.q[k], geo.v[k], cset.frames)
        ev = cset.evaluate(s)
        _, lam, _ = kkt_dynamics(s.M, s.h, np.zeros(3), ev.A, ev.drift)
        np.testing.assert_allclose(geo.lam[k], lam, atol=1e-10)
    assert np.abs(geo.lam).max() > 1e-2
    d_sub, d = submanifold_distance(cset, p0, p1), distance(m, p0, p1)
    assert d <= d_sub < 1.2 * d


def test_constrained_bad_inputs(arm3):
    _, cset, p0, _ = arm3
    with pytest.raises(ValueError, match="not on the constraint submanifold"):
        shoot_constrained_geodesic(cset, p0, p0 + 0.1)


# -- scenarios ------------------------------------------------------------------


def _run(name):
    s = SCENARIOS[name]
    return s.func(s.resolve({})).metrics


def test_geodesic_scenario_figures():
    m = _run("geodesic")
    assert m["energy_rel_variation"] <= 1e-8
    assert m["bvp_endpoint_error"] <= 1e-8
    assert m["simulate_endpoint_error"] <= 1e-8
    assert m["length_ratio_vs_joint_line"] <= 1.0
    assert m["length_quadrature_rel_error"] < 1e-9
    assert m["distance"] > 0


def test_curvature_scenario_figures():
    m = _run("curvature")
    assert m["max_curvature_flat"] <= 1e-8
    assert m["christoffel_fd_error"] <= 1e-6
    assert m["scalar_curvature_2link"] > 0
    assert abs(m["scalar_curvature_2link"] - brioschi_scalar(1.0)) < 1e-6
    assert m["max_curvature_yz_table1"] > 1e-2
