"""The documentation site's generated pages: an MkDocs hook (``hooks:`` in ``mkdocs.yml``).

At every build it writes the reference pages of :mod:`docs_reference` (system file,
command line, scenarios), ``results.md`` from the ``pfaff bench --json`` files in
``benchmarks/results/`` and ``changelog.md`` from ``CHANGELOG.md``, each in place of
the short stub of the same name in ``docs/`` (which says where the page comes from, for
a reader of the repository); and it adds every
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
    ``"the core's bar"``) or a pointer to the unpublished design notes: older result
    files named the plan item a target came from."""
    text = re.sub(r"\bissue \d+\s*(?:\(([^)]*)\))?;?\s*", lambda m: m.group(1) or "", note)
    text = re.sub(
        r"\s*\(design\.md(?: Sec\. [\d.]+)?\)|design\.md(?: Sec\. [\d.]+)?:?\s*", "", text
    )
    return text.strip()


def _load_run(f: Path) -> dict:
    data = json.loads(f.read_text(encoding="utf-8"))
    for key in ("rows", "date", "host", "versions"):
        if key not in data:
            raise KeyError(f"{f.name}: a pfaff bench --json file has {key!r}")
    return data


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


#: the figures of one scenario (or model file) in a run, by the end of the row's name
GLANCE = {
    "scenarios": ("realtime factor", "engine", "max |phi|", "status"),
    "model-files": ("realtime factor", "engine", "max |phi|", "status"),
    "mujoco-rk4": ("pfaff step", "MuJoCo RK4 step", "ratio pfaff/MuJoCo", "engine", "status"),
}


def at_a_glance(rows: list[dict]) -> tuple[list[str], list[dict]]:
    """The rows of each benchmark in ``GLANCE`` as one table, a line per scenario or
    model (a second target of the same figure stays in the full list), and the rows
    those tables do not hold."""
    from pfaff.bench import meets_target

    cells: dict[str, dict[str, dict[str, str]]] = {}
    units: dict[tuple[str, str], str] = {}
    rest = []
    for r in rows:
        quantities = GLANCE.get(r["benchmark"], ())
        q = next((q for q in quantities if r["figure"].endswith(" " + q)), None)
        if q is None:
            rest.append(r)
            continue
        cell = cells.setdefault(r["benchmark"], {}).setdefault(r["figure"][: -len(q) - 1], {})
        if q in cell:
            continue  # the same figure against another target
        ok = meets_target(r["value"], str(r.get("target", "")))
        cell[q] = _fmt(r["value"]) + (" (target missed)" if ok == "no" else "")
        units[(r["benchmark"], q)] = r.get("unit", "")
    tables = []
    for bench, by_name in cells.items():
        cols = [q for q in GLANCE[bench] if any(q in c for c in by_name.values())]
        head = [bench] + [
            q + (f" [{units[(bench, q)]}]" if units.get((bench, q)) else "") for q in cols
        ]
        tables.append(
            _table(head, [[n, *(c.get(q, "") for q in cols)] for n, c in by_name.items()])
        )
    return tables, rest


def results_page(folder: Path = RESULTS) -> str:
    """The recorded benchmark runs, newest first (by their recorded date): the newest
    run's figures that have a target, then each run's host, versions and every figure."""
    from pfaff.bench import meets_target

    runs = [(f, _load_run(f)) for f in folder.glob("*.json")]
    if not runs:
        raise FileNotFoundError(f"no benchmark results in {folder}")
    runs.sort(key=lambda fr: fr[1]["date"], reverse=True)
    newest, data = runs[0]
    glance, rest = at_a_glance(data["rows"])
    targets = [r for r in rest if r.get("target")]
    lines = [
        "# Benchmark results",
        "",
        "Generated from the `pfaff bench --json FILE` files in `benchmarks/results/`, "
        "newest first: each records its host, date and versions beside its figures. "
        "Compare ratios measured in one run rather than absolute times across hosts. "
        "What each benchmark measures: [Benchmarks](benchmarks.md).",
        "",
        f"## The newest run against its targets: `{newest.name}`",
        "",
        f"{data['date']}, {data['host'].get('cpu')}, {data['host'].get('cores')} cores; "
        "every figure of the run, with its note, is further down.",
        "",
        *(line for t in glance for line in (t, "")),
        _table(
            ["benchmark", "figure", "value", "unit", "target", "ok"],
            [
                [
                    r["benchmark"],
                    r["figure"],
                    _fmt(r["value"]),
                    r.get("unit", ""),
                    r["target"],
                    meets_target(r["value"], str(r["target"])),
                ]
                for r in targets
            ],
        ),
        "",
        "## Every recorded run",
        "",
    ]
    for f, data in runs:
        host, ver = data["host"], data["versions"]
        ver = {k: (f"`{str(v)[:12]}`" if k == "pfaff_git" else v) for k, v in ver.items()}
        lines += [
            f"### `{f.name}`",
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
            _table(list(ver), [list(ver.values())]),
            "",
        ]
        groups: dict[str, list[dict]] = {}
        for r in data["rows"]:
            groups.setdefault(r["benchmark"], []).append(r)
        for bench, rows in groups.items():
            table = _table(
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
            )
            lines += [f'??? note "{bench}: {len(rows)} figures"', "", _indent(table), ""]
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
    """Add the generated pages to the site's files, in place of the stubs that stand for
    them in the repository (so that a link to one works in both)."""
    from mkdocs.structure.files import File

    for uri, make in PAGES.items():
        stub = files.get_file_from_path(uri)
        if stub is not None:
            files.remove(stub)
        files.append(File.generated(config, uri, content=make()))
    return files
