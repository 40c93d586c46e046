"""Inverse kinematics: the closed-form two-link planar solution and a numerical frame IK.

One copy of each, used by the scenarios and the systems that need an initial
posture on a target (fingers pre-shaped on an object, a tip on a line, a pencil
on a plane, arms holding a box).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from scipy.optimize import least_squares

from pfaff.mechanism.base import frame_index


def two_link_ik(x: float, y: float, l1: float, l2: float, elbow: float) -> np.ndarray:
    """Joint angles ``(q1, q2)`` of a planar two-link arm whose tip reaches ``(x, y)``.

    ``q1`` is the first link's absolute angle from the x axis, ``q2`` the second
    link's angle relative to the first (the law of cosines,
    ``cos q2 = (x^2 + y^2 - l1^2 - l2^2) / (2 l1 l2)``), so that the tip is
    ``l1 u(q1) + l2 u(q1 + q2)`` with ``u(a) = (cos a, sin a)``.

    Parameters
    ----------
    x, y : target of the tip relative to the first joint [m].
    l1, l2 : link lengths [m].
    elbow : ``+1`` or ``-1``: the sign of ``q2`` (the branch; ``-1`` is the elbow
        above the line base -> tip for a target in the upper half plane).

    Raises
    ------
    ValueError
        when ``(x, y)`` lies outside the annulus ``|l1 - l2| <= r <= l1 + l2``.
    """
    c2 = (x * x + y * y - l1 * l1 - l2 * l2) / (2 * l1 * l2)
    if not -1.0 <= c2 <= 1.0:
        raise ValueError(
            f"target ({x:.4f}, {y:.4f}) m is out of reach of links {l1:g} + {l2:g} m "
            f"(distance {float(np.hypot(x, y)):.4f} m, reach {abs(l1 - l2):.4f} .. "
            f"{l1 + l2:.4f} m)"
        )
    q2 = elbow * np.arccos(c2)
    q1 = np.arctan2(y, x) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.array([q1, q2])


def frame_ik(
    model: pin.Model,
    frame: str,
    target: pin.SE3,
    seed: np.ndarray,
    *,
    joints: Sequence[int] | np.ndarray | slice | None = None,
    posture: np.ndarray | None = None,
    q_rest: np.ndarray | None = None,
    reg: float = 0.01,
    margin: float = 0.05,
    tol: float = 1e-9,
) -> np.ndarray:
    """Joint angles that put ``frame`` at the pose ``target`` (bounded least squares).

    The pose error is ``log6(oMf^-1 target)`` (Pinocchio's SE(3) logarithm). Two
    solves: first with a posture term ``reg (q - posture)`` (picks a solution
    near ``posture`` among the redundant ones), then from there without it to
    machine precision. Joint limits shrunk by ``margin`` bound the search.

    Parameters
    ----------
    model : a Pinocchio model (revolute/prismatic joints in ``joints``).
    frame : name of the frame to place.
    target : its desired pose in the world.
    seed : start of the search, one value per entry of ``joints``.
    joints : indices into q that the IK moves (default: all of q).
    posture : reference of the posture term (default: ``seed``).
    q_rest : the full configuration the other joints keep (default: neutral).
    reg : weight of the posture term in the first solve.
    margin : distance kept from the joint limits [rad or m].
    tol : largest accepted norm of the final pose error.

    Returns
    -------
    The joint values for ``joints`` (same length as ``seed``).

    Raises
    ------
    ValueError
        when the pose error stays above ``tol`` (the target is out of reach
        within the limits) or ``frame`` does not exist.
    """
    data = model.createData()
    iq = np.arange(model.nq) if joints is None else joints
    lo, hi = model.lowerPositionLimit[iq], model.upperPositionLimit[iq]
    fid = frame_index(model, frame)
    qf = pin.neutral(model) if q_rest is None else np.array(q_rest, dtype=float)
    seed = np.asarray(seed, dtype=float)
    ref = seed if posture is None else np.asarray(posture, dtype=float)

    def res(q, w):
        qf[iq] = q
        pin.framesForwardKinematics(model, data, qf)
        e = pin.log6(data.oMf[fid].actInv(target)).vector
        return np.concatenate([e, w * (q - ref)])

    bounds = (lo + margin, hi - margin)
    s = least_squares(res, np.clip(seed, *bounds), bounds=bounds, args=(reg,))
    s = least_squares(res, s.x, bounds=bounds, args=(0.0,), xtol=1e-15, ftol=1e-15)
    err = float(np.linalg.norm(s.fun[:6]))
    if err > tol:
        raise ValueError(
            f"frame_ik: {frame!r} cannot reach the target pose within the joint limits "
            f"minus {margin:g} (pose error {err:.2g} > {tol:g})"
        )
    return s.x
