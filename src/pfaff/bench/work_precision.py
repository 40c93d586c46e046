"""Work-precision of pfaff and of MuJoCo on closed-loop model files (``pfaff bench
work-precision``).

For each model file, one process, one start (pfaff's assembled state, mapped to
MuJoCo's ``qpos``/``qvel`` as ``pfaff compare`` does), both engines simulate ``t_end``
seconds of the model as the file describes it, with what pfaff's step does not model
switched off in MuJoCo (contacts, dry friction, joint limits; fluid forces and gravity
compensation where the file has them: :func:`pfaff.bench.mujoco_rk4.like_for_like`,
recorded as ``mujoco_disabled``):

- pfaff: the compiled core (RK4 with the position correction) at each dt of
  :data:`PFAFF_DTS`;
- MuJoCo: Euler, RK4 and implicitfast at each dt of :data:`MUJOCO_DTS`, each with the
  file's ``solref`` and with ``solref = (2 dt, 1)`` (the stiffest MuJoCo takes without
  clamping, set through ``mjModel.eq_solref``).

Error: the largest world-position deviation [m] of the bodies in the closed loops
(both bodies of each equality constraint, or a site's body, and their ancestors up to
the two chains' common ancestor, by name in both models: MuJoCo's ``xpos``, pfaff's
frame origins) from a reference, sampled every :data:`SAMPLE_DT` over the run. The
reference is a pfaff run at the finest pfaff dt / 16; the same run at dt / 8 bounds its
error (Richardson: for a 4th-order method the reference's error is about 1/15 of that
difference), reported as ``reference_check``. Cost: ``time.process_time`` per
simulated second, median of ``repeats`` runs without recording beyond what the engine
does anyway. Violation: ``max |Phi|`` over the run (pfaff), ``max |efc_pos|`` of the
equality rows over the run (MuJoCo).

``cost_ratio_at_mujoco_best``: pfaff's cost at the error of MuJoCo's most accurate run,
from pfaff's error-cost curve interpolated log-log (``cost_ratio_how`` says when the
accuracy lies outside pfaff's range: the coarsest run's cost is then an upper bound,
or the curve is extrapolated), over that MuJoCo run's cost.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .mujoco_rk4 import EQUALITY_DIR, ROOT, like_for_like
from .timing import Row, row

BENCH = "work-precision"
MODELS: tuple[tuple[str, Path], ...] = (
    ("quadruped", ROOT / "examples" / "quadruped.xml"),
    ("jdotv_connect_2d", EQUALITY_DIR / "jdotv_connect_2d.xml"),
    ("five_bar", ROOT / "tests" / "models" / "five_bar.xml"),
)
PFAFF_DTS = (8e-3, 4e-3, 2e-3, 1e-3, 5e-4)
MUJOCO_DTS = (1e-3, 2.5e-4, 1e-4)
INTEGRATORS = ("Euler", "RK4", "implicitfast")
#: the error is sampled at the multiples of this time (a multiple of every dt)
SAMPLE_DT = 8e-3
T_END = 1.0
REPEATS = 3


def loop_bodies(m) -> list[str]:
    """Names of the bodies in the closed loops of MuJoCo model ``m``: for each connect
    or weld equality, both objects' bodies (a site's body) and their ancestors up to,
    not including, the two chains' common ancestor; the world is never one."""
    import mujoco

    site = mujoco.mjtObj.mjOBJ_SITE
    names: list[str] = []
    for i in range(m.neq):
        if int(m.eq_type[i]) not in (int(mujoco.mjtEq.mjEQ_CONNECT), int(mujoco.mjtEq.mjEQ_WELD)):
            continue
        ends = [m.eq_obj1id[i], m.eq_obj2id[i]]
        if int(m.eq_objtype[i]) == int(site):
            ends = [int(m.site_bodyid[e]) for e in ends]
        chains = []
        for b in ends:
            chain = [int(b)]
            while chain[-1] != 0:
                chain.append(int(m.body_parentid[chain[-1]]))
            chains.append(chain)
        common = set(chains[0]) & set(chains[1])
        for chain in chains:
            for b in chain:
                if b in common:
                    break
                if m.body(b).name not in names:
                    names.append(m.body(b).name)
    if not names:
        raise ValueError("the model has no connect or weld equality: no closed loop")
    return names


