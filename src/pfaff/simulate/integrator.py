"""Time stepping on the constraint manifold.

One step: fixed-step RK4 (default) or an adaptive SciPy integrator over
``[t, t + dt]`` on the projection direct dynamics (Aghili eq. 22/25), then
the drift correction of design.md Sec. 3 (Newton-Raphson on the positions,
M-metric projection of the velocity). A sampled-data controller is called at
its own period ``control_dt`` and its torque is held in between (zero-order
hold).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pfaff import core
from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintEval, ConstraintSet
from pfaff.linalg import LastSVD, single_threaded_blas
from pfaff.mechanism.base import Snapshot
from pfaff.simulate import core_engine
from pfaff.simulate.correction import correct_state, newton_project, project_velocity
from pfaff.simulate.forces import ForceElement, ForceSet
from pfaff.simulate.trajectory import (
    InitialStateError,
    SimulationError,
    SimulationInterrupted,
    Trajectory,
)

Controller = Callable[[float, Snapshot], np.ndarray]
ADAPTIVE = ("RK45", "DOP853", "Radau")
INTEGRATORS = ("rk4", *ADAPTIVE)
ENGINES = ("auto", "core", "numpy")


_ENGINE_OVERRIDE: list[str] = []


@contextlib.contextmanager
def use_engine(engine: str):
    """Within the block, every :func:`simulate` runs with ``engine`` in place of its
    ``SimOptions.engine`` (``"numpy"`` or ``"auto"``: the two engines side by side on a
    whole scenario, in the tests and ``pfaff bench``)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; valid: {', '.join(ENGINES)}")
    _ENGINE_OVERRIDE.append(engine)
    try:
        yield
    finally:
        _ENGINE_OVERRIDE.pop()


_ABELIAN = (
    "JointModelRUBX",
    "JointModelRUBY",
    "JointModelRUBZ",
    "JointModelRevoluteUnboundedUnaligned",
)


def _non_abelian_joints(mech) -> list[str]:
    """Joints whose configuration space is a non-commutative Lie group (ball, free,
    planar): there the Munthe-Kaas stages differ from plain RK4 stages. A continuous
    joint (the circle, nq 2 / nv 1) commutes, so the two agree on it."""
    model = getattr(mech, "model", None)
    if model is None or mech.nq == mech.nv:
        return []
    return [
        model.names[j]
        for j in range(1, model.njoints)
        if model.joints[j].nq != model.joints[j].nv and model.joints[j].shortname() not in _ABELIAN
    ]


def choose_engine(cset: ConstraintSet, opt: SimOptions, stop=None, forces=()) -> str:
    """The engine that runs ``cset`` under ``opt``: ``"core"`` or ``"numpy"``.

    Raises ValueError when ``engine="core"`` is asked for a system the core cannot run.
    """
    engine = _ENGINE_OVERRIDE[-1] if _ENGINE_OVERRIDE else opt.engine
    reason = core.unsupported_reason(cset)
    lie = _non_abelian_joints(cset.mechanism)
    if reason is None and lie:
        reason = (
            f"joints on a non-commutative Lie group ({', '.join(lie)}): the NumPy engine's "
            "RK4 stages are in Runge-Kutta-Munthe-Kaas form there, the core's are not yet"
        )
    if reason is None and opt.integrator != "rk4":
        reason = f"integrator {opt.integrator!r} (the core runs rk4)"
    if reason is None and opt.method != "projection":
        reason = f"method {opt.method!r} (the core runs the projection method)"
    if reason is None and stop is not None:
        reason = "a stop callback (checked at every step in Python)"
    if reason is None and forces:
        reason = "force elements (evaluated at every stage in Python)"
    if engine == "core" and reason is not None:
        raise ValueError(f"engine='core' cannot run this system: {reason}")
    if engine == "numpy" or reason is not None:
        return "numpy"
    return "core"


