"""Many rollouts at once, the pattern of ``mujoco.rollout`` (design.md Sec. 4): ``K``
starts, each stepped ``T`` times with its own torque sequence, on a pool of C++ threads
with the GIL released (src/cpp/bindings/bind_sim.cpp). Each rollout runs on its own copy of the
compiled system, step by step as :class:`pfaff.Simulator` steps it, so the results equal
those of ``K`` Simulators run one after another, bit for bit, for any number of threads.

A system with joint limits rolls out on ``K`` limited Simulators (their events located,
impacts applied, stops held, in one C++ call per step with the GIL released) on a pool
of Python threads: the same results as those Simulators one after another.
"""

from __future__ import annotations

import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields

import numpy as np

from pfaff import core
from pfaff.api.checks import real_array
from pfaff.api.simulator import Simulator, limits_not_held
from pfaff.api.simulator_limits import holds_events
from pfaff.api.simulator_setup import NOT_OPTIONS, prepare
from pfaff.api.system import System
from pfaff.simulate import SimulationError, core_engine
from pfaff.simulate.memory import check_record
from pfaff.simulate.policy import RunStatus, StatusCode, status_message

__all__ = ["rollout"]


def rollout(
    system: System,
    q0s: np.ndarray | None,
    v0s: np.ndarray | None,
    taus: np.ndarray,
    dt: float = 1e-3,
    threads: int | None = None,
    *,
    limits: bool = True,
    ctrls: np.ndarray | None = None,
    act0s: np.ndarray | None = None,
    **options,
) -> dict[str, np.ndarray | list]:
    """Run ``K`` rollouts of ``T`` steps of ``dt``.

    Parameters
    ----------
    system : a :class:`pfaff.System`.
    q0s : starts (K, nq), or one (nq,) for all, or None: ``system.q0``. Each is brought
        onto the manifold as :meth:`pfaff.Simulator.reset` brings it.
    v0s : start velocities (K, nv), (nv,) or None: ``system.v0``.
    taus : joint torques (K, T, nv) (a system's actuators act at ``ctrl = 0``, as in
        MuJoCo by default): ``taus[i, k]`` is held over step ``k`` of rollout
        ``i`` (the last one also stands for the sample of the final state).
    dt : the step [s].
    threads : threads of the pool (default: the machine's cores, at most K).
    limits : hold the system's joint limits (default), as a :class:`pfaff.Simulator`
        does; False steps through them, with a warning.
    ctrls : the actuators' controls (K, T, nu), ``ctrls[i, k]`` held over step ``k``
        with ``taus[i, k]`` (None: ctrl = 0).
    act0s : the start activations (K, na) or (na,) of the actuators with activation
        dynamics (None: zeros); the result holds ``"act"`` (K, T+1, na).
    **options : :class:`~pfaff.simulate.SimOptions` fields, as for a Simulator.

    Returns
    -------
    dict
        ``"q"`` (K, T+1, nq), ``"v"`` (K, T+1, nv), ``"lambda"`` (K, T+1, m),
        ``"phi"`` (K, T+1, m_h): the states, start included, with the multipliers of
        each state's step and the holonomic residuals; ``"t"`` (T+1,) [s];
        ``"status"`` (K,): a :class:`~pfaff.simulate.policy.StatusCode`, 0 ran, else the
        step failed (1 non-finite, 2 a unilateral contact would open, 3 position
        correction, -1 another error) and the states not reached are NaN;
        ``"message"``: K strings, empty for the rollouts that ran; ``"events"``: K lists
        of the joint limits' events (:class:`~pfaff.simulate.limits.LimitEvent`, empty
        without limits); ``"act"`` (K, T+1, na): the activations, with actuators. With
        limits, ``"lambda"`` holds the loop's rows only (a held
        stop's multiplier is in the rollout's events' record, not here).

    Raises ValueError on arrays of the wrong shape or with non-finite entries, naming
    them.
    """
    opt, engine, fallback, _, proto, actuation = prepare(system, dt, options)
    if fallback is not None:
        warnings.warn(fallback, UserWarning, stacklevel=2)
    held = holds_events(system, limits)  # contacts: held (restitution 0)
    if system.limits and not limits:
        warnings.warn(
            limits_not_held(system, "pfaff.rollout with limits=False"), UserWarning, stacklevel=2
        )
    nq, nv = system.nq, system.nv
    taus = real_array(taus, "taus", f"(K, T, {nv}) = (K, T, nv)")
    if taus.ndim != 3 or taus.shape[2] != nv:
        raise ValueError(f"taus has shape {taus.shape}, expected (K, T, {nv}) = (K, T, nv)")
    K, T = taus.shape[:2]
    if K < 1:
        raise ValueError("taus holds no rollout (K = 0): expected shape (K >= 1, T, nv)")
    cset = system.cset
    m, m_h = cset.dim, len(cset.holonomic_rows)
    check_record(
        K * (T + 1), 8 * (nq + nv + m + m_h), f"K = {K} rollouts of T = {T} steps",
        "run fewer rollouts or fewer steps per call (rollout the rest from out['q'][:, -1], "
        "out['v'][:, -1])",
    )  # fmt: skip
    if not np.isfinite(taus).all():
        raise ValueError("taus has non-finite entries")
    ctrls, act0s = _controls(actuation, ctrls, act0s, K, T)
    one_start = np.ndim(q0s) < 2 and np.ndim(v0s) < 2  # None or one vector each: shared
    q0s = _starts(system.q0 if q0s is None else q0s, K, nq, "q0s", "nq")
    v0s = _starts(system.v0 if v0s is None else v0s, K, nv, "v0s", "nv")
    threads = min(K, os.cpu_count() or 1) if threads is None else int(threads)
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads must be in 1 .. 1024, got {threads}")
    out = {
        "q": np.empty((K, T + 1, nq)),
        "v": np.empty((K, T + 1, nv)),
        "lambda": np.empty((K, T + 1, m)),
        "phi": np.empty((K, T + 1, m_h)),
    }
    events: list[list] = [[] for _ in range(K)]
    if actuation:
        out["act"] = np.empty((K, T + 1, actuation.na))
    if held or engine != "core":  # Simulators: one after another, or threads (limits)
        run = _simulator_rollout(system, opt, held, (q0s, v0s, act0s), taus, ctrls, out, events)
        if held and engine == "core" and threads > 1:  # each step's C++ call frees the GIL
            with ThreadPoolExecutor(threads) as pool:
                status = list(pool.map(run, range(K)))
        else:
            status = [run(i) for i in range(K)]
    else:
        start = core.clone(proto)
        for i in range(1 if one_start else K):  # onto the manifold as Simulator.reset
            system.mechanism.check_state(q0s[i], v0s[i])
            q0s[i], v0s[i] = core_engine.project_start(start, q0s[i], v0s[i], opt)
        if one_start:  # one start shared by all: assembled once
            q0s[1:], v0s[1:] = q0s[0], v0s[0]
        arrays = (out["q"], out["v"], out["lambda"], out["phi"])
        if actuation:  # their held torque (ctrl = 0 by default, MuJoCo's; a Simulator's
            taus = taus + actuation.held(ctrls)  # step adds it itself)
            status = core.rollout_ctrl(
                proto, q0s, v0s, taus, actuation.clamped(ctrls), act0s, 0.0, threads,
                *arrays, out["act"],
            )  # fmt: skip
        else:
            status = core.rollout(proto, q0s, v0s, taus, 0.0, threads, *arrays)
    out["t"] = np.arange(T + 1) * opt.dt
    out["status"] = np.array([s.code for s in status], dtype=int)
    out["message"] = ["" if s.code == StatusCode.OK else status_message(cset, s) for s in status]
    out["events"] = events
    return out


