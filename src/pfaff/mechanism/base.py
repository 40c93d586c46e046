"""Mechanism interface and the per-state snapshot.

A :class:`Mechanism` holds what does not change (the model); a
:class:`Snapshot` holds what one state ``(q, v)`` determines (Pinocchio's
model/data split). Everything downstream -- constraints, dynamics, control --
reads the snapshot instead of recomputing per-state quantities.

Equation of motion (Aghili eq. 19, design.md Sec. 2)::

    M(q) a + h(q, v) = tau - F,    F = A^T lambda

Frame quantities are expressed in the world frame at the frame origin
(Pinocchio's LOCAL_WORLD_ALIGNED): ``J`` is 6 x nv with linear rows first,
``drift`` is the classical acceleration ``J' v`` of the frame origin when
``a = 0`` (linear part) and the angular acceleration ``J'_w v``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from pfaff.errors import ModelError
from pfaff.linalg import cross3, skew

if TYPE_CHECKING:
    import pinocchio

__all__ = [
    "frame_ids",
    "frame_index",
    "ModelError",
    "QUAT_QUIET",
    "QUAT_TOL",
    "FrameState",
    "Mechanism",
    "Snapshot",
    "unit_quaternion",
]


QUAT_TOL = 1e-5
"""How far from 1 a given quaternion's norm may be and still be normalised (with a
warning): a quaternion printed with 6 digits, as MuJoCo writes keyframes, is off by
up to ~1e-6; one further off is a typo and is refused."""

QUAT_QUIET = 1e-6
"""A quaternion's norm off 1 by at most this much (what 6 printed digits leave) is
normalised without a warning, as MuJoCo's compiler does."""


def unit_quaternion(
    x: np.ndarray, what: str, warnings: list[str] | None, tol: float = QUAT_TOL
) -> np.ndarray:
    """``x`` (4,) normalised: within ``tol`` of unit norm it is normalised and, when it
    is off 1 by more than :data:`QUAT_QUIET`, a line naming ``what`` goes to
    ``warnings``; further off, zero or not finite it is refused with a
    :class:`ModelError`. (MJCF keyframes
    pass ``tol=inf``: MuJoCo's compiler normalises any non-zero quaternion.)"""
    n = float(np.linalg.norm(x))
    if not (np.isfinite(n) and n > 0 and abs(n - 1.0) <= tol):
        raise ModelError(
            f"{what}: quaternion {np.asarray(x).tolist()} has norm {n:.9g}; a unit "
            f"quaternion is expected (norm within {tol:g} of 1 is normalised)"
        )
    if abs(n - 1.0) > QUAT_QUIET and warnings is not None:
        warnings.append(f"{what}: quaternion of norm {n:.12g} (off 1 by {n - 1:.1e}) normalised")
    return np.asarray(x, dtype=float) / n


@dataclass(slots=True)
class FrameState:
    """Kinematics of one frame at one state.

    Attributes
    ----------
    p : (3,) origin position in the world.
    R : (3, 3) orientation (columns: frame axes in world coordinates).
    J : (6, nv) Jacobian, world-aligned at the origin, rows (linear, angular).
        ``None`` when the snapshot was computed without Jacobians.
    drift : (6,) ``J' v``: classical origin acceleration and angular
        acceleration produced by the velocity alone. ``None`` without velocity.
    """

    p: np.ndarray
    R: np.ndarray
    J: np.ndarray | None = None
    drift: np.ndarray | None = None

    def point(self, offset: np.ndarray | None) -> np.ndarray:
        """World position of a point fixed in the frame at local ``offset``."""
        return self.p if offset is None else self.p + self.R @ offset

    def point_jacobian(self, offset: np.ndarray | None) -> np.ndarray:
        """(3, nv) Jacobian of a point fixed in the frame: ``J_v - [R r]_x J_w``."""
        Jv = self.J[:3]
        if offset is None:
            return Jv
        r = self.R @ offset
        Jw = self.J[3:]
        return Jv - skew(r) @ Jw

    def point_drift(self, offset: np.ndarray | None, v: np.ndarray) -> np.ndarray:
        """(3,) classical acceleration ``J_p' v`` of a point fixed in the frame.

        ``a_p = a_o + alpha x r + w x (w x r)`` with ``a = 0``.
        """
        if offset is None:
            return self.drift[:3]
        r = self.R @ offset
        w = self.J[3:] @ v
        return self.drift[:3] + cross3(self.drift[3:], r) + cross3(w, cross3(w, r))


