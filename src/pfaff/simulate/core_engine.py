"""The step loop on the compiled core (``SimOptions(engine="core")``).

Python conducts: it calls the controller once per controller sample (with the
:class:`~pfaff.simulate.record.StepRecord` of that state, built from what the core
computed there: M, h, A, drift, Phi, the factors of its projection and the
null-space basis, the force-sensor readings) and hands the core the
stretch of steps until the next sample; the core runs them -- terms, projection,
RK4 stages, drift correction, recording into preallocated arrays -- without
calling back. The sequence of operations is that of :func:`pfaff.simulate.simulate`
on the NumPy engine, and the tests hold the two to the same trajectory.
"""

from __future__ import annotations

import functools

import numpy as np

from pfaff import core, lowering
from pfaff.constraints.base import ConstraintEval, ConstraintSet
from pfaff.dynamics import Projection
from pfaff.mechanism.base import FrameState, ModelError, Snapshot
from pfaff.simulate import watch
from pfaff.simulate.actuators import ActuatorForce, activation_count
from pfaff.simulate.policy import (
    CORE_SERIES,
    FORCE_SERIES,
    START_ITERATIONS,
    SampleClock,
    by_name,
    record_count,
    series_shape,
    start_message,
    status_message,
)
from pfaff.simulate.record import StepRecord
from pfaff.simulate.recording import controller_torque
from pfaff.simulate.tableaus import TABLEAUS, adaptive_pair
from pfaff.simulate.trajectory import InitialStateError, SimulationError, Trajectory

#: steps per call into the core when no controller sample comes sooner (keeps Ctrl-C
#: and the progress bar responsive)
CHUNK = 2000


def build(cset: ConstraintSet, forces=()):
    """:func:`pfaff.core.build` with the bound built-in force elements ``forces`` (a held
    law's are added by :func:`add_held`)."""
    reason = lowering.first_reason(forces, "force")
    if reason is not None:
        raise ValueError(f"the compiled core cannot run this system: force elements: {reason}")
    system = core.build(cset)
    into = core.Build(system, cset.mechanism)
    for e in forces:
        system.add_force(lowering.lower(e, "force", into))
    return system


def set_ctrl(system, forces) -> None:
    """The controls of the actuator elements among ``forces`` (their ``ctrl`` last set
    by :meth:`~pfaff.simulate.actuators.Actuation.tau`, clamped to each ctrlrange) into
    the core ``system`` built with them (``System.set_ctrl``; nothing without them),
    and the activations of those with activation dynamics (``System.set_act``)."""
    acts = [e for e in forces if isinstance(e, ActuatorForce)]
    if acts:
        u = np.zeros(1 + max(e.index for e in acts))
        for e in acts:
            u[e.index] = e.actuator.clamp_ctrl(e.ctrl)
        system.set_ctrl(u)
    dyn = [e for e in acts if e.iact >= 0]
    if dyn:  # their activations at the time from which the ctrl is held (one t0)
        act = np.zeros(1 + max(e.iact for e in dyn))
        for e in dyn:
            act[e.iact] = e.act0
        system.set_act(act, dyn[0].t0)


def add_held(system, mech, held) -> None:
    """The force elements ``held`` of a held law (:func:`held_law`, which lowers only
    elements that have a lowering) into the core ``system`` of ``mech``: sampled by the
    core at the controller's instants."""
    into = core.Build(system, mech)
    for e in held:
        system.add_held_force(lowering.lower(e, "force", into))


def configure(system, opt) -> None:
    """The options ``opt`` into a core system: its option fields
    (:func:`pfaff.core.options`) and its integrator: a fixed-step tableau
    (:data:`~pfaff.simulate.tableaus.TABLEAUS`: one registry for both engines) or
    SciPy's embedded pair of an adaptive one
    (:func:`~pfaff.simulate.tableaus.adaptive_pair`)."""
    core.options(system, opt)
    if opt.integrator in TABLEAUS:
        tab = TABLEAUS[opt.integrator]
        system.set_tableau(np.array(tab.a, dtype=float), np.array(tab.b, dtype=float))
        return
    p = adaptive_pair(opt.integrator)  # ValueError for an integrator the core lacks
    system.set_adaptive(p.a, p.b, p.c, p.e, p.e3, p.order)


def record_shapes(cset: ConstraintSet, na: int = 0) -> list[tuple[int, ...]]:
    """The per-sample shapes of a core system's record buffers for ``cset`` with ``na``
    activations (the series of :data:`~pfaff.simulate.policy.CORE_SERIES`, in their
    order)."""
    mech = cset.mechanism
    sizes = {"nq": mech.nq, "nv": mech.nv, "m": cset.dim, "m_h": len(cset.holonomic_rows)}
    sizes["na"] = int(na)
    return [series_shape(s, sizes) for s in CORE_SERIES]


