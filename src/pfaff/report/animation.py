"""Animated GIF of a planar mechanism drawn as polylines.

Frames are rendered on a private Agg canvas (no pyplot, no global state): the
axes are drawn once, and each frame restores that background and draws only the
moving artists (blitting). The frames are encoded with Pillow (a matplotlib
dependency). This is what ``FuncAnimation`` + ``PillowWriter`` do, without the
temporary file.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

__all__ = ["animate_planar"]


def _frame_indices(n_samples: int, max_frames: int) -> np.ndarray:
    """At most ``max_frames`` sample indices, evenly spread, first and last included."""
    n = max(1, min(int(max_frames), n_samples))
    return np.unique(np.round(np.linspace(0, n_samples - 1, n)).astype(int))


def _limits(polylines: list[np.ndarray], static_lines: Sequence) -> tuple[float, ...]:
    """Equal-aspect square box covering every finite position, with a 10 % margin."""
    pts = [p.reshape(-1, 2) for p in polylines]
    pts += [np.column_stack([np.ravel(xs), np.ravel(ys)]) for xs, ys in static_lines]
    allp = np.concatenate(pts, axis=0)
    allp = allp[np.all(np.isfinite(allp), axis=1)]
    if allp.size == 0:
        return (-1.0, 1.0, -1.0, 1.0)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    center = 0.5 * (lo + hi)
    half = 0.5 * float(np.max(hi - lo))
    half = 1.1 * half if half > 0 else 1.0
    return (center[0] - half, center[0] + half, center[1] - half, center[1] + half)


def animate_planar(
    t: np.ndarray,
    polylines_xy: Sequence[np.ndarray],
    fps: int = 25,
    max_frames: int = 150,
    title: str = "",
    static_lines: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    size_in: float = 5.0,
    dpi: int = 60,
) -> bytes:
    """Render a planar mechanism as an animated GIF.

    Parameters
    ----------
    t : (T,) array
        Sample times [s].
    polylines_xy : sequence of (T, npts, 2) arrays
        One array per polyline (e.g. a link chain): x-y positions [m] of its
        points at each sample. Points are joined by a line with circle markers.
    fps : int
        Playback frame rate of the GIF.
    max_frames : int
        The samples are subsampled evenly to at most this many frames.
    title : str
        Figure title.
    static_lines : sequence of (xs, ys), optional
        Fixed curves drawn in grey (ground line, guide circle, ...).
    size_in, dpi : float, int
        Figure size [in] (square) and resolution.

    Returns
    -------
    bytes
        GIF image (starts with ``b"GIF8"``), looping forever.
    """
    t = np.asarray(t, dtype=float).ravel()
    if t.size == 0:
        raise ValueError("t is empty: nothing to animate")
    if len(polylines_xy) == 0:
        raise ValueError("polylines_xy is empty: nothing to animate")
    polylines = []
    for k, p in enumerate(polylines_xy):
        p = np.asarray(p, dtype=float)
        if p.ndim != 3 or p.shape[0] != t.size or p.shape[2] != 2:
            raise ValueError(
                f"polylines_xy[{k}] must have shape (T={t.size}, npts, 2), got {p.shape}"
            )
        polylines.append(p)
    static_lines = list(static_lines or [])

    fig = Figure(figsize=(size_in, size_in), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.subplots()
    x0, x1, y0, y1 = _limits(polylines, static_lines)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title)
    for xs, ys in static_lines:
        ax.plot(np.ravel(xs), np.ravel(ys), color="0.6", lw=1.5, zorder=1)
    lines = [
        ax.plot([], [], "-o", lw=2.5, ms=5, color=f"C{k % 10}", zorder=2, animated=True)[0]
        for k in range(len(polylines))
    ]
    clock = ax.text(
        0.02, 0.96, "", transform=ax.transAxes, va="top", family="monospace", animated=True
    )
    fig.tight_layout()
    canvas.draw()  # the static part once; animated artists are left out (blitting)
    background = canvas.copy_from_bbox(fig.bbox)

    frames: list[Image.Image] = []
    palette = None
    for i in _frame_indices(t.size, max_frames):
        for line, p in zip(lines, polylines, strict=True):
            line.set_data(p[i, :, 0], p[i, :, 1])
        clock.set_text(f"t = {t[i]:.3f} s")
        canvas.restore_region(background)
        for artist in (*lines, clock):
            ax.draw_artist(artist)
        rgba = np.asarray(canvas.buffer_rgba())
        img = Image.fromarray(rgba[..., :3].copy())
        if palette is None:  # the first frame holds every colour: share its palette
            palette = img.quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        frames.append(img.quantize(palette=palette, dither=Image.Dither.NONE))

    buf = io.BytesIO()
    frames[0].save(
        buf,
        format="GIF",
        save_all=True,
        append_images=frames[1:],
        duration=max(20, round(1000 / max(1, fps))),
        loop=0,
        optimize=False,
    )
    return buf.getvalue()
