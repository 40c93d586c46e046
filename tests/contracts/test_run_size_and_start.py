"""A careless user's runs too large to hold, and starts moved without a word: a run whose
record would not fit in memory is refused before it starts (naming ``t_end`` or ``n``
and how to record less), ``record=False`` holds constant memory, and every start that
assembly moves onto the constraint manifold says how far.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from where import MODELS

import pfaff
from pfaff.cli import main
from pfaff.errors import ModelError
from pfaff.simulate import memory

FOUR_BAR = MODELS / "four_bar.xml"


@pytest.fixture(scope="module")
def four_bar():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pfaff.load(FOUR_BAR, contact=False)  # the plain core loop's counts


# ---------------------------------------------------------- a run too large to hold


def test_cli_refuses_a_run_whose_record_exceeds_the_memory(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", str(FOUR_BAR), "--out", str(out), "--set", "t_end=1e9"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "t_end = 1e+09 s" in err and "would take an estimated" in err and "TiB" in err
    assert "record_every" in err and "record=False" in err
    assert not out.exists()  # refused before anything is written


def test_a_long_run_is_refused_against_the_memory_available(tmp_path, capsys, monkeypatch):
    # t_end=1e5 at dt = 1e-3: 1e8 samples, some 30 GB; judged against what is available
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * 2**30)
    code = main(["run", str(FOUR_BAR), "--out", str(tmp_path / "r"), "--set", "t_end=1e5"])
    err = capsys.readouterr().err
    assert code == 2 and "t_end = 100000 s" in err and "8 GiB of memory available" in err


@pytest.mark.parametrize("model", ["limited_pendulum.xml", "contact/ball_drop.xml"])
def test_a_long_limited_or_contact_run_is_refused_before_it_starts(
    model, tmp_path, capsys, monkeypatch
):
    # joint limits and contacts run the core's event loop: the same refusal, up front
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * 2**30)
    argv = ["run", str(MODELS / model), "--out", str(tmp_path / "r"), "--set", "t_end=1e5"]
    code = main([*argv, "--set", "contact=true"] if "contact" in model else argv)
    err = capsys.readouterr().err
    assert code == 2 and "t_end = 100000 s" in err and "8 GiB of memory available" in err
    assert not (tmp_path / "r").exists()


def test_the_record_stride_of_a_model_file_records_one_step_in_k(tmp_path, capsys):
    out = tmp_path / "r"
    args = ["run", str(FOUR_BAR), "--out", str(out), "--set", "t_end=0.05"]
    assert main([*args, "--set", "record_every=10"]) == 0, capsys.readouterr().err
    t = np.load(out / "trajectory.npz")["t"]
    assert len(t) == 6 and abs(t[1] - 0.01) < 1e-12


def test_simulator_step_refuses_n_beyond_int64_and_beyond_the_memory(four_bar):
    sim = pfaff.Simulator(four_bar, 1e-3)
    with pytest.raises(ValueError, match=r"n = 1180591620717411303424 steps is beyond"):
        sim.step(n=2**70)
    with pytest.raises(ValueError, match=r"n = 1000000000000000000 steps .*estimated .*EiB"):
        sim.step(n=10**18)
    with pytest.raises(ValueError, match=r"record=False"):
        sim.step(n=10**18)
    assert sim.steps == 0  # nothing ran


def test_record_false_refuses_only_what_the_core_cannot_count(four_bar):
    sim = pfaff.Simulator(four_bar, 1e-3, record=False)
    with pytest.raises(ValueError, match=r"n = 1000000000000000000 steps: the compiled core"):
        sim.step(n=10**18)


@pytest.mark.parametrize(
    "model, big", [("four_bar.xml", 2**17 + 5), ("limited_pendulum.xml", 2**16 + 5)]
)
def test_record_false_holds_constant_memory(model, big):
    # the four-bar's links would touch (its file's contact pairs): without them it runs
    # the plain step loop, the pendulum the limited one (its joint stop's events)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = pfaff.Simulator(pfaff.load(MODELS / model, contact=False), 1e-3, record=False)
    tau = np.zeros(sim.system.nv)

    def work():
        for _ in range(400):
            sim.step(tau)
        sim.step(tau, n=500)

    tracemalloc.start()
    try:  # more steps in one call than the record buffers hold: held in pieces
        sim.step(tau, n=big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"{peak} bytes at the peak of one call of {big} steps"
    tracemalloc.start()  # before the first round too: its last call's record is traced
    try:
        work()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(3):
            work()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 50_000, f"{grown} bytes more after 2700 steps with record=False"
    assert sim.steps == big + 4 * 900 and sim.last is not None


# ---------------------------------------------------------- starts moved silently


def test_reset_far_off_the_loop_says_how_far_assembly_moved_it(four_bar):
    sim = pfaff.Simulator(four_bar, 1e-3)
    assert sim.assembly_displacement == pytest.approx(four_bar.assembly.displacement)
    q = four_bar.q0 + np.array([5.0, 0.0, 0.0])  # 5 rad off the loop
    with pytest.warns(UserWarning, match=r"assembly moved the start \(the q given to reset\)"):
        sim.reset(q=q)
    moved = np.linalg.norm(four_bar.difference(q, sim.q))
    assert sim.assembly_displacement == pytest.approx(moved) and moved > 1.0
    assert any(f"by {moved:.3g}" in w for w in sim.warnings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.reset(q=sim.q)  # a start on the manifold: no word
    assert sim.assembly_displacement < 1e-6 and not any("moved" in w for w in sim.warnings)


def test_a_keyframe_that_assembly_moves_is_announced(tmp_path):
    with pytest.warns(UserWarning, match=r"assembly moved the start \(keyframe 'open'\) by"):
        s = pfaff.load(FOUR_BAR)
    assert any("keyframe 'open'" in w and "moved" in w for w in s.warnings)


def test_the_run_of_a_model_file_lists_how_far_its_start_moved(tmp_path, capsys):
    import json

    out = tmp_path / "r"
    assert main(["run", str(FOUR_BAR), "--out", str(out), "--set", "t_end=0.01"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    moved = summary["metrics"]["assembly_displacement"]
    assert any(f"by {moved:.3g}" in w for w in summary["warnings"]), summary["warnings"]


THREE = """<mujoco model="three">
  <worldbody>
    <body><joint name="a" type="hinge"/><geom size=".1" contype="0" conaffinity="0"/>
      <body pos="0 0 -0.5"><joint name="b" type="hinge"/><geom size=".1" contype="0"
        conaffinity="0"/>
        <body pos="0 0 -0.5"><joint name="c" type="hinge"/><geom size=".1" contype="0"
          conaffinity="0"/></body></body></body>
  </worldbody>
  <keyframe><key name="short" {key}/></keyframe>
</mujoco>
"""


@pytest.mark.parametrize(
    "key, words",
    [
        ('qpos="0.3 0.2"', "keyframe 'short' gives 2 qpos values, the model has nq = 3"),
        ('qpos="0 0 0" qvel="1"', "keyframe 'short' gives 1 qvel values, the model has nv = 3"),
    ],
)
def test_a_keyframe_of_the_wrong_length_is_refused(tmp_path, key, words):
    path = tmp_path / "three.xml"
    path.write_text(THREE.format(key=key))
    with pytest.raises(ModelError, match=words) as exc:
        pfaff.load(path)
    assert "pad the missing ones with zeros" in str(exc.value)


def test_a_keyframe_without_qpos_starts_from_qpos0(tmp_path):
    path = tmp_path / "three.xml"
    path.write_text(THREE.format(key='time="1"'))
    assert np.array_equal(pfaff.load(path).q0, np.zeros(3))
