"""Motion references ``t -> (x_d, x_d', x_d'')`` and the profiles they are made of.

Every controller that tracks a motion (:class:`~pfaff.control.ProjectedController`,
:class:`~pfaff.control.ComputedTorque`, the Yoshikawa-Zheng law) takes a
:class:`Reference`: a callable of time returning the desired task coordinates,
their rates and their accelerations (Aghili eq. 45-46: ``theta_d``,
``theta_d'``, ``theta_d''``). The generators here start at rest where a run
starts from rest, so the tracking error at ``t = 0`` is the initial error only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np


class Reference(Protocol):
    """A desired motion: ``reference(t) -> (x_d, x_d', x_d'')``, three arrays of one size."""

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


def constant_reference(target: Sequence[float] | np.ndarray) -> Reference:
    """``x_d(t) = target`` at rest (a set-point)."""
    target = np.asarray(target, dtype=float)

    def reference(t: float):
        z = np.zeros(len(target))
        return target, z, z

    return reference


def _cosine(position: Callable[[float], float], amplitude: float, freq: float) -> Reference:
    """``x_d = position(cos(w t))`` with ``x_d' = a w sin(w t)``, ``x_d'' = a w^2 cos(w t)``."""
    w = 2 * np.pi * freq

    def ref(t: float):
        c, s = np.cos(w * t), np.sin(w * t)
        return (
            np.array([position(c)]),
            np.array([amplitude * w * s]),
            np.array([amplitude * w * w * c]),
        )

    return ref


def raised_cosine(x0: float, amplitude: float, freq: float) -> Reference:
    """``x_d(t) = x0 + amplitude (1 - cos(2 pi f t))``: one coordinate, at rest at ``x0``."""
    return _cosine(lambda c: x0 + amplitude * (1 - c), amplitude, freq)


def cosine_swing(center: float, amplitude: float, freq: float) -> Reference:
    """``x_d(t) = center - amplitude cos(2 pi f t)``: a swing about ``center``, at rest at
    ``center - amplitude`` (:func:`raised_cosine` about its mean; the two round differently)."""
    return _cosine(lambda c: center - amplitude * c, amplitude, freq)


def ramped_phase(freq: float, ramp_s: float) -> Callable[[float], tuple[float, float, float]]:
    """Phase ``t -> (ph, ph', ph'')`` whose rate rises from 0 to ``2 pi freq`` over ``ramp_s``.

    The rate follows the smoothstep ``w0 (3 s^2 - 2 s^3)``, ``s = t / ramp_s``
    (zero rate and acceleration at ``t = 0``, continuous acceleration at the end
    of the ramp); afterwards the phase advances at ``w0``.
    """
    w0 = 2 * np.pi * freq

    def phase(t):
        if t < ramp_s:
            s = t / ramp_s
            return (
                w0 * ramp_s * (s**3 - s**4 / 2),
                w0 * (3 * s**2 - 2 * s**3),
                w0 * (6 * s - 6 * s**2) / ramp_s,
            )
        return w0 * (ramp_s / 2 + t - ramp_s), w0, 0.0

    return phase


def circle_reference(center, radius: float, freq: float, ramp_s: float, rest=()) -> Reference:
    """A point on a circle in the x-y plane, started at rest, plus constant coordinates.

    ``x_d = (cx - r cos ph, cy - r sin ph, *rest)`` with ``ph`` the
    :func:`ramped_phase`: the motion starts at ``(cx - r, cy)`` and runs
    counter-clockwise; the coordinates ``rest`` (an orientation, a joint)
    stay constant.
    """
    phase = ramped_phase(freq, ramp_s)
    rest = [float(x) for x in rest]
    zeros = [0.0] * len(rest)
    cx, cy = float(center[0]), float(center[1])

    def ref(t: float):
        ph, dph, ddph = phase(t)
        c, s = -math.cos(ph), -math.sin(ph)  # cos and sin of pi + phase
        return (
            np.array([cx + radius * c, cy + radius * s, *rest]),
            np.array([-radius * dph * s, radius * dph * c, *zeros]),
            np.array(
                [
                    radius * (-ddph * s - dph * dph * c),
                    radius * (ddph * c - dph * dph * s),
                    *zeros,
                ]
            ),
        )

    return ref


# -- scalar motion profiles t -> (s, s', s'') (Yoshikawa-Zheng Sec. 5.3) --------------


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
