"""The compiled core's folders are layers (docs/internals.md, "Where things live"): a
file of src/cpp includes only files of its own folder or of the folders below it, each
by its path from src/cpp (``#include "model/core.hpp"``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CPP = Path(__file__).resolve().parents[2] / "src" / "cpp"
#: the folders from the ground up; a folder may include its own files and those below
FLOORS = {
    "tables": 0,  # the rules and tables both languages read
    "model": 1,  # Model, Data, the set-up (ModelBuilder), the boundary's checks
    "algorithms": 2,  # the free functions over a Model and its Data
    "kinds": 3,  # one file per constraint kind
    "forces": 3,  # one file per force element
    "sim": 4,  # the step, the loop (Stepper, System), the record, the joint limits
    "bindings": 5,  # pfaff._core's bindings
    "papers": 6,  # pfaff._papers, a module apart
}
#: includes that run up, each with why: a kind written in Python holds its callable
#: and casts its arrays as the bindings do (its kind is its binding)
UP = {("kinds/python.cpp", "bindings/bind.hpp")}
GENERATED = {"kinds.def", "forces.def"}  # CMake writes them into the build tree
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _includes(root: Path) -> dict[str, list[str]]:
    """Each file of root (its path from root) -> the files it includes by quotes."""
    files = sorted(p for p in root.rglob("*") if p.suffix in (".hpp", ".cpp", ".def"))
    return {p.relative_to(root).as_posix(): INCLUDE.findall(p.read_text()) for p in files}


def _faults(root: Path) -> list[str]:
    """An include that runs up, names no file of root, or a file outside every floor."""
    graph = _includes(root)
    bad = []
    for src, targets in graph.items():
        folder = src.split("/")[0]
        if folder not in FLOORS:
            bad.append(f"{src}: in no layer folder ({', '.join(FLOORS)})")
            continue
        for target in targets:
            if target in GENERATED or target.startswith("pinocchio/"):
                continue
            if target not in graph:
                bad.append(f"{src} includes {target}: no file of src/cpp by that path")
            elif FLOORS[target.split("/")[0]] > FLOORS[folder] and (src, target) not in UP:
                bad.append(f"{src} includes {target}: an include up")
    return bad


def test_src_cpp_includes_run_downward_only():
    assert CPP.is_dir()
    assert len(_includes(CPP)) > 50  # the tree is there and read
    assert not _faults(CPP), "\n".join(_faults(CPP))


@pytest.mark.parametrize(
    ("files", "fault"),
    [
        ({"model/a.hpp": '#include "sim/b.hpp"\n', "sim/b.hpp": ""}, "an include up"),
        ({"sim/b.cpp": '#include "b.hpp"\n', "sim/b.hpp": ""}, "no file of src/cpp"),
        ({"misc/c.cpp": "\n"}, "in no layer folder"),
    ],
)
def test_a_wrong_include_is_caught(tmp_path, files, fault):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert any(fault in f for f in _faults(tmp_path))


def test_a_downward_include_passes(tmp_path):
    (tmp_path / "sim").mkdir()
    (tmp_path / "model").mkdir()
    (tmp_path / "sim" / "b.cpp").write_text('#include "model/a.hpp"\n#include "kinds.def"\n')
    (tmp_path / "model" / "a.hpp").write_text('#include "pinocchio/multibody.hpp"\n')
    assert _faults(tmp_path) == []
