"""A linear combination of one-dof joint coordinates held at a value:
``Phi = sum_j c_j q_j - value`` (a fixed tendon's length held at its limit by
:func:`pfaff.simulate.limits.simulate_limited`). Linear in q: ``A`` is the constant row
of the coefficients and the drift is zero."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.constraints.base import Constraint
from pfaff.constraints.library import joint_coordinate
from pfaff.lowering import lowers
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot

__all__ = ["CoordinateLock"]


class CoordinateLock(Constraint):
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
        self.c = np.asarray(coefficients, dtype=float).reshape(-1)
        if not self.joints or self.c.shape != (len(self.joints),):
            raise ModelError(
                f"coordinate lock: one coefficient per joint (at least one joint) expected, "
                f"got {len(self.joints)} joints and coefficients {coefficients!r}"
            )
        if not np.all(np.isfinite(self.c)) or not np.any(self.c != 0):
            raise ModelError(
                f"coordinate lock: coefficients must be finite and not all 0, got {coefficients!r}"
            )
        self.value = float(value)
        if not np.isfinite(self.value):
            raise ModelError(f"coordinate lock: value must be finite, got {value!r}")
        self.name = name or f"lock of {self.joints}"
        self.iq = self.iv = None

    def bind(self, mechanism: Mechanism) -> None:
        idx = []
        for j in self.joints:
            iq, iv, nq = joint_coordinate(mechanism, j)
            if nq != 1:
                raise ModelError(f"coordinate lock: joint {j!r} is not a one-dof joint")
            idx.append((iq, iv))
        self.iq, self.iv = (np.array(x, dtype=int) for x in zip(*idx))
        self._row = np.zeros((1, mechanism.nv))
        np.add.at(self._row[0], self.iv, self.c)

    def residual(self, snap: Snapshot) -> np.ndarray:
        return np.array([float(self.c @ snap.q[self.iq]) - self.value])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        return self._row

    def drift(self, snap: Snapshot) -> np.ndarray:
        return np.zeros(1)


@lowers(CoordinateLock, category="constraint")
def _lower_coordinate_lock(c: CoordinateLock, into):
    s = into.spec("CoordinateLock", c)
    s.iqs, s.ivs = [int(i) for i in c.iq], [int(i) for i in c.iv]
    s.coefs, s.value = [float(x) for x in c.c], c.value
    return s
