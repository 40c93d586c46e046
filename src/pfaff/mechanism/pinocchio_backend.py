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

from pfaff.mechanism.base import (
    QUAT_TOL,
    FrameState,
    Mechanism,
    ModelError,
    Snapshot,
    frame_ids,
)

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

#: where the unit-norm entries of a joint's q start (the rest of its q, from there on)
_UNIT_FROM = {"JointModelFreeFlyer": 3, "JointModelPlanar": 2}


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
        if model.nv == 0:
            raise ModelError(
                f"model {name!r} has no joints (nv = 0): nothing can move, so there is "
                "nothing to simulate; give a body a <joint> (MJCF) or a non-fixed joint (URDF)"
            )
        self.model = model
        self.data = model.createData()
        self.name = name
        self.nq = model.nq
        self.nv = model.nv
        self.polylines = [list(p) for p in polylines]
        self._frame_ids = frame_ids(model)
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

    def position_limits(self) -> list[tuple[str, int, float, float]]:
        """``(joint name, index in q, lower, upper)`` of every one-dof joint with finite
        position limits (from the URDF ``<limit>`` or MJCF ``range``)."""
        model, out = self.model, []
        lo, hi = model.lowerPositionLimit, model.upperPositionLimit
        for j in range(1, model.njoints):
            jm = model.joints[j]
            if jm.nq != 1:
                continue
            i = jm.idx_q
            # Pinocchio marks "no limit" with +-max double; a continuous joint has nq 2
            if abs(lo[i]) < 1e100 and abs(hi[i]) < 1e100:
                out.append((model.names[j], i, float(lo[i]), float(hi[i])))
        return out

    def check_state(self, q: np.ndarray, v: np.ndarray | None = None) -> None:
        """Raise :class:`ModelError` if ``q`` or ``v`` has the wrong size, or if a
        joint's unit part of ``q`` (a free or ball joint's quaternion, a planar or
        unbounded joint's cosine and sine) is off unit norm by more than
        :data:`~pfaff.mechanism.base.QUAT_TOL`: Pinocchio would read it as a rotation
        that is not one."""
        super().check_state(q, v)
        q = np.asarray(q, dtype=float)
        if not np.isfinite(q).all() or pin.isNormalized(self.model, q, QUAT_TOL):
            return
        for name, j in zip(self.model.names[1:], self.model.joints[1:]):
            if j.nq == j.nv:
                continue
            x = q[j.idx_q : j.idx_q + j.nq]
            unit = x[_UNIT_FROM.get(j.shortname(), 0) :]  # the unit-norm entries
            n = float(np.linalg.norm(unit))
            if abs(n - 1.0) > QUAT_TOL:
                what = "quaternion" if len(unit) == 4 else "(cos, sin) pair"
                raise ModelError(
                    f"q: joint {name!r} has q[{j.idx_q}:{j.idx_q + j.nq}] = {x.tolist()}, "
                    f"whose {what} has norm {n:.9g}; a unit {what} is expected (a norm within "
                    f"{QUAT_TOL:g} of 1 is read as unit). pfaff's quaternions are (x, y, z, w): "
                    "System.qpos_to_q converts MuJoCo's qpos"
                )

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


