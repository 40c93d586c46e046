"""The fixed-step integrators as data (pfaff.simulate.tableaus): each tableau reaches its
order on a constrained system, and RK4 from its tableau is the RK4 both engines ran."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnCircle
from pfaff.mechanism import planar_particle
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.tableaus import TABLEAUS, Tableau
from tests.where import MODELS


def _pendulum():
    mech = planar_particle(1.0)
    return ConstraintSet(mech, [PointOnCircle("particle", (0.0, 0.0), 1.0)])


def _end(cset, integrator: str, dt: float) -> np.ndarray:
    opt = SimOptions(dt=dt, integrator=integrator, engine="numpy", progress=False)
    opt.position_tol, opt.stage_projection = 1e-13, False
    return simulate(cset, np.array([1.0, 0.0]), np.array([0.0, 2.0]), 0.4, opt).arrays()["q"][-1]


@pytest.mark.parametrize("name", list(TABLEAUS))
def test_each_tableau_reaches_its_order(name):
    """The end position's error [m] against RK4 at dt / 64 falls as dt^p when dt halves
    (a pendulum on its circle, 0.4 s)."""
    cset = _pendulum()
    ref = _end(cset, "rk4", 0.02 / 64)
    e1 = np.abs(_end(cset, name, 0.02) - ref).max()
    e2 = np.abs(_end(cset, name, 0.01) - ref).max()
    p = np.log2(e1 / e2)
    assert TABLEAUS[name].order - 0.5 <= p <= TABLEAUS[name].order + 0.7, (name, p, e1, e2)


def test_a_wrong_tableau_is_refused_or_loses_its_order():
    """Wrong input: weights that do not sum to one are refused; a consistent tableau with
    a wrong weight (Heun's with b = (1, 0): explicit Euler) loses an order."""
    bad = dataclasses.replace(TABLEAUS["rk3"], b=(0.2, 0.6, 0.1))
    with pytest.raises(ValueError, match="sum b = 1"):
        bad.check()
    euler = Tableau("heun", ((0, 0), (1, 0)), (1.0, 0.0), (0, 1), 2)
    euler.check()
    TABLEAUS["heun"], saved = euler, TABLEAUS["heun"]
    try:
        cset = _pendulum()
        ref = _end(cset, "rk4", 0.02 / 64)
        e1 = np.abs(_end(cset, "heun", 0.02) - ref).max()
        e2 = np.abs(_end(cset, "heun", 0.01) - ref).max()
    finally:
        TABLEAUS["heun"] = saved
    assert np.log2(e1 / e2) < 1.5


@pytest.mark.parametrize("name", list(TABLEAUS))
def test_the_core_runs_every_tableau_as_the_numpy_engine(name):
    """One registry, both engines: each tableau's run of the five-bar on the compiled
    core (a and b handed over by System.set_tableau) equals the NumPy engine's to
    round-off over 200 steps [rad], and a different method's run does not."""
    if not core.available():
        pytest.skip("the compiled core is not built")
    sys = pfaff.load(MODELS / "five_bar.xml")

    def run(integrator, engine):
        opt = SimOptions(dt=2e-3, integrator=integrator, engine=engine, progress=False)
        return simulate(sys.cset, sys.q0, sys.v0, 0.4, opt).arrays()["q"]

    q_core = run(name, "core")
    assert np.abs(q_core - run(name, "numpy")).max() < 1e-9
    other = "heun" if name != "heun" else "rk4"
    assert np.abs(q_core - run(other, "numpy")).max() > 1e-7  # the witness can fail


def test_an_integrator_the_core_does_not_run_is_refused_there():
    cset = ConstraintSet(planar_particle(1.0), [PointOnCircle("particle", (0.0, 0.0), 1.0)])
    for engine in ("core", "auto"):
        opt = SimOptions(dt=1e-3, integrator="Radau", engine=engine)
        with pytest.raises(ValueError, match="'Radau' .* runs on the NumPy reference engine only"):
            simulate(cset, np.array([1.0, 0.0]), np.zeros(2), 0.01, opt)


def test_set_tableau_checks_its_arrays():
    if not core.available():
        pytest.skip("the compiled core is not built")
    s = core.build(_pendulum())
    with pytest.raises(ValueError, match="strictly lower triangular"):
        s.set_tableau(np.eye(2), np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="a has shape \\(2, 2\\), expected \\(3, 3\\)"):
        s.set_tableau(np.zeros((2, 2)), np.ones(3) / 3)
    with pytest.raises(ValueError, match="b has a non-finite entry nan"):
        s.set_tableau(np.zeros((2, 2)), np.array([np.nan, 1.0]))
    assert s.stages == 4  # RK4 until set