@dataclass(slots=True)
class Snapshot:
    """Everything one state ``(q, v)`` determines, computed once.

    Attributes
    ----------
    q, v : configuration (nq,) and velocity (nv,); ``v`` is zero for a
        kinematics-only snapshot.
    M : (nv, nv) joint-space inertia matrix, or ``None`` (kinematics only).
    h : (nv,) Coriolis, centrifugal and gravity terms (Aghili eq. 19).
    g : (nv,) gravity torque (the part of ``h`` at ``v = 0``).
    kinetic, potential : energies (J); potential with the model's own zero.
    frames : kinematics of the frames that were asked for.

    derived : quantities a state determines that a higher layer derives from
        the snapshot once and shares (e.g. a rolling contact's geometry, read by
        its two constraint rows and by monitors), keyed by their owner. They
        live and die with the snapshot, so they can never go stale.

    Notes
    -----
    Sensor readings are not part of a snapshot: a controller finds them in the
    simulator's :class:`~pfaff.simulate.record.StepRecord`.
    """

    q: np.ndarray
    v: np.ndarray
    M: np.ndarray | None = None
    h: np.ndarray | None = None
    g: np.ndarray | None = None
    kinetic: float = 0.0
    potential: float = 0.0
    frames: dict[str, FrameState] = field(default_factory=dict)
    derived: dict = field(default_factory=dict)

    @property
    def energy(self) -> float:
        """Total mechanical energy ``T + V``."""
        return self.kinetic + self.potential

    def frame(self, name: str) -> FrameState:
        try:
            return self.frames[name]
        except KeyError:
            raise KeyError(
                f"frame {name!r} was not computed in this snapshot; "
                f"computed: {sorted(self.frames)}"
            ) from None


class Mechanism(ABC):
    """An unconstrained multibody system.

    Subclasses provide the dimensions, the frame names and :meth:`compute`.
    Configurations are advanced with :meth:`integrate`, never ``q + v dt``.
    """

    nq: int
    nv: int
    name: str = "mechanism"

    @property
    @abstractmethod
    def frame_names(self) -> Sequence[str]:
        """Names of the frames this mechanism can report."""

    @abstractmethod
    def compute(
        self,
        q: np.ndarray,
        v: np.ndarray | None = None,
        frames: Iterable[str] = (),
        dynamics: bool = True,
        extras: bool = True,
    ) -> Snapshot:
        """Compute the snapshot at ``(q, v)``.

        Parameters
        ----------
        q : configuration (nq,).
        v : velocity (nv,); ``None`` means zero velocity.
        frames : names of the frames whose kinematics (placement, Jacobian,
            drift) are needed.
        dynamics : if False, only the frame kinematics are computed (used by
            the position correction, which needs no inertia).
        extras : if False, the gravity torque ``g`` and the energies are
            skipped (the intermediate stages of an integrator need only M, h).
        """

    def neutral(self) -> np.ndarray:
        """A reference configuration (zeros for vector spaces)."""
        return np.zeros(self.nq)

    def integrate(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """Configuration reached from ``q`` along the tangent vector ``dv``."""
        return q + dv

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """Tangent vector ``dv`` with ``integrate(q0, dv) = q1``."""
        return q1 - q0

    def dintegrate_dv(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """(nv, nv) derivative of ``integrate(q, dv)`` with respect to ``dv`` (identity
        for vector spaces; the right Jacobian of the exponential on a Lie group)."""
        return np.eye(self.nv)

    def check_frames(self, names: Iterable[str]) -> None:
        """Raise :class:`ModelError` naming any unknown frame and the valid ones."""
        known = set(self.frame_names)
        bad = [n for n in names if n not in known]
        if bad:
            raise ModelError(
                f"unknown frame {bad[0]!r} in {self.name}; valid frames: "
                + ", ".join(sorted(known))
            )

    def check_state(self, q: np.ndarray, v: np.ndarray | None = None) -> None:
        """Raise :class:`ModelError` if ``q`` or ``v`` has the wrong size."""
        if np.shape(q) != (self.nq,):
            raise ModelError(f"q has shape {np.shape(q)}, expected ({self.nq},)")
        if v is not None and np.shape(v) != (self.nv,):
            raise ModelError(f"v has shape {np.shape(v)}, expected ({self.nv},)")


def frame_ids(model: pinocchio.Model) -> dict[str, int]:
    """Each frame name of ``model`` and the index it names: the last frame of that name
    (Pinocchio keeps one frame per name and type, so a URDF's joint and link of one name
    are two frames). The one rule of every lookup by name, the compiled core's
    (``ModelBuilder::new_frame``) included."""
    return {f.name: i for i, f in enumerate(model.frames)}


def frame_index(model: pinocchio.Model, name: str) -> int:
    """The index of the frame ``name`` of ``model`` (:func:`frame_ids`' rule).

    Raises
    ------
    ModelError
        naming ``name`` and the model's frames when it has none of that name.
    """
    ids = frame_ids(model)
    if name not in ids:
        raise ModelError(f"unknown frame {name!r}; valid frames: {', '.join(ids)}")
    return ids[name]
