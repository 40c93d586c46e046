"""Set-up of the worker processes of pfaff's local Dask cluster (a Dask preload module).

A Ctrl-C in a terminal reaches every process of the foreground group, the
local cluster's workers too; the client alone handles it (it keeps what
finished and stops the cluster), so a worker ignores SIGINT instead of dying
with a traceback mid-point.
"""

from __future__ import annotations

import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Called by Dask in each worker process as it starts."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread of the process: leave it
        pass
