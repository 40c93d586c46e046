"""Constraint interface, ConstraintSet and finite-difference checks.

Holonomic constraints ``Phi(q) = 0`` give the residual ``Phi``, the Jacobian
``A = dPhi/dq`` (in the tangent space, size nv) and the drift ``A' v``;
Pfaffian constraints ``A(q) v = 0`` give only ``A`` and the drift. An
admissible acceleration satisfies ``A a = -drift`` (design.md Sec. 2,
Aghili eq. 11-16).

All quantities are read from a :class:`~pfaff.mechanism.Snapshot` so that
the frames are computed once per state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pfaff.mechanism.base import Mechanism, ModelError, Snapshot


def named_joint(mechanism: Mechanism, joint: str, nq: int, nv: int, need: str) -> tuple[int, int]:
    """``(idx_q, idx_v)`` of the joint named ``joint`` with ``nq`` coordinates and ``nv``
    velocities; ModelError naming the valid joints, or saying ``need`` (what the caller
    needs of the joint) where the mechanism has no named joints or the joint's sizes differ."""
    model = getattr(mechanism, "model", None)
    if model is None:
        raise ModelError(f"{mechanism.name} has no named joints: {need}")
    if not isinstance(joint, str) or not model.existJointName(joint):
        valid = ", ".join(model.names[1:])
        raise ModelError(f"unknown joint {joint!r} in {mechanism.name}; valid joints: {valid}")
    jm = model.joints[model.getJointId(joint)]
    if jm.nq != nq or jm.nv != nv:
        raise ModelError(f"joint {joint!r} has nq {jm.nq}, nv {jm.nv}: {need}")
    return jm.idx_q, jm.idx_v


