"""Step a :class:`~pfaff.api.System` yourself, MuJoCo's ``mj_step`` pattern (design.md
Sec. 4, Python API): ``sim.step(tau)`` is one step of the integrator and drift
correction of :func:`pfaff.simulate.simulate` (design.md Sec. 3), run on the compiled
core with the state kept in C++ between calls.

The core ``System`` is built once; every :meth:`Simulator.reset` starts from a copy of it
(:func:`pfaff.core.clone`), as every ``simulate`` starts from a new one, so ``n`` calls
of ``step`` give the trajectory of one ``simulate`` of the same torques bit for bit.
A system the core cannot run steps on the NumPy engine (``sim.warnings`` says why).
A system with joint limits steps through them as ``simulate_limited`` does
(:mod:`pfaff.api.simulator_limits`), unless made with ``limits=False``.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from pfaff import core
from pfaff.api.checks import check_vector, refuse_complex, refuse_number
from pfaff.api.simulator_limits import LimitStepper, contact_laws, holds_events, limits_not_held
from pfaff.api.simulator_record import CHUNK, CoreRecord
from pfaff.api.simulator_setup import prepare, steps_asked
from pfaff.api.step_info import StepInfo, info_of
from pfaff.api.system import System
from pfaff.api.viewer import Viewer
from pfaff.simulate import Trajectory, project_state, simulate
from pfaff.simulate.assembly import moved_note
from pfaff.simulate.core_engine import project_start, record_shapes, set_ctrl
from pfaff.simulate.limit_events import MAX_EVENTS_PER_STEP
from pfaff.simulate.memory import sample_bytes
from pfaff.simulate.policy import CORE_SERIES, FORCE_SERIES, by_name
from pfaff.simulate.recording import joint_limit_warnings

__all__ = ["Simulator", "StepInfo", "limits_not_held"]


class Simulator(CoreRecord):
    """A system stepped from Python.

    Parameters
    ----------
    system : a :class:`pfaff.System` (``pfaff.load``).
    dt : the step [s].
    record : keep every step's sample for :meth:`record` (default). False keeps only
        the last one (``last``): memory stays bounded over long runs.
    viewer : True: show the state live in the browser (a :class:`~pfaff.api.Viewer` on
        meshcat, its address in ``sim.viewer.url``), at most 30 times per second of
        wall time; or a Viewer to show it in.
    restitution, impact_friction : the laws of the contact impacts (a system loaded with
        its contacts): Newton's ``e`` in [0, 1], default 0 (plastic); where an impact
        stops a point whose sticking impulse leaves its cone, ``"coulomb"`` (default:
        Coulomb's impulse ``mu P_n`` against its slip after, Moreau's law) or ``"stick"``
        (it slips through frictionless, the earlier law; docs/contact.md).
    max_events : the events (impacts, releases) within one step after which the limits
        and contacts hit are held (the no-chatter rule; a ball bouncing to rest needs
        more to reach its accumulation point: about log(tol) / log(e)).
    limits : hold the system's joint limits (``system.limits``) as ``simulate_limited``
        does (default): events located inside the step, impacts, held rows (a call
        in which an event happens runs from Python). False: step through them (the
        compiled path alone; a warning says so).
    **options : fields of :class:`~pfaff.simulate.SimOptions` (``integrator``,
        ``position_tol``, ``rank_tol``, ``engine``, ...), all but ``dt``, ``control_dt``,
        ``record_every`` and ``progress``.

    Attributes
    ----------
    engine : ``"core"`` or ``"numpy"`` (the system or options the core cannot run).
    warnings : why the NumPy engine runs it, when it does, and how far the last
        :meth:`reset` moved its ``q`` onto the constraint manifold.
    events : the limits' :class:`~pfaff.simulate.limits.LimitEvent` s since the reset.
    assembly_displacement : how far the start of the last :meth:`reset` was moved onto
        the manifold (tangent-space norm, rad and m mixed): from the ``q`` given, or for
        the default start from the file's start to ``system.q0``.

    A Simulator pickles (``pickle.dumps(sim)``) and goes on after ``pickle.loads`` as it
    would have: the state, the time, the held torque and control and the record; the
    compiled core is rebuilt (the viewer is not kept). The running accounts ``work``,
    ``correction_energy`` and ``force_work`` recorded after it continue from the
    pickled totals (their sums regrouped: equal to rounding).
    """

    def __init__(
        self,
        system: System,
        dt: float = 1e-3,
        *,
        record: bool = True,
        viewer: bool | Viewer = False,
        limits: bool = True,
        restitution: float = 0.0,
        max_events: int = MAX_EVENTS_PER_STEP,
        impact_friction: str = "coulomb",
        **options,
    ):
        self.system = system
        self.options, self.engine, fallback, self._forces, proto, self._actuation = prepare(
            system, dt, options
        )
        self.record_all = bool(record)
        self.warnings: list[str] = [] if fallback is None else [fallback]
        self._sample_bytes = sample_bytes(system.cset, self._actuation.na)
        self._limited = None
        e = contact_laws(restitution, impact_friction)
        if holds_events(system, limits):
            self._limited = LimitStepper(
                system, self.options, self._forces, self.engine, proto, limits, e, max_events,
                impact_friction,
            )  # fmt: skip
        if system.limits and not limits:
            self.warnings.append(limits_not_held(system, "a Simulator with limits=False"))
        self._py = self.engine != "core" or self._limited is not None  # steps from Python
        for w in self.warnings:
            warnings.warn(w, UserWarning, stacklevel=2)
        self._own_warnings = list(self.warnings)
        self._zero = np.zeros(system.nv)
        self._dt, self._t0 = self.options.dt, 0.0
        self._shapes = record_shapes(system.cset, self._actuation.na)
        if proto is not None and not self._py:
            self._proto = proto
            self._step = core.stepper()
        self.viewer: Viewer | None = None
        if viewer is True:
            self.viewer = Viewer(system)
        elif viewer is not False:
            if not isinstance(viewer, Viewer) or viewer.system is not system:
                raise ValueError("viewer must be True, False or a Viewer of this system")
            self.viewer = viewer
        self.reset()

    def __repr__(self) -> str:
        return f"Simulator({self.system!r}, dt={self._dt}, engine={self.engine!r}, t={self.t})"

    # -- the state ---------------------------------------------------------------------
    def reset(self, q: np.ndarray | None = None, v: np.ndarray | None = None, act=None) -> None:
        """Start again at ``t = 0`` from ``(q, v)`` (default: the system's assembled
        ``q0, v0``), brought onto the manifold as ``simulate`` brings its start (Newton
        on Phi, then the M-metric projection of v), and the activations ``act`` (na,)
        of the actuators with activation dynamics (default: zeros, as MuJoCo's).

        A ``q`` moved farther than 1e-6 onto the manifold gets a warning saying how far
        (also in ``sim.warnings``); ``sim.assembly_displacement`` holds the distance.

        Raises ValueError (shape, non-finite, outside a joint limit held) or
        :class:`~pfaff.simulate.InitialStateError` (q cannot be assembled).
        """
        sys_ = self.system
        act0 = self._actuation.check_act(act)
        given = None if q is None else check_vector(q, sys_.nq, "q", "nq")
        q = sys_.q0 if given is None else given
        v = sys_.v0 if v is None else check_vector(v, sys_.nv, "v", "nv")
        sys_.mechanism.check_state(q, v)  # also its quaternions' norms
        if self._py:
            q, v = project_state(sys_.cset, q, v, self.options)
        else:  # onto the manifold by the core, as simulate on the core does
            self._start = (q, v)  # what a pickled Simulator is rebuilt from
            self._sys = core.clone(self._proto)
            q, v = project_start(self._sys, q, v, self.options)
        if given is None:
            self.assembly_displacement, moved = sys_.assembly.displacement, None
        else:
            self.assembly_displacement = float(
                np.linalg.norm(sys_.mechanism.difference(given, np.asarray(q, dtype=float)))
            )
            moved = moved_note(self.assembly_displacement, "the q given to reset")
        self.warnings = [*self._own_warnings, *([moved] if moved else [])]
        if moved:
            warnings.warn(moved, UserWarning, stacklevel=2)
        self._k, self._chunks, self._done = 0, [], 0  # _done: samples before the buffers
        # the activations: act0 at t_act, with the ctrl held since (act = activation())
        self._act0, self._t_act, self._ctrl_act = act0, self.t, np.zeros(self.system.nu)
        self._last_tau = None
        self._restored: list[tuple[int, np.ndarray, int]] = []  # see __setstate__
        if self._limited is not None:
            self._limited.check_start(q)
            self._limited.reset()
        if not self._py:
            self._new_chunk(CHUNK)
            self._sys.set_tau(self._zero)
        else:
            self._parts: list[Trajectory] = []
            self._state = (q, v)
        if self.viewer is not None:
            self.viewer.display(q)
            if self._limited is not None:
                self.viewer.draw_contacts(self.contacts)

    @property
    def q(self) -> np.ndarray:
        """The configuration now (nq,)."""
        return self._state[0].copy() if self._py else self._sys.q

    @property
    def v(self) -> np.ndarray:
        """The velocity now (nv,)."""
        return self._state[1].copy() if self._py else self._sys.v

    @property
    def act(self) -> np.ndarray:
        """The activations now (na,): one per actuator with activation dynamics
        (``system.actuators`` with a ``dyntype``, in order), MuJoCo's ``data.act``."""
        return self._actuation.activation(self._act0, self._ctrl_act, self.t - self._t_act)

    @property
    def t(self) -> float:
        """The time now [s]: ``steps * dt`` since the reset."""
        return self._t0 + self._k * self._dt

    @property
    def steps(self) -> int:
        """Steps taken since the reset."""
        return self._k

    @property
    def events(self) -> list:
        """The joint limits' and contacts' events since the reset (impacts, releases:
        :class:`~pfaff.simulate.limits.LimitEvent`,
        :class:`~pfaff.simulate.limit_events.ContactEvent`); empty without either."""
        return [] if self._limited is None else list(self._limited.events)

    @property
    def contacts(self) -> list:
        """The closed contacts now (:class:`pfaff.contact.model.Contact`: geoms, point,
        normal, normal force under the torque held last); empty without contacts."""
        if self._limited is None:
            return []
        tau = self._last_tau if self._last_tau is not None else self._zero
        return self._limited.closed_contacts(self.q, self.v, tau)

    # -- stepping ----------------------------------------------------------------------
    def step(self, tau: np.ndarray | None = None, ctrl: np.ndarray | None = None, n: int = 1):
        """Take ``n`` steps of ``dt`` with the joint torque ``tau`` (nv,) held over them
        (None: zero).

        ``ctrl`` (nu,) drives the system's actuators (an MJCF's ``<actuator>``, MuJoCo's
        ``data.ctrl``; None: zero, as MuJoCo's default), held over the steps and added
        to ``tau``; a system without actuators refuses it. Raises ValueError on a bad
        ``tau``, ``ctrl`` or ``n``, :class:`~pfaff.simulate.SimulationError` when a step
        fails (the state stays at the last step that succeeded; ``err.trajectory`` holds
        the record). With joint limits held, a step an event falls in is the partial step
        to the event, the impact and the rest of the step (``sim.events``).
        """
        tau = self._torque(tau, ctrl)
        self._last_tau = tau
        if n != 1:
            n = steps_asked(n, self.record_all, self._sample_bytes, None if self._py else self._k)
        if self._actuation.na:  # the activations now, from which this ctrl is held
            self._act0, self._t_act, self._ctrl_act = self.act, self.t, self._actuation.check(ctrl)
            self._actuation.set_act(self._act0, self._t_act)
        if self._py:  # record=False: in pieces of CHUNK samples, the last one kept (sim.last)
            piece = n if self.record_all else min(n, CHUNK)
            for done in range(0, n, piece):
                self._step_numpy(tau, min(piece, n - done))
        else:
            set_ctrl(self._sys, self._forces)
            tau = self._zero if tau is None else tau
            left = n
            while left:  # record=False: in pieces that fit the buffers, written again
                k = left if self.record_all else min(left, self._cap)
                if self._rec + k > self._cap:
                    self._grow(k)
                st = self._step(self._sys, tau, self._k, k, self._t0)
                if st is not None:
                    self._failed(st)
                self._k += k
                self._rec += k
                left -= k
        if self.viewer is not None:
            self.viewer.show(self.q, contacts=(lambda: self.contacts) if self._limited else None)

    def _torque(self, tau, ctrl):
        """The joint torque of ``step(tau, ctrl)``: ``tau`` plus the actuators' held
        torque of ``ctrl`` (which also sets their force elements' ctrl). Complex numbers
        and a number as tau are refused here; shapes and finiteness by the core."""
        refuse_complex("Simulator.step", "tau", tau, self.system.nv, "nv")
        refuse_number("Simulator.step", tau, self.system.nv)
        refuse_complex("Simulator.step", "ctrl", ctrl, self.system.nu, "nu")
        if ctrl is not None and not self._actuation:
            raise ValueError(
                f"ctrl= drives actuators and {self.system.source or 'this system'} has none "
                "that pfaff models: give joint torques as tau= (nv,)"
            )
        if not self._actuation:
            return tau
        nv = self.system.nv
        base = self._zero if tau is None else self.system._vec(tau, nv, "tau", "nv")
        return base + self._actuation.tau(ctrl)

    def step_derivatives(self, tau=None, ctrl=None, method: str = "auto", wrt: str = "tau"):
        """The Jacobians of the step that ``step(tau, ctrl)`` would take from the present
        state, in tangent coordinates: ``A, B = sim.step_derivatives(tau)`` with ``A =
        d x_next / d x`` (2nv x 2nv) and ``B = d x_next / d tau`` (2nv x nv)
        (:func:`pfaff.api.step_derivatives.step_derivatives`: central differences of the
        compiled step, the actuators' springs and dampers included; ``method=
        "sensitivities"``: the NumPy reference's forward-mode sensitivities, nq == nv and
        no actuators). The state does not move. With joint limits or contacts held now
        they are those of the fixed mode (the held rows bilateral, on the compiled core);
        a warning says so where the step meets an event (an impact, a release).
        ``wrt="ctrl"``: MuJoCo's state ``(q, v, act)`` and input ``ctrl``
        (:func:`pfaff.api.ctrl_derivatives.ctrl_derivatives`)."""
        from pfaff.api.simulator_limits import derivative_warning
        from pfaff.api.step_derivatives import step_derivatives

        if wrt not in ("tau", "ctrl"):
            raise ValueError(f"wrt={wrt!r}; valid: 'tau', 'ctrl'")
        if wrt == "ctrl":
            from pfaff.api.ctrl_derivatives import of_simulator

            return of_simulator(self, tau, ctrl)

        torque = self._torque(tau, ctrl)
        torque = self._zero if torque is None else torque
        if self._limited is not None:
            why = derivative_warning(self._limited, self.q, self.v, self.t, torque)
            if why is not None:
                warnings.warn(why, UserWarning, stacklevel=2)
        forces = self._forces if self._actuation.elements else None
        self._actuation.set_act(self.act, 0.0)  # the step's: from t = 0 at the act now
        try:
            held = None if self._limited is None else self._limited.held_system(self.q, self.v)
            return step_derivatives(
                self.system, self.q, self.v, torque, self._dt, self.options, method=method,
                forces=forces, held_system=held,
            )  # fmt: skip
        finally:
            self._actuation.set_act(self._act0, self._t_act)

    @property
    def last(self) -> StepInfo | None:
        """The sample the last step started from (None before the first step)."""
        if self._k == 0:
            return None
        if self._py:
            tr = self._parts[-1]
            return info_of({s.name: tr.rows[s.name][-2] for s in CORE_SERIES})
        if self._rec:
            bufs, i = self._bufs, self._rec - 1
        else:  # a failure at the first state of a fresh chunk: the previous one's last
            bufs, _, n = self._chunks[-1]
            i = n - 1
        return info_of({name: b[i] for name, b in by_name(CORE_SERIES, bufs).items()})

    def record(self) -> Trajectory:
        """The :class:`~pfaff.simulate.Trajectory` since the last reset: one sample per
        state, the present one included (with the last torque held), the series of
        ``simulate``'s. Refused with ``record=False``."""
        if not self.record_all:
            raise ValueError("this Simulator keeps no record (record=False); only sim.last")
        if self._py:
            return self._record_numpy()
        sys_ = self.system
        cset = sys_.cset
        traj = Trajectory(sys_.nq, sys_.nv, cset.dim, len(cset.holonomic_rows), self._actuation.na)
        traj.engine = "core"
        parts = [*self._chunks, (self._bufs, self._fbufs, self._rec)]
        if self._done + self._rec == self._k:  # the present state is not recorded yet
            parts.append(self._final())
        start = 0
        for bufs, fbufs, n in parts:
            named = {**by_name(CORE_SERIES, bufs), **by_name(FORCE_SERIES, fbufs)}
            cols = {name: b[:n].copy() for name, b in named.items()}
            self._counted_on(cols, start)
            for name, col in cols.items():
                traj.rows[name].extend(col)
            start += n
        traj.steps, traj.newton_failures = self._k, self._failures()
        traj.warnings = [*self.warnings, *joint_limit_warnings(sys_.mechanism, traj)]
        return traj

    # -- the NumPy engine ----------------------------------------------------------------
    def _numpy_run(self, tau, n: int, keep: bool = True) -> Trajectory:
        q, v = self._state
        t = self.t
        if self._limited is not None:  # keep: carry the held limits and events on
            return self._limited.run(q, v, t, tau, n, keep)[0]
        opt = dataclasses.replace(self.options, engine="numpy")
        return simulate(
            self.system.cset, q, v, t + n * self._dt, opt, tau=tau, t0=t, forces=self._forces
        )

    def _step_numpy(self, tau, n: int) -> None:
        tr = self._numpy_run(tau, n)
        self._parts = [*self._parts, tr] if self.record_all else [tr]
        self._state = (np.asarray(tr.rows["q"][-1]), np.asarray(tr.rows["v"][-1]))
        self._k += n

    def _record_numpy(self) -> Trajectory:
        if self._parts:
            traj = Trajectory.concat(self._parts)
        else:  # the start only: the first sample of a one-step run
            traj = self._numpy_run(None, 1, keep=False)
            for col in traj.rows.values():
                del col[1:]
            traj.steps = 0
        traj.warnings = [*self.warnings, *(w for w in traj.warnings if w not in self.warnings)]
        return traj