def _urdf_link_masses(path: str, text: str | None = None) -> None:
    """Refuse a URDF ``<inertial>`` whose mass or inertia entries are not finite
    numbers, or whose mass is negative (names the link). ``text``: the URDF itself
    (then ``path`` only names it in messages)."""
    label = f"URDF file {path!r}" if text is None else "URDF text"
    try:
        root = ET.parse(path).getroot() if text is None else ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"{label} does not parse: {exc}") from None
    for link in root.iter("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        name = link.get("name", "?")
        values = {}
        mass = inertial.find("mass")
        if mass is not None:
            values["mass"] = mass.get("value")
        inertia = inertial.find("inertia")
        if inertia is not None:
            values.update({k: inertia.get(k) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")})
        for key, raw in values.items():
            try:
                x = float(raw)
            except (TypeError, ValueError):
                x = float("nan")
            if not np.isfinite(x) or (key == "mass" and x < 0):
                raise ModelError(
                    f"{label}: link {name!r} has {key} = {raw!r}; "
                    "valid: a finite number (a mass >= 0 kg)"
                )


def check_inertias(model: pin.Model, source: str) -> None:
    """Refuse a model with a moving body whose mass or inertia is unusable.

    Every moving body (the links a joint carries, fixed links merged in) needs
    a finite mass > 0 kg, a finite centre of mass and a symmetric positive
    definite rotational inertia: otherwise M(q) is singular or meaningless and
    a simulation would run on garbage. The message names the links.
    """
    links: dict[int, list[str]] = {}
    for f in model.frames:
        if f.type == pin.FrameType.BODY:
            links.setdefault(int(f.parentJoint), []).append(f.name)
    for j in range(1, model.njoints):
        Y = model.inertias[j]
        mass, com, I = float(Y.mass), np.asarray(Y.lever), np.asarray(Y.inertia)
        what = None
        if not np.isfinite(mass) or mass <= 0:
            what = f"mass {mass!r} kg (valid: finite and > 0)"
        elif not (np.all(np.isfinite(com)) and np.all(np.isfinite(I))):
            what = "a centre of mass or inertia that is not finite"
        else:
            ev = np.linalg.eigvalsh(0.5 * (I + I.T))
            if not ev[0] > 0:
                what = (
                    f"a rotational inertia that is not positive definite (eigenvalues "
                    f"{', '.join(f'{e:.3g}' for e in ev)} kg m^2)"
                )
        if what is not None:
            names = ", ".join(repr(n) for n in links.get(j, [])) or "?"
            raise ModelError(
                f"{source}: link {names} (joint {model.names[j]!r}) has {what}; every moving "
                "body needs a finite mass > 0 and a positive-definite inertia"
            )


def _load(path: str | Path, kind: str, build, name: str | None) -> PinocchioMechanism:
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"{kind} file {str(p)!r} does not exist")
    if kind == "URDF":
        _urdf_link_masses(str(p))
    try:
        model = build(str(p))
    except (RuntimeError, ValueError, ET.ParseError) as exc:
        raise ModelError(f"{kind} file {str(p)!r} does not parse: {exc}") from None
    check_inertias(model, f"{kind} file {str(p)!r}")
    return PinocchioMechanism(model, name=name or p.stem)


def _is_urdf_text(source) -> bool:
    return isinstance(source, str) and source.lstrip().startswith("<")


def from_urdf(source: str | Path, name: str | None = None, gravity=None) -> PinocchioMechanism:
    """Build a mechanism from a URDF file (fixed base), or from the URDF text itself.

    Parameters
    ----------
    source : a path, or a string holding the URDF (it starts with ``<``).
    name : label of the mechanism (default: the file's stem, or the robot's name).
    gravity : gravity vector (3,) in m/s^2 (default Pinocchio's ``(0, 0, -9.81)``).

    Raises
    ------
    ModelError
        The file does not exist, the text does not parse, a mass or inertia is
        invalid, or gravity is not 3 finite numbers.
    """
    g = None
    if gravity is not None:
        g = np.asarray(gravity, dtype=float).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ModelError(f"gravity must be 3 finite numbers (m/s^2), got {gravity!r}")
    if _is_urdf_text(source):
        _urdf_link_masses("<URDF text>", source)
        try:
            model = pin.buildModelFromXML(source)
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"URDF text does not parse: {exc}") from None
        check_inertias(model, "URDF text")
        mech = PinocchioMechanism(model, name=name or model.name or "urdf")
    else:
        mech = _load(source, "URDF", pin.buildModelFromUrdf, name)
    if g is not None:
        mech.model.gravity = pin.Motion(g, np.zeros(3))
    return mech


def from_mjcf(path: str | Path, name: str | None = None) -> PinocchioMechanism:
    """Build a mechanism from an MJCF (MuJoCo XML) file: every body tree, ``<option gravity>``.

    The XML is read as data by :func:`pfaff.mechanism.mjcf.read_mjcf` (Pinocchio's
    importer drops body trees and can crash on equality sites); the ``<equality>``
    section is turned into constraints by
    :func:`pfaff.constraints.mjcf_equality.equality_constraints`.
    Raises :class:`ModelError` if the file does not exist, does not parse or holds
    what pfaff cannot represent (the message names the element).
    """
    from pfaff.mechanism.mjcf import read_mjcf

    p = Path(path)
    return PinocchioMechanism(read_mjcf(p).model, name=name or p.stem)
