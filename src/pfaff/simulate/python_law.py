"""A force element written in Python, called from the compiled loop.

A force element with no lowering of its own (an :class:`~pfaff.simulate.AppliedForce`
``tau(t, q, v)``, a :class:`~pfaff.simulate.PointSpring` with a spring ``law``, a
user's subclass of :class:`~pfaff.simulate.ForceElement`) reaches the compiled core as
a *Python law*: the core calls it at every integrator stage, at the stage's time and
state, as MuJoCo calls its callbacks (``mjcb_passive``, ``mjcb_control``), with the
same loop semantics as a built-in element. Its snapshot is the mechanism's at that
state (its frames, without the dynamics' terms), so the element computes exactly what
it computes on the NumPy engine; only this element pays Python's cost. A conservative
element's potential enters the energy, a non-conservative one's power ``Q . v`` the
series ``force_work``. Its derivatives on the core are central differences of the law
(``src/cpp/forces/python.cpp``), as on NumPy.
"""

from __future__ import annotations

import numpy as np

from pfaff.lowering import lowers_any
from pfaff.simulate.force_base import ForceElement

__all__ = ["law_of"]


def law_of(e: ForceElement, mechanism):
    """The law ``(t, q, v) -> (Q, V)`` of the bound element ``e`` on ``mechanism``: its
    force at the snapshot of ``(q, v)`` (the element's frames), and its potential where
    it is conservative (else 0)."""
    frames = tuple(e.frames)

    def law(t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float]:
        snap = mechanism.compute(q, v, frames, dynamics=False)
        Q = e.force(float(t), snap)
        return Q, (float(e.potential(snap)) if e.conservative else 0.0)

    return law


@lowers_any("force")
def _lower_python(e: ForceElement, into):
    s = into.force_spec("Python")
    name = f"{getattr(e, 'name', type(e).__name__)} (a Python force law)"
    s.set_law(law_of(e, into.mechanism), bool(e.conservative), name)
    return s
