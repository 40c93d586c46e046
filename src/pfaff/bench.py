"""The benchmark suite behind ``pfaff bench`` (design.md Sec. 4, 8).

Each benchmark is a function of no arguments that returns result rows::

    {"benchmark", "figure", "value", "unit", "target", "note"}

``target`` is ``"<= x"``, ``">= x"``, ``"== word"`` or ``""``. Times are the
median over repeated loops (``time.perf_counter``, after a warm-up, garbage
collector off) divided by the calls per loop, on the calling thread. Peers
(Pinocchio's constrained dynamics, MuJoCo) do the same work in the same process.
"""

from __future__ import annotations

import gc
import math
import re
import statistics
import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from pfaff import dynamics as D
from pfaff.constraints import ConstraintSet, PointsCoincide
from pfaff.linalg import single_threaded_blas
from pfaff.mechanism import PinocchioMechanism, load_robot, robot_urdf
from pfaff.mechanism.robots import package_dir

Row = dict[str, object]
PANDA_FRAME = "panda_hand_tcp"
PANDA_TARGET = (0.4, 0.0, 0.4)
N_STATES = 200
REPEATS = 7


def row(
    bench: str, figure: str, value: object, unit: str = "", target: str = "", note: str = ""
) -> Row:
    """One result row (see the module docstring for the keys)."""
    return dict(benchmark=bench, figure=figure, value=value, unit=unit, target=target, note=note)


def median_us(loop: Callable[[], object], calls: int, repeats: int = REPEATS) -> float:
    """Median time per call in microseconds of ``loop()``, which makes ``calls`` calls."""
    loop()  # warm-up (caches, lazy allocations)
    times = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            loop()
            times.append(time.perf_counter() - t0)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(times) / calls * 1e6


def paired_us(loops: list[Callable[[], object]], calls: int, repeats: int = REPEATS):
    """Per-call medians (us) of several loops timed in turn within each repeat, and the
    median over the repeats of each loop's time over the last loop's (the peer's): a
    busy host slows the loops side by side, so the ratio holds where the times do not.
    """
    for loop in loops:
        loop()
    times: list[list[float]] = [[] for _ in loops]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for i, loop in enumerate(loops):
                t0 = time.perf_counter()
                loop()
                times[i].append(time.perf_counter() - t0)
    finally:
        if enabled:
            gc.enable()
    med = [statistics.median(t) / calls * 1e6 for t in times]
    ratios = [statistics.median(a / b for a, b in zip(t, times[-1])) for t in times]
    return med, ratios


# -- panda-dd ---------------------------------------------------------------------------
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

    m = mech.model
    fr = m.frames[m.getFrameId(PANDA_FRAME)]
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

    def pinocchio(q, v, tau):
        return pin.constraintDynamics(m, pd, q, v, tau, cms, cds)

    return projection, kkt, pinocchio


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
            row(b, "ratio core/pinocchio", ratio, "", "<= 2", "median of paired ratios; Sec. 8"),
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

    mech, cset, ctrl, q0 = build(get_scenario("panda-table").resolve({}))
    rng = np.random.default_rng(0)
    snaps = []
    for _ in range(50):
        q, v = project_state(cset, q0 + rng.uniform(-0.05, 0.05, 7), rng.uniform(-0.3, 0.3, 7))
        snap = mech.compute(q, v, ctrl.frames)
        snap.measured = {"lambda": np.array([-5.0]), "F": np.zeros(7)}
        snaps.append(snap)
    t_us = median_us(lambda: [ctrl(0.7, s) for s in snaps], len(snaps))
    note = "ProjectedController: projection + N(A), 6-row task, eq. 45-46 + 51-52; 50 states"
    return [row("panda-control", "PIDC + force control", t_us, "us", "<= 60", note)]


# -- panda-mujoco ------------------------------------------------------------------------
def mujoco_panda():
    """The Panda URDF compiled by MuJoCo (visual meshes dropped, contacts disabled)."""
    import mujoco

    xml = re.sub(r"<\?xml[^>]*\?>", "", robot_urdf("panda").read_text())
    xml = xml.replace("package://", str(package_dir()) + "/")
    compiler = '<mujoco><compiler discardvisual="true" fusestatic="false"/></mujoco>'
    xml = re.sub(r"(<robot\b[^>]*>)", r"\1" + compiler, xml, count=1)
    model = mujoco.MjModel.from_xml_string(xml)
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
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
        f"unconstrained, nv={model.nv} (finger joints kept, mimic ignored), contacts off, "
        "state written from Python"
    )
    return [row(b, "mj_forward", t, "us", "", note)]


