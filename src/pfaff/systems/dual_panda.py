"""Two Pandas holding a box on a table: the 3D Yoshikawa-Zheng grasp plant.

Plant (:func:`~pfaff.mechanism.compose.dual_arm_with_box`): two Panda arms
(example-robot-data, fingers locked) facing each other across a table, bases at
(0, -d, 0) and (0, d, 0) turned toward the box, and the box as a free flyer
(nq = 21, nv = 20). Each hand is welded to the centre of a side face of the box
(:class:`~pfaff.constraints.weld.Weld`, 6 rows: a rigid grasp, S_i = I_6). The
table is 3 rows on the box: its centre height (``PointOnPlane``, unilateral:
normal force = -lambda) and its two tilts (``FrameAligned`` about world x and
y). Three rows, not the four corners: the four corner rows have rank 3 and
their split of the load is undetermined (the minimum-norm one), whereas the 3
rows are independent and their multipliers are exactly the paper's f_F (normal
force, two moments) that the controller measures.

The controller's object coordinates: r = (x, y, z, Z-Y-Z Euler angles of
R_box R_c) with R_c = R_zyz(0, pi/2, pi/2), so the box flat on the table is
theta = psi = pi/2 (away from the Euler singularity theta = 0) and its yaw is phi.
Hypersurfaces (eq. 17): z = table + h/2 (the box presses along -z), theta = pi/2,
psi = pi/2; positions (eq. 18): r_P = (x, y, phi).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.constraints.weld import FrameAligned, Weld
from pfaff.control.yoshikawa_zheng import YZ_PAPER_GAINS, GraspState, ObjectState, YZController
from pfaff.linalg import cross3, skew
from pfaff.manipulation.grasp import (
    GraspError,
    GraspPoint,
    check_force_closure,
    grasp_matrices,
    internal_force_basis,
)
from pfaff.manipulation.objects import (
    ObjectConstraints,
    euler_zyz_R,
    euler_zyz_T,
    euler_zyz_T_rate,
    linear_function,
)
from pfaff.mechanism import named_configuration
from pfaff.mechanism.compose import dual_arm_with_box
from pfaff.systems.ik import frame_ik

#: r's orientation is zyz(R_box R_C): the flat box is (phi, pi/2, pi/2)
R_C = euler_zyz_R(np.array([0, 0, 0, 0.0, math.pi / 2, math.pi / 2]))
#: Panda ready posture (IK seed, null-space preference)
READY = named_configuration("panda", "ready")
#: hand of arm 1 in the box frame: approach (z) along +y into the face, x along the box's x
HAND1 = np.column_stack([(1.0, 0.0, 0.0), (0.0, 0.0, -1.0), (0.0, 1.0, 0.0)])
#: arm 2 is arm 1 turned half a turn about the vertical
HAND2 = np.diag([-1.0, -1.0, 1.0]) @ HAND1


def zyz_angles(R: np.ndarray) -> np.ndarray:
    """Z-Y-Z Euler angles (phi, theta, psi) of R (theta in (0, pi))."""
    return np.array(
        [
            math.atan2(R[1, 2], R[0, 2]),
            math.acos(max(-1.0, min(1.0, R[2, 2]))),
            math.atan2(R[2, 1], -R[2, 0]),
        ]
    )


class DualPandaPlant:
    """Two Pandas welded to a box on a table: a :class:`~pfaff.systems.GraspPlant`.

    Parameters
    ----------
    base_distance : bases at y = -/+ base_distance [m], facing each other.
    table_z : table top height above the bases [m].
    box_size : (x, y, z) size of the box [m]; the hands hold the faces y = -/+ y/2.
    box_mass : [kg].
    mass_error, inertia_error : relative errors of the controller's box model.
    """

    def __init__(
        self,
        base_distance: float = 0.55,
        table_z: float = 0.05,
        box_size: tuple[float, float, float] = (0.2, 0.1, 0.1),
        box_mass: float = 1.0,
        mass_error: float = 0.0,
        inertia_error: float = 0.0,
    ) -> None:
        d, (a, b, h) = base_distance, box_size
        self.zc = table_z + h / 2
        bases = [
            pin.SE3(pin.rpy.rpyToMatrix(0, 0, math.pi / 2), np.array([0.0, -d, 0.0])),
            pin.SE3(pin.rpy.rpyToMatrix(0, 0, -math.pi / 2), np.array([0.0, d, 0.0])),
        ]
        self.c = [np.array([0.0, -b / 2, 0.0]), np.array([0.0, b / 2, 0.0])]
        self.sys = dual_arm_with_box(bases, self.c, [HAND1, HAND2], (a, b, h), box_mass)
        mech = self.sys.mech
        self.mech, self.m = mech, box_mass
        self.I_body = np.diag([b * b + h * h, a * a + h * h, a * a + b * b]) * self.m / 12
        self.grasps = [GraspPoint("rigid", c, R) for c, R in zip(self.c, (HAND1, HAND2))]
        S, _, W_S, r_list = grasp_matrices(self.grasps, np.eye(3))
        try:
            check_force_closure(W_S)
        except GraspError as exc:
            raise GraspError(f"two rigid grasps on the box's side faces: {exc}") from None
        self.A_S = squeeze_basis(W_S, S, r_list)
        self.cset = self.constraints()
        e = np.eye(6)
        self.oc = ObjectConstraints(
            [
                linear_function(-e[2], -self.zc),
                linear_function(e[4], math.pi / 2),
                linear_function(e[5], math.pi / 2),
            ],
            [linear_function(e[0]), linear_function(e[1]), linear_function(e[3])],
            6,
        )
        self.E_F, self.E_P = self.oc.E_F(np.zeros(6)), self.oc.E_P(np.zeros(6))
        self.I_B = np.zeros((6, 6))
        self.I_B[:3, :3] = self.m * (1 + mass_error) * np.eye(3)
        self.I_B[3:, 3:] = self.I_body * (1 + inertia_error)
        self.g = np.array([0.0, 0.0, -9.81])
        n = self.sys.arm_v[0].size
        self.arm_idx, self.tips, self.rows = np.arange(2 * n), self.sys.tips, list(range(6))
        self._W0 = np.hstack([np.eye(6), np.eye(6)])  # W of eq. (11) without the skew blocks
        self._R_hands = np.hstack([g.R for g in self.grasps])
        self._c_hands = np.array(self.c).T
        # S = diag(RC_1, RC_1, RC_2, RC_2) filled from RC = [RC_1, RC_2] by one index
        k, a, b = np.meshgrid(range(4), range(3), range(3), indexing="ij")
        self._S_at = ((3 * k + a).ravel(), (3 * k + b).ravel())
        self._RC_at = (a.ravel(), (3 * (k // 2) + b).ravel())

    def constraints(self, unilateral: bool = True) -> ConstraintSet:
        """Two welds (12 rows) + the table (height, unilateral; two tilts): 15 rows."""
        tips, gr = self.sys.tips, self.sys.grasps
        return ConstraintSet(
            self.mech,
            [
                Weld(tips[0], gr[0], name="grasp 1"),
                Weld(tips[1], gr[1], name="grasp 2"),
                PointOnPlane("box", (0, 0, 1), self.zc, name="table", unilateral=unilateral),
                FrameAligned("box", None, directions=((1, 0, 0), (0, 1, 0)), name="flat"),
            ],
        )

    # -- object state and model ----------------------------------------------------
    def box_pose(self, q):
        qb = q[self.sys.box_q]
        return qb[:3], pin.Quaternion(qb[6], qb[3], qb[4], qb[5]).toRotationMatrix()

    def object_state(self, snap) -> ObjectState:
        """``(r, r')`` of the box from its free-flyer coordinates, with the terms
        ``(T(r), T'(r, r'), R, w)`` (eq. 6-7, the box rotation and angular velocity)."""
        p, R = self.box_pose(snap.q)
        vb = snap.v[self.sys.box_v]
        r = np.concatenate([p, zyz_angles(R @ R_C)])
        vel = np.concatenate([R @ vb[:3], R @ vb[3:]])
        T = euler_zyz_T(r)
        rd = np.linalg.solve(T, vel)
        return ObjectState(r, rd, (T, euler_zyz_T_rate(r, rd), R, vel[3:]))

    @staticmethod
    def object_at(r, rd) -> ObjectState:
        """:class:`ObjectState` of given coordinates ``(r, r')`` (ZYZ angles)."""
        T = euler_zyz_T(r)
        return ObjectState(
            r, rd, (T, euler_zyz_T_rate(r, rd), euler_zyz_R(r) @ R_C.T, (T @ rd)[3:])
        )

    def grasp_state(self, obj: ObjectState, mode) -> GraspState:
        T, Td, R_B, w = obj.terms
        S, W, Sd, Wd = self.rigid_matrices(R_B, w)
        Z = np.zeros((3, 6))
        return GraspState(
            S, W, Sd, Wd, self.A_S, T, Td, self.E_P, self.E_F, Z, Z, self.oc.r_P(obj.r),
        )  # fmt: skip

    def rigid_matrices(self, R_B, w):
        """``(S, W, S', W')`` of the two rigid grasps (eq. 9, 11) written out.

        ``S_i = diag(R_B R_i, R_B R_i)``, ``W_i = [[I, 0], [[R_B c_i]_x, I]]``; equal to
        :func:`grasp_matrices` / :func:`grasp_rates` (tested), several times cheaper.
        """
        wx = skew(w)
        RC = R_B @ self._R_hands  # [R_B R_1, R_B R_2] (3 x 6)
        RCd = wx @ RC
        S, Sd = np.zeros((12, 12)), np.zeros((12, 12))
        S[self._S_at], Sd[self._S_at] = RC[self._RC_at], RCd[self._RC_at]
        W, Wd = self._W0.copy(), np.zeros((6, 12))
        for col, r in zip((0, 6), (R_B @ self._c_hands).T):  # r = R_B c_i
            W[3:, col : col + 3] = skew(r)
            Wd[3:, col : col + 3] = skew(cross3(w, r))  # [r]_x' = [w x r]_x
        return S, W, Sd, Wd

    def Q_r(self, obj: ObjectState):
        """Eq. (5): ``I_B T' r' + (-m g, w x I w)``."""
        _, Td, _, w = obj.terms
        Iw = self.I_B[3:, 3:] @ w
        out = self.I_B @ (Td @ obj.rd)
        out[:3] -= self.I_B[0, 0] * self.g
        out[3:] += skew(w) @ Iw
        return out

    def measure(self, snap, obj: ObjectState, mode):
        """Hand wrenches = the welds' multipliers; f_F = -E_F T^T w_env (eq. 27)."""
        lam = snap.sensors["lambda"]
        w_env = np.array([0.0, 0.0, -lam[12], -lam[13], -lam[14], 0.0])
        return lam[:12], -self.E_F @ (obj.terms[0].T @ w_env)

    def compiled_grasp(self):
        """The terms of :meth:`object_state`, :meth:`grasp_state`, :meth:`Q_r` and
        :meth:`measure` as a ``pfaff._papers.YZRigidBox`` (the compiled sample of
        :class:`YZController`), or None without the core."""
        box = core.yz_rigid_box()
        if box is None:
            return None
        m = self.cset.dim
        box.iq, box.iv = self.sys.box_q.start, self.sys.box_v.start
        box.R_C, box.R_hands, box.c_hands = R_C, self._R_hands, self._c_hands
        box.set_object(self.A_S, self.E_P, self.E_F, self.I_B)
        box.F_sel = np.eye(12, m)  # the welds' 12 rows: the hand wrenches
        E_sel = np.zeros((6, m))  # w_env = -(0, 0, lambda_12, lambda_13, lambda_14, 0)
        E_sel[[2, 3, 4], [12, 13, 14]] = -1.0
        box.E_sel, box.P_off, box.g = E_sel, self.oc.r_P(np.zeros(6)), self.g
        return box

    def internal(self, q, F_h) -> np.ndarray:
        """``f_IS = A_S^T S^T F_h`` (eq. 12; S has orthonormal columns)."""
        S = grasp_matrices(self.grasps, self.box_pose(q)[1])[0]
        return self.A_S.T @ (S.T @ F_h)

    def controller(self, reference, control_dt=5e-3, unloaded=False) -> YZController:
        """:class:`YZController` with the gains of Sec. 5.3 (r_P = (x, y, yaw))."""
        return YZController(
            plant=self, gains=YZ_PAPER_GAINS, reference=reference, control_dt=control_dt,
            unloaded_start=unloaded,
        )  # fmt: skip

    # -- initial state ---------------------------------------------------------------
    def arm_ik(self, i: int, x: float, seed=READY) -> np.ndarray:
        """Joints of arm i holding the box centred at (x, 0, zc): :func:`frame_ik`
        (bounded least squares near the ready posture, joint limits minus 0.05 rad)."""
        target = pin.SE3((HAND1, HAND2)[i], np.array([x, 0.0, self.zc]) + self.c[i])
        try:
            return frame_ik(
                self.mech.model, self.sys.tips[i], target, seed,
                joints=self.sys.arm_q[i], posture=READY,
            )  # fmt: skip
        except ValueError as exc:
            raise ValueError(
                f"trajectory outside the arms' workspace: arm {i + 1} cannot hold the box "
                f"at x = {x:.3f} m ({exc})"
            ) from None

    def initial_q(self, x: float) -> np.ndarray:
        q = pin.neutral(self.mech.model)
        for i in range(2):
            q[self.sys.arm_q[i]] = self.arm_ik(i, x)
        q[self.sys.box_q] = [x, 0.0, self.zc, 0.0, 0.0, 0.0, 1.0]
        return q


def squeeze_basis(W_S, S, r_list) -> np.ndarray:
    """``A_S`` (eq. 12) whose first column is the squeeze (each hand pushes toward the centre).

    The squeeze, unit push per hand, has norm sqrt(2): ``f_IS[0] = sqrt(2) x`` push [N].
    The other columns complete an orthonormal basis of ``N(W_S)``.
    """
    N = internal_force_basis(W_S)
    Fh = np.concatenate([np.concatenate([-r / np.linalg.norm(r), np.zeros(3)]) for r in r_list])
    s = S.T @ Fh
    s = N @ (N.T @ s)  # in N(W_S) already (equal and opposite along the line)
    s /= np.linalg.norm(s)
    rest = N - np.outer(s, s @ N)
    U, sv, _ = np.linalg.svd(rest, full_matrices=False)
    return np.column_stack([s, U[:, : N.shape[1] - 1]])
