"""Coordinated dynamic hybrid position/force control (Yoshikawa & Zheng, IJRR 1993).

- :func:`whole_system_matrix` -- ``K`` of eq. (31), ``K X = B`` with
  ``X = (q'', r'', F_hS, f_F)``; :func:`check_whole_system` tests its
  nonsingularity through Appendix A (``K_33 > 0`` and ``E_F T^-1 I_B^-1 T^-T E_F^T > 0``).
- :class:`YZController` -- the linearising law (eq. 32-37) with the servo
  compensators (eq. 41-43), sampled: every call is a sample (the simulation's
  clock calls it every ``control_dt`` and holds the torque); free motion is ``C = 0``.

This module is in the control layer: the grasp (``S, W, A_S`` and their rates)
and the object-motion constraints (``E_P, E_F`` and rates) are passed in by
the caller (``pfaff.manipulation.grasp`` / ``objects`` build them).
"""

from __future__ import annotations

import numpy as np

from pfaff import core
from pfaff.control.yz_terms import (
    YZ_PAPER_GAINS,
    GraspModel,
    GraspState,
    ObjectState,
    YZGains,
    YZReference,
    check_whole_system,
    whole_system_matrix,
)
from pfaff.linalg import solve
from pfaff.simulate.record import StepRecord

__all__ = [
    "YZ_PAPER_GAINS",
    "GraspModel",
    "GraspState",
    "ObjectState",
    "YZController",
    "YZGains",
    "YZReference",
    "check_whole_system",
    "whole_system_matrix",
]


def _orthonormal_columns(S: np.ndarray) -> bool:
    """True when ``S^T S = I`` (every grasp type of Sec. 2.3), so ``S^+ = S^T``."""
    StS = S.T @ S
    StS.flat[:: StS.shape[0] + 1] -= 1.0
    return bool(np.abs(StS).max() <= 1e-12)


_SIGNALS = ("r_P", "r_Pd", "f_F", "f_Fd", "f_IS", "f_ISd")
_NAMES: dict[tuple[int, ...], list[str]] = {}


def _signal_names(sizes: tuple[int, ...]) -> list[str]:
    """``r_P_0, ..., f_ISd_k``: the recorded signal names for these vector sizes."""
    names = _NAMES.get(sizes)
    if names is None:
        names = _NAMES[sizes] = [f"{p}_{i}" for p, n in zip(_SIGNALS, sizes) for i in range(n)]
    return names


