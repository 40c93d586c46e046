"""The NumPy engine's stepping: per-state evaluation (snapshot -> constraints ->
acceleration), one RK4 step (Runge-Kutta-Munthe-Kaas on Lie groups) or one adaptive
SciPy interval, and the constraint force and sensor readings at a state."""

from __future__ import annotations

import numpy as np

from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintEval, ConstraintSet
from pfaff.linalg import LastSVD
from pfaff.mechanism.base import Snapshot
from pfaff.simulate.correction import correct_state, on_manifold
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.options import SimOptions
from pfaff.simulate.policy import branch_message
from pfaff.simulate.tableaus import Tableau


class Evaluator:
    """Per-state evaluation: snapshot -> constraints -> acceleration."""

    def __init__(
        self, cset: ConstraintSet, opt: SimOptions, extra_frames=(), forces: ForceSet | None = None
    ) -> None:
        self.cset, self.opt = cset, opt
        self.mech = cset.mechanism
        self.forces = forces or None
        self.power = 0.0  # power of the non-conservative force elements at the last call
        f_frames = forces.frames if forces else ()
        self.frames = tuple(dict.fromkeys((*cset.frames, *extra_frames, *f_frames)))
        self.kkt_cond_max = 0.0
        self.svd = LastSVD()  # A(q) factored once per q (correction, then the next step)

    def terms(
        self, q: np.ndarray, v: np.ndarray, extras: bool = True
    ) -> tuple[Snapshot, ConstraintEval]:
        snap = self.mech.compute(q, v, self.frames, extras=extras)
        return snap, self.cset.evaluate(snap)

    def accel(
        self, snap: Snapshot, ev: ConstraintEval, tau: np.ndarray, proj=None, qr: bool = False
    ):
        """Acceleration and the projection (None for the KKT baseline).

        ``proj``: the projection already taken at this state (one SVD per state).
        ``qr``: allow the certified full-rank QR (:func:`~pfaff.dynamics.projection`),
        for states whose singular values are not recorded (the RK4 stages).
        """
        if self.opt.method == "kkt":
            try:
                a, _, cond = dyn.kkt_dynamics(
                    snap.M, snap.h, tau, ev.A, ev.drift, self.opt.rank_tol
                )
            except dyn.KKTSingularError as exc:
                self.kkt_cond_max = max(self.kkt_cond_max, exc.cond)
                raise
            self.kkt_cond_max = max(self.kkt_cond_max, cond)
            return a, None
        if proj is None:
            proj = dyn.projection(ev.A, ev.drift, self.opt.rank_tol, svd_fn=self.svd, qr=qr)
        return dyn.direct_dynamics(snap.M, snap.h, tau, proj, self.opt.variant), proj

    def __call__(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray, t: float = 0.0, terms=None):
        """The acceleration at ``(q, v)``; ``terms``: :meth:`terms` there, if taken."""
        snap, ev = self.terms(q, v, extras=False) if terms is None else terms
        if self.forces is not None:
            Q, self.power = self.forces.evaluate(t, snap)
            tau = tau + Q
        return self.accel(snap, ev, tau, qr=True)[0]


def rk_step(ev: Evaluator, tab: Tableau, q, v, a1, tau, dt, t=0.0, p1=0.0):
    """One step of the explicit Runge-Kutta method ``tab``
    (:mod:`pfaff.simulate.tableaus`); on a Lie group (nq != nv) in
    Runge-Kutta-Munthe-Kaas form. ``a1``, ``p1``: the acceleration and the force
    elements' power at the step's start (its first stage).

    The stages move ``q`` along ``theta`` in the tangent space at ``q``:
    ``q_i = integrate(q, theta_i)``, whose rate is ``theta' = J(theta)^-1 v_i`` with
    ``J = d integrate / d theta`` (the exact inverse of dexp). With ``theta' = v_i``
    instead -- right only on vector spaces -- the scheme falls to second order on
    rotations (ball and free joints). With ``opt.stage_projection`` each stage state
    is first put on the manifold (:func:`~pfaff.simulate.correction.correct_state`,
    unless :func:`~pfaff.simulate.correction.on_manifold`; its rate then uses the
    projected ``v_i``): RK on ``y' = F(pi(y))``, smooth up to the folds where ``F``
    off the manifold is not. Also returns the work of the
    non-conservative force elements over the step, ``dt sum_i b_i p_i`` (the same
    method on ``w' = Q_nc . v``).

    Returns ``(q1, v1, vbar, w)``: ``vbar`` the mean velocity of the step
    (``q1 = integrate(q, dt vbar)``).
    """
    mech = ev.mech
    lie = mech.nq != mech.nv

    def rate(theta, vi):
        return np.linalg.solve(mech.dintegrate_dv(q, theta), vi) if lie else vi

    def stage(theta, vi, ti):
        qi = mech.integrate(q, theta)
        terms = None
        if ev.opt.stage_projection and ev.cset.constraints:
            terms = ev.terms(qi, vi, extras=False)
            if not on_manifold(ev.cset, *terms, vi, ev.opt):
                qi, vi, *_ = correct_state(ev.cset, qi, vi, ev.opt, ev.svd, terms)
                terms = None
        return ev(qi, vi, tau, ti, terms), ev.power, rate(theta, vi)

    def combine(row, xs):  # sum_j (dt a_ij) x_j over the nonzero a_ij of an explicit row
        out = None
        for aij, x in zip(row, xs):
            if aij:
                out = (dt * aij) * x if out is None else out + (dt * aij) * x
        return np.zeros_like(v) if out is None else out

    acc, power, d = [a1], [p1], [v]  # stage 0: the step's start, theta = 0
    for i in range(1, len(tab.b)):
        theta, dv = combine(tab.a[i][:i], d), combine(tab.a[i][:i], acc)
        ai, pi, di = stage(theta, v + dv, t + tab.c[i] * dt)
        acc.append(ai)
        power.append(pi)
        d.append(di)
    vbar = sum(bi * di for bi, di in zip(tab.b, d))
    v1 = v + dt * sum(bi * ai for bi, ai in zip(tab.b, acc))
    w = dt * sum(bi * pi for bi, pi in zip(tab.b, power))
    return mech.integrate(q, dt * vbar), v1, vbar, w


