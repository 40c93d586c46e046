"""Write the plots, the animation and ``report.html`` of a run into a folder.

``summary.json`` and ``trajectory.npz`` are written by the caller (with
:func:`pfaff.report.io.atomic_write_json` and :func:`~pfaff.report.io.atomic_savez`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .animation import animate_planar
from .html import render_report
from .io import atomic_write_bytes, atomic_write_text
from .plots import plot_constraint_forces, plot_constraint_violation, plot_energy, plot_states

__all__ = ["write_report", "energy_scale", "STANDARD_PLOTS"]

STANDARD_PLOTS = ("states", "constraint_violation", "energy", "constraint_forces")
"""Names (file stems) of the standard plots, in the order they are drawn."""

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _get(arrays: Mapping[str, Any], key: str) -> np.ndarray | None:
    """``arrays[key]`` as an array, or None when missing or empty."""
    value = arrays.get(key)
    if value is None:
        return None
    a = np.asarray(value)
    return a if a.size else None


def energy_scale(summary: Mapping[str, Any]) -> float | None:
    """The energy reference [J] the run's ``energy_drift_rel`` was divided by
    (``metrics["energy_reference"]``), or None: then the plot uses the largest
    kinetic energy, the default of :func:`pfaff.simulate.trajectory.energy_drift_rel`."""
    ref = (summary.get("metrics") or {}).get("energy_reference")
    if isinstance(ref, (int, float, np.floating)) and not isinstance(ref, bool):
        if np.isfinite(ref) and ref > 0:
            return float(ref)
    return None


def _standard_plots(
    arrays: Mapping[str, Any],
    names: Sequence[str] | None,
    energy_ref: float | None = None,
) -> dict[str, Callable[[], bytes]]:
    """The standard plots whose arrays are present, as deferred calls; ``energy_ref``
    is the scale of the energy drift (:func:`energy_scale`)."""
    t, q, v = _get(arrays, "t"), _get(arrays, "q"), _get(arrays, "v")
    if t is None:
        return {}
    jobs: dict[str, Callable[[], bytes]] = {}
    if q is not None and v is not None:
        jobs["states"] = lambda: plot_states(t, q, v, names)
    phi, av = _get(arrays, "phi"), _get(arrays, "av")
    if phi is not None or av is not None:
        jobs["constraint_violation"] = lambda: plot_constraint_violation(t, phi, av)
    energy, kin, pot = _get(arrays, "energy"), _get(arrays, "kinetic"), _get(arrays, "potential")
    if energy is None and kin is not None and pot is not None:
        energy = np.asarray(kin, dtype=float) + np.asarray(pot, dtype=float)
    if energy is not None:
        jobs["energy"] = lambda: plot_energy(t, energy, kin, pot, energy_ref)
    lam, F = _get(arrays, "lambda"), _get(arrays, "F")
    if lam is not None or F is not None:
        lam_ = lam if lam is not None else np.zeros((t.size, 0))
        jobs["constraint_forces"] = lambda: plot_constraint_forces(t, lam_, F)
    return jobs


def _file_stem(name: str) -> str:
    stem = name[:-4] if name.lower().endswith(".png") else name
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem).strip(".") or "plot"


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def write_report(
    out_dir: str | os.PathLike,
    summary: Mapping[str, Any],
    arrays: Mapping[str, Any],
    series_doc: Mapping[str, str],
    description: str = "",
    polylines_xy: Sequence[np.ndarray] | None = None,
    animation_t: np.ndarray | None = None,
    static_lines: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    extra_plots: Mapping[str, bytes | Callable[[], bytes]] | None = None,
    coordinate_names: Sequence[str] | None = None,
) -> list[Path]:
    """Write the standard plots, the scenario's plots, the animation and ``report.html``.

    A plot that fails is not fatal: its error is shown in the report as a
    "plot failed: ..." note and the other files are still written. Every file
    is written atomically. ``summary.json`` and ``trajectory.npz`` are *not*
    written here.

    Parameters
    ----------
    out_dir : str or PathLike
        Output folder (created if missing).
    summary : mapping
        The run summary (see design.md section 4); its ``metrics["energy_reference"]``
        is the scale of the energy drift plot.
    arrays : mapping of str to array
        Recorded series, samples along axis 0: ``t`` (T,), ``q`` (T, nq),
        ``v`` (T, nv), ``phi`` (T, m_holonomic; may have 0 columns), ``av``
        (T, m), ``energy``/``kinetic``/``potential`` (T,), ``lambda`` (T, m),
        ``F`` (T, nv). A plot whose arrays are missing or empty is skipped.
    series_doc : mapping of str to str
        Array name in ``trajectory.npz`` -> description, tabulated in the report.
    description : str
        Scenario description (docstring, reStructuredText), rendered as HTML
        (:func:`pfaff.report.html.rst_to_html`).
    animation_t : (T',) sample times of ``polylines_xy`` when they are a
        subsample of the run (default: ``arrays["t"]``).
    polylines_xy : sequence of (T, npts, 2) arrays, optional
        Planar polylines sampled at ``arrays["t"]``; if given, ``animation.gif``
        is written (see :func:`pfaff.report.animation.animate_planar`).
    static_lines : sequence of (xs, ys), optional
        Fixed grey curves drawn in the animation.
    extra_plots : mapping of str to bytes or callable, optional
        Scenario plots, name -> PNG bytes (or a no-argument callable returning
        them, so a failure is caught here); written as ``<name>.png``.
    coordinate_names : sequence of str, optional
        Legend names of the configuration coordinates in ``states.png``.

    Returns
    -------
    list of Path
        The written files: the PNGs, ``animation.gif`` if any, ``report.html`` last.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    images: dict[str, bytes] = {}
    errors: dict[str, str] = {}

    jobs: dict[str, bytes | Callable[[], bytes]] = dict(
        _standard_plots(arrays, coordinate_names, energy_scale(summary))
    )
    for name, plot in (extra_plots or {}).items():
        jobs[_file_stem(str(name))] = plot
    for name, plot in jobs.items():
        try:
            png = plot() if callable(plot) else plot
            if not isinstance(png, (bytes, bytearray)) or not png.startswith(_PNG_SIGNATURE):
                raise TypeError(f"expected PNG bytes, got {type(png).__name__}")
            written.append(atomic_write_bytes(out / f"{name}.png", png))
            images[name] = bytes(png)
        except Exception as exc:  # one broken plot must not lose the others
            errors[name] = _error_text(exc)

    gif = None
    if polylines_xy is not None:
        try:
            t = _get(arrays, "t") if animation_t is None else np.asarray(animation_t)
            if t is None:
                raise ValueError("arrays['t'] is missing or empty")
            title = str(summary.get("scenario", ""))
            gif = animate_planar(t, polylines_xy, title=title, static_lines=static_lines)
            written.append(atomic_write_bytes(out / "animation.gif", gif))
        except Exception as exc:
            gif = None
            errors["animation"] = _error_text(exc)

    html = render_report(summary, images, gif, series_doc, description, plot_errors=errors)
    written.append(atomic_write_text(out / "report.html", html))
    return written
