"""pfaff bench scaling: the generated N-four-bar models are the mechanisms they claim
to be (size, rank, and the constrained accelerations of a Gauss-principle reference
built from MuJoCo's own terms), the exponent fit, and the rows and JSON of a tiny run
(no timing asserted: speed is measured only by ``pfaff bench``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from mjcf_support import gauss_reference, mujoco_equality_rows, mujoco_full_M

import pfaff
from pfaff import bench, core
from pfaff.bench import meets_target, scaling
from pfaff.bench.scaling import fit_exponent, n_four_bar_xml
from pfaff.simulate.assembly import assemble

mujoco = pytest.importorskip("mujoco")


def _load(n: int, tmp_path):
    path = tmp_path / f"n_four_bar_{n}.xml"
    path.write_text(n_four_bar_xml(n), encoding="utf-8")
    return path, pfaff.load(path)


@pytest.mark.parametrize("n", [2, 5])
def test_n_four_bar_has_its_size_and_mujocos_accelerations(n, tmp_path):
    """2N + 1 hinges, 3N connect rows of rank 2N (one degree of freedom), the start on
    the manifold in both engines; pfaff's constrained accelerations at the start and
    at a moving state equal the Gauss reference from MuJoCo's M, bias, passive forces,
    equality rows and their drift."""
    path, system = _load(n, tmp_path)
    asm = assemble(system.cset, system.q0, system.v0)
    assert system.nv == 2 * n + 1 and asm.rows == 3 * n and asm.rank == 2 * n
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    d = mujoco.MjData(m)
    assert m.nv == system.nv and m.neq == n
    qpos = system.model.coords.q_to_qpos(asm.q)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    assert np.abs(d.efc_pos[: d.nefc]).max() <= 1e-12  # the file's start closes every loop
    J, _ = mujoco_equality_rows(mujoco, m, d)
    _, s, Vt = np.linalg.svd(J)
    assert int(np.sum(s > 1e-9 * s[0])) == 2 * n
    rng = np.random.default_rng(n)
    for qvel in (np.zeros(m.nv), 3.0 * Vt[2 * n :].T @ rng.standard_normal(m.nv - 2 * n)):
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        J, drift = mujoco_equality_rows(mujoco, m, d)
        ref = gauss_reference(mujoco_full_M(mujoco, m, d), d.qfrc_passive - d.qfrc_bias,
                              J, drift)  # fmt: skip
        v = system.model.coords.qvel_to_v(asm.q, qvel)
        a = system.forward_dynamics(asm.q, v, np.zeros(system.nv)).a
        assert np.abs(a).max() > 0.1  # gravity moves the strip: a witness with teeth
        assert np.linalg.norm(a - ref) <= 1e-9 * np.linalg.norm(ref)


def test_n_four_bar_refuses_no_loops():
    with pytest.raises(ValueError, match="n must be >= 1"):
        n_four_bar_xml(0)


def test_fit_exponent_recovers_powers_and_sees_a_wrong_curve():
    ns = [2, 5, 10, 20, 40]
    assert fit_exponent(ns, [3.0 * n**2 for n in ns]) == pytest.approx(2.0, abs=1e-12)
    assert fit_exponent(ns, [7.0 * n for n in ns]) == pytest.approx(1.0, abs=1e-12)
    # a linear cost plus a fixed one is below 1; a quadratic one is not taken for linear
    assert fit_exponent(ns, [50.0 + n for n in ns]) < 0.7
    assert abs(fit_exponent(ns, [n**2 for n in ns]) - 1.0) > 0.9
    with pytest.raises(ValueError, match="two or more distinct N"):
        fit_exponent([5, 5], [1.0, 2.0])
    with pytest.raises(ValueError, match="positive and finite"):
        fit_exponent([2, 5], [1.0, math.nan])


def test_scaling_figures_and_their_bars():
    """The JSON record from made-up timings: exponents 1 (pfaff) and 2 (MuJoCo), the
    ratio at the largest N, and each bar's verdict."""
    per_n = {
        n: {"pfaff_us": 10.0 * n, "mujoco_us": 1.0 * n**2, "ratio": 10.0 / n, "nv": 2 * n + 1,
            "rank": 2 * n, "disabled": ["CONTACT"]}
        for n in (2, 5, 10, 20)
    }  # fmt: skip
    fig = scaling.scaling_figures(per_n)
    assert fig["exponent_pfaff"] == pytest.approx(1.0)
    assert fig["exponent_mujoco"] == pytest.approx(2.0)
    assert fig["exponent_pfaff_n_ge_10"] == pytest.approx(1.0)
    assert fig["bars"] == {"exponent_pfaff <= exponent_mujoco": True, "ratio at N=20 <= 1.0": True}
    per_n[20]["ratio"] = 1.5
    assert scaling.scaling_figures(per_n)["bars"]["ratio at N=20 <= 1.0"] is False


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
def test_scaling_rows_and_json(monkeypatch, tmp_path):
    """A tiny run (N = 2, 3; 3 steps, 1 repeat): its rows, the group by name, its
    figures in the JSON of ``pfaff bench --json`` and a plot drawn from them."""
    rows = bench.bench_scaling(ns=(2, 3), repeats=1, steps=lambda n: 3)
    got = {r["figure"]: r for r in rows}
    assert all(r["benchmark"] == "scaling" for r in rows)
    for n in (2, 3):
        for fig in ("pfaff step", "MuJoCo RK4 step", "ratio pfaff/MuJoCo"):
            value = got[f"N={n} {fig}"]["value"]
            assert isinstance(value, float) and value > 0
        assert meets_target(got[f"N={n} rank"]["value"], got[f"N={n} rank"]["target"]) == "yes"
        assert got[f"N={n} start residual MuJoCo"]["value"] <= 1e-9
    assert "CONTACT, FRICTIONLOSS, LIMIT off" in got["N=2 MuJoCo RK4 step"]["note"]
    assert got["ratio pfaff/MuJoCo at N=3"]["target"] == "<= 1"
    monkeypatch.setattr(bench, "WARMUP_S", 0.0)
    monkeypatch.setitem(bench.BENCHMARKS, "scaling", lambda: rows)
    data = json.loads(json.dumps(bench.summary_json(bench.run_benchmarks(["scaling"]))))
    fig = data["scaling"]
    assert fig["n"] == [2, 3] and fig["nv"] == [5, 7] and fig["rank"] == [4, 6]
    assert fig["exponent_pfaff"] == got["exponent pfaff"]["value"]
    assert set(fig["bars"]) == {"exponent_pfaff <= exponent_mujoco", "ratio at N=3 <= 1.0"}
    assert "work_precision" not in data and all("data" not in r for r in data["rows"])
    png = scaling.plot_scaling(fig, tmp_path / "scaling.png")
    assert png.stat().st_size > 1000