def adaptive_step(ev: Evaluator, q, v, tau, dt, opt: SimOptions, t=0.0):
    """One interval of a SciPy integrator on ``y = (q, v, w)``, ``w' = Q_nc . v``
    (the work of the non-conservative force elements)."""
    from scipy.integrate import solve_ivp

    n = q.size

    def f(s, y):
        a = ev(y[:n], y[n : 2 * n], tau, t + s)
        return np.concatenate([y[n : 2 * n], a, [ev.power]])

    sol = solve_ivp(
        f,
        (0.0, dt),
        np.concatenate([q, v, [0.0]]),
        method=opt.integrator,
        rtol=opt.rtol,
        atol=opt.atol,
    )
    if not sol.success:
        raise RuntimeError(sol.message)
    y = sol.y[:, -1]
    q1, v1 = y[:n], y[n : 2 * n]
    branch_check(v, v1, f(0.0, sol.y[:, 0])[n : 2 * n], f(dt, y)[n : 2 * n], dt)
    return q1, v1, 0.5 * (v + v1), float(y[-1])


def branch_check(v0, v1, a0, a1, dt, ratio: float = 0.05) -> None:
    """Refuse a step whose velocity jumped: the trapezoidal defect
    ``d = v1 - v0 - dt (a0 + a1) / 2`` of a smooth motion is ``dt^3 |v'''| / 12``;
    a crossing onto another branch at a fold of the constraint manifold turns
    the velocity within the interval, ``|d| ~ |v|``.

    The index-reduced ODE keeps ``Phi`` at its value after the last correction
    (round-off, ~1e-16): from such a state its exact solution leaves a fold
    along the level set ``Phi = c``, which turns onto the other branch (the
    adaptive integrators resolve that turn, while conserving the energy).
    Raises ``RuntimeError`` when ``max|d| > ratio (max|v| + dt max|a|)``.
    """
    d = float(np.abs(v1 - v0 - 0.5 * dt * (a0 + a1)).max())
    scale = max(np.abs(v0).max(), np.abs(v1).max()) + dt * max(np.abs(a0).max(), np.abs(a1).max())
    if d > ratio * scale:
        raise RuntimeError(branch_message(d, scale))


def sensor_readings(snap, cev, tau, ev: Evaluator, proj=None):
    """What a force sensor reads just before the controller's update: the
    constraint force and multipliers produced by the torque held until now.

    ``proj``: the projection already taken at this state (None: taken here).
    Returns ``(readings, projection)``; the projection is reused for the step.
    """
    a, proj = ev.accel(snap, cev, tau, proj)
    if proj is None:
        proj = dyn.projection(cev.A, cev.drift, ev.opt.rank_tol)
    F = dyn.constraint_force(snap.M, snap.h, tau, proj.P, a)
    return {"F": F, "lambda": dyn.projected_multipliers(proj, F)}, proj


def constraint_forces(snap, cev, a, proj, tau, opt):
    """Constraint force and multipliers at a state: ``(F, lambda, proj)``."""
    if proj is None:  # KKT baseline: multipliers from the (regularised) KKT system
        proj = dyn.projection(cev.A, cev.drift, opt.rank_tol)
        K = dyn.kkt_matrix(snap.M, cev.A)
        rhs = np.concatenate([tau - snap.h, -cev.drift])
        lam = np.linalg.lstsq(K, rhs, rcond=None)[0][snap.M.shape[0] :]
        return cev.A.T @ lam, lam, proj
    F = dyn.constraint_force(snap.M, snap.h, tau, proj.P, a)
    return F, dyn.projected_multipliers(proj, F), proj
