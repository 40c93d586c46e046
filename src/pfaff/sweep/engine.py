"""Running points on Dask: a local cluster by default, or an existing scheduler.

Each point is one Dask task (:func:`pfaff.sweep.task.run_point`) with a key
derived from the point id, so a point is computed once per sweep even if it is
submitted twice. A worker that dies mid-point is handled by Dask itself: the
scheduler reschedules its tasks on the remaining (or restarted) workers; only a
point whose workers died ``distributed.scheduler.allowed-failures`` times comes
back as failed (and runs again on resume).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pfaff.scenarios import ParameterError
from pfaff.sweep.points import Point
from pfaff.sweep.task import failed_row, run_point

__all__ = ["NO_DASHBOARD", "SchedulerError", "dask_client", "default_workers", "run_points"]


#: how often the client, waiting for the next finished point, looks for a Ctrl-C whose
#: interrupt was swallowed (seconds; Dask's own iteration waits so too)
POLL_S = 0.1
#: a local cluster without the dashboard, its scheduler's HTTP server on a free port
NO_DASHBOARD = {"dashboard_address": None, "scheduler_kwargs": {"dashboard_address": ":0"}}


class SchedulerError(ParameterError):
    """The Dask scheduler given by ``--scheduler`` cannot be reached (exit status 2)."""


def default_workers() -> int:
    """The cores this process may use (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (macOS, Windows)
        return max(1, os.cpu_count() or 1)


@contextmanager
def dask_client(workers: int | None = None, scheduler: Any = None) -> Iterator[Any]:
    """A Dask client: on ``scheduler`` (an address or a ``Client``) or on a local cluster.

    The local cluster has ``workers`` single-threaded worker processes (default:
    :func:`default_workers`) and is stopped on exit; an existing scheduler is
    left running. A ``Client`` passed in is neither closed nor changed.
    """
    from distributed import Client, LocalCluster

    if scheduler is not None and not isinstance(scheduler, str):
        yield scheduler
        return
    cluster = None
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s", set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:
            raise SchedulerError(
                f"cannot reach the Dask scheduler {scheduler!r} ({exc}); "
                "give its address as tcp://HOST:PORT (see `dask scheduler`)"
            ) from None
    else:
        n = default_workers() if workers is None else workers
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            silence_logs=logging.ERROR,
            preload=["pfaff.sweep.worker"],  # the workers leave Ctrl-C to the client
            **NO_DASHBOARD,
        )
        client = Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def in_gc_callback(frame: Any) -> bool:
    """The frame runs inside a ``gc`` callback (Dask's ``GCDiagnosis._gc_callback``),
    where a raised ``KeyboardInterrupt`` is only printed, with its traceback, as
    "Exception ignored"."""
    while frame is not None:
        if frame.f_code.co_name == "_gc_callback":
            return True
        frame = frame.f_back
    return False


@contextmanager
def sigint_latch() -> Iterator[threading.Event]:
    """Remember a Ctrl-C even where its ``KeyboardInterrupt`` is swallowed.

    Python raises ``KeyboardInterrupt`` wherever the main thread is when SIGINT
    arrives; inside a ``gc`` callback (Dask's GC diagnostics install one) or a
    ``__del__`` the interpreter prints "Exception ignored" and goes on. The
    handler installed here sets the returned event before raising (inside Dask's gc
    callback it sets it without raising: no traceback printed), so a loop that checks
    the event still stops. Outside the main thread nothing is
    installed (the event is never set).
    """
    hit = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield hit
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:  # a background job: Ctrl-C is not ours to take
        yield hit
        return

    def on_sigint(signum: int, frame: Any) -> None:
        hit.set()
        if not in_gc_callback(frame):  # there the loop's check of the event stops it
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield hit
    finally:
        signal.signal(signal.SIGINT, previous)


def task_key(scenario: str, point: Point, point_files: bool) -> str:
    """The Dask key of a point's task (the same point is computed once)."""
    return f"pfaff-{scenario}-{point.id}-{'files' if point_files else 'rows'}"


def run_points(
    client: Any,
    scenario: str,
    points: Sequence[Point],
    point_files: bool,
    on_result: Callable[[Point, dict[str, Any], bool], None],
) -> bool:
    """Run ``points`` on ``client``; call ``on_result(point, result, final)`` as each finishes.

    ``final`` is False for a point that produced no result of its own (its
    workers kept dying): its row says so, and a resumed sweep runs it again.

    Returns
    -------
    bool
        True if interrupted (Ctrl-C): the remaining tasks are cancelled and the
        points reported so far are kept.
    """
    from distributed import as_completed

    futures = {}
    try:
        with sigint_latch() as hit:
            for p in points:
                key = task_key(scenario, p, point_files)
                futures[client.submit(run_point, scenario, p.params, point_files, key=key)] = p
            # results are fetched by the client's event loop as tasks finish; this loop
            # waits for them in slices so that a Ctrl-C whose exception was swallowed
            # still stops it
            done = as_completed(
                list(futures), loop=client.loop, with_results=True, raise_errors=False
            )
            while futures:
                if hit.is_set():
                    raise KeyboardInterrupt
                batch = done.next_batch(block=False)
                if not batch and done.is_empty():  # every result handed over
                    break
                if not batch:  # woken by the next result (as Dask's own iteration)
                    with done.thread_condition:
                        done.thread_condition.wait(timeout=POLL_S)
                for fut, value in batch:
                    point = futures.pop(fut)
                    if fut.status == "finished":
                        result, final = value, True
                    else:  # KilledWorker after too many lost workers, a lost connection, ...
                        exc = value[1] if isinstance(value, tuple) else value
                        result = {"row": failed_row(f"{type(exc).__name__}: {exc}"), "files": {}}
                        final = False
                    fut.release()
                    on_result(point, result, final)
    except KeyboardInterrupt:
        if futures:
            try:
                client.cancel(list(futures))
            except Exception:  # the cluster may be going down with the interrupt
                pass
        return True
    return False
