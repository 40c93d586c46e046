"""pfaff bench contact: its rows on short runs (the times themselves are taken only by
`pfaff bench`; here their presence and units, and the figures that are no time: no
penetration in pfaff, MuJoCo's soft contact sinking in, the ball's first impact)."""

from __future__ import annotations

import pytest

from pfaff import core
from pfaff.bench import contact, meets_target

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def test_contact_rows(monkeypatch):
    t_end = {"ball": 0.5, "box": 0.05, "legs": 0.05, "incline": 0.2, "roll": 0.1, "stack": 0.05}
    t_end["disk"] = 0.05
    files = tuple((lab, p, e, t_end[lab]) for lab, p, e, _ in contact.FILES)
    monkeypatch.setattr(contact, "FILES", files)
    rows = {r["figure"]: r for r in contact.bench_contact()}
    for label in t_end:
        assert rows[f"{label} pfaff step (run of {t_end[label]:g} s)"]["value"] > 0
        assert rows[f"{label} ratio pfaff / MuJoCo"]["unit"] == "x"
        pen = rows[f"{label} pfaff max penetration"]
        assert meets_target(pen["value"], pen["target"]) == "yes"
    assert rows["ball MuJoCo max penetration"]["value"] > 1e-3  # soft: sinks in at impact
    assert rows["disk MuJoCo max penetration"]["value"] > 1e-4  # soft: its rim sinks in
    first = rows["ball pfaff first impact - closed form"]
    assert meets_target(first["value"], first["target"]) == "yes"
    assert 0 <= rows["ball MuJoCo first contact step - closed form"]["value"] < 1e-3 + 1e-12
    creep = rows["incline pfaff creep below the friction angle"]
    assert meets_target(creep["value"], creep["target"]) == "yes"
    assert rows["incline MuJoCo creep below the friction angle"]["value"] > 1e-5  # soft
