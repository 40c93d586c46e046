"""Kool's line coordinates: joint axes, link twists, momenta, generalized forces.

Kool, "An analytical expression for the generalized forces in multibody
Lagrange equations". Everything here is in the world (absolute) frame and in
Kool's order, **angular part first**:

- line vector of a joint axis ``L = (e, m + h e)``, ``m = r x e`` the moment of
  the line about the world origin (eq. (6); prismatic ``(0, e)``, eq. (7));
- twist of link k ``T_k = (w_k, v_O,k) = sum_{j<=k} L_{j-1} qd_j`` (eq. (5)),
  ``v_O`` the velocity of the body point at the world origin;
- inertia ``N = [[I_O, m r_g^], [-m r_g^, m E_3]]`` about the origin (eq. (3)),
  so that ``N T = (angular momentum about O, linear momentum)``;
- ``M_i = sum_{j>=i} N_j T_j`` and the generalized momentum
  ``p_i = L_{i-1}^T M_i`` (eq. (8)).

Index convention: ``L[i]`` (0-based) is Kool's ``L_{i}``, the axis of joint
``i + 1``, fixed to link ``i`` (link 0 = the base). Pinocchio's twists are
linear first: :func:`swap` converts.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pfaff.geometry.screws import ScrewChain, joint_axis, poe_partials
from pfaff.linalg import skew


def swap(x: np.ndarray) -> np.ndarray:
    """Exchange the two 3-vector halves (Kool's angular-first <-> Pinocchio's linear-first)."""
    x = np.asarray(x)
    return np.concatenate([x[..., 3:], x[..., :3]], axis=-1)


def cross_twist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spatial cross product of twists ``(w, v)``: ``(w_a x w_b, w_a x v_b + v_a x w_b)``."""
    return np.r_[np.cross(a[:3], b[:3]), np.cross(a[:3], b[3:]) + np.cross(a[3:], b[:3])]


