"""The reference pages of the documentation site, from the code's own tables.

- ``reference/system-file.md`` from :mod:`pfaff.files.system` (``TOP_KEYS``,
  ``SIM_KEYS``, ``MODEL_KEYS``, ``START_KEYS``, ``CONSTRAINT_TYPES``, ``FORCE_TYPES``,
  ``LIMIT_TYPES``: the keys of each type derived from its class, ``pfaff.files.schema``)
  and :mod:`pfaff.files.controller` (``CONTROLLER_KEYS``, ``CONTROLLER_TYPES``), each
  parameter's default read from the class's signature and its meaning from the
  class's docstring;
- ``reference/cli.md`` from the argparse parser of :mod:`pfaff.cli`;
- ``reference/scenarios.md`` from the scenario registry (``pfaff list``, ``--params``).

A key of a code table without a description (here, or in its class's docstring) is an
error: the build fails instead of publishing a page that lost track of the code.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
from typing import Any

#: what each top-level key of a system file holds (every key of TOP_KEYS needs one)
TOP_KEY_DOCS = {
    "title": "string; the report's title (default: the file's name)",
    "gravity": "`[gx, gy, gz]` in m/s^2, overrides the model's",
    "plots": "extra plots: `lambda`, `phi_rows`, `joint:NAME`, `frame:NAME`",
    "model": "table: the model, exactly one of its keys (below)",
    "start": "table: the start (default: the model's first keyframe, else neutral)",
    "simulation": "table: run defaults, overridden by `--set KEY=VALUE`",
    "constraints": "array of tables `[[constraints]]`, added to the model's own",
    "forces": "array of tables `[[forces]]`: force elements",
    "limits": "array of tables `[[limits]]`: joint, tendon and ball limits, added to the "
    "model file's own",
    "controller": "table: a built-in controller (below)",
}
MODEL_KEY_DOCS = {
    "file": "a URDF or MJCF file, relative to the system file",
    "robot": "an example-robot-data robot by name",
}
START_KEY_DOCS = {
    "keyframe": "an MJCF keyframe's name",
    "q": "all `nq` configuration values (pfaff's coordinates)",
    "joints": "a table `joint = value` for one-dof joints, on the default posture",
    "v": "the start velocity (`nv` values)",
}
SIM_KEY_DOCS = {
    "t_end": "final time [s]",
    "dt": "step [s]",
    "integrator": "one of the integrators (below)",
}
CONTROLLER_KEY_DOCS = {
    "type": "the controller",
    "joints": "the task: these joints' coordinates (at most the system's dof)",
    "target": "constant set-point of the task (rad or m), one per joint",
    "kp": "proportional gain (a number, or one per task coordinate)",
    "kd": "derivative gain (a number, or one per task coordinate)",
    "actuated": "`pidc` only: the actuated joints; the others are passive",
    "control_dt": "controller period [s], a multiple of `dt` (default: `dt`)",
}
#: how a value kind of the constraint and force tables is written in TOML
KIND_DOCS = {
    "str": "string",
    "float": "number",
    "vec3": "`[x, y, z]`",
    "dirs": "`[[x, y, z], ...]`",
    "rot": "3 x 3 matrix (three rows)",
    "bound": "number, or `inf` / `-inf`",
    "strs": '`["name", ...]`',
    "floats": "`[c1, c2, ...]`",
    "band": "number, or `[lo, hi]`",
}


def _described(keys, docs: dict[str, str], table: str) -> list[tuple[str, str]]:
    missing = [k for k in keys if k not in docs]
    if missing:
        raise KeyError(f"{table}: keys without a description in tools/docs_pages.py: {missing}")
    return [(k, docs[k]) for k in keys]


def _md(text: str) -> str:
    """A docstring's reStructuredText literals and roles as Markdown code."""
    text = re.sub(
        r":(?:py:)?\w+:`~?([^`]+)`", lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text
    )
    return text.replace("``", "`")


