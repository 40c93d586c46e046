"""Rolling of a hemispherical fingertip on a planar contour (Arimoto & Yoshida 2010, Sec. 6).

Geometry. The object is a planar body (frame ``obj``: position ``p``, angle
``theta``) carrying a :class:`~pfaff.manipulation.contours.Contour` ``gamma(s)``
in its local frame; the fingertip is a disc of radius ``r`` centred at the
origin ``c`` of the finger's tip frame (angle ``phi`` = sum of the finger's
joint angles, the paper's ``phi_i = e_i^T q_i``). The contact point is the
foot point of ``c`` on the contour (its normal passes through ``c``), found by
:meth:`Contour.foot_point` in the object frame; ``n``, ``t`` are the world
outward normal and tangent there, ``kappa`` the object curvature, ``d`` the
distance ``n . (c - gamma_w)``.

Constraints (``e = c - p``, ``S`` = rotation by +90 deg, ``omega = theta'``):

- contact, eq. (67): ``Q = d - r = 0`` (holonomic). By the envelope theorem
  ``dQ = n . w dt`` with the relative velocity ``w = c' - p' - omega S e``, so
  ``A_Q = n^T (J_c - J_o(c))`` with ``J_o(c) = J_p + S e J_theta`` (the object's
  Jacobian at the point coinciding with ``c``).
- rolling, eq. (71): zero relative velocity of the two material contact points
  along ``t``: ``t . w + r (omega - phi') = 0`` (Pfaffian), ``A_R = t^T (J_c -
  J_o(c)) + r (J_theta - J_phi)``.

Drifts (``a = 0``): with ``s' = t . w / (1 + kappa d)`` (the foot-point rate, exact
off the manifold too), ``n' = omega S n + kappa s' t``, ``t' = omega S t - kappa s' n``
and ``w'|_{a=0} = J_c' v - J_p' v - alpha S e - omega S (c' - p')``:
``drift_Q = n' . w + n . w'``, ``drift_R = t' . w + t . w' + r (alpha_o - alpha_phi)``.

On the manifold (``d = r``) the rolling form is ``(1 + kappa r) ds + r (dtheta -
dphi)``, so ``(kappa + 1/r) s' = phi' - theta'`` (the planar rolling ODE) and the
form is exact: ``R = s + r (theta + psi(s) - phi)`` is conserved (eq. 81, with
``psi`` the normal angle), which :func:`frobenius_defect` checks numerically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline

from pfaff import core, lowering
from pfaff.constraints.base import Constraint, ConstraintSet
from pfaff.manipulation.contours import Contour
from pfaff.mechanism.base import Snapshot

__all__ = [
    "ContactGeometry",
    "RollingContact",
    "ContactConstraint",
    "RollingConstraint",
    "rolling_constraints",
    "integrate_arclength",
    "integrate_arclength_angle",
    "frobenius_defect",
]


def _S(x: np.ndarray) -> np.ndarray:
    return np.array([-x[1], x[0]])


def _angle(R: np.ndarray) -> float:
    return float(np.arctan2(R[1, 0], R[0, 0]))


@dataclass(frozen=True)
class ContactGeometry:
    """Contact quantities at one state (world frame unless said otherwise)."""

    u: float  #: contour parameter of the contact point
    point: np.ndarray  #: contact point on the object, (2,)
    t: np.ndarray  #: unit tangent
    n: np.ndarray  #: outward unit normal (towards the fingertip centre)
    kappa: float  #: object curvature at the contact, 1/m
    c: np.ndarray  #: fingertip centre (2,)
    e: np.ndarray  #: c - p (object origin to fingertip centre)
    d: float  #: distance of c from the contour along n
    JQ: np.ndarray  #: (2, nv) J_c - J_o(c), linear rows
    Jrot: np.ndarray  #: (nv,) J_theta - J_phi
    w: np.ndarray  #: relative velocity c' - (p' + omega S e)
    wdot: np.ndarray  #: velocity-only part of w'
    omega: float  #: object angular velocity
    alpha: float  #: velocity-only part of theta'' - phi''
    sdot: float  #: rate of the contact arclength s'
    theta: float  #: object angle
    phi: float  #: fingertip angle


class RollingContact:
    """A fingertip disc (radius ``r``, centre = origin of ``tip_frame``) on ``contour``.

    The contour lives in ``object_frame`` (a planar body's frame). The geometry
    (scalar ``math`` code) is computed once per state and kept in the snapshot's
    ``derived`` (the contact and rolling rows and the monitors share it); the last
    contact parameter warm-starts the foot-point solver.
    """

    def __init__(
        self, contour: Contour, object_frame: str, tip_frame: str, radius: float, name=None
    ) -> None:
        if not radius > 0:
            raise ValueError(f"fingertip radius must be > 0 m, got {radius!r}")
        self.contour, self.obj, self.tip, self.r = contour, object_frame, tip_frame, float(radius)
        self.name = name or f"{tip_frame} on {object_frame}"
        self._u: float | None = None

    def geometry(self, snap: Snapshot) -> ContactGeometry:
        """Contact geometry and rates at the snapshot's state (needs both frames)."""
        geo = snap.derived.get(self)
        if geo is not None:
            return geo
        fo, ft = snap.frame(self.obj), snap.frame(self.tip)
        R = fo.R
        r00, r01, r10, r11 = float(R[0, 0]), float(R[0, 1]), float(R[1, 0]), float(R[1, 1])
        px, py, cx, cy = float(fo.p[0]), float(fo.p[1]), float(ft.p[0]), float(ft.p[1])
        ex, ey = cx - px, cy - py
        u = self.contour.foot_point((r00 * ex + r10 * ey, r01 * ex + r11 * ey), self._u)
        self._u = u
        gx, gy, x1, y1, x2, y2 = self.contour.scalar(u)
        sp = math.hypot(x1, y1)
        tlx, tly = x1 / sp, y1 / sp
        kappa = (x1 * y2 - y1 * x2) / sp**3
        tx, ty = r00 * tlx + r01 * tly, r10 * tlx + r11 * tly
        nx, ny = ty, -tx
        gwx, gwy = px + r00 * gx + r01 * gy, py + r10 * gx + r11 * gy
        d = nx * (cx - gwx) + ny * (cy - gwy)
        v = snap.v
        Jo, Jt = fo.J, ft.J
        JQ = Jt[:2] - Jo[:2]
        JQ[0] += ey * Jo[5]  # - S e J_theta, S e = (-e_y, e_x)
        JQ[1] -= ex * Jo[5]
        Jrot = Jo[5] - Jt[5]
        omega = float(Jo[5] @ v)
        w = JQ @ v
        cdot, pdot = Jt[:2] @ v, Jo[:2] @ v
        if fo.drift is not None and ft.drift is not None:
            ao, at = fo.drift, ft.drift
            rel = cdot - pdot
            wdot = np.array(
                [
                    at[0] - ao[0] + ao[5] * ey + omega * rel[1],
                    at[1] - ao[1] - ao[5] * ex - omega * rel[0],
                ]
            )
            alpha = float(ao[5] - at[5])
        else:
            wdot, alpha = np.zeros(2), 0.0
        sdot = (tx * float(w[0]) + ty * float(w[1])) / (1.0 + kappa * d)
        geo = ContactGeometry(
            u, np.array([gwx, gwy]), np.array([tx, ty]), np.array([nx, ny]), kappa,
            np.array([cx, cy]), np.array([ex, ey]), d, JQ, Jrot, w, wdot, omega, alpha, sdot,
            math.atan2(r10, r00), _angle(ft.R),
        )  # fmt: skip
        snap.derived[self] = geo
        return geo

    def arclength(self, snap: Snapshot) -> float:
        """Arclength ``s`` of the contact point on the object contour, in ``[0, L)`` (m)."""
        return float(self.contour.arclength(self.geometry(snap).u)[0])

    def slip_velocity(self, snap: Snapshot) -> float:
        """Relative tangential velocity of the two material contact points (m/s)."""
        g = self.geometry(snap)
        return float(g.t @ g.w + self.r * (g.Jrot @ snap.v))

    def rolling_integral(self, snap: Snapshot) -> tuple[float, float]:
        """``(s, theta + psi(s) - phi)``: ``R = s + r (theta + psi - phi)`` is conserved (eq. 81).

        ``psi`` is the normal angle ``atan2(n_y, n_x)`` in the object frame. The
        two parts are returned separately, wrapped (``s`` to ``[0, L)``, the angle
        to ``(-pi, pi]``), so that a caller can unwrap each along a run.
        """
        g = self.geometry(snap)
        _, _, nl, _ = self.contour.local(g.u)
        ang = g.theta + np.arctan2(nl[1], nl[0]) - g.phi
        return self.arclength(snap), float(np.angle(np.exp(1j * ang)))


class ContactConstraint(Constraint):
    """``Q = d - r = 0``: the fingertip touches the contour (eq. 67); normal force ``-lambda``."""

    holonomic = True
    dim = 1

    def __init__(self, contact: RollingContact) -> None:
        self.contact = contact
        self.frames = (contact.obj, contact.tip)
        self.name = f"contact {contact.name}"

    def residual(self, snap: Snapshot) -> np.ndarray:
        return np.array([self.contact.geometry(snap).d - self.contact.r])

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        g = self.contact.geometry(snap)
        return (g.n @ g.JQ)[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        g = self.contact.geometry(snap)
        ndot = g.omega * _S(g.n) + g.kappa * g.sdot * g.t
        return np.array([ndot @ g.w + g.n @ g.wdot])


class RollingConstraint(Constraint):
    """Pfaffian rolling constraint (eq. 71): ``t . w + r (omega - phi') = 0``.

    Tangential force on the fingertip = ``-lambda`` along ``t``.
    """

    holonomic = False
    dim = 1

    def __init__(self, contact: RollingContact) -> None:
        self.contact = contact
        self.frames = (contact.obj, contact.tip)
        self.name = f"rolling {contact.name}"

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        g = self.contact.geometry(snap)
        return (g.t @ g.JQ + self.contact.r * g.Jrot)[None]

    def drift(self, snap: Snapshot) -> np.ndarray:
        g = self.contact.geometry(snap)
        tdot = g.omega * _S(g.t) - g.kappa * g.sdot * g.n
        return np.array([tdot @ g.w + g.t @ g.wdot + self.contact.r * g.alpha])


def rolling_constraints(contact: RollingContact) -> list[Constraint]:
    """``[Q, R]`` of one contact: the contact and rolling constraints."""
    return [ContactConstraint(contact), RollingConstraint(contact)]


def _du(contour: Contour, r: float):
    """``ds / dx = 1 / (kappa(s) + 1/r)`` in the contour's parameter ``u`` (``ds = |gamma'|
    du``): ``du / dx = 1 / ((kappa(u) + 1/r) |gamma'(u)|)``, at one ``u`` (math-module
    floats: no arclength inversion per evaluation, as the ODE in ``s`` needs)."""

    def rate(u: float) -> float:
        _, _, x1, y1, x2, y2 = contour.scalar(u)
        sp = math.hypot(x1, y1)
        return 1.0 / (((x1 * y2 - y1 * x2) / sp**3 + 1.0 / r) * sp)

    return rate


def _unwrapped_s(contour: Contour, u: np.ndarray, u0: float, s0: float) -> np.ndarray:
    """The arclength (unwrapped, m) at the parameters ``u`` (unwrapped), ``s0`` at ``u0``."""

    def s_of(x):
        x = np.asarray(x, dtype=float)
        return contour.arclength(x) + contour.length * np.floor(x / contour.U)

    return s0 + (s_of(u) - s_of([u0])[0])  # s0 itself where u is u0


def integrate_arclength(
    t: np.ndarray,
    rel_rate: np.ndarray,
    s0: float,
    contour: Contour,
    r: float,
    rtol: float = 1e-12,
) -> np.ndarray:
    """Integrate ``(kappa(s) + 1/r) s' = phi' - theta'`` (planar rolling ODE).

    ``rel_rate`` = ``phi' - theta'`` sampled at ``t``; it is interpolated by a
    cubic spline and the ODE is solved by DOP853, in the contour's parameter ``u``
    (:func:`_du`), then ``s = s(u)``. Returns ``s(t)`` (unwrapped).
    """
    rate, du = CubicSpline(t, rel_rate), _du(contour, r)
    u0 = float(contour.param(s0)[0])

    def f(tt, y):
        return [rate(tt) * du(y[0])]

    sol = solve_ivp(f, (t[0], t[-1]), [u0], method="DOP853", t_eval=t, rtol=rtol, atol=1e-15)
    return _unwrapped_s(contour, sol.y[0], u0, s0)


def integrate_arclength_angle(
    beta: np.ndarray, s0: float, contour: Contour, r: float, rtol: float = 1e-13
) -> np.ndarray:
    """Integrate the planar rolling ODE in the relative angle ``beta = phi - theta``.

    ``(kappa(s) + 1/r) s' = beta'`` is, with ``d beta = beta' dt``, the autonomous
    scalar ODE ``ds / d beta = 1 / (kappa(s) + 1/r)``: its solution is a function of
    the value of ``beta`` alone (for any time history between samples), so
    integrating it in ``beta`` from ``beta[0]`` (DOP853 with dense output over
    ``[min beta, max beta]``, in the contour's parameter ``u``: :func:`_du`) and
    evaluating it at the sampled ``beta`` (a state of the simulation, ``phi = e^T q``
    and ``theta``) has no time-sampling error: the result is the exact ODE solution
    driven by the simulated motion. Equivalent to integrating the time ODE with the
    cubic Hermite interpolant of ``beta`` through ``(beta, beta')`` at the samples.
    Returns ``s`` (unwrapped, m).
    """
    beta = np.asarray(beta, dtype=float)
    b0, du = float(beta[0]), _du(contour, r)
    u0 = float(contour.param(s0)[0])

    def f(_b, y):
        return [du(y[0])]

    u = np.full(beta.shape, u0)
    for end, mask in ((beta.max(), beta > b0), (beta.min(), beta < b0)):
        if np.any(mask):
            sol = solve_ivp(
                f, (b0, float(end)), [u0], method="DOP853", dense_output=True,
                rtol=rtol, atol=1e-16,
            )  # fmt: skip
            u[mask] = sol.sol(beta[mask])[0]
    return _unwrapped_s(contour, u, u0, s0)


def frobenius_defect(
    cset: ConstraintSet, q: np.ndarray, rows: list[int], eps: float = 1e-6
) -> float:
    """Largest ``|d omega(X, Y)|`` of the Pfaffian rows over the constrained distribution.

    ``d omega(X, Y) = X^T (D - D^T) Y`` with ``D_jk = d omega_k / d q_j`` (central
    differences; coordinates with ``nq == nv``), for ``X, Y`` an orthonormal basis
    of ``N(A)`` (all rows). Zero (to the difference error, ~1e-8) for an
    integrable system (Frobenius); each row is normalised by its norm first.
    """
    mech = cset.mechanism
    nv = mech.nv

    def forms(qq):
        A = cset.evaluate(mech.compute(qq, np.zeros(nv), cset.frames, dynamics=False)).A
        return A[rows]

    A = cset.evaluate(mech.compute(q, np.zeros(nv), cset.frames, dynamics=False)).A
    _, sv, Vt = np.linalg.svd(A)
    N = Vt[int(np.sum(sv > 1e-9)) :].T
    W0 = forms(q)
    scale = np.linalg.norm(W0, axis=1)
    D = np.zeros((len(rows), nv, nv))
    for j in range(nv):
        dq = np.zeros(nv)
        dq[j] = eps
        D[:, j, :] = (forms(mech.integrate(q, dq)) - forms(mech.integrate(q, -dq))) / (2 * eps)
    out = 0.0
    for k in range(len(rows)):
        dw = N.T @ (D[k] - D[k].T) @ N
        out = max(out, float(np.abs(dw).max() / scale[k]))
    return out


# -- lowerings to the compiled core (pfaff.lowering; src/cpp/algorithms/rolling.cpp) ---------


def _refuse_contact(c: ContactConstraint | RollingConstraint) -> str | None:
    """The rows of a contact lower when its contour does."""
    return lowering.reason(c.contact.contour, "contour")


def _contact_index(contact: RollingContact, into) -> int:
    """The contact's index in the core (added once for its two rows)."""
    if contact not in into.shared:
        params = lowering.lower(contact.contour, "contour", into)
        into.shared[contact] = into.system.add_contact(
            core.contour(**params), into.frame(contact.obj), into.frame(contact.tip), contact.r
        )
    return into.shared[contact]


@lowering.lowers(ContactConstraint, category="constraint", refuse=_refuse_contact)
def _lower_contact(c: ContactConstraint, into):
    """The contact row Q = d - r (Kind.RollContact)."""
    s = into.spec("RollContact", c)
    s.contact = _contact_index(c.contact, into)
    return s


@lowering.lowers(RollingConstraint, category="constraint", refuse=_refuse_contact)
def _lower_rolling(c: RollingConstraint, into):
    """The Pfaffian rolling row (Kind.RollTangent)."""
    s = into.spec("RollTangent", c)
    s.contact = _contact_index(c.contact, into)
    return s
