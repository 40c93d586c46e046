"""Forward-mode sensitivities of one NumPy-engine step (vector-space configurations).

The step of :mod:`pfaff.api.step_derivatives` is replayed operation by operation, and
with every state its tangent matrix (columns: the ``3 nv`` seed directions ``delta q``,
``delta v``, ``delta tau`` at the step's start):

- each stage's acceleration: the analytic derivatives of the projection dynamics
  (:meth:`pfaff.System.forward_dynamics_derivatives`), ``dA = a_q dQ + a_v dV + a_tau``;
- the Runge-Kutta combinations: linear;
- a stage or end-of-step correction (:func:`pfaff.simulate.correction.correct_state`):
  each Newton-Raphson iteration ``q <- q - A_h^+ Phi`` differentiated as it was taken
  (``dq <- P dq - d(A_h^+) Phi``, the pseudo-inverse derivative at constant rank), then
  the M-metric velocity projection ``v' = argmin |v' - v|_M, A v' = 0`` from its two
  conditions ``(I - P) v' = 0``, ``P M (v' - v) = 0`` differentiated as the dynamics are
  (:mod:`pfaff.derivatives.projection`), with ``dM`` from Pinocchio's RNEA and gravity
  derivatives.

The projections are differentiated as the maps they converge to: after the Newton
iterations the step took (none, when ``Phi`` is already at its round-off level) one
more is differentiated at the final ``q`` (``dq <- P dq``, the derivative of the
projection onto the manifold: what the step does to a perturbation that leaves it).
A stage the step leaves as it is (its ``Phi`` at round-off: on a straight branch, as
a parallelogram's) is projected by the step only when a perturbation moves its
position off the manifold: the seed columns with ``A_h dq != 0`` get the derivatives
of both projections, the others none. (There the step map has directional
derivatives only; these are the ones along the seed directions.)
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pfaff.derivatives.projection import (
    factors,
    pinv_derivative_apply,
    projector_derivative_apply,
)
from pfaff.derivatives.terms import constraint_partials
from pfaff.simulate.correction import correct_state, on_manifold, position_scale
from pfaff.simulate.tableaus import TABLEAUS


def _seeded(dA_dq: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``dA`` along the seed columns of the tangent matrix ``Q``: (K, m, n)."""
    return np.tensordot(Q.T, dA_dq, axes=(1, 0))


class Replay:
    """One step replayed with its tangent matrices (see the module docstring)."""

    def __init__(self, system, ev, opt) -> None:
        self.sys, self.ev, self.opt = system, ev, opt
        self.cset, self.mech = system.cset, system.mechanism
        self.data = self.mech.model.createData()

    def accel(self, q, v, tau, Q, V, T):
        d = self.sys.forward_dynamics_derivatives(q, v, tau)
        return d.a, d.da_dq @ Q + d.da_dv @ V + d.da_dtau @ T

    def _newton(self, q, Q):
        """newton_project's iterations (its stopping rules), each differentiated."""
        opt, mech, cset = self.opt, self.mech, self.cset
        snap = mech.compute(q, None, cset.frames, dynamics=False)
        scale = position_scale(cset, snap)
        floor, step_tol = opt.position_floor * scale, opt.newton_step_tol * scale
        rows = cset.holonomic_rows
        phi, A = cset.holonomic_terms(snap)
        err, it, last = (float(np.abs(phi).max()) if phi.size else 0.0), 0, np.inf
        while phi.size and it < opt.max_newton:
            f = factors(A, opt.rank_tol)
            dq = f.Ap @ phi
            step = float(np.abs(dq).max()) if dq.size else 0.0
            if not np.isfinite(step) or err <= floor:
                break
            if (err <= opt.position_tol and step <= step_tol) or (it and not step < last):
                break
            dA = _seeded(constraint_partials(cset, q, np.zeros(mech.nv)).dA_dq[:, rows], Q)
            ddq, _ = pinv_derivative_apply(f, dA, phi, np.zeros(mech.nv))
            Q = Q - f.V1 @ (f.V1.T @ Q) - ddq  # d(A^+ Phi) = d(A^+) Phi + A^+ A dq
            q = mech.integrate(q, -dq)
            phi, A = cset.holonomic_terms(mech.compute(q, None, cset.frames, dynamics=False))
            err, last, it = float(np.abs(phi).max()), step, it + 1
        if phi.size:  # the limit: one more iteration differentiated at the final q
            f = factors(A, opt.rank_tol)
            dA = _seeded(constraint_partials(cset, q, np.zeros(mech.nv)).dA_dq[:, rows], Q)
            ddq, _ = pinv_derivative_apply(f, dA, phi, np.zeros(mech.nv))
            Q = Q - f.V1 @ (f.V1.T @ Q) - ddq
        return q, Q

    def correct(self, q, v, Q, V, terms=None, taken=True):
        """correct_state(q, v) and the tangent matrices of its result; ``taken=False``:
        the step leaves (q, v) as they are (a stage on the manifold), only the tangent
        matrices are projected."""
        cset, mech, opt = self.cset, self.mech, self.opt
        snap, ev = terms if terms is not None else self.ev.terms(q, v, extras=False)
        if taken:
            q_ref, v_ref, *_ = correct_state(cset, q, v, opt, self.ev.svd, (snap, ev))
        else:
            q_ref, v_ref = q, v
        q, Q = self._newton(q, Q)
        if np.abs(q - q_ref).max() > 1e-12 * max(1.0, np.abs(q_ref).max()):
            raise RuntimeError("step sensitivities: the Newton replay left the step's path")
        # the projection's metric: M at the corrected q (correct_state), moving with Q
        snap = mech.compute(q, None, cset.frames, extras=False)
        A, M = cset.evaluate(snap).A, snap.M
        f = factors(A, opt.rank_tol)
        if f.rank == 0:
            return q_ref, v_ref, Q, V
        N, V1 = f.V2, f.V1
        Kc = N.T @ M @ N
        v1 = N @ np.linalg.solve(Kc, N.T @ (M @ v))
        w = v1 - v
        dA = _seeded(constraint_partials(cset, q, v1).dA_dq, Q)
        r1 = V1 @ (V1.T @ projector_derivative_apply(f, dA, v1))
        dMq, _, _ = pin.computeRNEADerivatives(mech.model, self.data, q, np.zeros(mech.nv), w)
        dMq = dMq - pin.computeGeneralizedGravityDerivatives(mech.model, self.data, q)
        r2 = M @ V - dMq @ Q - projector_derivative_apply(f, dA, M @ w)
        dv = r1 + N @ np.linalg.solve(Kc, N.T @ (r2 - M @ r1))
        if taken and np.abs(v1 - v_ref).max() > 1e-12 * max(1.0, np.abs(v_ref).max()):
            raise RuntimeError("step sensitivities: the velocity projection left the step's path")
        return q_ref, v_ref, Q, dv


