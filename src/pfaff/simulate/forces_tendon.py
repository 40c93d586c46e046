"""A fixed tendon's spring and damper, as MuJoCo's ``mj_passive`` applies them (see
:mod:`pfaff.simulate.forces`).

A fixed tendon's length is a linear combination of one-dof joint coordinates,
``L = sum_j c_j q_j``; its spring pulls the length back into the dead band
``[lo, hi]`` (MuJoCo's ``springlength``: two values, or one for ``lo = hi``) and its
damper resists ``Ldot = sum_j c_j v_j``::

    f = -k (L - hi)   (L > hi),   -k (L - lo)   (L < lo),   0 inside;   f -= b Ldot
    Q_j = c_j f

Without damping the element is conservative (``V = k (L - bound)^2 / 2`` past the
band); with damping its work is counted as a damper's (``Q . v``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.constraints.library import tendon_coefficients, tendon_coordinates
from pfaff.lowering import lowers
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot
from pfaff.simulate.force_base import ForceElement, finite

__all__ = ["TendonSpring"]


class TendonSpring(ForceElement):
    """A fixed tendon's spring (with a dead band) and damper on ``L = sum_j c_j q_j``.

    Parameters
    ----------
    joints : the tendon's one-dof joints (names, or coordinate indices where nq == nv).
    coefficients : ``c_j``, one per joint (MuJoCo's ``<joint coef>``).
    stiffness : k (>= 0) [N/m or N m/rad, per unit of ``L``].
    damping : b (>= 0), in the units of ``f / Ldot``.
    springlength : the dead band ``(lo, hi)`` of ``L`` in pfaff's ``q`` (a number: ``lo
        = hi``), where the spring is slack; ``lo <= hi``.
    name : a label for reports, messages and the tendon's limit events.
    """

    def __init__(
        self,
        joints: Sequence[str | int],
        coefficients: Sequence[float],
        stiffness: float = 0.0,
        damping: float = 0.0,
        springlength: float | Sequence[float] = 0.0,
        name: str | None = None,
    ) -> None:
        self.joints = list(joints)
        self.c = tendon_coefficients(self.joints, coefficients, "tendon spring")
        self.k = finite(stiffness, "tendon spring stiffness")
        self.b = finite(damping, "tendon damping")
        band = np.asarray(springlength, dtype=float).reshape(-1)
        band = np.repeat(band, 2) if band.shape == (1,) else band
        if band.shape != (2,) or not np.all(np.isfinite(band)) or band[0] > band[1]:
            raise ModelError(
                f"tendon spring: springlength must be one finite number or two, lo <= hi, "
                f"got {springlength!r}"
            )
        self.lo, self.hi = float(band[0]), float(band[1])
        self.conservative = self.b == 0.0
        self.iq = self.iv = None
        self.name = name or f"tendon spring on {self.joints}"

    def bind(self, mechanism: Mechanism) -> None:
        self.iq, self.iv = tendon_coordinates(mechanism, self.joints, self.name)

    def length(self, snap: Snapshot) -> float:
        """``L = sum_j c_j q_j``."""
        return float(self.c @ snap.q[self.iq])

    def stretch(self, snap: Snapshot) -> float:
        """``L`` past the dead band: ``L - hi`` above it, ``L - lo`` below, 0 inside."""
        L = self.length(snap)
        return L - self.hi if L > self.hi else (L - self.lo if L < self.lo else 0.0)

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        f = -self.k * self.stretch(snap) - self.b * float(self.c @ snap.v[self.iv])
        Q = np.zeros(snap.v.shape[0])
        np.add.at(Q, self.iv, self.c * f)
        return Q

    def potential(self, snap: Snapshot) -> float:
        return 0.5 * self.k * self.stretch(snap) ** 2


@lowers(TendonSpring, category="force")
def _lower_tendon(e: TendonSpring, into):
    s = into.force_spec("TendonSpring")
    s.iqs, s.ivs = [int(i) for i in e.iq], [int(i) for i in e.iv]
    s.coefs, s.k, s.c, s.lo, s.hi = [float(c) for c in e.c], e.k, e.b, e.lo, e.hi
    return s
