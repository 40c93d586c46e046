"""Riemannian geometry of the inertia metric (Arimoto Sec. 2-3, Altafini eq. (9)-(12)).

Two scenarios on a horizontal 2-link planar arm (gravity off, uniform rods:
``I = m l^2 / 12`` about the centre of mass, COM at mid-length):

- ``geodesic``: the geodesic between two postures by shooting, checked by a
  second, independent integration of the unforced dynamics (pfaff.simulate);
- ``curvature``: scalar curvature of the arm's metric, flatness of the
  Yoshikawa-Zheng arm with R = 0, Christoffel symbols vs finite differences.
"""

from __future__ import annotations

import time

import numpy as np

from pfaff.constraints import ConstraintSet
from pfaff.geometry import (
    christoffel_fd,
    christoffel_first,
    curve_energy,
    curve_length,
    kinetic_energy,
    max_curvature,
    scalar_curvature,
    segment_length,
    shoot_geodesic,
)
from pfaff.mechanism import YZ_TABLE1, PlanarLink, YZArm, YZLink, planar_chain
from pfaff.scenarios.common import planar_animation, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions

_ARM = dict(
    l1=Param(1.0, "link 1 length [m] (chosen)", positive=True),
    m1=Param(1.0, "link 1 mass [kg] (chosen; uniform rod)", positive=True),
    l2=Param(0.8, "link 2 length [m] (chosen)", positive=True),
    m2=Param(0.7, "link 2 mass [kg] (chosen; uniform rod)", positive=True),
)


def _arm(p: dict):
    rod = [(p["l1"], p["m1"]), (p["l2"], p["m2"])]
    links = [PlanarLink(length, m, inertia=m * length**2 / 12) for length, m in rod]
    return planar_chain(links, gravity=(0.0, 0.0, 0.0), name="arm")


@scenario(
    "geodesic",
    **_ARM,
    q1_start=Param(0.2, "start posture, joint 1 [rad]"),
    q2_start=Param(0.8, "start posture, joint 2 (relative) [rad]"),
    q1_end=Param(1.2, "end posture, joint 1 [rad]"),
    q2_end=Param(1.8, "end posture, joint 2 (relative) [rad]"),
    dt=Param(5e-3, "step of the independent RK4 simulation [s]", positive=True, high=0.05),
)
def geodesic(p: dict) -> ScenarioResult:
    """Geodesic of the inertia metric between two postures (Arimoto eq. (8), (20), (22)).

    Horizontal 2-link arm (gravity off), uniform rods l = (1.0, 0.8) m,
    m = (1.0, 0.7) kg, I = m l^2/12. The geodesic on t in [0, 1] from p to p' is
    found by shooting on the initial velocity (DOP853, rtol = atol = 1e-12;
    least squares warm-started from the straight line). Witnesses: the
    kinetic energy along it is constant (energy_rel_variation, eq. (23)); the
    unforced arm simulated by pfaff.simulate (RK4, step dt, no constraint) from
    (p, v0*) ends at p' (simulate_endpoint_error); the geodesic is no longer
    than the straight joint-space segment measured in the same metric
    (length_ratio_vs_joint_line <= 1); the Simpson length of the samples
    agrees with |v0|_M (length_quadrature_rel_error); Cauchy-Schwarz (eq. (11))
    is an equality at constant speed (cauchy_schwarz_gap = 2E - L^2, both by
    Simpson's rule on the samples).
    """
    mech = _arm(p)
    p0 = np.array([p["q1_start"], p["q2_start"]])
    p1 = np.array([p["q1_end"], p["q2_end"]])
    t0 = time.perf_counter()
    geo = shoot_geodesic(mech, p0, p1, n_samples=201)
    shoot_wall = time.perf_counter() - t0
    E = kinetic_energy(mech, geo.q, geo.v)
    L_quad = curve_length(mech, geo.t, geo.q, geo.v)
    E_quad = curve_energy(mech, geo.t, geo.q, geo.v)
    line = segment_length(mech, p0, p1)
    opt = SimOptions(dt=p["dt"], integrator="rk4")
    traj, wall = timed_simulate(ConstraintSet(mech, []), p0, geo.v[0], 1.0, opt)
    a = traj.arrays()
    t = a["t"]
    metrics = {
        "distance": geo.length,
        "energy_rel_variation": float(np.abs(E - E[0]).max() / E[0]),
        "bvp_endpoint_error": geo.residual,
        "simulate_endpoint_error": float(np.abs(a["q"][-1] - p1).max()),
        "length_ratio_vs_joint_line": geo.length / line,
        "joint_line_length": line,
        "length_quadrature_rel_error": abs(L_quad - geo.length) / geo.length,
        "cauchy_schwarz_gap": 2.0 * E_quad - L_quad**2,
        "simulate_energy_drift_rel": traj.energy_drift_rel(),
        "simulate_energy_reference": traj.energy_reference(),
        "v0_1": float(geo.v[0, 0]),
        "v0_2": float(geo.v[0, 1]),
        "shooting_wall_time_s": shoot_wall,
    }
    q_line = p0 + np.outer(t, p1 - p0)
    return ScenarioResult(
        traj,
        metrics,
        wall,
        **planar_animation(mech, t, a["q"]),
        plots={
            "geodesic_vs_line": {
                "title": "geodesic (unforced motion) vs straight joint-space line",
                "ylabel": "joint angle [rad]",
                "log": False,
                "series": {"geodesic q": a["q"], "straight line q": q_line},
            }
        },
        extra_arrays={"q_joint_line": q_line, "geodesic_q": geo.q, "geodesic_t": geo.t},
        series_doc={
            "q_joint_line": "straight joint-space segment p + t (p' - p) at the samples (T, 2)",
            "geodesic_q": "geodesic from the shooting solver (DOP853) (201, 2)",
            "geodesic_t": "times of geodesic_q (201,)",
        },
        notes=(
            "Joint angles are coordinates on R^2 (universal cover of the torus): the "
            "geodesic homotopic to the straight segment is computed. Link parameters "
            "are chosen (uniform rods), not taken from a paper."
        ),
    )


