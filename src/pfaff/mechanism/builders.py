"""Builders for Pinocchio models of planar chains and free bodies.

Planar systems live in the x-y plane (design.md Sec. 2); gravity is a
parameter (default ``(0, -9.81, 0)``; the papers' fingers and arms work in a
horizontal plane with ``g = 0``).

Frame names made by the builders (``<c>`` is the chain or body name):

- planar chain: ``<c>_base`` (fixed, at the base), ``<c>_link<i>`` (body frame
  of link i at its proximal joint, x along the link), ``<c>_tip`` (end of the
  last link); links are numbered from 1.
- planar free body: ``<c>`` (the body frame, origin at the body's reference point).
- 3D free body: ``<c>_body`` (the frame of the free-flyer joint ``<c>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from pfaff.mechanism.base import ModelError
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism


@dataclass(frozen=True)
class PlanarLink:
    """One link of a planar chain driven by a revolute-z joint at its proximal end.

    Parameters
    ----------
    length : distance from this joint to the next one (or to the tip), m.
    mass : link mass, kg (> 0).
    com : centre of mass along the link's x axis from the joint, m
        (default ``length / 2``; ``length`` for a point mass at the distal end).
    inertia : rotational inertia about the centre of mass, about z, kg m^2
        (0 for a point mass).
    com_y : centre of mass off the link axis, along the link's y axis, m
        (default 0: on the axis).
    angle : fixed angle offset, rad: at joint angle ``q_i = 0`` the link's axis is
        turned by ``angle`` from the previous link's axis (from the base direction
        for the first link); the link's absolute angle is ``sum_j (q_j + angle_j)``
        (default 0).
    """

    length: float
    mass: float
    com: float | None = None
    inertia: float = 0.0
    com_y: float = 0.0
    angle: float = 0.0

    @property
    def com_offset(self) -> float:
        return 0.5 * self.length if self.com is None else self.com


@dataclass(frozen=True)
class PlanarChain:
    """A serial planar chain fixed at ``base`` with absolute base angle ``base_angle``."""

    links: Sequence[PlanarLink]
    name: str = "arm"
    base: tuple[float, float] = (0.0, 0.0)
    base_angle: float = 0.0


def _check_mass(what: str, mass: float) -> None:
    if not np.isfinite(mass) or mass <= 0.0:
        raise ModelError(f"{what}: mass must be > 0 kg, got {mass!r}")


def _check_inertia(what: str, inertia: float) -> None:
    if not np.isfinite(inertia) or inertia < 0.0:
        raise ModelError(f"{what}: rotational inertia must be >= 0 kg m^2, got {inertia!r}")


def _planar_inertia(mass: float, com_x: float, izz: float, com_y: float = 0.0) -> pin.Inertia:
    # Only Izz matters for motion in the plane; Ixx = Iyy = Izz / 2 (thin disc)
    # keeps the 3x3 inertia physically consistent.
    return pin.Inertia(mass, np.array([com_x, com_y, 0.0]), np.diag([izz / 2, izz / 2, izz]))


class ModelBuilder:
    """Accumulates chains and bodies into one Pinocchio model.

    Example
    -------
    >>> b = ModelBuilder(gravity=(0, -9.81, 0))
    >>> b.add_planar_chain(PlanarChain([PlanarLink(1.0, 1.0), PlanarLink(1.0, 1.0)]))
    >>> mech = b.build("double-pendulum")
    """

    def __init__(self, gravity: Sequence[float] = (0.0, -9.81, 0.0)) -> None:
        self.model = pin.Model()
        g = np.asarray(gravity, dtype=float)
        if g.shape != (3,):
            raise ModelError(f"gravity must be a 3-vector, got {gravity!r}")
        self.model.gravity = pin.Motion(g, np.zeros(3))
        self.polylines: list[list[str]] = []
        self._names: set[str] = set()

    def _claim(self, name: str) -> None:
        if name in self._names:
            raise ModelError(f"name {name!r} is used twice in one model")
        self._names.add(name)

    def _add_frame(self, name: str, joint: int, placement: pin.SE3, parent: int) -> int:
        return self.model.addFrame(
            pin.Frame(name, joint, parent, placement, pin.FrameType.OP_FRAME)
        )

    def add_planar_chain(self, chain: PlanarChain) -> None:
        """Add a serial chain of revolute-z joints (relative joint angles)."""
        self._claim(chain.name)
        if len(chain.links) == 0:
            raise ModelError(f"chain {chain.name!r} has no links")
        m = self.model
        base = pin.SE3(
            pin.utils.rotate("z", chain.base_angle), np.array([*chain.base, 0.0], dtype=float)
        )
        self._add_frame(f"{chain.name}_base", 0, base, 0)
        parent, placement = 0, base
        line = [f"{chain.name}_base"]
        for i, link in enumerate(chain.links, start=1):
            what = f"chain {chain.name!r} link {i}"
            _check_mass(what, link.mass)
            _check_inertia(what, link.inertia)
            if not np.isfinite(link.length) or link.length <= 0:
                raise ModelError(f"{what}: length must be > 0 m, got {link.length!r}")
            if not (np.isfinite(link.com_offset) and np.isfinite(link.com_y)):
                raise ModelError(
                    f"{what}: centre of mass ({link.com_offset!r}, {link.com_y!r}) m "
                    "must be finite"
                )
            if not np.isfinite(link.angle):
                raise ModelError(
                    f"{what}: angle offset must be a finite number of rad, got {link.angle!r}"
                )
            if link.angle != 0.0:
                placement = placement * pin.SE3(pin.utils.rotate("z", link.angle), np.zeros(3))
            jname = f"{chain.name}_joint{i}"
            jid = m.addJoint(parent, pin.JointModelRZ(), placement, jname)
            m.appendBodyToJoint(
                jid,
                _planar_inertia(link.mass, link.com_offset, link.inertia, link.com_y),
                pin.SE3.Identity(),
            )
            fid = m.addFrame(
                pin.Frame(f"{chain.name}_link{i}", jid, pin.SE3.Identity(), pin.FrameType.BODY)
            )
            line.append(f"{chain.name}_link{i}")
            parent = jid
            placement = pin.SE3(np.eye(3), np.array([link.length, 0.0, 0.0]))
        self._add_frame(f"{chain.name}_tip", parent, placement, fid)
        line.append(f"{chain.name}_tip")
        self.polylines.append(line)

    def add_planar_body(
        self, name: str, mass: float, inertia: float, rotation: bool = True
    ) -> None:
        """Add a planar free body with coordinates (x, y, theta).

        With ``rotation=False`` the body is a particle with coordinates (x, y).
        """
        self._claim(name)
        _check_mass(f"body {name!r}", mass)
        _check_inertia(f"body {name!r}", inertia)
        m = self.model
        jx = m.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), f"{name}_x")
        last = m.addJoint(jx, pin.JointModelPY(), pin.SE3.Identity(), f"{name}_y")
        if rotation:
            last = m.addJoint(last, pin.JointModelRZ(), pin.SE3.Identity(), f"{name}_theta")
        m.appendBodyToJoint(last, _planar_inertia(mass, 0.0, inertia), pin.SE3.Identity())
        m.addFrame(pin.Frame(name, last, pin.SE3.Identity(), pin.FrameType.BODY))

    def add_point(self, name: str, joint: str, offset: Sequence[float]) -> None:
        """Add a frame ``name`` fixed to the body of ``joint`` at ``offset`` (m, in the
        joint's frame; 2 or 3 numbers), e.g. a hole in a planar body."""
        self._claim(name)
        m = self.model
        if not m.existJointName(joint):
            raise ModelError(f"unknown joint {joint!r}; valid: {', '.join(m.names[1:])}")
        p = np.zeros(3)
        p[: len(offset)] = offset
        jid = m.getJointId(joint)
        # the previous frame: the joint's first frame (its body frame), else the universe
        parent = next((i for i, f in enumerate(m.frames) if f.parentJoint == jid), 0)
        self._add_frame(name, jid, pin.SE3(np.eye(3), p), parent)

    def add_free_body(self, name: str, mass: float, inertia: np.ndarray) -> None:
        """Add a 3D free body (free-flyer joint, nq = 7, nv = 6).

        ``inertia`` is the 3x3 rotational inertia about the centre of mass.
        """
        self._claim(name)
        _check_mass(f"body {name!r}", mass)
        I3 = np.asarray(inertia, dtype=float)
        if I3.shape != (3, 3) or np.any(np.linalg.eigvalsh(0.5 * (I3 + I3.T)) < 0):
            raise ModelError(f"body {name!r}: inertia must be a 3x3 positive semi-definite matrix")
        jid = self.model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), name)
        self.model.appendBodyToJoint(jid, pin.Inertia(mass, np.zeros(3), I3), pin.SE3.Identity())
        self.model.addFrame(pin.Frame(f"{name}_body", jid, pin.SE3.Identity(), pin.FrameType.BODY))

    def build(self, name: str = "mechanism") -> PinocchioMechanism:
        return PinocchioMechanism(self.model, name=name, polylines=self.polylines)


def planar_chain(
    links: Sequence[PlanarLink],
    gravity: Sequence[float] = (0.0, -9.81, 0.0),
    name: str = "arm",
    base: tuple[float, float] = (0.0, 0.0),
) -> PinocchioMechanism:
    """One planar chain as a mechanism (frames ``<name>_link<i>``, ``<name>_tip``)."""
    b = ModelBuilder(gravity)
    b.add_planar_chain(PlanarChain(links, name=name, base=base))
    return b.build(name)


def planar_chains(
    chains: Sequence[PlanarChain],
    gravity: Sequence[float] = (0.0, -9.81, 0.0),
    name: str = "chains",
) -> PinocchioMechanism:
    """Several planar chains in one model (e.g. the two sides of a four-bar)."""
    b = ModelBuilder(gravity)
    for c in chains:
        b.add_planar_chain(c)
    return b.build(name)


def planar_particle(
    mass: float, gravity: Sequence[float] = (0.0, -9.81, 0.0), name: str = "particle"
) -> PinocchioMechanism:
    """A point mass in the plane with Cartesian coordinates q = (x, y)."""
    b = ModelBuilder(gravity)
    b.add_planar_body(name, mass, 0.0, rotation=False)
    return b.build(name)
