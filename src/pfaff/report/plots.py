"""Standard plots of a run, each returned as PNG bytes.

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot,
no global state), so plotting is thread-safe and needs no GUI backend.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = [
    "plot_states",
    "plot_constraint_violation",
    "plot_energy",
    "energy_figure",
    "energy_reference",
    "plot_constraint_forces",
    "plot_series",
    "LOG_FLOOR",
]

LOG_FLOOR = 1e-18
"""Values below this are drawn at this height on logarithmic axes."""

_SIZE = (7.0, 4.0)
_DPI = 100
_TIME_LABEL = "t [s]"


def _as_2d(x: np.ndarray | Sequence, n_rows: int) -> np.ndarray:
    """Samples as rows: a 1-D series becomes one column; ``None`` becomes (T, 0)."""
    if x is None:
        return np.zeros((n_rows, 0))
    a = np.asarray(x, dtype=float)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != n_rows:
        raise ValueError(f"expected an array with {n_rows} rows (one per sample), got {a.shape}")
    return a


def _time(t: np.ndarray | Sequence) -> np.ndarray:
    t = np.asarray(t, dtype=float).ravel()
    if t.size == 0:
        raise ValueError("t is empty: nothing to plot")
    return t


def _to_png(fig: Figure) -> bytes:
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    return buf.getvalue()


def _legend(ax: Axes, n: int) -> None:
    if 0 < n <= 16:
        ax.legend(fontsize="small", ncol=min(4, (n + 3) // 4), loc="best")


def _lines(ax: Axes, t: np.ndarray, y: np.ndarray, labels: Sequence[str]) -> None:
    for i in range(y.shape[1]):
        ax.plot(t, y[:, i], lw=1.2, label=labels[i])
    _legend(ax, y.shape[1])


def _floor(y: np.ndarray) -> np.ndarray:
    y = np.abs(np.asarray(y, dtype=float))
    return np.where(y < LOG_FLOOR, LOG_FLOOR, y)  # NaN stays NaN (a gap)


def _row_max(y: np.ndarray) -> np.ndarray:
    """Largest |y_i| per sample, NaN where a sample has a NaN."""
    a = np.abs(y)
    out = np.max(np.where(np.isnan(a), -np.inf, a), axis=1)
    out[np.isnan(a).any(axis=1)] = np.nan
    return out


def plot_states(
    t: np.ndarray,
    q: np.ndarray,
    v: np.ndarray,
    names: Sequence[str] | None = None,
) -> bytes:
    """Configuration and velocity against time, in two stacked axes.

    Parameters
    ----------
    t : (T,) array
        Sample times [s].
    q : (T, nq) array
        Configurations.
    v : (T, nv) array
        Generalized velocities (nv may differ from nq).
    names : sequence of str, optional
        Coordinate names for the legend (length nq, and used for v when
        nv == nq); default ``q1..qn`` / ``v1..vn``.

    Returns
    -------
    bytes
        PNG image.
    """
    t = _time(t)
    q, v = _as_2d(q, t.size), _as_2d(v, t.size)
    qn = list(names) if names is not None and len(names) == q.shape[1] else None
    q_labels = qn or [f"q{i + 1}" for i in range(q.shape[1])]
    if qn is not None and v.shape[1] == q.shape[1]:
        v_labels = [f"d/dt {n}" for n in qn]
    else:
        v_labels = [f"v{i + 1}" for i in range(v.shape[1])]
    fig = Figure(figsize=(_SIZE[0], _SIZE[1] * 1.5))
    ax_q, ax_v = fig.subplots(2, 1, sharex=True)
    _lines(ax_q, t, q, q_labels)
    _lines(ax_v, t, v, v_labels)
    ax_q.set_ylabel("q [rad or m]")
    ax_v.set_ylabel("v [rad/s or m/s]")
    ax_v.set_xlabel(_TIME_LABEL)
    ax_q.set_title("configuration and velocity")
    for ax in (ax_q, ax_v):
        ax.grid(True, alpha=0.4)
    return _to_png(fig)


def plot_constraint_violation(
    t: np.ndarray, phi: np.ndarray | None, av: np.ndarray | None
) -> bytes:
    """Largest constraint residual per sample, on a logarithmic scale.

    Parameters
    ----------
    t : (T,) array
        Sample times [s].
    phi : (T, m_h) array or None
        Holonomic residuals Phi(q); may have zero columns.
    av : (T, m) array or None
        Velocity residuals A(q) v; may have zero columns.

    Returns
    -------
    bytes
        PNG image. Zeros are drawn at :data:`LOG_FLOOR`.
    """
    t = _time(t)
    phi, av = _as_2d(phi, t.size), _as_2d(av, t.size)
    fig = Figure(figsize=_SIZE)
    ax = fig.subplots()
    if phi.shape[1]:
        ax.plot(t, _floor(_row_max(phi)), lw=1.2, label="position |Phi|")
    if av.shape[1]:
        ax.plot(t, _floor(_row_max(av)), lw=1.2, label="velocity |A v|")
    if not (phi.shape[1] or av.shape[1]):
        ax.text(0.5, 0.5, "no constraint rows", ha="center", va="center", transform=ax.transAxes)
    else:
        ax.legend(fontsize="small", loc="best")
    ax.set_yscale("log")
    ax.set_xlabel(_TIME_LABEL)
    ax.set_ylabel("max |residual| (units of the constraint)")
    ax.set_title("constraint violation")
    ax.grid(True, which="both", alpha=0.4)
    return _to_png(fig)


def energy_reference(
    kinetic: np.ndarray | None, reference: float | None = None, name: str | None = None
) -> tuple[float, str]:
    """The energy scale of the drift plot and its name, as ``energy_drift_rel`` uses it.

    Parameters
    ----------
    kinetic : (T,) array or None
        Kinetic energy [J]; its largest value is the default reference (the one
        :meth:`pfaff.simulate.Trajectory.energy_reference` reports).
    reference : float, optional
        The reference [J] the run's metric used; default the largest kinetic energy.
    name : str, optional
        What ``reference`` is (shown in the axis label); default
        ``"largest kinetic energy"`` when it is that, else "the run's energy_reference".

    Returns
    -------
    (float, str)
        The reference [J] (NaN when there is none: no kinetic series, or a
        run that never moved) and its name.
    """
    k = np.asarray(kinetic if kinetic is not None else [], dtype=float).ravel()
    k = k[np.isfinite(k)]
    k_max = float(k.max()) if k.size else float("nan")
    if reference is None:
        return k_max, name or "largest kinetic energy"
    reference = float(reference)
    if name is None:
        same = np.isfinite(k_max) and abs(reference - k_max) <= 1e-9 * max(abs(k_max), 1e-300)
        name = "largest kinetic energy" if same else "the run's energy_reference"
    return reference, name


def energy_figure(
    t: np.ndarray,
    energy: np.ndarray,
    kinetic: np.ndarray | None = None,
    potential: np.ndarray | None = None,
    reference: float | None = None,
    reference_name: str | None = None,
) -> Figure:
    """The figure of :func:`plot_energy` (its second axes holds the drift curve)."""
    t = _time(t)
    e = _as_2d(energy, t.size)[:, 0]
    fig = Figure(figsize=(_SIZE[0], _SIZE[1] * 1.5))
    ax_e, ax_d = fig.subplots(2, 1, sharex=True)
    ax_e.plot(t, e, lw=1.5, label="total")
    for part, label in ((kinetic, "kinetic"), (potential, "potential")):
        if part is not None and np.size(part):
            ax_e.plot(t, _as_2d(part, t.size)[:, 0], lw=1.0, ls="--", label=label)
    ax_e.legend(fontsize="small", loc="best")
    ax_e.set_ylabel("energy [J]")
    ax_e.set_title("energy")
    kin = None if kinetic is None or not np.size(kinetic) else _as_2d(kinetic, t.size)[:, 0]
    ref, name = energy_reference(kin, reference, reference_name)
    if np.isfinite(ref) and ref > 0:
        ax_d.plot(t, (e - e[0]) / ref, lw=1.2, color="C3")
        ax_d.set_ylabel(f"(E - E0) / {ref:.3g} J\n({name}) [-]")
        ax_d.set_title("energy drift, as energy_drift_rel measures it", fontsize="medium")
    else:  # no scale to divide by: the drift itself
        ax_d.plot(t, e - e[0], lw=1.2, color="C3")
        ax_d.set_ylabel("E - E0 [J]")
        why = "no reference energy" if not np.isfinite(ref) else f"{name} is 0 J"
        ax_d.set_title(f"energy drift ({why})", fontsize="medium")
    ax_d.set_xlabel(_TIME_LABEL)
    for ax in (ax_e, ax_d):
        ax.grid(True, alpha=0.4)
    return fig


def plot_energy(
    t: np.ndarray,
    energy: np.ndarray,
    kinetic: np.ndarray | None = None,
    potential: np.ndarray | None = None,
    reference: float | None = None,
    reference_name: str | None = None,
) -> bytes:
    """Total energy (with its parts, if given) and its drift over a reference energy.

    The drift is ``(E - E0) / E_ref``, the curve whose largest absolute value is
    the run's ``energy_drift_rel`` (:func:`pfaff.simulate.trajectory.energy_drift_rel`):
    ``E_ref`` is ``reference`` when given, else the largest kinetic energy, and
    the axis label names it (``"(E - E0) / 0.53 J (largest kinetic energy)"``).
    ``|E0|`` is never the scale: it depends on where the potential's zero is
    (often at the start, so ``E0 ~ 0``). Without a positive reference the plot
    shows ``E - E0`` in joules.

    Parameters
    ----------
    t : (T,) array
        Sample times [s].
    energy : (T,) array
        Total mechanical energy [J].
    kinetic, potential : (T,) array, optional
        Its kinetic and potential parts [J].
    reference : float, optional
        The energy scale [J] of the run's ``energy_drift_rel``.
    reference_name : str, optional
        What ``reference`` is, for the label (default "largest kinetic energy").

    Returns
    -------
    bytes
        PNG image.
    """
    fig = energy_figure(t, energy, kinetic, potential, reference, reference_name)
    return _to_png(fig)


def plot_constraint_forces(t: np.ndarray, lam: np.ndarray, F: np.ndarray | None = None) -> bytes:
    """Multipliers per constraint row and, if given, the generalized constraint force.

    Parameters
    ----------
    t : (T,) array
        Sample times [s].
    lam : (T, m) array
        Multipliers lambda, one column per constraint row (may have zero columns).
    F : (T, nv) array, optional
        Generalized constraint force F = A^T lambda, one column per coordinate.

    Returns
    -------
    bytes
        PNG image.
    """
    t = _time(t)
    lam = _as_2d(lam, t.size)
    has_f = F is not None and np.size(F) > 0
    fig = Figure(figsize=(_SIZE[0], _SIZE[1] * (1.5 if has_f else 1.0)))
    axes = fig.subplots(2 if has_f else 1, 1, sharex=True, squeeze=False)[:, 0]
    ax_l = axes[0]
    if lam.shape[1]:
        _lines(ax_l, t, lam, [f"lambda{i + 1}" for i in range(lam.shape[1])])
    else:
        ax_l.text(
            0.5, 0.5, "no constraint rows", ha="center", va="center", transform=ax_l.transAxes
        )
    ax_l.set_ylabel("lambda [N or N m]")
    ax_l.set_title("constraint multipliers and forces")
    if has_f:
        F = _as_2d(F, t.size)
        _lines(axes[1], t, F, [f"F{i + 1}" for i in range(F.shape[1])])
        axes[1].set_ylabel("F [N or N m]")
    axes[-1].set_xlabel(_TIME_LABEL)
    for ax in axes:
        ax.grid(True, alpha=0.4)
    return _to_png(fig)


def plot_series(
    t: np.ndarray,
    series: Mapping[str, np.ndarray],
    title: str,
    ylabel: str,
    log: bool = False,
    xlabel: str | None = None,
) -> bytes:
    """Generic plot of named series against time (or another abscissa).

    Parameters
    ----------
    t : (T,) array
        Sample times [s] (or the abscissa ``xlabel`` names).
    series : mapping of str to (T,) or (T, k) array
        One line per column; a multi-column series gets ``name[i]`` labels.
    title, ylabel : str
        Axis title and y label (include the unit).
    log : bool
        Logarithmic y axis of the absolute values, floored at :data:`LOG_FLOOR`.
    xlabel : str, optional
        The abscissa's label when it is not time (e.g. ``"iteration"``).

    Returns
    -------
    bytes
        PNG image.
    """
    t = _time(t)
    fig = Figure(figsize=_SIZE)
    ax = fig.subplots()
    n = 0
    for name, y in series.items():
        y = _as_2d(y, t.size)
        for i in range(y.shape[1]):
            col = _floor(y[:, i]) if log else y[:, i]
            label = name if y.shape[1] == 1 else f"{name}[{i}]"
            ax.plot(t, col, lw=1.2, label=label)
            n += 1
    _legend(ax, n)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or _TIME_LABEL)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both" if log else "major", alpha=0.4)
    return _to_png(fig)
