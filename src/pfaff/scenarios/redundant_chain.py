"""Altafini: redundant chains as Riemannian submersions; Kool: line coordinates."""

from __future__ import annotations

import time

import numpy as np

from pfaff.geometry.lift_check import lift_defect
from pfaff.geometry.lines import kool_vs_rnea_max_err
from pfaff.geometry.screws import poe_vs_pinocchio_fk_err, screw_chain
from pfaff.geometry.submersion import (
    bracket_defect,
    euler_poincare,
    follow_loop,
    inverses,
    task_jacobian,
    theorem_iii2,
)
from pfaff.mechanism import PlanarLink, load_robot, planar_chain
from pfaff.scenarios.common import planar_animation
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import Trajectory

#: chosen (the papers give no numbers): 3R arm (length m, mass kg), postures, weights
LINKS_3R = [PlanarLink(0.5, 1.0), PlanarLink(0.4, 0.8), PlanarLink(0.3, 0.5)]
Q0_3R = np.array([0.3, 0.9, 0.7])
Q0_PANDA = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.7])
W_OTHER_3R = np.array([1.0, 4.0, 0.25])
W_OTHER_PANDA = np.array([1.0, 4.0, 0.25, 2.0, 0.5, 3.0, 1.0])
NAMES = ("lift", "pinv", "other")


def _circle(r: float, period: float, e1: np.ndarray, e2: np.ndarray):
    """Task velocity of a circle of radius r through the start point (centre at ``-r e1``)."""
    w = 2 * np.pi / period
    return lambda t: r * w * (-np.sin(w * t) * e1 + np.cos(w * t) * e2)


def _loops(task, q0, xdot, period, steps, w_other):
    """(t, q) of the loop under each inverse, and the wall time of each."""
    out, wall = {}, {}
    for name, G in inverses(w_other).items():
        t0 = time.perf_counter()
        out[name] = follow_loop(task, G, xdot, q0, period, steps)
        wall[name] = time.perf_counter() - t0
    return out, wall


def _trajectory(task, G, xdot, t: np.ndarray, q: np.ndarray) -> Trajectory:
    """The lift loop of the 3R arm as a Trajectory (no constraints: m = 0)."""
    n = q.shape[1]
    traj = Trajectory(n, n, m=0, m_h=0)
    for tk, qk in zip(t, q):
        J, M, _ = task(qk)
        v = G(J, M) @ xdot(tk)
        s = np.linalg.svd(J, compute_uv=False)
        kin = 0.5 * float(v @ M @ v)
        traj.append(t=tk, q=qk, v=v, a=np.full(n, np.nan), tau=np.zeros(n), F=np.zeros(n))
        traj.append(**{"lambda": np.zeros(0)}, phi=np.zeros(0), av=np.zeros(0))
        traj.append(rank=len(s), sigma_min=s[-1], kinetic=kin, potential=0.0, energy=kin)
        traj.append(work=0.0, correction_energy=0.0, newton_iterations=0)
    traj.steps = len(t) - 1
    return traj


