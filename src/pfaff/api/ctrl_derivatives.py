"""Jacobians of one step in MuJoCo's convention: the state ``x = (q, v, act)`` and the
input ``ctrl`` (``mjd_transitionFD``).

``A = d x_next / d x`` is ``(2 nv + na) x (2 nv + na)`` and ``B = d x_next / d ctrl``
``(2 nv + na) x nu``, ``na`` the actuators with activation dynamics
(:class:`~pfaff.mechanism.actuators.Actuator`). They are central differences of the
compiled step (``q (+) h e_k``, ``v + h e_k``, ``act + h e_k``, ``ctrl + h e_k``), the
step :class:`pfaff.Simulator` takes: the actuators' forces at every stage, their
activations the exact solution under the held ctrl, ``act_next =
Actuator.activation(act, ctrl, dt)``. Where an activation or ctrl sits on the edge of
its range, the difference straddles the kink (the mean of both sides).

The witness (``tests/unit/api/test_activation.py``): the activation rows equal
their closed form (``exp(-dt / tau)`` and ``1 - exp(-dt / tau)`` for a filter, ``1``
and ``dt`` for an integrator), and the ``(q, v)`` rows those of
:func:`~pfaff.api.step_derivatives.step_derivatives` for the torque the actuators apply.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from pfaff import core
from pfaff.api.simulator_setup import NOT_OPTIONS, prepare
from pfaff.api.step_derivatives import StepDerivatives
from pfaff.simulate.core_engine import set_ctrl
from pfaff.simulate.policy import StatusCode, status_message
from pfaff.simulate.trajectory import SimulationError

__all__ = ["ctrl_derivatives", "of_simulator"]


def ctrl_derivatives(
    system,
    q: np.ndarray,
    v: np.ndarray,
    act,
    ctrl,
    dt: float,
    tau=None,
    h: float = 1e-5,
    **options,
) -> StepDerivatives:
    """``A`` ((2nv+na) x (2nv+na)) and ``B`` ((2nv+na) x nu) of one step of ``dt`` from
    ``(q, v, act)`` under ``ctrl`` (and the joint torque ``tau``, None: zero), in
    tangent coordinates, on the compiled core (see the module docstring).

    Parameters
    ----------
    system : a :class:`pfaff.System` with actuators (``system.nu > 0``).
    q, v : the configuration (nq,) and velocity (nv,).
    act : the activations (na,) (None: zeros).
    ctrl : the controls (nu,) held over the step (None: zeros).
    dt : the step [s].
    tau : a joint torque (nv,) held with them.
    h : the central-difference step.
    **options : fields of :class:`~pfaff.simulate.SimOptions` (as a Simulator takes them).

    Returns
    -------
    StepDerivatives with ``act`` the activations after the step.
    """
    if not system.nu:
        raise ValueError("ctrl derivatives need actuators; this system has none (use tau)")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h = {h!r}: the difference step must be a finite number > 0")
    opt, engine, fallback, forces, proto, actuation = prepare(system, dt, options)
    if engine != "core":
        raise ValueError(f"ctrl derivatives run the compiled core; this system cannot: {fallback}")
    q, v = system._state(q, v, "v")
    tau = np.zeros(system.nv) if tau is None else system._vec(tau, system.nv, "tau", "nv")
    act, ctrl = actuation.check_act(act), actuation.check(ctrl)
    nv, na, nu = system.nv, actuation.na, actuation.nu
    starts = [(q, v, act, ctrl)]
    for k in range(2 * nv + na + nu):
        for s in (h, -h):
            x = [q, v.copy(), act.copy(), ctrl.copy()]
            if k < nv:
                x[0] = system.integrate(q, s * np.eye(nv)[k])
            elif k < 2 * nv:
                x[1][k - nv] += s
            elif k < 2 * nv + na:
                x[2][k - 2 * nv] += s
            else:
                x[3][k - 2 * nv - na] += s
            starts.append(tuple(x))
    ends = [_step(system, proto, forces, actuation, tau, dt, *x) for x in starts]
    q1, v1, a1 = ends[0]
    dx = np.array(
        [np.concatenate([system.difference(q1, qe), ve - v1, ae - a1]) for qe, ve, ae in ends]
    )
    cols = ((dx[1::2] - dx[2::2]) / (2 * h)).T
    n = 2 * nv + na
    how = f"central differences of the step in (q, v, act) and ctrl, h = {h:g} (compiled core)"
    return StepDerivatives(q1, v1, cols[:, :n].copy(), cols[:, n:].copy(), how, a1)


def of_simulator(sim, tau, ctrl) -> StepDerivatives:
    """:func:`ctrl_derivatives` at a :class:`pfaff.Simulator`'s state now, with its
    step and options."""
    opt = sim.options
    kw = {f.name: getattr(opt, f.name) for f in fields(opt) if f.name not in NOT_OPTIONS}
    return ctrl_derivatives(sim.system, sim.q, sim.v, sim.act, ctrl, opt.dt, tau, **kw)


def _step(system, proto, forces, actuation, tau, dt, q, v, act, ctrl):
    """``(q, v, act)`` one step after ``(q, v, act)`` under ``ctrl`` on the core."""
    torque = tau + actuation.tau(ctrl)
    actuation.set_act(act, 0.0)
    set_ctrl(proto, forces)
    cset = system.cset
    out = [np.empty((1, 2, w)) for w in (system.nq, system.nv, cset.dim)]
    out.append(np.empty((1, 2, len(cset.holonomic_rows))))
    taus = np.ascontiguousarray(torque[None, None, :], dtype=float)
    status = core.rollout(proto, q[None].copy(), v[None].copy(), taus, 0.0, 1, *out)
    if status[0].code != StatusCode.OK:
        raise SimulationError(f"the step failed: {status_message(cset, status[0])}")
    return out[0][0, 1], out[1][0, 1], actuation.activation(act, ctrl, dt)
