"""Aghili Sec. 8: the slider-crank passing through its singular configurations."""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import PlanarLink, SliderCrankChain, planar_chain
from pfaff.scenarios.common import decoupling, planar_animation, sign_changes, timed_simulate
from pfaff.scenarios.registry import Param, ParameterError, ScenarioResult, scenario
from pfaff.scenarios.singular import kkt_at_states, rank_deficient_samples
from pfaff.simulate import SimOptions, SimulationError, simulate

#: the model backends: the Pinocchio chain (the default) and the closed form of Aghili
#: eq. 68 (the tests' witness of the first); the compiled core runs both
MODELS = ("pinocchio", "closed-form")

#: the name of the slider frame C in each model
SLIDER_FRAME = {"pinocchio": "arm_tip", "closed-form": "slider"}


def build(m: float, l: float, g: float, model: str):
    """Mechanism and constraint set (y_C = 0) of the slider-crank on ``model``.

    ``model``: ``"pinocchio"`` (two-link planar chain with point masses at the link
    ends) or ``"closed-form"`` (:class:`~pfaff.mechanism.SliderCrankChain`); the
    slider frame C is ``SLIDER_FRAME[model]``.
    """
    if model == "closed-form":
        mech = SliderCrankChain(m, l, g)
    elif model == "pinocchio":  # the same open chain: point masses at the link ends
        links = [PlanarLink(l, m, com=l), PlanarLink(l, m, com=l)]
        mech = planar_chain(links, gravity=(0.0, -g, 0.0), name="arm")
    else:
        raise ValueError(f"unknown slider-crank model {model!r}; valid: {', '.join(MODELS)}")
    slider = PointOnPlane(SLIDER_FRAME[model], (0.0, 1.0, 0.0), name="y_C = 0")
    return mech, ConstraintSet(mech, [slider])


def engine_of(model: str) -> str:
    """The engine a run of ``model`` asks for: ``"auto"`` for both, the compiled core
    running the Pinocchio chain or the closed form (a plant, :mod:`pfaff.plant`)."""
    return "auto"


def branch_energy(m: float, l: float, g: float, q1: float, omega: float) -> float:
    """Energy on the slider branch q2 = -2 q1 at crank angle q1 and crank speed omega.

    On that branch q' = omega (1, -2), so with M of Aghili eq. 68 the kinetic
    energy is (1/2) m l^2 (3 - 2 cos 2 q1) omega^2; B is at height l sin q1 and
    C stays on the rail, so V = m g l sin q1 (zero with the crank horizontal).
    """
    return 0.5 * m * l**2 * (3.0 - 2.0 * np.cos(2.0 * q1)) * omega**2 + m * g * l * np.sin(q1)


def singular_start(
    m: float, l: float, g: float, q1_0: float, omega0: float
) -> tuple[np.ndarray, np.ndarray]:
    """The state at q1 = pi/2 (A = 0, Aghili eq. 65 and 70) on the orbit of (q1_0, omega0).

    The crank speed at q1 = pi/2 is chosen so that the energy equals that of
    the start (q1_0, omega0) on the branch q2 = -2 q1 (:func:`branch_energy`):
    the run follows the same orbit as ``start=default``, shifted in time so
    that its first sample lies exactly on the singular configuration. The
    crank keeps the sense of rotation of omega0 (counter-clockwise for 0).

    Raises
    ------
    ParameterError
        When that orbit does not reach q1 = pi/2 (energy <= m g l).
    """
    top = m * g * l  # the crank upright: V = m g l, m_eff = 5 m l^2
    spare = branch_energy(m, l, g, q1_0, omega0) - top
    if not spare > 0:
        raise ParameterError(
            f"start=singular: the orbit of q1_0={q1_0!r}, omega0={omega0!r} does not reach "
            f"q1 = pi/2 (its energy is {-spare:.3g} J short of m g l); raise |omega0| "
            f"or use start=default"
        )
    w = np.copysign(np.sqrt(2.0 * spare / (5.0 * m * l**2)), omega0)
    q1 = 0.5 * np.pi
    return np.array([q1, -2.0 * q1]), np.array([w, -2.0 * w])


