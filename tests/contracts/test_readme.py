"""The README and the guides in docs/ run as written: each Python block alone, in an
empty folder, and each `pfaff` command parses."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
from where import REPO

from pfaff.cli import main
from pfaff.scenarios import get_scenario, parse_sets

README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
#: stubs in docs/ of the pages the site generates from their sources (CHANGELOG.md,
#: benchmarks/results/), which the README links directly
GENERATED = ("changelog.md", "results.md")
TEXT = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
PYTHON_BLOCKS = re.findall(r"^```python\n(.*?)^```", TEXT, re.S | re.M)
SH_BLOCKS = re.findall(r"^```sh\n(.*?)^```", TEXT, re.S | re.M)


def _commands() -> list[str]:
    """Every `pfaff ...` command of the README: in sh blocks and in inline code."""
    cmds = []
    for block in SH_BLOCKS:
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0]
            # several commands side by side on one line (the scenario grid)
            cmds += ["pfaff " + c.strip() for c in re.split(r"\bpfaff ", line)[1:]]
    prose = re.sub(r"```.*?```", "", TEXT, flags=re.S)
    for code in re.findall(r"`(pfaff [^`]+)`", prose):
        cmds.append(" ".join(code.split()))  # an inline command may wrap across lines
    return [
        c for c in dict.fromkeys(cmds) if "NAME|" not in c and not c.startswith("pfaff run NAME")
    ]


COMMANDS = _commands()


def test_readme_is_the_landing_page():
    """design.md Sec. 10: the README is at most 200 lines and links every guide."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for page in PAGES[1:]:
        if page.name in GENERATED:
            continue  # a stub of a page the site makes (tools/docs_pages.py)
        assert f"(docs/{page.name})" in text, page.name


def test_readme_has_the_blocks_and_commands_it_should():
    assert len(PYTHON_BLOCKS) >= 3
    assert any("panda-contact" in c and "q0=" in c for c in COMMANDS)
    assert any("start=singular" in c for c in COMMANDS)
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs_alone(index, tmp_path):
    """Each block in a fresh interpreter, in an empty folder, as written."""
    code = PYTHON_BLOCKS[index]
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"python block {index} failed:\n{code}\n{proc.stderr}"
    assert proc.stdout.strip(), "each block prints what it computes"
    assert not any(tmp_path.iterdir()), "a block writes no files"


def test_python_block_witness_fails_on_a_broken_block(tmp_path):
    """The harness above catches a block that uses a name it does not define."""
    proc = subprocess.run(
        [sys.executable, "-c", "import numpy as np\nprint(cset)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "NameError" in proc.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_parses(command, capsys):
    """The command line parses and every --set names a valid key and value.

    Nothing is simulated: `pfaff run` commands are checked with --params (the
    parser sees the whole line) and the scenario's own parameter validation.
    """
    argv = shlex.split(command)[1:]
    if argv[:1] == ["bench"]:
        return  # runs the whole benchmark suite: checked by hand
    if argv == ["--version"]:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
        return
    if argv[:1] == ["compare"]:  # parse only: a comparison runs two simulations
        pytest.importorskip("mujoco", reason="MuJoCo is the peer: pip install -e '.[mujoco]'")
        sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
        get_scenario(f"compare:{argv[1]}").resolve(parse_sets(sets))
        return
    if argv[:1] == ["view"]:  # parsed and the file loaded: the view serves until Ctrl-C
        from pfaff.api import load
        from pfaff.cli import _parser

        args = _parser().parse_args(argv)
        load(args.file, keyframe=args.keyframe)
        return
    if argv[:1] == ["run"]:
        assert main([*argv, "--params"]) == 0, capsys.readouterr().err
        sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
        get_scenario(argv[1]).resolve(parse_sets(sets))
        return
    if argv[:1] == ["sweep"]:  # parsed and every point validated; nothing runs
        from pfaff.cli import _parser
        from pfaff.sweep import parse_grid, parse_random, plan_points

        args = _parser().parse_args(argv)
        grid, rnd = parse_grid(args.grid), parse_random(args.random)
        assert plan_points(args.name, grid, rnd, args.samples, args.seed, parse_sets(args.set))
        return
    assert main(argv) == 0, capsys.readouterr().err


def test_command_check_catches_a_key_without_its_own_set(capsys):
    """`--set urdf=PATH frame=NAME` (one --set for two keys) is refused."""
    with pytest.raises(SystemExit) as exc:
        main(["run", "panda-contact", "--set", "urdf=PATH", "frame=NAME", "--params"])
    assert exc.value.code == 2
    assert "unrecognized arguments: frame=NAME" in capsys.readouterr().err
