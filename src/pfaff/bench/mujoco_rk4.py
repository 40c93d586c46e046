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
  ``opt.timestep = dt``, the file's other options (its soft equality constraints and
  solver), from pfaff's assembled start mapped to ``qpos``/``qvel``
  (:meth:`~pfaff.mechanism.mjcf.MjcfModel.q_to_qpos`, as ``pfaff compare`` does), then
  ``mj_step`` ``steps`` times.

Both loops are timed in turn within each repeat (:func:`~pfaff.bench.timing.paired_us`);
the ratio is the median over the repeats of pfaff's time over MuJoCo's. The witness
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
#: (label, path): the quadruped, MuJoCo's six equality test models, a small loop
MODEL_FILES: tuple[tuple[str, Path], ...] = (
    ("quadruped", ROOT / "examples" / "quadruped.xml"),
    *((name, EQUALITY_DIR / f"{name}.xml") for name in EQUALITY_MODELS),
    ("five_bar", ROOT / "tests" / "models" / "five_bar.xml"),
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
    """Cost per step of pfaff (core) and of MuJoCo's RK4 on each model file, and their
    ratio (target <= 1, reported, not asserted).

    Parameters
    ----------
    models : (label, path) pairs; default :data:`MODEL_FILES`.
    steps : steps per timed loop (>= 1).
    repeats : timed repeats of each loop (the figures are medians).
    dt : step of both [s]; default each file's own ``<option timestep>``.

    Returns
    -------
    list of rows (benchmark ``mujoco-rk4``): per file ``pfaff step``, ``pfaff one-step
    run``, ``pfaff step, fixed cost out``, ``MuJoCo RK4 step`` [us], ``ratio
    pfaff/MuJoCo``, ``engine``, ``start residual MuJoCo`` and ``status``; one
    ``skipped`` row when MuJoCo is not installed.
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


def _one_file(label: str, path: Path, steps: int, repeats: int, dt: float | None) -> list[Row]:
    """The rows of one model file."""
    import mujoco

    from pfaff.constraints.base import ConstraintSet
    from pfaff.files.model import load_model
    from pfaff.mechanism.mjcf import read_mjcf
    from pfaff.simulate import SimOptions, simulate
    from pfaff.simulate.assembly import assemble

    h = file_timestep(path) if dt is None else float(dt)
    system = load_model(path)
    cset = ConstraintSet(system.mechanism, system.constraints)
    asm = assemble(cset, system.q, system.v)
    opt = SimOptions(dt=h, engine="core", progress=False)
    opt.potential_offset = system.mechanism.compute(asm.q).potential  # as `pfaff run`

    def run_pfaff(n: int = steps):
        return simulate(cset, asm.q, asm.v, n * h, opt, forces=system.forces)

    traj = run_pfaff()
    if traj.steps != steps or traj.engine != "core":
        raise RuntimeError(f"pfaff ran {traj.steps} steps on {traj.engine!r}, not {steps}")

    mapping = read_mjcf(path)
    qpos, qvel = mapping.q_to_qpos(asm.q), mapping.v_to_qvel(asm.q, asm.v)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = h
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    eq = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    start_residual = float(np.abs(d.efc_pos[: d.nefc][eq]).max()) if eq.any() else 0.0

    def run_mujoco():
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:] = qpos, qvel
        for _ in range(steps):
            mujoco.mj_step(m, d)

    (t_pf, t_mj), (ratio, _) = paired_us([run_pfaff, run_mujoco], steps, repeats)
    one = median_us(lambda: run_pfaff(1), 1, repeats)
    # the cost of one more step: the fixed cost of a call (building the core's system,
    # the trajectory) taken out
    marginal = (t_pf * steps - one) / (steps - 1) if steps > 1 else float("nan")
    size = f"nq {m.nq}, nv {m.nv}, {asm.rows} rows of rank {asm.rank}"
    how = f"dt {h:g} s, {steps} steps from the same start, median of {repeats}"
    return [
        row(BENCH, f"{label} pfaff step", t_pf, "us", "",
            f"simulate on the core, default options, every step recorded, the call's "
            f"fixed cost included; {how}; {size}"),
        row(BENCH, f"{label} pfaff one-step run", one, "us", "",
            "simulate for one step: the fixed cost of a call and one step"),
        row(BENCH, f"{label} pfaff step, fixed cost out", marginal, "us", "",
            "(steps x pfaff step - one-step run) / (steps - 1)"),
        row(BENCH, f"{label} MuJoCo RK4 step", t_mj, "us", "",
            f"mj_step, mjINT_RK4, the file's other options (soft equality rows); {how}"),
        row(BENCH, f"{label} ratio pfaff/MuJoCo", ratio, "", "<= 1",
            "median over the repeats of the paired ratio (design.md Sec. 8)"),
        row(BENCH, f"{label} engine", traj.engine, "", "== core"),
        row(BENCH, f"{label} start residual MuJoCo", start_residual, "", "<= 1e-9",
            "max |efc_pos| of MuJoCo's equality rows at pfaff's assembled start (m, rad)"),
        row(BENCH, f"{label} status", "ok", "", "== ok", f"mujoco {mujoco.__version__}"),
    ]  # fmt: skip
