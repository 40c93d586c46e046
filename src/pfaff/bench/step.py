"""Stepping from Python (``pfaff bench step``): what a call of
:meth:`pfaff.Simulator.step` costs beyond the step itself, and what threads give
:func:`pfaff.rollout`.

- ``step()`` per call against the in-loop step: the same Simulator stepping ``T`` steps
  in one call (``step(tau, n=T)``: one call into the core, the loop of ``simulate`` with
  a held torque) -- the ratio is the Python overhead of a call, timed side by side
  (:func:`~pfaff.bench.timing.paired_us`). Targets: <= 1.3x on the 30-dof
  ``examples/quadruped.xml``, <= 2x on the 5-dof loop ``five_bar.xml``.
- ``simulate`` per step (its set-up included), for scale.
- The largest difference between 1000 ``step()`` calls and one ``simulate`` of the same
  torques (held per step by a controller): bit for bit, so 0.
- ``rollout`` of 64 rollouts with 2 threads against 1 thread (target <= 0.6x on a
  machine with 2 free cores; the note says how many the machine has).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np

from .timing import Row, paired_us, row

ROOT = Path(__file__).resolve().parents[3]
#: (label, file, steps per loop, target of the ratio)
FILES = (
    ("quadruped", ROOT / "examples" / "quadruped.xml", 300, 1.3),
    ("five_bar", ROOT / "tests" / "models" / "five_bar.xml", 1000, 2.0),
)
ROLLOUTS, ROLLOUT_STEPS = 64, 200
ROLLOUT_FILE = ROOT / "tests" / "models" / "five_bar.xml"


def bench_step() -> list[Row]:
    """The rows of ``pfaff bench step`` (module docstring)."""
    import pfaff

    rows: list[Row] = []
    for label, path, T, target in FILES:
        if not path.is_file():
            rows.append(row("step", f"{label} status", "missing", "", "== ok", str(path)))
            continue
        sys = pfaff.load(path, contact=False)  # like for like: MuJoCo runs without its contacts
        rows += _per_call(label, sys, T, target)
        rows += _equality(label, sys)
    rows += _rollout(pfaff.load(ROLLOUT_FILE, contact=False))
    return rows


def _per_call(label: str, sys, T: int, target: float) -> list[Row]:
    import pfaff

    tau = 0.1 * np.ones(sys.nv)
    calls, one = pfaff.Simulator(sys, record=False), pfaff.Simulator(sys, record=False)

    def per_call():
        calls.reset()
        step = calls.step
        for _ in range(T):
            step(tau)

    def in_loop():
        one.reset()
        one.step(tau, n=T)

    (t_call, t_loop), (ratio, _) = paired_us([per_call, in_loop], T, repeats=7)
    opt = pfaff.simulate.SimOptions(dt=1e-3, engine="core", progress=False)
    t0 = time.perf_counter()
    pfaff.simulate.simulate(sys.cset, sys.q0, sys.v0, T * 1e-3, opt, tau=tau, forces=sys.forces)
    t_sim = (time.perf_counter() - t0) / T * 1e6
    note = f"{sys.nv} dof, {sys.cset.dim} rows; {T} steps per loop, median of 7 paired loops"
    return [
        row("step", f"{label} step() per call", t_call, "us", "", note),
        row("step", f"{label} in-loop step (step(n={T}))", t_loop, "us", ""),
        row("step", f"{label} ratio step()/in-loop", ratio, "x", f"<= {target:g}"),
        row("step", f"{label} simulate per step, set-up included", t_sim, "us", "", "one run"),
    ]


def _equality(label: str, sys, T: int = 1000) -> list[Row]:
    """1000 step() calls with a new torque each against one simulate of them."""
    import pfaff

    taus = 0.5 * np.random.default_rng(0).standard_normal((T, sys.nv))
    sim = pfaff.Simulator(sys)
    for tau in taus:
        sim.step(tau)
    got = sim.record().arrays()

    def controller(t, snap):
        return taus[min(int(round(t / 1e-3)), T - 1)]

    opt = pfaff.simulate.SimOptions(dt=1e-3, engine="core", progress=False)
    ref = pfaff.simulate.simulate(
        sys.cset, sys.q0, sys.v0, T * 1e-3, opt, controller, forces=sys.forces
    ).arrays()
    worst = max(float(np.abs(got[k] - ref[k]).max(initial=0.0)) for k in ("q", "v", "lambda"))
    note = f"{T} step() calls, a new torque each, against one simulate (q, v, lambda)"
    return [row("step", f"{label} max |step() - simulate|", worst, "", "<= 1e-12", note)]


def _rollout(sys) -> list[Row]:
    import pfaff

    K, T = ROLLOUTS, ROLLOUT_STEPS
    taus = 0.5 * np.random.default_rng(1).standard_normal((K, T, sys.nv))
    wall: dict[int, list[float]] = {1: [], 2: []}
    cpu: dict[int, list[float]] = {1: [], 2: []}
    pfaff.rollout(sys, None, None, taus[:4, :10], threads=2)  # warm-up
    load = os.getloadavg()[0]
    for _ in range(5):  # paired: 1 and 2 threads in turn
        for n in (1, 2):
            t0, c0 = time.perf_counter(), time.process_time()
            out = pfaff.rollout(sys, None, None, taus, threads=n)
            wall[n].append(time.perf_counter() - t0)
            cpu[n].append(time.process_time() - c0)
    ratio = statistics.median(b / a for a, b in zip(wall[1], wall[2]))
    cores = statistics.median(c / w for c, w in zip(cpu[2], wall[2]))
    ok = int((out["status"] == 0).sum())
    note = (
        f"{K} rollouts x {T} steps of five_bar.xml; {os.cpu_count()} cores, load average "
        f"{load:.2f} at the start (other processes take cores from the second thread)"
    )
    return [
        row("step", f"rollout {K}x{T} 1 thread", _ms(wall[1]), "ms", "", note),
        row("step", f"rollout {K}x{T} 2 threads", _ms(wall[2]), "ms", ""),
        row("step", "rollout ratio 2 threads / 1 thread", ratio, "x", "<= 0.6"),
        row("step", "rollout 2 threads: cores busy (CPU time / wall)", cores, "", "",
            "2 when both threads ran side by side all along"),
        row("step", "rollouts that ran", ok, "", f"== {K}"),
    ]  # fmt: skip


def _ms(times: list[float]) -> float:
    return statistics.median(times) * 1e3
