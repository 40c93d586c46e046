"""Grasp description of Yoshikawa & Zheng (IJRR 1993, Sec. 2.3): S_i, S, W, W_S, A_S.

Wrenches and twists are stacked (linear, angular), as in the paper and in
:class:`~pfaff.mechanism.FrameState`. In 3D a wrench is ``(f, m)`` in R^6; in
the plane (x-y) it is ``(f_x, f_y, m_z)`` in R^3 -- every function takes
``plane=True`` or infers the dimension from its arguments.

- ``S_i`` (eq. 8-9): columns are the directions of the forces arm i can apply
  independently, which are also the directions of no relative motion.
- ``W`` (eq. 11): the resultant wrench about the object's centre ``F = W F_h``.
- ``W_S = W S`` and ``F_hS = W_S^+ F + A_S f_IS`` (eq. 12), ``A_S`` an
  orthonormal basis of ``N(W_S)`` (the internal forces).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pfaff.linalg import cross3, skew  # skew(r): the paper's P_i for r = C_i - B

GRASP_TYPES = ("rigid", "frictional_point", "frictionless_point")


def block_diag(*blocks) -> np.ndarray:
    """Block-diagonal matrix of 2-D arrays or scalars (small, no SciPy overhead)."""
    bs = [np.atleast_2d(np.asarray(b, dtype=float)) for b in blocks]
    out = np.zeros((sum(b.shape[0] for b in bs), sum(b.shape[1] for b in bs)))
    i = j = 0
    for b in bs:
        out[i : i + b.shape[0], j : j + b.shape[1]] = b
        i, j = i + b.shape[0], j + b.shape[1]
    return out


class GraspError(ValueError):
    """A grasp description that cannot be used (e.g. not force-closure)."""


def contact_constraint_matrix(
    kind: str, plane: bool = False, normal: Sequence[float] | None = None
) -> np.ndarray:
    """``^C S_i`` (eq. 8) of a grasp type, in the grasp frame Sigma_C.

    Parameters
    ----------
    kind : ``"rigid"`` (gripper: ``I_6``; plane ``I_3``), ``"frictional_point"``
        (``[I_3 0]^T``; plane ``[I_2 0]^T`` -- also a pin in a hole) or
        ``"frictionless_point"`` (the normal force only: ``[n^T 0]^T``).
    plane : planar wrenches (f_x, f_y, m_z).
    normal : contact normal in Sigma_C for the frictionless point contact
        (default: z in 3D, y in the plane).
    """
    nf = 2 if plane else 3
    nw = 3 if plane else 6
    if kind == "rigid":
        return np.eye(nw)
    if kind == "frictional_point":
        return np.eye(nw)[:, :nf]
    if kind == "frictionless_point":
        n = np.asarray((0.0, 1.0) if plane else (0.0, 0.0, 1.0), float) if normal is None else None
        n = np.asarray(normal, float) if normal is not None else n
        if n.shape != (nf,) or not np.linalg.norm(n) > 0:
            raise GraspError(f"contact normal must be {nf} numbers, non-zero; got {normal!r}")
        s = np.zeros((nw, 1))
        s[:nf, 0] = n / np.linalg.norm(n)
        return s
    raise GraspError(f"unknown grasp type {kind!r}; valid: {', '.join(GRASP_TYPES)}")


def world_constraint_matrix(CS: np.ndarray, R_C: np.ndarray) -> np.ndarray:
    """``S_i = diag(R_C, R_C) ^C S_i`` (eq. 9); plane: ``diag(R_C[:2, :2], 1)``."""
    CS = np.asarray(CS, dtype=float)
    R = np.asarray(R_C, dtype=float)
    if CS.shape[0] == 3:
        R2 = R[:2, :2]
        return block_diag(R2, 1.0) @ CS
    return block_diag(R, R) @ CS


def constraint_matrix(S_list: Sequence[np.ndarray]) -> np.ndarray:
    """``S = diag(S_1, ..., S_k)`` (eq. 9), shape (6k, d) or (3k, d) in the plane."""
    return block_diag(*[np.asarray(S, dtype=float) for S in S_list])


def grasp_matrix(r_list: Sequence[np.ndarray], plane: bool = False) -> np.ndarray:
    """``W`` of eq. (11): resultant wrench about the object's centre from hand wrenches.

    ``r_list[i]`` is the position of C_i relative to the object's centre B, in
    world coordinates. 3D blocks ``[[I_3, 0], [P_i, I_3]]``; plane blocks
    ``[[I_2, 0], [(-r_y, r_x), 1]]``.
    """
    blocks = []
    for r in r_list:
        r = np.asarray(r, dtype=float)
        if plane:
            blocks.append(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-r[1], r[0], 1.0]]))
        else:
            Wi = np.eye(6)
            Wi[3:, :3] = skew(r)
            blocks.append(Wi)
    return np.hstack(blocks)


def grasp_matrix_rate(r_list, w: np.ndarray, plane: bool = False) -> np.ndarray:
    """``W'`` for grasp points fixed on an object turning at angular velocity ``w``.

    ``r_i' = w x r_i``; in the plane ``w`` is the scalar ``theta'``.
    """
    n = 3 if plane else 6
    blocks = []
    for r in r_list:
        r = np.asarray(r, dtype=float)
        Wd = np.zeros((n, n))
        if plane:
            rd = float(w) * np.array([-r[1], r[0]])
            Wd[2, :2] = (-rd[1], rd[0])
        else:
            Wd[3:, :3] = skew(cross3(w, r))
        blocks.append(Wd)
    return np.hstack(blocks)


def internal_force_basis(W_S: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """``A_S`` of eq. (12): orthonormal basis of ``N(W_S)``, shape (d, d - rank W_S).

    Columns are the right singular vectors of the zero singular values
    (relative threshold ``tol``), each signed so its largest entry is positive.
    """
    _, s, Vt = np.linalg.svd(W_S)
    rank = int(np.sum(s > tol * max(s.max(initial=0.0), 1.0)))
    A = Vt[rank:].T.copy()
    for j in range(A.shape[1]):
        if A[np.argmax(np.abs(A[:, j])), j] < 0:
            A[:, j] *= -1
    return A


def check_force_closure(W_S: np.ndarray, tol: float = 1e-9) -> None:
    """Raise :class:`GraspError` unless ``W_S`` has full row rank (footnote 1, eq. 11).

    Full row rank of ``W_S`` (6 in 3D, 3 in the plane) is the paper's
    force-closure / coordinative-manipulability condition: every resultant
    wrench is produced by some ``F_hS``.
    """
    s = np.linalg.svd(W_S, compute_uv=False)
    n = W_S.shape[0]
    rank = int(np.sum(s > tol * max(s.max(initial=0.0), 1.0)))
    if rank < n:
        raise GraspError(
            f"grasp is not force-closure: rank W_S = {rank} < {n} "
            f"(W_S = W S must have full row rank; smallest singular value "
            f"{s.min() if s.size else 0.0:.3g}); the grasp points and types cannot "
            f"produce every resultant {'planar ' if n == 3 else ''}wrench on the object"
        )


@dataclass
class ForceSplit:
    """``F_hS = W_S^+ F + A_S f_IS`` (eq. 12).

    Attributes
    ----------
    F : resultant wrench ``W_S F_hS`` on the object.
    manipulating : ``W_S^+ F`` (the part that produces F).
    f_IS : internal-force coordinates ``A_S^T F_hS``.
    internal : ``A_S f_IS`` (does not affect F).
    """

    F: np.ndarray
    manipulating: np.ndarray
    f_IS: np.ndarray
    internal: np.ndarray


def decompose_hand_force(W_S: np.ndarray, F_hS: np.ndarray, A_S=None) -> ForceSplit:
    """Split a hand force into its manipulating and internal parts (eq. 11-12)."""
    A_S = internal_force_basis(W_S) if A_S is None else A_S
    F = W_S @ F_hS
    manip = np.linalg.pinv(W_S) @ F
    f_IS = A_S.T @ F_hS
    return ForceSplit(F, manip, f_IS, A_S @ f_IS)


@dataclass
class GraspPoint:
    """One arm's grasp: type, point C_i and frame orientation in the object frame."""

    kind: str
    position: np.ndarray
    R: np.ndarray | None = None
    normal: Sequence[float] | None = None


