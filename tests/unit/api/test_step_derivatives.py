"""Jacobians of one simulator step (pfaff.api.step_derivatives) against the analytic
derivatives of the dynamics: as dt -> 0 the step is ``x + dt f(x, tau) + O(dt^2)``, so
``(A - I) / dt`` on the constraint manifold's tangent bundle and ``B / dt`` approach the
linearisation ``[[0, I], [da/dq, da/dv]]``, ``[0; da/dtau]`` with an error of order dt."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff.api.step_derivatives import step, step_derivatives
from pfaff.derivatives.terms import constraint_partials
from pfaff.simulate import SimOptions
from pfaff.simulate.assembly import assemble
from tests.where import MODELS

DTS = (2e-3, 1e-3, 5e-4)


def _state(sys, seed):
    rng = np.random.default_rng(seed)
    q = sys.integrate(sys.q0, 0.2 * rng.standard_normal(sys.nv))
    q = assemble(sys.cset, q, None, 1e-12, 100, sys.rank_tol).q
    ev = sys.cset.evaluate(sys.mechanism.compute(q, None, sys.cset.frames, dynamics=False))
    v = rng.standard_normal(sys.nv)
    v -= np.linalg.pinv(ev.A, rcond=1e-9) @ (ev.A @ v)
    return q, v, rng.standard_normal(sys.nv), ev.A


def _tangent_bundle_direction(sys, q, v, A, rng):
    """``(dq, dv)`` tangent to the manifold of states: ``A dq = 0`` and
    ``A dv + (dA[dq]) v = 0`` (the velocity constraint kept to first order)."""
    U, s, Vt = np.linalg.svd(A)
    r = int((s > 1e-9).sum())
    N = Vt[r:].T
    dq = N @ rng.standard_normal(N.shape[1])
    dA = np.tensordot(dq, constraint_partials(sys.cset, q, v).dA_dq, axes=(0, 0))
    dv = N @ rng.standard_normal(N.shape[1]) - np.linalg.pinv(A, rcond=1e-9) @ (dA @ v)
    return dq, dv


@pytest.mark.parametrize("name", ["four_bar.xml", "five_bar.xml"])
def test_step_jacobians_approach_the_continuous_linearisation(name):
    sys = pfaff.load(MODELS / name)
    q, v, tau, A = _state(sys, 1)
    nv = sys.nv
    d = sys.forward_dynamics_derivatives(q, v, tau)
    dq, dv = _tangent_bundle_direction(sys, q, v, A, np.random.default_rng(2))
    x = np.concatenate([dq, dv])
    f = np.concatenate([dv, d.da_dq @ dq + d.da_dv @ dv])
    errs = {"A": [], "B_v": [], "B_q": []}
    for dt in DTS:
        s = step_derivatives(sys, q, v, tau, dt)
        assert s.A.shape == (2 * nv, 2 * nv) and s.B.shape == (2 * nv, nv)
        q1, v1 = step(sys, q, v, tau, dt)
        np.testing.assert_allclose(sys.difference(q1, s.q), 0.0, atol=1e-14)
        errs["A"].append(np.abs((s.A @ x - x) / dt - f).max() / np.abs(f).max())
        errs["B_v"].append(np.abs(s.B[nv:] / dt - d.da_dtau).max() / np.abs(d.da_dtau).max())
        errs["B_q"].append(
            np.abs(s.B[:nv] / (dt * dt / 2) - d.da_dtau).max() / np.abs(d.da_dtau).max()
        )
    for key, e in errs.items():
        assert e[-1] < 0.05, (key, e)  # close at the smallest step ...
        assert e[-1] < 0.7 * e[0], (key, e)  # ... and closing in as dt shrinks (order dt)


def test_a_wrong_dynamics_derivative_is_caught():
    """The comparison can fail: da_dtau scaled by 1.01 misses the step's B / dt."""
    sys = pfaff.load(MODELS / "four_bar.xml")
    q, v, tau, _ = _state(sys, 3)
    nv = sys.nv
    d = sys.forward_dynamics_derivatives(q, v, tau)
    s = step_derivatives(sys, q, v, tau, DTS[-1])
    good = np.abs(s.B[nv:] / DTS[-1] - d.da_dtau).max() / np.abs(d.da_dtau).max()
    bad = np.abs(s.B[nv:] / DTS[-1] - 1.01 * d.da_dtau).max() / np.abs(d.da_dtau).max()
    assert good < 0.5 * bad


def test_refusals():
    sys = pfaff.load(MODELS / "four_bar.xml")
    q, v, tau, _ = _state(sys, 4)
    with pytest.raises(ValueError, match="fixed-step integrator"):
        step_derivatives(sys, q, v, tau, 1e-3, SimOptions(integrator="RK45"))
    with pytest.raises(ValueError, match=r"tau has shape \(2,\), expected \(3,\)"):
        step_derivatives(sys, q, v, tau[:2], 1e-3)
    with pytest.raises(ValueError, match="difference step"):
        step_derivatives(sys, q, v, tau, 1e-3, h=0.0)


def _agree(a, b_of_h, tol=1e-5):
    """Sensitivities ``a`` against the differences of the step at h = 1e-5 and 1e-6 (the
    better one: a difference step can cross one of the step's discrete decisions, a
    Newton iteration more or less, and is then off by that jump / h)."""
    errs = []
    for h in (1e-5, 1e-6):
        b = b_of_h(h)
        errs.append(
            max(
                np.abs(a.A - b.A).max() / max(1.0, np.abs(b.A).max()),
                np.abs(a.B - b.B).max() / max(1.0, np.abs(b.B).max()),
            )
        )
    return min(errs) <= tol, errs


