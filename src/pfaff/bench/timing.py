"""Timing helpers and the result row of ``pfaff bench`` (see :mod:`pfaff.bench`)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

Row = dict[str, object]
REPEATS = 7


def row(
    bench: str, figure: str, value: object, unit: str = "", target: str = "", note: str = ""
) -> Row:
    """One result row (see the module docstring for the keys)."""
    return dict(benchmark=bench, figure=figure, value=value, unit=unit, target=target, note=note)


def median_us(loop: Callable[[], object], calls: int, repeats: int = REPEATS) -> float:
    """Median time per call in microseconds of ``loop()``, which makes ``calls`` calls."""
    loop()  # warm-up (caches, lazy allocations)
    times = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            loop()
            times.append(time.perf_counter() - t0)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(times) / calls * 1e6


def paired_us(loops: list[Callable[[], object]], calls: int, repeats: int = REPEATS):
    """Per-call medians (us) of several loops timed in turn within each repeat, and the
    median over the repeats of each loop's time over the last loop's (the peer's): a
    busy host slows the loops side by side, so the ratio holds where the times do not.
    """
    for loop in loops:
        loop()
    times: list[list[float]] = [[] for _ in loops]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for i, loop in enumerate(loops):
                t0 = time.perf_counter()
                loop()
                times[i].append(time.perf_counter() - t0)
    finally:
        if enabled:
            gc.enable()
    med = [statistics.median(t) / calls * 1e6 for t in times]
    ratios = [statistics.median(a / b for a, b in zip(t, times[-1])) for t in times]
    return med, ratios


# -- panda-dd ---------------------------------------------------------------------------
