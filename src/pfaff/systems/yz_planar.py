"""The Yoshikawa-Zheng experimental system (IJRR 1993, Sec. 5) as a grasp plant.

Two YZ arms (:class:`~pfaff.mechanism.YZArm`, Table 1, parallelogram five-bars) and
a planar object (mass 0.03 kg, inertia 14.4e-5 kg m^2) form one unconstrained
mechanism with block-diagonal ``M`` and ``h``; the pins (two in-plane forces, no
moment) are ``PointsCoincide`` closures along x and y, the environment a unilateral
``PointOnPlane`` on the object. The mechanism is a Pinocchio model by default
(:func:`yz_pinocchio_plant`: each five-bar as its dynamically equivalent two-link
serial arm, so the compiled core runs the plant); the closed form
(:class:`YZTwoArmPlant`, absolute arm angles, a plant: :mod:`pfaff.plant`) is its witness.
:class:`YZPlanarPlant` wires it as a :class:`~pfaff.systems.GraspPlant`.
"""

from __future__ import annotations

import math

import numpy as np

from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnPlane, PointsCoincide
from pfaff.control.yoshikawa_zheng import YZ_PAPER_GAINS, GraspState, ObjectState, YZController
from pfaff.manipulation.grasp import (
    GraspError,
    GraspPoint,
    check_force_closure,
    grasp_matrices,
    internal_force_basis,
    orient_squeeze,
)
from pfaff.manipulation.objects import (
    ObjectConstraints,
    linear_function,
    planar_contact_surface,
)
from pfaff.mechanism import (
    YZ_TABLE1,
    YZArm,
)
from pfaff.systems.yz_arms import (
    OBJECT_INERTIA,
    OBJECT_MASS,
    YZTwoArmPlant,
    arm_ik,
    yz_pinocchio_plant,
)

#: Sec. 5.3 gains per mode: 0 free r_P = (x, y, phi), 1 in contact r_P = (x, phi)
GAINS = YZ_PAPER_GAINS.per_mode({0: [0, 1, 2], 1: [0, 2]})
SQRT2 = math.sqrt(2.0)
#: the pins' hand wrenches F_h = (f_x, f_y, 0) per pin (no moment) from the pins'
#: multipliers: F_h = PIN_FORCES @ lambda[:4] (read-only)
PIN_FORCES = np.zeros((6, 4))
PIN_FORCES[[0, 1, 3, 4], [0, 1, 2, 3]] = 1.0
PIN_FORCES.flags.writeable = False
#: the plant's mechanism: a Pinocchio model (the core) or the closed form (its witness)
YZ_MODELS = ("pinocchio", "closed_form")


def planar_grasp(spacing: float, kind: str = "frictional_point"):
    """Two grasps at (-spacing/2, 0) and (+spacing/2, 0) in the object frame."""
    return [
        GraspPoint(kind, np.array([-spacing / 2, 0.0]), normal=(1.0, 0.0)),
        GraspPoint(kind, np.array([spacing / 2, 0.0]), normal=(-1.0, 0.0)),
    ]


def _rot2(th: float) -> np.ndarray:
    c, s = math.cos(th), math.sin(th)
    return np.array([[c, -s], [s, c]])