def grasp_matrices(
    grasps: Sequence[GraspPoint], R_B: np.ndarray, plane: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """``(S, W, W_S, r_list)`` for grasps fixed on an object of orientation ``R_B``.

    Grasp frames turn with the object: ``R_Ci = R_B R_i`` and
    ``r_i = R_B c_i`` (world coordinates, relative to the centre).
    """
    R_B = np.asarray(R_B, dtype=float)
    if R_B.shape == (2, 2):
        R_B = block_diag(R_B, 1.0)
    S_list, r_list = [], []
    for g in grasps:
        c = np.zeros(3)
        c[: len(g.position)] = g.position
        Ri = np.eye(3) if g.R is None else np.asarray(g.R, float)
        S_list.append(
            world_constraint_matrix(contact_constraint_matrix(g.kind, plane, g.normal), R_B @ Ri)
        )
        r_list.append(R_B @ c)
    S = constraint_matrix(S_list)
    W = grasp_matrix(r_list, plane)
    return S, W, W @ S, r_list


def grasp_rates(
    grasps: Sequence[GraspPoint], R_B: np.ndarray, w, plane: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(S', W')`` for grasps fixed on an object turning at angular velocity ``w``.

    ``R_Ci' = [w]_x R_Ci`` and ``r_i' = w x r_i`` (``w`` a scalar in the plane);
    used in ``(W_S^T T)'`` and ``(S^T J)'`` of eq. (29) and (34).
    """
    R_B = np.asarray(R_B, dtype=float)
    if R_B.shape == (2, 2):
        R_B = block_diag(R_B, 1.0)
    wv = np.array([0.0, 0.0, float(w)]) if plane else np.asarray(w, dtype=float)
    Wx = skew(wv)
    Sd, r_list = [], []
    for g in grasps:
        c = np.zeros(3)
        c[: len(g.position)] = g.position
        Ri = np.eye(3) if g.R is None else np.asarray(g.R, float)
        CS = contact_constraint_matrix(g.kind, plane, g.normal)
        Sd.append(world_constraint_matrix(CS, Wx @ R_B @ Ri))
        r_list.append(R_B @ c)
    if plane:  # the angular row of diag(R_C', 0) is zero
        for s in Sd:
            s[2] = 0.0
    return constraint_matrix(Sd), grasp_matrix_rate(r_list, wv if not plane else w, plane)


def orient_squeeze(A_S: np.ndarray, S: np.ndarray, r_list: Sequence[np.ndarray]) -> np.ndarray:
    """Sign the columns of ``A_S`` so that a positive internal force squeezes.

    Column j is flipped when the hand forces ``S A_S[:, j]`` push away from
    the object's centre on average (``sum_i -r_i . f_i < 0``).
    """
    A = np.array(A_S, dtype=float)
    nw = S.shape[0] // len(r_list)
    nf = 2 if nw == 3 else 3
    for j in range(A.shape[1]):
        Fh = S @ A[:, j]
        push = sum(-np.asarray(r)[:nf] @ Fh[i * nw : i * nw + nf] for i, r in enumerate(r_list))
        if push < 0:
            A[:, j] *= -1
    return A
