"""A careless user's messages from deep inside and silent surprises: each input gets a
message naming what is wrong and what is valid, and nothing changes behind the user's
back (a repeated ``--set``, a start array written in place, a complex torque, a
Simulator that would not pickle).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from where import MODELS

import pfaff
from pfaff.cli import main
from pfaff.errors import ModelError

ONE_BODY = """<mujoco model="one">
  <worldbody>
    <body name="arm"><joint name="j" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02"/>
      <site name="a" pos="0.1 0 0"/><site name="b" pos="0.4 0 0"/></body>
  </worldbody>
  <equality><connect name="same" site1="a" site2="b"/></equality>
</mujoco>
"""


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pfaff.load(path)


# ---------------------------------------------------------- messages from deep inside


def test_a_connect_of_two_sites_of_one_body_names_the_equality_and_the_body(tmp_path, capsys):
    path = tmp_path / "one.xml"
    path.write_text(ONE_BODY)
    with pytest.raises(ModelError, match=r"<connect name='same'>: its two sites are on one body"):
        pfaff.load(path)
    assert main(["run", str(path), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "'arm'" in err and "matmul" not in err


def test_a_model_file_with_another_extension_is_told_the_file_types(tmp_path, capsys):
    path = tmp_path / "model.txt"
    path.write_text(ONE_BODY)
    assert main(["run", str(path), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "neither a scenario name nor a file pfaff runs" in err
    assert ".xml MJCF" in err and ".urdf" in err and ".toml" in err and "pfaff list" in err


def test_an_unknown_scenario_name_also_names_the_file_types(capsys):
    assert main(["run", "no-such"]) == 2
    assert ".toml" in capsys.readouterr().err


def test_a_value_that_makes_the_start_non_finite_is_named(tmp_path, capsys):
    code = main(["run", "slider-crank", "--out", str(tmp_path / "r"), "--set", "l=1e308"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "max |Phi| = nan" in err and "the parameters set (l = 1e+308)" in err
    assert "non-finite state" in err and "defaults: l = 1.0" in err


# ---------------------------------------------------------- silent surprises


def test_a_repeated_set_is_refused(tmp_path, capsys):
    args = ["run", "particle-circle", "--out", str(tmp_path / "r")]
    assert main([*args, "--set", "t_end=0.1", "--set", "t_end=0.2"]) == 2
    err = capsys.readouterr().err
    assert "--set t_end given twice (t_end=0.1 and t_end=0.2)" in err
    assert not (tmp_path / "r").exists()


def test_the_start_of_a_system_cannot_be_changed_in_place():
    robot = _load(MODELS / "four_bar.xml")
    q0 = robot.q0.copy()
    for name in ("q0", "v0"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(robot, name)[0] = 1.0
    assert np.array_equal(robot.q0, q0)
    mine = robot.q0.copy()
    mine[0] += 0.1  # a copy is the user's own
    assert np.array_equal(robot.q0, q0)


@pytest.mark.parametrize("arg", ["tau", "q"])
def test_complex_arrays_are_refused_naming_them(arg):
    robot = _load(MODELS / "four_bar.xml")
    sim = pfaff.Simulator(robot, 1e-3)
    bad = np.array([0.1 + 1j, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning either
        with pytest.raises(ValueError, match=rf"{arg} (is|must hold).*complex"):
            sim.step(bad) if arg == "tau" else sim.reset(q=bad)
        with pytest.raises(ValueError, match=r"tau must hold real numbers .*complex"):
            robot.forward_dynamics(robot.q0, robot.v0, [0, 0, 1j])
        with pytest.raises(ValueError, match=r"taus must hold real numbers .*complex"):
            pfaff.rollout(robot, None, None, np.zeros((1, 2, 3), dtype=complex))
    assert sim.steps == 0


@pytest.mark.parametrize("n", [5, np.int64(5), 0.5, True])
def test_a_number_as_tau_is_refused_saying_n(n):
    # sim.step(5) meant as five steps: the message says tau's shape and, for a whole
    # number, n=; the state does not move
    sim = pfaff.Simulator(_load(MODELS / "four_bar.xml"), 1e-3)
    with pytest.raises(ValueError, match=r"tau=.* is a number.*shape \(3,\)") as e:
        sim.step(n)
    whole = not isinstance(n, (bool, float))
    assert ("say n=5" in str(e.value)) == whole and sim.steps == 0
    sim.step(np.zeros(3))  # an array of shape (nv,) runs
    assert sim.steps == 1


def test_complex_ctrl_is_refused_naming_it():
    robot = _load(MODELS / "four_bar.xml")
    sim = pfaff.Simulator(robot, 1e-3)
    sim._actuation = True  # the check comes before the actuators are asked
    with pytest.raises(ValueError, match=r"ctrl is complex"):
        sim.step(ctrl=[1j])


@pytest.mark.parametrize("bad", [123, None, 1.5, b"x.xml"])
def test_load_of_something_not_a_path_names_what_is_accepted(bad):
    with pytest.raises(TypeError, match=r"pfaff.load expects the path of a model file") as e:
        pfaff.load(bad)
    assert ".xml" in str(e.value) and ".toml" in str(e.value)
    assert type(bad).__name__ in str(e.value)


def _run(sim, taus):
    for tau in taus:
        sim.step(tau, n=2)


@pytest.mark.parametrize("model", ["four_bar.xml", "limited_pendulum.xml"])
@pytest.mark.parametrize("record", [True, False])
def test_a_simulator_pickles_and_continues_bit_for_bit(model, record):
    robot = _load(MODELS / model)
    taus = np.random.default_rng(0).standard_normal((40, robot.nv))
    a = pfaff.Simulator(robot, 1e-3, record=record)
    fresh = pickle.loads(pickle.dumps(a))  # before any step, too
    _run(a, taus[:20])
    _run(fresh, taus[:20])
    b = pickle.loads(pickle.dumps(a))
    assert np.array_equal(b.q, a.q) and np.array_equal(b.v, a.v) and b.t == a.t
    _run(a, taus[20:30])
    _run(b, taus[20:30])
    c = pickle.loads(pickle.dumps(b))  # twice
    _run(a, taus[30:])
    _run(b, taus[30:])
    _run(c, taus[30:])
    _run(fresh, taus[20:])
    for other in (b, c, fresh):
        assert np.array_equal(other.q, a.q) and np.array_equal(other.v, a.v)
        assert other.t == a.t and other.steps == a.steps == 80
        assert np.array_equal(other.last.a, a.last.a)
        if not record:
            continue
        ra, ro = a.record().arrays(), other.record().arrays()
        for key in ra:  # the running accounts: summed from the pickled totals
            if key in ("work", "correction_energy", "force_work"):
                assert np.allclose(ro[key], ra[key], rtol=0, atol=1e-12), key
            else:
                assert np.array_equal(ro[key], ra[key]), key


def _chain(tmp_path, frictionloss: float):
    """Four hinged links in a chain, each joint with this dry friction (MuJoCo's
    frictionloss), written to tmp_path."""
    inner = ""
    for k in reversed(range(4)):
        inner = (
            f'<body name="b{k}" pos="0 0 -0.3"><joint name="j{k}" axis="0 1 0" '
            f'frictionloss="{frictionloss}"/><geom type="capsule" fromto="0 0 0 0 0 -0.3" '
            f'size="0.02" contype="0" conaffinity="0"/>{inner}</body>'
        )
    path = tmp_path / "chain.xml"
    path.write_text(f"<mujoco><worldbody>{inner}</worldbody></mujoco>")
    return path


def test_what_a_file_holds_and_pfaff_does_not_simulate_is_raised_at_load(tmp_path):
    """A file written for MuJoCo loads without the parts pfaff does not model (a joint's
    dry friction): one warning says how many and names the first three, so a user who
    never reads System.warnings still learns it."""
    with pytest.warns(UserWarning, match=r"4 part\(s\) of the file are not simulated") as rec:
        system = pfaff.load(_chain(tmp_path, 0.2))
    said = [str(w.message) for w in rec if "not simulated" in str(w.message)]
    assert len(said) == 1 and "joint 'j0': frictionloss 0.2" in said[0]
    assert "and 1 more" in said[0] and "j3" not in said[0]
    assert sum("frictionloss" in w for w in system.warnings) == 4
    with warnings.catch_warnings():  # the same file without it: no such warning
        warnings.simplefilter("error")
        pfaff.load(_chain(tmp_path, 0.0))
