"""examples/ilqr_five_bar.py: iLQR on the five-bar with the step's analytic
sensitivities and with its central differences -- the same iterates (the Jacobians
agree), a falling cost, and the goal approached."""

from __future__ import annotations

import importlib.util

import numpy as np

from tests.where import REPO


def _example():
    spec = importlib.util.spec_from_file_location(
        "ilqr_five_bar", REPO / "examples" / "ilqr_five_bar.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ilqr_on_the_five_bar_same_iterates_with_both_jacobians():
    ex = _example()
    args = ex.problem(horizon=12, dt=0.04)
    Ua, ca, _ = ex.ilqr(*args, method="sensitivities", iters=4, tol=0.0)
    Ub, cb, _ = ex.ilqr(*args, method="differences", iters=4, tol=0.0)
    assert len(ca) == len(cb) == 5
    assert ca[-1] < 0.5 * ca[0]  # the optimiser makes progress
    np.testing.assert_allclose(ca, cb, rtol=1e-6)
    np.testing.assert_allclose(Ua, Ub, atol=1e-5 * np.abs(Ub).max())
