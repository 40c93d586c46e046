"""The running accounts (work of tau, work of the force elements, the corrections'
energy) of a chain of phases: every phase counts them from zero and the chain counts
them on, so the energy balance holds over a run with impacts and held stops."""

from __future__ import annotations

import numpy as np

import pfaff
from pfaff.simulate import JointDamper, SimOptions
from pfaff.simulate.limits import JointLimit, simulate_limited
from pfaff.simulate.options import use_engine
from pfaff.simulate.policy import ACCOUNTS
from tests.where import MODELS


def _run():
    s = pfaff.load(MODELS / "limited_pendulum.xml")
    return simulate_limited(
        s.cset, s.q0, s.v0, 1.5, [JointLimit("hinge", -0.5, 2.0, 0.3)],
        SimOptions(dt=1e-3, progress=False), forces=[JointDamper("hinge", 0.05)],
        tau=np.array([-0.8]),
    )  # fmt: skip


def _balance(run) -> np.ndarray:
    a = run.trajectory.arrays()
    out = a["energy"] - a["energy"][0] - a["work"] - a["force_work"]
    return out - a["correction_energy"] + run.impact_loss


def test_energy_balance_over_impacts_with_tau_and_a_damper(monkeypatch):
    """A pendulum driven by a constant torque and damped, onto its stop with e = 0.3:
    E - E0 = work + force_work + correction_energy - impact_loss to 1e-8 J at every
    sample of a run of several phases, while both works exceed 0.05 J; the accounts
    left as each phase counted them (from zero: the deliberate wrong input) miss it by
    more than 1e-3 J."""
    run = _run()
    assert len(run.events) >= 1  # two phases at least
    a = run.trajectory.arrays()
    assert abs(a["work"][-1]) > 0.05 and a["force_work"][-1] < -0.05
    assert np.abs(_balance(run)).max() <= 1e-8
    assert ACCOUNTS == ("work", "correction_energy", "force_work")
    monkeypatch.setattr("pfaff.simulate.trajectory.ACCOUNTS", ())
    with use_engine("numpy"):  # the phase loop, whose phases Trajectory.concat joins
        assert np.abs(_balance(_run())).max() > 1e-3
