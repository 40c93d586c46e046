"""Force elements evaluated at every integrator stage and counted in the energy.

A force element adds a generalized force ``Q(t, q, v)`` (size nv) to the
applied torque, so the equation of motion reads (design.md Sec. 2)::

    M a + h = tau + sum_e Q_e(t, q, v) - F

Unlike a controller's torque, held between samples (zero-order hold, first
order accurate), ``Q`` is evaluated at every Runge-Kutta stage: a simulation
with force elements keeps the integrator's order. Conservative elements
(springs) report a potential ``V_e(q)`` with ``Q_e = -dV_e/dq``; it is added
to the recorded ``potential`` and ``energy``. The others (dampers, the applied
force ``tau(t, q, v)``) do work ``int Q_e . v dt``, integrated with the
integrator's own quadrature and recorded as ``force_work``, so that
``energy(t) - energy(0) = work + force_work + correction_energy``.

Elements:

- :class:`PointSpring` -- a spring between two points (a point fixed in a
  frame and a point fixed in another frame or in the world), tension
  ``k s + k3 s^3`` for the extension ``s = |p1 - p2| - L0`` (``k3 = 0``: linear),
  or any law ``tension, potential = law(s)``.
- :class:`PointDamper` -- a damper between two points, tension ``c s'``.
- :class:`JointSpring`, :class:`JointDamper` -- on one coordinate of a one-dof joint.
- :class:`CoordinateSpring` -- on a linear combination of joint coordinates.
- :class:`TendonSpring` -- a fixed tendon's spring (with MuJoCo's dead band) and
  damper on a linear combination of joint coordinates.
- :class:`AnchorSpring`, :class:`AnchorDamper` -- a body point tied to a world
  anchor along chosen world axes (a task-space stiffness and damping).
- :class:`PointForce` -- a constant world force on a body point.
- :class:`GravityCompensation` -- ``Q = g(q)``.
- :class:`AppliedForce` -- a generalized force ``tau(t, q, v)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.mechanism.base import Mechanism, ModelError, Snapshot
from pfaff.simulate import python_law  # noqa: F401 - the fallback lowering
from pfaff.simulate.force_base import ForceElement
from pfaff.simulate.forces_ball import BallSpring, DofDamper
from pfaff.simulate.forces_joint import (
    AppliedForce,
    CoordinateSpring,
    GravityCompensation,
    JointDamper,
    JointSpring,
)
from pfaff.simulate.forces_point import (
    AnchorDamper,
    AnchorSpring,
    PointDamper,
    PointForce,
    PointSpring,
)
from pfaff.simulate.forces_tendon import TendonSpring

__all__ = [
    "AnchorDamper",
    "AnchorSpring",
    "AppliedForce",
    "BallSpring",
    "CoordinateSpring",
    "DofDamper",
    "ForceElement",
    "ForceSet",
    "GravityCompensation",
    "JointDamper",
    "JointSpring",
    "PointDamper",
    "PointForce",
    "PointSpring",
    "TendonSpring",
    "element_types",
]


def element_types() -> list[type]:
    """The public force-element classes (the subclasses of :class:`ForceElement`
    defined in :mod:`pfaff.simulate.forces_point` and ``forces_joint`` whose names do
    not start with ``_``)."""
    out, todo = [], list(ForceElement.__subclasses__())
    while todo:
        c = todo.pop(0)
        todo[:0] = c.__subclasses__()
        if not c.__name__.startswith("_") and c.__module__.startswith("pfaff.simulate.forces"):
            out.append(c)
    return out


class ForceSet:
    """The force elements of one simulation, bound to its mechanism."""

    def __init__(self, mechanism: Mechanism, elements: Sequence[ForceElement] = ()) -> None:
        self.elements = list(elements)
        for e in self.elements:
            if not isinstance(e, ForceElement):
                kinds = ", ".join(c.__name__ for c in element_types())
                raise ModelError(
                    f"force elements must be ForceElement instances ({kinds}), got {e!r}"
                )
            e.bind(mechanism)
        self.frames = tuple(dict.fromkeys(f for e in self.elements for f in e.frames))
        self.nv = mechanism.nv

    def __bool__(self) -> bool:
        return bool(self.elements)

    def evaluate(self, t: float, snap: Snapshot) -> tuple[np.ndarray, float]:
        """``(Q, P_nc)``: the total generalized force and the power of the
        non-conservative elements ``sum Q_e . v`` [W]."""
        Q = np.zeros(self.nv)
        power = 0.0
        for e in self.elements:
            Qe = e.force(t, snap)
            Q += Qe
            if not e.conservative:
                power += float(Qe @ snap.v)
        return Q, power

    def potential(self, snap: Snapshot) -> float:
        """Sum of the conservative elements' potentials [J]."""
        return float(sum(e.potential(snap) for e in self.elements if e.conservative))