@dataclass
class SimOptions:
    """Options of :func:`simulate`.

    Attributes
    ----------
    dt : integrator step [s] (> 0).
    integrator : ``"rk4"`` (fixed step) or a SciPy ``solve_ivp`` method
        (``"RK45"``, ``"DOP853"``, ``"Radau"``) run over each step interval; an
        interval whose velocity jumps (a switch of branch at a fold of the
        constraint manifold) stops the run with a :class:`SimulationError`
        naming the time (see ``_branch_check``).
    rtol, atol : tolerances of the adaptive integrator.
    control_dt : controller period [s]; default ``dt``.
    position_tol : Newton-Raphson tolerance on ``max |Phi|`` (units of Phi).
    max_newton : iteration bound of the position correction.
    newton_step_tol : the position correction also iterates until its next
        Newton step is at most this in every coordinate of ``q`` (units of q;
        see :func:`~pfaff.simulate.newton_project`): near a fold ``|Phi|``
        small does not mean ``q`` close to the manifold.
    position_floor : round-off level of ``Phi`` (units of Phi, <= position_tol):
        no Newton step is taken from ``max |Phi| <= position_floor``.
    rank_tol : absolute singular-value threshold of the SVD (units of A).
    variant : constraint inertia matrix ``"Mc"``, ``"Mc1"`` or ``"Mc2"``.
    method : ``"projection"`` (Aghili) or ``"kkt"`` (baseline for comparison).
    record_every : record one sample every this many steps.
    potential_offset : subtracted from the mechanism's potential energy
        (choose the zero of the potential).
    progress : show a progress bar (default: when stderr is a terminal).
    engine : ``"core"`` (the compiled step core, :mod:`pfaff.core`), ``"numpy"``
        (the reference engine) or ``"auto"``: the core whenever it can run the
        system (Pinocchio mechanism, built-in constraints, RK4, projection method,
        no ``stop`` callback), else NumPy. ``Trajectory.engine`` says which ran.
    """

    dt: float = 1e-3
    integrator: str = "rk4"
    rtol: float = 1e-10
    atol: float = 1e-12
    control_dt: float | None = None
    position_tol: float = 1e-12
    max_newton: int = 20
    newton_step_tol: float = 1e-14
    position_floor: float = 1e-15
    rank_tol: float = 1e-9
    variant: str = "Mc"
    method: str = "projection"
    record_every: int = 1
    potential_offset: float = 0.0
    progress: bool | None = None
    engine: str = "auto"

    def validate(self) -> None:
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"dt must be > 0 s, got {self.dt!r}")
        if self.control_dt is not None and not self.control_dt >= self.dt:
            raise ValueError(f"control_dt must be >= dt = {self.dt} s, got {self.control_dt!r}")
        if self.integrator not in INTEGRATORS:
            raise ValueError(
                f"unknown integrator {self.integrator!r}; valid: {', '.join(INTEGRATORS)}"
            )
        if self.variant not in dyn.VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; valid: {', '.join(dyn.VARIANTS)}")
        if self.method not in ("projection", "kkt"):
            raise ValueError(f"unknown method {self.method!r}; valid: projection, kkt")
        if not self.position_tol > 0 or not self.rank_tol > 0 or not self.newton_step_tol > 0:
            raise ValueError("position_tol, newton_step_tol and rank_tol must be > 0")
        if not 0.0 <= self.position_floor <= self.position_tol:
            raise ValueError(
                f"position_floor must be in [0, position_tol = {self.position_tol:g}], "
                f"got {self.position_floor!r}"
            )
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; valid: {', '.join(ENGINES)}")
        if int(self.record_every) < 1:
            raise ValueError(f"record_every must be >= 1, got {self.record_every!r}")


class _Evaluator:
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

    def __call__(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray, t: float = 0.0):
        snap, ev = self.terms(q, v, extras=False)
        if self.forces is not None:
            Q, self.power = self.forces.evaluate(t, snap)
            tau = tau + Q
        return self.accel(snap, ev, tau, qr=True)[0]


def _check_finite(name: str, x: np.ndarray, t: float, step: int, traj: Trajectory) -> None:
    if not np.isfinite(x).all():
        bad = int(np.flatnonzero(~np.isfinite(x))[0])
        raise SimulationError(
            f"non-finite {name}[{bad}] = {x[bad]} at t = {t:.6g} s (step {step})", traj
        )