def kkt_baseline(cset, q0, v0, t_end, opt: SimOptions) -> tuple[bool, float, str]:
    """Run the KKT baseline on the same problem: (failed, max condition, message)."""
    # the KKT baseline is a NumPy-engine method: asked for, not a fallback
    kopt = SimOptions(**{**opt.__dict__, "method": "kkt", "progress": False, "engine": "numpy"})
    try:
        tr = simulate(cset, q0, v0, t_end, kopt)
    except SimulationError as exc:
        tr = exc.trajectory
        return True, tr.kkt_cond_max if tr is not None else float("nan"), str(exc)
    viol = tr.max_constraint_violation()
    failed = not viol <= 1e-6
    msg = f"KKT finished; max |Phi| = {viol:.3g}" + (" (> 1e-6: failed)" if failed else "")
    return failed, tr.kkt_cond_max, msg


KKT_SERIES = {
    "kkt_cond": "2-norm condition number of the KKT matrix at each recorded state (T,)",
    "kkt_a": "KKT baseline acceleration at each recorded state (T, nv) [rad/s^2]",
    "kkt_lambda": "KKT baseline multiplier at each recorded state (T, m) [N]",
}


def kkt_report(cset, a: dict) -> tuple[dict, dict, dict]:
    """Plots, arrays and metrics of the KKT baseline at the run's own states.

    The baseline is solved at each recorded (q, v, tau) of the projection run
    (:func:`pfaff.scenarios.singular.kkt_at_states`): kkt_accel_deviation_max
    [rad/s^2], kkt_lambda_deviation_max [N] and kkt_force_deviation_max [N m]
    are the largest differences from the projection method's acceleration,
    least-norm multiplier and constraint force F = A^T lambda (eq. 32);
    kkt_solve_failures counts the samples where LU raised. Where A = 0 the
    multiplier is undetermined: the projection method reports the least-norm
    0, KKT whatever its LU makes of round-off, while both forces vanish.
    """
    k = kkt_at_states(cset, a)
    sigma = np.maximum(a["sigma_min"], np.finfo(float).tiny)
    plots = {
        "kkt_condition": {
            "title": "KKT baseline at the run's states: condition number vs 1/sigma_min(A)",
            "ylabel": "condition number [-], 1/sigma_min(A) [1/m]",
            "log": True,
            "series": {"cond [[M, A^T], [A, 0]]": k["kkt_cond"], "1/sigma_min(A)": 1.0 / sigma},
        },
        "kkt_vs_projection": {
            "title": "KKT baseline vs projection method at the same states",
            "ylabel": "[rad/s^2], [N], [N m]",
            "log": True,
            "series": {
                "max |a_kkt - a|": k["kkt_accel_deviation"],
                "|lambda_kkt - lambda|": k["kkt_lambda_deviation"],
                "max |A^T lambda_kkt - F|": k["kkt_force_deviation"],
            },
        },
    }
    arrays = {key: k[key] for key in KKT_SERIES}
    metrics = {
        "kkt_accel_deviation_max": _nanmax(k["kkt_accel_deviation"]),
        "kkt_lambda_deviation_max": _nanmax(k["kkt_lambda_deviation"]),
        "kkt_force_deviation_max": _nanmax(k["kkt_force_deviation"]),
        "kkt_solve_failures": k["kkt_solve_failures"],
    }
    return plots, arrays, metrics


def _nanmax(x: np.ndarray) -> float | None:
    """Largest finite entry (None when there is none)."""
    x = x[np.isfinite(x)]
    return float(x.max()) if x.size else None


