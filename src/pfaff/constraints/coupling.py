"""Joint couplings and row scaling.

- :class:`JointCoupling` -- ``Phi = q_1 - c_0 - c_1 q_2`` between two one-dof
  joints (a gear, a parallel-jaw gripper's mirrored fingers; MuJoCo's
  ``<equality><joint polycoef="c0 c1 0 0 0">``); without ``joint2`` it locks
  ``q_1 = c_0``. Linear in q: ``A`` is constant and the drift is zero.
- :class:`Scaled` -- a constraint's rows multiplied by constant factors (MuJoCo's
  weld ``torquescale`` on the rotational rows). A zero factor leaves an
  identically zero row: the SVD's absolute threshold drops it from the rank.
"""

from __future__ import annotations

import numpy as np

from pfaff import lowering
from pfaff.constraints.base import Constraint, LinearRows, TermsConstraint, named_joint
from pfaff.mechanism.base import Mechanism, ModelError, Snapshot


def _one_dof(mechanism: Mechanism, joint: str) -> tuple[int, int]:
    """``(idx_q, idx_v)`` of a one-dof joint with one coordinate (ModelError naming it)."""
    need = "a coupling needs a revolute or prismatic joint with one coordinate"
    return named_joint(mechanism, joint, 1, 1, need)


class JointCoupling(LinearRows):
    """Linear coupling of two one-dof joints: ``Phi = q_1 - c_0 - c_1 q_2`` (rad or m).

    Parameters
    ----------
    joint1, joint2 : joint names (Pinocchio mechanisms); ``joint2=None`` locks
        joint 1 at ``offset``.
    ratio : ``c_1``.
    offset : ``c_0``.
    """

    def __init__(
        self,
        joint1: str,
        joint2: str | None = None,
        ratio: float = 1.0,
        offset: float = 0.0,
        name: str | None = None,
    ) -> None:
        self.joint1, self.joint2 = joint1, joint2
        self.c0, self.c1 = float(offset), float(ratio)
        if not (np.isfinite(self.c0) and np.isfinite(self.c1)):
            raise ModelError(f"coupling offset and ratio must be finite, got {offset}, {ratio}")
        self.name = name or f"{joint1} = {self.c0:g} + {self.c1:g} {joint2 or '1'}"
        self._iq: list[int] = []

    def bind(self, mechanism: Mechanism) -> None:
        iq1, iv1 = _one_dof(mechanism, self.joint1)
        self._row = np.zeros((1, mechanism.nv))
        self._row[0, iv1] = 1.0
        self._iq = [iq1]
        if self.joint2 is not None:
            iq2, iv2 = _one_dof(mechanism, self.joint2)
            if iv2 == iv1:
                raise ModelError(f"joint coupling {self.name!r} couples a joint with itself")
            self._row[0, iv2] = -self.c1
            self._iq.append(iq2)

    def residual(self, snap: Snapshot) -> np.ndarray:
        q2 = snap.q[self._iq[1]] if len(self._iq) > 1 else 0.0
        return np.array([snap.q[self._iq[0]] - self.c0 - self.c1 * q2])


class Scaled(TermsConstraint):
    """The rows of ``inner`` multiplied by constant ``factors`` (same manifold where all
    factors are non-zero; a zero factor removes that row's content)."""

    def __init__(self, inner: Constraint, factors, name: str | None = None) -> None:
        f = np.asarray(factors, dtype=float).reshape(-1)
        if f.shape != (inner.dim,) or not np.all(np.isfinite(f)):
            raise ModelError(f"factors must be {inner.dim} finite numbers, got {factors!r}")
        self.inner, self.f = inner, f
        self.dim, self.holonomic, self.frames = inner.dim, inner.holonomic, inner.frames
        self.name = name or inner.name

    def bind(self, mechanism: Mechanism) -> None:
        self.inner.bind(mechanism)

    def terms(self, snap: Snapshot):
        A, d, phi = self.inner.terms(snap)
        return self.f[:, None] * A, self.f * d, None if phi is None else self.f * phi


# -- lowerings to the compiled core (pfaff.lowering; src/cpp) ------------------------------


@lowering.lowers(JointCoupling, category="constraint")
def _lower_coupling(c: JointCoupling, into):
    s = into.spec("JointCoupling", c)
    s.iq, s.iv = into.joint(c.joint1)
    if c.joint2 is not None:
        s.iq2, s.iv2 = into.joint(c.joint2)
    s.c0, s.c1 = c.c0, c.c1
    return s


def _refuse_scaled(c: Scaled) -> str | None:
    """A Scaled block lowers when the constraint it scales does."""
    return lowering.reason(c.inner, "constraint")


@lowering.lowers(Scaled, category="constraint", refuse=_refuse_scaled)
def _lower_scaled(c: Scaled, into):
    """The inner constraint's rows with the row factors (multiplied into any it has)."""
    s = lowering.lower(c.inner, "constraint", into)
    f = np.asarray(c.f, dtype=float)
    s.scale = f if s.scale.size == 0 else f * s.scale
    return s
