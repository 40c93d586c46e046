"""pfaff.load / System: the dynamics at a state against a second implementation (the
compiled core's solve) and against the constraint itself (A a + drift = 0)."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff import core
from tests.where import MODELS

FILES = ["five_bar.xml", "four_bar.xml", "four_bar.toml", "slider_crank.xml", "leg.xml"]


def _states(sys, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = sys.integrate(sys.q0, 0.3 * rng.standard_normal(sys.nv))
        q = pfaff.simulate.assembly.assemble(sys.cset, q, None, 1e-12, 100, sys.rank_tol).q
        _, A = sys.cset.holonomic_terms_at(q)
        v = rng.standard_normal(sys.nv)
        v -= np.linalg.pinv(A, rcond=1e-9) @ (A @ v)  # tangent: A v = 0, so drift is in range(A)
        yield q, v, rng.standard_normal(sys.nv)


@pytest.mark.parametrize("name", FILES)
def test_forward_dynamics_satisfies_constraints_and_matches_core(name):
    sys = pfaff.load(MODELS / name)
    assert sys.nq == sys.q0.shape[0] and sys.nv == sys.v0.shape[0]
    runs = core.available() and core.unsupported_reason(sys.cset) is None
    csys = core.build(sys.cset) if runs else None
    for q, v, tau in _states(sys, 8):
        res = sys.forward_dynamics(q, v, tau)
        ev = sys.cset.evaluate(sys.mechanism.compute(q, v, sys.cset.frames, extras=False))
        assert np.max(np.abs(ev.A @ res.a + ev.drift), initial=0.0) < 1e-8
        np.testing.assert_allclose(ev.A.T @ res.lam, res.F, atol=1e-8)
        if csys is not None:
            a, F, lam, rank = csys.solve(q, v, tau)
            np.testing.assert_allclose(res.a, a, atol=1e-8 * (1 + np.abs(a).max()))
            assert rank == res.rank


def test_manifold_roundtrip_and_bad_input():
    sys = pfaff.load(MODELS / "five_bar.xml")
    dq = np.linspace(-0.2, 0.3, sys.nv)
    np.testing.assert_allclose(sys.difference(sys.q0, sys.integrate(sys.q0, dq)), dq, atol=1e-12)
    with pytest.raises(ValueError, match=r"tau has shape \(3,\), expected \(4,\)"):
        sys.forward_dynamics(sys.q0, sys.v0, np.zeros(3))
    with pytest.raises(ValueError, match="non-finite"):
        sys.forward_dynamics(sys.q0, np.full(sys.nv, np.nan))
    with pytest.raises(pfaff.errors.ModelError, match="expected a model file"):
        pfaff.load("robot.obj")
