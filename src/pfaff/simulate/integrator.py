"""Time stepping on the constraint manifold.

One step: fixed-step RK4 (default) or an adaptive SciPy integrator over
``[t, t + dt]`` on the projection direct dynamics (Aghili eq. 22/25), then
the drift correction of design.md Sec. 3 (Newton-Raphson on the positions,
M-metric projection of the velocity). A sampled-data controller is called at
its own period ``control_dt`` and its torque is held in between (zero-order
hold).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintEval, ConstraintSet
from pfaff.linalg import metric_projection, single_threaded_blas
from pfaff.mechanism.base import Snapshot
from pfaff.simulate import core_engine, watch
from pfaff.simulate.actuators import activation_count, activations_at, start_act, step_ahead
from pfaff.simulate.correction import correct_state, newton_project
from pfaff.simulate.forces import ForceElement, ForceSet
from pfaff.simulate.memory import check_record, sample_bytes
from pfaff.simulate.options import (
    ADAPTIVE,
    ENGINES,
    INTEGRATORS,
    SimOptions,
    choose_engine,
    engine_choice,
    use_engine,
)
from pfaff.simulate.policy import (
    START_ITERATIONS,
    SampleClock,
    dynamics_message,
    position_message,
    record_count,
    record_due,
    start_message,
    steps_of,
)
from pfaff.simulate.record import Controller, StepRecord, as_controller
from pfaff.simulate.recording import (
    check_contact,
    check_finite,
    controller_torque,
    joint_limit_warnings,
    record_force_elements,
    record_sample,
)
from pfaff.simulate.steppers import (
    Evaluator,
    adaptive_step,
    constraint_forces,
    rk_step,
    sensor_readings,
)
from pfaff.simulate.tableaus import TABLEAUS
from pfaff.simulate.trajectory import (
    InitialStateError,
    SimulationError,
    SimulationInterrupted,
    Trajectory,
)

__all__ = [
    "ADAPTIVE",
    "ENGINES",
    "INTEGRATORS",
    "SimOptions",
    "choose_engine",
    "joint_limit_warnings",
    "project_state",
    "simulate",
    "use_engine",
]


def project_state(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray, opt: SimOptions | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Bring an initial state onto the constraint manifold (positions, then velocity).

    Raises :class:`InitialStateError` when Newton-Raphson cannot reach
    ``max(1e3 position_tol, 1e-9)``.
    """
    opt = opt or SimOptions()
    mech = cset.mechanism
    mech.check_state(q, v)
    q1, err, it, _ = newton_project(
        cset,
        q,
        opt.position_tol,
        START_ITERATIONS,
        opt.rank_tol,
        step_tol=opt.newton_step_tol,
        floor=opt.position_floor,
    )
    message = start_message(err, it, opt.position_tol)
    if message is not None:
        raise InitialStateError(message)
    snap = mech.compute(q1, v, cset.frames)
    ev = cset.evaluate(snap)
    return q1, metric_projection(v, ev.A, snap.M, opt.rank_tol)


