"""Chained runs: phases with their own constraint sets, impacts between them, one controller.

A run that changes its constraints at events (free motion, an impact, sliding on a
surface, a release) is a sequence of :func:`~pfaff.simulate.simulate` calls, each
from the state and time where the previous one stopped. :class:`PhaseChain`
carries that state, the controller and its held torque across the switches,
applies impact maps, and joins the phases with :meth:`Trajectory.concat`.

The controller's sample clock: every phase starts with the controller's held
torque (``held_torque`` when the controller has it). A controller with a clock
of its own (``next_sample_time``, e.g.
:class:`~pfaff.control.yoshikawa_zheng.YZController`) keeps it across the switch
-- a phase that starts between two samples holds the torque until the next one --
and an impact (:meth:`PhaseChain.impact`) calls its ``interrupt()``, which samples
the law at the impact.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.simulate.integrator import project_state, simulate
from pfaff.simulate.options import SimOptions
from pfaff.simulate.trajectory import Trajectory


class PhaseChain:
    """Run phases one after another from ``(t0, q0, v0)`` with one controller.

    Parameters
    ----------
    q0, v0 : initial state; t0 : its time [s].
    options : the phases' :class:`SimOptions` (a phase may override them).
    controller : ``tau = controller(t, snap)``, shared by all phases (or None).

    Attributes
    ----------
    t, q, v : the state where the last phase ended (after an impact map, if any).
    phases : the phases' trajectories, in order.
    """

    def __init__(
        self,
        q0: np.ndarray,
        v0: np.ndarray,
        options: SimOptions,
        controller=None,
        t0: float = 0.0,
    ) -> None:
        self.t, self.q, self.v = float(t0), np.asarray(q0, float), np.asarray(v0, float)
        self.options, self.controller = options, controller
        self.phases: list[Trajectory] = []

    @property
    def held_torque(self) -> np.ndarray | None:
        """The torque the controller holds (its ``held_torque``, else the last recorded)."""
        tau = getattr(self.controller, "held_torque", None)
        if tau is None and self.phases and len(self.phases[-1]):
            tau = self.phases[-1].rows["tau"][-1]
        return tau

    def run(
        self,
        cset: ConstraintSet,
        duration: float,
        stop: Callable | None = None,
        options: SimOptions | None = None,
    ) -> Trajectory:
        """One phase with constraint set ``cset`` from the current state, for ``duration``
        seconds or until ``stop(t, snap, constraint_eval)``; the state moves to its end."""
        tr = simulate(
            cset, self.q, self.v, duration, options or self.options,
            controller=self.controller, tau=self.held_torque, stop=stop, t0=self.t,
        )  # fmt: skip
        self.phases.append(tr)
        if len(tr):
            a = tr.arrays()
            self.t, self.q, self.v = float(a["t"][-1]), a["q"][-1], a["v"][-1]
        return tr

    def impact(self, cset: ConstraintSet, options: SimOptions | None = None) -> None:
        """Plastic impact onto ``cset``: the configuration onto its manifold, the velocity
        projected in the metric M onto its admissible velocities (the least change of
        kinetic energy); the controller's ``interrupt()`` samples it at the impact."""
        self.q, self.v = project_state(cset, self.q, self.v, options or self.options)
        if hasattr(self.controller, "interrupt"):
            self.controller.interrupt()

    def trajectory(self, m: int | None = None) -> Trajectory:
        """All phases as one :class:`Trajectory` (:meth:`Trajectory.concat`)."""
        return Trajectory.concat(self.phases, m)
