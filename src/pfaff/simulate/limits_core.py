"""Joint limits on the compiled core: a whole limited run in one call into C++.

:func:`~pfaff.simulate.limits.simulate_limited` (and so ``pfaff run`` of a file with
limits and the scenarios that hold limits) and a :class:`pfaff.Simulator`'s steps run
here when the core can run the system: the limits are added to a core system
(``pfaff._core.add_limit``), a held limit is a ``LockedJoint`` row toggled in its active
row set, and ``pfaff._core.run_limited`` (``src/cpp/sim/limits.cpp``) locates the events,
applies the impacts, releases the held stops and records the samples by the rules of the
Python phase loop (:func:`pfaff.simulate.limits.phase_loop`, the reference the parity
tests hold it to): both grids, the record stride, any ``t_end``.

A failed core run is not run again: :class:`LimitedRunError` carries the samples up to
the failure, the events so far, the held set and the core's status.
"""

from __future__ import annotations

import numpy as np

from pfaff import core
from pfaff.simulate import core_engine, watch
from pfaff.simulate.limit_bounds import Bound
from pfaff.simulate.limit_events import ContactEvent, LimitedRun, LimitEvent
from pfaff.simulate.policy import (
    CORE_SERIES,
    FORCE_SERIES,
    START_ITERATIONS,
    StatusCode,
    by_name,
    status_message,
)
from pfaff.simulate.recording import controller_torque
from pfaff.simulate.trajectory import SimulationError, SimulationInterrupted, Trajectory

__all__ = ["LimitedRunError", "limited_system", "run_core"]

SIDES = ("lower", "upper")
#: the steps of a held phase between two projections (the reference's HOLD_CHUNK)
HOLD_CHUNK = 64
#: a held limit is released when its multiplier pulls by more than this [N m or N]
RELEASE_TOL = 1e-10
#: a contact impact no faster is plastic [m/s]: a bounce slower rises less than the
#: resolution of a coordinate near 1 m (its location would not be resolved)
CONTACT_REST_SPEED = 1e-7
#: the core's contact event kinds, by code
CONTACT_KINDS = ("impact", "release", "stick", "slip", "jam")
#: the series of a limited run's record, in the order run_limited returns them
_RECORDED = (*CORE_SERIES, *FORCE_SERIES)


class LimitedRunError(SimulationError):
    """A limited run on the core failed.

    Attributes
    ----------
    trajectory : the samples up to the failure (as the run would have joined them).
    events : the :class:`~pfaff.simulate.limits.LimitEvent` s before the failure.
    held : the limits held when it failed (limit index -> side).
    status : the core's ``Status`` (``status.code`` a
        :class:`~pfaff.simulate.policy.StatusCode`, ``status.t`` the time).
    """

    def __init__(self, message: str, run: LimitedRun, status) -> None:
        super().__init__(message, run.trajectory)
        self.events, self.held, self.status = run.events, run.held, status


def held_rows(held: dict, contact_held=()) -> list[tuple[int, int]]:
    """The core's held rows: ``(limit index, side code)`` per held limit (``held``:
    index -> ``"lower"`` / ``"upper"``), then the held contact rows ``(len(limits) +
    pair, row)``."""
    rows = [(int(i), SIDES.index(side)) for i, side in held.items()]
    return rows + [(int(i), int(j)) for i, j in contact_held]


def limited_system(
    proto,
    mech,
    limits,
    rest_speed: float,
    contacts=None,
    restitution: float = 0.0,
    slip_impulse: bool = True,
):
    """A copy of the core system ``proto`` of ``mech`` holding the joint ``limits``
    (``pfaff._core.add_limit``; ``rest_speed``: an impact no faster is plastic) and the
    contact pairs of ``contacts`` (:class:`pfaff.contact.model.FileContacts`, Newton's
    ``restitution``; ``slip_impulse``: Coulomb's impulse on a point that slips through an
    impact). Raises ValueError naming a joint that cannot take a limit."""
    sys_ = core.clone(proto)
    for lim in limits:
        Bound(lim, mech).add_to(core, sys_, rest_speed)
    if contacts is not None and contacts.pairs:
        core.set_contact_world(sys_, contacts.mjb, contacts.path)
        for k, (p, frame, mu) in enumerate(
            zip(contacts.pairs, contacts.frames, contacts.mu, strict=True)
        ):
            frame2 = contacts.frames2[k] if k < len(contacts.frames2) else ""
            g1, g2 = p.geom1, p.geom2
            if frame2:  # two moving bodies: the held point's geom first
                g1 = contacts.point_geoms[k]
                g2 = p.geom2 if g1 == p.geom1 else p.geom1
            core.add_contact_pair(
                sys_, g1, g2, frame, float(restitution), CONTACT_REST_SPEED, mu, frame2,
                bool(slip_impulse),
            )  # fmt: skip
    return sys_