_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """A ``UserWarning`` the first time this process meets ``message`` (an engine
    fallback repeats at every run of a sweep or a chained phase)."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


#: the most steps a run takes (the record rule, _core.record_count, counts in 64 bits)
MAX_STEPS = 2**62


def check_run_record(cset: ConstraintSet, t0: float, t_end: float, opt, forces) -> int:
    """The steps of a run over ``[t0, t_end]``, refused (:func:`check_record`) where its
    record would not fit in the memory available -- before anything runs."""
    n_steps = step_count(t0, t_end, opt.dt)
    every = int(opt.record_every)
    check_record(
        record_count(n_steps, every),
        sample_bytes(cset, activation_count(forces)),
        f"t_end = {t_end:g} s at dt = {opt.dt:g} s is {n_steps:.3g} steps"
        + (f", one sample in {every} recorded" if every > 1 else ""),
        "choose a shorter t_end or a larger dt, or record less: a record stride keeps one "
        "step in k (SimOptions(record_every=k); pfaff run FILE --set record_every=k for a "
        "model or system file), pfaff.Simulator(system, record=False) only the last state",
    )
    return n_steps


def step_count(t0: float, t_end: float, dt: float) -> int:
    """Steps of ``dt`` from ``t0`` to the final time ``t_end``: ``round((t_end - t0) / dt)``.

    Raises ``ValueError`` when ``t0`` or ``t_end`` is not finite, when ``t_end <= t0``,
    when the run would take no step (``t_end - t0`` shorter than ``dt``) or more than
    :data:`MAX_STEPS`. A span
    that is not a multiple of ``dt`` ends at the nearest step: ``t0 + n_steps * dt``
    (:func:`~pfaff.simulate.policy.steps_of`).
    """
    if not (np.isfinite(t0) and np.isfinite(t_end)):
        raise ValueError(f"t0 and t_end must be finite, got t0 = {t0!r}, t_end = {t_end!r}")
    if not t_end > t0:
        raise ValueError(
            f"t_end is the final time and must be > t0: got t_end = {t_end!r} s, t0 = {t0!r} s"
        )
    n = steps_of(t_end - t0, dt)
    if n < 1:
        raise ValueError(
            f"the run from t0 = {t0!r} s to t_end = {t_end!r} s is shorter than one step "
            f"of dt = {dt!r} s; choose t_end >= t0 + dt"
        )
    if n > MAX_STEPS:
        raise ValueError(
            f"the run from t0 = {t0!r} s to t_end = {t_end!r} s is {n:.3g} steps of "
            f"dt = {dt!r} s, more than a run counts ({MAX_STEPS:.3g}); choose a shorter "
            "t_end or a larger dt"
        )
    return n


def simulate(
    cset: ConstraintSet,
    q0: np.ndarray,
    v0: np.ndarray,
    t_end: float,
    options: SimOptions | None = None,
    controller: Controller | Callable[[float, Snapshot], np.ndarray] | None = None,
    tau: np.ndarray | None = None,
    stop: Callable[[float, Snapshot, ConstraintEval], bool] | None = None,
    t0: float = 0.0,
    forces: Sequence[ForceElement] = (),
    next_control: float | None = None,
    act0: np.ndarray | None = None,
) -> Trajectory:
    """Simulate a constrained mechanism from ``(q0, v0)`` to ``t_end``.

    Parameters
    ----------
    cset : the constraints (and, through them, the mechanism).
    q0, v0 : initial state; projected onto the constraint manifold first.
    t_end : final time [s] (not a duration): the run covers ``[t0, t_end]`` in
        ``round((t_end - t0) / dt)`` steps; ``t_end <= t0`` is refused.
    options : integrator, tolerances, controller period (see :class:`SimOptions`).
    controller : a :class:`~pfaff.simulate.record.Controller`,
        ``tau = controller(t, record)``, called every ``control_dt`` and held in
        between, with the :class:`~pfaff.simulate.record.StepRecord` of the state
        (snapshot with ``controller.frames``, constraint evaluation, projection,
        and the force-sensor readings if ``controller.needs_sensors``); its
        ``signals`` are recorded. A plain callable ``f(t, snapshot)`` is wrapped
        by :class:`~pfaff.simulate.record.SnapshotController`.
    tau : constant torque when there is no controller (default zero).
    stop : ``stop(t, snapshot, constraint_eval) -> bool``, checked at every
        step after the sample is recorded: True ends the run there (an event,
        e.g. a contact to switch on); ``trajectory.stopped_at`` holds the time.
    t0 : time of the initial state (for runs chained across events).
    next_control : time of the controller's first sample (default ``t0``); a
        chained run passes the previous run's ``trajectory.next_control`` so the
        controller keeps one clock across the switch (:mod:`pfaff.simulate.phases`).
    forces : force elements (:mod:`pfaff.simulate.forces`: ``PointSpring``,
        ``PointDamper``, ``JointSpring``, ``JointDamper``, ``AppliedForce``),
        evaluated at every integrator stage and added to the torque. Spring
        potentials are part of the recorded ``potential`` and ``energy``; the
        work of the others is the series ``force_work``, so that
        ``energy - energy[0] = work + force_work + correction_energy``.
    act0 : the activations (na,) at ``t0`` of the actuator elements with activation
        dynamics among ``forces`` (:func:`~pfaff.simulate.actuators.start_act`; None:
        theirs, zeros unless set); the series ``act`` records them.

    Returns
    -------
    Trajectory. On failure a :class:`SimulationError` carries the partial one;
    a Ctrl-C raises :class:`SimulationInterrupted` (a ``KeyboardInterrupt``)
    carrying it. An error in the data (a ``ValueError``, e.g. a controller
    refusing its task) before the first step propagates as it is; after the
    first step it is a failed simulation (``SimulationError``), as is a
    ``LinAlgError`` or floating-point error at any time. Joints that left the
    model's position limits are listed once each in ``trajectory.warnings``.
    """
    opt = options or SimOptions()
    opt.validate()
    n_steps = check_run_record(cset, t0, t_end, opt, forces)
    every = int(opt.record_every)
    mech = cset.mechanism
    q0 = np.asarray(q0, dtype=float)
    v0 = np.asarray(v0, dtype=float)
    mech.check_state(q0, v0)
    if opt.integrator in ADAPTIVE and mech.nq != mech.nv:
        raise ValueError(f"adaptive integrators need nq == nv; {mech.name} has a Lie-group q")
    engine, fallback = engine_choice(cset, opt, tuple(forces))
    # the core brings the start onto the manifold itself (core_engine.run), by the same
    # rule
    q, v = (q0, v0) if engine == "core" else project_state(cset, q0, v0, opt)
    controller = as_controller(controller)
    ctrl_frames = () if controller is None else tuple(controller.frames)
    mech.check_frames(ctrl_frames)
    fset = ForceSet(mech, forces)
    start_act(fset.elements, act0, t0)
    step_ahead(fset.elements, opt.dt)  # actearly looks one step of this run ahead
    ev = Evaluator(cset, opt, ctrl_frames, fset)
    unilateral = cset.unilateral_rows
    m, m_h = cset.dim, len(cset.holonomic_rows)
    traj = Trajectory(mech.nq, mech.nv, m, m_h, activation_count(fset.elements))
    tau_held = np.zeros(mech.nv) if tau is None else np.asarray(tau, dtype=float).copy()
    if tau_held.shape != (mech.nv,):
        raise ValueError(
            f"tau has shape {tau_held.shape}, expected ({mech.nv},) (nv of {mech.name!r})"
        )
    if not np.isfinite(tau_held).all():
        raise ValueError(f"tau must be finite, got {tau_held.tolist()}")
    control_dt = opt.control_dt or opt.dt
    work = corr = force_work = 0.0
    clock = SampleClock(control_dt, t0 if next_control is None else float(next_control))
    newton_it = 0
    show = sys.stderr.isatty() if opt.progress is None else opt.progress
    bar = None
    if show and n_steps >= 2000:
        from tqdm import tqdm

        bar = tqdm(total=n_steps, desc=mech.name, unit="step", mininterval=0.5, leave=False)
    traj.engine = engine
    if fallback is not None:
        traj.warnings.append(fallback)
        warn_once(fallback)
    blas = single_threaded_blas()  # small matrices: one BLAS thread (restored below)
    t, k = t0, 0
    try:
        if traj.engine == "core":
            frames = tuple(dict.fromkeys((*cset.frames, *ctrl_frames)))
            fe = fset.elements  # built-in force elements run in the core too
            return core_engine.run(
                cset,
                q,
                v,
                n_steps,
                opt,
                controller,
                tau_held,
                t0,
                frames,
                traj,
                bar,
                fe,
                clock.next,
                stop,
            )
        for k in range(n_steps + 1):
            t = t0 + k * opt.dt
            snap, cev = ev.terms(q, v)
            proj = None
            Q, p1 = fset.evaluate(t, snap) if fset else (0.0, 0.0)
            if controller is not None and clock.due(t, opt.dt):
                if opt.method != "kkt":  # the step's projection, with N (one SVD, cached)
                    proj = dyn.projection(cev.A, cev.drift, opt.rank_tol, True, ev.svd)
                sensors = None
                if controller.needs_sensors:
                    sensors, proj = sensor_readings(snap, cev, tau_held + Q, ev, proj)
                rec = StepRecord(t, snap, cev, proj, sensors, opt.rank_tol)
                tau_held = controller_torque(controller(t, rec), mech.nv, t, k, traj)
                clock.advance()
            tau_all = tau_held + Q  # controller torque and force elements
            try:
                a, proj = ev.accel(snap, cev, tau_all, proj)
            except np.linalg.LinAlgError as exc:
                msg = dynamics_message(opt.method, t, k, str(exc), False)
                raise SimulationError(msg, traj) from None
            check_finite("acceleration", a, t, k, traj)
            record = record_due(k, every, n_steps)
            forces = None
            if record or unilateral.size:
                forces = constraint_forces(snap, cev, a, proj, tau_all, opt)
                if unilateral.size:
                    check_contact(forces[1], unilateral, cset, t, k, traj)
            if record:
                record_sample(traj, t, snap, cev, a, forces, tau_held, opt, work, corr, newton_it)
                traj.rows["act"].append(activations_at(fset.elements, t))
                record_force_elements(traj, fset, snap, force_work)
                if controller is not None:
                    traj.append_signals(controller.signals)
            if k == n_steps:
                break
            if stop is not None and stop(t, snap, cev):
                if not record:
                    forces = forces or constraint_forces(snap, cev, a, proj, tau_all, opt)
                    record_sample(
                        traj, t, snap, cev, a, forces, tau_held, opt, work, corr, newton_it
                    )
                    traj.rows["act"].append(activations_at(fset.elements, t))
                record_force_elements(traj, fset, snap, force_work)
                traj.stopped_at = t
                break
            try:
                if opt.integrator in TABLEAUS:
                    tab = TABLEAUS[opt.integrator]
                    q1, v1, vbar, w_nc = rk_step(ev, tab, q, v, a, tau_held, opt.dt, t, p1)
                else:
                    q1, v1, vbar, w_nc = adaptive_step(ev, q, v, tau_held, opt.dt, opt, t)
            except (np.linalg.LinAlgError, RuntimeError) as exc:
                msg = dynamics_message(opt.method, t, k, str(exc), True)
                raise SimulationError(msg, traj) from None
            if not (np.isfinite(q1).all() and np.isfinite(v1).all()):
                check_finite("q", q1, t + opt.dt, k + 1, traj)
                check_finite("v", v1, t + opt.dt, k + 1, traj)
            work += opt.dt * float(tau_held @ vbar)
            force_work += w_nc
            q1, v2, err, newton_it, dE = correct_state(cset, q1, v1, opt, ev.svd)
            corr += dE
            if err > opt.position_tol:
                traj.newton_failures += 1
                if err > opt.position_failure:
                    msg = position_message(err, t + opt.dt, k + 1, newton_it)
                    raise SimulationError(msg, traj)
            q, v = q1, v2
            traj.steps = k + 1
            if bar is not None:
                bar.update(1)
            if watch.active():
                watch.notify(t + opt.dt, q)
    except KeyboardInterrupt:
        if traj.engine == "core":  # the core's steps so far
            k = traj.steps
            t = t0 + k * opt.dt
        traj.trim()
        raise SimulationInterrupted(
            f"interrupted at t = {t:.6g} s (step {k} of {n_steps})", traj
        ) from None
    except (ValueError, ArithmeticError) as exc:
        if traj.steps == 0 and not isinstance(exc, np.linalg.LinAlgError):
            raise  # bad data found before any step: the caller's error
        traj.trim()
        raise SimulationError(
            f"{type(exc).__name__} at t = {t:.6g} s (step {k}): {exc}", traj
        ) from exc
    finally:
        blas.restore_original_limits()
        traj.warnings.extend(joint_limit_warnings(mech, traj))
        if traj.engine != "core":  # the core's figure: core_engine.run
            traj.kkt_cond_max = ev.kkt_cond_max
            traj.next_control = clock.next if controller is not None else None
        if bar is not None:
            bar.close()
    return traj
