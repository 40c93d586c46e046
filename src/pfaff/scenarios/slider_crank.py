"""Aghili Sec. 8: the slider-crank passing through its singular configurations."""

from __future__ import annotations

import numpy as np

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import PlanarLink, SliderCrankChain, planar_chain
from pfaff.scenarios.common import decoupling, planar_animation, sign_changes, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions, SimulationError, simulate


def build(m: float, l: float, g: float, model: str):
    """Mechanism, constraint set and the name of the slider frame C."""
    if model == "closed-form":
        mech, slider = SliderCrankChain(m, l, g), "slider"
    else:  # the same open chain in Pinocchio: point masses at the link ends
        links = [PlanarLink(l, m, com=l), PlanarLink(l, m, com=l)]
        mech, slider = planar_chain(links, gravity=(0.0, -g, 0.0), name="arm"), "arm_tip"
    return mech, ConstraintSet(mech, [PointOnPlane(slider, (0.0, 1.0, 0.0), name="y_C = 0")])


def kkt_baseline(cset, q0, v0, t_end, opt: SimOptions) -> tuple[bool, float, str]:
    """Run the KKT baseline on the same problem: (failed, max condition, message)."""
    kopt = SimOptions(**{**opt.__dict__, "method": "kkt", "progress": False})
    try:
        tr = simulate(cset, q0, v0, t_end, kopt)
    except SimulationError as exc:
        tr = exc.trajectory
        return True, tr.kkt_cond_max if tr is not None else float("nan"), str(exc)
    viol = tr.max_constraint_violation()
    failed = not viol <= 1e-6
    msg = f"KKT finished; max |Phi| = {viol:.3g}" + (" (> 1e-6: failed)" if failed else "")
    return failed, tr.kkt_cond_max, msg


@scenario(
    "slider-crank",
    m=Param(1.0, "point mass at each link end [kg] (Aghili eq. 68)", positive=True),
    l=Param(1.0, "crank and rod length [m] (equal: Aghili Sec. 8)", positive=True),
    g=Param(9.81, "gravity [m/s^2] along -y", low=0.0),
    q1_0=Param(0.0, "initial crank angle [rad]; the rod angle is q2 = -2 q1"),
    omega0=Param(6.0, "initial crank speed [rad/s] (6: the crank turns over)"),
    t_end=Param(10.0, "simulated time [s]", positive=True),
    dt=Param(5e-3, "integrator step [s]", positive=True),
    model=Param("closed-form", "mechanism backend", choices=("closed-form", "pinocchio")),
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
    comparison (kkt_max_condition, kkt_failed).
    """
    m, l, g = p["m"], p["l"], p["g"]
    mech, cset = build(m, l, g, p["model"])
    q1, w = p["q1_0"], p["omega0"]
    q0, v0 = np.array([q1, -2 * q1]), np.array([w, -2 * w])
    opt = SimOptions(dt=p["dt"], potential_offset=-m * g * l)
    traj, wall = timed_simulate(cset, q0, v0, p["t_end"], opt)
    a = traj.arrays()
    c1 = np.cos(a["q"][:, 0])
    metrics = {
        **decoupling(cset, a["q"], every=20),
        "singular_crossings": sign_changes(c1),
        "min_abs_cos_q1_sampled": float(np.abs(c1).min()),
        "energy_drift_rel": traj.energy_drift_rel(),
        "constraint_rank_min": int(a["rank"].min()),
    }
    notes = ""
    if p["kkt"]:
        failed, cond, msg = kkt_baseline(cset, q0, v0, p["t_end"], opt)
        metrics["kkt_max_condition"] = cond
        metrics["kkt_failed"] = failed
        notes = "KKT baseline: " + msg
    rail = (np.array([-2.2 * l, 2.2 * l]), np.zeros(2))
    return ScenarioResult(
        traj,
        metrics,
        wall,
        **planar_animation(mech, a["t"], a["q"]),
        static_lines=[rail],
        plots={
            "singularity": {
                "title": "distance to the singular configurations (A = 0 at cos q1 = 0)",
                "ylabel": "|cos q1|, smallest singular value of A [m]",
                "log": True,
                "series": {"|cos q1|": np.abs(c1), "sigma_min(A)": a["sigma_min"]},
            }
        },
        notes=notes,
    )
