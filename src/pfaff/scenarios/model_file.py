"""A model file (MJCF or URDF) run as a scenario: ``pfaff run FILE.xml`` / ``FILE.urdf``.

The file is read as data (:func:`pfaff.mechanism.mjcf.read_mjcf`, Pinocchio's URDF
parser), its ``<equality>`` section becomes exact constraints, the start (the
first keyframe, else the default posture qpos0) is assembled onto the constraint
manifold (:func:`pfaff.simulate.assembly.assemble`) and the system runs passively.

Metrics (contract names): ``constraint_rows``, ``constraint_rank`` and ``dof``
(judged after assembly), ``assembly_displacement`` (tangent-space distance from
the start to the assembled state), ``energy_drift_rel`` (largest
``|E(t) - E(0)|`` over ``energy_reference``, the largest kinetic energy reached, at
least :data:`ENERGY_FLOOR`). A file with limited hinge or
slide joints runs them as unilateral constraints (:mod:`pfaff.simulate.limits`):
``limit_events`` and ``limit_impact_loss`` [J], the impacts' loss in the energy balance
(the contacts' impacts included). The MJCF's contact pairs are held too
(:mod:`pfaff.contact.model`, Newton's ``restitution``; ``--set contact=false``: none):
``contact_events`` and
``max_penetration`` [m], the deepest overlap of a modelled pair over the recorded states
as MuJoCo's own narrow phase measures it (:mod:`pfaff.contact.penetration`; the
``penetration`` series per sample). A start that overlaps is moved out of the overlap at
its first instant (a warning names the pairs).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from pfaff.api.arrows import geom_extent, newton_scale, scene_width, weight_of
from pfaff.api.simulator_limits import contacts_held
from pfaff.constraints.base import ConstraintSet
from pfaff.contact.penetration import Penetration, contact_forces_world, deep_start_hint
from pfaff.files.model import ModelSystem, load_model
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism
from pfaff.scenarios.common import timed_simulate
from pfaff.scenarios.registry import Param, Scenario, ScenarioResult
from pfaff.simulate import INTEGRATORS, SimOptions
from pfaff.simulate.actuators import Actuation
from pfaff.simulate.assembly import Assembly, assemble, moved_note
from pfaff.simulate.integrator import step_count
from pfaff.simulate.limit_events import ContactEvent
from pfaff.simulate.limits import simulate_limited
from pfaff.simulate.limits_core import LimitedRunError
from pfaff.simulate.policy import StatusCode
from pfaff.simulate.trajectory import energy_drift_rel

#: the least energy the relative energy metrics are taken over [J]: a run that stays at
#: rest (its kinetic energy round-off) would read round-off over round-off as drift
ENERGY_FLOOR = 1e-9


def scene_boxes(mech: PinocchioMechanism, geoms: list, q: np.ndarray) -> list[dict]:
    """MJCF geoms as boxes (their bounding boxes) keyed along the configurations ``q``."""
    model, data = mech.model, mech.model.createData()
    out = []
    for i, (frame, gtype, size, placement) in enumerate(geoms[:200]):
        fid = mech.frame_id(frame)
        out.append(
            {"name": f"geom{i}", "size": geom_extent(gtype, size), "fid": fid, "T": placement}
        )
    poses = [np.empty((len(q), 4, 4)) for _ in out]
    for k, qk in enumerate(q):
        pin.framesForwardKinematics(model, data, qk)
        for b, P in zip(out, poses):
            P[k] = data.oMf[b["fid"]].homogeneous @ b["T"]
    return [
        {"name": b["name"], "size": b["size"], "poses": P, "color": 0x6FA8DC}
        for b, P in zip(out, poses)
    ]


def _drawable_urdf(mech: PinocchioMechanism, path: str, warnings: list[str]) -> bool:
    """True when the URDF has visual geometry Pinocchio can load (meshes found under
    example-robot-data's package folder); otherwise a note says why there is no scene."""
    from pfaff.mechanism.robots import package_dir

    try:
        geom = pin.buildGeomFromUrdf(
            mech.model, path, pin.VISUAL, package_dirs=[str(package_dir())]
        )
    except (RuntimeError, ValueError) as exc:
        warnings.append(f"no 3D scene: the URDF's visual geometry does not load ({exc})")
        return False
    if not len(geom.geometryObjects):
        warnings.append("no 3D scene: the URDF has no <visual> geometry")
        return False
    return True


def run_system(
    system: ModelSystem,
    t_end: float,
    opt: SimOptions,
    title: str,
    controller=None,
    tau: np.ndarray | None = None,
    assembled: Assembly | None = None,
    restitution: float = 0.0,
) -> ScenarioResult:
    """Assemble (unless given), simulate and summarise a :class:`ModelSystem` (its joint
    limits and its ``contacts`` held, the contacts' impacts with Newton's
    ``restitution``)."""
    mech = system.mechanism
    cset = ConstraintSet(mech, system.constraints)
    asm = assembled or assemble(cset, system.q, system.v, opt.position_tol, 100, opt.rank_tol)
    opt.potential_offset = mech.compute(asm.q).potential
    # the file's actuators at ctrl = 0 (MuJoCo's default ctrl): their bias terms act
    act = Actuation(system.actuators, mech)
    forces = [*system.forces, *act.elements]
    if act and controller is None:
        tau = (np.zeros(mech.nv) if tau is None else tau) + act.tau(None)
    loss = None
    contacts = contacts_held(system)
    pen = None if contacts is None else Penetration(contacts, system.coords.q_to_qpos)
    deep = [] if pen is None else pen.overlaps(asm.q, opt.position_tol)
    if deep:
        system.warnings.append(
            f"the start overlaps ({'; '.join(deep[:5])}): moved out of the overlap at its "
            "first instant (the least motion in the metric of M)"
        )
    if system.limits or contacts is not None:  # unilateral constraints, with events
        wall = time.perf_counter()
        # on the dt grid, as simulate ends and as the command line's note says
        # (simulate_limited itself would end exactly at an off-grid t_end)
        t_grid = step_count(0.0, t_end, opt.dt) * opt.dt
        try:
            run = simulate_limited(
                cset, asm.q, asm.v, t_grid, system.limits, opt, controller, forces, tau=tau,
                contacts=contacts, restitution=restitution,
            )  # fmt: skip
        except LimitedRunError as e:
            if deep and not len(e.trajectory) and e.status.code == StatusCode.START_FAILED:
                # the move out of the overlap failed: say which pairs, and what to do
                e.args = (f"{e.args[0]}{deep_start_hint(deep)}",)
            raise
        traj, wall, loss = run.trajectory, time.perf_counter() - wall, run.impact_loss
        touches = [e for e in run.events if isinstance(e, ContactEvent)]
    else:
        traj, wall = timed_simulate(
            cset, asm.q, asm.v, t_end, opt, controller=controller, tau=tau, forces=forces
        )
    a = traj.arrays()
    ref = max(float(a["kinetic"].max()), ENERGY_FLOOR)
    metrics: dict[str, Any] = {
        "constraint_rows": asm.rows,
        "constraint_rank": asm.rank,
        "dof": asm.dof,
        "assembly_displacement": asm.displacement,
        "energy_drift_rel": energy_drift_rel(a["energy"], a["kinetic"], ref),
        "max_kinetic_energy": float(a["kinetic"].max()),
        "energy_reference": ref,
    }
    if loss is not None:
        metrics["limit_events"] = len(run.events) - len(touches)
        metrics["limit_impact_loss"] = float(loss[-1])
    if pen is not None:
        depth = pen.series(a["q"])
        metrics["contact_events"] = len(touches)
        metrics["max_penetration"] = float(depth.max())
    if forces or loss is not None:  # E(t) - E(0) = work + force_work + correction - losses
        balance = a["energy"] - a["energy"][0] - a["work"] - a["force_work"]
        balance = balance - a["correction_energy"] + (0.0 if loss is None else loss)
        metrics["force_work_final"] = float(a["force_work"][-1])
        metrics["energy_balance_rel"] = float(np.abs(balance).max() / ref)
    scene = {"t": a["t"]}
    if system.urdf is not None and _drawable_urdf(mech, system.urdf, system.warnings):
        scene.update(urdf=system.urdf, q=a["q"], locked=system.locked or None)
    elif system.geoms:
        scene["boxes"] = scene_boxes(mech, system.geoms, a["q"])
    joints = [mech.model.names[j] for j in range(1, mech.model.njoints)]
    shown = ", ".join(joints[:12]) + (f" and {len(joints) - 12} more" if len(joints) > 12 else "")
    held = f" ({', '.join(system.locked)} locked)" if system.locked else ""
    notes = (
        f"{title}: model {mech.name!r}{held}, {len(joints)} joints ({shown}); "
        f"nq {mech.nq}, nv {mech.nv}, {asm.rows} constraint rows of rank "
        f"{asm.rank} after assembly (smallest singular values "
        f"{', '.join(f'{s:.2g}' for s in asm.sigma[-3:])}), {asm.dof} degrees of freedom. "
        f"Start: {system.start}, moved {asm.displacement:.3g} onto the manifold in "
        f"{asm.iterations} Newton-Raphson iterations (max |Phi| {asm.residual:.2g})."
    )
    if loss is not None:  # the limits' and contacts' events, as the run located them
        shown = "; ".join(
            f"{e.kind} of {e.geom1} / {e.geom2} at {e.t:.9g} s"
            if isinstance(e, ContactEvent)
            else f"{e.kind} of {e.joint} ({e.side}) at {e.t:.9g} s"
            for e in run.events[:12]
        )
        more = f" and {len(run.events) - 12} more" if len(run.events) > 12 else ""
        notes += f" Events ({traj.engine} engine): {shown or 'none'}{more}."
    if system.actuators:
        names = ", ".join(a.name for a in system.actuators[:6])
        more = ", ..." if len(system.actuators) > 6 else ""
        warnings.warn(
            f"the actuators ({names}{more}) act at ctrl = 0, as MuJoCo's default ctrl: "
            "drive them with pfaff.Simulator(system).step(ctrl=...)",
            UserWarning,
            stacklevel=2,
        )
    moved = moved_note(asm.displacement, system.start)
    for w in [*system.warnings, *([moved] if moved else [])]:  # into summary.json "warnings"
        warnings.warn(w, UserWarning, stacklevel=2)
    res = ScenarioResult(
        traj,
        metrics,
        wall,
        scene3d=scene if "urdf" in scene or "boxes" in scene else None,
        notes=notes,
    )
    if loss is not None:  # the energy the limits' impacts took, per sample
        res.extra_arrays["limit_impact_loss"] = np.asarray(loss, dtype=float)
        res.plots["impacts"] = {
            "title": f"kinetic energy and the impacts' losses ({len(run.events)} events)",
            "ylabel": "J",
            "series": {"kinetic energy": a["kinetic"], "lost in impacts so far": loss},
        }
        res.series_doc["limit_impact_loss"] = (
            "kinetic energy lost in the limits' and contacts' impacts so far (J)"
        )
    if pen is not None:
        _contact_outputs(res, run, contacts, depth, touches)
        if res.scene3d is not None and "boxes" in res.scene3d:
            res.scene3d["arrows"] = force_arrows(pen, a["q"], run.contact_force, mech, scene)
            for box in res.scene3d["boxes"]:  # the forces under and inside them seen
                box["opacity"] = 0.5
    return res


def force_arrows(
    pen: Penetration, q: np.ndarray, force: np.ndarray, mech: PinocchioMechanism, scene: dict
) -> list[dict]:
    """The contact pairs' forces on their moving geoms as arrows among ``scene``'s boxes
    (:func:`scene_boxes`), at the middle of each pair's contact points
    (:func:`scaled_arrows`)."""
    return scaled_arrows(*contact_forces_world(pen, q, force), mech, scene)


def held_force_scene(system, a: dict, t: np.ndarray, drawn, since: float | None = None) -> dict:
    """The 3D scene of a run under a controller that chose its contact forces at the
    instants ``t``: the geoms half transparent, each force ``drawn`` (instants, K, 2, 3:
    point, force [N]) held from its instant to the next (:func:`scaled_arrows`); none
    before ``since`` [s] (None: the first instant's from the start). ``a``: the run's
    arrays (``t``, ``q``)."""
    scene = {"t": a["t"], "boxes": scene_boxes(system.mechanism, system.model.geoms, a["q"])}
    if len(t):
        at = np.clip(np.searchsorted(t, a["t"], side="right") - 1, 0, len(t) - 1)
        held = np.array(drawn)[at]  # (samples, K, 2, 3)
        if since is not None:
            held[a["t"] < since] = np.nan
        scene["arrows"] = scaled_arrows(held[:, :, 0], held[:, :, 1], system.mechanism, scene)
    for box in scene["boxes"]:
        box["opacity"] = 0.5
    return scene


def scaled_arrows(
    points: np.ndarray, vectors: np.ndarray, mech: PinocchioMechanism, scene: dict
) -> list[dict]:
    """Forces (T, K, 3) [N] at ``points`` (T, K, 3) [m] as the arrows of ``scene``'s boxes
    (:func:`scene_boxes`; NaN: no force): the mechanism's weight is drawn half as long as
    the scene at its start is wide (where there is no gravity, the largest force is)."""
    start = np.array([b["poses"][0][:3, 3] for b in scene["boxes"]])
    size = scene_width(start, [b["size"] for b in scene["boxes"]])
    largest = float(np.nanmax(np.linalg.norm(vectors, axis=2), initial=0.0))
    per_newton = newton_scale(size, weight_of(mech), largest)
    return [
        {
            "name": f"contact{k}",
            "points": points[:, k],
            "vectors": per_newton * vectors[:, k],
            "radius": 0.03 * size,
        }
        for k in range(points.shape[1])
    ]


def _contact_outputs(res: ScenarioResult, run, contacts, depth: np.ndarray, touches) -> None:
    """A contact run's arrays and plots: the penetration per sample (``depth``), the
    impacts' times (of the contact events ``touches``), the forces per pair."""
    res.extra_arrays["penetration"] = depth
    res.extra_arrays["contact_impact_t"] = np.array(
        [e.t for e in touches if e.kind == "impact"], dtype=float
    )
    res.series_doc["penetration"] = (
        "deepest overlap of a modelled contact pair, by MuJoCo's narrow phase (m)"
    )
    res.series_doc["contact_impact_t"] = "times of the contacts' impacts, located (s)"
    fc = run.contact_force  # (T, pairs, 4): normal force, friction force x, y, z
    res.extra_arrays["contact_normal_force"] = fc[:, :, 0]
    res.extra_arrays["contact_friction_force"] = fc[:, :, 1:]
    res.series_doc["contact_normal_force"] = (
        "normal force of each contact pair (the file's pair order), its held points' sum (N)"
    )
    res.series_doc["contact_friction_force"] = (
        "friction force on each pair's second geom (whose point is held), world x, y, z, "
        "its points' sum (N)"
    )
    shown = np.argsort(-np.abs(fc[:, :, 0]).max(axis=0))[:6]  # the most loaded pairs
    res.plots["contact_forces"] = {
        "title": "contact forces of the most loaded pairs",
        "ylabel": "force (N)",
        "series": {
            **{f"{'/'.join(contacts.names[k])} normal": fc[:, k, 0] for k in shown},
            **{
                f"{'/'.join(contacts.names[k])} friction": np.linalg.norm(fc[:, k, 1:], axis=1)
                for k in shown
                if np.abs(fc[:, k, 1:]).max() > 0
            },
        },
    }
    res.plots["penetration"] = {
        "title": "deepest overlap of a contact pair (MuJoCo's narrow phase on the states)",
        "ylabel": "penetration (m)",
        "log": True,
        "series": {"pfaff": np.maximum(depth, 1e-18)},  # exact zeros at the floor
    }


def model_scenario(path: str | Path) -> Scenario:
    """A :class:`Scenario` running a bare model file passively (``--set t_end= dt= ...``)."""
    p = Path(path)
    system = load_model(p)  # bad files are refused here, before any output

    def run(params: dict) -> ScenarioResult:
        sysm = load_model(p, params["keyframe"] or None, params.get("contact", True))
        opt = SimOptions(
            dt=params["dt"], integrator=params["integrator"], record_every=params["record_every"]
        )
        return run_system(sysm, params["t_end"], opt, str(p), restitution=params["restitution"])

    run.__doc__ = (
        f"Model file {p.name}: passive from its first keyframe (or default posture), "
        "its loops closed exactly.\n\n" + (__doc__ or "")
    )
    params = {
        "t_end": Param(5.0, "simulated time [s]", positive=True),
        "dt": Param(1e-3, "integrator step [s]", positive=True),
        "integrator": Param("rk4", "time integrator", choices=INTEGRATORS),
        "record_every": Param(1, "record one step in this many (a long run's memory)", low=1),
        "keyframe": Param("", "start keyframe name (default: the first one)"),
        "restitution": Param(
            0.0, "Newton's restitution of the contacts' impacts (with contact)", low=0, high=1
        ),
    }
    if p.suffix.lower() == ".xml":
        params["contact"] = Param(
            True, "hold the contacts between the file's collision geoms (pfaff.contact)"
        )
    if system.keyframes:  # the default is the first one, by name
        params["keyframe"] = Param(
            next(iter(system.keyframes)), "start keyframe", choices=tuple(system.keyframes)
        )
    return Scenario(str(path), run, params)
