"""A :class:`pfaff.Simulator`'s steps through its system's joint limits.

``Simulator.step(tau, ctrl, n)`` on a system with :attr:`pfaff.System.limits` (and
``limits=True``, the default) is :func:`~pfaff.simulate.limits.simulate_limited` from the
Simulator's state over ``n`` steps of ``dt``, with the torque held, on the Simulator's
engine: located events, the M-metric impact with restitution, plastic contact held as a
row while its multiplier pushes (``pfaff.simulate.limits``). Three things carry across
calls, so that any cutting of a run into ``step`` calls is the same run:

* the limits and contact points held (a joint resting on its stop at the end of a call
  starts the next call held, not as a new impact);
* the sample grid ``k dt``: a step an event falls in is finished to its end after the
  impact (``grid="fixed"``), so ``sim.t`` stays ``steps * dt``; the record gains the
  event's own sample;
* on the compiled core, the run's clocks (``pfaff._core.RunMemory``): the no-chatter
  rule's stops pinned and releases, the slipping points' directions, the stuck points
  held stuck to a step's end. A call that ends inside such a hold leaves it to the next,
  and a slip its last instant starts is the next call's event (that call's start may
  stop it at once, at zero slip speed: then, as in one call, neither is an event).

On the compiled core a call is one call into C++ (``limits_core.run_core``,
``src/cpp/sim/limits.cpp``), with any record stride: the core system holds the
limits (``add_limit``), a held limit is a row toggled in its active row set, and the
events are located, applied and bounded inside the compiled loop by the rules of the
Python phase loop (:func:`~pfaff.simulate.limits.phase_loop`), the reference the tests
hold it to. A call whose core run fails raises
:class:`~pfaff.simulate.limits_core.LimitedRunError` (the samples and events up to the
failure); it is not run again in Python.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from pfaff.contact.penetration import Penetration, deep_start_hint
from pfaff.simulate.core_engine import set_ctrl
from pfaff.simulate.limit_events import MAX_EVENTS_PER_STEP, ContactEvent
from pfaff.simulate.limits import LimitEvent, check_inside, simulate_limited
from pfaff.simulate.limits_core import LimitedRunError, held_rows, limited_system, run_core
from pfaff.simulate.options import SimOptions
from pfaff.simulate.policy import StatusCode
from pfaff.simulate.trajectory import Trajectory

__all__ = ["LimitStepper", "contacts_held", "holds_events", "limits_not_held"]


def contacts_held(system):
    """The contact pairs a Simulator of ``system`` holds (its
    :class:`pfaff.contact.model.FileContacts` with at least one pair), else None."""
    c = system.contacts
    return c if c is not None and c.pairs else None


#: the laws of friction in a contact impact (``Simulator(impact_friction=...)``)
IMPACT_FRICTION = ("stick", "coulomb")


def contact_laws(restitution, impact_friction: str) -> float:
    """Newton's ``restitution`` as a float in [0, 1] once ``impact_friction`` is one of
    :data:`IMPACT_FRICTION`; ValueError naming the one that is not, and what is valid."""
    e = float(restitution)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"restitution = {restitution!r}, valid: a number in [0, 1]")
    if impact_friction not in IMPACT_FRICTION:
        valid = ", ".join(IMPACT_FRICTION)
        raise ValueError(f"impact_friction = {impact_friction!r}, valid: {valid}")
    return e


def holds_events(system, limits: bool = True) -> bool:
    """A Simulator of ``system`` steps through a :class:`LimitStepper`: its joint limits
    held (``limits``) or contact pairs to hold."""
    return bool(system.limits and limits) or contacts_held(system) is not None


def limits_not_held(system, who: str = "a rollout") -> str:
    """The warning of a stepper of a system with joint limits that steps without them
    (``pfaff.rollout``, or a Simulator made with ``limits=False``)."""
    names = ", ".join(str(lim.joint) for lim in system.limits[:6])
    return (
        f"the joint limits of {names}{', ...' if len(system.limits) > 6 else ''} are not "
        f"held by {who} (it steps through them): a pfaff.Simulator with limits=True "
        "(its default), pfaff.simulate.limits.simulate_limited or the run command "
        "holds them"
    )


class LimitStepper:
    """The limited steps of one Simulator: its system's limits, the held set and the
    events since the reset.

    Parameters
    ----------
    system : the :class:`pfaff.System` (its ``cset`` and ``limits``).
    options : the Simulator's :class:`~pfaff.simulate.SimOptions`.
    forces : its bound force elements; engine : ``"core"`` or ``"numpy"``.
    """

    def __init__(
        self,
        system,
        options: SimOptions,
        forces,
        engine: str,
        proto=None,
        limits: bool = True,
        restitution: float = 0.0,
        max_events: int = MAX_EVENTS_PER_STEP,
        impact_friction: str = "coulomb",
    ) -> None:
        self.system, self.forces = system, tuple(forces)
        self.options = dataclasses.replace(options, engine=engine)
        self.limits = list(system.limits) if limits else []
        self.contacts = contacts_held(system)
        self.restitution = float(restitution)
        self.impact_friction = impact_friction
        self.max_events = int(max_events)
        if self.max_events < 1:
            raise ValueError(f"max_events = {max_events!r}, valid: an int >= 1")
        if self.contacts is not None and proto is None:
            raise ValueError(
                "contacts run on the compiled core only, and this system runs on the NumPy "
                "engine (sim.warnings of a Simulator without contacts says why); load it "
                "with contact=False"
            )
        self._core = None if proto is None else self._limited_system(proto)
        self._pen = None  # MuJoCo's narrow phase on a start (check_start), made once
        self.reset()

    def __getstate__(self) -> dict:
        """Pickled without its compiled system (:meth:`restore` gives the new one)."""
        state = self.__dict__.copy()
        state.update(_core=None, _pen=None, _memory=None)
        return state

    def restore(self, proto) -> None:
        """The fast path's core system of an unpickled stepper (the limits and contact
        pairs added again; a held contact point is taken up again by the next step, as a
        plastic impact at rest)."""
        self._core = self._limited_system(proto)
        self.contact_held = []
        self._memory = self._new_memory()

    def _limited_system(self, proto):
        """A copy of the Simulator's core system ``proto`` holding the limits
        (``rest_speed`` the default of ``simulate_limited``)."""
        rest_speed = max(1e-9, self.options.position_tol / self.options.dt)
        return limited_system(
            proto, self.system.mechanism, self.limits, rest_speed, self.contacts,
            self.restitution, self.impact_friction == "coulomb",
        )  # fmt: skip

    def reset(self) -> None:
        """No limit held, no contact held, no event, the run's clocks new."""
        self.held: dict[int, str] = {}
        self.contact_held: list[tuple[int, int]] = []
        self.events: list[LimitEvent] = []
        self._memory = self._new_memory()

    def _new_memory(self):
        """A new ``pfaff._core.RunMemory`` for the core's runs (None: none)."""
        from pfaff import core

        return None if self._core is None else core.run_memory()

    def run(self, q, v, t: float, tau, n: int, keep: bool = True) -> tuple[Trajectory, list]:
        """``n`` steps of ``dt`` from ``(q, v)`` at time ``t`` with ``tau`` held: the
        trajectory and the events. ``keep``: carry the held set and the events on (else
        the stepper is left as it was)."""
        if self._core is not None:
            memory = self._memory if keep else self._memory.copy()
            traj, events, held, contact_held = self._run_core(q, v, t, tau, n, memory)
        else:
            dt = self.options.dt
            run = simulate_limited(
                self.system.cset, q, v, t + n * dt, self.limits, self.options,
                forces=self.forces, t0=t, tau=tau, held=self.held, grid="fixed",
                max_events=self.max_events,
            )  # fmt: skip
            traj, events, held = run.trajectory, run.events, run.held
            contact_held = []
        if keep:
            self.held, self.contact_held = held, contact_held
            self.events.extend(events)
        else:  # the core renumbered the held contact rows to the first ones, in order
            self.contact_held = [(i, j) for j, (i, _) in enumerate(self.contact_held)]
        return traj, events

    def _run_core(self, q, v, t: float, tau, n: int, memory):
        """The limited run in one call into the core: ``(trajectory, events, held at the
        end)`` as ``simulate_limited(..., grid="fixed")`` gives them, ``memory`` the
        clocks of the call before (written where the run succeeds). A failed core run
        raises :class:`~pfaff.simulate.limits_core.LimitedRunError` (the stepper keeps
        its held set and events)."""
        sys_ = self._core
        sys_.set_state(q, v)
        set_ctrl(sys_, self.forces)
        t_end = t + n * self.options.dt
        try:
            run = run_core(
                sys_, self.system.cset, self.limits, tau, t, t_end, self.held, "fixed",
                self.options.record_every, max_events=self.max_events,
                contacts=self.contacts, contact_held=self.contact_held, memory=memory,
            )  # fmt: skip
        except LimitedRunError as e:
            # the move out of a start's overlap failed: say which pairs, and what to do
            failed_start = getattr(e.status, "code", None) == StatusCode.START_FAILED
            if failed_start and self._pen is not None:
                if deep := self._pen.overlaps(q, self.options.position_tol):
                    e.args = (f"{e.args[0]}{deep_start_hint(deep)}",)
            raise
        return run.trajectory, run.events, run.held, run.contact_held

    def check_start(self, q) -> None:
        """Refuse a start outside a limit (ValueError naming the joint, its value and
        its range), as ``simulate_limited`` does at the next step; warn of a start where
        contact pairs overlap (the next step moves it out: an impact at rest)."""
        check_inside(
            self.limits, self.system.mechanism, q,
            hint=" (Simulator(..., limits=False) steps without the limits)",
        )  # fmt: skip
        if self.contacts is None:
            return
        if self._pen is None:
            self._pen = Penetration(self.contacts, self.system.q_to_qpos)
        if deep := self._pen.overlaps(q, self.options.position_tol):
            warnings.warn(
                f"the start overlaps ({'; '.join(deep[:5])}): the next step moves it out "
                "of the overlap (the least motion in the metric of M, an impact event)",
                UserWarning,
                stacklevel=3,
            )

    def closed_contacts(self, q, v, tau, pushing: bool = True) -> list:
        """The held contact points at ``(q, v)`` under ``tau``
        (:class:`pfaff.contact.model.Contact`, their normal and friction forces from the
        multipliers of the held rows: with ``pushing`` those a run reads, else the
        least-norm ones, :func:`pfaff.core.held_contacts`)."""
        from pfaff import core
        from pfaff.contact.model import Contact

        if self.contacts is None or not self.contact_held:
            return []
        sys_ = self._core
        sys_.set_state(q, v)
        sys_.set_tau(tau)
        out = []
        for k, _, _, x, y, z, nx, ny, nz, fn, tx, ty, tz, stick in core.held_contacts(
            sys_, held_rows(self.held, self.contact_held), pushing
        ):
            g1, g2 = self.contacts.names[k]
            point = (x, y, z)  # the contact point (a round point's: below its held core)
            ft = float(np.hypot(np.hypot(tx, ty), tz))
            mode = "stick" if stick else "slip"
            out.append(Contact(g1, g2, point, (nx, ny, nz), fn, ft, mode, (tx, ty, tz)))
        return out

    def held_system(self, q, v):
        """A copy of the compiled system at ``(q, v)`` with the limits and contact points
        held now as bilateral rows (``pfaff._core.set_held``): its steps are those of the
        fixed mode, what ``step_derivatives`` differentiates. None when nothing is held
        or the steps run on the NumPy engine."""
        from pfaff import core

        if self._core is None or not (self.held or self.contact_held):
            return None
        sys_ = core.clone(self._core)
        sys_.set_state(q, v)
        set_ctrl(sys_, self.forces)
        core.set_held(sys_, held_rows(self.held, self.contact_held))
        return sys_

    def held_names(self) -> list[str]:
        """The held limits as ``"joint (side)"``."""
        return [f"{self.limits[i].joint} ({side})" for i, side in self.held.items()]