def flat_yz_links() -> tuple[YZLink, ...]:
    """Yoshikawa-Zheng Table 1 with link 4's ``lg`` chosen so that R = 0.

    ``R = m2 l1 lg2 + m3 l0 lg3 - m4 l0 lg4 = 0`` gives
    ``lg4 = (m2 l1 lg2 + m3 l0 lg3) / (m4 l0) = 0.04367 m`` (Table 1: 0.040 m),
    a counterweighted forearm; then M is constant (flat metric).
    """
    L0, L1, L2, L3, L4 = YZ_TABLE1
    lg4 = (L2.m * L1.l * L2.lg + L3.m * L0.l * L3.lg) / (L4.m * L0.l)
    return (L0, L1, L2, L3, YZLink(L4.m, L4.l, lg4, L4.I))


def brioschi_scalar_2link(m1: float, l1: float, m2: float, l2: float, q2: float) -> float:
    """Scalar curvature 2K of the 2-link rod arm from Brioschi's formula (closed form).

    ``E = a + 2 b cos q2, F = d + b cos q2, G = d`` in (u, v) = (q1, q2), with
    ``a = I1 + I2 + m1 c1^2 + m2 (l1^2 + c2^2)``, ``b = m2 l1 c2``, ``d = I2 + m2 c2^2``.
    """
    c1, c2 = l1 / 2, l2 / 2
    I1, I2 = m1 * l1**2 / 12, m2 * l2**2 / 12
    a = I1 + I2 + m1 * c1**2 + m2 * (l1**2 + c2**2)
    b, d = m2 * l1 * c2, I2 + m2 * c2**2
    c, s = np.cos(q2), np.sin(q2)
    E, F, G = a + 2 * b * c, d + b * c, d
    Ev, Evv, Fv = -2 * b * s, -2 * b * c, -b * s
    A = np.array([[-Evv / 2, 0.0, -Ev / 2], [Fv, E, F], [0.0, F, G]])
    B = np.array([[0.0, Ev / 2, 0.0], [Ev / 2, E, F], [0.0, F, G]])
    return float(2 * (np.linalg.det(A) - np.linalg.det(B)) / (E * G - F * F) ** 2)


