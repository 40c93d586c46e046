"""The compiled core's force elements as files (src/cpp/forces/<snake_case>.cpp, each
declared by its first line; cmake/forces_def.cmake collects them into forces.def): the
``ForceKind`` enum is those files, a file whose declaration is wrong stops the build,
and each element's checks refuse a spoiled spec that its valid one passes."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from pfaff import core, lowering
from pfaff.constraints import ConstraintSet
from pfaff.mechanism import load_robot
from pfaff.simulate import AppliedForce
from tests.parity.test_lowerings import FORCES, ON_BALLS, _balls
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

ROOT = MODELS.parents[1]
FORCE_FILES = ROOT / "src" / "cpp" / "forces"
SCRIPT = ROOT / "cmake" / "forces_def.cmake"

#: per element: the example of tests/parity/test_lowerings.py (an AppliedForce for the
#: Python law) and one field spoiled: (field, wrong value, words of the message)
WRONG = {
    "PointSpring": ("s1", 99, "spec.s1 = 99 is out of range"),
    "PointDamper": ("s2", 99, "spec.s2 = 99 is out of range"),
    "JointSpring": ("iq", 99, "spec.iq = 99 is out of range"),
    "JointDamper": ("iv", -2, "spec.iv = -2 is out of range"),
    "CoordinateSpring": ("ivs", [0], "one q index, v index and coefficient each"),
    "TendonSpring": ("hi", -1.0, "spec.lo = -0.2.* > spec.hi = -1"),
    "AnchorSpring": ("axes", [0, 3], "spec.axes\\[i\\] = 3 is out of range"),
    "AnchorDamper": ("axes", [-1], "spec.axes\\[i\\] = -1 is out of range"),
    "PointForce": ("s1", -1, "spec.s1 = -1 is out of range"),
    "GravityCompensation": ("k", -1.0, "spec.k, L0, k3, c = -1"),
    "Actuator": ("fhi", -5.0, "spec.flo, spec.fhi: a force range lo <= hi"),
    "BallSpring": ("ref", [0.0, 0.0, 1.0], "spec.ref has 3 values, expected 4"),
    "DofDamper": ("coefs", [0.1] * 5, "spec.coefs has 5 values, expected 6"),
    "Python": (None, None, "a Python force element needs its law"),
}


def _camel(stem: str) -> str:
    return "".join(part.capitalize() for part in stem.split("_"))


def test_the_force_kinds_are_the_element_files():
    """One ForceKind per file of src/cpp/forces (its name in CamelCase), and each file's
    first line declares it: the enum is generated from the files, not kept beside them."""
    files = sorted(FORCE_FILES.glob("*.cpp"))
    assert len(files) >= 13
    kinds = set(core._core.ForceKind.__members__)
    assert kinds == {_camel(f.stem) for f in files}
    for f in files:
        first = f.read_text().splitlines()[0]
        assert re.fullmatch(rf"// PFAFF_FORCE\({_camel(f.stem)}, [0-2], [01]\)", first), f


@pytest.fixture(scope="module")
def panda():
    return load_robot("panda")


def _examples() -> dict[str, object]:
    """ForceKind name -> an element that lowers to it."""
    out = {}
    for make in FORCES.values():
        e = make()
        out[type(e).__name__.replace("ActuatorForce", "Actuator")] = (type(e), e)
    out["Python"] = (None, AppliedForce(lambda t, snap: -0.1 * snap.v))
    return out


def test_every_force_kind_has_a_refusal_case():
    assert set(WRONG) == set(core._core.ForceKind.__members__)
    assert set(WRONG) == set(_examples())


@pytest.mark.parametrize("kind", sorted(WRONG))
def test_each_element_refuses_a_spoiled_spec(panda, kind):
    """The element's valid spec (its lowering of the parity example) is added; the same
    spec with one field spoiled is refused by add_force and add_held_force, naming the
    field."""
    cls, e = _examples()[kind]
    mech = _balls() if cls in ON_BALLS else panda
    cset = ConstraintSet(mech, [])
    e.bind(mech)
    system = core.build(cset)
    into = core.Build(system, mech)
    spec = lowering.lower(e, "force", into)
    assert spec.kind == getattr(core._core.ForceKind, kind)
    system.add_force(spec)  # valid
    field, value, words = WRONG[kind]
    if field is None:
        spec = into.force_spec(kind)  # no law
    else:
        setattr(spec, field, value)
    for add in (system.add_force, system.add_held_force):
        with pytest.raises(ValueError, match=words):
            add(spec)


def _forces_def(tmp_path, files: dict[str, str]) -> subprocess.CompletedProcess:
    d = tmp_path / "forces"
    d.mkdir(parents=True)
    for name, text in files.items():
        (d / name).write_text(text)
    cmd = ["cmake", f"-DFORCES_DIR={d}", f"-DFORCES_DEF={tmp_path / 'forces.def'}"]
    return subprocess.run([*cmd, "-P", str(SCRIPT)], capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake on the path")
def test_forces_def_is_the_files_declarations(tmp_path):
    """The script CMake runs writes one line per file in the files' order; a file whose
    first line is not its declaration, or names another element than its file, stops
    the build with a message naming the file."""
    good = {
        "point_spring.cpp": "// PFAFF_FORCE(PointSpring, 2, 0)\n// Q = ...\n",
        "gravity_compensation.cpp": "// PFAFF_FORCE(GravityCompensation, 0, 1)\n",
    }
    run = _forces_def(tmp_path, good)
    assert run.returncode == 0, run.stderr
    lines = (tmp_path / "forces.def").read_text().splitlines()
    assert lines[1:] == [
        "PFAFF_FORCE(GravityCompensation, 0, 1)",
        "PFAFF_FORCE(PointSpring, 2, 0)",
    ]
    for i, first in enumerate(
        (
            "// PFAFF_FORCE(CableSpring, 1, 0)",  # not the file's name
            "// PFAFF_FORCE(Cable, 3, 0)",  # points out of range
            "// A cable (no declaration)",
        )
    ):
        run = _forces_def(tmp_path / str(i), {"cable.cpp": first + "\n"})
        assert run.returncode != 0
        message = " ".join(run.stderr.split())  # CMake wraps its messages
        assert "cable.cpp must begin with its declaration" in message, message
