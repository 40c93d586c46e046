"""Recording a run's samples into a :class:`~pfaff.simulate.trajectory.Trajectory`,
and the checks made on them (finite values, unilateral contacts, joint limits)."""

from __future__ import annotations

import numpy as np

from pfaff.simulate.forces import ForceSet
from pfaff.simulate.policy import contact_message, nonfinite_message
from pfaff.simulate.trajectory import SimulationError, Trajectory


def check_finite(name: str, x: np.ndarray, t: float, step: int, traj: Trajectory) -> None:
    if not np.isfinite(x).all():
        bad = int(np.flatnonzero(~np.isfinite(x))[0])
        raise SimulationError(nonfinite_message(name, bad, x[bad], t, step), traj)


def controller_torque(tau, nv: int, t: float, step: int, traj: Trajectory) -> np.ndarray:
    """A controller's output as the torque to hold: shape ``(nv,)`` (ValueError
    otherwise) and finite (:class:`SimulationError` otherwise); both engines."""
    tau = np.asarray(tau, dtype=float)
    if tau.shape != (nv,):
        raise ValueError(f"controller returned a torque of shape {tau.shape}, expected ({nv},)")
    check_finite("controller torque", tau, t, step, traj)
    return tau


def joint_limit_warnings(mech, traj: Trajectory) -> list[str]:
    """One line per joint whose recorded position left the model's limits.

    Only for mechanisms that declare limits (``mech.position_limits()``, e.g.
    a URDF's ``<limit lower upper>``); unbounded coordinates are skipped.
    """
    limits = getattr(mech, "position_limits", None)
    bounds = [] if limits is None else list(limits())
    if not bounds or len(traj) == 0:
        return []
    q = traj.series("q")
    out = []
    t = traj.t[: len(q)]
    for name, i, lo, hi in bounds:
        x = q[:, i]
        bad = (x < lo - 1e-9) | (x > hi + 1e-9)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            out.append(
                f"joint {name!r} left its limits [{lo:.4g}, {hi:.4g}] at t = {t[first]:.4g} s "
                f"(range reached {x.min():.4g} .. {x.max():.4g})"
            )
    return out


def check_contact(lam, rows, cset, t, k, traj):
    """Stop when a unilateral contact would pull (normal force -lambda < 0)."""
    fn = -lam[rows]
    if np.any(fn < 0):
        i = int(rows[np.argmin(fn)])
        raise SimulationError(contact_message(cset.row_names[i], fn.min(), t, k), traj)


def record_force_elements(traj, fset: ForceSet, snap, force_work: float) -> None:
    """The force elements' share of the last sample: spring potential (added to
    ``potential`` and ``energy``) and the work of the non-conservative ones."""
    V = fset.potential(snap) if fset else 0.0
    traj.rows["potential"][-1] += V
    traj.rows["energy"][-1] += V
    traj.append(force_work=force_work, force_potential=V)


def record_sample(traj, t, snap, cev, a, forces, tau, opt, work, corr, newton_it):
    F, lam, proj = forces
    potential = snap.potential - opt.potential_offset
    traj.append(
        t=t,
        q=snap.q,
        v=snap.v,
        a=a,
        tau=tau,
        F=F,
        phi=cev.phi,
        av=cev.A @ snap.v,
        rank=proj.rank,
        sigma_min=proj.sigma_min,
        kinetic=snap.kinetic,
        potential=potential,
        energy=snap.kinetic + potential,
        work=work,
        correction_energy=corr,
        newton_iterations=newton_it,
    )
    traj.rows["lambda"].append(lam)
