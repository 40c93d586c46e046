"""The compiled derivatives of a mechanism given in closed form (:mod:`pfaff.plant`: its
``compute`` called from the core, no Pinocchio derivative pass behind it): central
differences of the terms the core evaluates (src/cpp/algorithms/plant_derivatives.cpp)
against three witnesses: the NumPy reference (``pfaff.derivatives.terms``, its own
differences of ``compute``), Pinocchio's analytic derivatives of the same mechanism
(a PinocchioMechanism whose ``compute`` is overridden), and Richardson-extrapolated
differences of the whole forward dynamics. A held control law's torque is the
caller's tau: the derivatives of a system holding one are those without it. The docs'
example (docs/derivatives.md) runs and prints what it says."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pfaff import core
from pfaff import dynamics as dyn
from pfaff.constraints import ConstraintSet
from pfaff.derivatives import forward_dynamics_derivatives
from pfaff.mechanism import PinocchioMechanism
from pfaff.scenarios import slider_crank
from pfaff.simulate import JointDamper, JointSpring
from pfaff.simulate.core_engine import add_held
from pfaff.systems.yz_planar import YZPlanarPlant
from tests.unit.dynamics.test_derivatives import H_LIN, _fd, _rel
from tests.where import REPO

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

FIELDS = (
    "a", "lam", "F", "da_dq", "da_dv", "da_dtau", "dlam_dq", "dlam_dv", "dlam_dtau",
    "dF_dq", "dF_dv", "dF_dtau",
)  # fmt: skip


def _worst(c: dict, ref) -> float:
    """The largest field error relative to max(1, |reference|) (ref: a dict or a
    DynamicsDerivatives)."""
    get = ref.get if isinstance(ref, dict) else lambda name: getattr(ref, name)
    out = 0.0
    for name in FIELDS:
        r = np.asarray(get(name))
        err = np.abs(np.asarray(c[name]) - r).max(initial=0.0)
        out = max(out, float(err / max(1.0, np.abs(r).max(initial=0.0))))
    return out


def _states(nv: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield rng.uniform(-2, 2, nv), rng.uniform(-3, 3, nv), rng.uniform(-2, 2, nv)


def _against_differences(cset, c: dict, q, v, tau) -> float:
    """da and dlambda of ``c`` against Richardson differences of the forward dynamics
    (``compute`` of the mechanism, pfaff.dynamics)."""
    mech, nv = cset.mechanism, cset.mechanism.nv

    def out(qq, vv, tt):
        snap = mech.compute(qq, vv, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        sol = dyn.solve_constrained(snap.M, snap.h, tt, ev.A, ev.drift, 1e-9)
        return np.concatenate([sol.a, sol.lam])

    add = lambda x, dx: x + dx  # noqa: E731
    errs = []
    for name, J in (
        ("q", _fd(lambda x: out(x, v, tau), q, mech.integrate, nv)),
        ("v", _fd(lambda x: out(q, x, tau), v, add, nv, H_LIN)),
        ("tau", _fd(lambda x: out(q, v, x), tau, add, nv, H_LIN)),
    ):
        errs.append(_rel(c[f"da_d{name}"], J[:nv]))
        errs.append(_rel(c[f"dlam_d{name}"], J[nv:]))
    return max(errs)


def _yz():
    bases = [(-0.4, 0.0), (0.4, 0.0)]
    return YZPlanarPlant(0.2, bases, model="closed_form").free


@pytest.mark.parametrize("which", ["slider-crank", "yz two-arm"])
def test_a_closed_form_mechanism_on_the_core_equals_numpy_and_differences(which):
    """The closed-form slider-crank (Aghili eq. 68; 2 coordinates, 1 row) and the YZ
    two-arm plant (7 coordinates, the pins' 4 rows) at 8 states: every field of the core
    equals the NumPy reference's to 1e-9 relative (both central differences of the same
    ``compute`` with the same steps: measured 5e-11, 6e-12), and da, dlambda equal
    Richardson differences of the whole dynamics to 1e-6."""
    if which == "slider-crank":
        cset = slider_crank.build(1.0, 1.0, 9.81, "closed-form")[1]
    else:
        cset = _yz()
    assert core.unsupported_reason(cset) is None
    compiled = core.differentiator(cset, 1e-9)
    nv = cset.mechanism.nv
    for q, v, tau in _states(nv, 8, seed=3):
        c = compiled(q, v, tau)
        assert _worst(c, forward_dynamics_derivatives(cset, q, v, tau, 1e-9)) <= 1e-9
        assert _against_differences(cset, c, q, v, tau) <= 1e-6


def _chain_and(kind: type):
    chain, cset = slider_crank.build(1.0, 1.0, 9.81, "pinocchio")
    return cset, ConstraintSet(kind(chain.model, "plant"), cset.constraints)


class _Wrapped(PinocchioMechanism):
    """Pinocchio's own terms, reached through an overridden compute: a plant."""

    def compute(self, q, v=None, frames=(), dynamics=True, extras=True):
        return super().compute(q, v, frames, dynamics, extras)