class Constraint(ABC):
    """One constraint block of ``dim`` rows.

    Attributes
    ----------
    dim : number of rows.
    holonomic : True for ``Phi(q) = 0``, False for a Pfaffian ``A(q) v = 0``.
    unilateral : a contact that can only push: its normal force ``-lambda``
        must stay >= 0 (the side ``Phi >= 0`` is free). The dynamics treat the
        row as bilateral; a simulation stops when the contact would pull.
    frames : frame names whose kinematics the constraint reads.
    name : label used in reports and messages.
    """

    dim: int = 1
    holonomic: bool = True
    unilateral: bool = False
    frames: tuple[str, ...] = ()
    name: str = "constraint"
    #: False when both A and the drift are finite differences of the residual
    #: itself: comparing them with finite differences then says nothing.
    supplied_derivatives: bool = True

    def bind(self, mechanism: Mechanism) -> None:
        """Validate against a mechanism (frames, joints); raise :class:`ModelError`."""
        mechanism.check_frames(self.frames)

    def residual(self, snap: Snapshot) -> np.ndarray:
        """``Phi(q)`` (holonomic constraints only)."""
        raise NotImplementedError(f"{self.name} is Pfaffian: it has no residual")

    @abstractmethod
    def jacobian(self, snap: Snapshot) -> np.ndarray:
        """``A`` (dim, nv)."""

    @abstractmethod
    def drift(self, snap: Snapshot) -> np.ndarray:
        """``A'(q, v) v`` (dim,)."""

    def terms(self, snap: Snapshot) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(A, drift, Phi)`` at one state (``Phi`` None for a Pfaffian constraint).

        A constraint whose three quantities share work overrides this to compute
        them in one pass; :meth:`ConstraintSet.evaluate` calls it once per state.
        """
        phi = self.residual(snap) if self.holonomic else None
        return self.jacobian(snap), self.drift(snap), phi

    def write(
        self, snap: Snapshot, A: np.ndarray, drift: np.ndarray, phi: np.ndarray | None
    ) -> None:
        """Write :meth:`terms` into the given (dim, nv), (dim,), (dim,) arrays (views of
        the stacked ones; ``phi`` None for a Pfaffian constraint).

        A constraint that can fill them in place (no temporaries to copy) overrides this.
        """
        A[...], drift[...], res = self.terms(snap)
        if phi is not None:
            phi[...] = res


class TermsConstraint(Constraint):
    """A constraint computed in one pass: subclasses override :meth:`terms`, and
    the residual, Jacobian and drift are read from it."""

    def residual(self, snap: Snapshot) -> np.ndarray:
        return self.terms(snap)[2]

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        return self.terms(snap)[0]

    def drift(self, snap: Snapshot) -> np.ndarray:
        return self.terms(snap)[1]


class LinearRows(Constraint):
    """A constraint linear in the coordinates: its Jacobian is the constant ``_row``
    (1 x nv, set by ``bind``) and its drift is zero."""

    _row: np.ndarray

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        return self._row

    def drift(self, snap: Snapshot) -> np.ndarray:
        return np.zeros(1)


@dataclass(frozen=True)
class ConstraintEval:
    """A ConstraintSet evaluated at one state.

    Attributes
    ----------
    A : (m, nv) stacked Jacobian (redundant rows allowed).
    drift : (m,) stacked ``A' v``.
    phi : (m_h,) residuals of the holonomic rows, in the order of ``holonomic_rows``.
    holonomic_rows : indices of the holonomic rows in ``A``.
    """

    A: np.ndarray
    drift: np.ndarray
    phi: np.ndarray
    holonomic_rows: np.ndarray


class ConstraintSet:
    """A stack of constraints bound to one mechanism.

    Redundant rows are accepted: the dynamics decide the rank by SVD with an
    absolute threshold (Aghili Sec. 2).

    Parameters
    ----------
    mechanism : the mechanism the constraints act on.
    constraints : the constraint blocks, stacked in order.
    """

    def __init__(self, mechanism: Mechanism, constraints: Sequence[Constraint] = ()) -> None:
        self.mechanism = mechanism
        self.constraints: list[Constraint] = []
        self._layout: list[tuple[Constraint, slice, slice | None]] | None = None
        self._rows: np.ndarray | None = None
        for c in constraints:
            self.add(c)

    def add(self, c: Constraint) -> ConstraintSet:
        c.bind(self.mechanism)
        self.constraints.append(c)
        self._layout = self._rows = None
        return self

    def _blocks(self) -> list[tuple[Constraint, slice, slice | None]]:
        """Each constraint with its rows in ``A`` and (holonomic) in ``Phi``."""
        if self._layout is None:
            out, k, kh = [], 0, 0
            for c in self.constraints:
                hol = slice(kh, kh + c.dim) if c.holonomic else None
                out.append((c, slice(k, k + c.dim), hol))
                k += c.dim
                kh += c.dim if c.holonomic else 0
            self._layout = out
        return self._layout

    @property
    def dim(self) -> int:
        return sum(c.dim for c in self.constraints)

    @property
    def frames(self) -> tuple[str, ...]:
        out: list[str] = []
        for c in self.constraints:
            out += [f for f in c.frames if f not in out]
        return tuple(out)

    @property
    def holonomic_rows(self) -> np.ndarray:
        if self._rows is None:
            rows = [range(r.start, r.stop) for c, r, h in self._blocks() if h is not None]
            self._rows = np.array([i for r in rows for i in r], dtype=int)
        return self._rows

    @property
    def unilateral_rows(self) -> np.ndarray:
        rows = [range(r.start, r.stop) for c, r, _ in self._blocks() if c.unilateral]
        return np.array([i for r in rows for i in r], dtype=int)

    @property
    def row_names(self) -> list[str]:
        out = []
        for c in self.constraints:
            out += [c.name] if c.dim == 1 else [f"{c.name}[{i}]" for i in range(c.dim)]
        return out

    def evaluate(self, snap: Snapshot) -> ConstraintEval:
        """Stack ``A``, drift and the holonomic residuals at the snapshot's state."""
        nv = self.mechanism.nv
        if not self.constraints:
            z = np.zeros(0)
            return ConstraintEval(np.zeros((0, nv)), z, z, np.zeros(0, dtype=int))
        hol_rows = self.holonomic_rows
        blocks = self._blocks()
        m = blocks[-1][1].stop
        A, drift, phi = np.empty((m, nv)), np.empty(m), np.empty(hol_rows.size)
        for c, rows, hrows in blocks:
            c.write(snap, A[rows], drift[rows], None if hrows is None else phi[hrows])
        return ConstraintEval(A, drift, phi, hol_rows)

    def holonomic_terms(self, snap: Snapshot) -> tuple[np.ndarray, np.ndarray]:
        """``(Phi, A_h)`` of the holonomic rows from a (kinematics) snapshot."""
        ev = self.evaluate(snap)
        return ev.phi, ev.A[ev.holonomic_rows]

    def holonomic_terms_at(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`holonomic_terms` at ``q``: computes the kinematics itself.

        Returns ``(phi, A_h)``: used by the Newton-Raphson position correction.
        (``residual`` is reserved for :meth:`Constraint.residual`, ``Phi`` of a snapshot.)
        """
        return self.holonomic_terms(self.mechanism.compute(q, None, self.frames, dynamics=False))


def check_derivatives(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray, eps: float = 1e-6
) -> dict[str, float]:
    """Compare a set's Jacobian and drift with finite differences.

    The Jacobian of the holonomic rows is compared with central differences
    of ``Phi`` along each tangent direction; the drift with the central
    difference of ``A(q(t)) v`` along ``v``. Returns the largest absolute
    errors ``{"jacobian": ..., "drift": ...}``; with the default step both
    should be below about 1e-8 for smooth constraints of unit scale.
    """
    mech = cset.mechanism
    snap = mech.compute(q, v, cset.frames, dynamics=False)
    ev = cset.evaluate(snap)
    nv = mech.nv
    # rows whose derivatives the user supplied or the library computes analytically
    keep = np.concatenate(
        [np.full(c.dim, c.supplied_derivatives) for c in cset.constraints] or [np.zeros(0, bool)]
    )
    hol = ev.holonomic_rows[keep[ev.holonomic_rows]]
    err_J = 0.0
    if hol.size:
        Jfd = np.zeros((ev.holonomic_rows.size, nv))
        for i in range(nv):
            e = np.zeros(nv)
            e[i] = eps
            fp, _ = cset.holonomic_terms_at(mech.integrate(q, e))
            fm, _ = cset.holonomic_terms_at(mech.integrate(q, -e))
            Jfd[:, i] = (fp - fm) / (2 * eps)
        J_h = Jfd[keep[ev.holonomic_rows]]
        err_J = float(np.abs(J_h - ev.A[hol]).max())

    def A_at(qq: np.ndarray) -> np.ndarray:
        return cset.evaluate(mech.compute(qq, v, cset.frames, dynamics=False)).A

    err_d = 0.0
    if keep.any():
        dA = (A_at(mech.integrate(q, eps * v)) - A_at(mech.integrate(q, -eps * v))) / (2 * eps)
        err_d = float(np.abs((dA @ v - ev.drift)[keep]).max())
    return {"jacobian": err_J, "drift": err_d}


def require_consistent(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray, tol: float = 1e-6
) -> None:
    """Raise :class:`ModelError` if a given Jacobian or drift disagrees with its residual."""
    err = check_derivatives(cset, q, v)
    for what, e in err.items():
        if not e <= tol:
            raise ModelError(
                f"constraint {what} disagrees with finite differences by {e:.3g} (> {tol:g}); "
                "check the supplied function"
            )