def attach_buffers(system, shapes, cap: int) -> tuple[list, list]:
    """New record buffers for ``cap`` samples handed to the core ``system``: those of
    :data:`~pfaff.simulate.policy.CORE_SERIES` (``shapes``: :func:`record_shapes`) and
    of :data:`~pfaff.simulate.policy.FORCE_SERIES` (zero without elements). Returns
    both lists, in the order of their series (:func:`~pfaff.simulate.policy.by_name`
    names them)."""
    bufs = [np.empty((cap, *shape)) for shape in shapes]
    fbufs = [np.zeros(cap) for _ in FORCE_SERIES]
    system.set_buffers(bufs, cap)
    system.set_force_buffers(*fbufs)
    return bufs, fbufs


def project_start(system, q: np.ndarray, v: np.ndarray, opt) -> tuple[np.ndarray, np.ndarray]:
    """Set the core ``system``'s state to ``(q, v)`` brought onto the constraint manifold
    by the core (``System.project_state``: :data:`~pfaff.simulate.policy.START_ITERATIONS`
    Newton-Raphson iterations, then the M-metric velocity projection at the corrected q,
    the rule of :func:`~pfaff.simulate.project_state` on NumPy) and return it. Raises
    :class:`InitialStateError` (:func:`~pfaff.simulate.policy.start_message`) when it
    cannot be: ``simulate``, the Simulator and rollouts on the core all start here."""
    system.set_state(q, v)
    err, iterations = system.project_state(START_ITERATIONS)
    message = start_message(err, iterations, opt.position_tol)
    if message is not None:
        raise InitialStateError(message)
    return system.q, system.v


def held_law(controller, q: np.ndarray, mech) -> list | None:
    """The force elements of a controller whose law is built-in force elements sampled
    and held (a ``held_law`` lowering of its exact type, :mod:`pfaff.lowering`), bound
    to ``mech``; None when it has none, one element has no lowering or one does not
    bind to ``mech`` (e.g. a damper on a coordinate index where nq != nv): the
    controller is then called per sample. The core samples the elements itself and
    Python is not called per sample. A subclass (which may change ``__call__``) has
    no held law until it registers one."""
    lw = lowering.lowering(controller, "held_law")
    if lw is None:
        return None
    elements = list(lw.lower(controller, q))
    if lowering.first_reason(elements, "force") is not None:
        return None
    try:
        for e in elements:
            e.bind(mech)
    except ModelError:
        return None
    return elements


def run(
    cset: ConstraintSet,
    q: np.ndarray,
    v: np.ndarray,
    n_steps: int,
    opt,
    controller,
    tau_held: np.ndarray,
    t0: float,
    frames: tuple[str, ...],
    traj: Trajectory,
    bar=None,
    forces=(),
    next_control: float | None = None,
    stop=None,
) -> Trajectory:
    """Run ``n_steps`` steps from the state ``(q, v)`` on the core, which first brings it
    onto the constraint manifold (:func:`project_start`, the rule of
    :func:`~pfaff.simulate.project_state` on NumPy; :class:`InitialStateError` when it
    cannot).

    ``controller``: a :class:`~pfaff.simulate.record.Controller` (or None).
    ``frames``: what a controller's snapshot holds (the constraints' and the
    controller's frames). ``forces``: the bound built-in force elements (their series
    ``force_work`` and ``force_potential`` recorded when given). ``stop(t, snap,
    constraint_eval)``: checked before every step, after the controller's sample, as
    the NumPy engine does; the core then steps one step per call and the snapshot is
    the controller's record (taken for the check when no sample is due). Raises
    :class:`SimulationError` as the NumPy engine does.
    """
    mech = cset.mechanism
    system = build(cset, forces)
    configure(system, opt)
    q, v = project_start(system, q, v, opt)
    held = held_law(controller, q, mech)  # the law of the projected start
    if held is not None:  # the controller's law sampled by the core itself
        add_held(system, mech, held)
        controller = None
    frames = tuple(dict.fromkeys(frames))  # one slot each, in order
    for name in frames:
        system.observe(name)
    cap = record_count(n_steps, opt.record_every)
    bufs, fbufs = attach_buffers(system, record_shapes(cset, activation_count(forces)), cap)
    system.set_tau(tau_held)
    control_dt = opt.control_dt or opt.dt
    dt = opt.dt
    needs_sensors = controller is not None and bool(controller.needs_sensors)
    hol = cset.holonomic_rows
    nv, rank_tol = mech.nv, opt.rank_tol
    clock = SampleClock(control_dt, t0 if next_control is None else next_control)
    if held is not None:  # the core applies the clock's rule itself (System::run)
        system.set_held(clock.next, clock.period)
    k = 0
    # the next controller sample (a chained run: the first at next_control)
    k_due = clock.first_due_step(0, t0, dt, n_steps) if controller is not None else n_steps + 1
    sig_log: list[tuple[int, dict]] = []  # (records so far, the controller's signals)

    try:
        while k <= n_steps:
            t = t0 + k * dt
            rec = None
            if k == k_due:
                rec = sample_record(system, frames, hol, t, needs_sensors, nv, rank_tol)
                tau_held = controller_torque(controller(t, rec), mech.nv, t, k, traj)
                system.set_tau(tau_held)
                clock.advance()
                k_due = clock.first_due_step(k + 1, t0, dt, n_steps)
            stopping = False
            if stop is not None and k < n_steps:
                if rec is None:
                    rec = sample_record(system, frames, hol, t, False, nv, rank_tol)
                stopping = bool(stop(t, rec.snap, rec.constraints))
                k1 = k + 1
            else:
                k1 = min(k_due, k + (watch.STEPS_PER_CALL if watch.active() else CHUNK))
            # a stop records this sample and takes no step (the core's last step)
            last = k if stopping else n_steps
            st = system.run(k, k1, last, t0)
            if controller is not None and (sig_log or controller.signals):
                # the signals of the samples recorded in this stretch
                sig_log.append((system.recorded, dict(controller.signals)))
            if st.code:
                raise SimulationError(status_message(cset, st, opt.method), traj)
            if bar is not None:
                bar.update(min(k1, n_steps) - k)
            if watch.active() and min(k1, n_steps) > k:  # the state the stretch reached
                watch.notify(t0 + min(k1, n_steps) * dt, system.q)
            if stopping:
                traj.stopped_at = t
                break
            k = k1
    finally:  # the samples into the trajectory, also for a partial run
        _fill(traj, bufs, system, sig_log, fbufs)
        if held is not None:
            clock.next = system.next_control
        traj.next_control = clock.next if controller is not None or held is not None else None
    return traj


