"""The documentation site's generated pages: an MkDocs hook (``hooks:`` in ``mkdocs.yml``).

At every build it writes the reference pages of :mod:`docs_reference` (system file,
command line, scenarios), ``results.md`` from the ``pfaff bench --json`` files in
``benchmarks/results/`` and ``changelog.md`` from ``CHANGELOG.md``; and it adds every
top-level ``docs/*.md`` page that ``nav`` does not list to a "More guides" section,
so a new guide is on the site before anyone edits the nav.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_reference import (  # noqa: E402  (beside this file, which MkDocs loads by path)
    KIND_DOCS,
    _cell,
    _subcommands,
    _table,
    cli_page,
    param_docs,
    scenarios_page,
    system_file_page,
)

__all__ = [
    "KIND_DOCS",
    "_cell",
    "_subcommands",
    "cli_page",
    "param_docs",
    "scenarios_page",
    "system_file_page",
]

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


def _fmt(value: Any) -> str:
    from pfaff.bench import format_value

    return format_value(value)


def public_note(note: str) -> str:
    """A row's note without a tracker reference (``"issue 18 (the core's bar)"`` ->
    ``"the core's bar"``): older result files named the plan item a target came from."""
    text = re.sub(r"\bissue \d+\s*(?:\(([^)]*)\))?;?\s*", lambda m: m.group(1) or "", note)
    return text.strip()


def results_page(folder: Path = RESULTS) -> str:
    """The recorded benchmark runs, newest first: host, date, versions, every figure."""
    from pfaff.bench import meets_target

    files = sorted(folder.glob("*.json"), reverse=True)
    lines = [
        "# Benchmark results",
        "",
        "Generated from the `pfaff bench --json FILE` files in `benchmarks/results/`, "
        "newest first: each records its host, date and versions beside its figures. "
        "Compare ratios measured in one run rather than absolute times across hosts. "
        "What each benchmark measures: [Benchmarks](benchmarks.md).",
        "",
    ]
    if not files:
        raise FileNotFoundError(f"no benchmark results in {folder}")
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        for key in ("rows", "date", "host", "versions"):
            if key not in data:
                raise KeyError(f"{f.name}: a pfaff bench --json file has {key!r}")
        host, ver = data["host"], data["versions"]
        lines += [
            f"## `{f.name}`",
            "",
            _table(
                ["date", "host", "CPU", "cores", "platform"],
                [
                    [
                        data["date"],
                        host.get("name"),
                        host.get("cpu"),
                        host.get("cores"),
                        host.get("platform"),
                    ]
                ],
            ),
            "",
            _table(list(ver), [[f"`{v}`" if k == "pfaff_git" else v for k, v in ver.items()]]),
            "",
        ]
        groups: dict[str, list[dict]] = {}
        for r in data["rows"]:
            groups.setdefault(r["benchmark"], []).append(r)
        for bench, rows in groups.items():
            lines += [
                f"### {bench}",
                "",
                _table(
                    ["figure", "value", "unit", "target", "ok", "note"],
                    [
                        [
                            r["figure"],
                            _fmt(r["value"]),
                            r.get("unit", ""),
                            r.get("target", ""),
                            meets_target(r["value"], str(r.get("target", ""))),
                            public_note(r.get("note", "")),
                        ]
                        for r in rows
                    ],
                ),
                "",
            ]
    return "\n".join(lines)


def changelog_page() -> str:
    """CHANGELOG.md as a page of the site."""
    return (REPO / "CHANGELOG.md").read_text(encoding="utf-8")


PAGES = {
    "reference/system-file.md": system_file_page,
    "reference/cli.md": cli_page,
    "reference/scenarios.md": scenarios_page,
    "results.md": results_page,
    "changelog.md": changelog_page,
}
#: the nav section that collects top-level guides the nav does not list
MORE = "More guides"


# -- MkDocs hooks ---------------------------------------------------------------------------
def _nav_pages(nav: Any) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_pages(x) for x in nav)) if nav else set()
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(x) for x in nav.values()))
    return set()


def unlisted_guides(nav: Any, docs_dir: Path) -> list[str]:
    """Top-level pages of ``docs_dir`` that ``nav`` does not list."""
    listed = _nav_pages(nav)
    return [p.name for p in sorted(docs_dir.glob("*.md")) if p.name not in listed]


def on_config(config):
    """Add the guides the nav does not list under "More guides"."""
    extra = unlisted_guides(config["nav"], Path(config["docs_dir"]))
    if extra:
        config["nav"].append({MORE: extra})
    return config


def on_files(files, config):
    """Add the generated pages to the site's files."""
    from mkdocs.structure.files import File

    for uri, make in PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    return files
