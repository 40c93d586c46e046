"""The partial derivatives the projection dynamics are built from, at one state.

- ``M a + h``: Pinocchio's analytic RNEA derivatives (Carpentier & Mansard 2018),
  ``d(M a + h)/dq`` and ``/dv`` at fixed ``a``.
- Constraints made of points fixed in frames (:class:`PointOnPlane`,
  :class:`PointsCoincide`, their :class:`Scaled` rows) and of joint coordinates
  (:class:`LockedJoint`, :class:`JointCoupling`: ``A`` constant, drift 0): analytic,
  from Pinocchio's kinematic Hessian (``dJ/dq``) and the derivatives of a point's
  classical acceleration (``getPointClassicAccelerationDerivatives``), world-aligned.
- Every other constraint kind: central differences of the constraint's own ``A`` and
  drift (step ``fd_step`` in the tangent space for q; in v the drift is quadratic,
  so its central difference is exact up to rounding). The result names these kinds
  (``DynamicsDerivatives.fd_constraints``).
- A mechanism given in closed form (:func:`pfaff.plant.is_plant`: its ``compute`` is
  its own, no Pinocchio derivative pass behind it): ``M a + h`` and every constraint's
  ``A`` and drift by central differences of its ``compute`` (steps ``fd_step`` in q,
  ``fd_step max(1, |v|_inf)`` in v), as the compiled core takes them
  (``src/cpp/algorithms/plant_derivatives.cpp``).

``q`` is perturbed in the tangent space (``integrate(q, delta)``), Pinocchio's
convention for all of its derivatives.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from pfaff.constraints.base import Constraint, ConstraintSet
from pfaff.constraints.coupling import JointCoupling, Scaled
from pfaff.constraints.library import LockedJoint, PointOnPlane, PointsCoincide
from pfaff.mechanism.base import Mechanism
from pfaff.plant import is_plant

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
_DATA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _datas(mechanism: Mechanism) -> tuple[pin.Data, pin.Data]:
    """Two workspaces of the mechanism's model (dynamics at ``a``, kinematics at a = 0),
    apart from the mechanism's own so that no snapshot is disturbed."""
    d = _DATA.get(mechanism)
    if d is None:
        model = mechanism.model
        d = _DATA[mechanism] = (model.createData(), model.createData())
    return d


def rnea_partials(
    mechanism: Mechanism, q: np.ndarray, v: np.ndarray, a: np.ndarray, fd_step: float = 1e-5
) -> tuple[np.ndarray, np.ndarray]:
    """``(d(M a + h)/dq, d(M a + h)/dv)`` at fixed ``a`` (nv, nv) each: analytic
    (``pin.computeRNEADerivatives``), or for a mechanism given in closed form central
    differences of its ``compute`` (:func:`plant_partials`)."""
    if is_plant(mechanism):
        return plant_partials(mechanism, q, v, a, fd_step)
    model, data = mechanism.model, _datas(mechanism)[0]
    dq, dv, _ = pin.computeRNEADerivatives(model, data, q, v, a)
    return np.array(dq), np.array(dv)


def v_step(v: np.ndarray, fd_step: float) -> float:
    """The step of a closed-form mechanism's central differences in v: ``fd_step``
    scaled with the speed (``max(1, |v|_inf)``), so that rounding stays at q's level."""
    return fd_step * max(1.0, float(np.abs(v).max(initial=0.0)))


