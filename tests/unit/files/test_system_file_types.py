"""The system file's element types derived from their classes (pfaff.files.schema): the
tendon spring, the coordinate lock, the ball angle and the three limits written to a
system file and read back give the Python-built System's accelerations at many states
(and its limits), a changed value is caught, and a bad key or value of each type is
refused naming it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pfaff
from pfaff.constraints.ball_angle import BallAngle
from pfaff.constraints.coordinate_lock import CoordinateLock
from pfaff.errors import ParameterError
from pfaff.files import schema
from pfaff.files import system as sf
from pfaff.files.model import load_model
from pfaff.simulate.forces import TendonSpring
from pfaff.simulate.limits import BallLimit, JointLimit, TendonLimit

XML = """<mujoco>
  <compiler angle="radian"/>
  <option gravity="0 -9.81 0"><flag contact="disable"/></option>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.8"/>
      <body name="b" pos="0.4 0 0">
        <joint name="j2" type="hinge" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
        <body name="c" pos="0.3 0 0">
          <joint name="j3" type="slide" axis="1 0 0"/>
          <geom type="sphere" size="0.03" mass="0.2"/>
        </body>
      </body>
    </body>
    <body name="rod" pos="1 0 0">
      <joint name="ball" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0.1 0.1 -0.5" size="0.02" mass="0.7"/>
    </body>
  </worldbody>
  <keyframe><key qpos="0.2 -0.3 0.05 0.9553365 0.2955202 0 0"/></keyframe>