@pytest.mark.parametrize(
    "name", ["four_bar.xml", "five_bar.xml", "slider_crank.xml", "gripper.xml"]
)
def test_sensitivities_equal_differences(name):
    """Forward-mode sensitivities through the replayed step against central differences
    of the step itself, at three states and two steps (dt = 1e-2 makes the stages'
    projections large; the gripper's parallelograms put stages on straight branches,
    left unprojected by the step)."""
    sys = pfaff.load(MODELS / name)
    for seed in range(3):
        q, v, tau, _ = _state(sys, 10 + seed)
        for dt in (1e-3, 1e-2):
            a = step_derivatives(sys, q, v, tau, dt, method="sensitivities")
            assert a.method == "forward-mode sensitivities"
            ok, errs = _agree(
                a,
                lambda h, q=q, v=v, tau=tau, dt=dt: step_derivatives(
                    sys, q, v, tau, dt, h=h, method="differences"
                ),
            )
            assert ok, (seed, dt, errs)
    wrong = step_derivatives(sys, q, v, tau, 1.01 * dt, method="sensitivities")
    ok, _ = _agree(
        wrong, lambda h: step_derivatives(sys, q, v, tau, dt, h=h, method="differences")
    )
    assert not ok  # the comparison can fail: a step 1 % longer is seen


def test_sensitivities_with_force_elements_and_on_a_lie_group():
    """A damped, sprung four-bar (force elements in every stage, their derivatives on
    the core: no warning), and a floating leg
    (free joint: nq != nv), where "auto" takes the differences and "sensitivities" is
    refused with the reason."""
    from pfaff.files.model import load_model
    from pfaff.simulate.forces_joint import JointDamper, JointSpring

    model = load_model(MODELS / "four_bar.xml")
    model.forces += [JointSpring("crank", 4.0, 0.3), JointDamper("rocker", 0.7)]
    sys = pfaff.System(model)
    q, v, tau, _ = _state(sys, 20)
    with warnings.catch_warnings():  # the stages' derivatives on the core, no fallback
        warnings.simplefilter("error")
        a = step_derivatives(sys, q, v, tau, 1e-2, method="sensitivities")
    ok, errs = _agree(
        a, lambda h: step_derivatives(sys, q, v, tau, 1e-2, h=h, method="differences")
    )
    assert ok, errs
    leg = pfaff.load(MODELS / "leg.xml")
    assert leg.nq != leg.nv
    assert step_derivatives(leg, leg.q0, leg.v0, np.zeros(leg.nv), 1e-3).method.startswith(
        "central differences"
    )
    with pytest.raises(ValueError, match="nq == nv"):
        step_derivatives(leg, leg.q0, leg.v0, np.zeros(leg.nv), 1e-3, method="sensitivities")


@pytest.mark.parametrize("name", ["four_bar.xml", "five_bar.xml", "gripper.xml", "leg.xml"])
def test_the_compiled_step_is_the_numpy_engines(name):
    """The step the derivatives difference is the compiled core's; the NumPy engine's
    step is its reference: equal to round-off at many states (off the manifold too: the
    perturbed starts of the differences), and so are the Jacobians of both."""
    from dataclasses import replace

    from pfaff.api.step_derivatives import _differences, _options, _Stepper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys = pfaff.load(MODELS / name)
    opt = _options(None, 2e-3)
    compiled = _Stepper(sys, None, opt)
    assert compiled.engine == "core"
    reference = _Stepper(sys, None, replace(opt))
    reference.proto = None  # the NumPy engine's step
    rng = np.random.default_rng(5)
    Q, V, T = [], [], []
    for seed in range(8):
        q, v, tau, _ = _state(sys, 30 + seed)
        off = 1e-4 * rng.standard_normal(sys.nv) * (seed % 2)  # every other one off it
        Q.append(sys.integrate(q, off))
        V.append(v)
        T.append(tau)
    Q, V, T = map(np.array, (Q, V, T))
    q1, v1 = compiled(Q, V, T)
    r1, w1 = reference(Q, V, T)
    dq = max(np.abs(sys.difference(a, b)).max() for a, b in zip(q1, r1))
    assert dq <= 1e-11  # rad, m
    assert np.abs(v1 - w1).max() <= 1e-9 * max(1.0, np.abs(w1).max())  # rad/s, m/s
    q, v, tau = Q[0], V[0], T[0]
    a = _differences(sys, compiled, q, v, tau, 1e-5)
    b = _differences(sys, reference, q, v, tau, 1e-5)
    assert "compiled core" in a.method and "NumPy engine" in b.method
    assert np.abs(a.A - b.A).max() <= 1e-5 * max(1.0, np.abs(b.A).max())
    assert np.abs(a.B - b.B).max() <= 1e-5 * max(1.0, np.abs(b.B).max())
    wrong = _differences(sys, _Stepper(sys, None, _options(None, 2.02e-3)), q, v, tau, 1e-5)
    assert np.abs(wrong.A - b.A).max() > 1e-5 * max(1.0, np.abs(b.A).max())


def test_a_step_that_fails_names_its_state():
    """A start the correction cannot bring back (far off the loop) fails the step with
    a SimulationError, not NaN Jacobians."""
    sys = pfaff.load(MODELS / "four_bar.xml")
    q = sys.q0 + 3.0
    with pytest.raises(pfaff.simulate.SimulationError, match="the step from state 0"):
        step(sys, q, sys.v0, np.zeros(sys.nv), 1e-3)