def plant_partials(
    mech: Mechanism, q: np.ndarray, v: np.ndarray, a: np.ndarray, fd_step: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(d(M a + h)/dq, d(M a + h)/dv)`` of a mechanism given in closed form at fixed
    ``a``: central differences of its ``compute`` (``integrate(q, +-fd_step e_k)``,
    ``v +- v_step e_k``; ``h`` is quadratic in v, so that side is exact to rounding)."""
    nv, hv = mech.nv, v_step(v, fd_step)

    def f(qq, vv):
        s = mech.compute(qq, vv, (), extras=False)
        return s.M @ a + s.h

    dq, dv = np.empty((nv, nv)), np.empty((nv, nv))
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = fd_step
        dq[:, k] = (f(mech.integrate(q, e), v) - f(mech.integrate(q, -e), v)) / (2 * fd_step)
        e[k] = hv
        dv[:, k] = (f(q, v + e) - f(q, v - e)) / (2 * hv)
    return dq, dv


@dataclass
class ConstraintPartials:
    """Derivatives of the stacked ``A`` (m, nv) and drift (m,) at one state.

    Attributes
    ----------
    dA_dq : (nv, m, nv), ``dA_dq[k] = dA/d delta_k``.
    ddrift_dq, ddrift_dv : (m, nv).
    fd_kinds : names of the constraint kinds differentiated by central differences.
    """

    dA_dq: np.ndarray
    ddrift_dq: np.ndarray
    ddrift_dv: np.ndarray
    fd_kinds: tuple[str, ...]


def _hessian(H: np.ndarray, nv: int) -> np.ndarray:
    """Pinocchio's kinematic Hessian as ``(nv, 6, nv)``, ``[k] = dJ/dq_k``.

    Pinocchio holds it as a column-major Eigen tensor ``(6, nv, nv)`` whose last index
    is the derivative's; its Python binding (eigenpy) hands out that memory with
    row-major strides, so the array is re-read in memory order here (the finite
    difference tests of this module witness the layout).
    """
    return np.asarray(H).ravel(order="K").reshape(nv, nv, 6).transpose(0, 2, 1)


class _Points:
    """Partials of world points fixed in frames, computed once per (frame, offset)."""

    def __init__(self, mechanism: Mechanism, q: np.ndarray, v: np.ndarray) -> None:
        self.model = model = mechanism.model
        self.data = data = _datas(mechanism)[1]
        self.mech, self.nv = mechanism, model.nv
        pin.computeJointKinematicHessians(model, data, q)
        pin.computeForwardKinematicsDerivatives(model, data, q, v, np.zeros(model.nv))
        self._cache: dict = {}

    def __call__(self, frame: str, offset: np.ndarray | None):
        """``(J, dJ, dc_dq, dc_dv)``: the point's world Jacobian (3, nv), its derivative
        (nv, 3, nv) and the derivatives of its classical acceleration at ``a = 0`` (the
        drift ``J' v``) in q and v (3, nv)."""
        key = (frame, None if offset is None else tuple(offset))
        out = self._cache.get(key)
        if out is None:
            model, data = self.model, self.data
            f = model.frames[self.mech.frame_id(frame)]
            pl = f.placement if offset is None else f.placement * pin.SE3(np.eye(3), offset)
            jid = int(f.parentJoint)
            J = pin.getFrameJacobian(model, data, jid, pl, _LWA)[:3]
            H = _hessian(pin.getFrameKinematicHessian(model, data, jid, pl, _LWA), self.nv)
            acc = pin.getPointClassicAccelerationDerivatives(model, data, jid, pl, _LWA)
            out = self._cache[key] = (J, H[:, :3], np.array(acc[1]), np.array(acc[2]))
        return out


def _analytic(c: Constraint) -> bool:
    if isinstance(c, Scaled):
        return _analytic(c.inner)
    return type(c) in (PointOnPlane, PointsCoincide, LockedJoint, JointCoupling)


def _point_rows(c: Constraint, pts: _Points, nv: int):
    """``(dA (nv, dim, nv), ddrift_dq, ddrift_dv)`` of an analytic constraint block."""
    if isinstance(c, Scaled):
        dA, dq, dv = _point_rows(c.inner, pts, nv)
        return c.f[None, :, None] * dA, c.f[:, None] * dq, c.f[:, None] * dv
    if isinstance(c, (LockedJoint, JointCoupling)):  # A constant, drift identically zero
        return np.zeros((nv, c.dim, nv)), np.zeros((c.dim, nv)), np.zeros((c.dim, nv))
    if isinstance(c, PointOnPlane):
        D, terms = c.n[None], [(1.0, c.frame, c.point)]
    else:  # PointsCoincide: D (p1 - p2), the world target contributes nothing
        D, terms = c.D, [(1.0, c.frame1, c.point1)]
        if c.frame2 is not None:
            terms.append((-1.0, c.frame2, c.point2))
    dA, dq, dv = np.zeros((nv, c.dim, nv)), np.zeros((c.dim, nv)), np.zeros((c.dim, nv))
    for sign, frame, offset in terms:
        _, dJ, cq, cv = pts(frame, offset)
        dA += sign * (D @ dJ)
        dq += sign * (D @ cq)
        dv += sign * (D @ cv)
    return dA, dq, dv


def _fd_rows(
    mech: Mechanism, blocks, q: np.ndarray, v: np.ndarray, h: float, m: int, hv: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Central differences of the blocks' own ``A`` and drift (steps ``h`` in q, ``hv``
    in v, where the drift is quadratic)."""
    nv = mech.nv
    frames = tuple(dict.fromkeys(f for c, _ in blocks for f in c.frames))
    dA, dq, dv = np.zeros((nv, m, nv)), np.zeros((m, nv)), np.zeros((m, nv))

    def terms(qq, vv):
        snap = mech.compute(qq, vv, frames, dynamics=False)
        return [c.terms(snap)[:2] for c, _ in blocks]

    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        tp, tm = terms(mech.integrate(q, e), v), terms(mech.integrate(q, -e), v)
        e[k] = hv
        vp, vm = terms(q, v + e), terms(q, v - e)
        for (_, rows), (Ap, dp), (Am, dm), (_, wp), (_, wm) in zip(blocks, tp, tm, vp, vm):
            dA[k, rows] = (Ap - Am) / (2 * h)
            dq[rows, k] = (dp - dm) / (2 * h)
            dv[rows, k] = (wp - wm) / (2 * hv)
    return dA, dq, dv


def constraint_partials(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray, fd_step: float = 1e-5
) -> ConstraintPartials:
    """The derivatives of the set's stacked ``A`` and drift at ``(q, v)`` (of every
    constraint by central differences where the mechanism is given in closed form)."""
    mech, nv = cset.mechanism, cset.mechanism.nv
    m, plant = cset.dim, is_plant(mech)
    dA, dq, dv = np.zeros((nv, m, nv)), np.zeros((m, nv)), np.zeros((m, nv))
    pts, fd, k = None, [], 0
    for c in cset.constraints:
        rows = slice(k, k + c.dim)
        k += c.dim
        if plant or not _analytic(c):
            fd.append((c, rows))
            continue
        if pts is None:
            pts = _Points(mech, q, v)
        dA[:, rows], dq[rows], dv[rows] = _point_rows(c, pts, nv)
    if fd:
        # the drift is quadratic in v: any step is exact to rounding (1e-3 keeps it
        # least); a plant's is the step its M a + h take (plant_partials), as the core's
        hv = v_step(v, fd_step if plant else 1e-3)
        fA, fq, fv = _fd_rows(mech, fd, q, v, fd_step, m, hv)
        for _, rows in fd:
            dA[:, rows], dq[rows], dv[rows] = fA[:, rows], fq[rows], fv[rows]
    kinds = tuple(dict.fromkeys(type(c).__name__ for c, _ in fd))
    return ConstraintPartials(dA, dq, dv, kinds)
