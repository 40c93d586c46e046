"""Reference generators of the Yoshikawa-Zheng experiments (IJRR 1993, Sec. 5.3, Table 2).

- :func:`table2` -- the desired (constraint, internal) forces of Table 2;
- :func:`smooth_move` -- a move with quartic acceleration / deceleration and a
  constant-velocity middle (Sec. 5.3), :func:`forth_back` -- forth and back;
- :func:`free_reference` -- the object pose of tasks 2 and 3;
- :func:`time_at_speed` -- where the decelerating end of a move passes a speed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: times [s] of the steps of Table 2
TABLE2_STEPS = (0.27, 0.53)


def table2(t: float) -> tuple[float, float]:
    """Table 2: desired (constraint force, internal force) [N] at time t [s]."""
    if t < 0.27:
        return 0.50, 0.8
    if t < 0.53:
        return 0.75, 1.0
    return 0.50, 0.8


def smooth_move(t: float, T: float, D: float, ta: float) -> tuple[float, float, float]:
    """Move through D in T: quartic acceleration/deceleration of ``ta`` each, constant
    velocity ``V = D / (T - ta)`` between (Sec. 5.3). Returns (s, s', s'')."""
    V = D / (T - ta)

    def acc(u):  # s = V (u^3/ta^2 - u^4/(2 ta^3)) on [0, ta]
        return (
            V * (u**3 / ta**2 - u**4 / (2 * ta**3)),
            V * (3 * u**2 / ta**2 - 2 * u**3 / ta**3),
            V * (6 * u / ta**2 - 6 * u**2 / ta**3),
        )

    if t <= 0:
        return 0.0, 0.0, 0.0
    if t >= T:
        return D, 0.0, 0.0
    if t < ta:
        return acc(t)
    if t <= T - ta:
        return V * ta / 2 + V * (t - ta), V, 0.0
    s, sd, sdd = acc(T - t)
    return D - s, sd, -sdd


def forth_back(t: float, T: float, D: float, ta: float) -> tuple[float, float, float]:
    """Forth through D in T/2 and back in T/2, each with :func:`smooth_move`."""
    if t < T / 2:
        return smooth_move(t, T / 2, D, ta)
    s, sd, sdd = smooth_move(t - T / 2, T / 2, D, ta)
    return D - s, -sd, -sdd


def free_reference(
    x0: float, y0: float, T: float, D: float, ta: float, Dy: float, tay: float
) -> Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Tasks 2 and 3: x moves D in T (:func:`smooth_move`), y goes forth and back
    through Dy (:func:`forth_back`), orientation held; ``t -> (r, r', r'')``."""

    def r_d(t):
        s, sd, sdd = smooth_move(t, T, D, ta)
        u, ud, udd = forth_back(t, T, Dy, tay)
        return np.array([x0 + s, y0 + u, 0.0]), np.array([sd, ud, 0.0]), np.array([sdd, udd, 0.0])

    return r_d


def time_at_speed(D: float, T: float, ta: float, speed: float) -> float:
    """Time in the decelerating end of :func:`smooth_move` where the speed is ``speed``.

    Raises ValueError unless ``0 < speed < V``, the peak speed ``D / (T - ta)``.
    """
    V = D / (T - ta)
    if not 0.0 < speed < V:
        raise ValueError(
            f"impact_velocity = {speed} m/s must lie in (0, {V:.4f}) m/s, the peak desired "
            "y speed: the surface is placed where the desired approach speed equals it"
        )
    lo, hi = T - ta, T  # speed falls monotonically from V to 0 here
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if smooth_move(mid, T, D, ta)[1] > speed else (lo, mid)
    return 0.5 * (lo + hi)
