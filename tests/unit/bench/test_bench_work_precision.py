"""``pfaff bench work-precision``: a tiny run of its record on the five-bar (JSON shape,
pfaff's 4th-order convergence, MuJoCo's finite error), the metrics against closed forms
and a wrong reference, and its place in ``pfaff bench --json``. No timing is asserted."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from where import MODELS, REPO

from pfaff import bench
from pfaff.bench import work_precision as wp

KEYS = {"dt", "integrator", "solref", "error", "cpu_per_sim_s", "violation"}


def _tiny(reference=None) -> dict:
    return wp.work_precision(MODELS / "five_bar.xml", t_end=0.08, pfaff_dts=(4e-3, 2e-3),
                             mujoco_dts=(1e-3,), integrators=("Euler",), repeats=1,
                             reference=reference)  # fmt: skip


@pytest.fixture(scope="module")
def tiny() -> dict:
    pytest.importorskip("mujoco")
    return _tiny()


def test_record_shape_and_convergence(tiny) -> None:
    r = tiny
    assert len(r["pfaff"]) == 2 and len(r["mujoco"]) == 2  # Euler x (file, 2 dt) solref
    for rec in r["pfaff"] + r["mujoco"]:
        assert set(rec) == KEYS
        assert math.isfinite(rec["error"]) and rec["cpu_per_sim_s"] > 0
    assert {x["solref"][0] for x in r["mujoco"]} == {0.02, 2e-3}  # the file's, 2 dt
    # the two models' loop bodies coincide at the start (the name mapping's witness)
    assert r["start_mismatch"] <= 1e-12  # m
    assert set(r["loop_bodies"]) == {"left", "left_distal", "right", "right_distal"}
    # Richardson: the reference (dt 125 us) against dt 250 us differ at round-off level
    assert r["reference_check"] < 1e-12  # m
    # pfaff's RK4: halving dt divides the error by about 2^4 = 16
    e4, e2 = (x["error"] for x in r["pfaff"])
    assert 10.0 < e4 / e2 < 24.0, (e4, e2)
    assert max(x["violation"] for x in r["pfaff"]) < 1e-10  # m
    # MuJoCo's soft equality: a finite error well above pfaff's at 4 ms
    for x in r["mujoco"]:
        assert math.isfinite(x["error"]) and x["error"] > 100 * e4
        assert x["violation"] > 1e-9
    assert r["cost_ratio_at_mujoco_best"] > 0
    assert r["cost_ratio_how"] in ("interpolated", "upper bound", "extrapolated")


def test_a_wrong_reference_is_caught(tiny) -> None:
    """A reference 1 mm off at one body and one sample: every run's error shows it."""
    mdl = wp._Model(MODELS / "five_bar.xml", 0.08)
    ref_dt = 2e-3 / 16
    good = mdl.pfaff_positions(mdl.pfaff(ref_dt), ref_dt)
    bad = good.copy()
    bad[5, 1, 2] += 1e-3
    r = _tiny(reference=bad)
    for x in r["pfaff"]:
        assert abs(x["error"] - 1e-3) < 1e-6  # m
    assert r["pfaff"][0]["error"] > 1000 * tiny["pfaff"][0]["error"]


def test_position_error_closed_form() -> None:
    p = np.zeros((3, 2, 3))
    q = p.copy()
    q[2, 1] = [3e-3, 4e-3, 0.0]
    assert wp.position_error(q, p) == pytest.approx(5e-3, abs=1e-15)
    with pytest.raises(ValueError, match=r"\(samples, bodies, 3\)"):
        wp.position_error(p, p[:2])


def test_cost_at_error_log_log() -> None:
    errors, costs = [1e-2, 1e-4], [1.0, 10.0]
    cost, how = wp.cost_at_error(errors, costs, 1e-3)
    assert how == "interpolated" and cost == pytest.approx(math.sqrt(10.0), rel=1e-12)
    assert wp.cost_at_error(errors, costs, 1.0) == (1.0, "upper bound")
    cost, how = wp.cost_at_error(errors, costs, 1e-6)
    assert how == "extrapolated" and cost == pytest.approx(100.0, rel=1e-12)


def test_loop_bodies_and_bad_input() -> None:
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(str(REPO / "examples" / "quadruped.xml"))
    got = wp.loop_bodies(m)
    assert set(got) == {f"{leg}_{b}" for leg in ("FL", "FR", "HL", "HR")
                        for b in ("link", "shank", "thigh")}  # fmt: skip
    free = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>"
    )
    with pytest.raises(ValueError, match="no connect or weld"):
        wp.loop_bodies(free)
    with pytest.raises(ValueError, match="does not divide"):
        wp._Model(MODELS / "five_bar.xml", 0.08).stride(3e-3)
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        wp.work_precision(MODELS / "five_bar.xml", repeats=0)


def test_rows_json_and_plot(tiny, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(wp, "work_precision", lambda path, **kw: tiny)
    png = tmp_path / "wp.png"
    rows = bench.bench_work_precision([("five_bar", MODELS / "five_bar.xml")], plot=png)
    assert png.stat().st_size > 1000
    got = {r["figure"]: r for r in rows}
    ratio = got["five_bar cost ratio at MuJoCo's best"]
    assert ratio["target"] == "<= 0.1" and ratio["value"] == tiny["cost_ratio_at_mujoco_best"]
    assert got["five_bar status"]["value"] == "ok"
    data = json.loads(json.dumps(bench.summary_json(rows)))
    rec = data["work_precision"]["five_bar"]
    assert set(rec["pfaff"][0]) == KEYS and "cost_ratio_at_mujoco_best" in rec
    assert all("data" not in r for r in data["rows"])
    assert "work-precision" in bench.BENCHMARKS


def test_skipped_without_mujoco(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "mujoco", None)
    rows = bench.bench_work_precision()
    assert len(rows) == 1 and rows[0]["note"].startswith("skipped:")
