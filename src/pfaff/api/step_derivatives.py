"""Jacobians of one simulator step ``x_next = Step(x, tau)`` in tangent coordinates.

The step is the compiled core's, exactly as :class:`pfaff.Simulator` and
:func:`pfaff.simulate.simulate` take it: the acceleration at the start, one explicit
Runge-Kutta step (RK4 by default; its stages put on the constraint manifold with
``stage_projection``) and the end-of-step correction (Newton-Raphson on the positions,
M-metric projection of the velocity). :func:`step` takes one; the NumPy engine's
(:func:`pfaff.simulate.steppers.rk_step`,
:func:`pfaff.simulate.correction.correct_state`) is its readable reference, held to it
state by state in the tests.

Two methods:

- ``"differences"`` (the default): central differences of the compiled step (step ``h``
  in the tangent space: ``q (+) h e_k``, ``v + h e_k``, ``tau + h e_k``), the ``6 nv + 1``
  steps taken by one :func:`pfaff.core.rollout` call. The projections stop at
  ``position_tol``, so the step map is smooth only to that level: the default ``h =
  1e-5`` keeps the rounding ``position_tol / h`` ~ 1e-7 and the truncation ``h^2`` ~
  1e-10 small together. Lie-group configurations (free, ball joints) included.
- ``"sensitivities"`` (vector-space configurations, nq == nv): the NumPy reference,
  forward-mode sensitivities through the NumPy engine's replayed step
  (:mod:`pfaff.api.step_sensitivity`): the analytic dynamics derivatives at each stage,
  each Newton iteration and the velocity projection differentiated as taken. It is the
  independent witness of the differences (and slower: the NumPy engine's step).

A system the compiled core cannot run (a constraint or force element with no lowering)
takes both on the NumPy engine, as its Simulator does.

Witnesses (``tests/unit/api/test_step_derivatives.py``): the two methods agree, the
compiled step equals the NumPy engine's, and as ``dt -> 0`` both approach ``I + dt [[0,
I], [da/dq, da/dv]]`` and ``dt [0; da/dtau]`` built from the analytic dynamics
derivatives, with an error of order ``dt``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, fields, replace

import numpy as np

from pfaff import core
from pfaff.api.step_sensitivity import step_sensitivities
from pfaff.simulate.actuators import step_ahead
from pfaff.simulate.core_engine import build, configure, set_ctrl
from pfaff.simulate.correction import correct_state
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.options import SimOptions, engine_choice
from pfaff.simulate.policy import StatusCode, status_message
from pfaff.simulate.steppers import Evaluator, rk_step
from pfaff.simulate.tableaus import TABLEAUS
from pfaff.simulate.trajectory import SimulationError

__all__ = ["StepDerivatives", "step", "step_derivatives"]


@dataclass(frozen=True)
class StepDerivatives:
    """The state after one step and the Jacobians of the step.

    Attributes
    ----------
    q, v : the state after the step.
    A : (2 nv, 2 nv) ``d x_next / d x``: rows and columns ``(delta q, delta v)``, with
        ``delta q`` the tangent ``difference(q_next, q_next')`` at the step's end and
        ``integrate(q, delta q)`` at its start.
    B : (2 nv, nv) ``d x_next / d tau``.
    method : how they were computed.
    act : the activations after the step where the state holds them
        (:func:`pfaff.api.ctrl_derivatives.ctrl_derivatives`: ``x = (q, v, act)``, ``A``
        (2 nv + na) square and ``B = d x_next / d ctrl`` (2 nv + na, nu)), else None.
    """

    q: np.ndarray
    v: np.ndarray
    A: np.ndarray
    B: np.ndarray
    method: str
    act: np.ndarray | None = None

    def __iter__(self):
        """``A, B = sim.step_derivatives(tau)`` (design.md Sec. 4)."""
        return iter((self.A, self.B))


def _options(options: SimOptions | None, dt: float) -> SimOptions:
    opt = replace(options or SimOptions(), dt=float(dt))
    opt.validate()
    if opt.integrator not in TABLEAUS:
        raise ValueError(
            f"step derivatives need a fixed-step integrator ({', '.join(TABLEAUS)}); "
            f"got {opt.integrator!r}"
        )
    if opt.method != "projection":
        raise ValueError(f"step derivatives follow the projection method; got {opt.method!r}")
    return opt


def step(system, q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float, options=None):
    """One step from ``(q, v)`` with the torque ``tau`` held: ``(q_next, v_next)`` (the
    system's force elements included), on the compiled core (the NumPy engine for a
    system the core cannot run). Raises :class:`~pfaff.simulate.SimulationError` when the
    step fails."""
    q, v = system._state(q, v, "v")
    tau = system._vec(tau, system.nv, "tau", "nv")
    opt = _options(options, dt)
    stepper = _Stepper(system, None, opt)
    q1, v1 = stepper(q[None], v[None], tau[None])
    return q1[0], v1[0]


class _Stepper:
    """Steps of ``system`` with the force elements ``forces`` (None: the system's own)
    under ``opt``, from K states at once: the compiled core's (:func:`pfaff.core.rollout`
    of one step each, on a prototype built once per system, forces and options) or, for
    a system the core cannot run, the NumPy engine's one after another. ``proto``: the
    core system to step instead (its forces, ctrl and options set)."""

    _PROTOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __init__(self, system, forces, opt: SimOptions, proto=None) -> None:
        self.system, self.opt, self.proto = system, opt, proto
        if proto is not None:
            self.engine = "core"
            return
        self.fset = system._force_set if forces is None else ForceSet(system.mechanism, forces)
        step_ahead(self.fset.elements, opt.dt)
        elements = tuple(self.fset.elements)
        self.engine, _ = engine_choice(system.cset, replace(opt, engine="auto"), elements)
        if self.engine == "core":
            protos = self._PROTOS.setdefault(system, {})
            key = (tuple(map(id, elements)), *(getattr(opt, f.name) for f in fields(opt)))
            if key not in protos:
                proto = build(system.cset, elements)
                configure(proto, opt)
                protos[key] = (proto, elements)  # the elements kept alive with their ids
            self.proto = protos[key][0]
            set_ctrl(self.proto, elements)

    def __call__(self, Q: np.ndarray, V: np.ndarray, TAU: np.ndarray):
        """The states ``(Q1, V1)`` (K, nq), (K, nv) one step after ``(Q, V)`` under
        ``TAU`` (K, nv)."""
        if self.proto is None:
            ev = Evaluator(self.system.cset, self.opt, forces=self.fset)
            steps = [_step(self.system, ev, *x, self.opt) for x in zip(Q, V, TAU)]
            return np.array([s[0] for s in steps]), np.array([s[1] for s in steps])
        K, cset, proto = len(Q), self.system.cset, self.proto
        widths = (len(Q[0]), len(V[0]), proto.rows, proto.holonomic_rows)
        out = [np.empty((K, 2, w)) for w in widths]
        taus = np.ascontiguousarray(TAU[:, None, :], dtype=float)
        Q, V = (np.ascontiguousarray(x, dtype=float) for x in (Q, V))
        status = core.rollout(self.proto, Q, V, taus, 0.0, 1, *out)
        bad = [i for i, st in enumerate(status) if st.code != StatusCode.OK]
        if bad:
            message = status_message(cset, status[bad[0]])
            raise SimulationError(f"the step from state {bad[0]} of {K} failed: {message}")
        return out[0][:, 1], out[1][:, 1]


def _step(system, ev: Evaluator, q, v, tau, opt: SimOptions):
    """One step of the NumPy engine (the reference of the compiled step)."""
    a = ev(q, v, tau)
    q1, v1, _, _ = rk_step(ev, TABLEAUS[opt.integrator], q, v, a, tau, opt.dt, 0.0, ev.power)
    q1, v1, *_ = correct_state(system.cset, q1, v1, opt, ev.svd)
    return q1, v1


def step_derivatives(
    system,
    q: np.ndarray,
    v: np.ndarray,
    tau: np.ndarray,
    dt: float,
    options: SimOptions | None = None,
    h: float = 1e-5,
    method: str = "auto",
    forces=None,
    held_system=None,
) -> StepDerivatives:
    """Jacobians ``A = d x_next / d x`` (2nv x 2nv) and ``B = d x_next / d tau``
    (2nv x nv) of one step of ``dt`` from ``(q, v)`` under ``tau``, in tangent
    coordinates (see the module docstring for the methods and their accuracy).

    Parameters
    ----------
    system : a :class:`pfaff.System`.
    q, v, tau : the state and the torque held over the step.
    dt : the step [s].
    options : the simulator's other options (integrator, tolerances).
    h : the central-difference step in the tangent space (``method="differences"``).
    method : ``"differences"`` (of the compiled step), ``"sensitivities"`` (the NumPy
        reference: nq == nv and the system's own force elements) or ``"auto"``
        (``"differences"``).
    forces : the force elements of the step when they are not the system's own (a
        Simulator's, with its actuators' springs and dampers).
    held_system : a compiled core system whose steps to differentiate instead: a
        Simulator's, its held joint limits and contact points bilateral rows
        (:meth:`pfaff.api.simulator_limits.LimitStepper.held_system`, the fixed mode);
        ``method="differences"`` only.
    """
    q, v = system._state(q, v, "v")
    tau = system._vec(tau, system.nv, "tau", "nv")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h = {h!r}: the difference step must be a finite number > 0")
    if method not in ("auto", "sensitivities", "differences"):
        raise ValueError(f"method={method!r}; valid: 'auto', 'sensitivities', 'differences'")
    opt = _options(options, dt)
    if method == "sensitivities":
        if held_system is not None:
            raise ValueError(
                "method='sensitivities' differentiates the step without held rows; with "
                "a joint limit or a contact held use method='differences'"
            )
        if forces is not None:
            raise ValueError(
                "method='sensitivities' differentiates the system's own force elements; "
                "with other forces (a Simulator's actuators) use method='differences'"
            )
        if system.nq != system.nv:
            raise ValueError(
                "method='sensitivities' needs a vector-space configuration (nq == nv); "
                f"this system has nq {system.nq}, nv {system.nv}: use method='differences'"
            )
        ev = Evaluator(system.cset, opt, forces=system._force_set)
        q1, v1, A, B = step_sensitivities(system, ev, opt, q, v, tau)
        return StepDerivatives(q1, v1, A, B, "forward-mode sensitivities")
    return _differences(system, _Stepper(system, forces, opt, held_system), q, v, tau, h)


def _differences(system, stepper: _Stepper, q, v, tau, h: float) -> StepDerivatives:
    """Central differences of the step: the start and its ``6 nv`` perturbations
    (``q (+) +-h e_k``, ``v +- h e_k``, ``tau +- h e_k``) stepped in one call."""
    nv = system.nv
    I = h * np.eye(nv)
    Q = np.array([q] + [system.integrate(q, s * e) for e in I for s in (1, -1)] + [q] * (4 * nv))
    V = np.concatenate([v[None], _same(v, nv), _pm(v, I), _same(v, nv)])
    T = np.concatenate([tau[None], _same(tau, 2 * nv), _pm(tau, I)])
    Q1, V1 = stepper(Q, V, T)
    q1, v1 = Q1[0], V1[0]
    dx = np.array([np.concatenate([system.difference(q1, a), b - v1]) for a, b in zip(Q1, V1)])
    cols = (dx[1::2] - dx[2::2]) / (2 * h)  # (3 nv, 2 nv): q, v then tau directions
    A, B = cols[: 2 * nv].T.copy(), cols[2 * nv :].T.copy()
    how = "NumPy engine" if stepper.proto is None else "compiled core"
    return StepDerivatives(q1, v1, A, B, f"central differences of the step, h = {h:g} ({how})")


def _pm(x: np.ndarray, I: np.ndarray) -> np.ndarray:
    """``x + e_k, x - e_k`` for each row ``e_k`` of ``I``, interleaved."""
    return np.stack([x + I, x - I], axis=1).reshape(-1, len(x))


def _same(x: np.ndarray, n: int) -> np.ndarray:
    """``2 n`` copies of ``x``."""
    return np.tile(x, (2 * n, 1))
