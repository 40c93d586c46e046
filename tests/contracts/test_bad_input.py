"""A careless user: bad command lines, parameters, model files, output folders and
Python API calls. Each gets its documented exit status or exception,
a message naming what is wrong, and no file written.
"""

from __future__ import annotations

import errno
import re

import numpy as np
import pytest

from pfaff.cli import main
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.control import JointTask, ProjectedController
from pfaff.mechanism import ModelError, from_urdf, planar_particle
from pfaff.simulate import SimOptions, simulate

LINK = """
  <link name="{name}">
    <inertial>
      <origin xyz="0 0 {com}"/>
      <mass value="{mass}"/>
      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
    </inertial>
  </link>"""

URDF = """<?xml version="1.0"?>
<robot name="arm2">
  <link name="base"/>
  {l1}
  {l2}
  <link name="tip"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/><origin xyz="0 0 0.5" rpy="0 1.2 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <joint name="jtip" type="fixed">
    <parent link="l2"/><child link="tip"/><origin xyz="0 0 0.5"/>
  </joint>
</robot>
"""


def urdf_text(mass="1.0", ixx="0.01", com="0.25") -> str:
    l1 = LINK.format(name="l1", mass="1.0", ixx="0.01", com="0.25")
    l2 = LINK.format(name="l2", mass=mass, ixx=ixx, com=com)
    return URDF.format(l1=l1, l2=l2)


def write_urdf(tmp_path, **kw) -> str:
    p = tmp_path / "arm.urdf"
    p.write_text(urdf_text(**kw))
    return str(p)


def run_urdf(path: str) -> list[str]:
    return ["run", "panda-contact", "--set", f"urdf={path}", "--set", "frame=tip",
            "--set", "t_end=0.05", "--set", "height=0.6"]  # fmt: skip


SC = ["run", "slider-crank", "--set", "t_end=0.1"]
PIDC = ["run", "slider-crank-pidc", "--set", "t_end=0.1"]