def position_error(p: np.ndarray, p_ref: np.ndarray) -> float:
    """Largest Euclidean deviation [m] of ``p`` (samples, bodies, 3) from ``p_ref``."""
    p, p_ref = np.asarray(p, float), np.asarray(p_ref, float)
    if p.shape != p_ref.shape or p.ndim != 3 or p.shape[2] != 3:
        raise ValueError(f"positions must share a shape (samples, bodies, 3): "
                         f"got {p.shape} and {p_ref.shape}")  # fmt: skip
    return float(np.linalg.norm(p - p_ref, axis=2).max())


class _Model:
    """One model file, loaded once for both engines."""

    def __init__(self, path: Path, t_end: float) -> None:
        import mujoco

        from pfaff.constraints.base import ConstraintSet
        from pfaff.files.model import load_model
        from pfaff.mechanism.mjcf import read_mjcf
        from pfaff.simulate.assembly import assemble

        self.path, self.t_end = path, float(t_end)
        self.system = load_model(path, contact=False)  # MuJoCo runs with its contacts off
        self.cset = ConstraintSet(self.system.mechanism, self.system.constraints)
        self.asm = assemble(self.cset, self.system.q, self.system.v)
        mapping = read_mjcf(path)
        self.qpos = mapping.q_to_qpos(self.asm.q)
        self.qvel = mapping.v_to_qvel(self.asm.q, self.asm.v)
        self.m = mujoco.MjModel.from_xml_path(str(path))
        self.disabled = like_for_like(self.m, self.system)
        self.file_solref = self.m.eq_solref.copy()
        self.bodies = loop_bodies(self.m)
        self.body_ids = [self.m.body(n).id for n in self.bodies]
        self.samples = int(round(self.t_end / SAMPLE_DT))
        if self.samples < 1:
            raise ValueError(f"t_end must be >= {SAMPLE_DT} s, got {t_end!r}")

    def stride(self, dt: float) -> int:
        k = SAMPLE_DT / dt
        if abs(k - round(k)) > 1e-9 * k:
            raise ValueError(f"dt {dt!r} s does not divide the sampling period {SAMPLE_DT} s")
        return int(round(k))

    # -- pfaff --
    def pfaff(self, dt: float):
        from pfaff.simulate import SimOptions, simulate

        opt = SimOptions(dt=dt, engine="core", progress=False)
        return simulate(self.cset, self.asm.q, self.asm.v, self.samples * SAMPLE_DT, opt,
                        forces=self.system.forces)  # fmt: skip

    def pfaff_positions(self, traj, dt: float) -> np.ndarray:
        q = np.asarray(traj.arrays()["q"])[:: self.stride(dt)]
        mech = self.system.mechanism
        out = np.empty((len(q), len(self.bodies), 3))
        for i, qi in enumerate(q):
            snap = mech.compute(qi, frames=self.bodies, dynamics=False, extras=False)
            out[i] = [snap.frame(b).p for b in self.bodies]
        return out

    # -- MuJoCo --
    def mujoco_model(self, integrator: str, dt: float, solref: str):
        import mujoco

        m = self.m
        m.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
        m.opt.timestep = dt
        m.eq_solref[:] = self.file_solref
        if solref == "2dt":
            m.eq_solref[:, 0], m.eq_solref[:, 1] = 2 * dt, 1.0
        return m

    def mujoco_run(self, dt: float, record: bool):
        """Run MuJoCo (model set by :meth:`mujoco_model`); with ``record`` the loop
        bodies' positions at the samples and the largest equality residual."""
        import mujoco

        m, d = self.m, mujoco.MjData(self.m)
        d.qpos[:], d.qvel[:] = self.qpos, self.qvel
        stride, n = self.stride(dt), self.samples * self.stride(dt)
        if not record:
            for _ in range(n):
                mujoco.mj_step(m, d)
            return None
        eq = mujoco.mjtConstraint.mjCNSTR_EQUALITY
        pos, viol = [], 0.0
        for k in range(n + 1):
            mujoco.mj_fwdPosition(m, d)  # xpos and efc_pos at this state
            rows = d.efc_pos[: d.nefc][d.efc_type[: d.nefc] == eq]
            viol = max(viol, float(np.abs(rows).max()) if rows.size else 0.0)
            if k % stride == 0:
                pos.append(d.xpos[self.body_ids].copy())
            if k < n:
                mujoco.mj_step(m, d)
        return np.array(pos), viol

    def start_mismatch(self) -> float:
        """Largest distance [m] between the two models' loop-body positions at the start
        (the name mapping's witness)."""
        import mujoco

        d = mujoco.MjData(self.m)
        d.qpos[:] = self.qpos
        mujoco.mj_kinematics(self.m, d)
        snap = self.system.mechanism.compute(self.asm.q, frames=self.bodies, dynamics=False,
                                             extras=False)  # fmt: skip
        p = np.array([snap.frame(b).p for b in self.bodies])
        return float(np.linalg.norm(p - d.xpos[self.body_ids], axis=1).max())


