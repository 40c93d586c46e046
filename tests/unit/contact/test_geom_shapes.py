"""Contact with the geom shapes beyond spheres, capsules and boxes: a convex mesh
sliding down an incline (its base vertices held and slipping) against the closed form
``0.5 g (sin - mu cos) t^2``, a cylinder standing on its face (its rim points held, their
normal forces summing to its weight), and the warning of a cylinder's pairs (its contact
points are held fixed in it: lying on its side it would stick, not roll)."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff.contact.model import CYLINDER_WARNING

MODELS = Path(__file__).parents[2] / "models" / "contact"
G = 9.81


def _load(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cylinder's warning, tested on its own
        return pfaff.load(MODELS / name, contact=True)


def _slid(mu_file: float, mu_closed: float) -> tuple[float, float]:
    """The mesh's slide down the slope in 1 s, and the closed form's with ``mu_closed``."""
    path = MODELS / "mesh_incline.xml"
    system = _load(path.name)
    assert system.contacts is not None and system.contacts.mu == [mu_file]
    sim = pfaff.Simulator(system, dt=1e-3)
    q0 = sim.q.copy()
    sim.step(n=1000)
    a = math.radians(20)
    down = np.array([math.cos(a), 0.0, -math.sin(a)])
    assert {c.mode for c in sim.contacts} == {"slip"}
    return float((sim.q[:3] - q0[:3]) @ down), 0.5 * G * (math.sin(a) - mu_closed * math.cos(a))


def test_a_convex_mesh_slides_down_the_incline_as_the_closed_form():
    slid, want = _slid(0.3, 0.3)
    assert abs(slid - want) < 1e-9  # [m]
    # the witness: the closed form with another friction coefficient is far off
    slid, wrong = _slid(0.3, 0.25)
    assert abs(slid - wrong) > 1e-2


def test_a_standing_cylinder_rests_on_its_rim_with_its_weight():
    system = _load("cylinder_upright.xml")
    sim = pfaff.Simulator(system, dt=1e-3)
    q0 = sim.q.copy()
    for _ in range(5):
        sim.step(n=100)
        forces = [c.normal_force for c in sim.contacts]
        assert len(forces) >= 3
        assert abs(sum(forces) - 2.0 * G) < 1e-9  # [N], m g with m = 2 kg
        assert min(forces) > 0.0
        assert np.max(np.abs(sim.q[:3] - q0[:3])) < 1e-12  # [m]


def test_a_cylinder_pair_is_warned_that_it_does_not_roll():
    with pytest.warns(UserWarning, match=re.escape(CYLINDER_WARNING) + ".*floor / cyl"):
        pfaff.load(MODELS / "cylinder_upright.xml", contact=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no such warning without a cylinder
        system = pfaff.load(MODELS / "mesh_incline.xml", contact=True)
    assert not [w for w in system.warnings if w.startswith(CYLINDER_WARNING)]
