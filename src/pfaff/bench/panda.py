"""Benchmarks on the Panda: projection dynamics against Pinocchio's
``constraintDynamics`` (``panda-dd``), the PIDC controller (``panda-control``) and
MuJoCo's step (``panda-mujoco``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from pfaff import dynamics as D
from pfaff.constraints import ConstraintSet, PointsCoincide
from pfaff.mechanism import PinocchioMechanism, load_robot, robot_urdf
from pfaff.mechanism.base import frame_index
from pfaff.mechanism.robots import package_dir

from .timing import REPEATS, Row, median_us, paired_us, row

PANDA_FRAME = "panda_hand_tcp"
PANDA_TARGET = (0.4, 0.0, 0.4)
N_STATES = 200


def panda_states(n: int = N_STATES, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random Panda states ``(Q, V, TAU)``, each ``(n, 7)``.

    ``q`` is uniform within the joint limits, ``v`` and ``tau`` uniform in [-1, 1].
    """
    model = load_robot("panda").model
    rng = np.random.default_rng(seed)
    Q = rng.uniform(model.lowerPositionLimit, model.upperPositionLimit, (n, model.nq))
    V = rng.uniform(-1.0, 1.0, (n, model.nv))
    TAU = rng.uniform(-1.0, 1.0, (n, model.nv))
    return Q, V, TAU


def _panda_solvers() -> tuple[Callable, Callable, Callable]:
    """Projection, KKT and Pinocchio accelerations ``f(q, v, tau)`` for the TCP point."""
    mech: PinocchioMechanism = load_robot("panda")
    cs = ConstraintSet(mech, [PointsCoincide(PANDA_FRAME, target=list(PANDA_TARGET))])
    frames = cs.frames

    def projection(q, v, tau):
        snap = mech.compute(q, v, frames, extras=False)
        ev = cs.evaluate(snap)
        return D.direct_dynamics(snap.M, snap.h, tau, D.projection(ev.A, ev.drift))

    def kkt(q, v, tau):
        snap = mech.compute(q, v, frames, extras=False)
        ev = cs.evaluate(snap)
        return D.kkt_dynamics(snap.M, snap.h, tau, ev.A, ev.drift)[0]

    m, pd, cms, cds = pinocchio_contact(mech)

    def pinocchio(q, v, tau):
        return pin.constraintDynamics(m, pd, q, v, tau, cms, cds)

    return projection, kkt, pinocchio


def pinocchio_contact(mech: PinocchioMechanism) -> tuple:
    """Pinocchio's model of the TCP point contact (3D, world-aligned) for its
    constrained dynamics: ``(model, data, constraint models, constraint datas)``, the
    data initialised by ``initConstraintDynamics``."""
    m = mech.model
    fr = m.frames[frame_index(m, PANDA_FRAME)]
    cm = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D,
        m,
        fr.parentJoint,
        fr.placement,
        pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
    )
    cms = pin.StdVec_RigidConstraintModel()
    cms.append(cm)
    cds = pin.StdVec_RigidConstraintData()
    cds.append(cm.createData())
    pd = m.createData()
    pin.initConstraintDynamics(m, pd, cms, cds)
    return m, pd, cms, cds


def _core_solver(mech: PinocchioMechanism) -> Callable | None:
    """The compiled core's acceleration ``f(q, v, tau)`` for the same TCP point (None
    when the core is not built): M, h, frames, A, drift, certified QR, eq. 22."""
    from pfaff import core

    if not core.available():
        return None
    cs = ConstraintSet(mech, [PointsCoincide(PANDA_FRAME, target=list(PANDA_TARGET))])
    return core.build(cs).acceleration


def projection_vs_pinocchio(states: tuple[np.ndarray, np.ndarray, np.ndarray]) -> dict:
    """Largest disagreement between the projection dynamics and Pinocchio's.

    Returns ``{"max_abs": max |a - a_pin|, "max_rel": max |a - a_pin|_inf /
    max(1, |a_pin|_inf)}`` over the states.
    """
    projection, _, pinocchio = _panda_solvers()
    max_abs = max_rel = 0.0
    for q, v, tau in zip(*states):
        a, a_pin = projection(q, v, tau), np.array(pinocchio(q, v, tau))
        err = float(np.max(np.abs(a - a_pin)))
        max_abs = max(max_abs, err)
        max_rel = max(max_rel, err / max(1.0, float(np.max(np.abs(a_pin)))))
    return {"max_abs": max_abs, "max_rel": max_rel}


