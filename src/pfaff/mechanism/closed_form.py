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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from pfaff.mechanism.base import FrameState, Mechanism, ModelError, Snapshot


def _rotz(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def planar_point_state(
    base: np.ndarray,
    lengths: Sequence[float],
    coeffs: np.ndarray,
    q: np.ndarray,
    v: np.ndarray,
) -> FrameState:
    """Frame state of the point ``base + sum_k l_k u(coeffs[k] . q)``.

    The frame's x axis points along the last segment; its angular velocity is
    ``coeffs[-1] . v``.
    """
    coeffs = np.atleast_2d(coeffs)
    nv = coeffs.shape[1]
    phi = coeffs @ q
    w = coeffs @ v
    L = np.asarray(lengths, dtype=float)
    c, s = np.cos(phi), np.sin(phi)
    p = np.array([base[0] + L @ c, base[1] + L @ s, 0.0])
    J = np.zeros((6, nv))
    J[0] = -(L * s) @ coeffs
    J[1] = (L * c) @ coeffs
    J[5] = coeffs[-1]
    drift = np.zeros(6)
    drift[0] = -(L * c) @ (w * w)
    drift[1] = -(L * s) @ (w * w)
    return FrameState(p=p, R=_rotz(phi[-1]), J=J, drift=drift)


class _PlanarClosedForm(Mechanism):
    """Shared frame machinery of the closed-form planar models."""

    nq = nv = 2
    # frame name -> (lengths, coefficient rows)
    _points: dict[str, tuple[tuple[float, ...], np.ndarray]]
    base = np.zeros(2)
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
            out[n] = planar_point_state(self.base, L, C, q, v)
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
        e1, e12 = np.array([1.0, 0.0]), np.array([1.0, 1.0])
        self._points = {
            "base": ((0.0,), e1[None]),
            "crank_tip": ((l,), e1[None]),
            "slider": ((l, l), np.stack([e1, e12])),
        }
        self.polylines = [["base", "crank_tip", "slider"]]

    def compute(self, q, v=None, frames=(), dynamics=True) -> Snapshot:
        v = np.zeros(2) if v is None else v
        snap = Snapshot(q=q, v=v, frames=self._frames(q, v, frames))
        if dynamics:
            m, l, g = self.m, self.l, self.g
            s1, c1 = np.sin(q[0]), np.cos(q[0])
            s2, c2 = np.sin(q[1]), np.cos(q[1])
            s12, c12 = np.sin(q[0] + q[1]), np.cos(q[0] + q[1])
            ml2 = m * l * l
            M = ml2 * np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])
            grav = m * l * g * np.array([c12 + 2 * c1, c12])
            cor = ml2 * s2 * np.array([-(v[1] ** 2 + 2 * v[0] * v[1]), v[0] ** 2])
            snap.M, snap.g, snap.h = M, grav, cor + grav
            snap.kinetic = 0.5 * float(v @ M @ v)
            snap.potential = m * g * l * (2 * s1 + s12)
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
        self.base = np.asarray(base, dtype=float)
        self.A = L0.m * L0.lg**2 + L2.m * L2.lg**2 + L3.m * L0.l**2 + L4.m * L0.l**2
        self.B = L1.m * L1.lg**2 + L2.m * L1.l**2 + L3.m * L3.lg**2 + L4.m * L4.lg**2
        self.R = L2.m * L1.l * L2.lg + L3.m * L0.l * L3.lg - L4.m * L0.l * L4.lg
        self.M11 = self.A + L0.I + L2.I
        self.M22 = self.B + L1.I + L3.I + L4.I
        e1, e2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
        self._points = {
            "base": ((0.0,), e1[None]),
            "elbow": ((L0.l,), e1[None]),
            "tip": ((L0.l, L4.l), np.stack([e1, e2])),
        }
        self.polylines = [["base", "elbow", "tip"]]

    def compute(self, q, v=None, frames=(), dynamics=True) -> Snapshot:
        v = np.zeros(2) if v is None else v
        snap = Snapshot(q=q, v=v, frames=self._frames(q, v, frames))
        if dynamics:
            d = q[0] - q[1]
            Rc, Rs = self.R * np.cos(d), self.R * np.sin(d)
            M = np.array([[self.M11, -Rc], [-Rc, self.M22]])
            snap.M = M
            snap.h = np.array([-Rs * v[1] ** 2, Rs * v[0] ** 2])
            snap.g = np.zeros(2)
            snap.kinetic = 0.5 * float(v @ M @ v)
            snap.potential = 0.0
        return snap
