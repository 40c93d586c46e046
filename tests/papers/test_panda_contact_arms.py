"""panda-contact with a second real arm (Kinova Jaco of example-robot-data), a start
posture q0 validated like any parameter, and the model it actually used recorded."""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest

from pfaff.cli import main
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import from_urdf
from pfaff.mechanism.robots import package_dir
from pfaff.scenarios import ParameterError, get_scenario, run_scenario
from pfaff.scenarios.panda_contact import PANDA_START

FRAME = "j2s6s200_end_effector"
ARM_UP = "1.5707,2.618,4.7124,3.1415,2.618,0"  # kinova.srdf "arm_up", joint 3 within limits


@pytest.fixture(scope="module")
def kinova() -> str:
    path = package_dir() / "example-robot-data/robots/kinova_description/robots/kinova.urdf"
    assert path.is_file()
    return str(path)


def test_kinova_neutral_posture_is_singular_and_refused_with_a_hint(kinova):
    mech = from_urdf(kinova)
    assert mech.nq == 9 and mech.nv == 6  # three continuous joints stored as (cos, sin)
    cset = ConstraintSet(mech, [PointOnPlane(FRAME, (0.0, 0.0, 1.0), 0.1)])
    # the plane's row of A vanishes at the neutral posture (the arm folded on itself) ...
    A = cset.evaluate(mech.compute(mech.neutral(), np.zeros(mech.nv), cset.frames)).A
    assert np.abs(A).max() <= 1e-9  # [m]
    # ... so Newton-Raphson cannot reach the plane from there: exit 2 with a hint
    with pytest.raises(ParameterError, match="constraint manifold.*kinova.urdf.*--set q0="):
        run_scenario("panda-contact", {"urdf": kinova, "frame": FRAME})


def test_kinova_runs_from_a_start_posture(kinova):
    sc = get_scenario("panda-contact")
    res = sc.func(sc.resolve({"urdf": kinova, "frame": FRAME, "q0": ARM_UP, "t_end": "0.3"}))
    m = res.metrics
    assert res.status == "ok"
    assert res.trajectory.max_constraint_violation() <= 1e-10  # [m]
    assert m["tool_height_error_max"] <= 1e-10  # [m]
    assert m["max_kinetic_energy"] > 1.0  # [J] it really moves (falls under gravity) ...
    assert m["energy_drift_rel"] <= 1e-3  # ... and, passive, keeps its energy
    assert m["model_used"].startswith("URDF ") and m["model_used"].endswith("kinova.urdf")
    # continuous joints as (cos, sin); the first sample is the given posture's
    # Newton-Raphson projection onto the plane (the arm_up tool is 0.37 m above it) ...
    q = res.trajectory.arrays()["q"]
    assert q.shape[1] == 9
    np.testing.assert_allclose(np.hypot(q[:, 0], q[:, 1]), 1.0, atol=1e-12)
    # ... and start_posture records that assembled posture, not the one given
    model = from_urdf(kinova).model
    assembled = pin.difference(model, pin.neutral(model), q[0])
    np.testing.assert_allclose(m["start_posture"], assembled, atol=1e-12)  # [rad]
    given = np.array([float(x) for x in ARM_UP.split(",")])
    assert np.abs(np.asarray(m["start_posture"]) - given).max() > 1e-2  # [rad]
    assert "kinova.urdf" in res.notes and "start posture" in res.notes


def test_panda_q0_given_explicitly_is_the_default_start():
    a = run_scenario("panda-contact", {"t_end": "0.06"})
    b = run_scenario("panda-contact", {"t_end": "0.06", "q0": ",".join(map(str, PANDA_START))})
    assert a["metrics"]["model_used"].startswith("example-robot-data panda")
    # the posture the run started from: PANDA_START projected onto the plane
    np.testing.assert_allclose(
        a["metrics"]["start_posture"], b["metrics"]["start_posture"], atol=1e-12
    )
    assert np.abs(np.asarray(a["metrics"]["start_posture"]) - PANDA_START).max() > 1e-2
    assert a["metrics"]["tool_travel"] == pytest.approx(b["metrics"]["tool_travel"], abs=1e-12)
    # a different start posture really changes the run
    other = PANDA_START + np.array([0.0, 0.1, 0.0, 0.1, 0.0, 0.0, 0.0])
    c = run_scenario("panda-contact", {"t_end": "0.06", "q0": ",".join(map(str, other))})
    start = np.asarray(c["metrics"]["start_posture"])
    assert np.abs(start - np.asarray(a["metrics"]["start_posture"])).max() > 1e-3
    assert abs(c["metrics"]["tool_travel"] - a["metrics"]["tool_travel"]) > 1e-6


BAD_Q0 = [
    ("0,0.3,0,-2,0,2.4", "needs 7 joint values \\(panda_joint1"),
    ("0,0.3,0,-2,0,2.4,0.8,0", "needs 7 joint values"),
    ("0,0.3,zero,-2,0,2.4,0.8", "expects 7 comma-separated numbers"),
    ("0,0.3,0,-2,0,nan,0.8", "must be finite"),
    ("0,0.3,0,-2,0,inf,0.8", "must be finite"),
    ("0,0.3,0,-2,0,2.4,9", "panda_joint7 = 9 is outside its limits"),
    ("0,0.3,0,0.5,0,2.4,0.8", "panda_joint4 = 0.5 is outside its limits"),
    ("0;0.3;0;-2;0;2.4;0.8", "comma-separated"),
]


@pytest.mark.parametrize("q0,message", BAD_Q0)
def test_bad_start_posture_is_refused(q0, message):
    with pytest.raises(ParameterError, match=message):
        run_scenario("panda-contact", {"q0": q0})


def test_bad_start_posture_exits_2_and_writes_nothing(tmp_path, capsys, kinova):
    out = tmp_path / "out"
    assert main(["run", "panda-contact", "--out", str(out), "--set", "q0=1,2"]) == 2
    err = capsys.readouterr().err
    assert "q0 needs 7 joint values" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    # the Kinova: 6 values (not nq = 9), joint 3 within its URDF limits [0.33, 5.95]
    argv = ["run", "panda-contact", "--out", str(out), "--set", f"urdf={kinova}"]
    argv += ["--set", f"frame={FRAME}", "--set", "q0=1.5707,2.618,-1.5707,3.1415,2.618,0"]
    assert main(argv) == 2
    assert "j2s6s200_joint_3 = -1.5707 is outside its limits" in capsys.readouterr().err
    assert not out.exists()


def test_summary_records_the_model_used(tmp_path, kinova, capsys):
    out = tmp_path / "k"
    argv = ["run", "panda-contact", "--out", str(out), "--set", f"urdf={kinova}"]
    argv += ["--set", f"frame={FRAME}", "--set", f"q0={ARM_UP}", "--set", "t_end=0.05"]
    assert main(argv) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["parameters"]["urdf"] == kinova
    assert s["metrics"]["model_used"].endswith("kinova.urdf")
    assert len(s["metrics"]["start_posture"]) == 6
    assert "kinova.urdf" in (out / "report.html").read_text()
