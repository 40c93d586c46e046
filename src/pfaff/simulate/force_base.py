"""The force element's interface and the checks its parameters share (see
:mod:`pfaff.simulate.forces` for the elements and how they enter the equations)."""

from __future__ import annotations

import numpy as np

from pfaff.mechanism.base import Mechanism, ModelError, Snapshot


def finite(x, what: str, low: float = 0.0) -> float:
    """``x`` as a float, refused unless finite and ``>= low``."""
    x = float(x)
    if not (np.isfinite(x) and x >= low):
        raise ModelError(f"{what} must be a finite number >= {low:g}, got {x!r}")
    return x


def point3(x, what: str) -> np.ndarray | None:
    """``x`` as a (3,) array (None stays None), refused unless 3 finite numbers."""
    if x is None:
        return None
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be 3 finite numbers, got {x!r}")
    return a


class ForceElement:
    """One force element: ``Q(t, snapshot)`` (nv,) and, if conservative, ``V(snapshot)``.

    Attributes
    ----------
    frames : frame names whose kinematics the element reads.
    conservative : True when ``Q = -dV/dq`` (its work is in the potential).
    name : label used in messages.
    """

    frames: tuple[str, ...] = ()
    conservative: bool = False
    name: str = "force element"

    def bind(self, mechanism: Mechanism) -> None:
        """Validate against a mechanism (frames, joints); raise :class:`ModelError`."""
        mechanism.check_frames(self.frames)

    def force(self, t: float, snap: Snapshot) -> np.ndarray:
        """Generalized force ``Q`` (nv,) at time ``t`` and the snapshot's state."""
        raise NotImplementedError

    def potential(self, snap: Snapshot) -> float:
        """Potential energy [J] (0 for a non-conservative element)."""
        return 0.0