def _cell(text: Any) -> str:
    return _md(str(text)).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def param_docs(cls: type) -> dict[str, str]:
    """The entries of the NumPy-style ``Parameters`` sections of ``cls``'s docstring and
    its bases' (the class's own first), one per name (``a, b : text`` gives both)."""
    out: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        out.update(_own_param_docs(base.__doc__ or ""))
    return out


def _own_param_docs(doc: str) -> dict[str, str]:
    doc = inspect.cleandoc(doc)
    m = re.search(r"^Parameters\n-+\n(.*?)(?:\n\n[A-Z][a-z]+\n-+\n|\Z)", doc, re.S | re.M)
    out: dict[str, str] = {}
    if m is None:
        return out
    names: list[str] = []
    for line in m.group(1).splitlines():
        head = re.match(r"^([A-Za-z_][\w, ]*?)\s*:\s*(.*)$", line)
        if head and not line.startswith(" "):
            names = [n.strip() for n in head.group(1).split(",")]
            for n in names:
                out[n] = head.group(2).strip()
        elif line.strip() and names:
            for n in names:
                out[n] += " " + line.strip()
    return out


def _summary(cls: type) -> str:
    return (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")


def _types_section(title: str, types: dict, anchor_prefix: str) -> list[str]:
    from pfaff.files.schema import takes_name

    lines = []
    for name, (cls, keys) in types.items():
        sig = inspect.signature(cls.__init__).parameters
        docs = param_docs(cls)
        rows = []
        for key, (kind, required) in keys.items():
            if key not in docs:
                raise KeyError(f"{cls.__name__}: no Parameters entry for {key!r} in its docstring")
            if required:
                default = "required"
            elif key in sig and sig[key].default is not inspect.Parameter.empty:
                default = f"`{sig[key].default!r}`"
            else:
                default = "optional"
            rows.append([f"`{key}`", KIND_DOCS[kind], default, docs[key]])
        if takes_name(cls):
            rows.append(["`name`", "string", "optional", "a name for reports and messages"])
        lines += [
            f"### `{name}` {{#{anchor_prefix}-{name.replace('_', '-')}}}",
            "",
            f"[`{cls.__name__}`][{cls.__module__}.{cls.__name__}]: {_md(_summary(cls))}",
            "",
            _table(["key", "value", "default", "meaning"], rows),
            "",
        ]
    return [f"## {title}", "", *lines]


def system_file_page() -> str:
    """Every key of a system file, from the parser's own tables."""
    from pfaff.files import controller as ctl
    from pfaff.files import system as sf
    from pfaff.simulate import INTEGRATORS

    top = _described(sf.TOP_KEYS, TOP_KEY_DOCS, "TOP_KEYS")
    lines = [
        "# System-file reference",
        "",
        "A system file is TOML: a model file (URDF or MJCF) or a robot, its start, "
        "constraints, force elements, limits and a controller, as data. This page is generated "
        "from the tables the parser checks every key against "
        "(`pfaff.files.system`, `pfaff.files.controller`), so it lists exactly what "
        "`pfaff run FILE.toml` accepts; a key not listed here is refused, naming the key "
        "and the valid ones. How to write one: [Your own robot](../your-robot.md).",
        "",
        "## Top-level keys",
        "",
        _table(["key", "what it holds"], [[f"`{k}`", d] for k, d in top]),
        "",
        "## `[model]`",
        "",
        _table(
            ["key", "value"],
            [[f"`{k}`", d] for k, d in _described(sf.MODEL_KEYS, MODEL_KEY_DOCS, "MODEL_KEYS")],
        ),
        "",
        "## `[start]`",
        "",
        "At most one of `keyframe`, `q`, `joints`; `v` with any of them.",
        "",
        _table(
            ["key", "value"],
            [[f"`{k}`", d] for k, d in _described(sf.START_KEYS, START_KEY_DOCS, "START_KEYS")],
        ),
        "",
        "## `[simulation]`",
        "",
        _table(
            ["key", "default", "meaning"],
            [
                [f"`{k}`", f"`{sf.SIM_KEYS[k]!r}`", d]
                for k, d in _described(sf.SIM_KEYS, SIM_KEY_DOCS, "SIM_KEYS")
            ],
        ),
        "",
        "Integrators: " + ", ".join(f"`{n}`" for n in INTEGRATORS) + ".",
        "",
        *_types_section("`[[constraints]]` types", sf.CONSTRAINT_TYPES, "constraint"),
        *_types_section("`[[forces]]` types", sf.FORCE_TYPES, "force"),
        *_types_section("`[[limits]]` types", sf.LIMIT_TYPES, "limit"),
        "## `[controller]`",
        "",
        "Types: " + ", ".join(f"`{t}`" for t in ctl.CONTROLLER_TYPES) + ".",
        "",
        _table(
            ["key", "meaning"],
            [
                [f"`{k}`", d]
                for k, d in _described(ctl.CONTROLLER_KEYS, CONTROLLER_KEY_DOCS, "CONTROLLER_KEYS")
            ],
        ),
        "",
    ]
    return "\n".join(lines)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help(parser: argparse.ArgumentParser, name: str) -> str:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.dest == name:
                    return choice.help or ""
    return ""


def cli_page() -> str:
    """Every command and option of ``pfaff``, from its argparse parser."""
    from pfaff.cli import _parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        root = _parser()
        lines = [
            "# Command-line reference",
            "",
            "Generated from the argparse parser of `pfaff.cli`; `pfaff COMMAND --help` "
            "prints the same. Exit statuses and output files: "
            "[Command line](../command-line.md).",
            "",
        ]
        for name, sub in _subcommands(root).items():
            rows = []
            for a in sub._actions:
                if isinstance(a, argparse._HelpAction):
                    continue
                flag = ", ".join(a.option_strings) or a.dest
                meta = a.metavar or (a.dest.upper() if a.option_strings and a.nargs != 0 else "")
                default = (
                    "" if a.default is None or a.default is False or a.default == [] else a.default
                )
                rows.append(
                    [
                        f"`{flag}{' ' + meta if meta and a.option_strings else ''}`",
                        "yes" if (a.required or not a.option_strings) and a.nargs != "*" else "",
                        f"`{default}`" if default != "" else "",
                        a.help or "",
                    ]
                )
            summary = _help(root, name)
            lines += [
                f"## `pfaff {name}`",
                "",
                summary[:1].upper() + summary[1:] + ".",
                "",
                "```text",
                sub.format_usage().strip(),
                "```",
                "",
            ]
            if rows:
                lines += [_table(["argument", "required", "default", "meaning"], rows), ""]
        return "\n".join(lines)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _range(p) -> str:
    if p.choices:
        return ", ".join(f"`{c}`" for c in p.choices)
    lo, hi = p.low, p.high
    if p.positive and lo is None:
        return "> 0" + (f", <= {hi:g}" if hi is not None else "")
    if lo is not None and hi is not None:
        return f"{lo:g} .. {hi:g}"
    if lo is not None:
        return f">= {lo:g}"
    if hi is not None:
        return f"<= {hi:g}"
    return ""


def scenarios_page() -> str:
    """Every registered scenario and its parameters (``pfaff list``, ``--params``)."""
    from pfaff.scenarios import SCENARIOS

    names = sorted(SCENARIOS)
    lines = [
        "# Scenario list",
        "",
        "Generated from the scenario registry: what `pfaff list` and "
        "`pfaff run NAME --params` print. Every parameter is set with "
        "`--set KEY=VALUE`. What each study shows: [Scenarios](../scenarios.md) and "
        "[Paper case studies](../papers.md).",
        "",
        _table(
            ["scenario", "what it runs"],
            [[f"[`{n}`](#{n})", SCENARIOS[n].description] for n in names],
        ),
        "",
    ]
    for n in names:
        sc = SCENARIOS[n]
        rows = [
            [f"`{k}`", p.type.__name__, f"`{p.default!r}`", _range(p), p.doc]
            for k, p in sc.params.items()
        ]
        lines += [
            f"## `{n}` {{#{n}}}",
            "",
            sc.description,
            "",
            _table(["parameter", "type", "default", "valid", "meaning"], rows),
            "",
        ]
    return "\n".join(lines)
