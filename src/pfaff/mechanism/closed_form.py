"""Closed-form planar models: independent witnesses for the Pinocchio backend.

- :class:`SliderCrankChain` -- the open chain of Aghili's slider-crank
  (Sec. 8, eq. 68): crank and connecting rod of equal length ``l``, each a
  point mass ``m`` at its distal end, gravity along -y.
- :class:`YZArm` -- one arm of Yoshikawa & Zheng's experimental system
  (IJRR 1993, Sec. 5, Table 1; ../shared/reference/yoshikawa_zheng.md): a
  parallelogram five-bar in the horizontal plane whose coordinates are the
  absolute link angles ``q1`` (upper arm) and ``q2`` (forearm).

Frame kinematics are closed forms too: every reported point is
``b + sum_k l_k u(c_k . q)`` with ``u(a) = (cos a, sin a)``, so its Jacobian
is ``sum_k l_k u'(c_k . q) c_k^T`` and its drift ``-sum_k l_k u(c_k . q) (c_k . v)^2``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from pfaff.mechanism.base import FrameState, Mechanism, ModelError, Snapshot


def planar_point_state(
    base: Sequence[float],
    lengths: Sequence[float],
    coeffs: Sequence[Sequence[float]],
    q: Sequence[float],
    v: Sequence[float],
) -> FrameState:
    """Frame state of the point ``base + sum_k l_k u(coeffs[k] . q)``.

    The frame's x axis points along the last segment; its angular velocity is
    ``coeffs[-1] . v``. Scalar arithmetic on lists: these models have a
    handful of segments and coordinates, where NumPy's per-call cost dominates.
    """
    nv = len(coeffs[0])
    px, py = float(base[0]), float(base[1])
    J0, J1 = [0.0] * nv, [0.0] * nv
    dx = dy = 0.0
    for L, c in zip(lengths, coeffs):
        phi = sum(ci * qi for ci, qi in zip(c, q))
        w = sum(ci * vi for ci, vi in zip(c, v))
        cs, sn = math.cos(phi), math.sin(phi)
        px += L * cs
        py += L * sn
        for j in range(nv):
            J0[j] -= L * sn * c[j]
            J1[j] += L * cs * c[j]
        dx -= L * cs * w * w
        dy -= L * sn * w * w
    zero = [0.0] * nv
    return FrameState(
        p=np.array([px, py, 0.0]),
        R=np.array([[cs, -sn, 0.0], [sn, cs, 0.0], [0.0, 0.0, 1.0]]),
        J=np.array([J0, J1, zero, zero, zero, list(coeffs[-1])]),
        drift=np.array([dx, dy, 0.0, 0.0, 0.0, 0.0]),
    )


class _PlanarClosedForm(Mechanism):
    """Shared frame machinery of the closed-form planar models."""

    nq = nv = 2
    # frame name -> (segment lengths, coefficient rows c_k)
    _points: dict[str, tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]]
    base = (0.0, 0.0)
    polylines: list[list[str]]

    @property
    def frame_names(self) -> Sequence[str]:
        return list(self._points)

    def _frames(self, q: np.ndarray, v: np.ndarray, names: Iterable[str]) -> dict:
        out = {}
        for n in names:
            if n not in self._points:
                self.check_frames([n])
            L, C = self._points[n]
            out[n] = planar_point_state(self.base, L, C, q.tolist(), v.tolist())
        return out


class SliderCrankChain(_PlanarClosedForm):
    """Open chain of Aghili's slider-crank (eq. 68), cut at the slider C.

    ``q = (q1, q2)``: crank angle from the x axis and rod angle relative to
    the crank. Frames: ``base`` (A), ``crank_tip`` (B), ``slider`` (C).

    Parameters
    ----------
    m : mass of each point mass (kg), l : link length (m), g : gravity (m/s^2).
    """

    name = "slider-crank (closed form)"

    def __init__(self, m: float = 1.0, l: float = 1.0, g: float = 9.81) -> None:
        if not m > 0:
            raise ModelError(f"slider-crank: mass must be > 0 kg, got {m!r}")
        if not l > 0:
            raise ModelError(f"slider-crank: length must be > 0 m, got {l!r}")
        self.m, self.l, self.g = float(m), float(l), float(g)
        e1, e12 = (1.0, 0.0), (1.0, 1.0)
        self._points = {
            "base": ((0.0,), (e1,)),
            "crank_tip": ((l,), (e1,)),
            "slider": ((l, l), (e1, e12)),
        }
        self.polylines = [["base", "crank_tip", "slider"]]

    def compute(self, q, v=None, frames=(), dynamics=True, extras=True) -> Snapshot:
        v = np.zeros(2) if v is None else v
        snap = Snapshot(q=q, v=v, frames=self._frames(q, v, frames))
        if dynamics:
            m, l, g = self.m, self.l, self.g
            q1, q2 = float(q[0]), float(q[1])
            v1, v2 = float(v[0]), float(v[1])
            s1, c1, s2, c2 = math.sin(q1), math.cos(q1), math.sin(q2), math.cos(q2)
            s12, c12 = math.sin(q1 + q2), math.cos(q1 + q2)
            ml2, mlg = m * l * l, m * l * g
            m11, m12, m22 = ml2 * (3 + 2 * c2), ml2 * (1 + c2), ml2
            g1, g2 = mlg * (c12 + 2 * c1), mlg * c12
            snap.M = np.array([[m11, m12], [m12, m22]])
            snap.g = np.array([g1, g2])
            snap.h = np.array([g1 - ml2 * s2 * (v2 * v2 + 2 * v1 * v2), g2 + ml2 * s2 * v1 * v1])
            snap.kinetic = 0.5 * (m11 * v1 * v1 + 2 * m12 * v1 * v2 + m22 * v2 * v2)
            snap.potential = mlg * (2 * s1 + s12)
        return snap


@dataclass(frozen=True)
class YZLink:
    """Table 1 row: mass m (kg), length l (m), joint-to-COM lg (m), inertia I (kg m^2)."""

    m: float
    l: float
    lg: float
    I: float


#: Yoshikawa & Zheng (1993), Table 1, links 0..4.
YZ_TABLE1 = (
    YZLink(0.0290, 0.128, 0.068, 16.40e-5),
    YZLink(0.0195, 0.050, 0.030, 6.24e-5),
    YZLink(0.0285, 0.128, 0.064, 8.96e-5),
    YZLink(0.0239, 0.050, 0.025, 0.75e-5),
    YZLink(0.0300, 0.063, 0.040, 5.00e-5),
)


class YZArm(_PlanarClosedForm):
    """One arm of Yoshikawa & Zheng's system (Sec. 5; reference/yoshikawa_zheng.md).

    ``q = (q1, q2)`` are absolute link angles (upper arm, forearm); horizontal
    plane, no gravity::

        M = [[A + I0 + I2, -R cos(q1 - q2)], [-R cos(q1 - q2), B + I1 + I3 + I4]]
        h = [-R sin(q1 - q2) q2'^2, R sin(q1 - q2) q1'^2]

    Frames: ``base``, ``elbow`` (b + l0 u(q1)), ``tip`` (b + l0 u(q1) + l4 u(q2)).
    """

    name = "Yoshikawa-Zheng arm (closed form)"

    def __init__(
        self, links: Sequence[YZLink] = YZ_TABLE1, base: Sequence[float] = (0.0, 0.0)
    ) -> None:
        if len(links) != 5:
            raise ModelError(f"YZ arm needs 5 links (Table 1), got {len(links)}")
        for i, k in enumerate(links):
            if not k.m > 0:
                raise ModelError(f"YZ arm link {i}: mass must be > 0 kg, got {k.m!r}")
        L0, L1, L2, L3, L4 = links
        self.links = tuple(links)
        self.base = (float(base[0]), float(base[1]))
        self.A = L0.m * L0.lg**2 + L2.m * L2.lg**2 + L3.m * L0.l**2 + L4.m * L0.l**2
        self.B = L1.m * L1.lg**2 + L2.m * L1.l**2 + L3.m * L3.lg**2 + L4.m * L4.lg**2
        self.R = L2.m * L1.l * L2.lg + L3.m * L0.l * L3.lg - L4.m * L0.l * L4.lg
        self.M11 = self.A + L0.I + L2.I
        self.M22 = self.B + L1.I + L3.I + L4.I
        e1, e2 = (1.0, 0.0), (0.0, 1.0)
        self._points = {
            "base": ((0.0,), (e1,)),
            "elbow": ((L0.l,), (e1,)),
            "tip": ((L0.l, L4.l), (e1, e2)),
        }
        self.polylines = [["base", "elbow", "tip"]]

    def serial_equivalent(self) -> tuple[tuple[float, float, float, float], ...]:
        """A two-link serial arm with this arm's ``M(q)`` and tip: ``(length, mass, com,
        inertia)`` of its upper arm and forearm, for a Pinocchio chain with relative
        joint angles ``(q1, q2 - q1)``.

        A serial arm with absolute angles ``(q1, q2)``, upper arm ``(l0, m1, c1 = 0,
        I1)`` and forearm ``(l4, m2, c2, I2)`` has ``M11 = I1 + m2 l0^2``, ``M22 = I2 +
        m2 c2^2``, ``M12 = m2 l0 c2 cos(q1 - q2)``. Matching the five-bar (class
        docstring) gives ``c2 = -R / (m2 l0)``, ``I1 = M11 - m2 l0^2`` and ``I2 = M22 -
        R^2 / (m2 l0^2)``, both > 0 for ``R^2 / M22 < m2 l0^2 < M11``, an interval that
        is never empty since ``M`` is positive definite (``M11 M22 > R^2``); ``m2`` is
        its midpoint. With no gravity and a fixed base the masses enter the motion only
        through ``M``: the upper arm's mass (``L0 + L1 + L2``) sits on its joint.
        """
        L0, L1, L2, L3, L4 = self.links
        m2l2 = 0.5 * (self.M11 + self.R**2 / self.M22)
        m2 = m2l2 / L0.l**2
        return (
            (L0.l, L0.m + L1.m + L2.m, 0.0, self.M11 - m2l2),
            (L4.l, m2, -self.R / (m2 * L0.l), self.M22 - self.R**2 / m2l2),
        )

    def compute(self, q, v=None, frames=(), dynamics=True, extras=True) -> Snapshot:
        v = np.zeros(2) if v is None else v
        snap = Snapshot(q=q, v=v, frames=self._frames(q, v, frames))
        if dynamics:
            d = float(q[0] - q[1])
            v1, v2 = float(v[0]), float(v[1])
            Rc, Rs = self.R * math.cos(d), self.R * math.sin(d)
            snap.M = np.array([[self.M11, -Rc], [-Rc, self.M22]])
            snap.h = np.array([-Rs * v2 * v2, Rs * v1 * v1])
            snap.g = np.zeros(2)
            snap.kinetic = 0.5 * (self.M11 * v1 * v1 - 2 * Rc * v1 * v2 + self.M22 * v2 * v2)
            snap.potential = 0.0
        return snap
