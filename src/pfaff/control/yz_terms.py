"""The terms of Yoshikawa & Zheng's coordinated hybrid control (IJRR 1993): the whole-
system matrix of eq. (31) and its Appendix A test, the object and grasp states a plant
hands to :class:`~pfaff.control.yoshikawa_zheng.YZController`, its gains, and the
protocol a plant implements (:class:`GraspModel`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np


def whole_system_matrix(M, J, S, W_S, T, I_B, E_F) -> np.ndarray:
    """``K`` of eq. (31): rows (23), (25), (27), (28)."""
    n, nr, d, C = M.shape[0], T.shape[0], S.shape[1], E_F.shape[0]
    K = np.zeros((n + nr + d + C, n + nr + d + C))
    StJ = S.T @ J
    K[:n, :n] = M
    K[:n, n + nr : n + nr + d] = StJ.T
    K[n : n + nr, n : n + nr] = T.T @ I_B @ T
    K[n : n + nr, n + nr : n + nr + d] = -T.T @ W_S
    K[n : n + nr, n + nr + d :] = E_F.T
    K[n + nr : n + nr + d, :n] = StJ
    K[n + nr : n + nr + d, n : n + nr] = -W_S.T @ T
    K[n + nr + d :, n : n + nr] = E_F
    return K


def check_whole_system(M, J, S, W_S, T, I_B, E_F, tol: float = 1e-10) -> float:
    """Appendix A: raise ValueError unless ``K`` is nonsingular; return ``min eig K_33``.

    ``K_33 = S^T J M^-1 J^T S + W_S^T I_B^-1 W_S - W_S^T I_B^-1 T^-T E_F^T G^-1
    E_F T^-1 I_B^-1 W_S`` with ``G = E_F T^-1 I_B^-1 T^-T E_F^T`` (eq. A3).
    """
    StJ = S.T @ J
    sv = np.linalg.svd(StJ, compute_uv=False)
    if sv.size < StJ.shape[0] or not sv.min() > tol * max(1.0, sv.max()):
        raise ValueError(
            f"S^T J is rank-deficient (smallest singular value {sv.min():.3g}): an arm is in "
            "a singular posture along its grasp directions; the controller (eq. 34) and "
            "Appendix A need J and W_S of full rank"
        )
    Ti = np.linalg.inv(T)
    IBi = np.linalg.inv(I_B)
    K33 = StJ @ np.linalg.solve(M, StJ.T) + W_S.T @ IBi @ W_S
    if E_F.shape[0]:
        G = E_F @ Ti @ IBi @ Ti.T @ E_F.T
        if np.linalg.eigvalsh(0.5 * (G + G.T)).min() <= tol:
            raise ValueError("K is singular: E_F T^-1 I_B^-1 T^-T E_F^T is not positive definite")
        Y = E_F @ Ti @ IBi @ W_S
        K33 -= Y.T @ np.linalg.solve(G, Y)
    lo = float(np.linalg.eigvalsh(0.5 * (K33 + K33.T)).min())
    if not lo > tol * max(1.0, np.abs(K33).max()):
        raise ValueError(
            f"K of eq. (31) is singular: K_33 is not positive definite (min eigenvalue "
            f"{lo:.3g}); S^T J must have full row rank (arms away from singular postures) "
            "and W_S full rank (Appendix A)"
        )
    return lo


class ObjectState(NamedTuple):
    """The object's coordinates ``r``, ``r'`` (eq. 3-4) at one state and the plant's
    ``terms`` computed with them (e.g. T, T', the rotation and angular velocity; None
    if none): computed once per sample, passed to ``grasp_state``, ``Q_r``, ``measure``.
    """

    r: np.ndarray
    rd: np.ndarray
    terms: Any = None


@dataclass
class GraspState:
    """What the grasp and object model give at one state (passed by the caller).

    S, W : eq. (9), (11) at the current orientation; S_rate, W_rate their time
    derivatives; A_S : orthonormal internal-force basis (eq. 12); T, T_rate :
    eq. (4) and its derivative; E_P, E_F, E_P_rate, E_F_rate : eq. (19-22);
    r_P : controlled position (eq. 18).
    """

    S: np.ndarray
    W: np.ndarray
    S_rate: np.ndarray
    W_rate: np.ndarray
    A_S: np.ndarray
    T: np.ndarray
    T_rate: np.ndarray
    E_P: np.ndarray
    E_F: np.ndarray
    E_P_rate: np.ndarray
    E_F_rate: np.ndarray
    r_P: np.ndarray


#: ``(t, mode) -> (r_Pd, r_Pd', r_Pd'', f_Fd, f_ISd)`` (eq. 41-43)
YZReference = Callable[[float, int], tuple]


@dataclass(frozen=True)
class YZGains:
    """Servo gains of eq. (41)-(43): ``K_V``, ``K_P`` (position loop of r_P), ``K_IF``
    (constraint-force integral), ``K_II`` (internal-force integral).

    ``K_V``, ``K_P`` are arrays over r_P, or dicts ``mode -> array`` when r_P changes
    size with the object-constraint set (:meth:`per_mode`).
    """

    K_V: np.ndarray | dict[int, np.ndarray]
    K_P: np.ndarray | dict[int, np.ndarray]
    K_IF: float | np.ndarray
    K_II: float | np.ndarray

    def per_mode(self, rows: dict[int, list[int]]) -> YZGains:
        """The gains with ``K_V``, ``K_P`` restricted, per mode, to the entries ``rows[mode]``
        of r (e.g. ``{0: [0, 1, 2], 1: [0, 2]}``: free (x, y, phi), in contact (x, phi))."""
        return YZGains(
            {m: self.K_V[i] for m, i in rows.items()},
            {m: self.K_P[i] for m, i in rows.items()},
            self.K_IF,
            self.K_II,
        )


#: Yoshikawa-Zheng Sec. 5.3: K_V, K_P for (x, y, phi); K_IF = 100, K_II = 70
YZ_PAPER_GAINS = YZGains(
    K_V=np.array([65.0, 50.0, 55.0]),
    K_P=np.array([13000.0, 13000.0, 15000.0]),
    K_IF=100.0,
    K_II=70.0,
)


class GraspModel(Protocol):
    """What :class:`YZController` reads from a plant (``pfaff.systems.GraspPlant`` is one).

    ``arm_idx``: velocity indices of the arm joints (n of them); ``tips``: frame names
    of the end effectors; ``rows``: rows of a frame's 6 x nv Jacobian that form
    ``v_hi`` (``[0, 1, 5]`` in the plane, ``range(6)`` in 3D); ``I_B``: the
    controller's object inertia (eq. 3); ``object_state(snap) -> ObjectState``, once
    per sample, handed to ``grasp_state(obj, mode) -> GraspState``, ``Q_r(obj)`` of
    eq. (5) and ``measure(snap, obj, mode) -> (F_h, f_F)``: the measured hand
    wrenches (world, stacked) and constraint forces; ``object_at(r, r')`` builds an
    :class:`ObjectState` from coordinates. Optional: ``compiled_grasp()`` returns a
    ``pfaff._papers.YZRigidBox`` or ``YZPinnedPlane`` holding the same terms for every
    mode (or None); with it the compiled law evaluates the whole sample, plant terms
    and servo included, in one call.
    """

    arm_idx: np.ndarray
    tips: tuple[str, ...]
    rows: list[int]
    I_B: np.ndarray

    def object_state(self, snap) -> ObjectState: ...
    def object_at(self, r: np.ndarray, rd: np.ndarray) -> ObjectState: ...
    def grasp_state(self, obj: ObjectState, mode: int) -> GraspState: ...
    def Q_r(self, obj: ObjectState) -> np.ndarray: ...
    def measure(self, snap, obj: ObjectState, mode: int) -> tuple[np.ndarray, np.ndarray]: ...
