"""Yoshikawa-Zheng coordinated hybrid control in 3D: two Pandas slide a box on a table.

Plant (:func:`~pfaff.mechanism.compose.dual_arm_with_box`): two Panda arms
(example-robot-data, fingers locked) facing each other across a table, bases at
(0, -0.55, 0) and (0, 0.55, 0) turned toward the box, and a 0.2 x 0.1 x 0.1 m,
1 kg box as a free flyer (nq = 21, nv = 20). Each hand is welded to the centre of
a side face of the box (:class:`~pfaff.constraints.weld.Weld`, 6 rows: a rigid
grasp, S_i = I_6). The table is 3 rows on the box: its centre height
(``PointOnPlane``, unilateral: normal force = -lambda) and its two tilts
(``FrameAligned`` about world x and y). Three rows, not the four corners: the
four corner rows have rank 3 and their split of the load is undetermined (the
minimum-norm one), whereas the 3 rows are independent and their multipliers are
exactly the paper's f_F (normal force, two moments) that the controller
measures; the face stays on the table while the centre of pressure |M|/N stays
inside it (reported: ``min_cop_margin_m``).

The controller is the planar one (:class:`~pfaff.control.yoshikawa_zheng.YZController`,
eq. 32-37, 41-43) with 3D pieces: r = (x, y, z, Z-Y-Z Euler angles of
R_box R_c) with R_c = R_zyz(0, pi/2, pi/2), so the box flat on the table is
theta = psi = pi/2 (away from the Euler singularity theta = 0) and its yaw is phi.
Hypersurfaces (eq. 17): z = table + h/2 (the box presses along -z), theta = pi/2,
psi = pi/2; positions (eq. 18): r_P = (x, y, phi).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from scipy.optimize import least_squares

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.constraints.weld import FrameAligned, Weld
from pfaff.control.yoshikawa_zheng import GraspState, YZController
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
from pfaff.mechanism.compose import dual_arm_with_box
from pfaff.mechanism.robots import ROBOTS, robot_urdf
from pfaff.scenarios.common import timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.scenarios.yoshikawa_zheng import fit_decay, smooth_move
from pfaff.simulate import SimOptions, simulate

#: r's orientation is zyz(R_box R_C): the flat box is (phi, pi/2, pi/2)
R_C = euler_zyz_R(np.array([0, 0, 0, 0.0, math.pi / 2, math.pi / 2]))
#: Panda ready posture (IK seed, null-space preference)
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
#: hand of arm 1 in the box frame: approach (z) along +y into the face, x along the box's x
HAND1 = np.column_stack([(1.0, 0.0, 0.0), (0.0, 0.0, -1.0), (0.0, 1.0, 0.0)])
#: arm 2 is arm 1 turned half a turn about the vertical
HAND2 = np.diag([-1.0, -1.0, 1.0]) @ HAND1
#: gains (Sec. 5.3: x and phi of the paper; y as the paper's y)
K_V = np.array([65.0, 50.0, 55.0])
K_P = np.array([13000.0, 13000.0, 15000.0])
K_IF, K_II = 100.0, 70.0


def zyz_angles(R: np.ndarray) -> np.ndarray:
    """Z-Y-Z Euler angles (phi, theta, psi) of R (theta in (0, pi))."""
    return np.array(
        [
            math.atan2(R[1, 2], R[0, 2]),
            math.acos(max(-1.0, min(1.0, R[2, 2]))),
            math.atan2(R[2, 1], -R[2, 0]),
        ]
    )


class DualPandaSetup:
    """Plant, constraints, object model and controller pieces of ``dual-panda-box``."""

    def __init__(self, p: dict) -> None:
        d, a, b, h = p["base_distance"], p["box_x"], p["box_y"], p["box_z"]
        self.zc = p["table_z"] + h / 2
        bases = [
            pin.SE3(pin.rpy.rpyToMatrix(0, 0, math.pi / 2), np.array([0.0, -d, 0.0])),
            pin.SE3(pin.rpy.rpyToMatrix(0, 0, -math.pi / 2), np.array([0.0, d, 0.0])),
        ]
        self.c = [np.array([0.0, -b / 2, 0.0]), np.array([0.0, b / 2, 0.0])]
        self.sys = dual_arm_with_box(bases, self.c, [HAND1, HAND2], (a, b, h), p["box_mass"])
        mech = self.sys.mech
        self.mech, self.m = mech, p["box_mass"]
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
        self.I_B[:3, :3] = self.m * (1 + p["model_mass_error"]) * np.eye(3)
        self.I_B[3:, 3:] = self.I_body * (1 + p["model_inertia_error"])
        self.g = np.array([0.0, 0.0, -9.81])
        self.ctrl = None
        self._state_key, self._state, self._T = None, None, None
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

    def object_state(self, snap):
        """``(r, r')`` of the box; cached for the last snapshot (the law and ``measure``)."""
        key = self._state_key
        if key is not None and key[0] is snap and key[1] is snap.q:
            return self._state
        p, R = self.box_pose(snap.q)
        vb = snap.v[self.sys.box_v]
        r = np.concatenate([p, zyz_angles(R @ R_C)])
        vel = np.concatenate([R @ vb[:3], R @ vb[3:]])
        T = euler_zyz_T(r)
        rd = np.linalg.solve(T, vel)
        self._state_key, self._state = (snap, snap.q), (r, rd)
        self._T = (r, rd, T, euler_zyz_T_rate(r, rd), R, vel[3:])
        return r, rd

    def _T_of(self, r, rd):
        """``T(r)``, ``T'(r, r')`` (eq. 6-7), the box rotation and angular velocity;
        reused for the ``(r, r')`` of the last state."""
        c = self._T
        if c is not None and c[0] is r and c[1] is rd:
            return c[2:]
        T = euler_zyz_T(r)
        return T, euler_zyz_T_rate(r, rd), euler_zyz_R(r) @ R_C.T, (T @ rd)[3:]

    def model(self, r, rd, mode):
        T, Td, R_B, w = self._T_of(r, rd)
        S, W, Sd, Wd = self.rigid_matrices(R_B, w)
        Z = np.zeros((3, 6))
        return GraspState(
            S, W, Sd, Wd, self.A_S, T, Td, self.E_P, self.E_F, Z, Z, self.oc.r_P(r),
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

    def Q_r(self, r, rd):
        """Eq. (5): ``I_B T' r' + (-m g, w x I w)``."""
        _, Td, _, w = self._T_of(r, rd)
        Iw = self.I_B[3:, 3:] @ w
        out = self.I_B @ (Td @ rd)
        out[:3] -= self.I_B[0, 0] * self.g
        out[3:] += skew(w) @ Iw
        return out

    def measure(self, snap, mode):
        """Hand wrenches = the welds' multipliers; f_F = -E_F T^T w_env (eq. 27)."""
        lam = snap.sensors["lambda"]
        r, rd = self.object_state(snap)
        w_env = np.array([0.0, 0.0, -lam[12], -lam[13], -lam[14], 0.0])
        return lam[:12], -self.E_F @ (self._T_of(r, rd)[0].T @ w_env)

    def internal(self, q, F_h) -> np.ndarray:
        """``f_IS = A_S^T S^T F_h`` (eq. 12; S has orthonormal columns)."""
        S = grasp_matrices(self.grasps, self.box_pose(q)[1])[0]
        return self.A_S.T @ (S.T @ F_h)

    def controller(self, reference, control_dt, unloaded=False):
        n = self.sys.arm_v[0].size
        return YZController(
            np.arange(2 * n), self.sys.tips, range(6), self.object_state, self.model,
            self.I_B, self.Q_r, self.measure, reference, K_V, K_P, K_IF, K_II,
            control_dt, unloaded,
        )  # fmt: skip

    # -- initial state ---------------------------------------------------------------
    def arm_ik(self, i: int, x: float, seed=READY) -> np.ndarray:
        """Joints of arm i holding the box centred at (x, 0, zc) (bounded least squares)."""
        model, data = self.mech.model, self.mech.model.createData()
        iq = self.sys.arm_q[i]
        lo, hi = model.lowerPositionLimit[iq], model.upperPositionLimit[iq]
        fid = model.getFrameId(self.sys.tips[i])
        target = pin.SE3((HAND1, HAND2)[i], np.array([x, 0.0, self.zc]) + self.c[i])
        qf = pin.neutral(model)

        def res(q, reg):
            qf[iq] = q
            pin.framesForwardKinematics(model, data, qf)
            e = pin.log6(data.oMf[fid].actInv(target)).vector
            return np.concatenate([e, reg * (q - READY)])

        bounds = (lo + 0.05, hi - 0.05)
        s = least_squares(res, np.clip(seed, *bounds), bounds=bounds, args=(0.01,))
        s = least_squares(res, s.x, bounds=bounds, args=(0.0,), xtol=1e-15, ftol=1e-15)
        if np.linalg.norm(s.fun[:6]) > 1e-9:
            raise ValueError(
                f"trajectory outside the arms' workspace: arm {i + 1} cannot hold the box "
                f"at x = {x:.3f} m (pose error {np.linalg.norm(s.fun[:6]):.2g} within its "
                "joint limits minus 0.05 rad)"
            )
        return s.x

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


@scenario(
    "dual-panda-box",
    base_distance=Param(
        0.55, "Panda bases at y = -/+ base_distance, facing +/-y [m]", positive=True
    ),
    table_z=Param(0.05, "table top height above the bases [m] (chosen)"),
    box_x=Param(0.2, "box length along x [m]", positive=True),
    box_y=Param(0.1, "box width along y (between the grasped faces) [m]", positive=True),
    box_z=Param(0.1, "box height [m]", positive=True),
    box_mass=Param(1.0, "box mass [kg]", positive=True),
    x0=Param(-0.05, "initial box x [m]"),
    distance=Param(0.1, "x travel [m]"),
    t_move=Param(2.0, "duration of the slide [s]", positive=True),
    t_acc=Param(0.5, "quartic acceleration / deceleration time [s] (chosen)", positive=True),
    press=Param(5.0, "desired normal force on the table [N]", positive=True),
    squeeze=Param(10.0, "desired squeeze: push of each hand toward the box centre [N]"),
    model_mass_error=Param(0.0, "relative error of the controller's box mass", low=-0.9),
    model_inertia_error=Param(0.0, "relative error of the controller's box inertia", low=-0.9),
    dt=Param(5e-3, "integrator step [s]", positive=True),
    control_dt=Param(5e-3, "controller period [s] (paper: 2e-3)", positive=True),
    probe=Param(True, "also run the 60 ms unloaded-start probe that fits the force-loop rates"),
)
def dual_panda_box(p: dict) -> ScenarioResult:
    """Two Pandas slide a box 10 cm along a table, pressing 5 N and squeezing 10 N.

    Yoshikawa-Zheng (eq. 32-37, 41-43) in 3D, the controller of yz-constrained
    with r_P = (x, y, yaw), f_F = (normal force, moments about x and y) and six
    internal-force coordinates (the squeeze and five zero-desired ones).
    Chosen layout: bases at (0, -/+0.55, 0) facing each other, table top at
    z = 0.05, box (0.2 x 0.1 x 0.1 m, 1 kg) from x = -0.05 to +0.05 in 2 s
    (quartic acceleration/deceleration of 0.5 s, :func:`smooth_move`), hands
    welded at the centres of the faces y = -/+0.05 with the approach axis normal
    to the face. Gains: K_V = (65, 50, 55), K_P = (13000, 13000, 15000),
    K_IF = 100, K_II = 70; dt = control_dt = 5 ms (paper: 2 ms).
    """
    su = DualPandaSetup(p)
    x0, D, T, ta = p["x0"], p["distance"], p["t_move"], p["t_acc"]
    if not ta < T / 2:
        raise ValueError(f"t_acc = {ta} s must be < t_move/2 = {T / 2} s")
    q0 = su.initial_q(x0)
    for x in np.linspace(x0, x0 + D, 5)[1:]:  # the path stays inside both workspaces
        for i in range(2):
            su.arm_ik(i, x, q0[su.sys.arm_q[i]])
    fFd = np.array([p["press"], 0.0, 0.0])
    fISd = np.zeros(6)
    fISd[0] = math.sqrt(2.0) * p["squeeze"]

    def ref(t, mode):
        s, sd, sdd = smooth_move(t, T, D, ta)
        z = np.zeros(2)
        return (np.array([x0 + s, 0, 0]), np.array([sd, *z]), np.array([sdd, *z]), fFd, fISd)

    # the 60 ms probe runs first: it also brings the code paths of the timed run up to speed
    decay = _decay_probe(su, q0, ref, p) if p["probe"] else {}
    ctrl = su.controller(ref, p["control_dt"])
    opt = SimOptions(dt=p["dt"], control_dt=p["control_dt"])
    traj, wall = timed_simulate(su.cset, q0, np.zeros(su.mech.nv), T, opt, controller=ctrl)
    a = traj.arrays()
    t = a["t"]
    sig = {k: v for k, v in a.items()}
    r_P = np.column_stack([sig[f"r_P_{i}"] for i in range(3)])
    r_Pd = np.column_stack([sig[f"r_Pd_{i}"] for i in range(3)])
    forces = [su.measure(_Measured(su, q, v, lam), 0) for q, v, lam in
              zip(a["q"], a["v"], a["lambda"])]  # fmt: skip
    fF = np.array([f[1] for f in forces])
    fIS = np.array([su.internal(q, f[0]) for q, f in zip(a["q"], forces)])
    pos = np.array([su.box_pose(q)[0] for q in a["q"]])
    xd = np.array([x0 + smooth_move(ti, T, D, ta)[0] for ti in t])
    ang = np.array([np.linalg.norm(pin.log3(su.box_pose(q)[1])) for q in a["q"]])
    N = fF[:, 0]
    cop = np.minimum(p["box_y"] / 2 - np.abs(fF[:, 1]) / N, p["box_x"] / 2 - np.abs(fF[:, 2]) / N)
    metrics = {
        "max_position_error": float(np.abs(np.column_stack([pos[:, 0] - xd, pos[:, 1]])).max()),
        "max_orientation_error": float(ang.max()),
        "max_constraint_force_error": float(np.abs(N - fFd[0]).max()),
        "max_constraint_moment_error": float(np.abs(fF[:, 1:]).max()),
        "max_internal_force_error": float(np.abs(fIS[:, 0] / math.sqrt(2) - p["squeeze"]).max()),
        "max_internal_other_error": float(np.abs(fIS[:, 1:]).max()),
        "max_controller_position_error": float(np.abs(r_P - r_Pd).max()),
        "min_normal_force": float(N.min()),
        "min_cop_margin_m": float(cop.min()),
        "max_joint_torque_ratio": float(
            np.abs(a["tau"][:, :14] / np.tile(su.mech.model.effortLimit[:7], 2)).max()
        ),
    }
    metrics.update(decay)
    return ScenarioResult(
        traj, metrics, wall,
        plots=_plots(t, pos, xd, ang, N, fFd[0], fIS, p["squeeze"], a["tau"]),
        extra_arrays={"constraint_force": fF, "internal_force": fIS, "box_position": pos},
        series_doc={
            "constraint_force": "f_F: normal force on the table [N], moments about x, y [N m]",
            "internal_force": "f_IS (eq. 12): squeeze x sqrt(2) [N], then 5 zero-desired",
            "box_position": "box centre (x, y, z) [m]",
        },
        scene3d=_scene(su, t, a["q"]),
    )  # fmt: skip


class _Measured:
    """A minimal snapshot for :meth:`DualPandaSetup.measure` from recorded arrays."""

    def __init__(self, su, q, v, lam):
        self.q, self.v, self.sensors = q, v, {"lambda": lam}


def _decay_probe(su, q0, ref, p) -> dict:
    """60 ms from an unloaded grasp (integrators at -f_d/K): fitted force-loop rates."""
    ctrl = su.controller(ref, p["control_dt"], unloaded=True)
    opt = SimOptions(dt=p["control_dt"], control_dt=p["control_dt"], progress=False)
    # the unloaded start has zero normal force at t = 0: the table row is bilateral here
    tr = simulate(
        su.constraints(unilateral=False), q0, np.zeros(su.mech.nv), 0.06, opt, controller=ctrl
    )
    a = tr.arrays()
    F = [su.measure(_Measured(su, q, v, lam), 0) for q, v, lam in
         zip(a["q"], a["v"], a["lambda"])]  # fmt: skip
    eF = np.array([f[1][0] for f in F]) - p["press"]
    eI = np.array([su.internal(q, f[0])[0] for q, f in zip(a["q"], F)])
    eI -= math.sqrt(2) * p["squeeze"]
    kF, kF_exp = fit_decay(a["t"], eF)
    kI, kI_exp = fit_decay(a["t"], eI)
    return {
        "constraint_force_decay_rate": kF,
        "internal_force_decay_rate": kI,
        "constraint_force_decay_rate_exp": kF_exp,
        "internal_force_decay_rate_exp": kI_exp,
    }


def _plots(t, pos, xd, ang, N, Nd, fIS, squeeze, tau):
    return {
        "positions": {
            "title": "box position vs desired (Figs. 7-9)",
            "ylabel": "[m]",
            "series": {"x": pos[:, 0], "x desired": xd, "y": pos[:, 1], "z": pos[:, 2]},
        },
        "position_errors": {
            "title": "position and orientation errors",
            "ylabel": "|error| [m, rad]",
            "log": True,
            "series": {
                "x": np.abs(pos[:, 0] - xd) + 1e-16,
                "y": np.abs(pos[:, 1]) + 1e-16,
                "rotation angle": ang + 1e-16,
            },
        },  # fmt: skip
        "forces": {
            "title": "normal force and squeeze vs desired",
            "ylabel": "force [N]",
            "series": {
                "normal force": N,
                "normal desired": np.full(t.size, Nd),
                "squeeze": fIS[:, 0] / math.sqrt(2),
                "squeeze desired": np.full(t.size, squeeze),
            },
        },  # fmt: skip
        "torques": {
            "title": "joint torques",
            "ylabel": "torque [N m]",
            "series": {f"arm{i // 7 + 1} tau{i % 7 + 1}": tau[:, i] for i in range(14)},
        },
    }


def _scene(su, t, q) -> dict:
    """``ScenarioResult.scene3d``: both Pandas at their bases, the box, the table."""
    locked = {j: 0.0 for j in ROBOTS["panda"][1]}
    robots = [
        {"urdf": robot_urdf("panda"), "q": q[:, iq], "base": base, "locked": locked,
         "prefix": f"arm{i + 1}"}
        for i, (iq, base) in enumerate(zip(su.sys.arm_q, su.sys.bases))
    ]  # fmt: skip
    table = su.zc - su.sys.size[2] / 2
    return {
        "t": t,
        "robots": robots,
        "boxes": [{"size": su.sys.size, "poses": q[:, su.sys.box_q], "name": "box"}],
        "points": q[:, su.sys.box_q][:, :3],
        "plane": ((0.0, 0.0, table - 4e-4), (0.0, 0.0, 1.0), 0.4),
    }
