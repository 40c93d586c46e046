"""The two YZ arms and the object of Yoshikawa & Zheng's experiment (IJRR 1993, Sec. 5)
as one mechanism: a Pinocchio model (:func:`yz_pinocchio_plant`, each parallelogram
five-bar as its dynamically equivalent two-link serial arm, so the compiled core runs
it) or the closed form (:class:`YZTwoArmPlant`, absolute arm angles, its witness); the
arms' inverse kinematics (:func:`arm_ik`)."""

from __future__ import annotations

import math

import numpy as np

from pfaff.mechanism import (
    YZ_TABLE1,
    FrameState,
    Mechanism,
    ModelBuilder,
    PinocchioMechanism,
    PlanarChain,
    PlanarLink,
    Snapshot,
    YZArm,
)
from pfaff.systems.ik import two_link_ik

#: object of Sec. 5.2
OBJECT_MASS, OBJECT_INERTIA = 0.03, 14.4e-5


class YZTwoArmPlant(Mechanism):
    """Two YZ arms + a planar object: ``q = (q1_a, q2_a, q1_b, q2_b, x, y, theta)``.

    Frames: ``arm1_base/elbow/tip``, ``arm2_base/elbow/tip``, ``object`` (centre).
    """

    nq = nv = 7
    name = "Yoshikawa-Zheng two-arm system"

    def __init__(self, bases, mass=OBJECT_MASS, inertia=OBJECT_INERTIA, holes=()):
        self.arms = [YZArm(YZ_TABLE1, base=b) for b in bases]
        self.m, self.I = float(mass), float(inertia)
        self.holes = [np.array([h[0], h[1], 0.0]) for h in holes]
        self._names = [f"arm{i + 1}_{f}" for i in range(2) for f in ("base", "elbow", "tip")]
        self._own: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
        self.polylines = [
            ["arm1_base", "arm1_elbow", "arm1_tip"],
            ["arm2_base", "arm2_elbow", "arm2_tip"],
            [f"hole{i + 1}" for i in range(len(self.holes))],
        ]

    @property
    def frame_names(self):
        return [*self._names, "object", *[f"hole{i + 1}" for i in range(len(self.holes))]]

    def _split(self, frames: tuple[str, ...]) -> tuple[list[str], list[str]]:
        """Each arm's own frame names among ``frames`` (``arm1_tip`` -> ``tip``), cached."""
        out = self._own.get(frames)
        if out is None:
            out = self._own[frames] = tuple(
                [f.split("_", 1)[1] for f in frames if f.startswith(f"arm{i + 1}_")]
                for i in range(2)
            )
        return out

    def compute(self, q, v=None, frames=(), dynamics=True, extras=True) -> Snapshot:
        v = np.zeros(7) if v is None else v
        frames = tuple(frames)
        snap = Snapshot(q=q, v=v)
        sub = []
        for i, (arm, own) in enumerate(zip(self.arms, self._split(frames))):
            s = arm.compute(q[2 * i : 2 * i + 2], v[2 * i : 2 * i + 2], own, dynamics)
            sub.append(s)
            for n, fs in s.frames.items():
                J = np.zeros((6, 7))
                J[:, 2 * i : 2 * i + 2] = fs.J
                snap.frames[f"arm{i + 1}_{n}"] = FrameState(fs.p, fs.R, J, fs.drift)
        x, y, th = (float(c) for c in q[4:7])
        w = float(v[6])
        c, s_ = math.cos(th), math.sin(th)
        R = np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]])
        for f in frames:
            if f == "object" or f.startswith("hole"):
                ox, oy = (0.0, 0.0) if f == "object" else self.holes[int(f[4:]) - 1][:2]
                rx, ry = c * ox - s_ * oy, s_ * ox + c * oy  # R offset
                J = np.zeros((6, 7))
                J[0, 4] = J[1, 5] = J[5, 6] = 1.0
                J[0, 6], J[1, 6] = -ry, rx
                drift = np.array([-w * w * rx, -w * w * ry, 0.0, 0.0, 0.0, 0.0])
                snap.frames[f] = FrameState(np.array([x + rx, y + ry, 0.0]), R, J, drift)
            elif f not in snap.frames:
                self.check_frames([f])
        if dynamics:
            M = np.zeros((7, 7))
            M[:2, :2], M[2:4, 2:4] = sub[0].M, sub[1].M
            M[4, 4] = M[5, 5] = self.m
            M[6, 6] = self.I
            snap.M = M
            snap.h = np.concatenate([sub[0].h, sub[1].h, np.zeros(3)])
            snap.g = np.zeros(7)
            snap.kinetic = 0.5 * float(v @ snap.M @ v)
        return snap


def yz_pinocchio_plant(
    arms: list[YZArm], mass=OBJECT_MASS, inertia=OBJECT_INERTIA, holes=()
) -> PinocchioMechanism:
    """The two-arm system as a Pinocchio model, which the compiled core runs.

    Each arm is its :meth:`~pfaff.mechanism.YZArm.serial_equivalent` (the same ``M``
    and tip, relative joint angles), the object a planar body; ``q = (q1_a, q2_a -
    q1_a, q1_b, q2_b - q1_b, x, y, theta)``. Frames as :class:`YZTwoArmPlant` (its
    closed form is the witness: the tests compare the two).
    """
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for i, arm in enumerate(arms):
        links = arm.serial_equivalent()
        name = f"arm{i + 1}"
        b.add_planar_chain(PlanarChain([PlanarLink(*k) for k in links], name, arm.base))
        b.add_point(f"{name}_elbow", f"{name}_joint1", (links[0][0], 0.0))
    b.add_planar_body("object", mass, inertia)
    for i, h in enumerate(holes):
        b.add_point(f"hole{i + 1}", "object_theta", h[:2])
    mech = b.build("Yoshikawa-Zheng two-arm system (Pinocchio)")
    mech.polylines = [
        ["arm1_base", "arm1_elbow", "arm1_tip"],
        ["arm2_base", "arm2_elbow", "arm2_tip"],
        [f"hole{i + 1}" for i in range(len(holes))],
    ]
    return mech


def arm_ik(arm: YZArm, p, elbow: int) -> np.ndarray:
    """Absolute angles (q1, q2) with tip at p; ``elbow`` = +1 / -1 picks the branch
    (+1: the first link turned counter-clockwise from the line base -> tip).

    :func:`pfaff.systems.ik.two_link_ik` on links 0 and 4, its relative second angle
    made absolute. Raises ValueError when p is out of reach (the annulus
    |l0 - l4| .. l0 + l4).
    """
    l0, l4 = arm.links[0].l, arm.links[4].l
    d = np.asarray(p[:2], float) - np.asarray(arm.base)
    try:
        q1, q2 = two_link_ik(float(d[0]), float(d[1]), l0, l4, -elbow)
    except ValueError as exc:
        raise ValueError(
            f"trajectory outside the arms' workspace: tip point ({p[0]:.4f}, {p[1]:.4f}) "
            f"from the base {arm.base}: {exc}"
        ) from None
    return np.array([q1, q1 + q2])
