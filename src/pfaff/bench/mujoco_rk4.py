"""One step of a model file: pfaff's compiled core against MuJoCo's RK4 (``pfaff bench
mujoco-rk4``).

design.md Sec. 8: one step of a model file at the same dt costs at most MuJoCo's RK4
step on that file (both take four stages). For each file, in one process:

- pfaff: the file as ``pfaff run FILE.xml`` loads it
  (:func:`~pfaff.files.model.load_model`, its force elements, the start
  assembled onto the constraint manifold), run by :func:`~pfaff.simulate.simulate`
  on the core (``engine="core"``, default options, every step recorded) for
  ``steps`` steps: wall time / steps, the fixed cost of the call included (two more
  rows: a one-step run, and the step with that fixed cost taken out);
- MuJoCo: ``mujoco.MjModel.from_xml_path`` with ``opt.integrator = mjINT_RK4`` and
  ``opt.timestep = dt``, like for like: what pfaff's step does not model is switched
  off (:func:`like_for_like`: contacts, dry friction, joint limits; fluid forces and
  gravity compensation where the file has them), the file's other elements and options
  kept (armature, springs, dampers, actuators at ``ctrl = 0``, its soft equality
  constraints and solver); from pfaff's assembled start mapped to ``qpos``/``qvel``
  (:meth:`~pfaff.mechanism.mjcf.MjcfModel.q_to_qpos`, as ``pfaff compare`` does), then
  ``mj_step`` ``steps`` times. The rows name what was switched off; MuJoCo on the file
  as it is (contacts on) is timed beside, for scale only.

pfaff runs the file's actuators at ``ctrl = 0`` as ``pfaff run`` does. The loops are
timed in turn within each repeat (:func:`~pfaff.bench.timing.paired_us`); the ratio is
the median over the repeats of pfaff's time over MuJoCo's (like for like). The witness
that both start from the same state: MuJoCo's equality residual (``efc_pos``) at the
mapped start, which is pfaff's assembled one.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .timing import REPEATS, Row, median_us, paired_us, row

BENCH = "mujoco-rk4"
#: the source checkout (an installed wheel has no examples, benchmarks or tests folder)
ROOT = Path(__file__).resolve().parents[3]
#: MuJoCo's own equality-constraint test models (Apache-2.0), copied into the repository
EQUALITY_DIR = ROOT / "benchmarks" / "models" / "mujoco-equality"
EQUALITY_MODELS = (
    "jdotv_connect_2d",
    "jdotv_connect_3d",
    "jdotv_weld_3d",
    "connect",
    "weld",
    "equality_site",
)
#: (label, path): the quadruped, MuJoCo's six equality test models, a small loop, and
#: two user-style files (a parallel gripper: five-bar loops, a joint coupling, a tendon
#: actuator, springs; a biped: a free base, ball-joint rods, springs, dampers, armature,
#: knee loops)
MODEL_FILES: tuple[tuple[str, Path], ...] = (
    ("quadruped", ROOT / "examples" / "quadruped.xml"),
    *((name, EQUALITY_DIR / f"{name}.xml") for name in EQUALITY_MODELS),
    ("five_bar", ROOT / "tests" / "models" / "five_bar.xml"),
    ("parallel_gripper", ROOT / "tests" / "models" / "parallel_gripper.xml"),
    ("closed_chain_biped", ROOT / "tests" / "models" / "closed_chain_biped.xml"),
)
#: steps per timed loop
STEPS = 1000


def file_timestep(path: Path) -> float:
    """The file's ``<option timestep>`` [s] (MuJoCo's default 0.002 when absent)."""
    option = ET.parse(path).getroot().find("option")
    raw = option.get("timestep") if option is not None else None
    return float(raw) if raw is not None else 0.002


def bench_mujoco_rk4(
    models: Sequence[tuple[str, str | Path]] | None = None,
    steps: int = STEPS,
    repeats: int = REPEATS,
    dt: float | None = None,
) -> list[Row]:
    """Cost per step of pfaff (core) and of MuJoCo's RK4 on each model file, like for
    like (:func:`like_for_like`), and their ratio (target <= 1, reported, not asserted).

    Parameters
    ----------
    models : (label, path) pairs; default :data:`MODEL_FILES`.
    steps : steps per timed loop (>= 1).
    repeats : timed repeats of each loop (the figures are medians).
    dt : step of both [s]; default each file's own ``<option timestep>``.

    Returns
    -------
    list of rows (benchmark ``mujoco-rk4``): per file ``pfaff step``, ``pfaff one-step
    run``, ``pfaff step, fixed cost out``, ``MuJoCo RK4 step`` [us] (like for like),
    ``MuJoCo disabled`` (what MuJoCo ran without), ``MuJoCo RK4 step, file as is`` [us],
    ``ratio pfaff/MuJoCo`` (target <= 1), ``ratio pfaff/MuJoCo file as is`` (no
    target), ``engine``, ``start residual MuJoCo`` and ``status``; one ``skipped`` row
    when MuJoCo is not installed.
    """
    if int(steps) < 1:
        raise ValueError(f"steps must be >= 1, got {steps!r}")
    try:
        import mujoco  # noqa: F401
    except ImportError as exc:
        return [row(BENCH, "MuJoCo RK4 step", "n/a", "", "", f"skipped: mujoco: {exc}")]
    rows: list[Row] = []
    for label, path in MODEL_FILES if models is None else models:
        path = Path(path)
        if not path.is_file():
            rows.append(row(BENCH, f"{label} status", "missing", "", "== ok", str(path)))
            continue
        try:
            rows += _one_file(label, path, int(steps), int(repeats), dt)
        except Exception as exc:  # a file the core or MuJoCo refuses: say so, go on
            msg = f"{type(exc).__name__}: {exc}"
            rows.append(row(BENCH, f"{label} status", "error", "", "== ok", msg))
    return rows


def like_for_like(m, system) -> list[str]:
    """Switch off in MuJoCo model ``m`` what the timed pfaff step of ``system`` does not
    model, and return what was switched off.

    pfaff's step (``simulate`` on the core) has no contacts, dry friction, joint limits
    (``pfaff run`` holds a file's limits by events around that step; the step itself
    holds none), fluid forces or gravity compensation; it models the file's inertias,
    armature, gravity, joint springs and dampers, equality constraints and actuators
    at ``ctrl = 0``, which MuJoCo keeps.

    Returns
    -------
    list of str: the ``mjtDisableBit`` names set (``CONTACT``, ``FRICTIONLOSS``,
    ``LIMIT``), then ``fluid`` and ``gravcomp`` when the file has them (zeroed).
    """
    import mujoco

    from pfaff.scenarios.compare import NOT_MODELLED

    off = [*NOT_MODELLED, "LIMIT"]
    for name in off:
        m.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, f"mjDSBL_{name}"))
    if m.opt.density != 0.0 or m.opt.viscosity != 0.0:
        m.opt.density, m.opt.viscosity = 0.0, 0.0
        off.append("fluid")
    if np.any(m.body_gravcomp != 0.0):
        m.body_gravcomp[:] = 0.0
        off.append("gravcomp")
    return off


def time_step(
    path: Path, steps: int, repeats: int, dt: float | None = None, as_file: bool = True
) -> dict:
    """One step of ``path`` by pfaff's core and by MuJoCo's RK4, paired in one process.

    Parameters
    ----------
    path : MJCF model file.
    steps : steps per timed loop (>= 1).
    repeats : timed repeats (the figures are medians).
    dt : step of both [s]; default the file's ``<option timestep>``.
    as_file : also time MuJoCo with the file as it is (contacts and all), for scale.

    Returns
    -------
    dict: ``pfaff_us``, ``one_step_us`` (a one-step run), ``mujoco_us`` (MuJoCo like for
    like, :func:`like_for_like`), ``ratio`` (median paired ratio pfaff/MuJoCo),
    ``mujoco_as_file_us`` and ``ratio_as_file`` (None without ``as_file``),
    ``disabled``, ``engine``, ``start_residual``, ``dt``, ``nq``, ``nv``, ``rows``,
    ``rank``.
    """
    import mujoco

    from pfaff.constraints.base import ConstraintSet
    from pfaff.files.model import load_model
    from pfaff.mechanism.mjcf import read_mjcf
    from pfaff.simulate import SimOptions, simulate
    from pfaff.simulate.actuators import Actuation
    from pfaff.simulate.assembly import assemble

    h = file_timestep(path) if dt is None else float(dt)
    system = load_model(path, contact=False)  # MuJoCo runs with its contacts off
    cset = ConstraintSet(system.mechanism, system.constraints)
    asm = assemble(cset, system.q, system.v)
    opt = SimOptions(dt=h, engine="core", progress=False)
    opt.potential_offset = system.mechanism.compute(asm.q).potential  # as `pfaff run`
    act = Actuation(system.actuators, system.mechanism)  # at ctrl = 0, as `pfaff run`
    forces = [*system.forces, *act.elements]
    tau = act.tau(None) if act else None

    def run_pfaff(n: int = steps):
        return simulate(cset, asm.q, asm.v, n * h, opt, forces=forces, tau=tau)

    traj = run_pfaff()
    if traj.steps != steps or traj.engine != "core":
        raise RuntimeError(f"pfaff ran {traj.steps} steps on {traj.engine!r}, not {steps}")

    mapping = read_mjcf(path)
    qpos, qvel = mapping.q_to_qpos(asm.q), mapping.v_to_qvel(asm.q, asm.v)

    def mujoco_loop(m):
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
        m.opt.timestep = h
        d = mujoco.MjData(m)

        def run():
            mujoco.mj_resetData(m, d)
            d.qpos[:], d.qvel[:] = qpos, qvel
            for _ in range(steps):
                mujoco.mj_step(m, d)

        return run, d

    m = mujoco.MjModel.from_xml_path(str(path))
    disabled = like_for_like(m, system)
    run_mujoco, d = mujoco_loop(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    eq = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    start_residual = float(np.abs(d.efc_pos[: d.nefc][eq]).max()) if eq.any() else 0.0
    loops = [run_pfaff]
    if as_file:
        loops.append(mujoco_loop(mujoco.MjModel.from_xml_path(str(path)))[0])
    (t_pf, *t_mj), (ratio, *ratios) = paired_us([*loops, run_mujoco], steps, repeats)
    return {
        "pfaff_us": t_pf,
        "one_step_us": median_us(lambda: run_pfaff(1), 1, repeats),
        "mujoco_us": t_mj[-1],
        "ratio": ratio,
        "mujoco_as_file_us": t_mj[0] if as_file else None,
        "ratio_as_file": ratio / ratios[0] if as_file else None,
        "disabled": disabled,
        "engine": traj.engine,
        "start_residual": start_residual,
        "dt": h,
        "nq": int(m.nq),
        "nv": int(m.nv),
        "rows": int(asm.rows),
        "rank": int(asm.rank),
    }


def _one_file(label: str, path: Path, steps: int, repeats: int, dt: float | None) -> list[Row]:
    """The rows of one model file."""
    import mujoco

    f = time_step(path, steps, repeats, dt)
    t_pf, one = f["pfaff_us"], f["one_step_us"]
    # the cost of one more step: the fixed cost of a call (building the core's system,
    # the trajectory) taken out
    marginal = (t_pf * steps - one) / (steps - 1) if steps > 1 else float("nan")
    size = f"nq {f['nq']}, nv {f['nv']}, {f['rows']} rows of rank {f['rank']}"
    how = f"dt {f['dt']:g} s, {steps} steps from the same start, median of {repeats}"
    off = ", ".join(f["disabled"])
    return [
        row(BENCH, f"{label} pfaff step", t_pf, "us", "",
            f"simulate on the core, default options, every step recorded, the call's "
            f"fixed cost included; {how}; {size}"),
        row(BENCH, f"{label} pfaff one-step run", one, "us", "",
            "simulate for one step: the fixed cost of a call and one step"),
        row(BENCH, f"{label} pfaff step, fixed cost out", marginal, "us", "",
            "(steps x pfaff step - one-step run) / (steps - 1)"),
        row(BENCH, f"{label} MuJoCo RK4 step", f["mujoco_us"], "us", "",
            f"mj_step, mjINT_RK4, like for like: off in MuJoCo what pfaff's step does not "
            f"model ({off}); the file's other options (soft equality rows); {how}"),
        row(BENCH, f"{label} MuJoCo disabled", off, "", "",
            "mjtDisableBit names set (and fluid, gravcomp zeroed where the file has them)"),
        row(BENCH, f"{label} MuJoCo RK4 step, file as is", f["mujoco_as_file_us"], "us", "",
            "the same with nothing switched off (contacts on where the file has them): "
            "for scale, not compared"),
        row(BENCH, f"{label} ratio pfaff/MuJoCo", f["ratio"], "", "<= 1",
            "median over the repeats of the paired ratio, like for like (design.md Sec. 8)"),
        row(BENCH, f"{label} ratio pfaff/MuJoCo file as is", f["ratio_as_file"], "", "",
            "against MuJoCo with the file's contacts on: not like for like, for scale"),
        row(BENCH, f"{label} engine", f["engine"], "", "== core"),
        row(BENCH, f"{label} start residual MuJoCo", f["start_residual"], "", "<= 1e-9",
            "max |efc_pos| of MuJoCo's equality rows at pfaff's assembled start (m, rad)"),
        row(BENCH, f"{label} status", "ok", "", "== ok", f"mujoco {mujoco.__version__}"),
    ]  # fmt: skip