def run_core(
    sys_,
    cset,
    limits,
    tau,
    t0: float,
    t_end: float,
    held: dict[int, str],
    grid: str = "event",
    record_every: int = 1,
    max_events: int = 8,
    event_tol: float = 1e-15,
    release_tol: float = RELEASE_TOL,
    controller=None,
    control_dt: float = 0.0,
    contacts=None,
    contact_held=(),
    memory=None,
) -> LimitedRun:
    """The limited run of the core system ``sys_`` (:func:`limited_system`, its state set)
    of ``cset`` from ``t0`` to ``t_end`` with ``tau`` held, in one call: the trajectory
    (as the reference's phases join), the events and the limits held at the end.

    Raises :class:`LimitedRunError` (the samples, events and status so far) when the core
    run fails: a step (non-finite, a contact that opens, the position correction), a
    phase's start, an event's location or the event budget. ``controller`` (a
    :class:`~pfaff.simulate.record.Controller`, its frames observed by ``sys_``) is
    called from the core where a sample is due on the clock of period ``control_dt``
    from ``t0``, restarted at each event; an exception it raises is raised again.
    ``contacts``: the :class:`pfaff.contact.model.FileContacts` the system holds
    (:func:`limited_system`), ``contact_held`` the held contact rows ``(len(limits) +
    pair, row)`` the last run ended with; the run's are in its ``contact_held``, its
    contact events :class:`pfaff.contact.model.ContactEvent` s among the events.
    ``memory``: the ``pfaff._core.RunMemory`` of the call before
    (:func:`pfaff.core.run_limited`), written where the run succeeds."""
    mech = cset.mechanism
    tau = np.zeros(mech.nv) if tau is None else np.asarray(tau, float)
    pairs = held_rows(held, contact_held)
    law = None if controller is None else _Sampler(sys_, cset, controller)
    n_pairs = len(contacts.pairs) if contacts is not None and contacts.pairs else 0
    look = _look(n_pairs) if watch.active() else None  # a run not watched: no calls
    st, evs, held_end, max_held, steps, failures, rec, calls, _, forces = core.run_limited(
        sys_, tau, float(t0), float(t_end), pairs, grid == "fixed", int(record_every),
        int(max_events), float(event_tol), float(release_tol), HOLD_CHUNK, START_ITERATIONS,
        law, float(t0), float(control_dt), look, memory,
    )  # fmt: skip
    named = by_name(_RECORDED, rec)
    if look is not None and st is None and len(forces):  # a finished run's last sample
        look(named["t"][-1, 0], named["q"][-1], forces[-1] if n_pairs else ())
    # the rows' series: the loop's rows and the limits' (one per limit), or the widest
    # held set's where it is wider (contacts), as Trajectory.concat pads; phi the
    # holonomic rows and the widest held set's
    m = max(cset.dim + max(len(limits), max_held), named["lambda"].shape[1])
    m_h = len(cset.holonomic_rows) + max_held
    traj = Trajectory(mech.nq, mech.nv, m, m_h, named["act"].shape[1])
    traj.engine = "core"
    for s, b in zip(_RECORDED, rec):
        if s.name == "phi":
            b = b[:, :m_h]
        elif s.name in ("lambda", "av") and b.shape[1] < m:
            b = np.pad(b, ((0, 0), (0, m - b.shape[1])))
        if s.name == "t" and law is not None:
            _signals(traj, b[:, 0], calls, law.signals)
            continue
        traj.rows[s.name].extend(b[:, 0] if s.width is None else b)
    traj.steps, traj.newton_failures = steps, failures
    L = len(limits)
    events = [
        LimitEvent(et, limits[i].joint, ("impact", "release")[kind], SIDES[side], v_pre,
                   v_post, loss)
        if i < L else
        ContactEvent(et, CONTACT_KINDS[kind], *contacts.names[i - L], v_pre, v_post, loss)
        for et, i, kind, side, v_pre, v_post, loss in evs
    ]  # fmt: skip
    run = LimitedRun(
        traj, events, {int(i): SIDES[side] for i, side in held_end if i < L},
        [(int(i), int(j)) for i, j in held_end if i >= L],
        forces.reshape(len(forces), len(contacts.pairs), 4)
        if contacts is not None and contacts.pairs else None,
    )  # fmt: skip
    interrupted = st is not None and StatusCode(st.code) == StatusCode.INTERRUPTED
    if interrupted or (law is not None and isinstance(law.error, KeyboardInterrupt)):
        exc = SimulationInterrupted(
            f"interrupted at t = {traj.arrays()['t'][-1]:.6g} s (step {steps})", traj
        )
        exc.events, exc.held = run.events, run.held
        raise exc
    if law is not None and law.error is not None:  # the controller's own exception
        if isinstance(law.error, SimulationError):
            raise LimitedRunError(f"{law.error}", run, st) from law.error
        raise law.error
    if st is not None:
        raise LimitedRunError(failure_message(cset, st, run), run, st)
    return run


