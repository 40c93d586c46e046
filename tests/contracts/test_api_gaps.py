"""Smaller API gaps: PlanarLink's fixed angle offset and
energy_drift_rel against a stated reference (energy_reference), each with a bad input."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.mechanism import ModelError, PlanarLink, planar_chain
from pfaff.scenarios.parallelogram_chain import branch_state, parallelogram_chain
from pfaff.scenarios.runner import execute
from pfaff.simulate import SimOptions, simulate

ALPHA = (0.4, -0.9, 1.3)  # offsets of the three links [rad]


def _arm(offsets):
    links = [
        PlanarLink(0.5, 1.0, com=0.2, inertia=0.02, com_y=0.05, angle=offsets[0]),
        PlanarLink(0.4, 0.8, inertia=0.01, angle=offsets[1]),
        PlanarLink(0.3, 0.5, com_y=-0.04, inertia=0.005, angle=offsets[2]),
    ]
    return planar_chain(links, name="arm")


def test_planar_link_angle_offset_equals_shifted_joint_angles():
    """A chain with offsets alpha_i at q is the plain chain at q + alpha (every frame's
    position and orientation, M and the potential, at 20 states): the offset turns the
    link's axis at q_i = 0 by alpha_i, as documented."""
    off, plain = _arm(ALPHA), _arm((0.0, 0.0, 0.0))
    frames = ("arm_link1", "arm_link2", "arm_link3", "arm_tip")
    rng = np.random.default_rng(1)
    for _ in range(20):
        q, v = rng.uniform(-3, 3, 3), rng.normal(0, 1, 3)
        a = off.compute(q, v, frames)
        b = plain.compute(q + np.array(ALPHA), v, frames)
        for f in frames:
            assert np.abs(a.frames[f].p - b.frames[f].p).max() <= 1e-14
            assert np.abs(a.frames[f].R - b.frames[f].R).max() <= 1e-14
        assert np.abs(a.M - b.M).max() <= 1e-14
        assert abs(a.potential - b.potential) <= 1e-13
    # the absolute angle of the tip link at q = 0 is the sum of the offsets
    R = off.compute(np.zeros(3), None, ("arm_tip",)).frames["arm_tip"].R
    assert np.arctan2(R[1, 0], R[0, 0]) == pytest.approx(sum(ALPHA), abs=1e-14)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_planar_link_bad_angle_offset_is_refused(bad):
    with pytest.raises(ModelError, match=r"link 2: angle offset must be a finite number"):
        _arm((0.0, bad, 0.0))


def _circle_run(potential_offset):
    cs = parallelogram_chain(1)
    q0, v0 = branch_state(1, -1.0, 2.0)
    opt = SimOptions(dt=1e-2, potential_offset=potential_offset)
    return simulate(cs, q0, v0, 1.0, opt)


def test_energy_drift_rel_does_not_depend_on_the_potential_zero():
    """The same run with the potential's zero moved by 1e3 J: |E0| changes by 1e3 J,
    energy_drift_rel (over the largest kinetic energy, energy_reference) does not; the
    former |E0| normalisation would change by orders of magnitude."""
    a, b = _circle_run(0.0), _circle_run(-1e3)
    assert a.energy_reference() == pytest.approx(b.energy_reference(), rel=1e-12)
    assert a.energy_reference() > 0.1
    assert a.energy_drift_rel() == pytest.approx(b.energy_drift_rel(), rel=1e-9)
    Ea, Eb = a.arrays()["energy"], b.arrays()["energy"]
    assert abs(Eb[0] - Ea[0] - 1e3) <= 1e-9
    dE = np.abs(Ea - Ea[0]).max()
    assert a.energy_drift_rel() == pytest.approx(dE / a.arrays()["kinetic"].max(), rel=1e-12)
    # a stated reference is used as given
    assert a.energy_drift_rel(reference=2.0) == pytest.approx(dE / 2.0, rel=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_energy_drift_rel_refuses_a_bad_reference(bad):
    with pytest.raises(ValueError, match="energy reference must be a finite energy > 0 J"):
        _circle_run(0.0).energy_drift_rel(reference=bad)


def test_scenario_summaries_state_the_energy_reference():
    run = execute("four-bar", {"t_end": "0.2"})
    m = run.summary["metrics"]
    assert m["energy_reference"] == pytest.approx(run.arrays["kinetic"].max(), rel=1e-12)
    dE = np.abs(run.arrays["energy"] - run.arrays["energy"][0]).max()
    assert m["energy_drift_rel"] == pytest.approx(dE / m["energy_reference"], rel=1e-9)
