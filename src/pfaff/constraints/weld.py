"""Orientation locks and rigid welds between frames (holonomic, analytic derivatives).

- :class:`FrameAligned` -- ``R_1 R_off = R_2`` (or a fixed world orientation):
  ``Phi = D vee(skew(R_e))`` with ``R_e = R_1 R_off R_2^T`` (world-frame
  orientation error; ``vee(skew(R_e)) = sin(angle) axis``, zero at ``R_e = I``).
- :class:`Weld` -- a rigid grasp: the two frames' origins coincide (3 rows,
  :class:`~pfaff.constraints.PointsCoincide`) and their orientations are locked
  (3 rows, :class:`FrameAligned`). Its multipliers are the force and the moment
  (world axes) that frame 1's body applies to frame 2's body at the point.

Derivatives: with ``w = omega_1 - R_e omega_2`` (world), ``R_e' = [w]_x R_e`` and
``d/dt vee(skew(R_e)) = G w``, ``G = (tr(R_e) I - R_e) / 2``; so
``A = D G (J_w1 - R_e J_w2)`` (the angular rows of the frames' Jacobians, equal
to them on the manifold where ``G = I``) and the drift
``D (G' w + G (alpha_1 - R_e alpha_2 - [w]_x R_e omega_2))`` with
``G' = (tr(R_e') I - R_e') / 2`` and ``alpha`` the frames' angular ``J' v``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.constraints.base import TermsConstraint
from pfaff.constraints.library import distinct_frames, unit_directions
from pfaff.lowering import lowers
from pfaff.mechanism.base import ModelError, Snapshot


def rotation_matrix(R, what: str) -> np.ndarray:
    """``R`` as a checked 3 x 3 rotation (identity for None); ``what`` names it in errors."""
    R = np.eye(3) if R is None else np.asarray(R, dtype=float)
    if R.shape != (3, 3) or not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ModelError(f"{what} must be a 3 x 3 rotation matrix")
    return R


class _OnePass(TermsConstraint):
    """A holonomic constraint whose ``A``, drift and ``Phi`` come from one :meth:`write`."""

    def terms(self, snap: Snapshot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        A, d, phi = np.empty((self.dim, snap.v.size)), np.empty(self.dim), np.empty(self.dim)
        self.write(snap, A, d, phi)
        return A, d, phi


class FrameAligned(_OnePass):
    """Orientation lock ``R_1 R_off = R_2`` along chosen world axes (holonomic).

    Parameters
    ----------
    frame1, frame2 : frame names; ``frame2=None`` locks frame 1 to the fixed
        world orientation ``target`` (``R_1 R_off = target``).
    offset : ``R_off`` (frame 2's orientation seen from frame 1 when aligned).
    target : the fixed world orientation (3 x 3) when ``frame2`` is None.
    directions : k x 3 world directions of the kept rows (default: x, y, z);
        e.g. ``((1, 0, 0), (0, 1, 0))`` locks the two tilts of a body on a table.
    """

    def __init__(
        self,
        frame1: str,
        frame2: str | None = None,
        offset=None,
        target=None,
        directions: Sequence[Sequence[float]] | None = None,
        name: str | None = None,
    ) -> None:
        distinct_frames(frame1, frame2, f"frame_aligned {name or frame1!r}")
        self.D = unit_directions(directions)
        self.dim = self.D.shape[0]
        self.frame1, self.frame2 = frame1, frame2
        self.R_off = rotation_matrix(offset, "offset")
        self.R_t = rotation_matrix(target, "target")
        self.frames = (frame1,) if frame2 is None else (frame1, frame2)
        self.name = name or f"{frame1} aligned with {frame2 or 'world'}"
        # constant factors of R_e (identity ones skipped), D = I skipped
        self._R_right = self.R_off @ self.R_t.T
        self._off = None if np.array_equal(self.R_off, np.eye(3)) else self.R_off
        self._Dm = None if np.array_equal(self.D, np.eye(3)) else self.D

    def write(self, snap: Snapshot, A: np.ndarray, d: np.ndarray, phi: np.ndarray) -> None:
        """``A = D G J_w``, ``d = D (G' w + G w')``, ``phi = D vee(skew(R_e))`` into
        the given arrays, in one pass.

        ``J_w = J_w1 - R_e J_w2`` (``w = J_w v``); ``G`` as in the module docstring.
        """
        f1 = snap.frames[self.frame1]
        if self.frame2 is None:
            Re = f1.R @ self._R_right
            Jw, f2 = f1.J[3:], None
        else:
            f2 = snap.frames[self.frame2]
            Re = (f1.R if self._off is None else f1.R @ self._off) @ f2.R.T
            Jw = f1.J[3:] - Re @ f2.J[3:]
        Rl = Re.tolist()
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = Rl
        t = r00 + r11 + r22
        G = -0.5 * np.array([[r00 - t, r01, r02], [r10, r11 - t, r12], [r20, r21, r22 - t]])
        e = [0.5 * (r21 - r12), 0.5 * (r02 - r20), 0.5 * (r10 - r01)]  # vee(skew(R_e))
        dr = _drift3(f1, f2, Rl, Jw, snap.v)
        if self._Dm is None:
            np.matmul(G, Jw, out=A)
            d[:], phi[:] = dr, e
        else:
            np.matmul(self._Dm @ G, Jw, out=A)
            d[:], phi[:] = self._Dm @ dr, self._Dm @ e


def _drift3(f1, f2, Rl: list, Jw: np.ndarray, v: np.ndarray) -> list[float]:
    """``G' w + G w'``: the drift of all three world rows of :class:`FrameAligned`
    (frames 1 and 2, ``R_e`` as nested lists, ``J_w``).

    Written out in floats: a dozen 3-vector products, where NumPy's per-call
    overhead would dominate.
    """
    w0, w1, w2 = (Jw @ v).tolist()
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = Rl
    a0, a1, a2 = f1.drift[3:].tolist()
    if f2 is not None:
        # w' = alpha_1 - R_e alpha_2 - w x (R_e omega_2)
        o0, o1, o2 = (f2.J[3:] @ v).tolist()
        b0, b1, b2 = f2.drift[3:].tolist()
        u0 = r00 * o0 + r01 * o1 + r02 * o2
        u1 = r10 * o0 + r11 * o1 + r12 * o2
        u2 = r20 * o0 + r21 * o1 + r22 * o2
        a0 -= r00 * b0 + r01 * b1 + r02 * b2 + (w1 * u2 - w2 * u1)
        a1 -= r10 * b0 + r11 * b1 + r12 * b2 + (w2 * u0 - w0 * u2)
        a2 -= r20 * b0 + r21 * b1 + r22 * b2 + (w0 * u1 - w1 * u0)
    # G' w = (tr(R_e') w - R_e' w) / 2 with R_e' = [w]_x R_e: tr(R_e') = tr_d,
    # R_e' w = w x (R_e w)
    tr_d = w0 * (r12 - r21) + w1 * (r20 - r02) + w2 * (r01 - r10)
    c0 = r00 * w0 + r01 * w1 + r02 * w2
    c1 = r10 * w0 + r11 * w1 + r12 * w2
    c2 = r20 * w0 + r21 * w1 + r22 * w2
    # G w' = (tr(R_e) w' - R_e w') / 2
    tr = r00 + r11 + r22
    return [
        0.5 * (tr_d * w0 - (w1 * c2 - w2 * c1) + tr * a0 - (r00 * a0 + r01 * a1 + r02 * a2)),
        0.5 * (tr_d * w1 - (w2 * c0 - w0 * c2) + tr * a1 - (r10 * a0 + r11 * a1 + r12 * a2)),
        0.5 * (tr_d * w2 - (w0 * c1 - w1 * c0) + tr * a2 - (r20 * a0 + r21 * a1 + r22 * a2)),
    ]


class Weld(_OnePass):
    """Rigid grasp: frame 1's origin and orientation fixed to frame 2's (6 rows).

    Rows 0-2: ``p_1 - p_2`` (world); rows 3-5: :class:`FrameAligned` with
    ``R_1 R_off = R_2``. The multipliers ``(f, m)`` are the wrench (world axes,
    about the common point) that frame 1's body applies to frame 2's body.

    Parameters
    ----------
    frame1, frame2 : the two welded frames.
    offset : ``R_off`` (3 x 3), frame 2's orientation seen from frame 1 (default: I).
    name : a label for reports and messages.
    """

    dim = 6

    def __init__(self, frame1: str, frame2: str, offset=None, name: str | None = None) -> None:
        distinct_frames(frame1, frame2, f"weld {name or frame1!r}")
        self.frame1, self.frame2 = frame1, frame2
        self.aligned = FrameAligned(frame1, frame2, offset=offset)
        self.frames = (frame1, frame2)
        self.name = name or f"{frame1} welded to {frame2}"

    def write(self, snap: Snapshot, A: np.ndarray, d: np.ndarray, phi: np.ndarray) -> None:
        """Position rows, then :meth:`FrameAligned.write` into rows 3-5."""
        f1, f2 = snap.frames[self.frame1], snap.frames[self.frame2]
        np.subtract(f1.J[:3], f2.J[:3], out=A[:3])
        np.subtract(f1.drift[:3], f2.drift[:3], out=d[:3])
        np.subtract(f1.p, f2.p, out=phi[:3])
        self.aligned.write(snap, A[3:], d[3:], phi[3:])


# -- lowerings to the compiled core (pfaff.lowering; src/cpp) ------------------------------


@lowers(FrameAligned, category="constraint")
def _lower_aligned(c: FrameAligned, into):
    s = into.spec("FrameAligned", c)
    s.s1, s.s2 = into.frame(c.frame1), into.frame(c.frame2)
    s.R_off, s.R_right = c.R_off, c._R_right
    into.directions(s, c.D)
    return s


@lowers(Weld, category="constraint")
def _lower_weld(c: Weld, into):
    s = into.spec("Weld", c)
    s.s1, s.s2, s.R_off = into.frame(c.frame1), into.frame(c.frame2), c.aligned.R_off
    into.directions(s, np.eye(3))
    return s
