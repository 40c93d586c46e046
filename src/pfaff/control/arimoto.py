"""Arimoto's hybrid position/force control of a redundant arm on a surface (Sec. 4-5).

The pencil tip of an arm touches the plane ``z = xi``; the control (eq. 42)

    u = g(q) + lambda_d w - c q' - J^T (zeta sqrt(k) x' + k dx),

with ``w = dz/dq`` (the paper's z axis points *into* the surface, so that the
constraint force ``-lambda w`` of eq. 27 pushes the tip out of it and
``lambda > 0`` is the pressing force), ``J = d(x, y)/dq`` (2 x n) and
``dx = (x - x_d, y - y_d)``. Signs follow the closed loop (43):

    H q'' + (H'/2 + S + c I) q' + J^T (zeta sqrt(k) x' + k dx) = -dlambda w.

pfaff's table is the :class:`~pfaff.constraints.PointOnPlane` with the outward
normal ``+z`` (world z up, the arm above the table): its multiplier is
``lambda_pfaff = -lambda`` and ``w = -dz_world/dq``.

Monitors: the energy E (eq. 45), the modified function W_alpha (eq. 47), the
bounds sigma_m, sigma_M (eq. 48) and the paper's alpha = k / (2 sigma_M) and
rate gamma = k sigma_m / (3 sigma_M) (eq. 61), the constraint-force error
(eq. 62), the residual of the equilibrium manifold EM1 (eq. 46) and the
first-order Riemannian distance of a posture to it; the gain conditions
(56)-(60) as a checking function.
"""

from __future__ import annotations

import math

import numpy as np

from pfaff.lowering import lowers
from pfaff.mechanism.base import Snapshot
from pfaff.simulate.forces import (
    AnchorDamper,
    AnchorSpring,
    GravityCompensation,
    JointDamper,
    PointForce,
)
from pfaff.simulate.record import StepRecord

#: ordinary physical scale of the paper, eq. (56)
G_M_MAX = 1e-3  # kg m^2
L_0_MAX = 0.2  # m
DX_MAX = 0.3  # m, validity of (57)


def check_lambda_d(lambda_d: float) -> float:
    """Refuse a desired pressing force ``lambda_d <= 0`` (the contact is unilateral)."""
    lam = float(lambda_d)
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(
            f"lambda_d = {lambda_d!r} N: the pencil-surface contact is unilateral, the "
            "desired pressing force must be > 0 (a surface can only push)"
        )
    return lam


class ArimotoHybrid:
    """The hybrid position/force law (Arimoto eq. 42) for a point on the plane ``z = xi``.

    Parameters
    ----------
    frame : the frame carrying the pencil tip; ``point`` its local offset.
    target : ``(x_d, y_d)`` on the plane [m].
    k : position stiffness [N/m] (the paper: 5 ... 20 kg/s^2).
    zeta : damping factor of the task-space PD (the paper: sqrt(2)/2); the task
        damping is ``zeta sqrt(k)`` [N s/m] as printed in eq. (42).
    c : joint damping [N m s/rad], ``C = c I`` (Sec. 5).
    lambda_d : desired pressing force [N], > 0.
    gravity_compensation : add ``g(q)`` (eq. 42; the paper always does).

    The controller follows :class:`~pfaff.simulate.record.Controller`:
    ``tau = controller(t, record)``, ``frames``, ``needs_sensors`` (False) and
    ``signals`` (``dx`` (2,), ``E``, ``x`` (3,)).
    """

    needs_sensors = False

    def __init__(
        self,
        frame: str,
        target,
        k: float,
        zeta: float,
        c: float,
        lambda_d: float,
        point=None,
        gravity_compensation: bool = True,
    ) -> None:
        self.frame = frame
        self.frames = (frame,)
        self.point = None if point is None else np.asarray(point, dtype=float)
        self.target = np.asarray(target, dtype=float).reshape(2)
        for name, val in (("k", k), ("zeta", zeta), ("c", c)):
            if not (math.isfinite(val) and val >= 0):
                raise ValueError(f"gain {name} must be finite and >= 0, got {val!r}")
        self.k, self.zeta, self.c = float(k), float(zeta), float(c)
        self.lambda_d = check_lambda_d(lambda_d)
        self.gravity_compensation = bool(gravity_compensation)
        self.signals: dict = {}

    def task_terms(self, snap: Snapshot):
        """``(x (3,), J (2, n), w (n,), dx (2,), x' (2,))`` at the snapshot."""
        fs = snap.frame(self.frame)
        x = fs.point(self.point)
        Jp = fs.point_jacobian(self.point)
        J, w = Jp[:2], -Jp[2]
        return x, J, w, x[:2] - self.target, J @ snap.v

    def held_forces(self, q0: np.ndarray) -> list:
        """The law as built-in force elements (the Controller protocol's optional
        ``held_forces``; the compiled core samples and holds them itself): eq. (42) is
        ``g(q)`` + the pressing force ``lambda_d w = J_p^T (0, 0, -lambda_d)`` + a spring
        ``k`` and a damper ``zeta sqrt(k)`` from the point to the target along x and y +
        ``-c q'`` (a damper per coordinate: nq == nv, else the core calls the law)."""
        frame, point = self.frame, self.point
        target = (self.target[0], self.target[1], 0.0)
        out = [GravityCompensation()] if self.gravity_compensation else []
        out += [
            PointForce(frame, (0.0, 0.0, -self.lambda_d), point, name="pressing force"),
            AnchorSpring(frame, target, self.k, axes=(0, 1), point=point, name="k dx"),
            AnchorDamper(frame, self.zeta * math.sqrt(self.k), axes=(0, 1), point=point),
        ]
        return out + [JointDamper(i, self.c) for i in range(len(q0))]

    def __call__(self, t: float, rec: StepRecord) -> np.ndarray:
        snap = rec.snap
        x, J, w, dx, xd = self.task_terms(snap)
        f = self.zeta * math.sqrt(self.k) * xd + self.k * dx
        tau = self.lambda_d * w - self.c * snap.v - J.T @ f
        if self.gravity_compensation:
            tau = tau + snap.g
        self.signals = {"dx": dx, "x": x, "E": energy(snap.M, snap.v, dx, self.k)}
        return tau