def _min_norm_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Minimum-norm solution of ``A x = b`` for ``A`` of full row rank (``A^T (A A^T)^-1 b``).

    Square ``A``: LU. Falls back to least squares if ``A A^T`` is singular.
    """
    m, n = A.shape
    try:
        return solve(A, b) if m == n else A.T @ solve(A @ A.T, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0]


class YZController:
    """Eq. (32)-(37) with servo compensators (41)-(43), sampled at ``control_dt``.

    Keyword-only parameters
    -----------------------
    plant : a :class:`GraspModel` (the arms, the grasp and the object model).
    gains : :class:`YZGains` of eq. (41)-(43).
    reference : ``(t, mode) -> (r_Pd, r_Pd', r_Pd'', f_Fd, f_ISd)``.
    control_dt : period [s] of the sampled law (zero-order hold).
    unloaded_start : integrators start at ``-f_d(0)/K`` so the forces begin at
        zero (a step 0 -> f_d whose error the servo removes, eq. 45-46).
    integral_rule : how eq. (42)-(43) integrate the force over a hold interval:
        ``"trapezoid"`` (default) averages the force at the start of the hold (the
        reading before the update plus the torque step's effect through ``K`` of
        eq. 31) and the reading at its end, so the force error is centred over the
        hold; ``"end"`` uses the reading at the end only (the error is then zero at
        the end of each hold and equal to the whole drift within a hold at its start).
    mode : index of the initial object-constraint set (``grasp_state``'s ``mode``).
    compiled : evaluate eq. (31)-(37) in one call into the compiled core
        (``pfaff._papers.YZKernel``) when it is built, and the whole sample (the plant's
        object, grasp and force terms, eq. 41-43 and the law) in one call when the plant
        has a ``compiled_grasp()`` (``pfaff._papers.YZRigidBox``, ``YZPinnedPlane``);
        False: the NumPy law (:meth:`_law`, :meth:`_torque`, the reference; the tests
        hold them to each other).
    """

    needs_sensors = True

    def __init__(
        self,
        *,
        plant: GraspModel,
        gains: YZGains,
        reference: YZReference,
        control_dt: float = 2e-3,
        unloaded_start: bool = False,
        integral_rule: str = "trapezoid",
        mode: int = 0,
        compiled: bool = True,
    ) -> None:
        self.plant = plant
        self._kernel = core.yz_kernel() if compiled else None
        self._grasp = core.yz_grasp() if self._kernel is not None else None
        # the whole sample compiled: the plant's terms (its optional compiled_grasp)
        compiled_grasp = getattr(plant, "compiled_grasp", None)
        use = self._kernel is not None and compiled_grasp is not None
        self._plant_sample = compiled_grasp() if use else None
        self._servo = core.yz_servo() if self._plant_sample is not None else None
        self.arm_idx = np.asarray(plant.arm_idx, dtype=int)
        a = self.arm_idx
        contiguous = a.size and np.array_equal(a, np.arange(a[0], a[0] + a.size))
        # M's arm block: a slice view when the arm joints are contiguous (no fancy index)
        self._arm_block = (slice(a[0], a[0] + a.size),) * 2 if contiguous else np.ix_(a, a)
        self.tips, self.rows = tuple(plant.tips), list(plant.rows)
        # rows of the 6 x nv frame Jacobians: a slice when all six are kept
        rs = slice(None) if self.rows == list(range(6)) else self.rows
        self._J_block = (rs, self._arm_block[1]) if contiguous else np.ix_(self.rows, a)
        self._rows_sel = rs
        self.frames = self.tips
        self.object_state, self.grasp_state = plant.object_state, plant.grasp_state
        self.measure = plant.measure
        self.I_B, self.Q_r, self.reference = np.asarray(plant.I_B, float), plant.Q_r, reference
        self.K_V, self.K_P = gains.K_V, gains.K_P  # arrays, or dicts mode -> array
        self.K_IF, self.K_II = np.atleast_1d(gains.K_IF), np.atleast_1d(gains.K_II)
        self.control_dt = float(control_dt)
        self.unloaded_start = unloaded_start
        if integral_rule not in ("trapezoid", "end"):
            raise ValueError(f"integral_rule must be 'trapezoid' or 'end', got {integral_rule!r}")
        self.integral_rule = integral_rule
        self.mode = mode
        if self._servo is not None:
            sv = self._servo
            sv.K_IF, sv.K_II = self.K_IF.astype(float), self.K_II.astype(float)
            sv.dt, sv.trapezoid = self.control_dt, integral_rule == "trapezoid"
            sv.unloaded = bool(unloaded_start)
            self._servo_gains()
        self.reset()

    def _servo_gains(self) -> None:
        """The current mode into the compiled plant, and its K_V, K_P into the servo."""
        self._plant_sample.mode = self.mode
        KV = self.K_V[self.mode] if isinstance(self.K_V, dict) else self.K_V
        KP = self.K_P[self.mode] if isinstance(self.K_P, dict) else self.K_P
        self._servo.K_V, self._servo.K_P = np.asarray(KV, float), np.asarray(KP, float)

    def reset(self) -> None:
        """Restart the integrators and sample at the next call."""
        self.int_F: np.ndarray | None = None
        self.int_I: np.ndarray | None = None
        self._prev: tuple | None = None
        self._tau: np.ndarray | None = None
        self._start: tuple = (None, None)
        self._checked = False
        self._S_orthonormal: bool | None = None
        self.signals: dict[str, float] = {}
        #: the force-sensor readings of the last call (``record.sensors``)
        self.last_sensors: dict[str, np.ndarray] | None = None
        self._last: dict | None = None
        if self._servo is not None:
            sv = self._servo
            sv.has_int_F = sv.has_int_I = sv.has_prev = sv.has_start = False

    def set_mode(self, mode: int) -> None:
        """Switch the object-constraint set (e.g. free <-> in contact); the caller samples
        the law at the switch (:meth:`pfaff.simulate.phases.PhaseChain.resample`)."""
        if mode != self.mode:
            self.mode = mode
            self.int_F = None
            self._prev = None
            if self._servo is not None:
                self._servo.has_int_F = self._servo.has_prev = False
                self._servo_gains()

    @property
    def held_torque(self) -> np.ndarray | None:
        """The torque held since the last sample (None before the first)."""
        return self._tau

    def interrupt(self) -> None:
        """An event (e.g. an impact) that the law is sampled at
        (:meth:`pfaff.simulate.phases.PhaseChain.impact` calls this).

        The force read at the event is not integrated: eq. (42)-(43) integrate the
        force held over a sample interval, and an impulsive reading lasts no time.
        """
        self._prev = None
        if self._servo is not None:
            self._servo.has_prev = False

    @property
    def last(self) -> dict[str, np.ndarray] | None:
        """The last sample's u1, u2, u3 (eq. 41-43), q''_d, r'' and F_hSd (eq. 32-37)."""
        b = self._plant_sample
        if b is None or self._tau is None:  # the NumPy law's (None before a sample)
            return self._last
        return {"u1": b.u1, "u2": b.u2, "u3": b.u3, "q_dd": b.q_dd, "r_dd": b.r_dd,
                "F_hSd": b.F_hSd}  # fmt: skip

    def hold_start(self) -> np.ndarray:
        """The estimated f_F, f_IS at the start of the hold after the last sample (the
        trapezoid rule's), stacked."""
        if self._plant_sample is not None:
            return np.concatenate([self._servo.start_F, self._servo.start_I])
        return np.concatenate(self._start)

    def _hold_mean(self, start, end):
        """Mean force over a hold: trapezoid of start and end (``"end"``: the end value)."""
        return end if self.integral_rule == "end" or start is None else 0.5 * (start + end)

    def arm_terms(self, snap):
        """``J``, ``J' q'`` of the stacked arms (eq. 1-2) on the arm coordinates."""
        J = np.vstack([snap.frames[f].J[self._J_block] for f in self.tips])
        Jd = np.concatenate([snap.frames[f].drift[self._rows_sel] for f in self.tips])
        return J, Jd

    def _torque(self, M, h, qd, J, Jdqd, g: GraspState, obj, u1, u2, u3, held, trapezoid):
        """Eq. (35), (34), (37), (33), (36), (32) from the servo inputs (the NumPy
        reference of ``pfaff._papers.YZKernel``): ``(tau_arm, q''_d, r'', F_hSd, df_F,
        df_IS)``, the last two the change of the forces that the torque step ``tau_arm -
        held`` makes through K of eq. (31) (``trapezoid``; else empty)."""
        S, W, A_S, T, rd = g.S, g.W, g.A_S, g.T, obj.rd
        W_S = W @ S
        C = g.E_F.shape[0]
        # eq. (35)
        E = np.vstack([g.E_P, g.E_F])
        rhs = np.concatenate([u1 - g.E_P_rate @ rd, -g.E_F_rate @ rd])
        r_dd = solve(E, rhs)
        # eq. (34) with (S^T J)^+ (= J^+ (S^T)^+ when J J^+ = I): S^T J q''_d = eq. (B4)
        StJ = S.T @ J
        W_S_rate = g.W_rate @ S + W @ g.S_rate
        WsT_T_rate = W_S_rate.T @ T + W_S.T @ g.T_rate
        StJ_rate_qd = g.S_rate.T @ (J @ qd) + S.T @ Jdqd
        b = W_S.T @ T @ r_dd + WsT_T_rate @ rd - StJ_rate_qd
        q_dd = _min_norm_solve(StJ, b)
        # eq. (37), (33), (36), (32)
        F = self.I_B @ (T @ r_dd) + self.Q_r(obj)
        if C:
            F += solve(T.T, g.E_F.T @ u2)
        # W_S^+ = W_S^T (W_S W_S^T)^-1 (W_S has full row rank: force closure)
        F_hSd = W_S.T @ solve(W_S @ W_S.T, F) + A_S @ u3
        tau_arm = M @ q_dd + h + J.T @ S @ F_hSd
        if not trapezoid:
            return tau_arm, q_dd, r_dd, F_hSd, np.zeros(0), np.zeros(0)
        K = whole_system_matrix(M, J, S, W_S, T, self.I_B, g.E_F)
        n, nr, d = M.shape[0], T.shape[0], S.shape[1]
        dX = solve(K, np.concatenate([tau_arm - held, np.zeros(K.shape[0] - n)]))
        return tau_arm, q_dd, r_dd, F_hSd, dX[n + nr + d :], A_S.T @ dX[n + nr : n + nr + d]

    def __call__(self, t: float, rec: StepRecord) -> np.ndarray:
        """One sample of the law (the simulation holds the torque until the next)."""
        self.last_sensors = rec.sensors
        self._tau = self._law(t, rec)
        return self._tau

    def _law(self, t: float, rec: StepRecord) -> np.ndarray:
        if self._plant_sample is not None:
            return self._compiled_law(t, rec)
        snap = rec.snap
        a = self.arm_idx
        M = snap.M[self._arm_block]
        h = snap.h[a]
        qd = snap.v[a]
        J, Jdqd = self.arm_terms(snap)
        obj = self.object_state(rec)
        rd = obj.rd
        g = self.grasp_state(obj, self.mode)
        S, A_S = g.S, g.A_S
        r_Pd, r_Pd_dot, r_Pd_dd, f_Fd, f_ISd = self.reference(t, self.mode)
        C = g.E_F.shape[0]
        # measured forces (record.sensors: the force the held torque produced)
        F_h, f_F = self.measure(rec, obj, self.mode)
        if self._S_orthonormal is None:  # a property of the grasp types (Sec. 2.3): once
            self._S_orthonormal = _orthonormal_columns(S)
        F_hS = (S.T if self._S_orthonormal else np.linalg.pinv(S)) @ F_h
        f_IS = A_S.T @ F_hS
        dt = self.control_dt
        if self.int_I is None:
            self.int_I = -f_ISd / self.K_II if self.unloaded_start else np.zeros_like(f_ISd)
            prev_I = None
        else:
            prev_I = self._prev[1] if self._prev else None
        if self.int_F is None or self.int_F.shape != f_Fd.shape:
            self.int_F = -f_Fd / self.K_IF if self.unloaded_start and C else np.zeros(C)
            prev_F = None
        else:
            prev_F = self._prev[0] if self._prev else None
        # eq. (42)-(43): the integral of the error over the last hold interval, whose
        # desired value was the previous one. The force drifts within a hold (the state
        # moves under the held torque): trapezoid of the force at the start of the hold
        # (estimated after the update, below) and the force measured now at its end
        if prev_F is not None:
            self.int_F = self.int_F + dt * (prev_F - self._hold_mean(self._start[0], f_F))
        if prev_I is not None:
            self.int_I = self.int_I + dt * (prev_I - self._hold_mean(self._start[1], f_IS))
        self._prev = (f_Fd.copy(), f_ISd.copy())
        # eq. (41)-(43)
        r_P = g.r_P
        rP_dot = g.E_P @ rd
        KV = self.K_V[self.mode] if isinstance(self.K_V, dict) else self.K_V
        KP = self.K_P[self.mode] if isinstance(self.K_P, dict) else self.K_P
        u1 = r_Pd_dd + KV * (r_Pd_dot - rP_dot) + KP * (r_Pd - r_P)
        u2 = f_Fd + self.K_IF * self.int_F if C else np.zeros(0)
        u3 = f_ISd + self.K_II * self.int_I
        if not self._checked:
            self._check(M, J, g)
        held = np.zeros(a.size) if self._tau is None else self._tau[a]
        trapezoid = self.integral_rule == "trapezoid"
        if self._kernel is not None:  # eq. (31)-(37) in one call into pfaff._papers
            self._grasp.set(
                g.S, g.W, g.S_rate, g.W_rate, A_S, g.T, g.T_rate,
                g.E_P, g.E_F, g.E_P_rate, g.E_F_rate, self.I_B,
            )  # fmt: skip
            tau_arm, q_dd, r_dd, F_hSd, dF, dI = self._kernel(
                M, h, qd, J, Jdqd, self._grasp, self.Q_r(obj), rd, u1, u2, u3, held, trapezoid
            )
        else:
            tau_arm, q_dd, r_dd, F_hSd, dF, dI = self._torque(
                M, h, qd, J, Jdqd, g, obj, u1, u2, u3, held, trapezoid
            )
        self._last = {"u1": u1, "u2": u2, "u3": u3, "q_dd": q_dd, "r_dd": r_dd, "F_hSd": F_hSd}
        tau = np.zeros(snap.v.size)
        tau[a] = tau_arm
        # force at the start of the next hold: the reading plus the effect of the torque
        # step through the model's K of eq. (31) (exact with the exact model)
        self._start = (f_F + dF, f_IS + dI) if trapezoid else (f_F, f_IS)
        self._set_signals(r_P, r_Pd, f_F, f_Fd, f_IS, f_ISd)
        return tau

    def _set_signals(self, *vals: np.ndarray) -> None:
        """The recorded signals r_P, r_Pd, f_F, f_Fd, f_IS, f_ISd (per component) and mode."""
        names = _signal_names(tuple(x.size for x in vals))
        self.signals = dict(zip(names, np.concatenate(vals).tolist()))
        self.signals["mode"] = float(self.mode)

    def _check(self, M, J, g: GraspState) -> None:
        """Appendix A, once: K of eq. (31) must be nonsingular."""
        check_whole_system(M, J, g.S, g.W @ g.S, g.T, self.I_B, g.E_F)
        self._checked = True

    def _compiled_law(self, t: float, rec: StepRecord) -> np.ndarray:
        """:meth:`_law` in one call into the plant's compiled sample (``compiled_grasp()``:
        ``pfaff._papers.YZRigidBox`` or ``YZPinnedPlane``; the plant's terms, eq. 41-43 with
        the servo state it carries, eq. 31-37)."""
        snap = rec.snap
        a = self.arm_idx
        J, Jdqd = self.arm_terms(snap)
        if not self._checked:  # with the plant's own terms
            self._check(
                snap.M[self._arm_block], J, self.grasp_state(self.object_state(rec), self.mode)
            )
        r_Pd, r_Pd_dot, r_Pd_dd, f_Fd, f_ISd = self.reference(t, self.mode)
        held = np.zeros(a.size) if self._tau is None else self._tau[a]
        tau_arm, r_P, f_F, f_IS = self._plant_sample.sample(
            self._servo, snap.q, snap.v, rec.sensors["lambda"], snap.M[self._arm_block],
            snap.h[a], snap.v[a], J, Jdqd, r_Pd, r_Pd_dot, r_Pd_dd, f_Fd, f_ISd, held,
        )  # fmt: skip
        tau = np.zeros(snap.v.size)
        tau[a] = tau_arm
        self._set_signals(r_P, r_Pd, f_F, f_Fd, f_IS, f_ISd)
        return tau
