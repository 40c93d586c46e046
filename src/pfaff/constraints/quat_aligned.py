"""Orientation lock with MuJoCo's quaternion residual: ``Phi = vec(q_e)``.

``R_e = R_1 R_off R_2^T`` (world frame) and ``q_e = (s, u)`` its unit quaternion
with ``s >= 0``: ``Phi = u = sin(theta/2) axis``, the residual of MuJoCo's weld
(before ``torquescale``). Unlike ``vee(skew(R_e)) = sin(theta) axis``
(:class:`~pfaff.constraints.weld.FrameAligned`), it has no stationary point at
``theta = 90 deg``, so Newton-Raphson assembles welds that start a quarter turn
apart (MuJoCo's ``equality_site.xml``).

Derivatives (``w = omega_1 - R_e omega_2``, ``R_e' = [w]_x R_e``, so
``q_e' = (0, w) q_e / 2``): ``u' = H w`` with ``H = (s I - [u]_x) / 2``, hence
``A = H (J_w1 - R_e J_w2)`` and the drift ``H' w + H w'`` with
``H' = (s' I - [u']_x) / 2``, ``s' = -u.w / 2`` and
``w' = alpha_1 - R_e alpha_2 - w x (R_e omega_2)`` at zero acceleration.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pfaff.constraints.base import TermsConstraint
from pfaff.constraints.library import distinct_frames
from pfaff.linalg import skew
from pfaff.lowering import lowers
from pfaff.mechanism.base import Snapshot


class QuatAligned(TermsConstraint):
    """``R_1 R_off = R_2`` with the residual ``vec(q_e)`` (3 rows; ``frame2=None``: world)."""

    dim = 3

    def __init__(self, frame1: str, frame2: str | None = None, offset=None, name=None) -> None:
        from pfaff.constraints.weld import rotation_matrix

        distinct_frames(frame1, frame2, f"quat_aligned {name or frame1!r}")
        self.frame1, self.frame2 = frame1, frame2
        self.R_off = rotation_matrix(offset, "offset")
        self.frames = (frame1,) if frame2 is None else (frame1, frame2)
        self.name = name or f"{frame1} aligned with {frame2 or 'world'}"

    def terms(self, snap: Snapshot):
        f1 = snap.frames[self.frame1]
        f2 = None if self.frame2 is None else snap.frames[self.frame2]
        R2 = np.eye(3) if f2 is None else f2.R
        Re = f1.R @ self.R_off @ R2.T
        x, y, z, s = pin.Quaternion(Re).coeffs()
        u = np.array([x, y, z])
        if s < 0:
            s, u = -s, -u
        H = 0.5 * (s * np.eye(3) - skew(u))
        v = snap.v
        if f2 is None:
            Jw, wdot = f1.J[3:], f1.drift[3:]
        else:
            Jw = f1.J[3:] - Re @ f2.J[3:]
            o2 = Re @ (f2.J[3:] @ v)
            wdot = f1.drift[3:] - Re @ f2.drift[3:] - np.cross(Jw @ v, o2)
        w = Jw @ v
        du = H @ w
        Hd = 0.5 * (-0.5 * (u @ w) * np.eye(3) - skew(du))
        return H @ Jw, Hd @ w + H @ wdot, u


@lowers(QuatAligned, category="constraint")
def _lower_quat(c: QuatAligned, into):
    """The compiled rows (src/cpp: Kind.QuatAligned)."""
    s = into.spec("QuatAligned", c)
    s.s1, s.s2, s.R_off = into.frame(c.frame1), into.frame(c.frame2), c.R_off
    return s
