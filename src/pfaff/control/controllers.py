"""Sampled-data controllers ``tau = controller(t, record)`` (Aghili Sec. 7).

Each follows :class:`~pfaff.simulate.record.Controller`: it reads the state, the
constraint evaluation and the projection (P, A^+, N) from the simulator's
:class:`~pfaff.simulate.record.StepRecord` and evaluates no constraint and takes
no factorisation of A of its own.

:class:`ProjectedController` combines projected inverse-dynamics motion
control (eq. 45-46), optional constraint-force control (eq. 51-52), optional
passive joints (eq. 55-62, condition 64) and an optional weight W for mixed
units (Sec. 7.2). :class:`ComputedTorque` is the baseline that ignores the
projection. Each controller keeps its internal signals of the last sample in
``self.signals`` (recorded by :func:`pfaff.simulate.simulate`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pfaff import core
from pfaff.constraints.base import ConstraintSet
from pfaff.control.laws import (
    TASK_REL_TOL,
    TaskError,
    force_control_torque,
    passive_joint_torque,
    pidc_torque,
    task_acceleration,
    task_regularity,
)
from pfaff.control.references import Reference
from pfaff.control.tasks import FrameTask, JointTask, StackedTask, Task
from pfaff.linalg import DEFAULT_RANK_TOL, null_space
from pfaff.mechanism.base import ModelError
from pfaff.simulate.record import StepRecord

_NO_FORCE = np.zeros(0)  # the compiled laws' u_F without force control


def gain(value, k: int, what: str) -> np.ndarray:
    """A positive gain as a (k,) vector; refuses a wrong shape or sign."""
    g = np.asarray(value, dtype=float)
    if g.ndim == 0:
        g = np.full(k, float(g))
    if g.shape != (k,):
        raise ValueError(f"gain {what} must be a scalar or have shape ({k},), got {g.shape}")
    if not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise ValueError(f"gain {what} must be > 0, got {value!r}")
    return g


@dataclass
class ForceReference:
    """Desired multipliers and the PI gains of eq. (52).

    ``lambda_d(t)`` gives the desired multipliers (m,); ``F_d = A^T lambda_d``.
    For a unilateral plane contact the normal force is ``-lambda``.
    """

    lambda_d: Callable[[float], np.ndarray]
    kf: float = 0.5
    ki: float = 20.0

    def __post_init__(self) -> None:
        if not self.kf >= 0 or not self.ki >= 0:
            raise ValueError(f"force gains must be >= 0, got kf={self.kf!r}, ki={self.ki!r}")


def resolve_joints(mechanism, joints: Sequence[str | int]) -> np.ndarray:
    """Indices in v of joints given by name (one-dof joints) or index."""
    out = []
    for j in joints:
        if isinstance(j, str):
            if not hasattr(mechanism, "joint_v_index"):
                raise ModelError(f"{mechanism.name} has no joint names; give indices")
            out.append(mechanism.joint_v_index(j))
        else:
            if not 0 <= int(j) < mechanism.nv:
                raise ModelError(f"joint index {j} out of range; valid: 0..{mechanism.nv - 1}")
            out.append(int(j))
    return np.array(out, dtype=int)


def compiled_task(task: Task) -> tuple[tuple[str, ...], list] | None:
    """``(frames, blocks)`` of a task built from :class:`FrameTask` and
    :class:`JointTask` (alone or in one :class:`StackedTask`) for
    ``pfaff._papers.ControlKernel.set_task``: the frames the blocks read, in order, and
    one ``TaskBlock`` per part. None for any other task (it runs in Python)."""
    parts = task.tasks if type(task) is StackedTask else [task]
    frames: list[str] = []
    blocks = []
    for part in parts:
        if type(part) is FrameTask:
            if part.frame not in frames:
                frames.append(part.frame)
            i = frames.index(part.frame)
            blocks.append(core.task_block(i, part.rows, part.orientation, part.point))
        elif type(part) is JointTask:
            blocks.append(core.task_block(-1, part.idx))
        else:
            return None
    return tuple(frames), blocks


class ProjectedController:
    """PIDC (+ force control) (+ passive joints) on a constrained mechanism.

    Parameters
    ----------
    cset : the constraints (the controller's model of them).
    task : independent coordinates theta (k = dim N(A) rows).
    reference : ``t -> (theta_d, theta_d', theta_d'')``.
    kp, kd : PD gains G_P, G_D of eq. (46) (scalars or (k,)).
    force : desired multipliers and PI gains (hybrid control), or None.
    actuated : actuated joints (names or indices); the others are passive.
    W : weight of Sec. 7.2 for mixed units (motion channel), or None.
    compiled : evaluate eq. (45, 46, 51) in one call into the compiled core
        (``pfaff._papers.ControlKernel``) when it is built and W is None -- with the
        task's rows too when it is built from :class:`FrameTask` and :class:`JointTask`
        (alone or in one :class:`StackedTask`); False: the NumPy laws of
        :mod:`pfaff.control.laws` and the task's own methods (the reference; the tests
        hold the two to each other).
    """

    def __init__(
        self,
        cset: ConstraintSet,
        task: Task,
        reference: Reference,
        kp=100.0,
        kd=20.0,
        force: ForceReference | None = None,
        actuated: Sequence[str | int] | None = None,
        W: np.ndarray | None = None,
        rank_tol: float = DEFAULT_RANK_TOL,
        compiled: bool = True,
    ) -> None:
        self.cset, self.task, self.reference = cset, task, reference
        self.mech = cset.mechanism
        task.bind(self.mech)
        self.kp, self.kd = gain(kp, task.dim, "kp"), gain(kd, task.dim, "kd")
        self.force = force
        self.needs_sensors = force is not None  # the force sensor feeds eq. (52)
        self.actuated = None if actuated is None else resolve_joints(self.mech, actuated)
        if W is not None:
            W = np.asarray(W, dtype=float)
            if W.shape != (self.mech.nv, self.mech.nv):
                raise ValueError(f"W must be {self.mech.nv}x{self.mech.nv}, got {W.shape}")
        self.W, self.rank_tol = W, rank_tol
        # the compiled laws (pfaff._papers) where they apply: no weight W
        self._kernel = core.control_kernel() if compiled and W is None else None
        # the frames a compiled task reads (None: the task's rows run in Python)
        rows = None if self._kernel is None else compiled_task(task)
        self._task_frames = None
        if rows is not None:
            self._task_frames, blocks = rows
            self._kernel.set_task(blocks)
        self.frames = tuple(dict.fromkeys((*cset.frames, *task.frames)))
        self.signals: dict[str, float | np.ndarray] = {}
        self._integral = np.zeros(cset.dim)
        self._lam_cmd: np.ndarray | None = None
        self._t_last: float | None = None

    def check(self, q: np.ndarray) -> None:
        """Refuse a task that does not parametrise N(A) at ``q`` (raise :class:`TaskError`)."""
        snap = self.mech.compute(q, np.zeros(self.mech.nv), self.frames)
        A = self.cset.evaluate(snap).A
        N = null_space(A, self.rank_tol)
        J = self.task.jacobian(snap)
        if J.shape[0] != N.shape[1]:
            raise TaskError(
                f"the task has {J.shape[0]} coordinates but N(A) has dimension {N.shape[1]}: "
                "Lambda cannot span N(A)"
            )
        s, tol = task_regularity(J, N)
        if s.size and not s[-1] > tol:
            raise TaskError(
                f"the task coordinates do not parametrise N(A) here: J_theta N is singular "
                f"(smallest singular value {s[-1]:.3g} <= {tol:.3g} = "
                f"{TASK_REL_TOL:g} ||J_theta||_F)"
            )

    def __call__(self, t: float, rec: StepRecord) -> np.ndarray:
        snap, cev = rec.snap, rec.constraints
        proj = rec.projection
        N = rec.N
        task = self.task
        th_d, dth_d, ddth_d = (np.asarray(x, dtype=float) for x in self.reference(t))
        sig = {"task_error": None, "task_regular": 0.0}
        u_F = None if self.force is None else self._force_command(t, rec, sig)
        force = _NO_FORCE if u_F is None else u_F
        if self._task_frames is not None:  # the task's rows and eq. (45, 46, 51) compiled
            frames = [(f.p, f.R, f.J, f.drift) for f in map(snap.frame, self._task_frames)]
            tau, u_p, task_ok, e = self._kernel.task_law(
                frames, snap.q, snap.v, th_d, dth_d, ddth_d, self.kp, self.kd, snap.M, snap.h,
                proj.V1, proj.Cv, N, TASK_REL_TOL, force,
            )  # fmt: skip
            sig["task_error"] = e
        else:
            J = task.jacobian(snap)
            e = sig["task_error"] = task.error(th_d, snap)
            rhs = ddth_d + self.kd * (dth_d - J @ snap.v) + self.kp * e
            if self._kernel is not None:  # eq. (45, 46, 51) in one call into pfaff._papers
                tau, u_p, task_ok = self._kernel(
                    snap.M, snap.h, proj.V1, proj.Cv, N, J, task.drift(snap), rhs,
                    TASK_REL_TOL, force,
                )  # fmt: skip
            else:  # the reference: pfaff.control.laws, equation by equation
                u_p, task_ok = task_acceleration(J, task.drift(snap), N, proj.Cv, rhs)
                tau = pidc_torque(snap.M, snap.h, proj.P, u_p, cev.A, self.W, self.rank_tol)
                if u_F is not None:
                    tau = tau + force_control_torque(snap.M, snap.h, proj, tau, u_F)
        sig["task_regular"] = float(task_ok)
        if self.actuated is not None:
            tau, sigma, resid = passive_joint_torque(proj.P, self.actuated, tau, N)
            sig["controllability_sigma"] = sigma
            sig["controllable"] = float(sigma > self.rank_tol)
            sig["passive_torque"] = resid
        sig["u_p"] = u_p
        self.signals = sig
        return tau

    def _force_command(self, t: float, rec: StepRecord, sig) -> np.ndarray:
        """``u_F = A^T lambda_u`` of eq. (51) with the PI law (52) on the measured force.

        The force sensor reads the force the previous torque produced; it is
        compared with the force that torque was commanded to produce (the
        reading lags the command by one sample), so a step in lambda_d is
        followed without a kick.
        """
        lam_d = np.asarray(self.force.lambda_d(t), dtype=float)
        if lam_d.shape != (self.cset.dim,):
            raise ValueError(f"lambda_d(t) must have shape ({self.cset.dim},), got {lam_d.shape}")
        lam_meas = None if rec.sensors is None else rec.sensors.get("lambda")
        if lam_meas is not None and self._lam_cmd is not None:
            e_lam = self._lam_cmd - lam_meas
            self._integral += e_lam * (t - self._t_last)
        else:  # no reading yet (or no sensor): no error, nothing to integrate
            e_lam = np.zeros_like(lam_d)
        lam_u = lam_d + self.force.kf * e_lam + self.force.ki * self._integral
        self._lam_cmd, self._t_last = lam_d, t
        sig["lambda_d"] = lam_d
        sig["force_error"] = e_lam
        sig["lambda_u"] = lam_u  # the commanded multipliers of eq. (52)
        return rec.A.T @ lam_u


class ComputedTorque:
    """Baseline: computed-torque control on the unconstrained model.

    ``tau = M a_d + h + A^T lambda_d`` with ``a_d`` resolved from the task PD
    by the pseudo-inverse of the task Jacobian, ignoring the constraint (no
    projection; the classical hybrid controller when ``lambda_d`` is given).
    """

    def __init__(
        self,
        cset: ConstraintSet,
        task: Task,
        reference: Reference,
        kp=100.0,
        kd=20.0,
        lambda_d: Callable[[float], np.ndarray] | None = None,
    ) -> None:
        self.cset, self.task, self.reference, self.lambda_d = cset, task, reference, lambda_d
        self.needs_sensors = False
        task.bind(cset.mechanism)
        self.kp, self.kd = gain(kp, task.dim, "kp"), gain(kd, task.dim, "kd")
        self.frames = tuple(dict.fromkeys((*cset.frames, *task.frames)))
        self.signals: dict[str, float | np.ndarray] = {}

    def __call__(self, t: float, rec: StepRecord) -> np.ndarray:
        snap = rec.snap
        J = self.task.jacobian(snap)
        th_d, dth_d, ddth_d = (np.asarray(x, dtype=float) for x in self.reference(t))
        e = self.task.error(th_d, snap)
        ref = ddth_d + self.kd * (dth_d - J @ snap.v) + self.kp * e
        a_d = np.linalg.lstsq(J, ref - self.task.drift(snap), rcond=None)[0]
        tau = snap.M @ a_d + snap.h
        if self.lambda_d is not None:
            tau = tau + rec.A.T @ np.asarray(self.lambda_d(t), dtype=float)
        self.signals = {"task_error": e}
        return tau
