"""A parallel gripper closes on a box and lifts it by friction under control that keeps
the sign of every finger's contact force (:mod:`pfaff.control.force_sign`, Aghili
Sec. 7.3).

``GRASP`` (``models/grasp.xml`` beside this module; ``examples/grasp.xml`` without its
actuators): two box fingers on slide joints hang from a hand on a vertical slide, a free
0.5 kg box (8 cm cube) on the floor between them, friction 1. The three joint forces
(lift, left, right) come from the controller. First the fingers close at
``close_speed`` (a velocity servo; the hand held against gravity) until each finger's
four corners touch the box (``"impact"`` events, then held points). Then every
``control_every`` steps the held mode's acceleration and the corners' forces are read
as affine maps of the three forces (:mod:`pfaff.api.contact_response`) and a QP picks
the forces that track the lift reference (the box up by ``lift`` over ``t_lift`` s,
then held; the hand with it) while every finger corner pushes with at least ``f_min``
inside the friction pyramid. While the floor holds the box it cannot rise: the task asks
the floor's normal force for the pull that would give the reference's acceleration, so
the floor lets go (``"release"`` events) and the box rises. The same run with the force
conditions dropped (``cones=false``: Aghili's least-norm motion control, Sec. 7.1) puts
no squeeze on the box (squeezing moves nothing, so the least-norm forces leave it out):
the corners slip and let go and the box stays behind.

Metrics: ``min_normal_force`` [N] and ``max_cone_ratio`` (``|f_t| / (mu f_n)``) of the
finger corners at the control instants after the grasp closed;
``contact_events_after_grasp`` (slips, releases, impacts at the finger corners after the
grasp closed: the Simulator decides them at every step from its own multipliers);
``floor_releases`` (the floor pair's release events); ``t_grasp`` [s] (when the fingers
closed); ``box_slip`` [m] (the most the box moved relative to the fingers
after the grasp closed: ~0 while the corners stick); ``box_height_gained`` [m] and
``height_error`` [m] (its gap to ``lift``); ``tracking_error_max`` [m] (the box's height
against the reference); ``qp_failures`` (QPs whose force conditions missed by more than
:data:`QP_TOL`); ``least_norm_min_normal_force`` [N], ``least_norm_contact_events``,
``least_norm_box_height_gained`` [m], ``least_norm_box_slip`` [m] and
``least_norm_grasp_lost_s`` (when a finger corner let go: the run stops there) of the run
without the force conditions.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimulationError

#: the model file (shipped with the package)
GRASP = Path(__file__).parent / "models" / "grasp.xml"
#: a QP whose force conditions miss by more than this [N] counts in ``qp_failures``
QP_TOL = 1e-6
#: the fingers' geoms
FINGERS = ("finger_left", "finger_right")
BOX_X, BOX_Z, LIFT = 0, 2, 6  # the box's x and z velocity and the lift's, in v
_CLOSE_GAIN = 5.0  # [N s/m] the fingers' velocity servo while they close


def _reference(s: float, lift: float, t_lift: float) -> tuple[float, float, float]:
    """The rise (height over the start) of the lift reference [m] and its first two
    derivatives ``s`` s after the grasp closed: ``lift (s/T - sin(w s) / w T)`` with
    ``w = 2 pi / T``, ``T = t_lift`` (its acceleration a full sine: zero at both ends, so
    the box starts and stops without a jump), then held."""
    if s >= t_lift:
        return lift, 0.0, 0.0
    w = 2 * np.pi / t_lift
    r = lift * (s / t_lift - np.sin(w * s) / (w * t_lift))
    return r, lift * (1 - np.cos(w * s)) / t_lift, lift * w * np.sin(w * s) / t_lift


def _finger(name: str) -> bool:
    return any(f in name for f in FINGERS)


def _gripped(sim) -> bool:
    """Each finger holds its four corners on the box."""
    names = [c.geom1 + " " + c.geom2 for c in sim.contacts]
    return all(sum(f in n for n in names) >= 4 for f in FINGERS)


def _offset(q: np.ndarray) -> np.ndarray:
    """The box's x and z relative to the fingers' midpoint and to the hand [m] (q: the
    box's position q[0:3], lift q[7], left q[8], right q[9])."""
    return np.array([q[0] - (q[8] - q[9]) / 2, q[2] - q[7]])


def close(sim, p: dict, hold: float) -> int:
    """Close the fingers on the box at ``close_speed`` (the hand held by ``hold`` N
    against gravity) until each finger holds four corners; the events' count then."""
    B = np.eye(sim.system.nv)[:, LIFT:]
    while not _gripped(sim):
        if sim.t > 1.0:
            raise SimulationError("the fingers did not close on the box within 1 s")
        v = sim.v
        u = np.array([hold, *(_CLOSE_GAIN * (p["close_speed"] - v[LIFT + 1 : LIFT + 3]))])
        sim.step(B @ u)
    return len(sim.events)


def _task(res, a_d: np.ndarray, m_lifted: float):
    """The QP's task rows ``y0 + Y u`` and their targets: the accelerations of the box's
    x and z and of the hand (``a_d``); while the floor holds the box (its rows make
    them zero), also the acceleration the floor's pull ``-sum f_n / m_lifted`` would
    give the box and the hand once it let go, asked to be the box's ``a_d``."""
    rows = [BOX_X, BOX_Z, LIFT]
    y0, Y, target = res.a0[rows], res.K_a[rows], a_d
    floor = np.array([n.startswith("floor /") for n in res.names], dtype=bool)
    if floor.any():
        n = res.normals[floor]
        y0 = np.append(y0, -np.einsum("pi,pi->", res.f0[floor], n) / m_lifted)
        Y = np.vstack([Y, -np.einsum("pik,pi->k", res.K_f[floor], n) / m_lifted])
        target = np.append(a_d, a_d[1])
    return y0, Y, target, bool(floor.any())


def grasp_run(system, p: dict, cones: bool) -> dict:
    """One controlled run of ``system`` (:data:`GRASP` with contact): its record,
    events and, per control instant after the grasp closed, the finger corners' forces
    the QP chose. It stops where a finger corner lets go (``"lost"``: the grasp is)."""
    from pfaff.api import Simulator
    from pfaff.api.contact_response import contact_response
    from pfaff.control.force_sign import force_sign_qp

    sim = Simulator(system, dt=p["dt"])
    B = np.eye(system.nv)[:, LIFT:]
    snap = system.mechanism.compute(sim.q)
    m_box, m_hand = snap.M[BOX_Z, BOX_Z], snap.M[LIFT, LIFT]  # the hand with its fingers
    closed = close(sim, p, hold=float(snap.g[LIFT]))
    t0, x0 = sim.t, sim.q.copy()
    kp, kd = p["kp"], 2.0 * np.sqrt(p["kp"])  # critically damped
    out = {k: [] for k in ("t", "fn", "ratio", "slack", "error", "drawn", "fingers")}
    out.update(floor=[], friction=[], a_box=[])
    while sim.t < p["t_end"] - 0.5 * p["dt"]:
        q, v = sim.q, sim.v
        r, rd, rdd = _reference(sim.t - t0, p["lift"], p["t_lift"])
        a_d = np.array([
            kd * (0.0 - v[BOX_X]) + kp * (x0[0] - q[0]),
            rdd + kd * (rd - v[BOX_Z]) + kp * (x0[2] + r - q[2]),
            rdd + kd * (rd - v[LIFT]) + kp * (x0[7] + r - q[7]),
        ])  # fmt: skip
        try:
            res = contact_response(sim, B)
        except ValueError:  # nothing held
            res = None
        at = (
            {fg: np.array([n == f"box / {fg}" for n in res.names]) for fg in FINGERS}
            if res
            else {}
        )
        if res is None or sum(k.sum() for k in at.values()) < 8:  # a corner let go
            out["lost"] = sim.t
            break
        fing = at[FINGERS[0]] | at[FINGERS[1]]
        y0, Y, target, on_floor = _task(res, a_d, m_box + m_hand)
        sol = force_sign_qp(
            y0, Y, res.f0[fing], res.K_f[fing], res.normals[fing], res.mu[fing],
            np.eye(len(target)), target, f_min=p["f_min"], cones=cones,
        )  # fmt: skip
        u = sol.u
        f = (res.f0 + res.K_f @ u)[fing]
        n, mu = res.normals[fing], res.mu[fing]
        fn = np.einsum("pi,pi->p", f, n)
        ft = np.linalg.norm(f - fn[:, None] * n, axis=1)
        out["t"].append(sim.t)
        out["fn"].append(float(fn.min()))
        out["ratio"].append(float((ft / (mu * np.maximum(fn, 1e-12))).max()))
        out["slack"].append(sol.slack)
        out["error"].append(abs(q[2] - x0[2] - r))
        out["floor"].append(on_floor)
        f_all = res.f0 + res.K_f @ u  # on geom2: the finger (the box is geom1)
        for fg, k in at.items():  # each finger's corners' normal and vertical forces
            out["fingers"].append((fg, float(np.einsum("pi,pi->", f_all[k], res.normals[k])),
                                   float(-f_all[k][:, 2].sum())))  # fmt: skip
        out["drawn"].append([(res.points[k].mean(axis=0), f_all[k].sum(axis=0))
                             for k in at.values()])  # fmt: skip
        out["friction"].append(float(-f[:, 2].sum()))  # the fingers' vertical pull on the box
        out["a_box"].append(float((res.a0 + res.K_a @ u)[BOX_Z]))
        steps = max(1, min(p["control_every"], round((p["t_end"] - sim.t) / p["dt"])))
        try:
            sim.step(B @ u, n=steps)
        except SimulationError as exc:  # the state stays at the last step that succeeded
            out["failure"] = f"{str(exc).splitlines()[0]}"
            break
    out.update(trajectory=sim.record(), events=sim.events, closed=closed, end=sim.t, sim=sim)
    out.update(t_closed=t0, offset0=_offset(x0), z0=x0[2], m_box=m_box,
               g=float(snap.g[BOX_Z] / m_box))  # fmt: skip
    return out


def _summary(run: dict) -> dict:
    """A run's slip, height and event figures from its record and events."""
    a = run["trajectory"].arrays()
    after = a["t"] >= run["t_closed"] - 1e-12
    slip = np.abs(np.array([_offset(q) for q in a["q"][after]]) - run["offset0"]).max()
    events = [e for e in run["events"][run["closed"] :] if _finger(e.geom1 + e.geom2)]
    return {
        "slip": float(slip),
        "gained": float(a["q"][-1, 2] - run["z0"]),
        "events": events,
        "floor_releases": sum(
            e.kind == "release" and e.geom1 == "floor" for e in run["events"][run["closed"] :]
        ),
    }


@scenario(
    "grasp",
    t_end=Param(1.5, "simulated time [s]", positive=True),
    dt=Param(1e-3, "integrator step [s]", positive=True, high=0.01),
    control_every=Param(5, "steps a force is held between two QPs", low=1, high=100),
    lift=Param(0.1, "the box's rise [m]", low=0.0, high=0.3),
    t_lift=Param(1.0, "time of the rise [s]", positive=True),
    close_speed=Param(0.1, "the fingers' closing speed [m/s]", positive=True, high=1.0),
    f_min=Param(1.0, "least normal force of every finger corner [N]", low=0.0),
    kp=Param(100.0, "stiffness of the box's tracking [1/s^2]", positive=True),
    cones=Param(True, "keep every finger force pushing and inside its cone (QP)"),
)
def grasp(p: dict) -> ScenarioResult:
    """A parallel gripper closing on a box and lifting it by friction under force-sign
    control (module docstring: what runs and the metrics)."""
    import pfaff

    system = pfaff.load(GRASP, contact=True)
    wall = time.perf_counter()
    run = grasp_run(system, p, p["cones"])
    wall = time.perf_counter() - wall
    other = grasp_run(system, p, not p["cones"])
    ln = other if p["cones"] else run  # the least-norm run
    s, sl = _summary(run), _summary(ln)
    metrics = {
        "min_normal_force": float(min(run["fn"], default=float("nan"))),
        "max_cone_ratio": float(max(run["ratio"], default=float("nan"))),
        "contact_events_after_grasp": len(s["events"]),
        "floor_releases": s["floor_releases"],
        "box_slip": s["slip"],
        "box_height_gained": s["gained"],
        "height_error": abs(s["gained"] - p["lift"]),
        "tracking_error_max": float(max(run["error"], default=float("nan"))),
        "qp_failures": sum(m < -QP_TOL for m in run["slack"]),
        "t_grasp": float(run["t_closed"]),
        "least_norm_min_normal_force": float(min(ln["fn"], default=float("nan"))),
        "least_norm_contact_events": len(sl["events"]),
        "least_norm_box_height_gained": sl["gained"],
        "least_norm_box_slip": sl["slip"],
        "least_norm_grasp_lost_s": float(ln.get("lost", float("nan"))),
    }
    t = np.asarray(run["t"])
    a = run["trajectory"].arrays()
    la = ln["trajectory"].arrays()
    plots = {
        "finger_forces": {
            "title": "each finger's push and friction on the box (its corners' sums)",
            "ylabel": "force (N)",
            "x": t,
            "xlabel": "t (s)",
            "series": {
                f"{fg} {what}": np.array([f[i] for f in run["fingers"] if f[0] == fg])
                for fg in FINGERS
                for i, what in ((1, "normal"), (2, "friction (up)"))
            },
        },
        "box_friction": {
            "title": "the fingers' friction on the box against its weight plus m a",
            "ylabel": "force (N)",
            "x": t,
            "xlabel": "t (s)",
            "series": {
                "friction (sum of the corners' vertical forces)": np.where(
                    run["floor"], np.nan, run["friction"]
                ),
                "m (g + a)": run["m_box"] * (run["g"] + np.array(run["a_box"])),
            },
        },
        "box_height": {
            "title": "the box's height, with and without the force conditions",
            "ylabel": "m",
            "x": a["t"],
            "xlabel": "t (s)",
            "series": {
                "QP (force-sign control)" if p["cones"] else "least-norm": a["q"][:, 2],
                "least-norm" if p["cones"] else "QP": np.interp(a["t"], la["t"], la["q"][:, 2]),
            },
        },
    }
    shown = "; ".join(f"{e.kind} of {e.geom2} at {e.t:.6g} s" for e in s["events"][:8])
    who = "QP" if p["cones"] else "least-norm"
    notes = (
        f"The fingers closed at {run['t_closed']:.3g} s. {who} run: {len(s['events'])} "
        f"finger contact events after the grasp closed{': ' + shown if shown else ''}; "
        f"the floor's release events: {s['floor_releases']}. The least-norm run (Aghili "
        f"Sec. 7.1, no force conditions): {len(sl['events'])} finger events, the grasp "
        f"lost at {ln.get('lost', float('nan')):.3g} s, the box rose {sl['gained']:.3g} m "
        f"and slipped {sl['slip']:.3g} m against the fingers"
        + (f"; it stopped: {ln['failure']}" if "failure" in ln else "")
        + "."
    )
    from pfaff.scenarios.model_file import held_force_scene

    # each finger's force on it as the QP chose it, from its instant to the next
    scene = held_force_scene(system, a, t, run["drawn"], since=t[0] if len(t) else None)
    message = run.get("failure", "")
    if "lost" in run:
        message = f"the grasp was lost at {run['lost']:.6g} s (a finger corner let go)"
    return ScenarioResult(
        run["trajectory"], metrics, wall, status="failed" if message else "ok", message=message,
        plots=plots, notes=notes, scene3d=scene,
    )  # fmt: skip