class _Damped(PinocchioMechanism):
    """Pinocchio's terms plus viscous joint friction in h (0.5 N m s / rad)."""

    def compute(self, q, v=None, frames=(), dynamics=True, extras=True):
        snap = super().compute(q, v, frames, dynamics, extras)
        if dynamics:
            snap.h = snap.h + 0.5 * snap.v
        return snap


def test_a_plant_of_pinocchio_terms_equals_pinocchios_analytic_derivatives():
    """The slider-crank's Pinocchio chain reached as a plant (its compute overridden):
    the core's central differences equal the core's analytic derivatives of the chain
    (Pinocchio's RNEA and kinematic-Hessian passes) to 1e-8 relative at 10 states
    (measured 9e-11)."""
    cset, wrapped = _chain_and(_Wrapped)
    analytic, plant = core.differentiator(cset, 1e-9), core.differentiator(wrapped, 1e-9)
    for q, v, tau in _states(2, 10, seed=5):
        assert _worst(plant(q, v, tau), analytic(q, v, tau)) <= 1e-8


def test_the_plants_own_compute_is_what_is_differentiated():
    """A plant whose compute adds damping to h: on both engines its derivatives are the
    chain's analytic ones with the torque ``tau - 0.5 v`` (d tau / dv = -0.5 I), to 1e-8
    relative; the chain's own derivatives (what a reference that reads Pinocchio's model
    instead of the override gives) miss the damping by more than 0.1 in da_dv."""
    cset, damped = _chain_and(_Damped)
    plant = core.differentiator(damped, 1e-9)
    for q, v, tau in _states(2, 6, seed=9):
        ref = forward_dynamics_derivatives(
            cset, q, v, tau - 0.5 * v, 1e-9, np.zeros((2, 2)), -0.5 * np.eye(2)
        )
        c = plant(q, v, tau)
        assert _worst(c, ref) <= 1e-8
        assert _worst(c, forward_dynamics_derivatives(damped, q, v, tau, 1e-9)) <= 1e-8
        own = forward_dynamics_derivatives(cset, q, v, tau, 1e-9)
        assert np.abs(c["da_dv"] - own.da_dv).max() > 0.1


def test_force_elements_on_a_plant():
    """A joint spring (k = 4 N m/rad, rest 0.3 rad) and a joint damper (0.7 N m s/rad)
    on the closed-form slider-crank: the core's derivatives (the elements' Q inside the
    differenced terms) equal the NumPy reference given the elements' closed-form Q and
    partials (-k e_0 e_0^T, -b e_1 e_1^T) to 1e-9 relative at 6 states."""
    mech, cset = slider_crank.build(1.0, 1.0, 9.81, "closed-form")
    elements = [JointSpring(0, 4.0, 0.3), JointDamper(1, 0.7)]
    for e in elements:
        e.bind(mech)
    compiled = core.differentiator(cset, 1e-9, elements)
    dq, dv = np.diag([-4.0, 0.0]), np.diag([0.0, -0.7])
    for q, v, tau in _states(2, 6, seed=11):
        Q = np.array([-4.0 * (q[0] - 0.3), -0.7 * v[1]])
        ref = forward_dynamics_derivatives(cset, q, v, tau + Q, 1e-9, dq, dv)
        assert _worst(compiled(q, v, tau), ref) <= 1e-9


def test_a_held_law_is_the_callers_torque():
    """A core system holding a control law (a damper sampled and held) differentiates as
    the same system without it: the held torque is constant over the controller's
    period, so it enters as the caller's tau (bit-for-bit the same fields)."""
    mech, cset = slider_crank.build(1.0, 1.0, 9.81, "pinocchio")
    plain, held = core.build(cset), core.build(cset)
    law = JointDamper(0, 3.0)
    law.bind(mech)
    add_held(held, mech, [law])
    q, v, tau = np.array([0.4, -0.9]), np.array([1.0, 0.5]), np.array([0.2, -0.1])
    a = core._core.Differentiator(plain).compute(q, v, tau)
    b = core._core.Differentiator(held).compute(q, v, tau)
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_the_docs_example_runs(capsys):
    """docs/derivatives.md's closed-form example, as written: the core takes it and names
    the differenced kind, as its comment says."""
    text = (REPO / "docs" / "derivatives.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    (example,) = [b for b in blocks if '"closed-form"' in b]
    exec(compile(example, "docs/derivatives.md", "exec"), {})
    assert capsys.readouterr().out.split() == ["core", "('PointOnPlane',)", "True"]