def cross_momentum(t: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Dual cross product ``t x* mu`` of a twist ``(w, v)`` and a momentum ``(h_O, p)``."""
    return np.r_[np.cross(t[:3], mu[:3]) + np.cross(t[3:], mu[3:]), np.cross(t[:3], mu[3:])]


def joint_frames(model: pin.Model, chain: ScrewChain, q: np.ndarray) -> np.ndarray:
    """(n, 4, 4) joint (= link) frames at q: ``exp(xi_1 q_1)...exp(xi_i q_i) T_i(0)``."""
    P = poe_partials(chain, q)
    return np.einsum("kab,kbc->kac", P[1:], chain.joint0)


def line_vectors(model: pin.Model, frames: np.ndarray) -> np.ndarray:
    """(n, 6) Plücker line vectors ``L = (e, r x e)`` of the joint axes (Kool eq. (6)-(7)).

    ``e`` is the joint axis and ``r`` the joint-frame origin (a point of the
    axis), both in the world at the current posture; prismatic: ``(0, e)``.
    """
    L = np.zeros((len(frames), 6))
    for i, T in enumerate(frames):
        a, revolute = joint_axis(model.joints[i + 1])
        e = T[:3, :3] @ a
        L[i] = np.r_[e, np.cross(T[:3, 3], e)] if revolute else np.r_[0, 0, 0, e]
    return L


def link_twists(L: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """(n, 6) link twists ``T_k = sum_{j<=k} L_{j-1} qd_j`` (Kool eq. (5))."""
    return np.cumsum(L * qd[:, None], axis=0)


def line_rates(L: np.ndarray, T: np.ndarray) -> np.ndarray:
    """(n, 6) ``dL_{i-1}/dt = T_{i-1} x L_{i-1}``: each axis moves with the link it is fixed to."""
    Tprev = np.vstack([np.zeros(6), T[:-1]])
    return np.array([cross_twist(t, line) for t, line in zip(Tprev, L)])


def link_inertias(model: pin.Model, frames: np.ndarray) -> np.ndarray:
    """(n, 6, 6) Kool's inertia matrices ``N_j`` about the world origin (eq. (3))."""
    N = np.zeros((len(frames), 6, 6))
    for j, T in enumerate(frames):
        Y = model.inertias[j + 1]
        R = T[:3, :3]
        m, rg = Y.mass, T[:3, 3] + R @ Y.lever
        Ig = R @ Y.inertia @ R.T
        S = skew(rg)
        N[j, :3, :3] = Ig - m * S @ S
        N[j, :3, 3:] = m * S
        N[j, 3:, :3] = -m * S
        N[j, 3:, 3:] = m * np.eye(3)
    return N


def subtree_momenta(N: np.ndarray, T: np.ndarray) -> np.ndarray:
    """(n, 6) ``M_i = sum_{j>=i} N_j T_j``: momentum of links i..n (Kool eq. (8))."""
    NT = np.einsum("jab,jb->ja", N, T)
    return np.cumsum(NT[::-1], axis=0)[::-1]


def generalized_momenta(L: np.ndarray, Mom: np.ndarray) -> np.ndarray:
    """``p_i = L_{i-1}^T M_i`` (Kool eq. (8)): angular momentum of links i..n about axis i."""
    return np.einsum("ia,ia->i", L, Mom)


def kinetic_energy(N: np.ndarray, T: np.ndarray) -> float:
    """``E = sum_j 0.5 T_j^T N_j T_j`` (Kool eq. (2))."""
    return 0.5 * float(np.einsum("ja,jab,jb->", T, N, T))


def kinetic_energy_gradient(Ldot: np.ndarray, Mom: np.ndarray) -> np.ndarray:
    """``dE/dq_i = Ldot_{i-1}^T M_i``: Kool's analytical partial derivative.

    Derivation: varying ``q_i`` at fixed ``qd`` turns links i..n rigidly about
    ``L_{i-1}``; a rigid turn of a link's twist *and* inertia leaves its
    energy unchanged, and the part of ``T_j`` that does not turn is
    ``T_{i-1}``, so ``dE_j/dq_i = -T_j^T N_j (L_{i-1} x T_{i-1})
    = T_j^T N_j Ldot_{i-1}``. (Checked against finite differences in the tests.)
    """
    return np.einsum("ia,ia->i", Ldot, Mom)


def gravity_wrenches(model: pin.Model, frames: np.ndarray) -> np.ndarray:
    """(n, 6) gravity wrench of each link as ``(moment about O, force)``."""
    g = np.asarray(model.gravity.linear, float)
    W = np.zeros((len(frames), 6))
    for j, T in enumerate(frames):
        Y = model.inertias[j + 1]
        f = Y.mass * g
        W[j] = np.r_[np.cross(T[:3, 3] + T[:3, :3] @ Y.lever, f), f]
    return W


def generalized_forces(
    model: pin.Model, chain: ScrewChain, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray
) -> dict[str, np.ndarray]:
    """Left side of the Lagrange equations from line coordinates (Kool eq. (10)).

    ``tau_i = L_{i-1}^T dM_i/dt + Ldot_{i-1}^T M_i - dE/dq_i + dV/dq_i`` with
    ``dM_i/dt = sum_{j>=i} (N_j Tdot_j + T_j x* N_j T_j)`` (the inertia moves
    with its link), ``Tdot_j = sum_{k<=j} (L_{k-1} qdd_k + Ldot_{k-1} qd_k)``,
    ``dE/dq_i`` from :func:`kinetic_energy_gradient` and
    ``dV/dq_i = -L_{i-1}^T sum_{j>=i} W_j`` (gravity wrenches).

    Returns the dict ``tau`` and its parts ``dp_dt`` (eq. (9)), ``dE_dq``,
    ``dV_dq``, and ``p`` (eq. (8)).
    """
    frames = joint_frames(model, chain, q)
    L = line_vectors(model, frames)
    T = link_twists(L, qd)
    Ld = line_rates(L, T)
    N = link_inertias(model, frames)
    Mom = subtree_momenta(N, T)
    Tdot = np.cumsum(L * qdd[:, None] + Ld * qd[:, None], axis=0)
    NT = np.einsum("jab,jb->ja", N, T)
    rate = np.einsum("jab,jb->ja", N, Tdot) + np.array(
        [cross_momentum(t, mu) for t, mu in zip(T, NT)]
    )
    dMom = np.cumsum(rate[::-1], axis=0)[::-1]
    dp_dt = np.einsum("ia,ia->i", L, dMom) + np.einsum("ia,ia->i", Ld, Mom)  # eq. (9)
    dE_dq = kinetic_energy_gradient(Ld, Mom)
    Wsub = np.cumsum(gravity_wrenches(model, frames)[::-1], axis=0)[::-1]
    dV_dq = -np.einsum("ia,ia->i", L, Wsub)
    return {
        "tau": dp_dt - dE_dq + dV_dq,
        "dp_dt": dp_dt,
        "dE_dq": dE_dq,
        "dV_dq": dV_dq,
        "p": generalized_momenta(L, Mom),
    }


def kool_vs_rnea_max_err(
    model: pin.Model, chain: ScrewChain, states: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
) -> float:
    """Max over ``(q, qd, qdd)`` states of ``|tau_Kool - rnea(q, qd, qdd)|`` (gravity included)."""
    data = model.createData()
    err = 0.0
    for q, qd, qdd in states:
        tau = generalized_forces(model, chain, q, qd, qdd)["tau"]
        ref = pin.rnea(model, data, q, qd, qdd)
        err = max(err, float(np.abs(tau - ref).max()))
    return err
