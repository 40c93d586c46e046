"""Chained runs: phases with their own constraint sets, impacts between them, one controller.

A run that changes its constraints at events (free motion, an impact, sliding on a
surface, a release) is a sequence of :func:`~pfaff.simulate.simulate` calls, each
from the state and time where the previous one stopped. :class:`PhaseChain`
carries that state, the controller, its held torque and its sample clock across
the switches, applies impact maps, and joins the phases with
:meth:`Trajectory.concat`.

One clock: every phase starts with the held torque and the time of the
controller's next sample (``next_control`` of :func:`simulate`), so a switch
between two samples does not sample the law; when the next sample falls between
the phase's steps (the phase started off the sample grid), the phase first steps
exactly to it. The sample times across switches are therefore those of one
clock ``t_s + k control_dt``; only :meth:`PhaseChain.impact` and
:meth:`PhaseChain.resample` restart it (the law is sampled at the event).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.simulate.integrator import project_state, simulate
from pfaff.simulate.options import SimOptions
from pfaff.simulate.policy import SampleClock, steps_of
from pfaff.simulate.trajectory import Trajectory


class PhaseChain:
    """Run phases one after another from ``(t0, q0, v0)`` with one controller.

    Parameters
    ----------
    q0, v0 : initial state; t0 : its time [s].
    options : the phases' :class:`SimOptions` (a phase may override them, except the
        controller period: ``options.control_dt`` is the one clock's).
    controller : ``tau = controller(t, snap)``, shared by all phases (or None).
    forces : force elements acting in every phase (:mod:`pfaff.simulate.forces`).

    Attributes
    ----------
    t, q, v : the state where the last phase ended (after an impact map, if any).
    next_sample : time of the controller's next sample (its one clock).
    phases : the phases' trajectories, in order.
    """

    def __init__(
        self,
        q0: np.ndarray,
        v0: np.ndarray,
        options: SimOptions,
        controller=None,
        t0: float = 0.0,
        forces=(),
    ) -> None:
        self.forces = tuple(forces)
        self.t, self.q, self.v = float(t0), np.asarray(q0, float), np.asarray(v0, float)
        self.options, self.controller = options, controller
        self.clock = SampleClock(options.control_dt or options.dt, self.t)
        self.tau: np.ndarray | None = None
        self.phases: list[Trajectory] = []

    @property
    def next_sample(self) -> float:
        """Time of the controller's next sample [s] (the one clock's next instant)."""
        return self.clock.next

    @next_sample.setter
    def next_sample(self, t: float) -> None:
        self.clock.next = float(t)

    def run(
        self,
        cset: ConstraintSet,
        duration: float,
        stop: Callable | None = None,
        options: SimOptions | None = None,
    ) -> Trajectory:
        """One phase with constraint set ``cset`` from the current state, for ``duration``
        seconds or until ``stop(t, snap, constraint_eval)``; the state moves to its end.

        Returns the phase's trajectory (two, joined, when it first stepped to a sample
        that fell between its steps)."""
        opt = options or self.options
        # the one clock's period (a step longer than it by round-off, e.g. a located
        # step of dt, samples as one of dt would)
        opt = dataclasses.replace(opt, control_dt=max(self.clock.period, opt.dt))
        due = self.next_sample - self.t
        if self.controller is not None and 1e-12 < due < duration - 1e-12:
            n = due / opt.dt
            if abs(n - round(n)) > 1e-6:  # the next sample is off this phase's step grid
                head = self._simulate(cset, due, stop, dataclasses.replace(opt, dt=due))
                if head.stopped_at is not None or steps_of(duration - due, opt.dt) == 0:
                    return head  # stopped, or the rest is shorter than a step
                rest = self._simulate(cset, duration - due, stop, opt)
                return Trajectory.concat([head, rest])
        return self._simulate(cset, duration, stop, opt)

    def _simulate(self, cset, duration, stop, opt) -> Trajectory:
        tr = simulate(
            cset, self.q, self.v, self.t + duration, opt, controller=self.controller,
            tau=self.tau, stop=stop, t0=self.t, next_control=self.next_sample,
            forces=self.forces,
        )  # fmt: skip
        self.phases.append(tr)
        if len(tr):
            a = tr.arrays()
            self.t, self.q, self.v = float(a["t"][-1]), a["q"][-1], a["v"][-1]
            self.tau = a["tau"][-1]
        if tr.next_control is not None:
            self.next_sample = tr.next_control
        return tr

    def resample(self) -> None:
        """Sample the controller at the start of the next phase (e.g. a mode switch)."""
        self.next_sample = self.t

    def impact(self, cset: ConstraintSet, options: SimOptions | None = None) -> None:
        """Plastic impact onto ``cset``: the configuration onto its manifold, the velocity
        projected in the metric M onto its admissible velocities (the least change of
        kinetic energy); the controller is sampled at the impact (its ``interrupt()``
        is called first, if it has one)."""
        self.q, self.v = project_state(cset, self.q, self.v, options or self.options)
        if hasattr(self.controller, "interrupt"):
            self.controller.interrupt()
        self.resample()

    def trajectory(self, m: int | None = None) -> Trajectory:
        """All phases as one :class:`Trajectory` (:meth:`Trajectory.concat`)."""
        return Trajectory.concat(self.phases, m)
