"""pfaff bench step: its rows on a small run (the figures themselves are timed only by
`pfaff bench`; here their presence, units and the equality figure, which is no time)."""

from __future__ import annotations

import pytest

from pfaff import core
from pfaff.bench import meets_target, step
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def test_step_rows(monkeypatch):
    monkeypatch.setattr(step, "FILES", (("five_bar", MODELS / "five_bar.xml", 20, 2.0),))
    monkeypatch.setattr(step, "ROLLOUTS", 4)
    monkeypatch.setattr(step, "ROLLOUT_STEPS", 10)
    rows = {r["figure"]: r for r in step.bench_step()}
    for fig in ("five_bar step() per call", "five_bar in-loop step (step(n=20))"):
        assert rows[fig]["unit"] == "us" and rows[fig]["value"] > 0
    assert rows["five_bar ratio step()/in-loop"]["target"] == "<= 2"
    eq = rows["five_bar max |step() - simulate|"]
    assert meets_target(eq["value"], eq["target"]) == "yes"
    assert rows["rollouts that ran"]["value"] == 4
    assert 0 < rows["rollout 2 threads: cores busy (CPU time / wall)"]["value"] <= 2.5
    assert meets_target(rows["rollouts that ran"]["value"], rows["rollouts that ran"]["target"])


def test_missing_model_file_is_a_row(monkeypatch, tmp_path):
    monkeypatch.setattr(step, "FILES", (("gone", tmp_path / "gone.xml", 20, 2.0),))
    monkeypatch.setattr(step, "ROLLOUTS", 2)
    monkeypatch.setattr(step, "ROLLOUT_STEPS", 2)
    monkeypatch.setattr(step, "ROLLOUT_FILE", MODELS / "five_bar.xml")
    rows = step.bench_step()
    assert rows[0]["value"] == "missing" and meets_target("missing", rows[0]["target"]) == "no"
