"""Simulator.step_derivatives linearises exactly the step the Simulator takes: its
columns against central differences of Simulator steps themselves (on the compiled
core), at several states of a loop (the torque Jacobian B) and on an actuated arm (A and
B, the actuators' springs and dampers included)."""

from __future__ import annotations

import numpy as np

import pfaff
from tests.where import MODELS


def _step_from(sys, q, v, tau=None, ctrl=None):
    sim = pfaff.Simulator(sys, dt=1e-3)
    sim.reset(q, v)
    sim.step(tau, ctrl=ctrl)
    return sim.q, sim.v


def _columns(sys, q, v, tau, ctrl, h=1e-6):
    """Central differences of Simulator steps: d x_next along each q, v, tau direction."""
    q1, _ = _step_from(sys, q, v, tau, ctrl)
    nv = sys.nv

    def delta(qq, vv, tt):
        qa, va = _step_from(sys, qq, vv, tt, ctrl)
        return np.concatenate([sys.difference(q1, qa), va])

    A, B = np.empty((2 * nv, 2 * nv)), np.empty((2 * nv, nv))
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        A[:, k] = (delta(sys.integrate(q, e), v, tau) - delta(sys.integrate(q, -e), v, tau)) / (
            2 * h
        )
        A[:, nv + k] = (delta(q, v + e, tau) - delta(q, v - e, tau)) / (2 * h)
        B[:, k] = (delta(q, v, tau + e) - delta(q, v, tau - e)) / (2 * h)
    return A, B


def test_step_derivatives_are_the_simulators_step():
    sys = pfaff.load(MODELS / "five_bar.xml")
    sim = pfaff.Simulator(sys, dt=1e-3)
    rng = np.random.default_rng(4)
    for _ in range(3):
        sim.step(rng.uniform(-0.5, 0.5, sys.nv), n=20)
        q, v = sim.q, sim.v
        tau = rng.uniform(-0.5, 0.5, sys.nv)
        A, B = sim.step_derivatives(tau)
        assert np.array_equal(sim.q, q) and np.array_equal(sim.v, v)  # the state stays
        # B against the Simulator's own steps (a reset re-assembles a start moved off the
        # loop, so A is checked on the unconstrained arm below and in
        # test_step_derivatives.py against the step without re-assembly)
        _, B_fd = _columns(sys, q, v, tau, None)
        assert np.abs(B - B_fd).max() <= 1e-6 * max(1.0, np.abs(B_fd).max())
    # the witness can fail: another step size's Jacobian is far from this one
    _, B_other = pfaff.Simulator(sys, dt=5e-3).step_derivatives(tau)
    assert np.abs(B_other - B).max() > 1e-4


def test_step_derivatives_with_actuators_include_their_springs():
    sys = pfaff.load(MODELS / "actuated_arm.xml")
    sys.actuators = [a for a in sys.actuators if a.forcerange is None and not any(a.gain_terms)]
    ctrl = np.linspace(-0.5, 0.5, sys.nu)
    sim = pfaff.Simulator(sys, dt=1e-3)
    A, B = sim.step_derivatives(np.zeros(sys.nv), ctrl=ctrl)
    A_fd, B_fd = _columns(sys, sim.q, sim.v, np.zeros(sys.nv), ctrl)
    assert np.abs(A - A_fd).max() <= 1e-5 * max(1.0, np.abs(A_fd).max())
    assert np.abs(B - B_fd).max() <= 1e-5 * max(1.0, np.abs(B_fd).max())
