"""Arimoto's handwriting robot (Arimoto Sec. 4-5) and its equilibrium-manifold monitors.

The 4-joint arm (:func:`handwriting_arm`), its reachable part of a plane
(:func:`check_target`), the postures with the pencil tip on the plane
(:func:`posture_on_plane`: the curve EM1 of eq. 46 for a target), the point q*
of EM1 nearest to a start (:func:`reference_point`, Sec. 5) and the monitors of
a run (:func:`monitor`: E eq. 45, W_alpha eq. 47, eq. 62, distance to EM1).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from scipy.optimize import minimize_scalar

from pfaff.constraints import ConstraintSet
from pfaff.control import arimoto as ar
from pfaff.geometry.submanifold import submanifold_distance
from pfaff.mechanism import Mechanism, PinocchioMechanism
from pfaff.systems.ik import two_link_ik

TIP = "tip"
H0 = 0.1  # shoulder height above the base [m]
LINKS = (0.2, 0.2, 0.12)  # upper arm, forearm, pencil [m]
MASSES = (0.04, 0.008, 0.005, 0.003)  # column, upper arm, forearm, pencil [kg]


def _rod(m: float, length: float, r: float = 0.005) -> pin.Inertia:
    """A solid cylinder of radius ``r`` along the local x axis from the joint."""
    i_ax, i_tr = 0.5 * m * r * r, m * (3 * r * r + length * length) / 12
    return pin.Inertia(m, np.array([length / 2, 0, 0]), np.diag([i_ax, i_tr, i_tr]))


def handwriting_arm(gravity: float = 9.81) -> PinocchioMechanism:
    """The 4-joint handwriting robot: base yaw (RZ) and three pitch joints (RY).

    A column of height ``H0`` carries the shoulder; links ``LINKS`` (the last is
    the pencil, frame ``tip`` at its end), masses ``MASSES`` (thin cylinders).
    Frames ``link1..3`` at the pitch joints, ``tip`` at the pencil tip.
    """
    model = pin.Model()
    model.gravity.linear[:] = [0.0, 0.0, -gravity]
    j = model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "yaw")
    col = pin.Inertia(MASSES[0], np.array([0, 0, H0 / 2]), np.diag([4e-6, 4e-6, 2e-6]))
    model.appendBodyToJoint(j, col, pin.SE3.Identity())
    model.addFrame(pin.Frame("base", j, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    off = np.array([0.0, 0.0, H0])
    for i, (length, m) in enumerate(zip(LINKS, MASSES[1:])):
        j = model.addJoint(j, pin.JointModelRY(), pin.SE3(np.eye(3), off), f"pitch{i + 1}")
        model.appendBodyToJoint(j, _rod(m, length), pin.SE3.Identity())
        model.addFrame(pin.Frame(f"link{i + 1}", j, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
        off = np.array([length, 0.0, 0.0])
    model.addFrame(pin.Frame(TIP, j, 0, pin.SE3(np.eye(3), off), pin.FrameType.OP_FRAME))
    return PinocchioMechanism(model, "handwriting-robot")


def check_target(xd: float, yd: float, xi: float) -> None:
    """Refuse a target outside the reachable part of the plane ``z = xi`` (ValueError)."""
    reach = 0.95 * sum(LINKS)
    r, dz = math.hypot(xd, yd), xi - H0
    inner = max(abs(LINKS[0] - LINKS[1]) - LINKS[2], 0.0)
    r_max = math.sqrt(max(reach**2 - dz**2, 0.0))
    r_min = max(0.05, math.sqrt(max(inner**2 - dz**2, 0.0)))
    if not (r_min <= r <= r_max):
        raise ValueError(
            f"target (x_d, y_d) = ({xd:.4g}, {yd:.4g}) m is outside the reachable part of the "
            f"plane z = {xi:.4g} m: its distance from the base axis must lie in "
            f"[{r_min:.4g}, {r_max:.4g}] m (95 % of the reach {sum(LINKS):.3g} m), got {r:.4g} m"
        )


def posture_on_plane(
    xd: float, yd: float, xi: float, psi: float, elbow: float = 1.0
) -> np.ndarray | None:
    """Joint angles with the tip at ``(xd, yd, xi)`` and the pencil at angle ``psi``.

    ``psi`` is the pencil's elevation in the vertical plane through the base axis
    (``-pi/2`` points straight down); ``elbow = +1`` the elbow-up branch. The
    curve ``psi -> q`` parametrises EM1 (eq. 46) for a target. ``None`` when the
    wrist is out of reach. The wrist in that vertical plane comes from
    :func:`~pfaff.systems.ik.two_link_ik` (pitch angles count the other way round).
    """
    l1, l2, l3 = LINKS
    r = math.hypot(xd, yd)
    wr, wz = r - l3 * math.cos(psi), xi - l3 * math.sin(psi) - H0
    try:
        a1, a2 = (float(a) for a in two_link_ik(wr, wz, l1, l2, -elbow))
    except ValueError:
        return None
    return np.array([math.atan2(yd, xd), -a1, -a2, -(psi - a1 - a2)])


def reference_point(
    cset: ConstraintSet,
    q0: np.ndarray,
    xd: float,
    yd: float,
    xi: float,
    elbow: float = 1.0,
    psi_range: tuple[float, float] = (-2.6, -0.6),
) -> tuple[np.ndarray, float]:
    """``q*``: the point of EM1 nearest to ``q0`` in the submanifold distance (Sec. 5).

    EM1 is the curve :func:`posture_on_plane` in ``psi``; a bounded scalar search
    over ``psi`` of :func:`~pfaff.geometry.submanifold.submanifold_distance`
    (one constrained shooting problem per evaluation). Returns ``(q*, d(q0, q*))``.
    """

    def dist(psi):
        q = posture_on_plane(xd, yd, xi, psi, elbow)
        if q is None:
            return 1e3
        try:
            return submanifold_distance(cset, q0, q, tol=1e-8)
        except ValueError:
            return 1e3

    res = minimize_scalar(dist, bounds=psi_range, method="bounded", options={"xatol": 1e-4})
    return posture_on_plane(xd, yd, xi, res.x, elbow), float(res.fun)


def monitor(
    mech: Mechanism,
    cset: ConstraintSet,
    ctrl: ar.ArimotoHybrid,
    arrays: dict,
    xi: float,
    alpha: float | None = None,
) -> dict:
    """Monitors along a run: E, W_alpha, dlambda (eq. 62 and simulated), EM1 distance."""
    q, v, t = arrays["q"], arrays["v"], arrays["t"]
    rows = []
    for i in range(len(t)):
        snap = mech.compute(q[i], v[i], [ctrl.frame])
        x, J, w, dx, xdot = ctrl.task_terms(snap)
        J3 = snap.frames[ctrl.frame].J[:3]
        wdot_v = -float(snap.frames[ctrl.frame].drift[2])
        f = ctrl.zeta * math.sqrt(ctrl.k) * xdot + ctrl.k * dx
        rows.append(
            (
                snap.M,
                J,
                w,
                dx,
                ar.energy(snap.M, v[i], dx, ctrl.k),
                ar.delta_lambda(snap.M, snap.h, snap.g, v[i], J, w, wdot_v, f, ctrl.c),
                ar.distance_to_em1(snap.M, J3, ar.em1_residual(x, ctrl.target, xi)),
                ar.sigma_bounds(J, w),
                x,
                float(np.linalg.eigvalsh(snap.M)[-1]),
            )
        )
    sig = np.array([r[7] for r in rows])
    sigma_m, sigma_M = float(sig[:, 0].min()), float(sig[:, 1].max())
    a = ar.paper_alpha(ctrl.k, sigma_M) if alpha is None else alpha
    W = np.array([ar.w_alpha(r[0], v[i], r[1], r[2], r[3], ctrl.k, a) for i, r in enumerate(rows)])
    return {
        "E": np.array([r[4] for r in rows]),
        "W": W,
        "dlam62": np.array([r[5] for r in rows]),
        "dist_em1": np.array([r[6] for r in rows]),
        "x": np.array([r[8] for r in rows]),
        "g_M": max(r[9] for r in rows),
        "sigma_m": sigma_m,
        "sigma_M": sigma_M,
        "alpha": a,
        "target": ctrl.target,
    }
