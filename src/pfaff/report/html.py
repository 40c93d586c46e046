"""Self-contained HTML report of a run: no external CSS, JS or image files."""

from __future__ import annotations

import base64
import json
import math
import re
import textwrap
from collections.abc import Mapping
from html import escape
from typing import Any

import numpy as np

from .io import to_jsonable
from .units import parameter_units, unit_of

__all__ = ["render_report", "format_value", "rst_to_html", "HEADLINE_KEYS"]

HEADLINE_KEYS = (
    "sim_time_s",
    "steps",
    "wall_time_s",
    "realtime_factor",
    "max_constraint_violation",
    "max_velocity_constraint_violation",
)
"""Keys of ``summary.json`` shown in the headline table, in this order."""

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
th { background: #f2f2f2; }
td.num { font-family: monospace; text-align: right; }
.status-ok { color: #176b2c; font-weight: bold; }
.status-failed { color: #b00020; font-weight: bold; }
.message { color: #b00020; background: #fdecee; padding: 0.5em; white-space: pre-wrap; }
.note { color: #b00020; }
figure { margin: 1em 0; }
figcaption { font-style: italic; color: #555; }
img { max-width: 100%; }
.meta { color: #666; }
td.unit { color: #555; white-space: nowrap; }
.wide { overflow-x: auto; max-width: 100%; }
.doc code, .doc .literal { font-family: monospace; background: #f4f4f4; padding: 0 0.2em; }
.doc pre { background: #f4f4f4; padding: 0.5em; overflow-x: auto; }
"""
REPORT_CSS = _CSS
"""The style sheet of pfaff's HTML pages (run and sweep reports)."""


def format_value(x: Any) -> str:
    """Human-readable text for a summary value.

    Floats get 4 significant digits, in scientific notation when
    ``|x| < 1e-3`` or ``|x| >= 1e4``; booleans are ``true``/``false``;
    ``None`` is ``null``; containers are shown as compact JSON.
    """
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if x is None:
        return "null"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if not math.isfinite(x):
            return str(x)
        if x != 0.0 and (abs(x) < 1e-3 or abs(x) >= 1e4):
            return f"{x:.3e}"
        return f"{x:.4g}"
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in x) + "]"
    if isinstance(x, Mapping):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in x.items()) + "}"
    return str(x)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _table(
    rows: Mapping[str, Any],
    head: tuple[str, str] = ("name", "value"),
    units: bool | Mapping[str, str] = False,
    scenario: str | None = None,
) -> str:
    """A two-column table; with ``units`` a third column gives each row's unit: from
    the mapping, or with ``True`` from :func:`pfaff.report.units.unit_of` ("-"
    dimensionless, blank unknown)."""
    if not rows:
        return '<p class="meta">(none)</p>'
    unit_head = "<th>unit</th>" if units else ""
    out = [f"<table><tr><th>{escape(head[0])}</th><th>{escape(head[1])}</th>{unit_head}</tr>"]
    for key, value in rows.items():
        cls = ' class="num"' if _is_num(value) else ""
        unit = ""
        if units:
            u = units.get(key) if isinstance(units, Mapping) else unit_of(str(key), scenario)
            unit = f'<td class="unit">{escape(u or "")}</td>'
        out.append(
            f"<tr><td>{escape(str(key))}</td><td{cls}>{escape(format_value(value))}</td>"
            f"{unit}</tr>"
        )
    out.append("</table>")
    return '<div class="wide">' + "\n".join(out) + "</div>"


_SPHINX_ROLES = ("func", "meth", "class", "mod", "data", "attr", "obj", "exc", "ref", "doc")
_SAFE_HREF = re.compile(r'href="(?!https?://|#|mailto:)[^"]*"')


def _register_roles() -> bool:
    """Sphinx's cross-reference roles (``:func:`x```) as inline code; False without docutils."""
    try:
        from docutils import nodes
        from docutils.parsers.rst import roles
    except ImportError:
        return False

    def code_role(name, rawtext, text, lineno, inliner, options=None, content=None):
        target = text.split("<")[-1].rstrip(">").strip() if "<" in text else text
        shown = target.lstrip("~").rsplit(".", 1)[-1] if target.startswith("~") else target
        return [nodes.literal(rawtext, shown)], []

    for role in _SPHINX_ROLES:
        roles.register_local_role(role, code_role)
    return True


_HAVE_DOCUTILS = _register_roles()


def _dedent_doc(text: str) -> str:
    """A docstring (maybe with notes appended) as reStructuredText at column 0.

    Each paragraph is dedented on its own, and a docstring paragraph's first line
    (which ``strip`` left at column 0) is not counted; a literal block after
    ``::`` keeps its indentation relative to the paragraph that introduces it.
    """
    out: list[str] = []
    base = 0
    literal = False
    for para in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = para.split("\n")
        indents = [len(x) - len(x.lstrip()) for x in lines if x.strip()]
        if not indents:
            continue
        if literal:
            shift = min(base, min(indents))
            lines = [x[shift:] for x in lines]
            if min(indents) <= base:  # not indented below the "::": not a literal block
                lines = [x.lstrip() for x in lines]
        elif len(lines) > 1 and indents[0] == 0 and min(indents[1:], default=0) > 0:
            base = min(indents[1:])
            lines = [lines[0]] + textwrap.dedent("\n".join(lines[1:])).split("\n")
        else:
            base = min(indents)
            lines = textwrap.dedent(para).split("\n")
        out.append("\n".join(lines))
        literal = para.rstrip().endswith("::")
    return "\n\n".join(out)


def _plain_paragraphs(text: str) -> str:
    return "\n".join(
        f"<p>{escape(' '.join(p.split()))}</p>" for p in text.strip().split("\n\n") if p.strip()
    )


def rst_to_html(text: str) -> str:
    """A docstring rendered from reStructuredText to an HTML fragment.

    Rendered with docutils (``raw`` and ``include`` disabled, parse problems not
    reported into the page, links only to http(s), mailto or the page itself);
    Sphinx roles such as ``:func:`x``` show as code. Without docutils, or when it
    fails, the text is shown as escaped paragraphs.

    Parameters
    ----------
    text : the docstring (its body may be indented, as Python docstrings are).

    Returns
    -------
    str
        HTML (no document head), safe to embed in a page.
    """
    if not text.strip():
        return ""
    source = _dedent_doc(text)
    if not _HAVE_DOCUTILS:
        return _plain_paragraphs(source)
    try:
        from docutils.core import publish_parts
        from docutils.writers.html5_polyglot import Writer

        parts = publish_parts(
            source,
            writer=Writer(),
            settings_overrides={
                "report_level": 5,
                "halt_level": 5,
                "raw_enabled": False,
                "file_insertion_enabled": False,
                "doctitle_xform": False,
                "sectsubtitle_xform": False,
                "input_encoding": "unicode",
                "output_encoding": "unicode",
                "syntax_highlight": "none",
                "math_output": "HTML",
                "warning_stream": False,
            },
        )
    except Exception:  # a docstring docutils cannot take still shows as text
        return _plain_paragraphs(source)
    return _SAFE_HREF.sub('href="#"', parts["body"])


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def render_report(
    summary: Mapping[str, Any],
    images: Mapping[str, bytes],
    gif: bytes | None,
    series_doc: Mapping[str, str],
    description: str = "",
    plot_errors: Mapping[str, str] | None = None,
) -> str:
    """Build the self-contained HTML page of a run.

    Parameters
    ----------
    summary : mapping
        The content of ``summary.json`` (``scenario``, ``status``, ``message``,
        ``parameters``, headline numbers, ``metrics``); missing keys show as "-".
    images : mapping of str to bytes
        PNG images, embedded as base64 data URIs; the key is the caption.
    gif : bytes or None
        Animation (GIF), embedded if given.
    series_doc : mapping of str to str
        Array name in ``trajectory.npz`` -> description.
    description : str
        Scenario description (its docstring, reStructuredText), rendered by
        :func:`rst_to_html`.
    plot_errors : mapping of str to str, optional
        Plot name -> error text, shown as "plot failed: ..." notes.

    Returns
    -------
    str
        The HTML document.
    """
    name = str(summary.get("scenario", "pfaff run"))
    status = str(summary.get("status", "unknown"))
    message = summary.get("message") or ""
    ok = status == "ok"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(name)} - pfaff report</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{escape(name)}</h1>",
        f'<p class="meta">pfaff {escape(str(summary.get("pfaff_version", "?")))}</p>',
        f'<p>status: <span class="status-{"ok" if ok else "failed"}">{escape(status)}</span></p>',
    ]
    if message:
        cls = "meta" if ok else "message"
        parts.append(f'<p class="{cls}">{escape(str(message))}</p>')
    if description.strip():
        parts.append(f'<div class="doc">{rst_to_html(description)}</div>')

    parts.append("<h2>Parameters</h2>")
    params = summary.get("parameters") or {}
    parts.append(_table(params, ("parameter", "value"), parameter_units(name, params)))
    parts.append("<h2>Headline</h2>")
    headline = {k: summary.get(k, "-") for k in HEADLINE_KEYS}
    parts.append(_table(headline, ("quantity", "value"), units=True))
    parts.append("<h2>Metrics</h2>")
    parts.append(_table(summary.get("metrics") or {}, ("metric", "value"), True, name))
    if summary.get("warnings"):
        parts.append("<h2>Warnings</h2><ul>")
        parts += [f'<li class="note">{escape(str(w))}</li>' for w in summary["warnings"]]
        parts.append("</ul>")

    if gif:
        parts.append("<h2>Animation</h2>")
        parts.append(
            f'<figure><img src="{_data_uri(gif, "image/gif")}" alt="animation">'
            "<figcaption>animation</figcaption></figure>"
        )
    if images or plot_errors:
        parts.append("<h2>Plots</h2>")
    for caption, png in images.items():
        cap = escape(str(caption))
        parts.append(
            f'<figure><img src="{_data_uri(png, "image/png")}" alt="{cap}">'
            f"<figcaption>{cap}</figcaption></figure>"
        )
    for plot, err in (plot_errors or {}).items():
        parts.append(f'<p class="note">plot failed: {escape(str(plot))}: {escape(str(err))}</p>')

    parts.append("<h2>Arrays in trajectory.npz</h2>")
    parts.append(_table(dict(series_doc), ("array", "description")))
    try:
        raw = json.dumps(to_jsonable(summary), indent=2)
    except TypeError:
        raw = json.dumps(summary, indent=2, default=str)
    parts.append(f"<details><summary>summary.json</summary><pre>{escape(raw)}</pre></details>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