@scenario(
    "curvature",
    **_ARM,
    q2=Param(1.0, "elbow angle of the stated posture (q1 = 0) [rad]"),
    t_end=Param(1.0, "duration of the unforced demonstration run [s]", positive=True),
)
def curvature(p: dict) -> ScenarioResult:
    """Curvature of the inertia metric (Arimoto Sec. 3; Altafini eq. (9)-(12)).

    scalar_curvature_2link: scalar curvature (2 K) of the horizontal 2-link rod
    arm (l = (1.0, 0.8) m, m = (1.0, 0.7) kg) at (0, q2), from the Riemann
    tensor (finite differences of the exact Christoffel symbols, step 1e-4),
    with the independent closed-form Brioschi value (scalar_curvature_brioschi).
    max_curvature_flat: largest |R^i_jkl| of the Yoshikawa-Zheng arm with
    Table 1 values except link 4's lg = 0.04367 m, which makes R = 0 (constant
    M); max_curvature_yz_table1 is the same quantity with Table 1 unchanged
    (R != 0), to show the test discriminates. christoffel_fd_error: max
    difference between the Pinocchio (exact) and the central-difference
    (h = 1e-5) Christoffel symbols over five postures. The Trajectory is a
    short unforced motion of the arm (a geodesic, RK4, dt = 1e-3) along which
    the scalar curvature is plotted; it is a demonstration, not a witness.
    """
    mech = _arm(p)
    q_star = np.array([0.0, p["q2"]])
    s_pin = scalar_curvature(mech, q_star)
    s_bri = brioschi_scalar_2link(p["m1"], p["l1"], p["m2"], p["l2"], p["q2"])
    flat, table1 = YZArm(flat_yz_links()), YZArm()
    postures = np.array([[0.3, 1.1], [-0.7, 0.4], [1.2, -0.9], [2.0, 2.5], [0.0, 0.0]])
    fd_err = max(
        float(np.abs(christoffel_first(mech, q) - christoffel_fd(mech, q)).max()) for q in postures
    )
    opt = SimOptions(dt=5e-3, integrator="rk4", record_every=2)
    traj, wall = timed_simulate(
        ConstraintSet(mech, []), q_star, np.array([1.0, -0.5]), p["t_end"], opt
    )
    a = traj.arrays()
    s_along = np.array([scalar_curvature(mech, q) for q in a["q"]])
    metrics = {
        "scalar_curvature_2link": s_pin,
        "scalar_curvature_brioschi": s_bri,
        "scalar_curvature_error": abs(s_pin - s_bri),
        "max_curvature_flat": max_curvature(flat, postures),
        "yz_flat_R": flat.R,
        "max_curvature_yz_table1": max_curvature(table1, postures),
        "christoffel_fd_error": fd_err,
    }
    return ScenarioResult(
        traj,
        metrics,
        wall,
        **planar_animation(mech, a["t"], a["q"]),
        plots={
            "scalar_curvature": {
                "title": "scalar curvature of the inertia metric along the unforced motion",
                "ylabel": "scalar curvature [1/(kg m^2)]",
                "log": False,
                "series": {"S(q(t))": s_along},
            }
        },
        extra_arrays={"scalar_curvature": s_along},
        series_doc={"scalar_curvature": "scalar curvature of M at the samples (T,)"},
        notes=(
            f"The scalar curvature is {'positive' if s_pin > 0 else 'negative'} at q2 = "
            f"{p['q2']} rad. Flat YZ arm: lg4 = {flat.links[4].lg:.5f} m (Table 1: "
            f"{YZ_TABLE1[4].lg} m), R = {flat.R:.3g} kg m^2."
        ),
    )
