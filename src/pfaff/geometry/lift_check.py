"""An independent check of a horizontal lift from its definition (Altafini eq. (13)-(14)).

The horizontal lift ``G`` of the forward kinematics ``X = f(q)`` is defined by
two properties: ``J G = I`` (it lifts: the joint velocity ``G X`` produces the
task velocity ``X``) and ``span G`` is ``M``-orthogonal to the fiber
``ker J`` (internal motions). :func:`lift_defect` measures both for a given
``G`` without any of the quantities the lift was built from: ``J`` by a
five-point finite difference of Pinocchio's forward kinematics, ``M`` by
Pinocchio's CRBA, the fiber by ``scipy.linalg.null_space`` of that ``J``.
A pseudo-inverse ``J^+`` (which lifts but is not ``M``-horizontal) or a
mis-scaled lift shows up; the lift itself leaves round-off and the
difference error (~1e-11).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import scipy.linalg as sla

from pfaff.mechanism.base import frame_index


def fk_jacobian_fd(model: pin.Model, frame: str, q: np.ndarray, h: float = 1e-3) -> np.ndarray:
    """(6, nv) world-aligned Jacobian of a frame (origin velocity, angular velocity)
    by the five-point stencil on ``s -> (p(q + s e_j), log3(R(q + s e_j) R(q)^T))``.

    Error ``O(h^4)`` plus round-off ``eps / h``: about 1e-12 for arm-sized chains.
    """
    data = model.createData()
    fid = frame_index(model, frame)

    def pose(x):
        pin.framesForwardKinematics(model, data, x)
        M = data.oMf[fid]
        return M.translation.copy(), M.rotation.copy()

    _, R0 = pose(q)
    J = np.zeros((6, model.nv))
    for j in range(model.nv):
        f = {}
        for s in (-2, -1, 1, 2):
            dq = np.zeros(model.nv)
            dq[j] = s * h
            p, R = pose(pin.integrate(model, q, dq))
            f[s] = np.r_[p, pin.log3(R @ R0.T)]
        J[:, j] = (f[-2] - 8 * f[-1] + 8 * f[1] - f[2]) / (12 * h)
    return J


def lift_defect(
    model: pin.Model, frame: str, rows, q: np.ndarray, G: np.ndarray
) -> dict[str, float]:
    """How far ``G`` (n, m) is from the horizontal lift of the task rows ``rows`` at ``q``.

    Returns ``lifts``: ``max |J G - I|`` (dimensionless, task units over task
    units), and ``horizontal``: the largest ``M``-cosine between a fiber
    direction ``u`` and a column ``g`` of ``G``, ``|u^T M g| / (|u|_M |g|_M)``
    (dimensionless; 0 for the lift, the cosine of the angle the columns lean
    towards the fiber otherwise).
    """
    J = fk_jacobian_fd(model, frame, q)[rows]
    data = model.createData()
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    U = sla.null_space(J)
    lifts = float(np.abs(J @ G - np.eye(J.shape[0])).max())
    if U.shape[1] == 0:
        return {"lifts": lifts, "horizontal": 0.0}
    nu = np.sqrt(np.einsum("ij,ik,kj->j", U, M, U))
    ng = np.sqrt(np.einsum("ij,ik,kj->j", G, M, G))
    cos = np.abs(U.T @ M @ G) / np.outer(nu, ng)
    return {"lifts": lifts, "horizontal": float(cos.max())}
