"""The user-facing text says nothing a reader cannot check: every measured speed
figure in the README and docs/ carries its source, a recorded figure matches the
results file it names, every repository path it names exists, and no page reads as a
development log (no "this turn", "session", "issue N" or dated run)."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest
from where import REPO

_spec = importlib.util.spec_from_file_location("docs_pages", REPO / "tools" / "docs_pages.py")
pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pages)

HAND_WRITTEN = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
USER_FACING = [*HAND_WRITTEN, REPO / "CHANGELOG.md", *sorted((REPO / "docs" / "api").glob("*.md"))]

#: a number, or a range of two, in front of "x" (a speed-up, a realtime factor, a
#: convergence ratio) -- not "3 x 3" -- or in front of a time unit per call
NUMBER = r"\d+(?:\.\d+)?(?:e-?\d+)?"
SPEED = re.compile(
    rf"(?<![\w.^/-])({NUMBER})(?:\s*(?:-|\.\.|to)\s*({NUMBER}))?(?:x\b|\s*(?:us|µs)\b|\s*ms per\b)"
)
#: a paragraph about speed: its figures come from a recorded benchmark run
TIMING = re.compile(r"real[- ]?time|\d\s*(?:us|µs)\b|ms per\b", re.I)
#: a source: a repository file that computes or records the figures
SOURCE = re.compile(r"\b((?:benchmarks|tests)/[\w./-]+\.(?:py|json))\b")
FORBIDDEN = re.compile(
    r"\b(?:this|last|previous|next|that|each) turn\b|\bturn's\b|\bsessions?\b"
    r"|\bissues? #?\d+|\bnext run\b|\(\d{4}-\d{2}-\d{2}\b|\b\d{4}-\d{2}-\d{2}[,)]"
    r"|\bdesign\.md\b",
    re.I,
)


def paragraphs(text: str) -> list[tuple[int, str]]:
    """The prose of a Markdown page, without fenced code, in blank-line separated
    blocks; a table counts with the paragraph just above it (its caption)."""
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)
    out: list[tuple[int, str]] = []
    line = 1
    for block in re.split(r"(\n\s*\n)", text):
        if block.strip():
            if block.lstrip().startswith("|") and out:
                out[-1] = (out[-1][0], out[-1][1] + "\n" + block)
            else:
                out.append((line, block))
        line += block.count("\n")
    return out


def speed_figures(par: str) -> list[str]:
    """The measured speed figures of a paragraph (inline code excluded)."""
    prose = re.sub(r"`[^`]*`", "", par)
    return [  # a target ("<= 60 us", "target 3x") is not a measurement
        m.group(0)
        for m in SPEED.finditer(prose)
        if not re.search(r"(?:[<>]=?|target|bar)\s*$", prose[: m.start()])
    ]


def _numbers(obj) -> list[float]:
    """Every number in a results file, also those inside its notes."""
    if isinstance(obj, bool):
        return []
    if isinstance(obj, (int, float)):
        return [float(obj)]
    if isinstance(obj, str):
        return [float(x) for x in re.findall(NUMBER, obj)]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in _numbers(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in _numbers(v)]
    return []


def quoted(figure: str, values: list[float]) -> bool:
    """A printed figure is some value of the file rounded to the digits printed."""
    ends = [g for g in re.findall(NUMBER, figure)][:2]
    for text in ends:
        x = float(text)
        digits = len(text.split(".")[1]) if "." in text else 0
        sig = len(text.replace(".", "").lstrip("0")) or 1
        half = max(
            0.5 * 10.0**-digits, 0.5 * 10 ** (math.floor(math.log10(abs(x) or 1)) - sig + 1)
        )
        if not any(abs(v - x) <= half * (1 + 1e-9) for v in values):
            return False
    return True


def problems(page: Path, text: str) -> list[str]:
    """What a page says without its source, or with a source that disagrees."""
    out = []
    for line, par in paragraphs(text):
        figures = speed_figures(par)
        if not figures:
            continue
        sources = [s for s in SOURCE.findall(par)]
        if not sources:
            out.append(f"{page.name}:{line}: {figures} without a source file")
            continue
        for s in sources:
            if not (REPO / s).is_file():
                out.append(f"{page.name}:{line}: source {s} does not exist")
        results = [s for s in sources if s.startswith("benchmarks/results/")]
        if TIMING.search(re.sub(r"`[^`]*`", "", par)) and not results:
            out.append(f"{page.name}:{line}: timings {figures} without a benchmarks/results file")
            continue
        if results and all((REPO / s).is_file() for s in results):
            values = [v for s in results for v in _numbers(json.loads((REPO / s).read_text()))]
            out += [
                f"{page.name}:{line}: {f!r} is not in {', '.join(results)}"
                for f in figures
                if not quoted(f, values)
            ]
    return out


@pytest.mark.parametrize("page", HAND_WRITTEN, ids=lambda p: p.name)
def test_every_measured_figure_has_its_source(page):
    assert problems(page, page.read_text(encoding="utf-8")) == []


def test_the_figure_check_catches_a_missing_or_stale_source():
    res = "benchmarks/results/2026-11-26-bench-all.json"
    ok = f"The slider-crank runs at 982x real time (`{res}`)."
    assert problems(Path("x.md"), ok) == []
    assert problems(Path("x.md"), "It runs at 982x real time.") != []  # no source
    # a timing needs a recorded run, not a test file
    assert problems(Path("x.md"), "982x real time (`tests/papers/test_folds.py`)") != []
    assert problems(Path("x.md"), ok.replace("982x", "652x")) != []  # not in that run
    assert problems(Path("x.md"), ok.replace("bench-all", "bench-none")) != []  # no file
    assert problems(Path("x.md"), "A 3 x 3 matrix and a 12 x 30 A.") == []  # sizes
    assert problems(Path("x.md"), "| a call | <= 60 us |") == []  # a target
    table = "Ratios (`tests/papers/test_folds.py`):\n\n| dt | ratio |\n|---|---|\n| 2 | 15.3x |"
    assert problems(Path("x.md"), table) == []  # a table's caption labels it
    assert problems(Path("x.md"), "```\nsteps at 20 us\n```\n") == []  # code is not prose


@pytest.mark.parametrize("page", USER_FACING, ids=lambda p: p.name)
def test_no_development_log_in_user_facing_text(page):
    hits = [
        f"{page.name}:{n}: {m.group(0)!r}"
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for m in FORBIDDEN.finditer(line)
    ]
    assert hits == []


@pytest.mark.parametrize("name", sorted(pages.PAGES))
def test_no_development_log_in_generated_pages(name):
    text = pages.PAGES[name]()
    assert [m.group(0) for m in FORBIDDEN.finditer(text)] == []


def test_the_log_check_catches_what_it_should():
    for bad in (
        "since this turn",
        "previous turn's run",
        "in this session",
        "issue 15",
        "Next run (2026-11-25, same VM)",
        "median of 3, 2026-11-24)",
    ):
        assert FORBIDDEN.search(bad), bad
    for fine in (
        "the crank turns",
        "timed in turn",
        "coupler and rocker may turn together",
        "benchmarks/results/2026-11-26-bench-all.json",
    ):
        assert not FORBIDDEN.search(fine), fine


def test_every_repository_path_the_docs_name_exists():
    text = "\n".join(p.read_text(encoding="utf-8") for p in HAND_WRITTEN)
    paths = re.findall(r"`((?:tests|benchmarks|examples|src|docs|tools)/[^`\s:<>*]+)", text)
    real = [p for p in paths if not re.search(r"[A-Z]{3,}", p)]  # not DATE-NAME.json
    missing = sorted({p for p in real if not (REPO / p).exists()})
    assert missing == []