def _cpu_per_sim_s(run, t_sim: float, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        run()
        times.append(time.process_time() - t0)
    return statistics.median(times) / t_sim


def cost_at_error(errors: Sequence[float], costs: Sequence[float], target: float):
    """pfaff's cost at error ``target`` from its error-cost points, log-log; returns
    ``(cost, how)`` with ``how`` one of ``interpolated``, ``upper bound`` (target above
    every error: the cheapest run that reaches it), ``extrapolated`` (below every
    error: the last two points' line)."""
    e, c = np.log(np.asarray(errors, float)), np.log(np.asarray(costs, float))
    order = np.argsort(e)
    e, c = e[order], c[order]
    x = np.log(float(target))
    if x >= e[-1]:
        return float(np.exp(c.min())), "upper bound"
    if x < e[0]:
        slope = (c[1] - c[0]) / (e[1] - e[0]) if len(e) > 1 else 0.0
        return float(np.exp(c[0] + slope * (x - e[0]))), "extrapolated"
    return float(np.exp(np.interp(x, e, c))), "interpolated"


def work_precision(
    path: str | Path,
    t_end: float = T_END,
    pfaff_dts: Sequence[float] = PFAFF_DTS,
    mujoco_dts: Sequence[float] = MUJOCO_DTS,
    integrators: Sequence[str] = INTEGRATORS,
    repeats: int = REPEATS,
    reference: np.ndarray | None = None,
) -> dict:
    """The work-precision record of one model file (see the module's docstring).

    Parameters
    ----------
    path : MJCF model file with at least one connect or weld equality.
    t_end : simulated time [s] (a multiple of :data:`SAMPLE_DT`).
    pfaff_dts, mujoco_dts : steps [s], each dividing :data:`SAMPLE_DT`.
    integrators : MuJoCo integrators (``Euler``, ``RK4``, ``implicitfast``, ...).
    repeats : timed runs per configuration (the cost is their median).
    reference : (samples, bodies, 3) reference positions; default the pfaff run at
        ``min(pfaff_dts) / 16`` (a test feeds a wrong one to show the metric sees it).

    Returns
    -------
    dict with ``pfaff`` and ``mujoco`` (lists of ``{dt, integrator, solref, error,
    cpu_per_sim_s, violation}``), ``cost_ratio_at_mujoco_best``, ``cost_ratio_how``,
    ``mujoco_best``, ``reference_dt``, ``reference_check`` [m], ``loop_bodies``,
    ``start_mismatch`` [m], ``t_end``, ``mujoco_disabled`` (what MuJoCo ran without).
    """
    if int(repeats) < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats!r}")
    mdl = _Model(Path(path), t_end)
    t_sim = mdl.samples * SAMPLE_DT
    out: dict = {"t_end": t_sim, "loop_bodies": mdl.bodies, "start_mismatch": mdl.start_mismatch(),
                 "mujoco_disabled": mdl.disabled}  # fmt: skip
    ref_dt = min(pfaff_dts) / 16
    p_ref = mdl.pfaff_positions(mdl.pfaff(ref_dt), ref_dt)
    p_half = mdl.pfaff_positions(mdl.pfaff(2 * ref_dt), 2 * ref_dt)
    out["reference_dt"] = ref_dt
    out["reference_check"] = position_error(p_half, p_ref)
    if reference is not None:
        p_ref = np.asarray(reference, float)
    recs = []
    for dt in pfaff_dts:
        traj = mdl.pfaff(dt)
        recs.append({
            "dt": dt, "integrator": "pfaff RK4 + projection", "solref": None,
            "error": position_error(mdl.pfaff_positions(traj, dt), p_ref),
            "cpu_per_sim_s": _cpu_per_sim_s(lambda dt=dt: mdl.pfaff(dt), t_sim, repeats),
            "violation": traj.max_constraint_violation(),
        })  # fmt: skip
    out["pfaff"] = recs
    mj = []
    for integ in integrators:
        for solref in ("file", "2dt"):
            for dt in mujoco_dts:
                mdl.mujoco_model(integ, dt, solref)
                pos, viol = mdl.mujoco_run(dt, record=True)
                err = position_error(pos, p_ref) if np.isfinite(pos).all() else float("inf")
                cost = _cpu_per_sim_s(lambda dt=dt: mdl.mujoco_run(dt, False), t_sim, repeats)
                sr = [float(x) for x in mdl.m.eq_solref[0]]
                mj.append({"dt": dt, "integrator": integ, "solref": sr, "error": err,
                           "cpu_per_sim_s": cost, "violation": viol})  # fmt: skip
    out["mujoco"] = mj
    best = min(mj, key=lambda r: r["error"])
    cost, how = cost_at_error([r["error"] for r in recs], [r["cpu_per_sim_s"] for r in recs],
                              best["error"])  # fmt: skip
    out["mujoco_best"] = best
    out["cost_ratio_at_mujoco_best"] = cost / best["cpu_per_sim_s"]
    out["cost_ratio_how"] = how
    return out