# -- scenarios ---------------------------------------------------------------------------
#: non-default parameter sets that are part of an issue's figures
SCENARIO_VARIANTS = (
    ("four-bar", {"parallelogram": "true"}),
    # the slider-crank on its Pinocchio model: the compiled core runs it (the default
    # closed-form model of Aghili eq. 68 runs on the NumPy engine)
    ("slider-crank", {"model": "pinocchio"}),
)
#: runs per scenario; the real-time factor reported is their median (design.md Sec. 8)
SCENARIO_RUNS = 3
#: real-time figures of an issue that differ from the design target of 10x
ISSUE_REALTIME = {"dual-panda-box": (5.0, "issue 7")}


def _finite(x) -> float:
    """A summary figure as a float (null, for a run that has none, as NaN)."""
    return float("nan") if x is None else float(x)


def bench_scenarios(runs: int = SCENARIO_RUNS) -> list[Row]:
    """Every shipped scenario ``runs`` times: median real-time factor (with the
    spread in the note), largest constraint violation, status."""
    from pfaff.scenarios import SCENARIOS, run_scenario

    rows = []
    cases = [(name, {}) for name in sorted(SCENARIOS)] + list(SCENARIO_VARIANTS)
    for name, overrides in cases:
        label = name + "".join(f" {k}={v}" for k, v in overrides.items())
        try:
            out = [run_scenario(name, overrides) for _ in range(runs)]
        except Exception as exc:
            rows.append(row("scenarios", f"{label} status", "error", "", "== ok", str(exc)))
            continue
        rt = sorted(_finite(s["realtime_factor"]) for s in out)
        s = out[0]
        med = statistics.median(rt)
        note = (
            f"median of {runs} runs ({rt[0]:.3g} .. {rt[-1]:.3g}); "
            f"sim {s['sim_time_s']:.3g} s in {s['sim_time_s'] / med:.3g} s wall"
        )
        rows.append(row("scenarios", f"{label} realtime factor", med, "x", ">= 10", note))
        rows.append(row("scenarios", f"{label} engine", s.get("engine") or "", "", "", ""))
        if name in ISSUE_REALTIME and not overrides:
            bound, issue = ISSUE_REALTIME[name]
            rows.append(
                row("scenarios", f"{label} realtime factor", med, "x", f">= {bound:g}", issue)
            )
        worst = next((x for x in out if x["status"] != "ok"), s)
        phi = max(_finite(x["max_constraint_violation"]) for x in out)
        rows += [
            row("scenarios", f"{label} max |phi|", phi, "", "<= 1e-10"),
            row("scenarios", f"{label} status", worst["status"], "", "== ok",
                worst.get("message") or ""),
        ]  # fmt: skip
    return rows


# -- sweep -------------------------------------------------------------------------------
#: the throughput points: particle-circle runs of about 0.5-1 s of work each on the
#: compiled core (500x real time), so that Dask's fixed costs do not hide the scaling
SWEEP_POINTS = 8
SWEEP_FIXED = {"t_end": "300"}
SWEEP_REPEATS = 3
#: the overhead points: particle-circle runs of two steps
SWEEP_TRIVIAL = {"t_end": "0.01"}
SWEEP_TRIVIAL_POINTS = 60


def _timed_sweep(client, grid: dict, fixed: dict, out) -> tuple[float, object]:
    from pfaff.sweep import run_sweep

    t0 = time.perf_counter()
    res = run_sweep("particle-circle", out, grid=grid, fixed=fixed, scheduler=client,
                    point_files=False, force=True)  # fmt: skip
    return time.perf_counter() - t0, res


def _warm_worker() -> None:
    """Import the scenarios and run one trivial point (on a Dask worker)."""
    from pfaff.scenarios import execute

    execute("particle-circle", SWEEP_TRIVIAL)


