"""A quadruped standing on its four box feet and shifting its weight, under control that
keeps the sign of every contact force (:mod:`pfaff.control.force_sign`, Aghili Sec. 7.3).

``STAND`` (``models/stand.xml`` beside this module): a free trunk on four legs of three
pitch hinges, each foot a box on the floor (friction 0.6): every corner a held contact
point, 16 points of 3 rows on 18 dof, redundant (each foot's 12 rows have rank 6). Every
``control_every`` steps the held mode's acceleration and the corners' forces are read as
affine maps of the 12 joint torques (:mod:`pfaff.api.contact_response`) and a QP picks
the torques that track the trunk's reference (forward and back by ``shift``, down and up
by ``squat``, level) while every corner pushes with at least ``f_min`` inside the
friction pyramid. The same run with the force conditions dropped (``cones=false``:
Aghili's least-norm motion control, Sec. 7.1) makes corners pull: the Simulator then
releases them and the feet rock.

Metrics: ``min_normal_force`` [N] and ``max_cone_ratio`` (``|f_t| / (mu f_n)``) of the
QP's corners at the control instants; ``contact_events_after_landing`` (releases, slips,
impacts after the feet land: the Simulator decides them at every step from its own
multipliers, the witness that the QP's forces hold between its instants too);
``least_norm_min_normal_force`` [N], ``least_norm_contact_events`` and
``least_norm_end_s`` (where it ended: its feet rock until the event budget stops it) of
the run without the force conditions; ``tracking_error_max`` [m] of the trunk's x and z;
``qp_failures`` (QPs whose force conditions missed by more than :data:`QP_TOL`).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimulationError

#: the model file (shipped with the package)
STAND = Path(__file__).parent / "models" / "stand.xml"
#: a QP whose force conditions miss by more than this [N] counts in ``qp_failures``
QP_TOL = 1e-6
_TASK = [0, 2, 4]  # the trunk's forward and vertical velocity and its pitch rate in v
#: the foot contact pairs, as the scene draws their forces
FEET = [f"floor / {leg}_foot" for leg in ("FL", "FR", "HL", "HR")]


def _reference(t: float, shift: float, squat: float, x0: np.ndarray):
    """The trunk's (x, z, pitch) reference and its first two derivatives at ``t``: a
    shift forward and back over 2 s, a squat and back up over 1 s, level."""
    w1, w2 = np.pi, 2 * np.pi
    r = x0 + np.array([shift * np.sin(w1 * t), -squat * (1 - np.cos(w2 * t)) / 2, 0.0])
    rd = np.array([shift * w1 * np.cos(w1 * t), -squat * w2 * np.sin(w2 * t) / 2, 0.0])
    rdd = np.array([-shift * w1**2 * np.sin(w1 * t), -squat * w2**2 * np.cos(w2 * t) / 2, 0])
    return r, rd, rdd


def _pose(q: np.ndarray) -> np.ndarray:
    """The trunk's x, z [m] and pitch [rad] (its quaternion x, y, z, w at q[3:7])."""
    return np.array([q[0], q[2], 2.0 * np.arctan2(q[4], q[6])])


def stand_run(system, p: dict, cones: bool) -> dict:
    """One controlled run of ``system`` (:data:`STAND` with contact): its record,
    events and, per control instant, the corners' forces the QP chose."""
    from pfaff.api import Simulator
    from pfaff.api.contact_response import contact_response
    from pfaff.control.force_sign import force_sign_qp

    sim = Simulator(system, dt=p["dt"])
    nv = system.nv
    B, S = np.eye(nv)[:, 6:], np.eye(nv)[_TASK]
    kp, kd = p["kp"], 2.0 * np.sqrt(p["kp"])  # critically damped
    x0 = _pose(sim.q)
    sim.step()  # the feet land: an impact at rest a few ns in, then every corner held
    landed = len(sim.events)
    u = np.zeros(nv - 6)
    out = {k: [] for k in ("t", "fn", "ratio", "foot", "slack", "drawn", "error")}
    while sim.t < p["t_end"] - 0.5 * p["dt"]:
        q, v = sim.q, sim.v
        r, rd, rdd = _reference(sim.t, p["shift"], p["squat"], x0)
        a_d = rdd + kd * (rd - v[_TASK]) + kp * (r - _pose(q))
        try:
            res = contact_response(sim, B)
        except ValueError:  # nothing held: the last torque
            res = None
        if res is not None:
            sol = force_sign_qp(
                res.a0, res.K_a, res.f0, res.K_f, res.normals, res.mu, S, a_d,
                f_min=p["f_min"], cones=cones,
            )  # fmt: skip
            u = sol.u
            f = res.f0 + res.K_f @ u
            fn = np.einsum("pi,pi->p", f, res.normals)
            ft = np.linalg.norm(f - fn[:, None] * res.normals, axis=1)
            feet = {n: np.array([m == n for m in res.names]) for n in FEET}
            out["t"].append(sim.t)
            out["fn"].append(float(fn.min()))
            out["ratio"].append(float((ft / (res.mu * np.maximum(fn, 1e-12))).max()))
            out["foot"].append({n: float(fn[k].sum()) for n, k in feet.items()})
            # per foot: the middle of its corners and their forces' sum, as drawn
            out["drawn"].append(
                [(res.points[k].mean(axis=0), f[k].sum(axis=0)) for k in feet.values()]
            )
            out["error"].append(float(np.abs(_pose(q) - r)[:2].max()))
            out["slack"].append(sol.slack)
        steps = max(1, min(p["control_every"], round((p["t_end"] - sim.t) / p["dt"])))
        try:
            sim.step(B @ u, n=steps)
        except SimulationError as exc:  # the state stays at the last step that succeeded
            out["failure"] = f"{str(exc).splitlines()[0]}"
            break
    out["trajectory"], out["events"], out["landed"] = sim.record(), sim.events, landed
    out["end"] = sim.t
    return out


