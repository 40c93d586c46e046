"""pfaff bench plant: its rows on a short run (the times are taken only by `pfaff bench`;
here their presence and units, and the witness, which is no time)."""

from __future__ import annotations

import pytest

from pfaff import core
from pfaff.bench import BENCHMARKS, meets_target, plant

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def test_plant_rows(monkeypatch):
    monkeypatch.setattr(plant, "STEPS", 20)
    monkeypatch.setattr(plant, "STATES", 3)
    assert BENCHMARKS["plant"] is plant.bench_plant
    rows = {r["figure"]: r for r in plant.bench_plant()}
    for fig in ("plant step (core, Python compute)", "closed form step (NumPy engine)",
                "Pinocchio chain step (core)", "derivatives (core, Python compute)",
                "derivatives (NumPy reference)"):  # fmt: skip
        assert rows[fig]["unit"] == "us" and rows[fig]["value"] > 0, fig
    assert rows["ratio plant/NumPy"]["target"] == "<= 1"
    gap = rows["max |q plant - q NumPy|"]
    assert meets_target(gap["value"], gap["target"]) == "yes"
    assert meets_target(2e-12, gap["target"]) == "no"  # the bar the witness is held to
    gap = rows["max rel |core - NumPy| derivatives"]
    assert meets_target(gap["value"], gap["target"]) == "yes"
    assert meets_target(2e-9, gap["target"]) == "no"