# -- monitors (plain functions of arrays) ---------------------------------------------------
def energy(M: np.ndarray, v: np.ndarray, dx: np.ndarray, k: float) -> float:
    """``E = q'^T H q' / 2 + k |dx|^2 / 2`` (Arimoto eq. 45) [J]."""
    return 0.5 * float(v @ M @ v) + 0.5 * k * float(dx @ dx)


def energy_rate(v: np.ndarray, xdot: np.ndarray, k: float, zeta: float, c: float) -> float:
    """``dE/dt = -c |q'|^2 - zeta sqrt(k) |x'|^2`` on the surface (eq. 44) [W]."""
    return -c * float(v @ v) - zeta * math.sqrt(k) * float(xdot @ xdot)


def p_phi(w: np.ndarray) -> np.ndarray:
    """``P_phi = I - w w^T / |w|^2`` (Sec. 5, below eq. 47)."""
    w = np.asarray(w, dtype=float)
    return np.eye(len(w)) - np.outer(w, w) / float(w @ w)


def w_alpha(M, v, J, w, dx, k: float, alpha: float) -> float:
    """``W_alpha = E + alpha q'^T H P_phi J^T dx`` (Arimoto eq. 47) [J]."""
    return energy(M, v, dx, k) + alpha * float(v @ M @ p_phi(w) @ J.T @ dx)


