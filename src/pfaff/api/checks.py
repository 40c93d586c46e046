"""The checks of the arrays a user hands the Python API (a start, a torque, a control):
real numbers of the expected shape, finite; a clear ValueError naming the array and
what it must hold otherwise."""

from __future__ import annotations

import numpy as np

__all__ = ["check_vector", "real_array", "refuse_complex"]


def real_array(x, name: str, expected: str) -> np.ndarray:
    """``x`` as a float array, else ValueError naming ``name`` and what it must hold
    (``expected``, e.g. "(nv,) = (3,)"): complex entries, text or objects are never
    cast silently (NumPy would drop an imaginary part with only a ComplexWarning)."""
    raw = np.asarray(x)
    if raw.dtype.kind not in "biuf":
        what = "complex numbers" if raw.dtype.kind == "c" else f"dtype {raw.dtype}"
        raise ValueError(f"{name} must hold real numbers {expected}, got {what}: {x!r:.120}")
    return np.asarray(raw, dtype=float)


def check_vector(x, n: int, name: str, size: str) -> np.ndarray:
    """``x`` as a float array of shape (n,), else ValueError naming ``name``, its shape
    and the expected one (``size``: what n is, e.g. "nv"), its non-finite entries, or
    entries that are not real numbers (:func:`real_array`)."""
    a = real_array(x, name, f"({n},) = ({size},)")
    if a.shape != (n,):
        raise ValueError(f"{name} has shape {a.shape}, expected ({n},) = ({size},)")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has non-finite entries: {a.tolist()}")
    return a


def refuse_complex(who: str, name: str, x, n: int, size: str) -> None:
    """Refuse a complex ``x`` (NumPy would drop the imaginary part with only a warning):
    ValueError naming ``who``'s argument ``name`` and the real ``(n,) = (size,)``
    expected; None (absent) and real arrays pass."""
    if x is not None and np.iscomplexobj(x):
        raise ValueError(
            f"{who}: {name} is complex ({x!r:.80}), expected real numbers "
            f"({n},) = ({size},): an imaginary part is never dropped silently"
        )


def refuse_number(who: str, tau, nv: int) -> None:
    """Refuse a number given as the joint torque ``tau`` (``sim.step(5)`` meant as five
    steps): ValueError saying what tau is and, for an integer, to say ``n=``."""
    if tau is not None and np.ndim(tau) == 0 and not isinstance(tau, str):
        whole = isinstance(tau, (int, np.integer)) and not isinstance(tau, bool)
        steps = f": to take {tau} steps, say n={tau}" if whole else ""
        raise ValueError(
            f"{who}: tau={tau!r} is a number; tau is the joint torque, an array of shape "
            f"({nv},) (nv) or None (zero){steps}"
        )