def _missing(x: object) -> bool:
    """A figure that does not exist: None (summary.json's null) or NaN (the table's)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def _thetas(n: int, first: int = 0) -> dict:
    """``n`` distinct initial angles (distinct points, so no Dask result is reused)."""
    return {"theta0": [f"{0.01 * i:.2f}" for i in range(first, first + n)]}


def _record_ms(folder: str, n: int = 50) -> float:
    """Median time of writing one finished point's row file (atomic, fsync-ed)."""
    from pfaff.sweep.store import SweepStore

    store = SweepStore(folder, "particle-circle")
    store.prepare(force=True)
    row_ = {"status": "ok", "message": "", "wall_time_s": 1.0, "realtime_factor": 1.0,
            "max_constraint_violation": 1e-13, "metrics": {"x": 1.0}}  # fmt: skip
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        store.record(f"p{i}", row_, {})
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def bench_sweep() -> list[Row]:
    """``pfaff sweep`` on local Dask clusters (issue 16, design.md Sec. 8).

    The same 8 points on a 1-worker and a 2-worker cluster (started and warmed
    up beforehand), 3 times, interleaved, no files; Dask's cost per trivial
    point (a sweep of 60 two-step points on 1 worker, no files, median of 3,
    less the same points run serially here); the sweep's metrics against those
    serial runs, to the last bit; the time to write a finished point's row file.
    """
    import tempfile

    from distributed import Client, LocalCluster

    from pfaff.scenarios import execute
    from pfaff.sweep.engine import NO_DASHBOARD

    b = "sweep"
    times: dict[int, list[float]] = {1: [], 2: []}
    ok, per_point = True, []
    with (
        tempfile.TemporaryDirectory(prefix="pfaff-bench-sweep-") as tmp,
        LocalCluster(n_workers=1, threads_per_worker=1, silence_logs=40, **NO_DASHBOARD) as c1,
        Client(c1, set_as_default=False) as one,
    ):
        t0 = time.perf_counter()
        with (
            LocalCluster(n_workers=2, threads_per_worker=1, silence_logs=40, **NO_DASHBOARD) as c2,
            Client(c2, set_as_default=False) as two,
        ):
            two.wait_for_workers(2)
            two.run(_warm_worker)  # imports, caches
            start = time.perf_counter() - t0
            one.run(_warm_worker)
            # interleaved, so that a change of the host's load hits both alike
            for rep in range(SWEEP_REPEATS):
                for n, client in ((1, one), (2, two)):
                    grid = _thetas(SWEEP_POINTS, rep * SWEEP_POINTS)
                    t, res = _timed_sweep(client, grid, SWEEP_FIXED, None)
                    times[n].append(t)
                    ok &= res.count("ok") == SWEEP_POINTS
        for rep in range(4):  # the first one warms up
            grid = _thetas(SWEEP_TRIVIAL_POINTS, rep * SWEEP_TRIVIAL_POINTS)
            t, trivial = _timed_sweep(one, grid, SWEEP_TRIVIAL, None)
            per_point.append(t / SWEEP_TRIVIAL_POINTS)
        record_ms = _record_ms(f"{tmp}/rows")
    serial, same = [], True
    for _, point in trivial.table.iterrows():
        t0 = time.perf_counter()
        summary = execute(
            "particle-circle", {**SWEEP_TRIVIAL, "theta0": float(point["theta0"])}
        ).summary
        serial.append(time.perf_counter() - t0)
        values = [summary["max_constraint_violation"], *summary["metrics"].values()]
        got = [point["max_constraint_violation"], *(point[k] for k in summary["metrics"])]
        same &= all(a == c or (_missing(a) and _missing(c)) for a, c in zip(values, got))
    overhead_ms = (statistics.median(per_point[1:]) - statistics.median(serial)) * 1e3
    t1, t2 = statistics.median(times[1]), statistics.median(times[2])
    ratio = t2 / t1
    n = f"{SWEEP_POINTS} particle-circle points, t_end={SWEEP_FIXED['t_end']} s"
    return [
        row(b, "8 points: 2 workers / 1 worker", ratio, "", "<= 0.6",
            f"{n}: {t1:.3g} s on 1 worker, {t2:.3g} s on 2 (medians of {SWEEP_REPEATS}, "
            "interleaved)"),
        row(b, "throughput gain per added worker", t1 / t2 - 1, "", ">= 0.85",
            "design.md Sec. 8: (T1/T2 - 1) for one added worker"),
        row(b, "points ok", "yes" if ok else "no", "", "== yes", n),
        row(b, "Dask overhead per trivial point", overhead_ms, "ms", "<= 50",
            f"{SWEEP_TRIVIAL_POINTS} two-step points on 1 worker, median of 3, "
            f"less a serial run ({statistics.median(serial) * 1e3:.3g} ms)"),
        row(b, "row file per finished point", record_ms, "ms", "",
            "atomic write + fsync, on the client"),
        row(b, "sweep metrics == serial runs", "yes" if same else "no", "", "== yes",
            f"{SWEEP_TRIVIAL_POINTS} trivial points, to the last bit"),
        row(b, "local cluster start", start, "s", "", "2 workers, until each ran a point"),
    ]  # fmt: skip


BENCHMARKS: dict[str, Callable[[], list[Row]]] = {
    "panda-dd": bench_panda_dd,
    "panda-control": bench_panda_control,
    "panda-mujoco": bench_panda_mujoco,
    "scenarios": bench_scenarios,
    "sweep": bench_sweep,
}


