"""``pfaff compare FILE.xml``: the same MJCF model simulated by MuJoCo and by pfaff.

Like for like: both simulate the model the file describes -- its inertias and
armature, joint springs and dampers, equality constraints, actuators at ``ctrl = 0``
(MuJoCo's default) -- and what pfaff does not model is switched off in MuJoCo too
(contacts, dry friction, and joint limits unless pfaff models them), each named in
the report's notes; what either still leaves out is in ``warnings``.
Both start from pfaff's assembled state (MuJoCo's ``qpos``/``qvel`` through the
mapping of :mod:`pfaff.mechanism.mjcf`) and step with the same ``dt`` (the file's
``<option timestep>`` unless ``--set dt=``); MuJoCo runs with the file's other
options (integrator, solver, soft equality constraints). Recorded at every step:
the largest equality residual (MuJoCo's ``efc_pos`` rows, pfaff's ``|Phi|``) and
the total energy (MuJoCo's ``mjENBL_ENERGY``; both take the potential as
``-m g . c``, plus the springs' potential) and the work of the non-conservative forces
(dampers, actuators: MuJoCo's ``qfrc_damper + qfrc_actuator`` against ``qvel``; pfaff's
``work + force_work``), whose difference from the energy change is the energy balance:
round-off and integrator error for pfaff, the soft constraints' dissipation too for
MuJoCo. The cost of one simulated second is the wall time of each simulation divided
by the simulated time, on this machine, under its load.

Metrics: ``pfaff_violation_max``, ``mujoco_violation_max``, ``mujoco_violation_mean``,
``violation_ratio`` (MuJoCo's largest over pfaff's largest), ``pfaff_energy_drift_rel``,
``mujoco_energy_drift_rel`` (both over the largest kinetic energy),
``pfaff_energy_balance_rel``, ``mujoco_energy_balance_rel`` (the largest ``|E(t) - E(0) -
W(t)|`` over the largest kinetic energy, ``W`` the non-conservative work),
``pfaff_cost_per_sim_second_s``, ``mujoco_cost_per_sim_second_s``.

Both hold the file's contacts (``--set contact=false``: neither; pfaff the pairs it models,
:mod:`pfaff.contact.model`; MuJoCo its soft contacts, with the file's friction where pfaff
holds friction at some pair, else frictionless with ``condim`` 1; torsional and rolling
friction, ``condim`` 4 and 6, run in MuJoCo only, named in the warnings):
``pfaff_max_penetration`` (MuJoCo's narrow phase on pfaff's states),
``mujoco_max_penetration`` (its deepest contact), ``pfaff_contact_events``,
``pfaff_first_impact_s`` and ``mujoco_first_impact_s`` (the first step with a contact),
and the penetration of both per step in a plot.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from pfaff.api.simulator_limits import contacts_held
from pfaff.constraints.base import ConstraintSet
from pfaff.contact.penetration import deepest
from pfaff.files.model import load_model
from pfaff.scenarios.model_file import run_system
from pfaff.scenarios.registry import Param, ParameterError, Scenario, ScenarioResult
from pfaff.simulate import SimOptions
from pfaff.simulate.assembly import assemble
from pfaff.simulate.trajectory import energy_drift_rel


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise ParameterError(
            "pfaff compare needs MuJoCo, a dependency of pfaff that is missing here: "
            "pip install 'mujoco>=3.0' (or reinstall pfaff: pip install -e .)"
        ) from None
    return mujoco


def _timestep(path: Path) -> float:
    option = ET.parse(path).getroot().find("option")
    raw = option.get("timestep") if option is not None else None
    return float(raw) if raw is not None else 0.002  # MuJoCo's default


#: what pfaff does not model, switched off in MuJoCo for a like-for-like run: the
#: mjtDisableBit names (limits only where pfaff does not model them: see ``disabled``)
NOT_MODELLED = ("CONTACT", "FRICTIONLOSS")


def disabled(system) -> tuple[str, ...]:
    """The MuJoCo features a comparison switches off: :data:`NOT_MODELLED`, and joint
    limits when the pfaff system models none (``system.limits`` empty)."""
    return NOT_MODELLED + (() if system.limits else ("LIMIT",))


def run_mujoco(
    path: Path,
    qpos,
    qvel,
    t_end: float,
    dt: float,
    disable: tuple[str, ...] = (),
    frictionless: bool = False,
) -> dict[str, np.ndarray | float]:
    """MuJoCo from ``(qpos, qvel)`` for ``t_end`` with the ``mjtDisableBit`` features
    ``disable`` off: per-step time, equality violation, energy and the non-conservative
    work (dampers and actuators, by the trapezoid rule over the steps), the deepest
    contact's penetration and the times of the steps where contacts appear
    (``frictionless``: every geom's ``condim`` 1)."""
    mujoco = _mujoco()
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.timestep = dt
    if frictionless:
        m.geom_condim[:] = 1
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    for name in disable:
        m.opt.disableflags |= getattr(mujoco.mjtDisableBit, f"mjDSBL_{name}")
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    n = int(round(t_end / dt))
    viol, energy, kin, work, pen = (np.empty(n + 1) for _ in range(5))
    impacts: list[float] = []
    eq = mujoco.mjtConstraint.mjCNSTR_EQUALITY
    mujoco.mj_forward(m, d)
    power = float((d.qfrc_damper + d.qfrc_actuator) @ d.qvel)
    work[0] = 0.0
    for k in range(n + 1):
        rows = d.efc_pos[: d.nefc][d.efc_type[: d.nefc] == eq]
        viol[k] = float(np.abs(rows).max()) if rows.size else 0.0
        energy[k], kin[k] = d.energy[0] + d.energy[1], d.energy[1]
        pen[k] = deepest(d)
        if k < n:
            before = d.ncon
            mujoco.mj_step(m, d)
            mujoco.mj_forward(m, d)  # efc_pos and energy at the new state
            p1 = float((d.qfrc_damper + d.qfrc_actuator) @ d.qvel)
            if d.ncon and not before:
                impacts.append(float(d.time))
            work[k + 1] = work[k] + 0.5 * dt * (power + p1)
            power = p1
    # the cost: the same steps again without recording (mj_step alone)
    d.qpos[:], d.qvel[:], d.time = qpos, qvel, 0.0
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(m, d)
    wall = time.perf_counter() - t0
    return {
        "t": np.arange(n + 1) * dt,
        "violation": viol,
        "energy": energy,
        "kinetic": kin,
        "work": work,
        "wall": wall,
        "penetration": pen,
        "impacts": impacts,
    }


def compare_scenario(path: str | Path) -> Scenario:
    """The comparison as a :class:`Scenario` (``--set t_end= dt=``)."""
    p = Path(path)
    _mujoco()
    if p.suffix.lower() != ".xml":
        raise ParameterError(f"pfaff compare takes an MJCF file (.xml), got {str(p)!r}")
    load_model(p)  # refuse a bad file before any output

    def run(params: dict) -> ScenarioResult:
        system = load_model(p, contact=params["contact"])
        # pfaff holds pairs (a file whose pairs all overlap at a pin holds none)
        contact = contacts_held(system) is not None
        mj_map = _mapping(p)
        dt, t_end = params["dt"], params["t_end"]
        cset = ConstraintSet(system.mechanism, system.constraints)
        asm = assemble(cset, system.q, system.v)
        off = tuple(x for x in disabled(system) if not (contact and x == "CONTACT"))
        smooth = contact and not any(system.contacts.mu)  # no pair with friction in pfaff
        mj = run_mujoco(
            p, mj_map.q_to_qpos(asm.q), mj_map.v_to_qvel(asm.q, asm.v), t_end, dt, off,
            frictionless=smooth,
        )  # fmt: skip
        res = run_system(
            system, t_end, SimOptions(dt=dt), str(p), assembled=asm,
            restitution=params["restitution"],
        )  # fmt: skip
        a = res.trajectory.arrays()
        phi = np.abs(a["phi"]).max(axis=1) if a["phi"].shape[1] else np.zeros(len(a["t"]))
        # both potentials are -m g.c; MuJoCo's energy is offset like pfaff's
        E_pf = a["energy"] + system.mechanism.compute(asm.q).potential
        n = min(len(phi), len(mj["violation"]))
        floor = 1e-18  # log plot: exact zeros drawn at the floor
        res.plots["violation_pfaff_vs_mujoco"] = _log_plot(
            "equality constraint violation, max over rows", "max |residual| (m, rad)",
            phi[:n], mj["violation"][:n], floor,
        )  # fmt: skip
        res.plots["energy_pfaff_vs_mujoco"] = {
            "title": "total energy",
            "ylabel": "E (J)",
            "series": {"pfaff": E_pf[:n], "MuJoCo": mj["energy"][:n]},
        }
        sim = float(a["t"][-1]) - float(a["t"][0])  # > 0: t_end >= dt is checked up front
        per_sim_s = 1.0 / sim if sim > 0 else float("nan")
        pf_max = float(phi.max())
        ref = max(float(a["kinetic"].max()), float(mj["kinetic"].max()), 1e-300)
        pf_bal = a["energy"] - a["energy"][0] - a["work"] - a["force_work"]
        pf_bal = pf_bal - a["correction_energy"]
        if "limit_impact_loss" in res.extra_arrays:  # the limits' impacts took this much
            pf_bal = pf_bal + res.extra_arrays["limit_impact_loss"]
        mj_bal = mj["energy"] - mj["energy"][0] - mj["work"]
        res.plots["energy_balance_pfaff_vs_mujoco"] = {
            "title": "energy balance: E(t) - E(0) - work of dampers and actuators",
            "ylabel": "J",
            "series": {"pfaff": pf_bal[:n], "MuJoCo": mj_bal[:n]},
        }
        res.metrics.update(
            {
                "pfaff_violation_max": pf_max,
                "mujoco_violation_max": float(mj["violation"].max()),
                "mujoco_violation_mean": float(mj["violation"].mean()),
                "violation_ratio": float(mj["violation"].max() / max(pf_max, 1e-300)),
                "pfaff_energy_drift_rel": res.metrics["energy_drift_rel"],
                "mujoco_energy_drift_rel": energy_drift_rel(mj["energy"], mj["kinetic"]),
                "pfaff_energy_balance_rel": float(np.abs(pf_bal).max() / ref),
                "mujoco_energy_balance_rel": float(np.abs(mj_bal).max() / ref),
                "pfaff_cost_per_sim_second_s": res.wall_time_s * per_sim_s,
                "mujoco_cost_per_sim_second_s": float(mj["wall"]) * per_sim_s,
            }
        )
        if contact:
            _contact_figures(res, mj, n, floor)
        res.extra_arrays.update(
            {"mujoco_violation": mj["violation"], "mujoco_energy": mj["energy"]}
        )
        res.series_doc.update(
            {
                "mujoco_violation": "MuJoCo's largest |equality efc_pos| per step (m, rad)",
                "mujoco_energy": "MuJoCo's total energy per step (J)",
            }
        )
        res.notes += (
            f" MuJoCo with {', '.join(s.lower() for s in off)} off (pfaff models none"
            f"{'; its contacts frictionless' if smooth else ''}), "
            f"from the same assembled start, dt = {dt:g} s, the file's other options: "
            f"largest violation {mj['violation'].max():.3g} (mean "
            f"{mj['violation'].mean():.3g}) against pfaff's {pf_max:.3g}."
        )
        return res

    run.__doc__ = f"{p.name}: MuJoCo and pfaff side by side.\n\n" + (__doc__ or "")
    params = {
        "t_end": Param(5.0, "simulated time [s]", positive=True),
        "dt": Param(_timestep(p), "step of both simulations [s]", positive=True),
        "contact": Param(True, "both hold the file's contacts (pfaff's exact, MuJoCo's soft)"),
        "restitution": Param(0.0, "pfaff's Newton restitution at impacts", low=0, high=1),
    }
    return Scenario(f"compare:{p}", run, params)


def _log_plot(title: str, ylabel: str, pf, mj, floor: float) -> dict:
    """A log plot of pfaff's series beside MuJoCo's, exact zeros drawn at ``floor``."""
    return {
        "title": title,
        "ylabel": ylabel,
        "log": True,
        "series": {"pfaff": np.maximum(pf, floor), "MuJoCo": np.maximum(mj, floor)},
    }


def _contact_figures(res: ScenarioResult, mj: dict, n: int, floor: float) -> None:
    """The contact metrics and the penetration plot of a comparison with contacts."""
    pf_pen, hits = res.extra_arrays["penetration"], res.extra_arrays["contact_impact_t"]
    res.metrics.update(
        {
            "pfaff_max_penetration": float(pf_pen.max()),
            "mujoco_max_penetration": float(mj["penetration"].max()),
            "pfaff_contact_events": int(res.metrics["contact_events"]),
            "pfaff_first_impact_s": float(hits[0]) if len(hits) else float("nan"),
            "mujoco_first_impact_s": mj["impacts"][0] if mj["impacts"] else float("nan"),
        }
    )
    res.plots["penetration_pfaff_vs_mujoco"] = _log_plot(
        "contact penetration, deepest contact", "penetration (m)", pf_pen[:n],
        mj["penetration"][:n], floor,
    )  # fmt: skip
    res.extra_arrays["mujoco_penetration"] = mj["penetration"]
    res.series_doc["mujoco_penetration"] = "MuJoCo's deepest contact per step (m)"


def _mapping(p: Path):
    from pfaff.mechanism.mjcf import read_mjcf

    return read_mjcf(p)
