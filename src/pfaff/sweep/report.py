"""The sweep's ``report.html``: metrics against the swept parameters, and the failed points.

One swept parameter: each metric against it as a line plot. Two: each metric
as a heat map over the grid (a coloured scatter for random samples). More: each
metric against every swept parameter as scatter plots. Axes and table columns
carry their units (parameters: from their descriptions; metrics: from
:mod:`pfaff.report.units`); the tables scroll sideways inside the page. The
page is self-contained (images embedded) and is written atomically.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from pfaff import __version__
from pfaff.report.html import REPORT_CSS, format_value
from pfaff.report.io import atomic_write_text
from pfaff.report.units import parameter_units, unit_of, with_unit
from pfaff.sweep.table import metric_columns

__all__ = ["render_sweep_report", "sweep_plots", "write_sweep_report"]

#: at most this many metric plots in a report
MAX_PLOTS = 40
#: at most this many rows in the table of all points
MAX_ROWS = 500


def _label(name: str, units: Mapping[str, str]) -> str:
    """``name [unit]``: a parameter's unit from ``units``, else a metric's from the table."""
    return with_unit(name, units.get(name) or unit_of(name))


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return buf.getvalue()


def _log_scale(y: np.ndarray) -> bool:
    """A positive series spanning more than three decades is drawn on a log axis."""
    y = y[np.isfinite(y)]
    return y.size > 1 and bool(np.all(y > 0)) and float(y.max() / y.min()) > 1e3


def _axis(values: pd.Series) -> tuple[np.ndarray, list[str] | None]:
    """Numeric positions of a parameter's values, and tick labels for non-numbers."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=float), None
    labels = sorted({str(v) for v in values})
    return np.array([labels.index(str(v)) for v in values], dtype=float), labels


