"""Task coordinates theta(q) for projected inverse-dynamics control (Aghili Sec. 7.1).

A task gives, at a snapshot, its value, its Jacobian ``J_theta = d theta / dq``
(k x nv), its drift ``J_theta' v`` and the error to a desired value. The
independent coordinates of Aghili eq. (40) are a task whose Jacobian, restricted
to N(A), is invertible: ``Lambda = N (J_theta N)^-1`` spans N(A).

Orientation rows use the world-frame rotation error ``log(R_d R^T)`` and the
angular velocity, so "theta" need not be a set of coordinates in the strict
sense -- only its velocity, acceleration and error are used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import Mechanism, ModelError, Snapshot


class Task:
    """Interface of a task (k rows)."""

    dim: int
    frames: tuple[str, ...] = ()
    names: list[str]

    def bind(self, mechanism: Mechanism) -> None:
        mechanism.check_frames(self.frames)

    def value(self, snap: Snapshot) -> np.ndarray:
        raise NotImplementedError

    def jacobian(self, snap: Snapshot) -> np.ndarray:
        raise NotImplementedError

    def drift(self, snap: Snapshot) -> np.ndarray:
        raise NotImplementedError

    def error(self, desired: np.ndarray, snap: Snapshot) -> np.ndarray:
        """``theta_d - theta``."""
        return desired - self.value(snap)


class JointTask(Task):
    """Selected joint coordinates ``theta = q[indices]`` (joints with nq = nv = 1)."""

    def __init__(self, indices: Sequence[int], names: Sequence[str] | None = None) -> None:
        self.idx = np.asarray(indices, dtype=int)
        self.dim = len(self.idx)
        self.names = list(names) if names else [f"q{i + 1}" for i in self.idx]

    def bind(self, mechanism: Mechanism) -> None:
        if mechanism.nq != mechanism.nv:
            raise ModelError("joint tasks need a mechanism with nq == nv")
        bad = [int(i) for i in self.idx if not 0 <= i < mechanism.nv]
        if bad:
            raise ModelError(
                f"joint task index {bad[0]} is out of range; valid: 0..{mechanism.nv - 1}"
            )
        self._S = np.eye(mechanism.nv)[self.idx]

    def value(self, snap):
        return snap.q[self.idx]

    def jacobian(self, snap):
        return self._S

    def drift(self, snap):
        return np.zeros(self.dim)


class FrameTask(Task):
    """World position components and/or orientation of a frame's point.

    Parameters
    ----------
    frame : frame name.
    axes : world axes of the position rows, e.g. ``"xy"`` (may be empty).
    orientation : add the three world-frame orientation rows.
    point : local offset of the point in the frame.
    """

    def __init__(self, frame: str, axes: str = "xyz", orientation: bool = False, point=None):
        bad = [c for c in axes if c not in "xyz"]
        if bad or len(set(axes)) != len(axes):
            raise ModelError(f"axes must be distinct letters of 'xyz', got {axes!r}")
        self.frame, self.frames = frame, (frame,)
        self.rows = ["xyz".index(c) for c in axes]
        self.orientation = orientation
        self.point = None if point is None else np.asarray(point, dtype=float)
        self.dim = len(self.rows) + (3 if orientation else 0)
        self.names = [f"{frame}.{c}" for c in axes] + (
            [f"{frame}.r{c}" for c in "xyz"] if orientation else []
        )

    def value(self, snap):
        fs = snap.frame(self.frame)
        out = fs.point(self.point)[self.rows]
        if self.orientation:
            out = np.concatenate([out, pin.log3(fs.R)])
        return out

    def jacobian(self, snap):
        fs = snap.frame(self.frame)
        J = fs.point_jacobian(self.point)[self.rows]
        return np.concatenate([J, fs.J[3:]]) if self.orientation else J

    def drift(self, snap):
        fs = snap.frame(self.frame)
        d = fs.point_drift(self.point, snap.v)[self.rows]
        return np.concatenate([d, fs.drift[3:]]) if self.orientation else d

    def error(self, desired, snap):
        """Position rows ``p_d - p``; orientation rows ``log(R_d R^T)`` with
        ``R_d = exp(desired[-3:])`` (world frame, consistent with angular velocity)."""
        fs = snap.frame(self.frame)
        n = len(self.rows)
        e = desired[:n] - fs.point(self.point)[self.rows]
        if self.orientation:
            Rd = pin.exp3(np.asarray(desired[n:], dtype=float))
            e = np.concatenate([e, pin.log3(Rd @ fs.R.T)])
        return e


class StackedTask(Task):
    """Several tasks stacked into one."""

    def __init__(self, tasks: Sequence[Task]) -> None:
        self.tasks = list(tasks)
        self.dim = sum(t.dim for t in self.tasks)
        self.frames = tuple(dict.fromkeys(f for t in self.tasks for f in t.frames))
        self.names = [n for t in self.tasks for n in t.names]
        self._cuts = np.cumsum([0] + [t.dim for t in self.tasks])

    def bind(self, mechanism):
        for t in self.tasks:
            t.bind(mechanism)

    def _split(self, x):
        return [x[a:b] for a, b in zip(self._cuts[:-1], self._cuts[1:])]

    def value(self, snap):
        return np.concatenate([t.value(snap) for t in self.tasks])

    def jacobian(self, snap):
        return np.vstack([t.jacobian(snap) for t in self.tasks])

    def drift(self, snap):
        return np.concatenate([t.drift(snap) for t in self.tasks])

    def error(self, desired, snap):
        return np.concatenate(
            [t.error(d, snap) for t, d in zip(self.tasks, self._split(np.asarray(desired)))]
        )
