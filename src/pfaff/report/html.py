"""Self-contained HTML report of a run: no external CSS, JS or image files."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from html import escape
from typing import Any

import numpy as np

from .io import to_jsonable

__all__ = ["render_report", "format_value", "HEADLINE_KEYS"]

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
"""


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


def _table(rows: Mapping[str, Any], head: tuple[str, str] = ("name", "value")) -> str:
    if not rows:
        return '<p class="meta">(none)</p>'
    out = [f"<table><tr><th>{escape(head[0])}</th><th>{escape(head[1])}</th></tr>"]
    for key, value in rows.items():
        cls = ' class="num"' if _is_num(value) else ""
        out.append(
            f"<tr><td>{escape(str(key))}</td><td{cls}>{escape(format_value(value))}</td></tr>"
        )
    out.append("</table>")
    return "\n".join(out)


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
        Scenario description (its docstring); shown as plain, escaped text.
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
        for para in description.strip().split("\n\n"):
            parts.append(f"<p>{escape(para.strip())}</p>")

    parts.append("<h2>Parameters</h2>")
    parts.append(_table(summary.get("parameters") or {}, ("parameter", "value")))
    parts.append("<h2>Headline</h2>")
    headline = {k: summary.get(k, "-") for k in HEADLINE_KEYS}
    parts.append(_table(headline, ("quantity", "value")))
    parts.append("<h2>Metrics</h2>")
    parts.append(_table(summary.get("metrics") or {}, ("metric", "value")))
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