def step_sensitivities(system, ev, opt, q, v, tau):
    """``(q1, v1, A, B)`` of one step by forward-mode sensitivities (nq == nv)."""
    nv = system.nv
    K = 3 * nv
    I0 = np.eye(nv, K)
    Q0, V0, T = I0, np.roll(I0, nv, axis=1), np.roll(I0, 2 * nv, axis=1)
    tab, dt = TABLEAUS[opt.integrator], opt.dt
    r = Replay(system, ev, opt)
    a1, A1 = r.accel(q, v, tau, Q0, V0, T)
    acc, Acc, d, D = [a1], [A1], [v], [V0]

    def combine(row, xs, zero):
        out = zero
        for aij, x in zip(row, xs):
            if aij:
                out = out + (dt * aij) * x
        return out

    for i in range(1, len(tab.b)):
        row = tab.a[i][:i]
        qi, Qi = q + combine(row, d, 0.0), Q0 + combine(row, D, 0.0)
        vi, Vi = v + combine(row, acc, 0.0), V0 + combine(row, Acc, 0.0)
        if opt.stage_projection and system.cset.constraints:
            terms = ev.terms(qi, vi, extras=False)
            if not on_manifold(system.cset, *terms, vi, opt):
                qi, vi, Qi, Vi = r.correct(qi, vi, Qi, Vi, terms)
            else:  # projected only along the seeds that leave the manifold
                _, _, Qp, Vp = r.correct(qi, vi, Qi, Vi, terms, taken=False)
                Ah = terms[1].A[terms[1].holonomic_rows]
                off = np.abs(Ah @ Qi).max(axis=0, initial=0.0)
                scale = np.abs(Ah).max(initial=0.0) * np.abs(Qi).max(axis=0, initial=0.0)
                leave = off > 1e-9 * scale
                Qi, Vi = np.where(leave, Qp, Qi), np.where(leave, Vp, Vi)
        ai, Ai = r.accel(qi, vi, tau, Qi, Vi, T)
        acc.append(ai)
        Acc.append(Ai)
        d.append(vi)
        D.append(Vi)
    vbar = sum(b * x for b, x in zip(tab.b, d))
    Vbar = sum(b * x for b, x in zip(tab.b, D))
    v1 = v + dt * sum(b * x for b, x in zip(tab.b, acc))
    V1 = V0 + dt * sum(b * x for b, x in zip(tab.b, Acc))
    q1, v1, Q1, V1 = r.correct(q + dt * vbar, v1, Q0 + dt * Vbar, V1)
    J = np.vstack([Q1, V1])
    return q1, v1, J[:, : 2 * nv], J[:, 2 * nv :]