def sample_record(system, frames, hol, t, needs_sensors, nv, rank_tol) -> StepRecord:
    """The controller's record at the core's current state, from one call into the
    core (a ``pfaff._core.Sample``, its fields views of the core's arrays): M, h, A,
    drift, Phi and the projection the core took (``A^+ = V1 W^T``, N, P, C v), the
    readings if asked, the snapshot's frames (observed by the core: ``frames`` in the
    order of their slots), g and the energies, as :meth:`PinocchioMechanism.compute`
    gives them. Nothing is evaluated twice, and Python calls no Pinocchio function."""
    s = system.sample(needs_sensors)
    snap = Snapshot(s.q, s.v, s.M, s.h, s.g, s.kinetic, s.potential)
    fields = _frame_fields(nv)
    for name, f in zip(frames, s.frames):  # each row: p, R, J, drift (_core.frame_row)
        snap.frames[name] = FrameState(*(get(f) for get in fields))
    proj = Projection(s.P, s.Cv, s.V1, None, None, s.rank, s.sigma_min)
    proj.Rinv, proj.N = s.W, s.N
    sensors = {"F": s.F, "lambda": s.lam} if needs_sensors else None
    return StepRecord(t, snap, ConstraintEval(s.A, s.drift, s.phi, hol), proj, sensors, rank_tol)


@functools.cache
def _frame_fields(nv: int) -> tuple:
    """Readers of the fields p, R, J, drift of an observed frame's row of a core
    ``Sample`` (the layout ``_core.frame_row`` gives, read by name): each a function of
    the row giving the field's array in its shape."""
    layout = {name: (a, b, r, c) for name, a, b, r, c in core._core.frame_row(nv)}

    def reader(name: str):
        a, b, r, c = layout[name]
        return (lambda f: f[a:b]) if c == 1 else (lambda f: f[a:b].reshape(r, c))

    return tuple(reader(name) for name in ("p", "R", "J", "drift"))


def _fill(traj: Trajectory, bufs: list[np.ndarray], system, sig_log, fbufs) -> None:
    """Hand the recorded samples to ``traj``: the times into its list, the signals per
    sample as :meth:`Trajectory.append_signals` records them, the other series as
    blocks of this run's record buffers (:meth:`Trajectory.add_block`)."""
    n = system.recorded
    named = by_name(CORE_SERIES, bufs)
    # the times (and the signals, indexed by them) first: reading rows moves blocks in
    t_col, t_buf, done = traj.rows["t"], named["t"], 0
    for upto, sig in sig_log:  # append_signals indexes the last samples by len(t)
        upto = min(upto, n)
        if upto > done:
            t_col.extend(t_buf[done:upto].tolist())
            traj.append_signals(sig, upto - done)
            done = upto
    t_col.extend(t_buf[done:n].tolist())
    named.update(by_name(FORCE_SERIES, fbufs))  # zero without elements
    for name, b in named.items():  # the buffers are this run's own
        if name != "t":
            traj.add_block(name, b[:n])
    traj.steps = system.steps
    traj.newton_failures = system.newton_failures
    traj.kkt_cond_max = system.kkt_cond_max