def _look(n_pairs: int):
    """The watch of a limited core run: its last recorded sample to the watchers
    (:func:`pfaff.simulate.watch.notify`), the contact forces as (pairs, 4)."""

    def look(t, q, contact) -> None:
        force = np.asarray(contact, dtype=float).reshape(n_pairs, 4) if n_pairs else None
        watch.notify(float(t), np.asarray(q, dtype=float), force)

    return look


class _Sampler:
    """The controller called from the core: its record at the core's state (the held
    limits' rows among the holonomic ones, as the phase loop's constraint set has them),
    its torque set as the one held; an exception is kept and ends the run."""

    def __init__(self, sys_, cset, controller) -> None:
        self.sys, self.controller, self.nv = sys_, controller, cset.mechanism.nv
        self.frames = tuple(dict.fromkeys((*cset.frames, *controller.frames)))
        self.hol, self.m = np.asarray(cset.holonomic_rows), cset.dim
        self.needs = bool(controller.needs_sensors)
        self.rank_tol = float(sys_.options.rank_tol)
        self.signals: list[dict] = []
        self.error: BaseException | None = None

    def __call__(self, t: float, n_held: int) -> bool:
        try:
            hol = np.concatenate([self.hol, np.arange(self.m, self.m + n_held)])
            rec = core_engine.sample_record(
                self.sys, self.frames, hol.astype(self.hol.dtype), t, self.needs, self.nv,
                self.rank_tol,
            )  # fmt: skip
            out = self.controller(t, rec)
            self.sys.set_tau(controller_torque(out, self.nv, t, 0, Trajectory(0, 0, 0, 0)))
            self.signals.append(dict(self.controller.signals))
            return True
        except BaseException as exc:  # Ctrl-C too: the run ends, its record is kept
            self.error = exc
            return False


def _signals(traj: Trajectory, t, calls, signals: list[dict]) -> None:
    """The times into ``traj`` and, per sample, the signals of the controller's last
    sample before it (``calls``: the samples taken before each recorded one)."""
    calls = np.asarray(calls, dtype=int)
    cuts = [0, *(np.flatnonzero(np.diff(calls)) + 1).tolist(), len(calls)]
    for a, b in zip(cuts[:-1], cuts[1:]):
        traj.rows["t"].extend(t[a:b].tolist())
        if b > a and calls[a] > 0:
            traj.append_signals(signals[calls[a] - 1], b - a)


def failure_message(cset, st, run: LimitedRun) -> str:
    """What failed in a limited core run (the core's status ``st``), when, and what the
    error holds."""
    code = StatusCode(st.code)
    if code == StatusCode.EVENT_BUDGET:
        why = (
            f"more events or phases than the run's budget ({st.value:.0f} events) by "
            f"t = {st.t:.6g} s"
        )
    elif code == StatusCode.START_FAILED:
        why = (
            f"the start of a phase at t = {st.t:.6g} s cannot be brought onto the manifold "
            f"(|Phi| {st.value:.3g} after {st.iterations} Newton-Raphson iterations)"
        )
    elif code == StatusCode.LOCATE_FAILED:
        why = (
            f"the crossing of a limit or contact inside the step to t = {st.t:.6g} s cannot "
            "be located (a step inside the bracket failed, and no slipping point's "
            "Painleve pole explains it: the held rows' dynamics diverge there); a "
            "smaller dt may step past it"
        )
    else:
        why = status_message(cset, st)
    held = ", ".join(f"limit {i} ({side})" for i, side in run.held.items()) or "none"
    return (
        f"limited run on the core failed ({code.name}): {why}; {len(run.trajectory)} "
        f"samples and {len(run.events)} events so far (error.trajectory, error.events), "
        f"held: {held}"
    )