</mujoco>
"""

#: the elements, as Python builds them and as a system file writes them
ELEMENTS = {
    "constraints": [
        (
            CoordinateLock(("j1", "j3"), (1.0, -2.0), 0.1),
            'type = "coordinate_lock"\njoints = ["j1", "j3"]\ncoefficients = [1.0, -2.0]\n'
            "value = 0.1\n",
        ),
        (BallAngle("ball", 0.4), 'type = "ball_angle"\njoint = "ball"\nvalue = 0.4\n'),
    ],
    "forces": [
        (
            TendonSpring(("j1", "j2"), (1.0, 0.5), 3.0, 0.2, (-0.1, 0.05)),
            'type = "tendon_spring"\njoints = ["j1", "j2"]\ncoefficients = [1.0, 0.5]\n'
            "stiffness = 3.0\ndamping = 0.2\nspringlength = [-0.1, 0.05]\n",
        ),
        (
            TendonSpring(("j2",), (2.0,), 1.5, springlength=0.3),
            'type = "tendon_spring"\njoints = ["j2"]\ncoefficients = [2.0]\n'
            "stiffness = 1.5\nspringlength = 0.3\n",
        ),
    ],
    "limits": [
        (
            JointLimit("j3", -np.inf, 0.2, 0.5),
            'type = "joint_limit"\njoint = "j3"\nlower = -inf\nupper = 0.2\nrestitution = 0.5\n',
        ),
        (
            TendonLimit("reach", ("j1", "j2"), (1.0, 0.5), -0.6, 0.4, 0.3),
            'type = "tendon_limit"\nname = "reach"\njoints = ["j1", "j2"]\n'
            "coefficients = [1.0, 0.5]\nlower = -0.6\nupper = 0.4\nrestitution = 0.3\n",
        ),
        (BallLimit("ball", 0.9), 'type = "ball_limit"\njoint = "ball"\nangle = 0.9\n'),
    ],
}


def _toml(tables: dict[str, list[str]]) -> str:
    out = ['model.file = "arm.xml"\n']
    for key, texts in tables.items():
        out += [f"\n[[{key}]]\n{t}" for t in texts]
    return "".join(out)


def _pair(tmp_path, text: str | None = None):
    """The System built in Python and the one read from its system file."""
    (tmp_path / "arm.xml").write_text(XML)
    model = load_model(tmp_path / "arm.xml")
    model.constraints += [e for e, _ in ELEMENTS["constraints"]]
    model.forces += [e for e, _ in ELEMENTS["forces"]]
    model.limits += [e for e, _ in ELEMENTS["limits"]]
    path = tmp_path / "arm.toml"
    path.write_text(text or _toml({k: [t for _, t in v] for k, v in ELEMENTS.items()}))
    with pytest.warns(UserWarning, match="moved"):
        built = pfaff.System(model)
    with pytest.warns(UserWarning, match="moved"):
        read = pfaff.load(path)
    return built, read


def _states(system, n: int = 12):
    rng = np.random.default_rng(4)
    for _ in range(n):
        q = system.integrate(system.q0, rng.uniform(-1.0, 1.0, system.nv))
        yield q, rng.normal(size=system.nv)


def test_each_new_type_reads_back_the_same_system(tmp_path):
    """The file's System and the Python one: the same element types and limits, and the
    same constrained accelerations (1e-12) at 12 random states, where the tendon
    springs (past their bands and inside), the lock and the ball angle all act."""
    built, read = _pair(tmp_path)
    assert [type(c) for c in read.cset.constraints] == [type(c) for c in built.cset.constraints]
    assert [type(f) for f in read.forces] == [type(f) for f in built.forces]
    assert read.limits == built.limits and len(read.limits) == 3
    worst, moved = 0.0, 0.0
    for q, v in _states(built):
        a, b = built.forward_dynamics(q, v).a, read.forward_dynamics(q, v).a
        worst = max(worst, float(np.abs(a - b).max()))
        moved = max(moved, float(np.abs(a).max()))
    assert worst <= 1e-12 and moved > 1.0


def test_a_changed_value_in_the_file_is_caught(tmp_path):
    """The witness of the comparison above: the file's tendon spring with stiffness 3.5
    instead of 3 gives other accelerations (more than 1e-6)."""
    texts = {k: [t for _, t in v] for k, v in ELEMENTS.items()}
    texts["forces"][0] = texts["forces"][0].replace("stiffness = 3.0", "stiffness = 3.5")
    built, read = _pair(tmp_path, _toml(texts))
    diff = max(
        float(np.abs(built.forward_dynamics(q, v).a - read.forward_dynamics(q, v).a).max())
        for q, v in _states(built)
    )
    assert diff > 1e-6


@pytest.mark.parametrize(
    ("table", "text", "words"),
    [
        ("constraints", 'type = "coordinate_lock"\njoints = ["j1"]\ncoefs = [1.0]\n',
         [r"constraints\[0\]\.coefs", "valid keys", "coefficients"]),
        ("constraints", 'type = "coordinate_lock"\njoints = ["j1", "j2"]\ncoefficients = [1.0]\n',
         [r"constraints\[0\] \(coordinate_lock\)", "one coefficient per joint"]),
        ("constraints", 'type = "coordinate_lock"\njoints = "j1"\ncoefficients = [1.0]\n',
         [r"constraints\[0\]\.joints", "list of joint names"]),
        ("constraints", 'type = "ball_angle"\njoint = "ball"\nvalue = 4.0\n',
         [r"constraints\[0\] \(ball_angle\)", "valid: \\(0, pi\\)"]),
        ("constraints", 'type = "ball_angle"\njoint = "j1"\nvalue = 0.3\n',
         [r"constraints\[0\] \(ball_angle\)", "not a ball joint"]),
        ("forces", 'type = "tendon_spring"\njoints = ["j1"]\ncoefficients = [1.0]\n'
                   "springlength = [0.2, 0.1]\n",
         [r"forces\[0\] \(tendon_spring\)", "lo <= hi"]),
        ("forces", 'type = "tendon_spring"\njoints = ["j1"]\ncoefficients = ["one"]\n',
         [r"forces\[0\]\.coefficients\[0\]", "finite number"]),
        ("forces", 'type = "tendon_spring"\njoints = ["nope"]\ncoefficients = [1.0]\n',
         [r"forces\[0\] \(tendon_spring\)", "nope"]),
        ("limits", 'type = "joint_limit"\njoint = "j1"\nlower = 1.0\nupper = 0.5\n',
         [r"limits\[0\] \(joint_limit\)", "must be < upper"]),
        ("limits", 'type = "joint_limit"\njoint = "j1"\nupper = 0.5\n',
         [r"limits\[0\] \(joint_limit\)", "missing key 'lower'"]),
        ("limits", 'type = "tendon_limit"\njoints = ["j1"]\ncoefficients = [1.0]\n'
                   "lower = -1.0\nupper = 1.0\n",
         [r"limits\[0\] \(tendon_limit\)", "missing key 'name'"]),
        ("limits", 'type = "tendon_limit"\nname = "t"\njoints = ["j1", "j9"]\n'
                   "coefficients = [1.0, 1.0]\nlower = -1.0\nupper = 1.0\n",
         [r"limits\[0\] \(tendon_limit\)", "j9"]),
        ("limits", 'type = "ball_limit"\njoint = "ball"\nangle = 0.5\nrestitution = 2.0\n',
         [r"limits\[0\] \(ball_limit\)", "restitution", r"valid: \[0, 1\]"]),
        ("limits", 'type = "ball_limit"\njoint = "ball"\nangle = 0.5\nname = "x"\n',
         [r"limits\[0\]\.name", "valid keys: type, joint, angle, restitution"]),
        ("limits", 'type = "ball_limit"\njoint = "j2"\nangle = 0.5\n',
         [r"limits\[0\] \(ball_limit\)", "not a ball joint"]),
        ("limits", 'type = "elbow_stop"\n', [r"limits\[0\]\.type", "ball_limit"]),
    ],
)  # fmt: skip
def test_bad_input_of_each_new_type_is_refused_naming_it(tmp_path, table, text, words):
    (tmp_path / "arm.xml").write_text(XML)
    path = tmp_path / "bad.toml"
    path.write_text(_toml({table: [text]}))
    with pytest.raises(ParameterError) as err:
        sf.load_system(path)
    for w in words:
        assert re.search(w, str(err.value)), (w, str(err.value))


def test_the_schema_follows_the_class_signature():
    """The keys are the signature's, required where it has no default; the kinds from the
    annotations; a parameter whose kind cannot be read is an error naming it."""
    assert sf.FORCE_TYPES["tendon_spring"][1] == {
        "joints": ("strs", True),
        "coefficients": ("floats", True),
        "stiffness": ("float", False),
        "damping": ("float", False),
        "springlength": ("band", False),
    }
    assert sf.LIMIT_TYPES["tendon_limit"][1]["name"] == ("str", True)
    assert sf.CONSTRAINT_TYPES["ball_angle"][1] == {
        "joint": ("str", True),
        "value": ("float", True),
    }

    class Odd:
        def __init__(self, joint: str, shape, name=None) -> None:
            pass

    with pytest.raises(TypeError, match="Odd.shape: no system-file kind"):
        schema.derive(Odd)
    assert schema.derive(Odd, {"shape": "vec3"})[1] == {
        "joint": ("str", True),
        "shape": ("vec3", True),
    }