def bench_work_precision(
    models: Sequence[tuple[str, str | Path]] | None = None,
    plot: str | Path | None = None,
    **kwargs,
) -> list[Row]:
    """``pfaff bench work-precision``: rows per model (cost ratio at MuJoCo's best
    accuracy, target <= 0.1; the errors; the reference check); the full record of each
    model rides on its ratio row under ``data`` (``summary_json`` puts it under
    ``work_precision``). ``plot``: also draw the error-cost curves there (matplotlib)."""
    try:
        import mujoco
    except ImportError as exc:
        return [row(BENCH, "work-precision", "n/a", "", "", f"skipped: mujoco: {exc}")]
    rows: list[Row] = []
    results = {}
    for label, path in MODELS if models is None else models:
        try:
            r = work_precision(path, **kwargs)
        except Exception as exc:  # a file either engine refuses: say so, go on
            rows.append(row(BENCH, f"{label} status", "error", "", "== ok",
                            f"{type(exc).__name__}: {exc}"))  # fmt: skip
            continue
        results[label] = r
        best, fin = r["mujoco_best"], min(r["pfaff"], key=lambda x: x["dt"])
        ratio = row(BENCH, f"{label} cost ratio at MuJoCo's best", r["cost_ratio_at_mujoco_best"],
                    "", "<= 0.1", f"pfaff's cost at {best['error']:.3g} m ({r['cost_ratio_how']})"
                    f" / MuJoCo {best['integrator']} dt {best['dt']:g} s")  # fmt: skip
        ratio["data"] = r
        rows += [
            ratio,
            row(BENCH, f"{label} MuJoCo best error", best["error"], "m", ""),
            row(BENCH, f"{label} pfaff error at dt {fin['dt']:g} s", fin["error"], "m", ""),
            row(BENCH, f"{label} reference check", r["reference_check"], "m", "",
                "loop-body positions, reference dt x2 against dt (Richardson)"),
            row(BENCH, f"{label} start mismatch", r["start_mismatch"], "m", "<= 1e-9",
                "loop-body positions of both models at the mapped start"),
            row(BENCH, f"{label} status", "ok", "", "== ok", f"mujoco {mujoco.__version__}"),
        ]  # fmt: skip
    if plot is not None and results:
        plot_work_precision(results, plot)
    return rows


def plot_work_precision(results: dict, path: str | Path) -> Path:
    """Error against CPU time per simulated second, log-log, one panel per model."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (label, r) in zip(axes[0], results.items(), strict=True):
        p = r["pfaff"]
        ax.loglog([x["cpu_per_sim_s"] for x in p], [x["error"] for x in p], "k-o", label="pfaff")
        for integ in dict.fromkeys(x["integrator"] for x in r["mujoco"]):
            for sr, style in (("file", "--"), ("2dt", ":")):
                pts = [x for x in r["mujoco"] if x["integrator"] == integ
                       and (x["solref"][0] == 2 * x["dt"]) == (sr == "2dt")]  # fmt: skip
                if pts:
                    ax.loglog([x["cpu_per_sim_s"] for x in pts], [x["error"] for x in pts],
                              style + "s", label=f"MuJoCo {integ}, solref {sr}")  # fmt: skip
        ax.set(title=label, xlabel="CPU s per simulated s", ylabel="loop-body position error [m]")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)
