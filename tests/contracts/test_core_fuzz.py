"""Random arrays into the compiled core's System calls (hypothesis): each call ends in a
result or a ValueError naming the call, never a crash. The calls run in a worker process,
so a crash fails the test (BrokenProcessPool) instead of killing pytest. The checked
boundary itself: test_core_boundary.py.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from where import MODELS

from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.files.model import load_model

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
N = 4  # the five-bar: nq = nv = 4, 3 rows
_POOL: list[cf.ProcessPoolExecutor] = []


def _call_in_worker(method: str, arrays: list) -> tuple[str, str]:
    """Runs in the worker: one call of a five-bar System; ("ok" | exception type, message)."""
    global _SYSTEM
    if "_SYSTEM" not in globals():
        m = load_model(MODELS / "five_bar.xml")
        _SYSTEM = core.build(ConstraintSet(m.mechanism, m.constraints))
    try:
        getattr(_SYSTEM, method)(*arrays)
    except Exception as exc:  # the property below accepts ValueError only
        return type(exc).__name__, str(exc)
    return "ok", ""


@pytest.fixture(scope="module", autouse=True)
def _stop_worker():
    yield
    for pool in _POOL:
        pool.shutdown()
    _POOL.clear()


def _worker() -> cf.ProcessPoolExecutor:
    if not _POOL:
        ctx = multiprocessing.get_context("spawn")
        _POOL.append(cf.ProcessPoolExecutor(1, mp_context=ctx))
    return _POOL[0]


def _array(shape: list[int], dtype: str, value: float) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):  # -1e300 as float32, nan as int
        return np.full(shape, value).astype(dtype)


ARRAYS = st.one_of(
    st.builds(
        _array,
        st.lists(st.sampled_from([0, 1, 3, 4, 5, 9]), max_size=3),
        st.sampled_from(["float64", "float32", "int64", "bool"]),
        st.sampled_from([0.0, 0.5, -1e300, float("nan"), float("inf")]),
    ),
    st.sampled_from([None, "abcd", [0.0] * N, 1.0, [[0.0] * N]]),
)
NARGS = {"evaluate": 2, "set_state": 2, "force_terms": 2, "set_tau": 1}


@settings(deadline=None)  # examples: the profile (conftest.py: ci 150, thorough 3000)
@given(
    method=st.sampled_from(["evaluate", "solve", "acceleration", "set_state", "set_tau",
                            "force_terms"]),
    arrays=st.lists(ARRAYS, min_size=3, max_size=3),
)  # fmt: skip
def test_fuzzed_arrays_into_the_core_end_in_a_result_or_value_error(method, arrays):
    """Arrays of random shapes, dtypes and values: a result or a ValueError naming the
    call, never a crash (the worker process would die: BrokenProcessPool)."""
    args = arrays[: NARGS.get(method, 3)]
    try:
        kind, msg = _worker().submit(_call_in_worker, method, args).result(timeout=60)
    except cf.process.BrokenProcessPool:
        _POOL.clear()
        pytest.fail(f"System.{method}{tuple(args)!r} crashed the interpreter")
    assert kind in ("ok", "ValueError"), (kind, msg)
    assert kind == "ok" or msg.startswith(f"System.{method}: "), msg