def _line(ok: pd.DataFrame, key: str, metric: str, units: Mapping[str, str]) -> bytes:
    fig = Figure(figsize=(6.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    x, labels = _axis(ok[key])
    y = ok[metric].to_numpy(dtype=float)
    order = np.argsort(x, kind="stable")
    ax.plot(x[order], y[order], "o-", lw=1.2, ms=4)
    if labels is not None:
        ax.set_xticks(range(len(labels)), labels)
    if _log_scale(y):
        ax.set_yscale("log")
    ax.set_xlabel(_label(key, units))
    ax.set_ylabel(_label(metric, units))
    ax.grid(True, alpha=0.3)
    return _png(fig)


def _heat(
    table: pd.DataFrame,
    keys: Sequence[str],
    metric: str,
    is_grid: bool,
    units: Mapping[str, str],
) -> bytes:
    """A heat map over a grid (the points not ok are blank and marked), else a scatter."""
    fig = Figure(figsize=(6.0, 4.4), layout="constrained")
    ax = fig.add_subplot()
    ok = table[table["status"] == "ok"]
    y = ok[metric].to_numpy(dtype=float)
    norm = LogNorm() if _log_scale(y) else None
    kx, ky = keys
    if is_grid:
        values = table[metric].where(table["status"] == "ok").astype(float)
        frame = table[[kx, ky]].assign(value=values, bad=(table["status"] != "ok").astype(float))
        grid = frame.pivot_table(
            index=ky, columns=kx, values="value", aggfunc="mean", dropna=False
        )
        bad = frame.pivot_table(index=ky, columns=kx, values="bad", aggfunc="max", dropna=False)
        img = ax.imshow(grid.to_numpy(dtype=float), origin="lower", aspect="auto", norm=norm)
        for (i, j), b in np.ndenumerate(bad.to_numpy(dtype=float)):
            if b > 0.5:
                ax.text(j, i, "not ok", ha="center", va="center", color="#b00020")
        ax.set_xticks(range(grid.shape[1]), [format_value(v) for v in grid.columns])
        ax.set_yticks(range(grid.shape[0]), [format_value(v) for v in grid.index])
    else:
        (x, xl), (yy, yl) = _axis(ok[kx]), _axis(ok[ky])
        img = ax.scatter(x, yy, c=y, norm=norm, s=30)
        if xl is not None:
            ax.set_xticks(range(len(xl)), xl)
        if yl is not None:
            ax.set_yticks(range(len(yl)), yl)
    fig.colorbar(img, ax=ax, label=_label(metric, units))
    ax.set_xlabel(_label(kx, units))
    ax.set_ylabel(_label(ky, units))
    ax.set_title(metric)
    return _png(fig)


def _scatter(
    ok: pd.DataFrame, keys: Sequence[str], metric: str, units: Mapping[str, str]
) -> bytes:
    fig = Figure(figsize=(3.0 * len(keys), 3.2), layout="constrained")
    y = ok[metric].to_numpy(dtype=float)
    for i, key in enumerate(keys):
        ax = fig.add_subplot(1, len(keys), i + 1)
        x, labels = _axis(ok[key])
        ax.plot(x, y, "o", ms=3)
        if labels is not None:
            ax.set_xticks(range(len(labels)), labels)
        if _log_scale(y):
            ax.set_yscale("log")
        ax.set_xlabel(_label(key, units))
        if i == 0:
            ax.set_ylabel(_label(metric, units))
    return _png(fig)


def sweep_plots(
    table: pd.DataFrame,
    varied: Sequence[str],
    grid_keys: Sequence[str] = (),
    units: Mapping[str, str] | None = None,
) -> dict[str, bytes]:
    """PNG plots ``{caption: bytes}`` of every numeric metric of the ``ok`` points
    that varies over them.

    ``varied`` are the swept parameters; ``grid_keys`` those of them given as
    a grid (two grid parameters make a heat map, otherwise a scatter);
    ``units`` the parameters' units (name -> unit) for the axis labels
    (the metrics' come from :func:`pfaff.report.units.unit_of`).
    """
    units = dict(units or {})
    ok = table[table["status"] == "ok"]
    if ok.empty or not varied:
        return {}
    params = [k for k in varied if k in table.columns]
    plots = {}
    for metric in metric_columns(table, list(table.columns[: table.columns.get_loc("status")])):
        if len(plots) >= MAX_PLOTS:
            break
        y = ok[metric].to_numpy(dtype=float)
        y = y[np.isfinite(y)]
        if y.size == 0 or np.all(y == y[0]):  # nothing to see: the table has it
            continue
        if len(params) == 1:
            plots[f"{metric} against {params[0]}"] = _line(ok, params[0], metric, units)
        elif len(params) == 2:
            is_grid = set(params) <= set(grid_keys)
            plots[f"{metric} over {params[0]} and {params[1]}"] = _heat(
                table, params, metric, is_grid, units
            )
        else:
            plots[f"{metric} against {', '.join(params)}"] = _scatter(ok, params, metric, units)
    return plots


def _html_table(frame: pd.DataFrame, units: Mapping[str, str]) -> str:
    """The rows as an HTML table with each column's unit under its name, inside a
    container that scrolls sideways (a wide table never widens the page)."""
    if frame.empty:
        return '<p class="meta">(none)</p>'
    head = []
    for c in frame.columns:
        unit = units.get(str(c)) or unit_of(str(c))
        shown = f'<br><span class="meta">[{escape(unit)}]</span>' if unit else ""
        head.append(f"<th>{escape(str(c))}{shown}</th>")
    body = []
    for row in frame.itertuples(index=False):
        cells = (f"<td{_NUM if _is_number(v) else ''}>{escape(format_value(v))}</td>" for v in row)
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="wide"><table><tr>{"".join(head)}</tr>\n' + "\n".join(body) + "</table></div>"
    )


_NUM = ' class="num"'


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def render_sweep_report(
    scenario: str, table: pd.DataFrame, varied: Sequence[str], grid_keys: Sequence[str] = ()
) -> str:
    """The self-contained HTML page of a sweep."""
    counts = table["status"].value_counts().to_dict()
    units = parameter_units(scenario, [str(c) for c in table.columns])
    shown = ["point", *[c for c in table.columns if c in varied], "status", "message"]
    failed = table[table["status"] != "ok"][shown]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(scenario)} sweep - pfaff report</title>",
        f"<style>{REPORT_CSS}</style></head><body>",
        f"<h1>{escape(scenario)}: sweep of {len(table)} points</h1>",
        f'<p class="meta">pfaff {escape(__version__)}; swept: '
        f"{escape(', '.join(varied) or '(nothing)')}</p>",
        "<p>" + ", ".join(f"{escape(str(k))}: {v}" for k, v in sorted(counts.items())) + "</p>",
        "<h2>Points that did not finish ok</h2>",
        _html_table(failed, units),
    ]
    plots = sweep_plots(table, varied, grid_keys, units)
    if plots:
        parts.append("<h2>Metrics</h2>")
    for caption, png in plots.items():
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        cap = escape(caption)
        parts.append(
            f'<figure><img src="{uri}" alt="{cap}"><figcaption>{cap}</figcaption></figure>'
        )
    parts.append(f"<h2>All points (first {MAX_ROWS})</h2>" if len(table) > MAX_ROWS else "")
    parts.append("" if len(table) > MAX_ROWS else "<h2>All points</h2>")
    parts.append(_html_table(table.head(MAX_ROWS), units))
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def write_sweep_report(
    out: str | Path,
    scenario: str,
    table: pd.DataFrame,
    varied: Sequence[str],
    grid_keys: Sequence[str] = (),
) -> Path:
    """Write ``out/report.html`` atomically; returns its path."""
    html = render_sweep_report(scenario, table, varied, grid_keys)
    return atomic_write_text(Path(out) / "report.html", html)