@scenario(
    "slider-crank",
    m=Param(1.0, "point mass at each link end [kg] (Aghili eq. 68)", positive=True),
    l=Param(1.0, "crank and rod length [m] (equal: Aghili Sec. 8)", positive=True),
    g=Param(9.81, "gravity [m/s^2] along -y", low=0.0),
    q1_0=Param(0.0, "initial crank angle [rad]; the rod angle is q2 = -2 q1"),
    omega0=Param(6.0, "initial crank speed [rad/s] (6: the crank turns over)"),
    start=Param(
        "default",
        "initial state: default (q1_0, omega0) or singular (q1 = pi/2 exactly, A = 0, "
        "eq. 65/70, on the same orbit)",
        choices=("default", "singular"),
    ),
    t_end=Param(10.0, "simulated time [s]", positive=True),
    dt=Param(5e-3, "integrator step [s]", positive=True),
    model=Param(
        "pinocchio",
        "mechanism backend: pinocchio (planar chain) or closed-form (Aghili eq. 68 in "
        "Python, its compute called from the compiled loop); both run on the core",
        choices=MODELS,
    ),
    kkt=Param(True, "also run the KKT baseline on the same problem"),
)
def slider_crank(p: dict) -> ScenarioResult:
    """Passive slider-crank under gravity through its singular configurations (Aghili Sec. 8).

    Crank and rod of equal length l, point masses m at B and at the slider C
    (Aghili eq. 68); the loop is cut at C and closed by y_C = l (s1 + s12) = 0
    (eq. 66-67). At q1 = n pi/2 (n odd) A = l [c1 + c12, c12] vanishes: the
    SVD threshold drops the constraint (eq. 70) and the simulation goes on.
    singular_crossings counts sign changes of cos q1 (each is a passage with
    |cos q1| < 1e-3). Potential zero at the lowest configuration q1 = -pi/2.
    The KKT baseline [[M, A^T], [A, 0]] is run on the same problem for
    comparison (kkt_max_condition, kkt_failed) and solved at every recorded
    state of the projection run (kkt_accel_deviation_max,
    kkt_lambda_deviation_max, kkt_force_deviation_max, kkt_solve_failures;
    plots kkt_condition and kkt_vs_projection).

    The default start (q1_0 = 0, crank speed 6 rad/s) passes the singular
    configurations between samples: sigma_min(A) stays >= 7.4e-4 m, far above
    rank_tol = 1e-9, so the threshold never acts. start=singular begins the
    same orbit (same energy, branch q2 = -2 q1) exactly at q1 = pi/2, where
    A = 0 to round-off (|A| ~ 1e-16 m): there rank A = 0 < 1 row and the
    projection method drops the constraint (eq. 70). rank_deficient_samples
    counts such samples; sigma_min_A_min is the smallest sigma_min(A).

    model=pinocchio (default) builds the chain in Pinocchio and runs on the
    compiled core; model=closed-form runs the closed form of eq. 68 on the NumPy
    engine (the tests hold the two to the same trajectory and metrics). The KKT
    baseline runs on the NumPy engine in both.
    """
    m, l, g = p["m"], p["l"], p["g"]
    mech, cset = build(m, l, g, p["model"])
    q1, w = p["q1_0"], p["omega0"]
    q0, v0 = np.array([q1, -2 * q1]), np.array([w, -2 * w])
    if p["start"] == "singular":
        q0, v0 = singular_start(m, l, g, q1, w)
    opt = SimOptions(dt=p["dt"], potential_offset=-m * g * l, engine=engine_of(p["model"]))
    traj, wall = timed_simulate(cset, q0, v0, p["t_end"], opt)
    a = traj.arrays()
    c1 = np.cos(a["q"][:, 0])
    metrics = {
        **decoupling(cset, a["q"], every=20),
        "singular_crossings": sign_changes(c1),
        "min_abs_cos_q1_sampled": float(np.abs(c1).min()),
        "energy_drift_rel": traj.energy_drift_rel(),
        "energy_reference": traj.energy_reference(),
        "constraint_rank_min": int(a["rank"].min()),
        "rank_deficient_samples": rank_deficient_samples(a["rank"], cset.dim),
        "sigma_min_A_min": float(a["sigma_min"].min()),
    }
    notes, plots, extra = "", {}, {}
    if p["kkt"]:
        failed, cond, msg = kkt_baseline(cset, q0, v0, p["t_end"], opt)
        metrics["kkt_max_condition"] = cond
        metrics["kkt_failed"] = failed
        notes = "KKT baseline: " + msg
        plots, extra, more = kkt_report(cset, a)
        metrics.update(more)
    rail = (np.array([-2.2 * l, 2.2 * l]), np.zeros(2))
    return ScenarioResult(
        traj,
        metrics,
        wall,
        **planar_animation(mech, a["t"], a["q"]),
        static_lines=[rail],
        plots={
            **plots,
            "singularity": {
                "title": "distance to the singular configurations (A = 0 at cos q1 = 0)",
                "ylabel": "|cos q1|, smallest singular value of A [m]",
                "log": True,
                "series": {"|cos q1|": np.abs(c1), "sigma_min(A)": a["sigma_min"]},
            },
        },
        extra_arrays=extra,
        series_doc={k: KKT_SERIES[k] for k in extra},
        notes=notes,
    )
