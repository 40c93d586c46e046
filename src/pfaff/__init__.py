"""pfaff: constrained multibody robot dynamics on the constraint manifold."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pfaff")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+unknown"


def __getattr__(name: str):
    """``pfaff.sweep`` on first use (it imports Dask and pandas)."""
    if name == "sweep":
        import pfaff.sweep

        return pfaff.sweep
    raise AttributeError(f"module 'pfaff' has no attribute {name!r}")
