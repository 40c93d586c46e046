"""A :class:`pfaff.Simulator`'s steps through its system's joint limits.

``Simulator.step(tau, ctrl, n)`` on a system with :attr:`pfaff.System.limits` (and
``limits=True``, the default) is :func:`~pfaff.simulate.limits.simulate_limited` from the
Simulator's state over ``n`` steps of ``dt``, with the torque held, on the Simulator's
engine: located events, the M-metric impact with restitution, plastic contact held as a
row while its multiplier pushes (``pfaff.simulate.limits``). Two things carry across
calls, so that any cutting of a run into ``step`` calls is the same run:

* the limits held (a joint resting on its stop at the end of a call starts the next
  call held, not as a new impact);
* the sample grid ``k dt``: a step an event falls in is finished to its end after the
  impact (``grid="fixed"``), so ``sim.t`` stays ``steps * dt``; the record gains the
  event's own sample.

On the compiled core a call first runs its steps compiled with the rows of the limits
held (a core system per held set, built once); they are kept when no free limit's
sample is past its bound and no held limit's multiplier pulls (they are then the phase
``simulate_limited`` would run), else the call runs ``simulate_limited``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pfaff import core
from pfaff.constraints.library import joint_coordinate
from pfaff.simulate.core_engine import (
    attach_buffers,
    build,
    configure,
    record_shapes,
    set_ctrl,
)
from pfaff.simulate.limits import (
    RELEASE_TOL,
    LimitEvent,
    check_inside,
    held_rows,
    pulling,
    simulate_limited,
)
from pfaff.simulate.options import SimOptions
from pfaff.simulate.policy import CORE_SERIES, FORCE_SERIES
from pfaff.simulate.trajectory import Trajectory

__all__ = ["LimitStepper", "limits_not_held"]

#: the record's series q, and those with a column per constraint row
Q, LAM = ([s.name for s in CORE_SERIES].index(x) for x in ("q", "lambda"))
PADDED = ("lambda", "av")


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

    def __init__(self, system, options: SimOptions, forces, engine: str, proto=None) -> None:
        self.system, self.forces = system, tuple(forces)
        self.options = dataclasses.replace(options, engine=engine)
        self.limits = list(system.limits)
        mech = system.mechanism
        self._iq = np.array([joint_coordinate(mech, lim.joint)[0] for lim in self.limits])
        self._lo = np.array([float(lim.lower) for lim in self.limits])
        self._hi = np.array([float(lim.upper) for lim in self.limits])
        self._proto = proto  # the fast path's core system (None on the NumPy engine)
        self._compiled_sets: dict[tuple, tuple | None] = {}
        self._bufs: dict[int, tuple[list, list, int]] = {}  # id(core system) -> its buffers
        self.reset()

    def __getstate__(self) -> dict:
        """Pickled without its compiled systems (:meth:`restore` gives the new one)."""
        state = self.__dict__.copy()
        state.update(_proto=None, _compiled_sets={}, _bufs={})
        return state

    def restore(self, proto) -> None:
        """The fast path's core system of an unpickled stepper (its held sets are built
        again on first use)."""
        self._proto = proto

    def reset(self) -> None:
        """No limit held, no event."""
        self.held: dict[int, str] = {}
        self.events: list[LimitEvent] = []

    def run(self, q, v, t: float, tau, n: int, keep: bool = True) -> tuple[Trajectory, list]:
        """``n`` steps of ``dt`` from ``(q, v)`` at time ``t`` with ``tau`` held: the
        trajectory and the events. ``keep``: carry the held set and the events on (else
        the stepper is left as it was)."""
        fast = self._fast(q, v, t, tau, n)
        if fast is not None:
            return fast, []
        dt = self.options.dt
        run = simulate_limited(
            self.system.cset, q, v, t + n * dt, self.limits, self.options,
            forces=self.forces, t0=t, tau=tau, held=self.held, grid="fixed",
        )  # fmt: skip
        if keep:
            self.held = run.held
            self.events.extend(run.events)
        return run.trajectory, run.events

    def _compiled(self) -> tuple | None:
        """``(core system, record shapes, constraint set)`` of the held set now: the
        loop's rows plus a :class:`~pfaff.constraints.LockedJoint` row per held limit,
        as ``simulate_limited`` builds it (one per held set, built once); None when the
        core cannot run it."""
        key = tuple(self.held.items())
        if key not in self._compiled_sets:
            cset = held_rows(self.system.cset, self.limits, self.held) if key else self.system.cset
            if core.unsupported_reason(cset) is not None:
                self._compiled_sets[key] = None
            else:
                if key:
                    sys_ = build(cset, self.forces)
                    configure(sys_, self.options)
                else:
                    sys_ = core.clone(self._proto)
                self._compiled_sets[key] = (sys_, record_shapes(cset), cset)
        return self._compiled_sets[key]

    def _fast(self, q, v, t: float, tau, n: int) -> Trajectory | None:
        """The compiled steps where no limit changes: ``n + 1`` steps of the core with
        the held set's rows from ``(q, v)`` (the last step only records the end state's
        sample, as ``simulate``'s last sample), kept when no sample of a free limit is
        past its bound and no held limit's multiplier pulls (the phase
        ``simulate_limited`` would run, without its start's re-assembly); None
        otherwise (the NumPy engine, a step failed): the limited run then."""
        got = None if self._proto is None else self._compiled()
        if got is None:
            return None
        sys_, shapes, cset = got
        k = n + 1
        bufs, fbufs = self._buffers(sys_, shapes, k)
        sys_.set_state(q, v)
        sys_.reset_counters()  # the accounts of this call, as simulate_limited's
        set_ctrl(sys_, self.forces)
        tau = np.zeros(self.system.nv) if tau is None else tau
        if core.stepper()(sys_, tau, 0, k, t) is not None or sys_.recorded != k:
            return None
        x = bufs[Q][:k, self._iq]
        free = np.array([i not in self.held for i in range(len(self.limits))])
        if (((x < self._lo) | (x > self._hi)) & free).any():
            return None
        m0 = self.system.cset.dim
        for col, side in enumerate(self.held.values()):  # simulate_limited's release
            if pulling(side, bufs[LAM][:k, m0 + col], RELEASE_TOL).any():
                return None
        m = m0 + len(self.limits)
        traj = Trajectory(self.system.nq, self.system.nv, m, len(cset.holonomic_rows))
        traj.engine = "core"
        for s, b in zip((*CORE_SERIES, *FORCE_SERIES), (*bufs, *fbufs)):
            b = b[:k]
            if s.name in PADDED:  # the free limits' columns, as simulate_limited's record
                b = np.hstack([b, np.zeros((k, m - b.shape[1]))])
            traj.rows[s.name].extend(b.copy())  # the buffers serve the next call
        traj.steps = n
        return traj

    def _buffers(self, sys_, shapes, k: int) -> tuple[list, list]:
        """Record buffers of at least ``k`` samples handed to the core system ``sys_``,
        kept per system and reused: the core keeps every array it was handed alive as
        long as it lives, so new ones per call would grow the memory step by step."""
        have = self._bufs.get(id(sys_))
        if have is None or have[2] < k:
            cap = k if have is None else max(k, 2 * have[2])
            bufs, fbufs = attach_buffers(sys_, shapes, cap)
            self._bufs[id(sys_)] = have = (bufs, fbufs, cap)
        else:
            sys_.set_buffers(have[0], have[2])
            sys_.set_force_buffers(*have[1])
        return have[0], have[1]

    def check_start(self, q) -> None:
        """Refuse a start outside a limit (ValueError naming the joint, its value and
        its range), as ``simulate_limited`` does at the next step."""
        check_inside(
            self.limits, self.system.mechanism, q,
            hint=" (Simulator(..., limits=False) steps without the limits)",
        )  # fmt: skip

    def held_names(self) -> list[str]:
        """The held limits as ``"joint (side)"``."""
        return [f"{self.limits[i].joint} ({side})" for i, side in self.held.items()]


def derivative_warning(stepper: LimitStepper, q, v, t: float, tau) -> str | None:
    """Why ``step_derivatives`` at this state is not the derivative of the limited step
    (a limit held now, or an event inside the step), else None."""
    if stepper.held:
        return (
            f"step_derivatives: the limit of {', '.join(stepper.held_names())} is held: the "
            "Jacobians are those of the step without limits, not of the held step"
        )
    _, events = stepper.run(q, v, t, tau, 1, keep=False)
    if events:
        e = events[0]
        return (
            f"step_derivatives: the step hits the {e.side} limit of {e.joint!r} at t = "
            f"{e.t:.9g} s: the Jacobians are those of the step without limits, not of the "
            "limited step (an impact map lies inside it)"
        )
    return None