class YZPlanarPlant:
    """The planar pinned pair of Sec. 5: a :class:`~pfaff.systems.GraspPlant`.

    The mechanism (:class:`YZTwoArmPlant`), its constraint sets (``free``: the two
    pins; ``contact``: the pins and the wall), the object-motion constraints
    (``unconstrained``, ``constrained``, eq. 17-22) and the controller pieces.

    Parameters
    ----------
    spacing : hole spacing [m]; bases : arm base positions; elbows : IK branches.
    wall_y : level of the wall (y = wall_y, the object presses along +y) or None.
    contact_h : the object's contact point is (0, contact_h) in its frame.
    grasp_kind : grasp type of both arms (the pins: ``frictional_point``).
    model : ``"pinocchio"`` (default: :func:`yz_pinocchio_plant`, run by the compiled
        core, relative arm angles in ``q``) or ``"closed_form"``
        (:class:`YZTwoArmPlant`, absolute arm angles, its witness; a plant on the core).
    """

    def __init__(
        self,
        spacing,
        bases,
        elbows=(1, -1),
        wall_y=None,
        contact_h=0.01,
        grasp_kind="frictional_point",
        mass_error=0.0,
        inertia_error=0.0,
        model="pinocchio",
    ):
        self.grasps = planar_grasp(spacing, grasp_kind)
        S, _, W_S, r_list = grasp_matrices(self.grasps, np.eye(2), plane=True)
        try:
            check_force_closure(W_S)
        except GraspError as exc:
            raise GraspError(
                f"two {grasp_kind} grasps at (+-{spacing / 2:g}, 0) m on the object: {exc}"
            ) from None
        if grasp_kind != "frictional_point":
            raise ValueError(f"the plant models pins (frictional_point); got {grasp_kind!r}")
        holes = [g.position for g in self.grasps]
        # grasp frames turn with the object: W_S(th) = diag(R, 1) W_S(0), so N(W_S) in
        # the grasp coordinates F_hS -- the internal-force basis A_S (eq. 12) -- is fixed
        self.A_S = orient_squeeze(internal_force_basis(W_S), S, r_list)
        self._eye3, self._zero3 = np.eye(3), np.zeros((3, 3))
        if model not in YZ_MODELS:
            raise ValueError(f"unknown model {model!r}; valid: {', '.join(YZ_MODELS)}")
        self.model = model
        self.arms = [YZArm(YZ_TABLE1, base=b) for b in bases]
        self.mech = (
            yz_pinocchio_plant(self.arms, holes=holes)
            if model == "pinocchio"
            else YZTwoArmPlant(bases, holes=holes)
        )
        self.elbows, self.h, self.wall_y = elbows, contact_h, wall_y
        self.arm_idx, self.tips, self.rows = np.arange(4), ("arm1_tip", "arm2_tip"), [0, 1, 5]
        xy = ((1, 0, 0), (0, 1, 0))
        pins = [
            PointsCoincide(f"arm{i + 1}_tip", f"hole{i + 1}", directions=xy, name=f"pin {i + 1}")
            for i in range(2)
        ]
        self.free = ConstraintSet(self.mech, pins)
        self.contact = None
        if wall_y is not None:
            wall = PointOnPlane(
                "object", (0.0, -1.0, 0.0), -wall_y, point=(0.0, contact_h, 0.0),
                name="wall", unilateral=True,
            )  # fmt: skip
            self.contact = ConstraintSet(self.mech, [*pins, wall])
            # the object's point (0, contact_h) on the line y = wall_y, pressing along +y
            self._surface = ((0.0, contact_h), (0.0, 1.0), wall_y)
            self.constrained = ObjectConstraints(
                [planar_contact_surface(*self._surface)],
                [linear_function((1, 0, 0)), linear_function((0, 0, 1))],
                3,
            )
        self.unconstrained = ObjectConstraints([], [linear_function(e) for e in np.eye(3)], 3)
        self.I_B = np.diag(
            [OBJECT_MASS * (1 + mass_error)] * 2 + [OBJECT_INERTIA * (1 + inertia_error)]
        )

    def absolute_q(self, r) -> np.ndarray:
        """``(q1_a, q2_a, q1_b, q2_b, x, y, theta)`` holding the object at r = (x, y,
        theta): the arms' absolute link angles (``YZTwoArmPlant``'s coordinates)."""
        q = np.zeros(7)
        R = _rot2(r[2])
        for i, (arm, g) in enumerate(zip(self.arms, self.grasps)):
            q[2 * i : 2 * i + 2] = arm_ik(arm, np.asarray(r[:2]) + R @ g.position, self.elbows[i])
        q[4:] = r
        return q

    def initial_q(self, r) -> np.ndarray:
        """The plant's ``q`` holding the object at r = (x, y, theta)."""
        q = self.absolute_q(r)
        if self.model == "pinocchio":
            q[[1, 3]] -= q[[0, 2]]
        return q

    def check_path(self, rs, what: str = "trajectory") -> float:
        """IK along object poses rs; ValueError off the workspace; returns min |sin(q1-q2)|."""
        worst = 1.0
        for r in rs:
            try:
                q = self.absolute_q(r)
            except ValueError as exc:
                raise ValueError(f"{what}: {exc}") from None
            for i in range(2):
                worst = min(worst, abs(math.sin(q[2 * i] - q[2 * i + 1])))
        if worst < 0.1:
            raise ValueError(
                f"{what} passes near a singular arm posture (min |sin(q1 - q2)| = {worst:.3f} "
                "< 0.1): S^T J loses rank (Appendix A)"
            )
        return worst

    def pin_matrices(self, th: float, w: float):
        """``(S, W, S', W')`` of the two pins at orientation th, rate w (eq. 9, 11).

        Written out for planar pins (``S_i = diag(R, 1) [I_2 0]^T``, ``r_i = R c_i``);
        equal to :func:`grasp_matrices` / :func:`grasp_rates` (tested), 10x cheaper.
        """
        c, s = math.cos(th), math.sin(th)
        R = np.array([[c, -s], [s, c]])
        Rd = w * np.array([[-s, -c], [c, -s]])
        S, Sd = np.zeros((6, 4)), np.zeros((6, 4))
        W, Wd = np.zeros((3, 6)), np.zeros((3, 6))
        for i, g in enumerate(self.grasps):
            S[3 * i : 3 * i + 2, 2 * i : 2 * i + 2] = R
            Sd[3 * i : 3 * i + 2, 2 * i : 2 * i + 2] = Rd
            r = R @ g.position[:2]
            W[:, 3 * i : 3 * i + 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-r[1], r[0], 1.0]]
            Wd[2, 3 * i : 3 * i + 2] = (-w * r[0], -w * r[1])
        return S, W, Sd, Wd

    def grasp_state(self, obj: ObjectState, mode) -> GraspState:
        """Grasp (eq. 9, 11) and object constraints (eq. 19-22; mode 1: on the wall)."""
        r, rd = obj.r, obj.rd
        oc = self.constrained if mode == 1 else self.unconstrained
        S, W, Sd, Wd = self.pin_matrices(float(r[2]), float(rd[2]))
        return GraspState(
            S, W, Sd, Wd, self.A_S, self._eye3, self._zero3, oc.E_P(r), oc.E_F(r),
            oc.E_P_rate(r, rd), oc.E_F_rate(r, rd), oc.r_P(r),
        )  # fmt: skip

    @staticmethod
    def object_state(snap) -> ObjectState:
        """``(r, r') = ((x, y, theta), their rates)`` of the object."""
        return ObjectState(snap.q[4:7], snap.v[4:7])

    @staticmethod
    def object_at(r, rd) -> ObjectState:
        return ObjectState(np.asarray(r, float), np.asarray(rd, float))

    @staticmethod
    def measure(snap, obj, mode):
        """Pin forces (x, y of each pin, no moment) and the wall force ``f_F = -lambda``."""
        lam = snap.sensors["lambda"]
        F_h = PIN_FORCES @ lam[:4]
        f_F = -lam[4:5] if mode == 1 and lam.size > 4 else np.zeros(0)
        return F_h, f_F

    def Q_r(self, obj: ObjectState) -> np.ndarray:
        """Eq. (5) in the plane, no gravity (g = 0, Sec. 5): ``I_B T' r' = 0`` with T = I."""
        return np.zeros(3)

    def compiled_grasp(self):
        """The terms of :meth:`object_state`, :meth:`grasp_state` (both modes),
        :meth:`Q_r` and :meth:`measure` as a ``pfaff._papers.YZPinnedPlane`` (the compiled
        sample of :class:`YZController`), or None without the core."""
        plane = core.yz_pinned_plane()
        if plane is None:
            return None
        plane.iq = plane.iv = 4  # r = (x, y, theta) at q[4:7], v[4:7] in both models
        plane.c_hands = np.array([g.position[:2] for g in self.grasps]).T
        plane.F_sel = PIN_FORCES
        plane.set_object(self.A_S, self.I_B)
        r0 = np.zeros(3)
        oc = self.unconstrained
        plane.add_set(oc.E_P(r0), oc.r_P(r0), np.zeros((0, 2)), np.zeros((0, 2)),
                      np.zeros(0), np.zeros((0, 0)))  # fmt: skip
        if self.wall_y is not None:  # mode 1: f_F = -lambda of the wall (after the pins)
            oc = self.constrained
            f_sel = -np.eye(1, self.contact.dim, self.free.dim)
            offset, normal, level = self._surface
            plane.add_set(
                oc.E_P(r0), oc.r_P(r0), np.array([offset]), np.array([normal]),
                np.array([level]), f_sel,
            )  # fmt: skip
        return plane

    def controller(
        self, reference, control_dt=2e-3, unloaded_start=False, mode=0, rule="trapezoid"
    ) -> YZController:
        """:class:`YZController` with the gains of Sec. 5.3 (r_P = (x, phi) in contact)."""
        return YZController(
            plant=self, gains=GAINS, reference=reference, control_dt=control_dt,
            unloaded_start=unloaded_start, integral_rule=rule, mode=mode,
        )  # fmt: skip


def internal_force(plant: YZPlanarPlant, q, lam) -> float:
    """Average pushing force of the two pins (Sec. 5.2) = f_IS / sqrt(2), from multipliers."""
    g = plant.grasp_state(plant.object_at(q[4:7], np.zeros(3)), 0)
    F_h = PIN_FORCES @ lam[:4]
    return float((g.A_S.T @ np.linalg.pinv(g.S) @ F_h)[0]) / SQRT2
