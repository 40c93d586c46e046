"""Each constraint kind of the core is its file src/cpp/kinds/<name>.cpp, declared by its
line "// PFAFF_KIND(Name, rows, window, holonomic)" that CMake gathers into kinds.def
(CMakeLists.txt: file(STRINGS ... REGEX)). A line CMake's pattern does not take would
drop its kind silently: every declaration here has the pattern's form and the built
core's Kind enum holds exactly the declared names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pfaff import core

KINDS = Path(__file__).resolve().parents[2] / "src" / "cpp" / "kinds"
# CMakeLists.txt's pattern, the same characters
PATTERN = re.compile(r"^// PFAFF_KIND\([A-Za-z]+, [0-9]+, [01], [01]\)$")


def declarations(text: str) -> list[str]:
    """The kinds a file declares; ValueError for a line that starts as a declaration but
    is not one CMake would take."""
    names = []
    for line in text.splitlines():
        if not line.startswith("// PFAFF_KIND("):
            continue
        if not PATTERN.match(line):
            raise ValueError(f"{line!r} is not '// PFAFF_KIND(Name, rows, 0|1, 0|1)'")
        names.append(line[len("// PFAFF_KIND(") :].split(",")[0])
    return names


@pytest.mark.skipif(not KINDS.is_dir(), reason="the C++ sources are not beside the tests")
@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
def test_every_kind_file_declares_what_the_core_has():
    declared = []
    for path in sorted(KINDS.glob("*.cpp")):
        names = declarations(path.read_text())
        assert names, f"{path.name} declares no kind"
        declared += names
    assert sorted(declared) == sorted(core._core.Kind.__members__), declared


def test_a_malformed_declaration_is_caught():
    assert declarations("// PFAFF_KIND(Weld, 6, 1, 1)\nint x;") == ["Weld"]
    with pytest.raises(ValueError, match="is not '// PFAFF_KIND"):
        declarations("// PFAFF_KIND(Weld, 6, 1)")  # the holonomic column missing
    with pytest.raises(ValueError, match="is not '// PFAFF_KIND"):
        declarations("// PFAFF_KIND(Weld, 6, 1, 1) ")  # a trailing space