def _starts(x, K: int, n: int, name: str, size: str) -> np.ndarray:
    """``x`` as K rows of n (one row repeated), a C-contiguous float64 copy."""
    a = real_array(x, name, f"({K}, {n}) = (K, {size}) or ({n},)")
    if a.shape == (n,):
        a = np.broadcast_to(a, (K, n))
    if a.shape != (K, n):
        raise ValueError(
            f"{name} has shape {a.shape}, expected ({K}, {n}) = (K, {size}) or ({n},)"
        )
    if not np.isfinite(a).all():
        raise ValueError(f"{name} has non-finite entries")
    return np.array(a, dtype=float, order="C")


def _controls(actuation, ctrls, act0s, K: int, T: int):
    """``ctrls`` (K, T, nu) and ``act0s`` (K, na) checked (None: zeros)."""
    nu, na = actuation.nu, actuation.na
    if (ctrls is not None or act0s is not None) and not actuation:
        raise ValueError("ctrls and act0s drive actuators; this system has none: give taus")
    if ctrls is None:
        ctrls = np.zeros((K, T, nu))
    ctrls = real_array(ctrls, "ctrls", f"(K, T, {nu}) = (K, T, nu)")
    if ctrls.shape != (K, T, nu):
        raise ValueError(f"ctrls has shape {ctrls.shape}, expected ({K}, {T}, {nu}) = (K, T, nu)")
    if not np.isfinite(ctrls).all():
        raise ValueError("ctrls has non-finite entries")
    act0s = _starts(np.zeros(na) if act0s is None else act0s, K, na, "act0s", "na")
    for a in act0s:
        actuation.check_act(a)
    return np.ascontiguousarray(ctrls), act0s


def _simulator_rollout(system, opt, limits, starts, taus, ctrls, out, events):
    """The function ``run(i)`` that runs rollout ``i`` on a :class:`Simulator` (the
    NumPy engine, or the limits held), one per thread: its status; its states,
    multipliers and residuals into ``out`` (NaN from the first state not reached), its
    limit events into ``events[i]``. The record of a limited run also holds the events'
    own samples; ``out`` takes the samples on the grid ``k dt``."""
    kw = {f.name: getattr(opt, f.name) for f in fields(opt) if f.name not in NOT_OPTIONS}
    local = threading.local()
    q0s, v0s, act0s = starts

    def run(i: int) -> RunStatus:
        if not hasattr(local, "sim"):
            with warnings.catch_warnings():  # the fallback's warning: once, by the caller
                warnings.simplefilter("ignore")
                local.sim = Simulator(system, opt.dt, limits=limits, **kw)
        sim, actuated = local.sim, bool(system.nu)
        sim.reset(q0s[i], v0s[i], act0s[i] if actuated else None)
        status = RunStatus()
        acts = [sim.act]
        try:
            for tau, ctrl in zip(taus[i], ctrls[i]):
                sim.step(tau, ctrl if actuated else None)
                acts.append(sim.act)
        except SimulationError as exc:
            status = RunStatus(StatusCode.EXCEPTION, str(exc))
        if actuated:
            out["act"][i, : len(acts)] = acts
            out["act"][i, len(acts) :] = np.nan
        a = sim.record().arrays()
        k = np.rint(a["t"] / opt.dt)
        on = np.flatnonzero(np.abs(a["t"] / opt.dt - k) <= 1e-6)  # the grid's samples
        n = len(on) if status.code == StatusCode.OK else min(len(on), sim.steps)
        for key in ("q", "v", "lambda", "phi"):
            dst = out[key][i]
            dst[:n] = a[key][on[:n], : dst.shape[1]]
            dst[n:] = np.nan
        events[i] = sim.events
        return status

    return run
