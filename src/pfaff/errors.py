"""The errors pfaff raises for bad input (design.md Sec. 9): both are ``ValueError``s,
so a caller that expects NumPy's own errors still catches them.

- :class:`ModelError`: a mechanism, constraint or force element built from invalid data
  (a missing frame, a non-positive mass, a degenerate constraint).
- :class:`ParameterError`: a bad scenario name, parameter, file key or value; the
  command line exits with status 2.

This module imports nothing of pfaff: every layer may raise them.
"""

from __future__ import annotations

#: the command line's exit statuses (design.md Sec. 4): ok, bad input found before any
#: step, the simulation failed, interrupted by Ctrl-C
EXIT_OK, EXIT_USAGE, EXIT_FAILED, EXIT_INTERRUPTED = 0, 2, 3, 130


class ModelError(ValueError):
    """A mechanism or constraint was built from invalid data."""


class ParameterError(ValueError):
    """A bad scenario name, parameter key or value (exit status 2)."""