def _rk4(ev: _Evaluator, q, v, a1, tau, dt, t=0.0, p1=0.0):
    """One RK4 step; on a Lie group (nq != nv) in Runge-Kutta-Munthe-Kaas form.

    The stages move ``q`` along ``theta`` in the tangent space at ``q``:
    ``q_i = integrate(q, theta_i)``, whose rate is ``theta' = J(theta)^-1 v_i`` with
    ``J = d integrate / d theta`` (the exact inverse of dexp). With ``theta' = v_i``
    instead -- right only on vector spaces -- the scheme falls to second order on
    rotations (ball and free joints). Also returns the work of the
    non-conservative force elements over the step, ``dt (p1 + 2 p2 + 2 p3 + p4) / 6``
    (RK4 on ``w' = Q_nc . v``).
    """
    mech = ev.mech
    lie = mech.nq != mech.nv

    def rate(theta, vi):
        return np.linalg.solve(mech.dintegrate_dv(q, theta), vi) if lie else vi

    h2 = 0.5 * dt
    v2 = v + h2 * a1
    a2 = ev(mech.integrate(q, h2 * v), v2, tau, t + h2)
    p2 = ev.power
    d2 = rate(h2 * v, v2)
    v3 = v + h2 * a2
    a3 = ev(mech.integrate(q, h2 * d2), v3, tau, t + h2)
    p3 = ev.power
    d3 = rate(h2 * d2, v3)
    v4 = v + dt * a3
    a4 = ev(mech.integrate(q, dt * d3), v4, tau, t + dt)
    d4 = rate(dt * d3, v4)
    w = dt * (p1 + 2 * p2 + 2 * p3 + ev.power) / 6.0
    vbar = (v + 2 * d2 + 2 * d3 + d4) / 6.0
    return mech.integrate(q, dt * vbar), v + dt * (a1 + 2 * a2 + 2 * a3 + a4) / 6.0, vbar, w


def _adaptive(ev: _Evaluator, q, v, tau, dt, opt: SimOptions, t=0.0):
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
    _branch_check(v, v1, f(0.0, sol.y[:, 0])[n : 2 * n], f(dt, y)[n : 2 * n], dt)
    return q1, v1, 0.5 * (v + v1), float(y[-1])


def _branch_check(v0, v1, a0, a1, dt, ratio: float = 0.05) -> None:
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
        raise RuntimeError(
            f"branch check: the velocity jumped by {d:.3g} within one step (scale {scale:.3g}): "
            f"the motion switched branch at a fold of the constraint manifold "
            f"(sigma_min(A) -> 0); the adaptive integrators follow the level set of Phi "
            f"onto the other branch -- use integrator='rk4'"
        )


