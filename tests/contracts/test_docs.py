"""The guides in docs/ run as written: each Python block alone, in an empty folder."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from where import REPO

BLOCKS = [
    (page.name, i, code)
    for page in sorted((REPO / "docs").glob("*.md"))
    for i, code in enumerate(
        re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)
    )
]


def test_the_guides_have_python_blocks():
    assert len(BLOCKS) >= 1


@pytest.mark.parametrize("page,index,code", BLOCKS, ids=[f"{p}:{i}" for p, i, _ in BLOCKS])
def test_guide_python_block_runs_alone(page, index, code, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"{page} block {index} failed:\n{code}\n{proc.stderr}"
    assert proc.stdout.strip(), "each block prints what it computes"
    assert not any(tmp_path.iterdir()), "a block writes no files"