@scenario(
    "stand",
    t_end=Param(2.0, "simulated time [s]", positive=True),
    dt=Param(1e-3, "integrator step [s]", positive=True, high=0.01),
    control_every=Param(5, "steps a torque is held between two QPs", low=1, high=100),
    shift=Param(0.04, "the trunk's shift forward and back [m]", low=0.0, high=0.1),
    squat=Param(0.03, "the trunk's squat, down and back up [m]", low=0.0, high=0.08),
    f_min=Param(1.0, "least normal force of every foot corner [N]", low=0.0),
    kp=Param(100.0, "stiffness of the trunk's tracking [1/s^2]", positive=True),
    cones=Param(True, "keep every contact force pushing and inside its cone (QP)"),
)
def stand(p: dict) -> ScenarioResult:
    """A quadruped standing on box feet and shifting its weight under force-sign control
    (module docstring: what runs and the metrics)."""
    import pfaff

    system = pfaff.load(STAND, contact=True)
    wall = time.perf_counter()
    run = stand_run(system, p, p["cones"])
    wall = time.perf_counter() - wall
    other = stand_run(system, p, not p["cones"])
    ln = other if p["cones"] else run  # the least-norm run
    after = run["events"][run["landed"] :]
    metrics = {
        "min_normal_force": float(min(run["fn"])),
        "max_cone_ratio": float(max(run["ratio"])),
        "contact_events_after_landing": len(after),
        "least_norm_min_normal_force": float(min(ln["fn"])),
        "least_norm_contact_events": len(ln["events"]) - ln["landed"],
        "least_norm_end_s": float(ln["end"]),
        "tracking_error_max": max(run["error"], default=float("nan")),
        "qp_failures": sum(m < -QP_TOL for m in run["slack"]),
    }
    t = np.asarray(run["t"])
    feet = {k: np.array([f.get(k, 0.0) for f in run["foot"]]) for k in run["foot"][0]}
    a = run["trajectory"].arrays()
    plots = {
        "foot_forces": {
            "title": "normal force of each foot (its corners' sum) at the control instants",
            "ylabel": "force (N)",
            "x": t,
            "xlabel": "t (s)",
            "series": feet,
        },
        "corner_margins": {
            "title": "least corner normal force, with and without the force conditions",
            "ylabel": "force (N)",
            "x": t,
            "xlabel": "t (s)",
            "series": {
                "QP (force-sign control)" if p["cones"] else "least-norm": np.array(run["fn"]),
                "least-norm" if p["cones"] else "QP": np.interp(t, ln["t"], ln["fn"]),
            },
        },
        "trunk": {
            "title": "the trunk's forward and vertical position",
            "ylabel": "m",
            "series": {"x": a["q"][:, 0], "z": a["q"][:, 2]},
        },
    }
    shown = "; ".join(f"{e.kind} of {e.geom2} at {e.t:.6g} s" for e in after[:8])
    notes = (
        f"{'QP' if p['cones'] else 'least-norm'} run: {len(after)} contact events after "
        f"landing{': ' + shown if shown else ''}. The least-norm run (Aghili Sec. 7.1, "
        f"no force conditions): {len(ln['events']) - ln['landed']} events to "
        f"{ln['end']:.3g} s, least corner force {min(ln['fn']):.3g} N"
        + (f"; it stopped: {ln['failure']}" if "failure" in ln else "")
        + "."
    )
    from pfaff.scenarios.model_file import held_force_scene

    # each foot's force as the QP chose it, held from its control instant to the next
    scene = held_force_scene(system, a, t, run["drawn"])
    if "failure" in run:
        return ScenarioResult(run["trajectory"], metrics, wall, status="failed",
                              message=run["failure"], plots=plots, notes=notes,
                              scene3d=scene)  # fmt: skip
    return ScenarioResult(
        run["trajectory"], metrics, wall, plots=plots, notes=notes, scene3d=scene
    )
