"""Joint limits as exact unilateral constraints: located events, impacts, held rows.

A limit keeps a one-dof joint's coordinate in ``[lower, upper]`` (a
:class:`JointLimit`), a fixed tendon's length, a linear combination of joint
coordinates (a :class:`~pfaff.simulate.limit_bounds.TendonLimit`), or a ball joint's
rotation angle below its bound (a :class:`~pfaff.simulate.limit_bounds.BallLimit`).
The run is a chain of :func:`~pfaff.simulate.simulate` phases
(:class:`~pfaff.simulate.phases.PhaseChain`), so both engines run it unchanged:

* **Event location.** A phase's ``stop`` callback fires when a free coordinate is past a
  bound at the end of a step. The sample past it is dropped and the crossing time inside
  that step is found by Brent's method on ``s -> x(s) - bound``, where ``x(s)`` (the
  coordinate or the tendon's length) is that of one step of the run's own integrator of
  length ``s`` from the step's start state (on the same engine): the event state is the
  integrator's own state at the crossing, and the time is exact to
  ``event_tol`` (1e-15 s by default).
* **Impact.** The velocity is projected in the metric of M (the least change of kinetic
  energy, as :func:`~pfaff.simulate.integrator.project_state` does) onto
  ``{A v = 0, v_i = -e v_i^-}``: the loop's rows are kept and the limit row's velocity is
  reversed with the restitution ``e`` (Newton's law; ``e = 0``, plastic, by default). The
  kinetic energy lost is recorded in the event and in :attr:`LimitedRun.impact_loss`.
* **Contact.** A plastic impact holds the limit as a bilateral row
  :class:`~pfaff.constraints.LockedJoint` at the bound. With ``M a + h = tau - A^T
  lambda`` (pfaff's sign), the row pushes the coordinate back inside while ``lambda <= 0``
  at a lower bound and ``lambda >= 0`` at an upper one; the recorded ``lambda`` is
  checked at every sample and the limit is released at the first sample where it would
  pull (complementarity). The release is located to the sample (``dt``), not root-found.
* **No chatter** (:class:`~pfaff.simulate.limit_events.EventGuard`). An impact whose
  approach speed is at most ``rest_speed`` (default ``position_tol / dt``: it would move
  the joint less than the position tolerance in a step) is plastic, so the rebounds of an
  elastic stop end in a held stop after finitely many events (Zeno). A free coordinate
  counts as past a bound only beyond ``position_tol``, so a release at the bound does
  not read round-off as a new crossing; a limit impacted again within one step of its
  release is held for a step; after ``max_events`` events within one step every impact
  is plastic and no held limit is released before a step has passed. A step therefore
  has at most ``max_events`` events plus one impact per limit, and the run always ends.

By default the steps after an event are of ``dt`` from the event (``grid="event"``);
``grid="fixed"`` finishes the step an event falls in with a short step to its end, so
the samples stay on ``t0 + k dt`` (plus the events' own samples) and a run cut into
pieces (each from where the last ended, with its ``held`` set) is the same run: the
stepping of :class:`pfaff.Simulator`.

Where the core runs the system (``engine="core"``, or ``"auto"``), the whole run is one
call into C++ (:mod:`pfaff.simulate.limits_core`) by these rules; :func:`phase_loop`,
the phases above, is the reference it is held to and runs the NumPy engine.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.simulate import core_engine
from pfaff.simulate.actuators import start_act
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.integrator import check_run_record, project_state
from pfaff.simulate.limit_bounds import BallLimit, Bound, TendonLimit, check_limit
from pfaff.simulate.limit_events import (
    MAX_EVENTS_PER_STEP,
    EventGuard,
    LimitedRun,
    LimitEvent,
    Watch,
    impact,
    limit_value,
    locate,
    metric_impact,
    pulling,
    release,
    thin,
)
from pfaff.simulate.limits_core import HOLD_CHUNK, RELEASE_TOL, limited_system, run_core
from pfaff.simulate.options import SimOptions, engine_choice
from pfaff.simulate.phases import PhaseChain
from pfaff.simulate.record import as_controller

__all__ = [
    "HOLD_CHUNK",
    "MAX_EVENTS_PER_STEP",
    "RELEASE_TOL",
    "BallLimit",
    "JointLimit",
    "TendonLimit",
    "LimitEvent",
    "LimitedRun",
    "check_inside",
    "held_rows",
    "limit_value",
    "metric_impact",
    "phase_loop",
    "pulling",
    "simulate_limited",
]


@dataclass(frozen=True)
class JointLimit:
    """``lower <= q_joint <= upper`` for a one-dof (hinge or slide) joint.

    Parameters
    ----------
    joint : the joint's name (Pinocchio mechanisms) or its coordinate index (nq == nv).
    lower, upper : the bounds [rad or m]; ``-inf`` / ``inf`` for a one-sided limit.
    restitution : Newton's coefficient ``e`` in [0, 1]: the limit row's velocity after
        an impact is ``-e`` times the one before (0: plastic, the limit is then held).
    """

    joint: str | int
    lower: float
    upper: float
    restitution: float = 0.0

    def __post_init__(self) -> None:
        check_limit(f"joint limit of {self.joint!r}", self.lower, self.upper, self.restitution)


def simulate_limited(
    cset: ConstraintSet,
    q0: np.ndarray,
    v0: np.ndarray,
    t_end: float,
    limits: list[JointLimit],
    options: SimOptions | None = None,
    controller=None,
    forces=(),
    t0: float = 0.0,
    tau: np.ndarray | None = None,
    event_tol: float = 1e-15,
    release_tol: float = RELEASE_TOL,
    rest_speed: float | None = None,
    held: dict[int, str] | None = None,
    grid: str = "event",
    max_events: int = MAX_EVENTS_PER_STEP,
    contacts=None,
    restitution: float = 0.0,
    act0: np.ndarray | None = None,
) -> LimitedRun:
    """Simulate ``cset`` from ``(q0, v0)`` to ``t_end`` with the joint ``limits`` held as
    unilateral constraints (module docstring: event location, impact, contact).

    Parameters
    ----------
    cset, q0, v0, t_end, options, controller, forces, t0, tau : as for
        :func:`~pfaff.simulate.simulate` (the controller is sampled again at each event).
    limits : the :class:`JointLimit` s.
    event_tol : the crossing time's tolerance [s].
    release_tol : a held limit is released when its multiplier pulls by more than this
        [N m or N].
    rest_speed : an impact whose approach speed is at most this [rad/s or m/s] is plastic
        and holds the stop (the rebounds of an elastic limit end instead of chattering).
        Default: ``position_tol / dt`` of the options (but at least 1e-9).
    held : the limits held at the start, ``{index in limits: "lower" or "upper"}`` (the
        ``held`` of the run this one goes on from; the joint must be at that bound):
        they start as held rows, not as new impacts. Default: none.
    grid : ``"event"`` (default): after an event the steps are of ``dt`` from it;
        ``"fixed"``: the step an event falls in is finished to its end, so the samples
        stay on ``t0 + k dt`` (``t_end - t0`` should then be a multiple of ``dt``).
    max_events : events within one step ``dt`` after which the step's impacts are
        plastic and its held stops kept for a step (default 8).
    contacts : the contact pairs to hold too (:class:`pfaff.contact.model.FileContacts`,
        from ``load_model(path, contact=True)``); they run on the compiled core only.
    restitution : Newton's restitution coefficient of the contacts' impacts, in [0, 1].
    act0 : the activations (na,) at ``t0`` of the actuator elements with activation
        dynamics among ``forces`` (:func:`~pfaff.simulate.actuators.start_act`).

    Returns
    -------
    LimitedRun: the joined trajectory, the events and the limits held at the end. A start
    outside a limit is refused (ValueError naming the joint, its value and its range), as
    are a bad ``grid``, a ``held`` limit not at its bound and a record too large for the
    memory available (``RecordTooLarge``, before anything runs). A failed run on the core
    raises :class:`~pfaff.simulate.limits_core.LimitedRunError` (the samples, events and
    held set up to the failure), on NumPy a ``SimulationError``.
    """
    opt = options or SimOptions()
    opt.validate()
    check_run_record(cset, t0, t_end, opt, forces)  # a record too large is refused first
    if grid not in ("event", "fixed"):
        raise ValueError(f"grid = {grid!r}; valid: 'event', 'fixed'")
    if rest_speed is None:
        rest_speed = max(1e-9, opt.position_tol / opt.dt)
    if not 0.0 <= restitution <= 1.0:
        raise ValueError(f"restitution = {restitution!r}; valid: a number in [0, 1]")
    start_act(forces, act0, t0)
    args = (cset, q0, v0, t_end, limits, opt, forces, t0, tau, event_tol, release_tol,
            rest_speed, held, grid, max_events)  # fmt: skip
    engine, why = engine_choice(cset, opt, tuple(forces))
    if contacts is not None and contacts.pairs and engine != "core":
        raise ValueError(
            "contacts run on the compiled core only, and this system runs on the NumPy "
            f"engine ({why or 'engine=numpy asked for'})"
        )
    if engine == "core" and t_end - t0 > 1e-9 * opt.dt:
        return _on_core(*args, controller=controller, contacts=contacts, restitution=restitution)
    return phase_loop(*args, controller=controller)


def _on_core(cset, q0, v0, t_end, limits, opt, forces, t0, tau, event_tol, release_tol,
             rest_speed, held, grid, max_events, controller=None, contacts=None,
             restitution=0.0) -> LimitedRun:  # fmt: skip
    """:func:`simulate_limited` in one call into the core (:mod:`.limits_core`)."""
    controller = as_controller(controller)
    frames = () if controller is None else tuple(controller.frames)
    cset.mechanism.check_frames(frames)
    forces = ForceSet(cset.mechanism, forces).elements  # bound to the mechanism
    proto = core_engine.build(cset, forces)
    core_engine.configure(proto, opt)
    sys_ = limited_system(proto, cset.mechanism, limits, rest_speed, contacts, restitution)
    if controller is not None:  # the frames of its record, in the sampler's order
        for name in dict.fromkeys((*cset.frames, *frames)):
            sys_.observe(name)
    q, v = core_engine.project_start(sys_, np.asarray(q0, float), np.asarray(v0, float), opt)
    law = None if controller is None else core_engine.held_law(controller, q, cset.mechanism)
    if law is not None:  # a built-in law: the core samples it on the run's clock
        core_engine.add_held(sys_, cset.mechanism, law)
        sys_.set_held(t0, opt.control_dt or opt.dt)
        controller = None
    bounds = [Bound(lim, cset.mechanism) for lim in limits]
    held = _start_held(held, bounds, q)
    check_inside(limits, cset.mechanism, q, held)
    sys_.set_state(q, v)
    core_engine.set_ctrl(sys_, forces)
    return run_core(
        sys_, cset, limits, tau, t0, t_end, held, grid, opt.record_every, max_events,
        event_tol, release_tol, controller, opt.control_dt or opt.dt, contacts,
    )  # fmt: skip


def phase_loop(cset, q0, v0, t_end, limits, opt, forces, t0, tau, event_tol, release_tol,
               rest_speed, held, grid, max_events, controller=None) -> LimitedRun:  # fmt: skip
    """The Python phase loop of :func:`simulate_limited` (its arguments, ``opt`` and
    ``rest_speed`` given): the reference the core's run is held to, and the run of a
    controlled system or one the core cannot run (phases on ``opt``'s engine).

    Its phases record every step (a release and a located step read every sample, so
    the record stride never moves an event) and are thinned to ``opt.record_every``
    at the end (:func:`~pfaff.simulate.limit_events.thin`)."""
    every, opt = opt.record_every, dataclasses.replace(opt, record_every=1)
    mech = cset.mechanism
    bounds = [Bound(lim, mech) for lim in limits]
    q, v = project_state(cset, np.asarray(q0, float), np.asarray(v0, float), opt)
    held = _start_held(held, bounds, q)  # bound index -> side held
    check_inside(limits, mech, q, held)
    chain = PhaseChain(q, v, opt, controller, t0, forces)
    chain.tau = None if tau is None else np.asarray(tau, float)
    events: list[LimitEvent] = []
    guard = EventGuard(opt.dt, rest_speed, max_events)
    while t_end - chain.t > 1e-9 * opt.dt:
        cs = held_rows(cset, limits, held)
        watch = Watch(bounds, held, opt.position_tol)
        rest = t_end - chain.t
        n = int(np.floor(rest / opt.dt + 1e-9))  # whole steps left (the grid moves at events)
        if grid == "fixed" and (to_grid := _to_grid(chain.t, t0, opt.dt)) is not None:
            rest, n = min(rest, to_grid), 0  # finish the step the event fell in
        if held:
            n = min(n, HOLD_CHUNK)
        if n == 0:  # the run's last sliver: one short step
            o = dataclasses.replace(opt, dt=rest)
            tr = chain.run(cs, rest, stop=watch, options=o)
        else:
            tr = chain.run(cs, n * opt.dt, stop=watch)
        if held and release(chain, tr, cset.dim, held, bounds, events, release_tol, guard):
            continue
        if tr.stopped_at is None and len(tr) > 1:  # simulate's stop skips the last sample
            a = tr.arrays()
            last = SimpleNamespace(q=a["q"][-1], v=a["v"][-1])
            tr.stopped_at = float(a["t"][-1]) if watch(a["t"][-1], last, None) else None
        if tr.stopped_at is None:
            continue
        i, s = locate(cs, chain, tr, watch, bounds, opt, forces, event_tol)
        if s > 1e-9 * opt.dt:  # a shorter step is below the time's resolution
            chain.run(cs, s, options=dataclasses.replace(opt, dt=s))
        impact(chain, cs, bounds, i, held, events, opt, guard)
    for tr in chain.phases:
        thin(tr, every)
    return LimitedRun(chain.trajectory(cset.dim + len(bounds)), events, dict(held))


def _start_held(held, bounds, q) -> dict[int, str]:
    """The ``held`` argument checked: indices of ``bounds``, sides, the joint at its bound."""
    out: dict[int, str] = {}
    for i, side in (held or {}).items():
        if not (isinstance(i, int | np.integer) and 0 <= i < len(bounds)):
            raise ValueError(f"held: limit index {i!r}, valid: 0 to {len(bounds) - 1}")
        if side not in ("lower", "upper"):
            raise ValueError(f"held: side {side!r} of limit {i}, valid: 'lower', 'upper'")
        b, x = bounds[i], limit_value(bounds[i].lim, side)
        if abs(b.value(q) - x) > 1e-9:
            raise ValueError(
                f"held: joint {b.lim.joint!r} is held at its {side} bound {x!r} but q = "
                f"{b.value(q)!r}"
            )
        out[int(i)] = side
    return out


def _to_grid(t: float, t0: float, dt: float) -> float | None:
    """The time from ``t`` to the next point of the grid ``t0 + k dt`` when ``t`` is off
    it (an event's time), else None."""
    k = (t - t0) / dt
    below = np.floor(k + 1e-9)
    if k - below <= 1e-9:
        return None
    return float(t0 + (below + 1) * dt - t)


def held_rows(cset: ConstraintSet, limits: list[JointLimit], held: dict) -> ConstraintSet:
    """The loop's rows plus a :class:`~pfaff.constraints.LockedJoint` row (a tendon's
    limit: a :class:`~pfaff.constraints.CoordinateLock`) at its bound per held limit
    (``held``: limit index -> side), in the order of ``held``."""
    mech = cset.mechanism
    locks = [
        Bound(limits[i], mech).lock(limit_value(limits[i], side), f"limit {i}")
        for i, side in held.items()
    ]
    return ConstraintSet(cset.mechanism, [*cset.constraints, *locks])


def check_inside(limits: list[JointLimit], mech, q: np.ndarray, held=(), hint: str = "") -> None:
    """Refuse a ``q`` outside a limit not held (ValueError naming the joint, its value,
    its range, then ``hint``)."""
    for i, lim in enumerate(limits):
        x = Bound(lim, mech).value(q)
        if i not in held and not lim.lower - 1e-12 <= x <= lim.upper + 1e-12:
            what = "tendon" if isinstance(lim, TendonLimit) else "joint"
            what = "ball joint" if isinstance(lim, BallLimit) else what
            raise ValueError(
                f"the start is outside the limit of {what} {lim.joint!r}: q = {x!r} is not "
                f"in [{lim.lower!r}, {lim.upper!r}]{hint}"
            )