def _chain_metrics(mech, frame, rows, q0, xdot, p, steps, w_other, rng) -> dict:
    """All numbers of one chain; ``loops`` holds the (t, q) of the three inverses."""
    model = mech.model
    task = task_jacobian(mech, frame, rows)
    loops, wall = _loops(task, q0, xdot, p["period"], steps, w_other)
    post = loops["lift"][1][:: max(1, steps // 10)]
    th = [theorem_iii2(*task(q)[:2]) for q in post]
    lift = inverses(w_other)["lift"]
    defect = [lift_defect(model, frame, rows, q, lift(*task(q)[:2])) for q in post]
    chain = screw_chain(model, frame)
    lo, hi = np.maximum(model.lowerPositionLimit, -3), np.minimum(model.upperPositionLimit, 3)
    qs = rng.uniform(lo, hi, (10, model.nq))
    e_fk, e_j = poe_vs_pinocchio_fk_err(model, frame, qs)
    states = [(q, rng.normal(size=model.nv), rng.normal(size=model.nv)) for q in qs]
    ep = [euler_poincare(model, chain, frame, *s) for s in states]
    pose0 = task(q0)[2]
    m = {
        "lift_residual": max(max(d.values()) for d in defect),
        "lift_horizontality": max(d["horizontality"] for d in th),
        "lift_vs_closed_form": max(d["lift_vs_closed_form"] for d in th),
        "lift_vs_pinv_max_diff": max(d["lift_vs_pinv"] for d in th),
        "lift_vs_pinv_rel": max(d["lift_vs_pinv_rel"] for d in th),
        "lift_vs_pinv_identity_metric": max(d["lift_vs_pinv_identity_metric"] for d in th),
        "kool_vs_rnea_max_err": kool_vs_rnea_max_err(model, chain, states),
        "euler_poincare_residual": max(d["derived_rel"] for d in ep),
        "euler_poincare_paper_form_rel": max(d["paper_form_rel"] for d in ep),
        "poe_vs_pinocchio_fk_err": e_fk,
        "poe_body_jacobian_err": e_j,
    }
    for name, (_t, q) in loops.items():
        m[f"loop_drift_{name}"] = float(np.linalg.norm(q[-1] - q[0]))
        m[f"loop_task_closure_{name}"] = float(np.abs(task(q[-1])[2] - pose0).max())
        m[f"bracket_defect_{name}"] = bracket_defect(task, inverses(w_other)[name], q0)
    return {"metrics": m, "loops": loops, "task": task, "wall": wall}


@scenario(
    "redundant-chain",
    radius_3r=Param(
        0.1, "radius of the tool-point circle of the planar 3R arm [m]", positive=True
    ),
    radius_panda=Param(
        0.05, "radius of the Panda tool-point circle (x-z plane) [m]", positive=True
    ),
    period=Param(1.0, "duration of one workspace loop [s]", positive=True),
    steps=Param(400, "RK4 steps per loop", low=10, high=100000),
    seed=Param(0, "seed of the random test postures", low=0),
)
def redundant_chain(p: dict) -> ScenarioResult:
    """Redundant chains as Riemannian submersions (Altafini) and Kool's line coordinates.

    Two chains: a planar 3R arm (links 0.5/0.4/0.3 m, 1.0/0.8/0.5 kg, rods,
    chosen) onto the tool-point position in the plane, and the Panda's 7 joints
    onto SE(3) (frame panda_hand_tcp). For each: the horizontal lift (from its
    definition) vs. its closed form and vs. J^+ for the kinetic-energy metric M
    and for M = I (Altafini Theorem III.2); the joint drift after one closed
    workspace loop (a circle of the tool point; the Panda's orientation held)
    under the lift, J^+ and a diagonal-weighted J^+ (W = diag(1, 4, 0.25, ...),
    chosen); the Lie-bracket defect of each inverse's distribution at the start
    posture; Kool's generalized forces (eq. 10) vs. rnea; the workspace
    dynamics of the body twist (derived exact form, and Altafini's eq. 18 as
    printed) vs. Pinocchio; product of exponentials vs. Pinocchio FK.
    ``lift_residual`` checks the lift against its definition independently of
    how it was built (pfaff.geometry.lift_check): the larger of max |J G - I|
    and the largest M-cosine between the fiber ker J and a column of G, with
    J by finite differences of Pinocchio's forward kinematics, M by CRBA and
    the fiber by SciPy, at ten postures along the loop (dimensionless; a J^+
    in place of the lift gives 0.55 on the 3R arm).
    Contract metrics are the max over both chains; ``_3r`` / ``_panda``
    suffixes give each chain.
    """
    rng = np.random.default_rng(p["seed"])
    arm = planar_chain(LINKS_3R, gravity=(0.0, 0.0, 0.0), name="arm")
    ex, ey, ez = np.eye(3)
    xd3 = _circle(p["radius_3r"], p["period"], ex[:2], ey[:2])
    r3 = _chain_metrics(arm, "arm_tip", [0, 1], Q0_3R, xd3, p, p["steps"], W_OTHER_3R, rng)
    wall = r3["wall"]["lift"]  # the main run: the 3R loop under the horizontal lift
    panda = load_robot("panda")
    xdp_lin = _circle(p["radius_panda"], p["period"], ex, ez)
    rp = _chain_metrics(
        panda, "panda_hand_tcp", slice(None), Q0_PANDA,
        lambda t: np.r_[xdp_lin(t), 0.0, 0.0, 0.0], p, p["steps"],
        W_OTHER_PANDA, rng,
    )  # fmt: skip
    metrics = {}
    for k in r3["metrics"]:
        a, b = r3["metrics"][k], rp["metrics"][k]
        metrics[k] = max(a, b)
        metrics[f"{k}_3r"], metrics[f"{k}_panda"] = a, b
    t, q = r3["loops"]["lift"]
    traj = _trajectory(r3["task"], inverses(W_OTHER_3R)["lift"], xd3, t, q)
    drift3 = {n: np.linalg.norm(r3["loops"][n][1] - Q0_3R, axis=1) for n in NAMES}
    driftp = {n: np.linalg.norm(rp["loops"][n][1] - Q0_PANDA, axis=1) for n in NAMES}
    circ = np.linspace(0, 2 * np.pi, 200)
    c = arm.compute(Q0_3R, None, ["arm_tip"], dynamics=False).frames["arm_tip"].p[:2]
    c = c - [p["radius_3r"], 0.0]
    return ScenarioResult(
        traj,
        metrics,
        wall,
        **planar_animation(arm, t, q),
        static_lines=[
            (c[0] + p["radius_3r"] * np.cos(circ), c[1] + p["radius_3r"] * np.sin(circ))
        ],
        plots={
            "joint_drift_3r": {
                "title": "3R arm: |q(t) - q(0)| along one tool-point circle",
                "ylabel": "joint-space distance [rad]",
                "log": False,
                "series": drift3,
            },
            "joint_drift_panda": {
                "title": "Panda: |q(t) - q(0)| along one tool-point circle (orientation fixed)",
                "ylabel": "joint-space distance [rad]",
                "log": False,
                "series": driftp,
            },
        },
        extra_arrays={f"q_{n}_3r": r3["loops"][n][1] for n in NAMES},
        series_doc={f"q_{n}_3r": f"3R joint path under the {n} inverse (T, 3)" for n in NAMES},
    )
