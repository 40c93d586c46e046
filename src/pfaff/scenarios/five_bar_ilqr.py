"""Trajectory optimisation on a closed chain: iLQR moves the five-bar through its
singular configuration (``pfaff run five-bar-ilqr``)."""

from __future__ import annotations

import time

import numpy as np

from pfaff.control.ilqr import ILQRResult, ilqr
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions, simulate

KINDS = {"analytic": "sensitivities", "differences": "differences"}
JOINTS = ("left", "left_distal", "right", "right_distal")
SIDES = ("left", "right")


def _xz(p: np.ndarray) -> np.ndarray:
    """A point of the x-z plane in coordinates where a positive turn about +y is
    counter-clockwise: ``(x, -z)``."""
    return np.array([p[0], -p[2]])


def _angle(d: np.ndarray) -> float:
    return float(np.arctan2(d[1], d[0]))


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


class FiveBarGeometry:
    """The five-bar's elbows and tips in the plane, its other assembly mode and the
    distance to its singular configuration."""

    def __init__(self, system) -> None:
        self.sys, self.mech = system, system.mechanism
        model = self.mech.model
        index = {n: model.joints[model.getJointId(n)].idx_v for n in JOINTS}
        self.cranks = [index["left"], index["right"]]
        self.distal = [index["left_distal"], index["right_distal"]]
        self.frames = ["left_distal", "right_distal", "left_tip", "right_tip"]

    def points(self, q: np.ndarray) -> list[np.ndarray]:
        """Left elbow, right elbow, left tip, right tip in the plane (:func:`_xz`)."""
        snap = self.mech.compute(q, None, self.frames, dynamics=False)
        return [_xz(snap.frames[n].p) for n in self.frames]

    def singularity(self, q: np.ndarray) -> float:
        """``sin`` of the angle between the two distal links: zero where they are
        collinear, the five-bar's singular configuration (there the locked cranks do
        not hold the tip: it can move across the links' line; the determinant of A's
        columns of the two distal joints is the links' lengths times this sine); its
        sign tells the two assembly modes apart."""
        el, er, tl, tr = self.points(q)
        a, b = tl - el, tr - er
        return _cross(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))

    def other_mode(self, q: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """The configuration with the cranks of ``q`` turned by ``offsets`` [rad] and the
        tip on the other side of the line through the elbows (the other assembly mode):
        the circles about the elbows intersected, the distal angles set to reach it."""
        g = np.array(q, dtype=float)
        el0, er0, tip0, _ = self.points(g)
        side = np.sign(_cross(er0 - el0, tip0 - el0))
        lengths = [np.linalg.norm(tip0 - el0), np.linalg.norm(tip0 - er0)]
        g[self.cranks] += offsets
        el, er, tl, tr = self.points(g)
        d = np.linalg.norm(er - el)
        if not abs(lengths[0] - lengths[1]) < d < sum(lengths):
            raise ValueError(
                f"goal offsets {offsets.tolist()} rad: the elbows are {d:.4g} m apart, the "
                f"distal links ({lengths[0]:.4g}, {lengths[1]:.4g}) m cannot close the loop"
            )
        e = (er - el) / d
        a = (lengths[0] ** 2 - lengths[1] ** 2 + d**2) / (2 * d)
        h = np.sqrt(lengths[0] ** 2 - a**2)
        tip = el + a * e - side * h * np.array([-e[1], e[0]])
        g[self.distal[0]] += _angle(tip - el) - _angle(tl - el)
        g[self.distal[1]] += _angle(tip - er) - _angle(tr - er)
        g = np.angle(np.exp(1j * g))  # hinge angles in (-pi, pi]
        lin = self.sys.cset.evaluate(self.mech.compute(g, None, self.sys.cset.frames))
        if np.abs(lin.phi).max() > 1e-9:
            raise RuntimeError(f"the other assembly mode is off the loop by {lin.phi}")
        return g


def jacobian_disagreement(pairs) -> float:
    """The largest relative difference ``max|J_a - J_d| / max|J_d|`` over the steps of
    two Jacobian sets ``[((A_a, B_a), (A_d, B_d)), ...]`` (``J = [A | B]``)."""
    worst = 0.0
    for (Aa, Ba), (Ad, Bd) in pairs:
        Ja, Jd = np.hstack([Aa, Ba]), np.hstack([Ad, Bd])
        worst = max(worst, float(np.abs(Ja - Jd).max() / np.abs(Jd).max()))
    return worst


@scenario(
    "five-bar-ilqr",
    horizon=Param(25, "steps of the plan (it lasts horizon * dt)", low=1, high=1000),
    dt=Param(0.02, "step of the plan and of the simulation [s]", positive=True, high=0.1),
    iterations=Param(50, "most iLQR iterations (linearisations of the plan)", low=1, high=1000),
    tol=Param(1e-4, "stop when an iteration lowers the cost by at most tol times it", low=0.0),
    jacobians=Param(
        "both",
        "step Jacobians of the optimiser: analytic (forward-mode sensitivities), "
        "differences (central), or both (two runs compared)",
        choices=("analytic", "differences", "both"),
    ),
    fd_step=Param(1e-5, "central-difference step in the tangent space", positive=True),
    w_q=Param(1.0, "running weight of the joint-angle error [1/rad^2]", low=0.0),
    w_v=Param(0.01, "running weight of the joint speeds [s^2/rad^2]", low=0.0),
    wf_q=Param(200.0, "final weight of the joint-angle error [1/rad^2]", low=0.0),
    wf_v=Param(10.0, "final weight of the joint speeds [s^2/rad^2]", low=0.0),
    r=Param(0.1, "weight of the crank torques [1/(N m)^2]", positive=True),
    goal_left=Param(0.0, "left crank's goal: its start angle + this [rad]", low=-1.0, high=1.0),
    goal_right=Param(0.0, "right crank's goal: its start angle + this [rad]", low=-1.0, high=1.0),
)
def five_bar_ilqr(p: dict) -> ScenarioResult:
    """iLQR moves the five-bar through its singular configuration into its other assembly mode.

    The built-in five-bar (:func:`pfaff.api.examples.five_bar`: a planar loop in the
    x-z plane closed by a 3D point constraint, 3 rows of rank 2, under gravity) is
    actuated at its two ground cranks. It starts at rest with its tip above the line
    through the elbows; the goal is the configuration with the cranks at the same
    angles (plus ``goal_left``, ``goal_right``) and the tip below that line, at rest.
    The two assembly modes meet only where the distal links are collinear (the
    singular configuration: ``sin`` of the angle between them, plotted, changes
    sign), so every motion between them passes through it. iLQR (Li & Todorov 2004,
    regularisation and line search of Tassa, Erez & Todorov 2012,
    :func:`pfaff.control.ilqr.ilqr`) plans ``horizon`` steps of ``dt`` on the
    simulator's own step (RK4 with its projections), with the step's Jacobians
    (:func:`pfaff.api.step_derivatives.step_derivatives`) by forward-mode
    sensitivities (``analytic``) and by central differences (``differences``); the
    initial guess is zero torque. The optimised torques, held over each step, are then
    simulated on the compiled engine (the plan's step is the NumPy engine's, so the
    replay's deviation from the plan witnesses both): that run is the trajectory.

    Metrics: per Jacobian kind ``iterations_*``, ``cost_final_*``, ``converged_*``,
    ``ilqr_time_*_s`` (of it ``jacobian_time_*_s``), with both ``ilqr_time_ratio``
    (differences over analytic); ``cost_initial`` (zero torque); the goal error at the
    end of the simulated run, ``goal_error_q`` [rad] and ``goal_error_v`` [rad/s]
    (tangent norms), beside ``*_initial`` of the zero-torque run; ``phi_max`` (largest
    loop-closure residual); ``replay_deviation_max`` (the run against the plan's
    nominal states); ``singularity_crossings`` (sign changes of the sine above) and
    ``distal_sin_min`` (its smallest magnitude); ``sigma_A_kept_min`` (the smallest
    singular value of A kept by the rank: the loop never loses rank 2); and
    ``step_jacobian_disagreement_rel``, an independent witness of the Jacobians: the
    largest relative difference between the analytic and the difference step
    Jacobians along the optimised plan.
    """
    from pfaff.api.examples import five_bar
    from pfaff.api.step_derivatives import step, step_derivatives

    sys = five_bar()
    geo = FiveBarGeometry(sys)
    nv, N, dt, h = sys.nv, p["horizon"], p["dt"], p["fd_step"]
    S = np.zeros((nv, 2))
    S[geo.cranks, [0, 1]] = 1.0
    goal = geo.other_mode(sys.q0, np.array([p["goal_left"], p["goal_right"]]))
    Q = np.diag([p["w_q"]] * nv + [p["w_v"]] * nv)
    Qf = np.diag([p["wf_q"]] * nv + [p["wf_v"]] * nv)
    R = p["r"] * np.eye(2)

    def plant(q, v, u):
        return step(sys, q, v, S @ u, dt)

    def jacobians(method):
        def jac(q, v, u):
            d = step_derivatives(sys, q, v, S @ u, dt, h=h, method=method)
            return d.A, d.B @ S

        return jac

    kinds = list(KINDS) if p["jacobians"] == "both" else [p["jacobians"]]
    runs: dict[str, ILQRResult] = {}
    for kind in kinds:
        runs[kind] = ilqr(
            plant,
            jacobians(KINDS[kind]),
            sys.difference,
            sys.q0,
            sys.v0,
            np.zeros((N, 2)),
            goal,
            Q,
            Qf,
            R,
            iterations=p["iterations"],
            tol=p["tol"],
        )
    best = runs[kinds[0]]
    # the open-loop torques, held over each step, on the simulator
    U = best.controls

    def held(t, snap):
        return S @ U[min(int(round(t / dt)), N - 1)]

    t0 = time.perf_counter()
    opt = SimOptions(dt=dt)
    traj = simulate(sys.cset, sys.q0, sys.v0, N * dt, opt, controller=held, forces=sys.forces)
    wall = time.perf_counter() - t0
    a = traj.arrays()
    q, v = a["q"], a["v"]
    # the zero-torque run, for the goal error the optimiser started from
    qz, vz = sys.q0, sys.v0
    for _ in range(N):
        qz, vz = plant(qz, vz, np.zeros(2))
    # the witness of the Jacobians: both kinds along the optimised plan
    pairs = [
        (jacobians("sensitivities")(*x), jacobians("differences")(*x))
        for x in zip(best.q[:-1], best.v[:-1], U)
    ]
    sin = np.array([geo.singularity(x) for x in q])
    kept = []
    for x in q:
        A = sys.cset.evaluate(sys.mechanism.compute(x, None, sys.cset.frames)).A
        s = np.linalg.svd(A, compute_uv=False)
        kept.append(s[s > sys.rank_tol].min())
    metrics = {
        "cost_initial": float(best.costs[0]),
        "goal_error_q": float(np.linalg.norm(sys.difference(goal, q[-1]))),
        "goal_error_v": float(np.linalg.norm(v[-1])),
        "goal_error_q_initial": float(np.linalg.norm(sys.difference(goal, qz))),
        "goal_error_v_initial": float(np.linalg.norm(vz)),
        "phi_max": float(np.abs(a["phi"]).max()),
        "replay_deviation_max": float(
            max(np.abs(sys.difference(x, y)).max() for x, y in zip(best.q, q))
        ),
        "singularity_crossings": int(np.count_nonzero(np.diff(np.sign(sin)))),
        "distal_sin_min": float(np.abs(sin).min()),
        "sigma_A_kept_min": float(min(kept)),
        "step_jacobian_disagreement_rel": jacobian_disagreement(pairs),
    }
    for kind, res in runs.items():
        metrics[f"iterations_{kind}"] = res.iterations
        metrics[f"converged_{kind}"] = res.converged
        metrics[f"cost_final_{kind}"] = float(res.costs[-1])
        metrics[f"ilqr_time_{kind}_s"] = res.seconds
        metrics[f"jacobian_time_{kind}_s"] = res.jacobian_seconds
    if len(runs) == 2:
        metrics["ilqr_time_ratio"] = runs["differences"].seconds / runs["analytic"].seconds
    n_it = max(len(r.costs) for r in runs.values())
    c = [r.costs for r in runs.values()]
    alike = len(c) == 2 and len(c[0]) == len(c[1]) and np.allclose(c[0], c[1], rtol=1e-6)
    same = " (the two kinds' curves coincide)" if alike else ""
    costs = {
        f"{k} Jacobians": np.pad(r.costs, (0, n_it - len(r.costs)), constant_values=np.nan)
        for k, r in runs.items()
    }
    return ScenarioResult(
        traj,
        metrics,
        wall,
        plots={
            "ilqr_cost": {
                "title": "iLQR: cost after each iteration" + same,
                "ylabel": "cost J [-]",
                "log": True,
                "x": np.arange(n_it, dtype=float),
                "xlabel": "iteration (0: zero torque)",
                "series": costs,
            },
            "crank_angles": {
                "title": "crank angles and their goals",
                "ylabel": "angle [rad]",
                "log": False,
                "series": {
                    **{f"{n} crank": q[:, c] for n, c in zip(SIDES, geo.cranks)},
                    **{f"{n} goal": np.full(len(q), goal[c]) for n, c in zip(SIDES, geo.cranks)},
                },
            },
            "singularity": {
                "title": "distance to the singular configuration (distal links collinear at 0)",
                "ylabel": "sin(angle between distal links) [-]; sigma_2(A) [m/rad]",
                "log": False,
                "series": {"sin(distal angle)": sin, "smallest kept sigma(A)": np.array(kept)},
            },
            "crank_torques": {
                "title": "optimised crank torques, held over each step",
                "ylabel": "torque [N m]",
                "log": False,
                "series": {n: a["tau"][:, c] for n, c in zip(SIDES, geo.cranks)},
            },
        },
        series_doc={
            "distal_sin": "(T,) sin of the angle between the distal links (0: singular)",
            "goal_q": "(nq,) the goal configuration [rad]",
        },
        extra_arrays={"distal_sin": sin, "goal_q": goal},
        notes=(
            f"goal q = {np.round(goal, 4).tolist()} rad (the other assembly mode); "
            f"Jacobians: {', '.join(kinds)}; difference step {h:g}; "
            + "; ".join(f"{k}: {r.message}" for k, r in runs.items())
        ),
    )