def bench_panda_dd() -> list[Row]:
    """Projection direct dynamics of the Panda with a 3-row point constraint vs peers."""
    states = panda_states(N_STATES, 0)
    triples = list(zip(*states))
    projection, kkt, pinocchio = _panda_solvers()

    def timed(f):
        return median_us(lambda: [f(q, v, tau) for q, v, tau in triples], len(triples))

    t_proj, t_pin, t_kkt = timed(projection), timed(pinocchio), timed(kkt)
    wit = projection_vs_pinocchio(states)
    b, n = "panda-dd", f"{N_STATES} states, median of {REPEATS}"
    rows = []
    core_f = _core_solver(load_robot("panda"))
    if core_f is not None:
        (t_core, t_pin2), (ratio, _) = paired_us(
            [
                lambda: [core_f(q, v, tau) for q, v, tau in triples],
                lambda: [pinocchio(q, v, tau) for q, v, tau in triples],
            ],
            len(triples),
            2 * REPEATS + 1,
        )
        err = max(
            float(np.abs(core_f(q, v, tau) - np.asarray(pinocchio(q, v, tau))).max())
            / max(1.0, float(np.abs(np.asarray(pinocchio(q, v, tau))).max()))
            for q, v, tau in triples
        )
        rows = [
            row(
                b,
                "core projection dynamics",
                t_core,
                "us",
                "",
                f"pfaff._core, 3 rows; {N_STATES} states",
            ),
            row(
                b, "pinocchio (paired with core)", t_pin2, "us", "", "timed in turn with the core"
            ),
            row(b, "ratio core/pinocchio", ratio, "", "<= 1.5", "median of paired ratios; Sec. 8"),
            row(b, "core max rel |a - a_pin|", err, "", "<= 1e-9", "/ max(1, |a_pin|_inf)"),
        ]
    return rows + [
        row(b, "projection dynamics", t_proj, "us", "<= 40", f"NumPy engine, SVD+eq.22; {n}"),
        row(b, "pinocchio constraintDynamics", t_pin, "us", "", f"CONTACT_3D, same states; {n}"),
        row(b, "ratio projection/pinocchio", t_proj / t_pin, "", "", "NumPy engine, no target"),
        row(
            b,
            "KKT baseline",
            t_kkt,
            "us",
            "",
            f"compute+evaluate+kkt_dynamics (with cond(K)); {n}",
        ),
        row(b, "max |a - a_pin|", wit["max_abs"], "rad/s^2", "", "correctness witness"),
        row(b, "max rel |a - a_pin|", wit["max_rel"], "", "<= 1e-9", "/ max(1, |a_pin|_inf)"),
    ]


# -- panda-control -----------------------------------------------------------------------
def bench_panda_control() -> list[Row]:
    """One hybrid PIDC + force-control evaluation of the panda-table task (Aghili Sec. 7)."""
    from pfaff.scenarios import get_scenario
    from pfaff.scenarios.panda_table import build
    from pfaff.simulate import project_state
    from pfaff.simulate.record import StepRecord

    mech, cset, ctrl, q0 = build(get_scenario("panda-table").resolve({}))
    rng = np.random.default_rng(0)
    recs = []
    sensors = {"lambda": np.array([-5.0]), "F": np.zeros(7)}
    for _ in range(50):
        q, v = project_state(cset, q0 + rng.uniform(-0.05, 0.05, 7), rng.uniform(-0.3, 0.3, 7))
        rec = StepRecord.at(cset, mech.compute(q, v, ctrl.frames), sensors=sensors)
        _ = rec.N  # the simulator's: taken with the step, not by the controller
        recs.append(rec)
    t_us = median_us(lambda: [ctrl(0.7, r) for r in recs], len(recs))
    note = (
        "ProjectedController on the simulator's StepRecord (A, P, N given): "
        "6-row task, eq. 45-46 + 51-52; 50 states"
    )
    return [row("panda-control", "PIDC + force control", t_us, "us", "<= 60", note)]


# -- panda-mujoco ------------------------------------------------------------------------
def mujoco_panda():
    """The Panda URDF compiled by MuJoCo (visual meshes dropped; contacts and joint
    limits disabled: the projection dynamics it stands beside has neither)."""
    import mujoco

    xml = re.sub(r"<\?xml[^>]*\?>", "", robot_urdf("panda").read_text())
    xml = xml.replace("package://", str(package_dir()) + "/")
    compiler = '<mujoco><compiler discardvisual="true" fusestatic="false"/></mujoco>'
    xml = re.sub(r"(<robot\b[^>]*>)", r"\1" + compiler, xml, count=1)
    model = mujoco.MjModel.from_xml_string(xml)
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    return mujoco, model


def bench_panda_mujoco() -> list[Row]:
    """MuJoCo ``mj_forward`` per state of the Panda (unconstrained; optional peer)."""
    b = "panda-mujoco"
    try:
        mujoco, model = mujoco_panda()
        data = mujoco.MjData(model)
        Q, V, TAU = panda_states(N_STATES, 0)
        n = Q.shape[1]
        data.qpos[n:] = 0.5 * (model.jnt_range[n:, 0] + model.jnt_range[n:, 1])  # fingers

        def loop():
            for q, v, tau in zip(Q, V, TAU):
                data.qpos[:n], data.qvel[:n], data.qfrc_applied[:n] = q, v, tau
                mujoco.mj_forward(model, data)

        t = median_us(loop, N_STATES)
    except Exception as exc:  # optional peer: never crash the suite
        return [row(b, "mj_forward", math.nan, "us", "", f"skipped: {type(exc).__name__}: {exc}")]
    note = (
        f"unconstrained, nv={model.nv} (finger joints kept, mimic ignored), contacts and "
        "limits off, state written from Python"
    )
    return [row(b, "mj_forward", t, "us", "", note)]


# -- scenarios ---------------------------------------------------------------------------
#: non-default parameter sets that are part of an issue's figures
