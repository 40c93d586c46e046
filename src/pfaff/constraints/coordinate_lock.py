"""A linear combination of one-dof joint coordinates held at a value:
``Phi = sum_j c_j q_j - value`` (a fixed tendon's length held at its limit by
:func:`pfaff.simulate.limits.simulate_limited`). Linear in q: ``A`` is the constant row
of the coefficients and the drift is zero."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.constraints.base import LinearRows
from pfaff.constraints.library import tendon_coefficients, tendon_coordinates
from pfaff.lowering import lowers
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot

__all__ = ["CoordinateLock"]


class CoordinateLock(LinearRows):
    """``Phi = sum_j c_j q_j - value`` over one-dof (hinge or slide) joints.

    Parameters
    ----------
    joints : the joints (names, or coordinate indices where nq == nv); a joint may
        appear more than once (its coefficients add).
    coefficients : ``c_j``, one per joint, not all 0.
    value : the held value of the combination [rad or m].
    name : a label for reports and messages.
    """

    def __init__(
        self,
        joints: Sequence[str | int],
        coefficients: Sequence[float],
        value: float = 0.0,
        name: str | None = None,
    ) -> None:
        self.joints = list(joints)
        self.c = tendon_coefficients(self.joints, coefficients, "coordinate lock")
        if not np.any(self.c != 0):
            raise ModelError(
                f"coordinate lock: coefficients must not all be 0, got {coefficients!r}"
            )
        self.value = float(value)
        if not np.isfinite(self.value):
            raise ModelError(f"coordinate lock: value must be finite, got {value!r}")
        self.name = name or f"lock of {self.joints}"
        self.iq = self.iv = None

    def bind(self, mechanism: Mechanism) -> None:
        self.iq, self.iv = tendon_coordinates(mechanism, self.joints, "coordinate lock")
        self._row = np.zeros((1, mechanism.nv))
        np.add.at(self._row[0], self.iv, self.c)

    def residual(self, snap: Snapshot) -> np.ndarray:
        return np.array([float(self.c @ snap.q[self.iq]) - self.value])


@lowers(CoordinateLock, category="constraint")
def _lower_coordinate_lock(c: CoordinateLock, into):
    s = into.spec("CoordinateLock", c)
    s.iqs, s.ivs = [int(i) for i in c.iq], [int(i) for i in c.iv]
    s.coefs, s.value = [float(x) for x in c.c], c.value
    return s