# (id, argv, expected exit status, message regex); "{tmp}" is the test's folder
CLI_CASES = [
    ("no command", [], 2, "usage"),
    ("unknown command", ["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    ("run without name", ["run"], 2, "required: name"),
    ("unknown scenario", ["run", "no-such"], 2, "unknown scenario 'no-such'; valid scenarios"),
    ("unknown option", ["run", "slider-crank", "--bogus"], 2, "unrecognized arguments: --bogus"),
    ("set without =", [*SC, "--set", "dt"], 2, "--set expects KEY=VALUE, got 'dt'"),
    ("set without key", [*SC, "--set", "=3"], 2, "--set expects KEY=VALUE"),
    ("unknown key", [*SC, "--set", "bogus=1"], 2, "unknown parameter 'bogus'.*valid keys: dt"),
    ("float not a number", [*SC, "--set", "dt=abc"], 2, "'dt' expects a float, got 'abc'"),
    ("negative dt", [*SC, "--set", "dt=-1"], 2, "'dt' must be > 0"),
    ("zero dt", [*SC, "--set", "dt=0"], 2, "'dt' must be > 0"),
    ("nan dt", [*SC, "--set", "dt=nan"], 2, "'dt' must be finite"),
    ("inf t_end", ["run", "slider-crank", "--set", "t_end=inf"], 2, "'t_end' must be finite"),
    ("bad bool", [*SC, "--set", "kkt=maybe"], 2, "'kkt' expects a bool, got 'maybe'"),
    ("bad choice", [*SC, "--set", "model=mujoco"], 2, "'model' must be one of .*closed-form"),
    ("zero mass", [*SC, "--set", "m=0"], 2, "'m' must be > 0"),
    ("negative gravity", [*SC, "--set", "g=-9.81"], 2, "'g' must be >= 0"),
    ("int not a number", ["run", "planar-arm-force", "--set", "t_end=x"], 2, "expects a float"),
    ("task not regular", [*PIDC, "--set", "task=slider_y"], 2, "do not parametrise N\\(A\\)"),
    ("actuated bad", [*PIDC, "--set", "actuated=crank"], 2, "actuated must be comma-separated"),
    ("unknown robot", ["run", "panda-contact", "--set", "robot=atlas"], 2, "must be one of"),
    ("unknown frame", ["run", "panda-contact", "--set", "frame=nope"], 2, "unknown frame 'nope'"),
    ("missing URDF", run_urdf("{tmp}/none.urdf"), 2, "URDF file .*none.urdf' does not exist"),
    ("bench unknown", ["bench", "no-such-bench"], 2, "no-such-bench"),
]


def _status(argv: list[str]) -> int:
    """``main``'s exit status, whether it returns it or argparse raises SystemExit."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_command_line(case, tmp_path, capsys):
    _, argv, code, message = case
    out = tmp_path / "out"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[:1] == ["run"] and len(argv) > 1:
        argv = [*argv, "--out", str(out)]
    status = _status(argv)
    captured = capsys.readouterr()
    err = captured.err + captured.out
    assert status == code, err
    assert re.search(message, err), err
    assert not out.exists()  # nothing written, not even the folder
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"mass": "nan"}, "link 'l2' has mass = 'nan'"),
        ({"mass": "-1"}, "link 'l2' has mass = '-1'"),
        ({"mass": "abc"}, "link 'l2' has mass = 'abc'"),
        ({"mass": "0"}, "link 'l2'.*mass 0.0 kg"),
        ({"ixx": "nan"}, "link 'l2' has ixx = 'nan'"),
        ({"ixx": "-0.5"}, "link 'l2'.*not positive definite"),
        ({"ixx": "0"}, "link 'l2'.*not positive definite"),
    ],
    ids=["mass nan", "mass negative", "mass text", "mass zero", "ixx nan", "ixx neg", "ixx 0"],
)
def test_bad_model_data_is_refused_naming_the_link(kw, message, tmp_path, capsys):
    path = write_urdf(tmp_path, **kw)
    out = tmp_path / "out"
    assert main([*run_urdf(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    with pytest.raises(ModelError, match=message):
        from_urdf(path)


def test_good_model_runs(tmp_path, capsys):
    """The same URDF with valid data runs (the refusals above are about the data)."""
    out = tmp_path / "out"
    assert main([*run_urdf(write_urdf(tmp_path)), "--out", str(out)]) == 0
    assert (out / "summary.json").is_file()


def test_malformed_urdf(tmp_path, capsys):
    bad = tmp_path / "broken.urdf"
    bad.write_text("<robot name='x'><link name='a'></robot>")
    assert main([*run_urdf(str(bad)), "--out", str(tmp_path / "out")]) == 2
    assert "does not parse" in capsys.readouterr().err


def test_output_folder_problems_found_before_the_run(tmp_path, capsys, monkeypatch):
    """A file in the way, a path under a file, a non-empty folder, a full disk: exit 2
    and one line before any step; the folder holds only what it held before."""
    a_file = tmp_path / "file.txt"
    a_file.write_text("mine")
    cases = [
        (a_file, "exists and is not a folder"),
        (a_file / "sub", "a parent of it is a file"),
    ]
    full = tmp_path / "full"
    for out, message in cases:
        assert main([*SC, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert a_file.read_text() == "mine"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    assert main([*SC, "--out", str(mine)]) == 2
    assert "not empty; use --force" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]

    def no_space(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("pfaff.report.output.os.write", no_space)
    assert main([*SC, "--out", str(full)]) == 2
    err = capsys.readouterr().err
    assert "no space left on the device" in err and not full.exists()


def test_force_removes_the_earlier_runs_files_only(tmp_path, capsys):
    """--force: no file of the earlier run stays behind, a user's file is kept."""
    out = tmp_path / "run"
    assert main(["run", "particle-circle", "--set", "t_end=0.3", "--out", str(out)]) == 0
    assert (out / "animation.gif").is_file()
    (out / "notes.txt").write_text("mine")
    argv = ["run", "panda-contact", "--set", "t_end=0.03", "--out", str(out), "--force"]
    assert main(argv) == 0
    names = {p.name for p in out.iterdir()}
    assert "animation.gif" not in names and "notes.txt" in names
    assert {"summary.json", "trajectory.npz", "report.html"} - names == set()


# ----------------------------------------------------------------- Python API


@pytest.fixture(scope="module")
def particle():
    mech = planar_particle(1.0)
    return mech, ConstraintSet(mech, [PointOnPlane("particle", (0.0, 1.0, 0.0))])


def _api_cases(particle):
    mech, cset = particle
    q, v = np.zeros(2), np.array([1.0, 0.0])

    def ctrl_bad_shape(t, snap):
        return np.zeros(3)

    return [
        (lambda: simulate(cset, np.zeros(3), v, 0.1), ModelError, "q has shape \\(3,\\)"),
        (lambda: simulate(cset, q, np.zeros(5), 0.1), ModelError, "v has shape \\(5,\\)"),
        (lambda: simulate(cset, q, v, -1.0), ValueError, "t_end is the final time"),
        (lambda: simulate(cset, q, v, 0.1, SimOptions(dt=0.0)), ValueError, "dt must be > 0"),
        (
            lambda: simulate(cset, q, v, 0.1, SimOptions(integrator="euler")),
            ValueError,
            "unknown integrator 'euler'; valid: rk4",
        ),
        (
            lambda: simulate(cset, q, v, 0.1, SimOptions(dt=1e-2, control_dt=1e-3)),
            ValueError,
            "control_dt must be >= dt",
        ),
        (
            lambda: simulate(cset, q, v, 0.1, SimOptions(variant="Mc3")),
            ValueError,
            "unknown variant 'Mc3'",
        ),
        (
            lambda: simulate(cset, q, v, 0.1, controller=ctrl_bad_shape),
            ValueError,
            "controller returned a torque of shape \\(3,\\), expected \\(2,\\)",
        ),
        (lambda: ConstraintSet(mech, [PointOnPlane("nope", (0, 1, 0))]), ModelError, "'nope'"),
        (lambda: PointOnPlane("particle", (0, 0, 0)), ModelError, "normal"),
        (
            lambda: ProjectedController(cset, JointTask([0]), None, kp=-1.0),
            ValueError,
            "kp must be > 0",
        ),
        (lambda: from_urdf("/no/such.urdf"), ModelError, "does not exist"),
    ]


def test_python_api_refuses_bad_input(particle):
    cases = _api_cases(particle)
    assert len(cases) >= 12
    for call, exc, message in cases:
        with pytest.raises(exc, match=message):
            call()