def derivative_warning(stepper: LimitStepper, q, v, t: float, tau) -> str | None:
    """Why ``step_derivatives`` at this state is not the derivative of the limited step,
    else None: an event inside the step (the Jacobians are those of the mode the step
    starts in, the held rows bilateral), or, on the NumPy engine, a limit held (its row
    left out there)."""
    if stepper.held and stepper._core is None:
        return (
            f"step_derivatives: the limit of {', '.join(stepper.held_names())} is held: on "
            "the NumPy engine the Jacobians are those of the step without limits, not of "
            "the held step"
        )
    _, events = stepper.run(q, v, t, tau, 1, keep=False)
    # the slips the last call's end started, which this step reports: the mode it starts in
    pending = 0 if stepper._memory is None else stepper._memory.pending
    while pending and events and events[0].kind == "slip" and abs(events[0].t - t) <= 1e-9:
        events, pending = events[1:], pending - 1
    if not events:
        return None
    e = events[0]
    what = (
        f"{e.geom1!r} / {e.geom2!r}" if isinstance(e, ContactEvent) else
        f"the {e.side} limit of {e.joint!r}"
    )  # fmt: skip
    return (
        f"step_derivatives: the step meets an event ({e.kind} of {what} at t = {e.t:.9g} s): "
        "the Jacobians are those of the mode it starts in (the limits and contacts held "
        "now as bilateral rows, the others absent), not of the step across the event"
    )
