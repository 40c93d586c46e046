"""Screws and the product-of-exponentials forward kinematics (Altafini eq. (2)-(4)).

Twists are 6-vectors ``xi = (v, w)``, linear part first (Pinocchio's order);
``hat(xi) = [[w^, v], [0, 0]]``. A revolute joint through the point ``p`` with
unit axis ``w`` (world frame, q = 0) has the space screw ``xi = (p x w, w)``;
a prismatic joint along ``u`` has ``xi = (u, 0)``.

The screw axes are read from the model at ``q = 0``: the joint frames are
composed from ``model.jointPlacements`` along the kinematic chain by this
module's own code, and the matrix exponential of a twist is Rodrigues'
formula written out here (:func:`twist_exp`), not ``pin.exp6``; Pinocchio's
forward kinematics, ``exp6`` and ``getFrameJacobian`` serve only as the
independent witnesses of the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from pfaff.linalg import skew
from pfaff.mechanism.base import frame_index

_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def twist_exp(xi: np.ndarray, theta: float) -> np.ndarray:
    """``exp(hat(xi) theta)`` as a 4x4 homogeneous matrix (Rodrigues' formula).

    Murray, Li & Sastry Prop. 2.9, for any ``w`` (scaled to a unit axis) and
    for ``w = 0`` (pure translation ``v theta``).
    """
    v, w = np.asarray(xi[:3], float), np.asarray(xi[3:], float)
    g = np.eye(4)
    nw = float(np.linalg.norm(w))
    if nw < 1e-15:
        g[:3, 3] = v * theta
        return g
    th = theta * nw
    W = skew(w / nw)
    W2 = W @ W
    s, c = np.sin(th), np.cos(th)
    g[:3, :3] = np.eye(3) + s * W + (1.0 - c) * W2
    g[:3, 3] = (np.eye(3) * th + (1.0 - c) * W + (th - s) * W2) @ (v / nw)
    return g


def adjoint(g: np.ndarray) -> np.ndarray:
    """``Ad_g = [[R, p^ R], [0, R]]`` for twists ``(v, w)``."""
    R, p = g[:3, :3], g[:3, 3]
    A = np.zeros((6, 6))
    A[:3, :3] = R
    A[3:, 3:] = R
    A[:3, 3:] = skew(p) @ R
    return A


def inverse(g: np.ndarray) -> np.ndarray:
    """Inverse of a homogeneous transform."""
    out = np.eye(4)
    out[:3, :3] = g[:3, :3].T
    out[:3, 3] = -g[:3, :3].T @ g[:3, 3]
    return out


def ad(xi: np.ndarray) -> np.ndarray:
    """``ad_xi = [[w^, v^], [0, w^]]``: the Lie bracket ``[xi, eta] = ad_xi eta``."""
    A = np.zeros((6, 6))
    W = skew(xi[3:])
    A[:3, :3] = W
    A[3:, 3:] = W
    A[:3, 3:] = skew(xi[:3])
    return A


@dataclass(frozen=True)
class ScrewChain:
    """A serial chain in product-of-exponentials form (Altafini eq. (2)).

    Attributes
    ----------
    xi : (n, 6) space-frame screw axes at q = 0, one per joint (Pinocchio's v order).
    joint0 : (n, 4, 4) joint frames at q = 0 in the world.
    g0 : (4, 4) end-effector frame at q = 0 (``g(0)``).
    """

    xi: np.ndarray
    joint0: np.ndarray
    g0: np.ndarray

    @property
    def n(self) -> int:
        return len(self.xi)


def joint_axis(jmodel) -> tuple[np.ndarray, bool]:
    """(unit axis in the joint frame, is_revolute) of a one-dof joint model."""
    name = jmodel.shortname().replace("JointModel", "")
    if name in ("RX", "RY", "RZ", "PX", "PY", "PZ"):
        return np.array(_AXES[name[1]]), name[0] == "R"
    if name in ("RevoluteUnaligned", "PrismaticUnaligned"):
        a = np.asarray(jmodel.axis, float)
        return a / np.linalg.norm(a), name.startswith("Revolute")
    raise ValueError(
        f"joint type {name!r} is not a one-dof revolute or prismatic joint; "
        "valid: RX, RY, RZ, PX, PY, PZ, RevoluteUnaligned, PrismaticUnaligned"
    )


def screw_chain(model: pin.Model, frame: str) -> ScrewChain:
    """Space screw axes and ``g(0)`` of the chain from the root to ``frame``.

    The joint frames at q = 0 are the products of ``model.jointPlacements``
    along the parents; joint ``i``'s axis ``w`` and a point ``p`` on it give
    ``xi = (p x w, w)`` (revolute) or ``(w, 0)`` (prismatic). The model must
    be a serial chain (``parents[i] == i - 1``) with one-dof joints.
    """
    f = model.frames[frame_index(model, frame)]
    nj = model.njoints
    if any(model.parents[i] != i - 1 for i in range(1, nj)) or model.nv != nj - 1:
        raise ValueError("screw_chain handles serial chains of one-dof joints only")
    T = [np.eye(4)]
    xi = np.zeros((nj - 1, 6))
    for i in range(1, nj):
        T.append(T[model.parents[i]] @ model.jointPlacements[i].homogeneous)
        a, revolute = joint_axis(model.joints[i])
        w = T[i][:3, :3] @ a
        xi[i - 1] = np.r_[np.cross(T[i][:3, 3], w), w] if revolute else np.r_[w, 0, 0, 0]
    g0 = T[f.parentJoint] @ f.placement.homogeneous
    return ScrewChain(xi, np.array(T[1:]), g0)


def poe_partials(chain: ScrewChain, q: np.ndarray) -> np.ndarray:
    """(n + 1, 4, 4) partial products ``P_k = exp(xi_1 q_1) ... exp(xi_k q_k)`` (``P_0 = I``)."""
    P = np.empty((chain.n + 1, 4, 4))
    P[0] = np.eye(4)
    for k in range(chain.n):
        P[k + 1] = P[k] @ twist_exp(chain.xi[k], q[k])
    return P


def poe_fk(chain: ScrewChain, q: np.ndarray) -> np.ndarray:
    """Forward kinematics ``g(q) = exp(xi_1 q_1) ... exp(xi_n q_n) g(0)`` (Altafini eq. (2)).

    Altafini writes the left-invariant (body) form ``g(0) exp(V_1 q_1) ...``
    with ``V_i = Ad_{g(0)^-1} xi_i``; both give the same ``g(q)``.
    """
    return poe_partials(chain, q)[-1] @ chain.g0


def space_jacobian(chain: ScrewChain, q: np.ndarray) -> np.ndarray:
    """(6, n) space Jacobian, columns ``Ad_{exp(xi_1 q_1)...exp(xi_{i-1} q_{i-1})} xi_i``."""
    P = poe_partials(chain, q)
    return np.stack([adjoint(P[i]) @ chain.xi[i] for i in range(chain.n)], axis=1)


def body_jacobian(chain: ScrewChain, q: np.ndarray) -> np.ndarray:
    """(6, n) body Jacobian ``J^b = g^-1 dg/dq`` (Altafini eq. (4)).

    Column i is ``Ad^-1_{exp(xi_i q_i) ... exp(xi_n q_n) g(0)} xi_i``: the
    screw of joint i seen from the end-effector frame (rows: linear, angular
    velocity in the end-effector frame -- Pinocchio's ``LOCAL`` Jacobian).
    """
    n = chain.n
    J = np.empty((6, n))
    tail = chain.g0.copy()  # exp(xi_{i+1} q_{i+1}) ... exp(xi_n q_n) g(0)
    for i in range(n - 1, -1, -1):
        tail = twist_exp(chain.xi[i], q[i]) @ tail
        J[:, i] = adjoint(inverse(tail)) @ chain.xi[i]
    return J


def body_jacobian_dot_v(chain: ScrewChain, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``J^b'(q, v) v``: the velocity-product term of ``d/dt (J^b v)``.

    With ``J^s_i' = sum_{k<i} [J^s_k, J^s_i] v_k`` and
    ``d/dt Ad_{g^-1} Y = Ad_{g^-1}(Y' - [V^s, Y])``, where ``[V^s, V^s] = 0``:
    ``J^b' v = Ad_{g^-1} sum_{k<i} ad(J^s_k) J^s_i v_k v_i``.
    """
    Js = space_jacobian(chain, q)
    acc = np.zeros(6)
    cum = np.zeros(6)  # sum_{k<i} J^s_k v_k
    for i in range(chain.n):
        acc += ad(cum) @ Js[:, i] * v[i]
        cum += Js[:, i] * v[i]
    g = poe_fk(chain, q)
    return adjoint(inverse(g)) @ acc


def poe_vs_pinocchio_fk_err(model: pin.Model, frame: str, qs: np.ndarray) -> tuple[float, float]:
    """Max over the postures ``qs`` of ``|g_poe - g_pin|`` and ``|J^b - J_LOCAL|``.

    The witnesses are Pinocchio's ``forwardKinematics`` + ``updateFramePlacements``
    and ``getFrameJacobian(..., LOCAL)``.
    """
    chain = screw_chain(model, frame)
    data = model.createData()
    fid = frame_index(model, frame)
    e_fk = e_j = 0.0
    for q in np.atleast_2d(qs):
        pin.framesForwardKinematics(model, data, q)
        pin.computeJointJacobians(model, data, q)
        ref = data.oMf[fid].homogeneous
        Jref = pin.getFrameJacobian(model, data, fid, pin.ReferenceFrame.LOCAL)
        e_fk = max(e_fk, float(np.abs(poe_fk(chain, q) - ref).max()))
        e_j = max(e_j, float(np.abs(body_jacobian(chain, q) - Jref).max()))
    return e_fk, e_j
