"""The compiled derivatives with force elements (src/cpp/forces/<name>.cpp: every
built-in kind's dQ/dq and dQ/dv analytic) against the NumPy reference, whose force
partials are central differences of the NumPy elements' Q (an independent
implementation of Q, differentiated independently): every kind alone at 10 states,
and the user-style gripper and biped files (springs, dampers, ball-joint springs, loops)
through ``System.forward_dynamics_derivatives``."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.derivatives import forward_dynamics_derivatives
from pfaff.mechanism import load_robot
from pfaff.simulate import JointSpring
from pfaff.simulate.forces import ForceSet
from tests.parity.test_lowerings import FORCES, ON_BALLS, _balls
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

FIELDS = ("a", "da_dq", "da_dv", "da_dtau", "dF_dq", "dF_dv", "dlam_dq", "dlam_dv")


def _numpy(cset, fset, q, v, tau, h=1e-6):
    """The NumPy reference: the elements' Q and its central differences in q (tangent)
    and v, into pfaff.derivatives."""
    mech, nv = cset.mechanism, cset.mechanism.nv

    def Q(qq, vv):
        return fset.evaluate(0.0, mech.compute(qq, vv, fset.frames))[0]

    dq, dv = np.empty((nv, nv)), np.empty((nv, nv))
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        dq[:, k] = (Q(mech.integrate(q, e), v) - Q(mech.integrate(q, -e), v)) / (2 * h)
        dv[:, k] = (Q(q, v + e) - Q(q, v - e)) / (2 * h)
    return forward_dynamics_derivatives(cset, q, v, tau + Q(q, v), 1e-9, dq, dv)


def _worst(c, d) -> float:
    """The largest field error relative to max(1, |reference|)."""
    out = 0.0
    for name in FIELDS:
        ref = np.asarray(getattr(d, name))
        err = np.abs(np.asarray(c[name]) - ref).max(initial=0.0)
        out = max(out, float(err / max(1.0, np.abs(ref).max(initial=0.0))))
    return out


@pytest.fixture(scope="module")
def panda():
    return load_robot("panda")


@pytest.mark.parametrize("kind", list(FORCES), ids=lambda t: t.__name__)
def test_each_force_kind_core_derivatives_equal_numpys(panda, kind):
    """a and its derivatives in q, v, tau of one element on an unconstrained Panda (a
    free body carrying a ball joint for the ball kinds): core vs NumPy at 10 states to
    1e-6 relative (the reference's central differences of Q carry ~1e-9)."""
    e = FORCES[kind]()
    mech = _balls() if kind in ON_BALLS else panda
    fset = ForceSet(mech, [e])
    cset = ConstraintSet(mech, [])
    compiled = core.differentiator(cset, 1e-9, [e])
    rng = np.random.default_rng(4)
    for _ in range(10):
        q = mech.integrate(mech.neutral(), rng.uniform(-1.0, 1.0, mech.nv))
        v, tau = rng.uniform(-1.0, 1.0, mech.nv), rng.uniform(-2.0, 2.0, mech.nv)
        c, d = compiled(q, v, tau), _numpy(cset, fset, q, v, tau)
        assert _worst(c, d) <= 1e-6, kind.__name__


@pytest.mark.parametrize("name", ["parallel_gripper", "closed_chain_biped"])
def test_user_files_derivatives_on_the_core(name):
    """The gripper (a tendon loop, springs, dampers) and the biped (free base, ball-joint
    springs and dampers, loops): "auto" takes the core with no warning, equal to the
    NumPy reference at 5 states to 1e-6; a stiffer knee spring (the deliberate wrong
    input) moves da_dq by more than that."""
    sys_ = pfaff.load(MODELS / f"{name}.xml")
    rng = np.random.default_rng(8)
    fset = ForceSet(sys_.mechanism, list(sys_.forces))
    for _ in range(5):
        q = sys_.integrate(sys_.q0, rng.normal(0, 0.05, sys_.nv))
        v, tau = rng.normal(0, 0.5, sys_.nv), rng.normal(0, 0.5, sys_.nv)
        c = sys_.forward_dynamics_derivatives(q, v, tau)
        assert c.engine == "core"
        d = _numpy(sys_.cset, fset, q, v, tau)
        assert _worst({f: getattr(c, f) for f in FIELDS}, d) <= 1e-6
    hinge = next(e for e in sys_.forces if isinstance(e, JointSpring))
    stiffer = ForceSet(sys_.mechanism, [*sys_.forces, JointSpring(hinge.joint, 50.0)])
    wrong = _numpy(sys_.cset, stiffer, q, v, tau)
    assert np.abs(wrong.da_dq - c.da_dq).max() > 1e-4


@pytest.mark.parametrize("name", ["parallel_gripper", "closed_chain_biped"])
def test_partials_from_the_mass_pass_equal_pinocchios_forward_step(name):
    """The RNEA partials' forward step reads the dynamics' fused mass pass at (q, v)
    (placements, Jacobian, velocities, the acceleration at a = 0 plus J a down each
    path); where the mass of q stands from the call before (the same q, another v) it
    runs Pinocchio's own forward step from q and v. Both, at 5 states, agree to 1e-9
    relative; a v that differs in one coordinate (the wrong input) moves da_dq by more."""
    sys_ = pfaff.load(MODELS / f"{name}.xml")
    forces = ForceSet(sys_.mechanism, list(sys_.forces)).elements
    rng = np.random.default_rng(12)
    for _ in range(5):
        q = sys_.integrate(sys_.q0, rng.normal(0, 0.05, sys_.nv))
        v0, v, tau = (rng.normal(0, 0.5, sys_.nv) for _ in range(3))
        shared = core.differentiator(sys_.cset, sys_.rank_tol, forces)(q, v, tau)
        again = core.differentiator(sys_.cset, sys_.rank_tol, forces)
        again(q, v0, tau)  # the mass of q now stands: the next call runs RNEA's pass
        own = again(q, v, tau)
        assert _worst(shared, _Fields(own)) <= 1e-9
    w = v.copy()
    w[-1] += 0.5
    moved = core.differentiator(sys_.cset, sys_.rank_tol, forces)(q, w, tau)
    assert np.abs(moved["da_dq"] - shared["da_dq"]).max() > 1e-6


class _Fields:
    """A result dict read as attributes (as _worst reads the reference)."""

    def __init__(self, d: dict):
        self.__dict__.update(d)
