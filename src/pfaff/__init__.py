"""pfaff: constrained multibody robot dynamics on the constraint manifold."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pfaff")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+unknown"


#: the Python API (design.md Sec. 4), imported on first use: name -> its module
_API = {
    "load": "pfaff.api",
    "System": "pfaff.api",
    "DynamicsResult": "pfaff.api",
    "Simulator": "pfaff.api",
    "StepInfo": "pfaff.api",
    "rollout": "pfaff.api",
    "Viewer": "pfaff.api",
}


def __getattr__(name: str):
    """The Python API, ``pfaff.sweep`` and ``pfaff.gym`` on first use (``import pfaff``
    stays light; ``pfaff.sweep`` imports Dask and pandas, ``pfaff.gym`` Gymnasium)."""
    import importlib

    if name in ("sweep", "gym"):
        return importlib.import_module(f"pfaff.{name}")
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'pfaff' has no attribute {name!r}")
