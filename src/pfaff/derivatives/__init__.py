"""Derivatives of the exact constrained dynamics, redundant constraints included.

:func:`forward_dynamics_derivatives` differentiates the projection dynamics
(Aghili 2005, eq. 22 and 32) with respect to ``q`` (tangent space,
``integrate(q, delta)``), ``v`` and ``tau``: Pinocchio's analytic RNEA and kinematic
derivatives (:mod:`pfaff.derivatives.terms`) combined by the derivative of the
pseudo-inverse and of the projector at constant rank
(:mod:`pfaff.derivatives.projection`, Golub & Pereyra 1973). ``rank_stable`` says
whether the rank of ``A`` is constant near ``q`` (where it is not, the dynamics are
not differentiable and the numbers are the one-sided ones of the kept rank).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.derivatives.projection import Solver, factors, rank_radius
from pfaff.derivatives.terms import constraint_partials, rnea_partials
from pfaff.linalg import DEFAULT_RANK_TOL

__all__ = ["DynamicsDerivatives", "forward_dynamics_derivatives"]

#: Default radius (tangent units: rad, m) within which the rank must stay constant
#: for ``rank_stable``.
RANK_RADIUS = 1e-4


@dataclass(frozen=True)
class DynamicsDerivatives:
    """The constrained dynamics at one state and their derivatives.

    Attributes
    ----------
    a, lam, F : acceleration (nv,), multipliers (m,), constraint force (nv,): the
        numbers of :func:`pfaff.dynamics.solve_constrained` (to rounding).
    da_dq, da_dv, da_dtau : (nv, nv); column k is the derivative along the tangent
        direction ``delta_k`` of q (``integrate(q, delta)``), along ``v_k``, ``tau_k``.
    dlam_dq, dlam_dv, dlam_dtau : (m, nv), the same for the least-norm multipliers.
    dF_dq, dF_dv, dF_dtau : (nv, nv), the same for the constraint force.
    rank : rank of A (absolute threshold ``rank_tol``).
    rank_stable : the rank stays constant within ``rank_radius_min`` of q (to first
        order): the derivatives are the two-sided ones. False near a fold or a
        singular configuration where a singular value of A crosses ``rank_tol``.
    rank_radius : first-order distance (tangent units) to a rank change; ``inf`` when
        the dropped singular values are structurally zero and the kept ones cannot
        reach the threshold.
    sigma : singular values of A, descending.
    fd_constraints : constraint kinds whose A and drift were differentiated by central
        differences (no analytic derivative yet); empty when all are analytic.
    engine : ``"numpy"`` (this module) or ``"core"`` (the compiled derivatives,
        ``src/cpp/algorithms/derivatives.cpp``, the same equations).
    """

    a: np.ndarray
    lam: np.ndarray
    F: np.ndarray
    da_dq: np.ndarray
    da_dv: np.ndarray
    da_dtau: np.ndarray
    dlam_dq: np.ndarray
    dlam_dv: np.ndarray
    dlam_dtau: np.ndarray
    dF_dq: np.ndarray
    dF_dv: np.ndarray
    dF_dtau: np.ndarray
    rank: int
    rank_stable: bool
    rank_radius: float
    sigma: np.ndarray
    fd_constraints: tuple[str, ...]
    engine: str = "numpy"


def forward_dynamics_derivatives(
    cset: ConstraintSet,
    q: np.ndarray,
    v: np.ndarray,
    tau: np.ndarray,
    rank_tol: float = DEFAULT_RANK_TOL,
    dtau_dq: np.ndarray | None = None,
    dtau_dv: np.ndarray | None = None,
    rank_radius_min: float = RANK_RADIUS,
    fd_step: float = 1e-5,
) -> DynamicsDerivatives:
    """Derivatives of ``a``, ``lambda``, ``F`` of the projection dynamics at ``(q, v, tau)``.

    Parameters
    ----------
    cset : the constraints, bound to a Pinocchio mechanism or to one given in closed
        form (its M a + h and every row by central differences of its ``compute``).
    q, v, tau : the state (nq,), (nv,) and the applied torque (nv,) (already the sum of
        every applied generalized force, e.g. force elements).
    rank_tol : absolute threshold on the singular values of A (as the dynamics).
    dtau_dq, dtau_dv : (nv, nv) derivatives of ``tau`` when it depends on the state
        (force elements: springs, dampers); zero when None.
    rank_radius_min : ``rank_stable`` needs the rank constant within this distance.
    fd_step : tangent step of the central differences of constraint kinds without
        analytic derivatives (and of a closed-form mechanism's terms).

    Notes
    -----
    Cost: one RNEA derivative pass, one kinematic-Hessian pass (nv^2 per joint), one
    full SVD of A and a few (m, n, nv) tensor products; the acceleration derivative
    needs one Cholesky factorisation of the reduced inertia ``N^T M N``.
    """
    mech = cset.mechanism
    nv = mech.nv
    snap = mech.compute(q, v, cset.frames, extras=False)
    ev = cset.evaluate(snap)
    M, A, drift = snap.M, ev.A, ev.drift
    f = factors(A, rank_tol)
    solver = Solver(M, snap.h, tau, drift, f)
    a, F, lam = solver.a, solver.F, solver.lam

    dRq, dRv = rnea_partials(mech, q, v, a, fd_step)
    cp = constraint_partials(cset, q, v, fd_step)
    Z = np.zeros((nv, nv))
    tq = Z if dtau_dq is None else np.asarray(dtau_dq, dtype=float)
    tv = Z if dtau_dv is None else np.asarray(dtau_dv, dtype=float)
    sq = solver.along(dRq, tq, cp.ddrift_dq, cp.dA_dq)
    sv = solver.along(dRv, tv, cp.ddrift_dv)
    st = solver.along(Z, np.eye(nv), np.zeros((A.shape[0], nv)))
    radius = rank_radius(f, rank_tol, cp.dA_dq)
    return DynamicsDerivatives(
        a=a,
        lam=lam,
        F=F,
        da_dq=sq.da,
        da_dv=sv.da,
        da_dtau=st.da,
        dlam_dq=sq.dlam,
        dlam_dv=sv.dlam,
        dlam_dtau=st.dlam,
        dF_dq=sq.dF,
        dF_dv=sv.dF,
        dF_dtau=st.dF,
        rank=f.rank,
        rank_stable=bool(radius >= rank_radius_min),
        rank_radius=radius,
        sigma=f.sigma,
        fd_constraints=cp.fd_kinds,
    )
