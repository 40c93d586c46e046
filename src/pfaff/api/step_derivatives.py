"""Jacobians of one simulator step ``x_next = Step(x, tau)`` in tangent coordinates.

The step is the NumPy engine's, exactly as :func:`pfaff.simulate.simulate` takes it:
the acceleration at the start, one explicit Runge-Kutta step (RK4 by default; its
stages put on the constraint manifold with ``stage_projection``,
:func:`pfaff.simulate.steppers.rk_step`) and the end-of-step correction (Newton-Raphson
on the positions, M-metric projection of the velocity,
:func:`pfaff.simulate.correction.correct_state`).

Two methods:

- ``"sensitivities"`` (vector-space configurations, nq == nv): forward-mode
  sensitivities through the replayed step (:mod:`pfaff.api.step_sensitivity`): the
  analytic dynamics derivatives at each stage, each Newton iteration and the velocity
  projection differentiated as taken. Cost: one dynamics derivative per stage and one
  replay of each projection.
- ``"differences"``: central differences of the step (step ``h`` in the tangent space:
  ``q (+) h e_k``, ``v + h e_k``, ``tau + h e_k``; ``6 nv + 1`` steps). The projections
  stop at ``position_tol``, so the step map is smooth only to that level: the default
  ``h = 1e-5`` keeps the rounding ``position_tol / h`` ~ 1e-7 and the truncation
  ``h^2`` ~ 1e-10 small together. Lie-group configurations (free, ball joints) use it.

Witnesses (``tests/unit/api/test_step_derivatives.py``): the two methods agree, and as
``dt -> 0`` both approach ``I + dt [[0, I], [da/dq, da/dv]]`` and ``dt [0; da/dtau]``
built from the analytic dynamics derivatives, with an error of order ``dt``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pfaff.api.step_sensitivity import step_sensitivities
from pfaff.simulate.correction import correct_state
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.options import SimOptions
from pfaff.simulate.steppers import Evaluator, rk_step
from pfaff.simulate.tableaus import TABLEAUS

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
    """

    q: np.ndarray
    v: np.ndarray
    A: np.ndarray
    B: np.ndarray
    method: str

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
    """One step of the NumPy engine from ``(q, v)`` with the torque ``tau`` held:
    ``(q_next, v_next)`` (the system's force elements included)."""
    opt = _options(options, dt)
    return _step(system, Evaluator(system.cset, opt, forces=system._force_set), q, v, tau, opt)


def _step(system, ev: Evaluator, q, v, tau, opt: SimOptions):
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
) -> StepDerivatives:
    """Jacobians ``A = d x_next / d x`` (2nv x 2nv) and ``B = d x_next / d tau``
    (2nv x nv) of one step of ``dt`` from ``(q, v)`` under ``tau``, in tangent
    coordinates (see the module docstring for the method and its accuracy).

    Parameters
    ----------
    system : a :class:`pfaff.System`.
    q, v, tau : the state and the torque held over the step.
    dt : the step [s].
    options : the simulator's other options (integrator, tolerances).
    h : the central-difference step in the tangent space (``method="differences"``).
    method : ``"sensitivities"``, ``"differences"`` or ``"auto"`` (sensitivities when
        nq == nv, else differences).
    forces : the force elements of the step when they are not the system's own (a
        Simulator's, with its actuators' springs and dampers): their step is
        differentiated by central differences (``"auto"``; ``"sensitivities"`` refused).
    """
    q, v = system._state(q, v, "v")
    tau = system._vec(tau, system.nv, "tau", "nv")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h = {h!r}: the difference step must be a finite number > 0")
    if method not in ("auto", "sensitivities", "differences"):
        raise ValueError(f"method={method!r}; valid: 'auto', 'sensitivities', 'differences'")
    lie = system.nq != system.nv
    own = forces is None
    fset = system._force_set if own else ForceSet(system.mechanism, forces)
    if method == "sensitivities" and not own:
        raise ValueError(
            "method='sensitivities' differentiates the system's own force elements; with "
            "other forces (a Simulator's actuators) use method='differences'"
        )
    if method == "sensitivities" and lie:
        raise ValueError(
            "method='sensitivities' needs a vector-space configuration (nq == nv); this "
            f"system has nq {system.nq}, nv {system.nv}: use method='differences'"
        )
    opt = _options(options, dt)
    ev = Evaluator(system.cset, opt, forces=fset)
    if method != "differences" and not lie and own:
        q1, v1, A, B = step_sensitivities(system, ev, opt, q, v, tau)
        return StepDerivatives(q1, v1, A, B, "forward-mode sensitivities")
    nv, diff = system.nv, system.mechanism.difference
    q1, v1 = _step(system, ev, q, v, tau, opt)

    def delta(qq, vv, tt):
        qa, va = _step(system, ev, qq, vv, tt, opt)
        return np.concatenate([diff(q1, qa), va - v1])

    A, B = np.empty((2 * nv, 2 * nv)), np.empty((2 * nv, nv))
    integrate = system.mechanism.integrate
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        A[:, k] = (delta(integrate(q, e), v, tau) - delta(integrate(q, -e), v, tau)) / (2 * h)
        A[:, nv + k] = (delta(q, v + e, tau) - delta(q, v - e, tau)) / (2 * h)
        B[:, k] = (delta(q, v, tau + e) - delta(q, v, tau - e)) / (2 * h)
    return StepDerivatives(q1, v1, A, B, f"central differences of the step, h = {h:g}")