def sigma_bounds(J: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """``(sigma_m, sigma_M)`` at one posture: ``sigma_M`` the largest eigenvalue of
    ``J J^T``, ``sigma_m`` the smallest of ``J P_phi J^T`` (eq. 48) [m^2]."""
    return (
        float(np.linalg.eigvalsh(J @ p_phi(w) @ J.T)[0]),
        float(np.linalg.eigvalsh(J @ J.T)[-1]),
    )


def paper_alpha(k: float, sigma_M: float) -> float:
    """``alpha = 1 / (2 gamma_0) = k / (2 sigma_M)`` (Sec. 5, before eq. 61)."""
    return k / (2.0 * sigma_M)


def paper_rate(k: float, sigma_m: float, sigma_M: float) -> float:
    """``gamma = k sigma_m / (3 sigma_M)`` [1/s] (eq. 61)."""
    return k * sigma_m / (3.0 * sigma_M)


def delta_lambda(M, h, g, v, J, w, wdot_v: float, f, c: float) -> float:
    """Constraint-force error ``dlambda = lambda - lambda_d`` (Arimoto eq. 62) [N].

    ``dlambda = (w'^T q' - w^T Gamma(q', q') - w^T H^-1 (c q' + J^T f)) / (w^T H^-1 w)``
    with ``f = zeta sqrt(k) x' + k dx``, ``H Gamma(q', q') = h - g`` (the velocity
    part of pfaff's ``h``) and ``wdot_v = w'^T q'``. The printed (62) omits the
    damping term ``c q'`` (the loop (43) has it); it vanishes at rest.
    """
    Hi_w = np.linalg.solve(M, w)
    rhs = wdot_v - Hi_w @ (h - g + c * v + J.T @ f)
    return float(rhs / (w @ Hi_w))


def em1_residual(x: np.ndarray, target, xi: float) -> np.ndarray:
    """``(x - x_d, y - y_d, z - xi)``: zero exactly on EM1 (Arimoto eq. 46) [m]."""
    return np.asarray(x, dtype=float) - np.array([target[0], target[1], xi])


def distance_to_em1(M: np.ndarray, J3: np.ndarray, r: np.ndarray) -> float:
    """First-order Riemannian distance (inertia metric) of a posture to EM1.

    The shortest ``dq`` (in ``|dq|_M``) with ``J3 dq = -r``: ``sqrt(r^T (J3 M^-1 J3^T)^-1 r)``
    [sqrt(kg) m]; ``J3`` the (3, n) tip Jacobian, ``r`` :func:`em1_residual`. Exact
    to second order in ``|r|``.
    """
    K = J3 @ np.linalg.solve(M, J3.T)
    return float(math.sqrt(max(float(r @ np.linalg.solve(K, r)), 0.0)))


# -- the gain conditions (56)-(60) ------------------------------------------------------------
def gain_conditions(
    k: float,
    zeta: float,
    c: float,
    *,
    g_M: float,
    l_0: float,
    sigma_m: float,
    sigma_M: float,
    dx0: float,
    alpha: float | None = None,
) -> dict[str, tuple[float, float, bool]]:
    """The inequalities of Arimoto (56)-(60), each ``name -> (lhs, rhs, holds)``.

    ``alpha`` defaults to the paper's ``k / (2 sigma_M)``; ``g_M`` is the largest
    eigenvalue of H, ``l_0`` the longest link, ``dx0 = |dx(0)|``. Names:

    - ``(56a) g_M <= 0.001``, ``(56b) l_0 <= 0.2``;
    - ``(57a) |dx| < 0.3``, ``(57b) 1 + zeta k <= k``,
      ``(57c) zeta sqrt(k) > alpha (1 + zeta) / 2`` (as printed);
    - ``(58) alpha gamma_0 < 1`` (W_alpha positive definite, gamma_0 = max(g_M, sigma_M / k));
    - ``(60a) c >= 3/2 alpha sigma_m g_M``, ``(60b) c > alpha g_M l_0``.
    """
    a = paper_alpha(k, sigma_M) if alpha is None else float(alpha)
    gamma0 = max(g_M, sigma_M / k)
    rows = {
        "(56a) g_M <= 0.001": (g_M, G_M_MAX, g_M <= G_M_MAX),
        "(56b) l_0 <= 0.2": (l_0, L_0_MAX, l_0 <= L_0_MAX),
        "(57a) |dx| < 0.3": (dx0, DX_MAX, dx0 < DX_MAX),
        "(57b) 1 + zeta k <= k": (1 + zeta * k, k, 1 + zeta * k <= k),
        "(57c) zeta sqrt(k) > alpha (1 + zeta) / 2": (
            zeta * math.sqrt(k),
            a * (1 + zeta) / 2,
            zeta * math.sqrt(k) > a * (1 + zeta) / 2,
        ),
        "(58) alpha gamma_0 < 1": (a * gamma0, 1.0, a * gamma0 < 1.0),
        "(60a) c >= 3/2 alpha sigma_m g_M": (
            c,
            1.5 * a * sigma_m * g_M,
            c >= 1.5 * a * sigma_m * g_M,
        ),
        "(60b) c > alpha g_M l_0": (c, a * g_M * l_0, c > a * g_M * l_0),
    }
    return rows


def violated_conditions(**kw) -> list[str]:
    """Names (with the numbers) of the inequalities of :func:`gain_conditions` that fail."""
    return [
        f"{name} (lhs {lhs:.4g}, rhs {rhs:.4g})"
        for name, (lhs, rhs, ok) in gain_conditions(**kw).items()
        if not ok
    ]


# the law as built-in force elements, sampled and held by the compiled core itself
lowers(ArimotoHybrid, category="held_law")(ArimotoHybrid.held_forces)
