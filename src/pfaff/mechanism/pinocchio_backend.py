"""Pinocchio backend: a :class:`Mechanism` over a ``pinocchio.Model``.

One call of :meth:`PinocchioMechanism.compute` runs the rigid-body algorithms
once for the state -- CRBA (M), RNEA (h, g), forward kinematics with zero
acceleration (frame drift J'v), joint Jacobians -- and returns the snapshot.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import FrameState, Mechanism, ModelError, Snapshot

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class PinocchioMechanism(Mechanism):
    """A mechanism backed by a Pinocchio model.

    Parameters
    ----------
    model : the Pinocchio model (kinematic tree, inertias, gravity).
    name : a label used in messages and reports.
    polylines : for drawing planar mechanisms: lists of frame names whose
        origins are joined by line segments.
    """

    def __init__(
        self,
        model: pin.Model,
        name: str = "mechanism",
        polylines: Sequence[Sequence[str]] = (),
    ) -> None:
        self.model = model
        self.data = model.createData()
        self.name = name
        self.nq = model.nq
        self.nv = model.nv
        self.polylines = [list(p) for p in polylines]
        self._frame_ids = {f.name: i for i, f in enumerate(model.frames)}
        self._a0 = np.zeros(self.nv)
        self._lower = np.tril(np.ones((self.nv, self.nv), dtype=bool), -1)
        for i in range(1, model.njoints):
            if model.inertias[i].mass < 0:
                raise ModelError(f"joint {model.names[i]!r} carries a negative mass")

    # -- model-level queries -------------------------------------------------
    @property
    def frame_names(self) -> Sequence[str]:
        return list(self._frame_ids)

    def frame_id(self, name: str) -> int:
        self.check_frames([name])
        return self._frame_ids[name]

    def joint_v_index(self, joint_name: str) -> int:
        """Index in v of a one-dof joint (for locked-joint constraints)."""
        if not self.model.existJointName(joint_name):
            valid = [n for n in self.model.names[1:]]
            raise ModelError(f"unknown joint {joint_name!r}; valid joints: {', '.join(valid)}")
        jid = self.model.getJointId(joint_name)
        return self.model.joints[jid].idx_v

    def neutral(self) -> np.ndarray:
        return pin.neutral(self.model)

    def integrate(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        return pin.integrate(self.model, q, dv)

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        return pin.difference(self.model, q0, q1)

    def dintegrate_dv(self, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """(nv, nv) derivative of ``integrate(q, dv)`` with respect to ``dv``."""
        return pin.dIntegrate(self.model, q, dv, pin.ARG1)

    # -- per-state computation ----------------------------------------------
    def compute(
        self,
        q: np.ndarray,
        v: np.ndarray | None = None,
        frames: Iterable[str] = (),
        dynamics: bool = True,
        extras: bool = True,
    ) -> Snapshot:
        model, data = self.model, self.data
        have_v = v is not None
        if not have_v:
            v = np.zeros(self.nv)
        names = list(frames)
        snap = Snapshot(q=q, v=v)
        if dynamics:
            M = pin.crba(model, data, q).copy()  # upper triangle filled
            np.copyto(M, M.T, where=self._lower)
            snap.M = M
            snap.h = pin.nonLinearEffects(model, data, q, v).copy()
            if extras:
                snap.g = pin.computeGeneralizedGravity(model, data, q).copy()
                snap.kinetic = 0.5 * float(v @ M @ v)
                snap.potential = float(pin.computePotentialEnergy(model, data, q))
        if names:
            pin.forwardKinematics(model, data, q, v, self._a0)
            pin.computeJointJacobians(model, data)
            pin.updateFramePlacements(model, data)
            oMf, out, ids = data.oMf, snap.frames, self._frame_ids
            for n in names:
                fid = ids.get(n)
                if fid is None:
                    self.check_frames([n])
                # eigenpy returns views into `data` (reused by the next state): copy
                H = oMf[fid].homogeneous  # a fresh 4x4 array
                out[n] = FrameState(
                    H[:3, 3],
                    H[:3, :3],
                    pin.getFrameJacobian(model, data, fid, _LWA),
                    pin.getFrameClassicalAcceleration(model, data, fid, _LWA).vector.copy(),
                )
        return snap


def _load(path: str | Path, kind: str, build, name: str | None) -> PinocchioMechanism:
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"{kind} file {str(p)!r} does not exist")
    try:
        model = build(str(p))
    except (RuntimeError, ValueError, ET.ParseError) as exc:
        raise ModelError(f"{kind} file {str(p)!r} does not parse: {exc}") from None
    return PinocchioMechanism(model, name=name or p.stem)


def from_urdf(path: str | Path, name: str | None = None) -> PinocchioMechanism:
    """Build a mechanism from a URDF file (fixed base).

    Raises :class:`ModelError` if the file does not exist or does not parse.
    """
    return _load(path, "URDF", pin.buildModelFromUrdf, name)


def _mjcf_gravity(path: str) -> np.ndarray | None:
    """The ``<option gravity="gx gy gz">`` of an MJCF file, if it sets one."""
    option = ET.parse(path).getroot().find("option")
    if option is None or option.get("gravity") is None:
        return None
    g = np.array([float(x) for x in option.get("gravity").split()])
    if g.shape != (3,):
        raise ModelError(f"MJCF file {path!r}: option gravity must have 3 numbers")
    return g


def _build_mjcf(path: str) -> pin.Model:
    model = pin.buildModelFromMJCF(path)
    # Pinocchio's MJCF parser keeps its default gravity; MuJoCo's <option> sets it
    g = _mjcf_gravity(path)
    if g is not None:
        model.gravity = pin.Motion(g, np.zeros(3))
    return model


def from_mjcf(path: str | Path, name: str | None = None) -> PinocchioMechanism:
    """Build a mechanism from an MJCF (MuJoCo XML) file, honouring ``<option gravity>``.

    Raises :class:`ModelError` if the file does not exist or does not parse.
    """
    return _load(path, "MJCF", _build_mjcf, name)