def run_benchmarks(names: list[str] | None = None) -> list[dict]:
    """Run the named benchmarks (all when ``names`` is empty or None), in order.

    Raises
    ------
    ValueError
        If a name is unknown; the message lists the valid ones. Nothing is run then.
    """
    names = list(names) if names else list(BENCHMARKS)
    bad = [n for n in names if n not in BENCHMARKS]
    if bad:
        raise ValueError(
            f"unknown benchmark {', '.join(map(repr, bad))}; "
            f"valid benchmarks: {', '.join(BENCHMARKS)}"
        )
    _spin(WARMUP_S)
    rows: list[dict] = []
    with single_threaded_blas():  # one core, as benchmarks/run.py's environment asks
        for n in names:
            rows += BENCHMARKS[n]()
    return rows


def summary_json(rows: list[dict]) -> dict:
    """The machine-readable figures of ``pfaff bench --json`` (design.md Sec. 4).

    ``projection_dynamics_us`` is the compiled core's time when it is built (the
    engine a simulation uses), else the NumPy engine's; ``ratio_vs_pinocchio`` is its
    ratio to Pinocchio's ``constraintDynamics`` on the same states, same process.
    """
    fig = {(r["benchmark"], r["figure"]): r["value"] for r in rows}
    out: dict = {"rows": rows}
    dd = "panda-dd"
    if (dd, "pinocchio constraintDynamics") in fig:
        core_t = fig.get((dd, "core projection dynamics"))
        t = core_t if core_t is not None else fig[(dd, "projection dynamics")]
        out["projection_dynamics_us"] = t
        out["projection_dynamics_engine"] = "core" if core_t is not None else "numpy"
        out["numpy_projection_dynamics_us"] = fig[(dd, "projection dynamics")]
        paired = fig.get((dd, "pinocchio (paired with core)"))
        t_pin = paired if core_t is not None and paired is not None else None
        t_pin = t_pin or fig[(dd, "pinocchio constraintDynamics")]
        out["pinocchio_constraint_dynamics_us"] = t_pin
        out["ratio_vs_pinocchio"] = fig.get((dd, "ratio core/pinocchio")) or t / t_pin
    scen: dict = {}
    for r in rows:
        if r["benchmark"] != "scenarios":
            continue
        f = str(r["figure"])
        for key, suffix in (("realtime_factor", " realtime factor"), ("engine", " engine")):
            if f.endswith(suffix) and key not in scen.get(f[: -len(suffix)], {}):
                scen.setdefault(f[: -len(suffix)], {})[key] = r["value"]
    if scen:
        out["scenarios"] = scen
    return out


#: busy time before the first figure, so that the CPU clock has ramped up
WARMUP_S = 0.5


def _spin(seconds: float) -> None:
    """Keep one core busy for ``seconds`` (a cold core reads 30-60 % slower)."""
    end = time.perf_counter() + seconds
    x = np.ones((64, 64))
    while time.perf_counter() < end:
        x = x @ x * 1e-3


# -- table -------------------------------------------------------------------------------
def format_value(value: object) -> str:
    """4 significant digits for floats, ``str`` otherwise."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return str(value)


def meets_target(value: object, target: str) -> str:
    """``"yes"``/``"no"`` against ``"<= x"``, ``">= x"`` or ``"== word"``; ``"-"`` without one."""
    m = re.fullmatch(r"\s*(<=|>=|==)\s*(\S+)\s*", target or "")
    if m is None:
        return "-"
    op, ref = m.groups()
    if op == "==":
        return "yes" if str(value) == ref else "no"
    try:
        x, r = float(value), float(ref)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "no"
    if math.isnan(x):
        return "no"
    return "yes" if (x <= r if op == "<=" else x >= r) else "no"


COLUMNS = ("benchmark", "figure", "value", "unit", "target", "ok", "note")


def format_table(rows: list[dict]) -> str:
    """An aligned text table: benchmark, figure, value, unit, target, ok, note.

    Values are right-aligned, the other columns left-aligned; ``ok`` is
    ``yes``/``no`` when the row has a target, ``-`` otherwise.
    """
    cells = [
        [
            str(r.get("benchmark", "")),
            str(r.get("figure", "")),
            format_value(r.get("value", "")),
            str(r.get("unit", "")),
            str(r.get("target", "")),
            meets_target(r.get("value"), str(r.get("target", ""))),
            str(r.get("note", "")),
        ]
        for r in rows
    ]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(COLUMNS)]

    def line(cols: list[str]) -> str:
        parts = [
            c.rjust(w) if i == 2 else c.ljust(w) for i, (c, w) in enumerate(zip(cols, widths))
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(COLUMNS)), line(["-" * w for w in widths])]
    out += [line(c) for c in cells]
    return "\n".join(out)