def project_state(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray, opt: SimOptions | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Bring an initial state onto the constraint manifold (positions, then velocity).

    Raises :class:`InitialStateError` when Newton-Raphson cannot reach
    ``max(1e3 position_tol, 1e-9)``.
    """
    opt = opt or SimOptions()
    mech = cset.mechanism
    mech.check_state(q, v)
    q1, err, it, _ = newton_project(
        cset,
        q,
        opt.position_tol,
        50,
        opt.rank_tol,
        step_tol=opt.newton_step_tol,
        floor=opt.position_floor,
    )
    if not err <= max(1e3 * opt.position_tol, 1e-9):
        raise InitialStateError(
            f"the initial state cannot be brought onto the constraint manifold: "
            f"max |Phi| = {err:.3g} after {it} Newton-Raphson iterations"
        )
    snap = mech.compute(q1, v, cset.frames)
    ev = cset.evaluate(snap)
    return q1, project_velocity(v, ev.A, snap.M, opt.rank_tol)


def simulate(
    cset: ConstraintSet,
    q0: np.ndarray,
    v0: np.ndarray,
    t_end: float,
    options: SimOptions | None = None,
    controller: Controller | None = None,
    tau: np.ndarray | None = None,
    stop: Callable[[float, Snapshot, ConstraintEval], bool] | None = None,
    t0: float = 0.0,
    forces: Sequence[ForceElement] = (),
) -> Trajectory:
    """Simulate a constrained mechanism from ``(q0, v0)`` to ``t_end``.

    Parameters
    ----------
    cset : the constraints (and, through them, the mechanism).
    q0, v0 : initial state; projected onto the constraint manifold first.
    t_end : final time [s].
    options : integrator, tolerances, controller period (see :class:`SimOptions`).
    controller : ``tau = controller(t, snapshot)``, called every ``control_dt``
        and held in between; if it has a ``signals`` dict, it is recorded.
        Before each call ``snapshot.measured`` holds the force-sensor
        readings (unless the controller sets ``needs_sensors = False``).
    tau : constant torque when there is no controller (default zero).
    stop : ``stop(t, snapshot, constraint_eval) -> bool``, checked at every
        step after the sample is recorded: True ends the run there (an event,
        e.g. a contact to switch on); ``trajectory.stopped_at`` holds the time.
    t0 : time of the initial state (for runs chained across events).
    forces : force elements (:mod:`pfaff.simulate.forces`: ``PointSpring``,
        ``PointDamper``, ``JointSpring``, ``JointDamper``, ``AppliedForce``),
        evaluated at every integrator stage and added to the torque. Spring
        potentials are part of the recorded ``potential`` and ``energy``; the
        work of the others is the series ``force_work``, so that
        ``energy - energy[0] = work + force_work + correction_energy``.

    Returns
    -------
    Trajectory. On failure a :class:`SimulationError` carries the partial one;
    a Ctrl-C raises :class:`SimulationInterrupted` (a ``KeyboardInterrupt``)
    carrying it. An error in the data (a ``ValueError``, e.g. a controller
    refusing its task) before the first step propagates as it is; after the
    first step it is a failed simulation (``SimulationError``), as is a
    ``LinAlgError`` or floating-point error at any time. Joints that left the
    model's position limits are listed once each in ``trajectory.warnings``.
    """
    opt = options or SimOptions()
    opt.validate()
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"t_end must be > 0 s, got {t_end!r}")
    mech = cset.mechanism
    q0 = np.asarray(q0, dtype=float)
    v0 = np.asarray(v0, dtype=float)
    mech.check_state(q0, v0)
    if opt.integrator in ADAPTIVE and mech.nq != mech.nv:
        raise ValueError(f"adaptive integrators need nq == nv; {mech.name} has a Lie-group q")
    q, v = project_state(cset, q0, v0, opt)
    ctrl_frames = tuple(getattr(controller, "frames", ()))
    mech.check_frames(ctrl_frames)
    fset = ForceSet(mech, forces)
    ev = _Evaluator(cset, opt, ctrl_frames, fset)
    unilateral = cset.unilateral_rows
    m, m_h = cset.dim, len(cset.holonomic_rows)
    traj = Trajectory(mech.nq, mech.nv, m, m_h)
    tau_held = np.zeros(mech.nv) if tau is None else np.asarray(tau, dtype=float).copy()
    control_dt = opt.control_dt or opt.dt
    n_steps = int(round(t_end / opt.dt))
    work = corr = force_work = 0.0
    next_ctrl = t0
    newton_it = 0
    show = sys.stderr.isatty() if opt.progress is None else opt.progress
    bar = None
    if show and n_steps >= 2000:
        from tqdm import tqdm

        bar = tqdm(total=n_steps, desc=mech.name, unit="step", mininterval=0.5, leave=False)
    traj.engine = choose_engine(cset, opt, stop, tuple(forces))
    blas = single_threaded_blas()  # small matrices: one BLAS thread (restored below)
    t, k = t0, 0
    try:
        if traj.engine == "core":
            frames = tuple(dict.fromkeys((*cset.frames, *ctrl_frames)))
            return core_engine.run(
                cset, q, v, n_steps, opt, controller, tau_held, t0, frames, traj, bar
            )
        for k in range(n_steps + 1):
            t = t0 + k * opt.dt
            snap, cev = ev.terms(q, v)
            proj = None
            Q, p1 = fset.evaluate(t, snap) if fset else (0.0, 0.0)
            if controller is not None and t >= next_ctrl - 1e-9 * opt.dt:
                if getattr(controller, "needs_sensors", True):
                    snap.measured, proj = _sensors(snap, cev, tau_held + Q, ev)
                tau_held = np.asarray(controller(t, snap), dtype=float)
                if tau_held.shape != (mech.nv,):
                    raise ValueError(
                        f"controller returned a torque of shape {tau_held.shape}, "
                        f"expected ({mech.nv},)"
                    )
                _check_finite("controller torque", tau_held, t, k, traj)
                next_ctrl += control_dt
            tau_all = tau_held + Q  # controller torque and force elements
            try:
                a, proj = ev.accel(snap, cev, tau_all, proj)
            except np.linalg.LinAlgError as exc:
                raise SimulationError(
                    f"{opt.method} dynamics failed at t = {t:.6g} s (step {k}): {exc}", traj
                ) from None
            _check_finite("acceleration", a, t, k, traj)
            record = k % opt.record_every == 0 or k == n_steps
            forces = None
            if record or unilateral.size:
                forces = _forces(snap, cev, a, proj, tau_all, opt)
                if unilateral.size:
                    _check_contact(forces[1], unilateral, cset, t, k, traj)
            if record:
                _record(traj, t, snap, cev, a, forces, tau_held, opt, work, corr, newton_it)
                _record_forces(traj, fset, snap, force_work)
                if controller is not None and hasattr(controller, "signals"):
                    traj.append_signals(controller.signals)
            if k == n_steps:
                break
            if stop is not None and stop(t, snap, cev):
                if not record:
                    forces = forces or _forces(snap, cev, a, proj, tau_all, opt)
                    _record(traj, t, snap, cev, a, forces, tau_held, opt, work, corr, newton_it)
                _record_forces(traj, fset, snap, force_work)
                traj.stopped_at = t
                break
            try:
                if opt.integrator == "rk4":
                    q1, v1, vbar, w_nc = _rk4(ev, q, v, a, tau_held, opt.dt, t, p1)
                else:
                    q1, v1, vbar, w_nc = _adaptive(ev, q, v, tau_held, opt.dt, opt, t)
            except (np.linalg.LinAlgError, RuntimeError) as exc:
                raise SimulationError(
                    f"{opt.method} dynamics failed in the step from t = {t:.6g} s "
                    f"(step {k}): {exc}",
                    traj,
                ) from None
            if not (np.isfinite(q1).all() and np.isfinite(v1).all()):
                _check_finite("q", q1, t + opt.dt, k + 1, traj)
                _check_finite("v", v1, t + opt.dt, k + 1, traj)
            work += opt.dt * float(tau_held @ vbar)
            force_work += w_nc
            q1, v2, err, newton_it, dE = correct_state(cset, q1, v1, opt, ev.svd)
            corr += dE
            if err > opt.position_tol:
                traj.newton_failures += 1
                if not err <= 1e-6:
                    raise SimulationError(
                        f"position correction failed at t = {t + opt.dt:.6g} s (step {k + 1}): "
                        f"max |Phi| = {err:.3g} after {newton_it} iterations",
                        traj,
                    )
            q, v = q1, v2
            traj.steps = k + 1
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt:
        if traj.engine == "core":  # the core's steps so far
            k = traj.steps
            t = t0 + k * opt.dt
        traj.trim()
        raise SimulationInterrupted(
            f"interrupted at t = {t:.6g} s (step {k} of {n_steps})", traj
        ) from None
    except (ValueError, ArithmeticError) as exc:
        if traj.steps == 0 and not isinstance(exc, np.linalg.LinAlgError):
            raise  # bad data found before any step: the caller's error
        traj.trim()
        raise SimulationError(
            f"{type(exc).__name__} at t = {t:.6g} s (step {k}): {exc}", traj
        ) from exc
    finally:
        blas.restore_original_limits()
        traj.kkt_cond_max = ev.kkt_cond_max
        traj.warnings.extend(joint_limit_warnings(mech, traj))
        if bar is not None:
            bar.close()
    return traj


def joint_limit_warnings(mech, traj: Trajectory) -> list[str]:
    """One line per joint whose recorded position left the model's limits.

    Only for mechanisms that declare limits (``mech.position_limits()``, e.g.
    a URDF's ``<limit lower upper>``); unbounded coordinates are skipped.
    """
    limits = getattr(mech, "position_limits", None)
    q = np.asarray(traj.rows["q"], dtype=float)
    if limits is None or q.size == 0:
        return []
    out = []
    t = np.asarray(traj.rows["t"][: len(q)], dtype=float)
    for name, i, lo, hi in limits():
        x = q[:, i]
        bad = (x < lo - 1e-9) | (x > hi + 1e-9)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            out.append(
                f"joint {name!r} left its limits [{lo:.4g}, {hi:.4g}] at t = {t[first]:.4g} s "
                f"(range reached {x.min():.4g} .. {x.max():.4g})"
            )
    return out


def _sensors(snap, cev, tau, ev: _Evaluator):
    """What a force sensor reads just before the controller's update: the
    constraint force and multipliers produced by the torque held until now.

    Returns ``(readings, projection)``; the projection is reused for the step.
    """
    a, proj = ev.accel(snap, cev, tau)
    if proj is None:
        proj = dyn.projection(cev.A, cev.drift, ev.opt.rank_tol)
    F = dyn.constraint_force(snap.M, snap.h, tau, proj.P, a)
    return {"F": F, "lambda": dyn.projected_multipliers(proj, F)}, proj


def _forces(snap, cev, a, proj, tau, opt):
    """Constraint force and multipliers at a state: ``(F, lambda, proj)``."""
    if proj is None:  # KKT baseline: multipliers from the (regularised) KKT system
        proj = dyn.projection(cev.A, cev.drift, opt.rank_tol)
        K = dyn.kkt_matrix(snap.M, cev.A)
        rhs = np.concatenate([tau - snap.h, -cev.drift])
        lam = np.linalg.lstsq(K, rhs, rcond=None)[0][snap.M.shape[0] :]
        return cev.A.T @ lam, lam, proj
    F = dyn.constraint_force(snap.M, snap.h, tau, proj.P, a)
    return F, dyn.projected_multipliers(proj, F), proj


def _check_contact(lam, rows, cset, t, k, traj):
    """Stop when a unilateral contact would pull (normal force -lambda < 0)."""
    fn = -lam[rows]
    if np.any(fn < 0):
        i = int(rows[np.argmin(fn)])
        raise SimulationError(
            f"unilateral contact {cset.row_names[i]!r} would open at t = {t:.6g} s "
            f"(step {k}): normal force {fn.min():.3g} N < 0",
            traj,
        )


def _record_forces(traj, fset: ForceSet, snap, force_work: float) -> None:
    """The force elements' share of the last sample: spring potential (added to
    ``potential`` and ``energy``) and the work of the non-conservative ones."""
    V = fset.potential(snap) if fset else 0.0
    traj.rows["potential"][-1] += V
    traj.rows["energy"][-1] += V
    traj.append(force_work=force_work, force_potential=V)


def _record(traj, t, snap, cev, a, forces, tau, opt, work, corr, newton_it):
    F, lam, proj = forces
    potential = snap.potential - opt.potential_offset
    traj.append(
        t=t,
        q=snap.q,
        v=snap.v,
        a=a,
        tau=tau,
        F=F,
        phi=cev.phi,
        av=cev.A @ snap.v,
        rank=proj.rank,
        sigma_min=proj.sigma_min,
        kinetic=snap.kinetic,
        potential=potential,
        energy=snap.kinetic + potential,
        work=work,
        correction_energy=corr,
        newton_iterations=newton_it,
    )
    traj.rows["lambda"].append(lam)
