"""One compiled Differentiator called state after state gives what a fresh one gives at
each state. dA's entries are set to zero only where a kind writes them (a window kind's
rows move with its frames' supporting joints alone: dA_k's entries outside those rows'
supports stay at the zero they were made with); an entry written outside them would be
left from the state before and show here, in dF_dq and in the rank radius."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import pfaff
from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.simulate.forces import ForceSet
from tests.unit.dynamics.test_derivatives import _floating_ball, _two_link
from tests.unit.dynamics.test_derivatives_core import FIELDS
from tests.unit.dynamics.test_derivatives_core_kinds import CASES

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

MODELS = Path(__file__).resolve().parents[2] / "models"
TOL = 1e-12  # the same arithmetic in the same order: round-off at most


def _rel(x, ref) -> float:
    return float(np.abs(x - ref).max(initial=0.0) / max(1.0, np.abs(ref).max(initial=0.0)))


def _states(integrate, q0, nv, rng, n=4):
    return [
        (
            integrate(q0, rng.normal(0.0, 0.3, nv)),
            rng.normal(0.0, 1.0, nv),
            rng.normal(0.0, 1.0, nv),
        )
        for _ in range(n)
    ]


def _same_as_fresh(make, states) -> float:
    """The reused differentiator's fields against a fresh one's at every state (the
    largest relative difference); ``make()`` builds a new compiled differentiator."""
    reused, worst = make(), 0.0
    for q, v, tau in states:
        c, f = reused(q, v, tau), make()(q, v, tau)
        for name in FIELDS:
            worst = max(worst, _rel(c[name], f[name]))
        assert c["rank"] == f["rank"]
        assert np.isclose(c["rank_radius"], f["rank_radius"], rtol=TOL, atol=0.0)
    return worst


@pytest.mark.parametrize("case", list(CASES))
def test_a_reused_differentiator_is_a_fresh_one(case, panda):
    where, make_rows = CASES[case]
    mech = {"panda": lambda: panda, "floating": _floating_ball, "two_link": _two_link}[where]()
    rng = np.random.default_rng(11)
    q0 = pin.neutral(mech.model) if mech.nq > mech.nv else rng.uniform(-1.0, 1.0, mech.nq)
    cset = ConstraintSet(mech, make_rows(rng, q0))
    states = _states(mech.integrate, q0, mech.nv, rng)
    assert _same_as_fresh(lambda: core.differentiator(cset, 1e-9), states) <= TOL


@pytest.mark.parametrize("name", ["closed_chain_biped", "parallel_gripper"])
def test_a_reused_differentiator_on_the_model_files(name):
    """The files' knee and finger loops on a tree (the biped's loops share its free
    base's columns), with their force elements."""
    sys_ = pfaff.load(MODELS / f"{name}.xml")
    forces = ForceSet(sys_.mechanism, list(sys_.forces)).elements

    def make():
        return core.differentiator(sys_.cset, sys_.rank_tol, forces)

    states = _states(sys_.integrate, sys_.q0, sys_.nv, np.random.default_rng(5))
    assert _same_as_fresh(make, states) <= TOL
    # the comparison can fail: the derivatives of the state before differ from these
    (q1, v1, t1), (q2, v2, t2) = states[:2]
    d = make()
    assert _rel(d(q1, v1, t1)["dF_dq"].copy(), d(q2, v2, t2)["dF_dq"]) > 1e-3
