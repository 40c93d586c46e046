"""A constraint written in Python, called from the compiled loop.

A constraint with no lowering of its own (a :class:`~pfaff.constraints.FunctionConstraint`,
a user's subclass of :class:`~pfaff.constraints.base.Constraint` or of a built-in one)
reaches the compiled core as a constraint kind written in Python (``Kind.Python``,
``src/cpp/kinds/python.cpp``): the loop calls its rows ``(A, Phi, drift)`` at the state
of every pass that writes any kind's rows (each stage, each Newton iteration of the
correction, the velocity projection), as MuJoCo calls its callbacks, and steps,
projects and corrects them as a built-in kind's. Its snapshot is the mechanism's at
that state (its frames, without the dynamics' terms), so the constraint computes
exactly what it computes on the NumPy engine; only this constraint pays Python's cost.
The core's dynamics derivatives take its rows by central differences (``derive_Python``),
as the NumPy reference :mod:`pfaff.derivatives` does.
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.lowering import lowers_any

__all__ = ["rows_of"]


def rows_of(c: Constraint, mechanism):
    """The rows ``(q, v, with_drift) -> (A, Phi, drift)`` of the bound constraint ``c``
    on ``mechanism``: its :meth:`~pfaff.constraints.base.Constraint.terms` at the
    snapshot of ``(q, v)`` (zeros for the Phi of a Pfaffian constraint)."""
    frames = tuple(c.frames)
    zeros = np.zeros(c.dim)

    def rows(q: np.ndarray, v: np.ndarray, with_drift: bool):
        A, drift, phi = c.terms(mechanism.compute(q, v, frames, dynamics=False))
        return A, zeros if phi is None else phi, drift if with_drift else zeros

    return rows


@lowers_any("constraint")
def _lower_python(c: Constraint, into):
    s = into.spec("Python", c)
    name = f"{getattr(c, 'name', type(c).__name__)} (a constraint written in Python)"
    s.set_law(rows_of(c, into.mechanism), not c.holonomic, name)
    return s
