"""What a torque does to a robot held on its contacts: the held mode's acceleration and
contact forces as affine functions of the joint torque, for controllers that must keep
every contact force pushing and inside its friction cone (Aghili Sec. 7.3: the motion
control of Sec. 7.1 does not keep a unilateral constraint's force's sign; the force must
be controlled too).

With the contacts and limits held now as bilateral rows, ``M a = tau - h + A^T lambda``
and ``A a = -drift`` make ``a`` and the multipliers ``lambda`` (least-norm where rows are
redundant, as the Simulator takes them) affine in ``tau``: ``a = a0 + K_a u`` and each
contact's force ``f = f0 + K_f u`` for ``tau = tau0 + B u``. The maps are read off the
compiled core at ``u = 0`` and at each column of ``B`` (exact: the maps are affine).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ContactResponse", "contact_response"]


@dataclass(frozen=True)
class ContactResponse:
    """The held mode at one state, affine in ``u`` (``tau = tau0 + B u``).

    Attributes
    ----------
    a0 : (nv,) the acceleration at ``u = 0``; ``K_a`` (nv, k) its change per unit ``u``.
    f0 : (P, 3) each held contact point's force on the moving geom at ``u = 0`` [N]
        (normal force along ``normals`` plus friction); ``K_f`` (P, 3, k) per unit ``u``.
    normals : (P, 3) the contacts' unit normals, into the moving geoms.
    points : (P, 3) the contact points [m]; ``mu`` (P,) their friction coefficients.
    names : per point, its pair's geoms ``"floor / foot"``.
    """

    a0: np.ndarray
    K_a: np.ndarray
    f0: np.ndarray
    K_f: np.ndarray
    normals: np.ndarray
    points: np.ndarray
    mu: np.ndarray
    names: list[str]


def _forces(contacts) -> np.ndarray:
    return np.array(
        [c.normal_force * np.asarray(c.normal) + np.asarray(c.tangent) for c in contacts]
    ).reshape(-1, 3)


def contact_response(sim, B: np.ndarray, tau0: np.ndarray | None = None) -> ContactResponse:
    """The held mode of ``sim`` (a :class:`~pfaff.api.Simulator` with contacts) at its
    state, as affine maps of ``u`` for ``tau = tau0 + B u`` (module docstring).

    Parameters
    ----------
    sim : the Simulator; its held contacts and limits are the mode.
    B : (nv, k) the torque directions ``u`` drives (e.g. the driven joints' columns of
        the identity: a free base takes no torque).
    tau0 : (nv,) the torque at ``u = 0`` (default zero).

    Raises ValueError on a bad ``B`` or ``tau0``, or when nothing is held (no contact
    closed: the Simulator steps freely and no force is there to control).
    """
    limited, nv = sim._limited, sim.system.nv
    B = np.asarray(B, dtype=float)
    if B.ndim != 2 or B.shape[0] != nv or not np.isfinite(B).all():
        raise ValueError(f"B must be a finite (nv, k) = ({nv}, k) array, got shape {B.shape}")
    tau0 = np.zeros(nv) if tau0 is None else np.asarray(tau0, dtype=float)
    if tau0.shape != (nv,) or not np.isfinite(tau0).all():
        raise ValueError(f"tau0 must be finite of shape ({nv},), got {tau0.shape}")
    q, v = sim.q, sim.v
    held = None if limited is None else limited.held_system(q, v)
    if held is None:
        raise ValueError("nothing is held now: no contact is closed (the response is free)")
    # the least-norm forces: linear in the torque (the redistribution a run applies where
    # they pull is not; the force-sign QP keeps these inside the cones)
    base = limited.closed_contacts(q, v, tau0, pushing=False)
    a0 = np.asarray(held.solve(q, v, tau0)[0])
    f0 = _forces(base)
    K_a, K_f = np.empty((nv, B.shape[1])), np.empty((len(base), 3, B.shape[1]))
    for j, col in enumerate(B.T):
        K_a[:, j] = np.asarray(held.solve(q, v, tau0 + col)[0]) - a0
        K_f[:, :, j] = _forces(limited.closed_contacts(q, v, tau0 + col, pushing=False)) - f0
    mu = dict(zip(limited.contacts.names, limited.contacts.mu))
    return ContactResponse(
        a0, K_a, f0, K_f,
        normals=np.array([c.normal for c in base]).reshape(-1, 3),
        points=np.array([c.point for c in base]).reshape(-1, 3),
        mu=np.array([mu[(c.geom1, c.geom2)] for c in base]),
        names=[f"{c.geom1} / {c.geom2}" for c in base],
    )  # fmt: skip
