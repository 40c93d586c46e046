"""The memory a run's record takes, judged before the run starts.

A run records one sample per step (or per ``record_every`` steps): its series
(:data:`~pfaff.simulate.policy.SERIES`) are float64 arrays, the times a list of
Python floats. :func:`check_record` refuses a record larger than the memory the
machine has available now (``MemAvailable`` of ``/proc/meminfo``, else
``os.sysconf``), naming the quantity that asks for it (``t_end``, ``n``) and how to
record less, instead of a ``MemoryError`` or a machine that swaps.
"""

from __future__ import annotations

import math
import os

from pfaff.constraints.base import ConstraintSet
from pfaff.simulate.policy import SERIES

__all__ = ["RecordTooLarge", "available_bytes", "check_record", "format_bytes", "sample_bytes"]

#: bytes of one recorded time beyond its float64: a Python float in a list
TIME_OVERHEAD = 32


class RecordTooLarge(ValueError):
    """A run whose record would not fit in the memory available (refused before it
    starts)."""


def available_bytes() -> int | None:
    """The memory available to a new allocation now [bytes]: ``MemAvailable`` of
    ``/proc/meminfo`` (Linux), else the free physical pages (``os.sysconf``), else
    None (unknown: nothing is refused)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def sample_bytes(cset: ConstraintSet, na: int = 0) -> int:
    """Bytes of one recorded sample of a run of ``cset`` (``na`` activations): every
    series of :data:`~pfaff.simulate.policy.SERIES` as float64, the time also as a
    Python float."""
    mech = cset.mechanism
    sizes = {"nq": mech.nq, "nv": mech.nv, "m": cset.dim, "m_h": len(cset.holonomic_rows)}
    sizes["na"] = int(na)
    floats = sum(1 if s.width is None else sizes[s.width] for s in SERIES)
    return 8 * floats + TIME_OVERHEAD


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, e.g. ``"7.28 TiB"``."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")
    k = 0 if n < 1024 else min(int(math.log(n, 1024)), len(units) - 1)
    return f"{n / 1024**k:.3g} {units[k]}"


def check_record(samples: int, per_sample: int, what: str, advice: str) -> None:
    """Refuse a record of ``samples`` samples of ``per_sample`` bytes larger than the
    memory available (:func:`available_bytes`).

    Parameters
    ----------
    samples : samples the run would record.
    per_sample : bytes of one (:func:`sample_bytes`).
    what : the request, naming the quantity that asks for it, e.g.
        ``"t_end = 1e+09 s at dt = 0.001 s (1e+12 steps)"``.
    advice : how to record less, e.g. a record stride or ``record=False``.

    Raises
    ------
    RecordTooLarge
        A ``ValueError`` naming ``what``, the estimate, the memory available and
        ``advice``.
    """
    need = float(samples) * per_sample
    have = available_bytes()
    if have is None or need <= have:
        return
    raise RecordTooLarge(
        f"{what}: its record ({samples:.3g} samples of {per_sample} bytes) would take an "
        f"estimated {format_bytes(need)}, more than the {format_bytes(have)} of memory "
        f"available; {advice}"
    )
