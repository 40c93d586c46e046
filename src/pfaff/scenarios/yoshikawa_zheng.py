"""The Yoshikawa-Zheng experimental system (IJRR 1993, Sec. 5) as a pfaff plant.

Two closed-form arms (:class:`~pfaff.mechanism.YZArm`, Table 1) and a planar
object (mass 0.03 kg, inertia 14.4e-5 kg m^2) form one unconstrained
:class:`~pfaff.mechanism.Mechanism` with block-diagonal ``M`` and ``h``; the pins
(two in-plane forces, no moment) are ``PointsCoincide`` closures along x and y,
the environment a unilateral ``PointOnPlane`` on the object. Closed form was
chosen over a Pinocchio five-bar: ``YZArm`` is already tested against
Pinocchio, needs no internal loop closure, and is cheap per state.
"""

from __future__ import annotations

import math

import numpy as np

from pfaff.constraints import ConstraintSet, PointOnPlane, PointsCoincide
from pfaff.control.yoshikawa_zheng import GraspState, YZController
from pfaff.manipulation.grasp import (
    GRASP_TYPES,
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
from pfaff.mechanism import YZ_TABLE1, FrameState, Mechanism, Snapshot, YZArm
from pfaff.scenarios.common import planar_animation, timed_simulate
from pfaff.scenarios.registry import Param, ScenarioResult, scenario
from pfaff.simulate import SimOptions, simulate

#: object of Sec. 5.2
OBJECT_MASS, OBJECT_INERTIA = 0.03, 14.4e-5
#: servo gains of Sec. 5.3 (K_V, K_P for (x, y, phi))
K_V = np.array([65.0, 50.0, 55.0])
K_P = np.array([13000.0, 13000.0, 15000.0])
K_IF, K_II = 100.0, 70.0
#: per mode: 0 free r_P = (x, y, phi), 1 in contact r_P = (x, phi)
GAINS_V = {0: K_V, 1: K_V[[0, 2]]}
GAINS_P = {0: K_P, 1: K_P[[0, 2]]}


def table2(t: float) -> tuple[float, float]:
    """Table 2: desired (constraint force, internal force) [N] at time t [s]."""
    if t < 0.27:
        return 0.50, 0.8
    if t < 0.53:
        return 0.75, 1.0
    return 0.50, 0.8


TABLE2_STEPS = (0.27, 0.53)


def smooth_move(t: float, T: float, D: float, ta: float) -> tuple[float, float, float]:
    """Move through D in T: quartic acceleration/deceleration of ``ta`` each, constant
    velocity ``V = D / (T - ta)`` between (Sec. 5.3). Returns (s, s', s'')."""
    V = D / (T - ta)

    def acc(u):  # s = V (u^3/ta^2 - u^4/(2 ta^3)) on [0, ta]
        return (
            V * (u**3 / ta**2 - u**4 / (2 * ta**3)),
            V * (3 * u**2 / ta**2 - 2 * u**3 / ta**3),
            V * (6 * u / ta**2 - 6 * u**2 / ta**3),
        )

    if t <= 0:
        return 0.0, 0.0, 0.0
    if t >= T:
        return D, 0.0, 0.0
    if t < ta:
        return acc(t)
    if t <= T - ta:
        return V * ta / 2 + V * (t - ta), V, 0.0
    s, sd, sdd = acc(T - t)
    return D - s, sd, -sdd


def forth_back(t: float, T: float, D: float, ta: float) -> tuple[float, float, float]:
    """Forth through D in T/2 and back in T/2, each with :func:`smooth_move`."""
    if t < T / 2:
        return smooth_move(t, T / 2, D, ta)
    s, sd, sdd = smooth_move(t - T / 2, T / 2, D, ta)
    return D - s, -sd, -sdd


def free_reference(x0: float, y0: float, T: float, D: float, ta: float, Dy: float, tay: float):
    """Tasks 2 and 3: x moves D in T (:func:`smooth_move`), y goes forth and back
    through Dy (:func:`forth_back`), orientation held; ``t -> (r, r', r'')``."""

    def r_d(t):
        s, sd, sdd = smooth_move(t, T, D, ta)
        u, ud, udd = forth_back(t, T, Dy, tay)
        return np.array([x0 + s, y0 + u, 0.0]), np.array([sd, ud, 0.0]), np.array([sdd, udd, 0.0])

    return r_d


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


def arm_ik(arm: YZArm, p, elbow: int) -> np.ndarray:
    """Absolute angles (q1, q2) with tip at p; ``elbow`` = +1 / -1 picks the branch.

    Raises ValueError when p is out of reach (the annulus |l0 - l4| .. l0 + l4).
    """
    l0, l4 = arm.links[0].l, arm.links[4].l
    d = np.asarray(p[:2], float) - np.asarray(arm.base)
    r = float(np.hypot(*d))
    ca = (r * r + l0 * l0 - l4 * l4) / (2 * l0 * r) if r > 0 else 2.0
    if not -1.0 <= ca <= 1.0:
        raise ValueError(
            f"trajectory outside the arms' workspace: tip point ({p[0]:.4f}, {p[1]:.4f}) "
            f"is {r:.4f} m from the base {arm.base}, reach is {abs(l0 - l4):.3f} .. "
            f"{l0 + l4:.3f} m"
        )
    q1 = math.atan2(d[1], d[0]) + elbow * math.acos(ca)
    e = d - l0 * np.array([math.cos(q1), math.sin(q1)])
    return np.array([q1, math.atan2(e[1], e[0])])


def planar_grasp(spacing: float, kind: str = "frictional_point"):
    """Two grasps at (-spacing/2, 0) and (+spacing/2, 0) in the object frame."""
    return [
        GraspPoint(kind, np.array([-spacing / 2, 0.0]), normal=(1.0, 0.0)),
        GraspPoint(kind, np.array([spacing / 2, 0.0]), normal=(-1.0, 0.0)),
    ]


def _rot2(th: float) -> np.ndarray:
    c, s = math.cos(th), math.sin(th)
    return np.array([[c, -s], [s, c]])


class YZSetup:
    """The plant, its constraint sets (free / in contact) and the controller pieces.

    Parameters
    ----------
    spacing : hole spacing [m]; bases : arm base positions; elbows : IK branches.
    wall_y : level of the wall (y = wall_y, the object presses along +y) or None.
    contact_h : the object's contact point is (0, contact_h) in its frame.
    grasp_kind : grasp type of both arms (the pins: ``frictional_point``).
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
        self.plant = YZTwoArmPlant(bases, holes=holes)
        self.elbows, self.h, self.wall_y = elbows, contact_h, wall_y
        xy = ((1, 0, 0), (0, 1, 0))
        pins = [
            PointsCoincide(f"arm{i + 1}_tip", f"hole{i + 1}", directions=xy, name=f"pin {i + 1}")
            for i in range(2)
        ]
        self.free = ConstraintSet(self.plant, pins)
        self.contact = None
        if wall_y is not None:
            wall = PointOnPlane(
                "object", (0.0, -1.0, 0.0), -wall_y, point=(0.0, contact_h, 0.0),
                name="wall", unilateral=True,
            )  # fmt: skip
            self.contact = ConstraintSet(self.plant, [*pins, wall])
            surface = planar_contact_surface((0.0, contact_h), (0.0, 1.0), wall_y)
            self.constrained = ObjectConstraints(
                [surface], [linear_function((1, 0, 0)), linear_function((0, 0, 1))], 3
            )
        self.unconstrained = ObjectConstraints([], [linear_function(e) for e in np.eye(3)], 3)
        self.I_B = np.diag(
            [OBJECT_MASS * (1 + mass_error)] * 2 + [OBJECT_INERTIA * (1 + inertia_error)]
        )

    def initial_q(self, r) -> np.ndarray:
        """Joint angles holding the object at r = (x, y, theta)."""
        q = np.zeros(7)
        R = _rot2(r[2])
        for i, (arm, g) in enumerate(zip(self.plant.arms, self.grasps)):
            q[2 * i : 2 * i + 2] = arm_ik(arm, np.asarray(r[:2]) + R @ g.position, self.elbows[i])
        q[4:] = r
        return q

    def check_path(self, rs, what: str = "trajectory") -> float:
        """IK along object poses rs; ValueError off the workspace; returns min |sin(q1-q2)|."""
        worst = 1.0
        for r in rs:
            try:
                q = self.initial_q(r)
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

    def model(self, r, rd, mode):
        oc = self.constrained if mode == 1 else self.unconstrained
        S, W, Sd, Wd = self.pin_matrices(float(r[2]), float(rd[2]))
        return GraspState(
            S, W, Sd, Wd, self.A_S, self._eye3, self._zero3, oc.E_P(r), oc.E_F(r),
            oc.E_P_rate(r, rd), oc.E_F_rate(r, rd), oc.r_P(r),
        )  # fmt: skip

    @staticmethod
    def object_state(snap):
        return snap.q[4:7], snap.v[4:7]

    @staticmethod
    def measure(snap, mode):
        lam = snap.sensors["lambda"]
        F_h = np.array([lam[0], lam[1], 0.0, lam[2], lam[3], 0.0])
        f_F = -lam[4:5] if mode == 1 and lam.size > 4 else np.zeros(0)
        return F_h, f_F

    def controller(
        self, reference, control_dt=2e-3, unloaded_start=False, mode=0, rule="trapezoid"
    ):
        c = YZController(
            [0, 1, 2, 3], ("arm1_tip", "arm2_tip"), [0, 1, 5], self.object_state, self.model,
            self.I_B, lambda r, rd: np.zeros(3), self.measure, reference, GAINS_V, GAINS_P,
            K_IF, K_II, control_dt, unloaded_start, rule,
        )  # fmt: skip
        c.mode = mode
        return c


# ----------------------------------------------------------------------------- scenarios

SQRT2 = math.sqrt(2.0)

YZ_COMMON_PARAMS = dict(
    spacing=Param(
        0.12, "hole spacing on the object [m] (chosen; 0 is not force-closure)", low=0.0
    ),
    base_x=Param(0.08, "arm bases at (-base_x, 0) and (+base_x, 0) [m] (chosen)", positive=True),
    x0=Param(-0.025, "initial object x [m] (chosen); x moves +0.05 m in 0.8 s (Sec. 5.3)"),
    y0=Param(0.13, "initial object y [m] (chosen)"),
    distance=Param(0.05, "x travel [m] (Sec. 5.3)"),
    t_move=Param(0.8, "duration of the motion [s] (Sec. 5.3)", positive=True),
    t_acc=Param(0.2, "quartic acceleration / deceleration time [s] (chosen)", positive=True),
    model_mass_error=Param(0.0, "relative error of the controller's object mass", low=-0.9),
    model_inertia_error=Param(0.0, "relative error of the controller's object inertia", low=-0.9),
    step_exclusion_s=Param(
        0.03, "force errors exclude this long after each Table 2 step [s]", low=0.0
    ),
    dt=Param(2e-3, "integrator step [s] (= control period, 500 Hz, Sec. 5.1)", positive=True),
    control_dt=Param(2e-3, "controller period [s] (500 Hz, Sec. 5.1)", positive=True),
    grasp_type=Param(
        "frictional_point",
        "grasp type of both arms (Sec. 2.3; the plant models pins)",
        choices=GRASP_TYPES,
    ),
    integral_rule=Param(
        "trapezoid",
        "force integral over a hold (eq. 42-43): mean of its start and end "
        "forces, or the end reading only",
        choices=("trapezoid", "end"),
    ),
)


def yz_setup(p, wall_y=None, kind="frictional_point") -> YZSetup:
    return YZSetup(
        p["spacing"], [(-p["base_x"], 0.0), (p["base_x"], 0.0)], wall_y=wall_y,
        contact_h=p.get("contact_h", 0.01), grasp_kind=p.get("grasp_type", kind),
        mass_error=p["model_mass_error"], inertia_error=p["model_inertia_error"],
    )  # fmt: skip


def internal_force(su: YZSetup, q, lam) -> float:
    """Average pushing force of the two pins (Sec. 5.2) = f_IS / sqrt(2), from multipliers."""
    g = su.model(q[4:7], np.zeros(3), 0)
    F_h = np.array([lam[0], lam[1], 0.0, lam[2], lam[3], 0.0])
    return float((g.A_S.T @ np.linalg.pinv(g.S) @ F_h)[0]) / SQRT2


def step_mask(t, steps, excl) -> np.ndarray:
    """False within ``excl`` seconds after each step time."""
    keep = np.ones(t.size, bool)
    for ts in steps:
        keep &= ~((t >= ts - 1e-12) & (t < ts + excl))
    return keep


def fit_decay(t, e) -> tuple[float, float]:
    """Fit ``e_k = e_0 rho^k`` on a sampled error: returns ``((1 - rho)/dt, -ln(rho)/dt)``.

    ``(1 - rho)/dt`` is the gain K of the sampled integral loop ``e_{k+1} = (1 - K dt) e_k``
    (eq. 45-46 with the force held over each period); ``-ln(rho)/dt`` the exponential rate.
    """
    ok = np.abs(e) > 1e-4 * np.abs(e).max()
    ok &= np.cumprod(ok).astype(bool)
    tt, ee = t[ok][1:], np.log(np.abs(e[ok][1:]))
    slope = np.polyfit(tt, ee, 1)[0]
    dt = float(np.median(np.diff(t)))
    rho = math.exp(slope * dt)
    return (1 - rho) / dt, -slope


def _decay_probe(su, cset, q0, ref, p, f_index) -> tuple[float, float, float, float]:
    """A short run from an unloaded grasp (integrators at -f_d/K): fitted force-loop rates."""
    ctrl = su.controller(ref, p["control_dt"], True, 1 if f_index else 0, p["integral_rule"])
    opt = SimOptions(dt=p["control_dt"], control_dt=p["control_dt"], progress=False)
    tr = simulate(cset, q0, np.zeros(7), 0.06, opt, controller=ctrl)
    a = tr.arrays()
    t = a["t"]
    fd = np.array([table2(ti) for ti in t])
    fI = np.array([internal_force(su, q, lam) for q, lam in zip(a["q"], a["lambda"])])
    kI = fit_decay(t, fd[:, 1] - fI)
    kF = fit_decay(t, fd[:, 0] + a["lambda"][:, 4]) if f_index else (np.nan, np.nan)
    return (*kF, *kI)


def yz_plots(t, pos, pos_d, labels, fF, fFd, fI, fId, tau):
    plots = {
        "positions": {
            "title": "object position vs desired (Figs. 7-9)",
            "ylabel": "x, y [m], phi [rad]",
            "series": {
                **{labels[i]: pos[:, i] for i in range(pos.shape[1])},
                **{labels[i] + " desired": pos_d[:, i] for i in range(pos.shape[1])},
            },
        },
        "position_errors": {
            "title": "position errors",
            "ylabel": "|error| [m, rad]",
            "log": True,
            "series": {labels[i]: np.abs(pos - pos_d)[:, i] + 1e-16 for i in range(pos.shape[1])},
        },
        "forces": {
            "title": "constraint and internal force vs Table 2",
            "ylabel": "force [N]",
            "series": {"internal force": fI, "internal desired": fId},
        },
        "torques": {
            "title": "joint torques",
            "ylabel": "torque [N m]",
            "series": {f"arm{i // 2 + 1} tau{i % 2 + 1}": tau[:, i] for i in range(4)},
        },
    }
    if fF is not None:
        plots["forces"]["series"].update({"constraint force": fF, "constraint desired": fFd})
    return plots


def yz_static_lines(su: YZSetup, xs):
    lines = [(np.array([b[0] for b in (a.base for a in su.plant.arms)]), np.zeros(2))]
    if su.wall_y is not None:
        lines.append((np.array([xs[0] - 0.08, xs[1] + 0.08]), np.full(2, su.wall_y)))
    return lines


@scenario(
    "yz-constrained",
    **YZ_COMMON_PARAMS,
    contact_h=Param(0.01, "the object's contact point is (0, contact_h) in its frame [m]"),
    surface_y=Param(0.14, "the constraint surface y = surface_y, parallel to x [m] (chosen)"),
    probe=Param(True, "also run the 60 ms unloaded-start probe that fits the force-loop rates"),
)
def yz_constrained(p: dict) -> ScenarioResult:
    """Yoshikawa-Zheng task 1: two arms slide a held object along a surface (Sec. 5.2-5.3).

    Plant: two closed-form YZ arms (Table 1) + the object (0.03 kg, 14.4e-5 kg m^2),
    pins as PointsCoincide along x and y, the surface y = surface_y a unilateral
    PointOnPlane on the object's contact point (0, contact_h). Controller: eq.
    (32)-(37) + (41)-(43) at 500 Hz with r_P = (x, phi), f_F normal to the
    surface, f_IS the squeeze; gains K_V = (65, 55), K_P = (13000, 15000) (the
    x and phi entries of Sec. 5.3), K_IF = 100, K_II = 70; desired forces of
    Table 2 (internal force = the average push of the two pins = f_IS/sqrt(2)).
    Chosen layout: bases (-0.08, 0) and (0.08, 0), hole spacing 0.12 m, object
    from x = -0.025 to 0.025 at y = 0.13, surface at y = 0.14. Measured forces are
    the plant's multipliers (what the held torque produced, read at each sample).
    The integral of eq. (42)-(43) is taken over each hold interval against that
    interval's desired value, with the trapezoid of the force at the start of the
    hold (reading + the torque step through K of eq. 31) and at its end, so the
    drift within a hold is centred and with the exact model a Table 2 step leaves
    no transient; the force-loop rates are
    fitted in a 60 ms probe that starts from an unloaded grasp (integrators at
    -f_d/K): K_fit = (1 - rho)/dt, rho the per-sample error ratio (eq. 45-46
    sampled), next to the exponential rate -ln(rho)/dt.
    """
    su = yz_setup(p, wall_y=p["surface_y"])
    y0 = p["surface_y"] - p["contact_h"]
    x0, D, T, ta = p["x0"], p["distance"], p["t_move"], p["t_acc"]
    if not ta < T / 2:
        raise ValueError(f"t_acc = {ta} s must be < t_move/2 = {T / 2} s")
    xs = np.linspace(x0, x0 + D, 41)
    try:
        su.check_path([np.array([x, y0, 0.0]) for x in xs], "the constraint surface")
    except ValueError as exc:
        raise ValueError(
            f"constraint surface y = {p['surface_y']} m cannot be reached by the held object "
            f"over x in [{x0}, {x0 + D}]: {exc}"
        ) from None

    def ref(t, mode):
        s, sd, sdd = smooth_move(t, T, D, ta)
        fF, fI = table2(t)
        return (
            np.array([x0 + s, 0.0]), np.array([sd, 0.0]), np.array([sdd, 0.0]),
            np.array([fF]), np.array([SQRT2 * fI]),
        )  # fmt: skip

    q0 = su.initial_q(np.array([x0, y0, 0.0]))
    ctrl = su.controller(ref, p["control_dt"], mode=1, rule=p["integral_rule"])
    opt = SimOptions(dt=p["dt"], control_dt=p["control_dt"])
    traj, wall = timed_simulate(su.contact, q0, np.zeros(7), T, opt, controller=ctrl)
    a = traj.arrays()
    t = a["t"]
    pos = a["q"][:, [4, 6]]
    pos_d = np.array([[x0 + smooth_move(ti, T, D, ta)[0], 0.0] for ti in t])
    fF = -a["lambda"][:, 4]
    fI = np.array([internal_force(su, q, lam) for q, lam in zip(a["q"], a["lambda"])])
    fd = np.array([table2(ti) for ti in t])
    keep = step_mask(t, (0.0, *TABLE2_STEPS), p["step_exclusion_s"])
    metrics = {
        "max_position_error": float(np.abs(pos[:, 0] - pos_d[:, 0]).max()),
        "max_orientation_error": float(np.abs(pos[:, 1]).max()),
        "max_constraint_force_error": float(np.abs(fF - fd[:, 0])[keep].max()),
        "max_internal_force_error": float(np.abs(fI - fd[:, 1])[keep].max()),
        "min_contact_force": float(fF.min()),
        "max_y_deviation": float(np.abs(a["q"][:, 5] - y0).max()),
    }
    if p["probe"]:
        kF, kF_exp, kI, kI_exp = _decay_probe(su, su.contact, q0, ref, p, 1)
        metrics.update(
            constraint_force_decay_rate=kF, internal_force_decay_rate=kI,
            constraint_force_decay_rate_exp=kF_exp, internal_force_decay_rate_exp=kI_exp,
        )  # fmt: skip
    return ScenarioResult(
        traj, metrics, wall, **planar_animation(su.plant, t, a["q"]),
        static_lines=yz_static_lines(su, (x0, x0 + D)),
        plots=yz_plots(t, pos, pos_d, ["x", "phi"], fF, fd[:, 0], fI, fd[:, 1], a["tau"]),
        extra_arrays={"constraint_force": fF, "internal_force": fI, "desired_forces": fd},
        series_doc={
            "constraint_force": "f_F: normal force of the object on the surface [N]",
            "internal_force": "average push of the two pins f_IS/sqrt(2) [N]",
            "desired_forces": "Table 2 (constraint, internal) [N]",
        },
    )  # fmt: skip


@scenario(
    "yz-free",
    **YZ_COMMON_PARAMS,
    y_distance=Param(0.025, "y goes forth and back through this [m] (Sec. 5.3)"),
    probe=Param(True, "also run the 60 ms unloaded-start probe that fits the internal-force rate"),
)
def yz_free(p: dict) -> ScenarioResult:
    """Yoshikawa-Zheng task 2: two arms move a held object in free space (Sec. 5.2-5.3).

    The same plant and controller as yz-constrained with C = 0: r_P = r = (x, y,
    phi), K_V = diag(65, 50, 55), K_P = diag(13000, 13000, 15000), K_II = 70; x
    moves 0.05 m in 0.8 s, y goes forth and back through 0.025 m in the same
    0.8 s (each half a quartic-accel / constant / decel move with t_acc/2), phi at 0;
    the internal force follows Table 2. Chosen layout as yz-constrained.
    """
    su = yz_setup(p)
    x0, y0, D, Dy, T, ta = (
        p["x0"],
        p["y0"],
        p["distance"],
        p["y_distance"],
        p["t_move"],
        p["t_acc"],
    )
    if not ta < T / 2:
        raise ValueError(f"t_acc = {ta} s must be < t_move/2 = {T / 2} s")
    tay = ta / 2

    r_d = free_reference(x0, y0, T, D, ta, Dy, tay)

    su.check_path([r_d(ti)[0] for ti in np.linspace(0, T, 81)])

    def ref(t, mode):
        return (*r_d(t), np.zeros(0), np.array([SQRT2 * table2(t)[1]]))

    q0 = su.initial_q(np.array([x0, y0, 0.0]))
    ctrl = su.controller(ref, p["control_dt"], mode=0, rule=p["integral_rule"])
    opt = SimOptions(dt=p["dt"], control_dt=p["control_dt"])
    traj, wall = timed_simulate(su.free, q0, np.zeros(7), T, opt, controller=ctrl)
    a = traj.arrays()
    t = a["t"]
    pos = a["q"][:, 4:7]
    pos_d = np.array([r_d(ti)[0] for ti in t])
    fI = np.array([internal_force(su, q, lam) for q, lam in zip(a["q"], a["lambda"])])
    fd = np.array([table2(ti) for ti in t])
    keep = step_mask(t, (0.0, *TABLE2_STEPS), p["step_exclusion_s"])
    metrics = {
        "max_position_error": float(np.abs(pos[:, :2] - pos_d[:, :2]).max()),
        "max_orientation_error": float(np.abs(pos[:, 2]).max()),
        "max_internal_force_error": float(np.abs(fI - fd[:, 1])[keep].max()),
    }
    if p["probe"]:
        metrics["internal_force_decay_rate"] = _decay_probe(su, su.free, q0, ref, p, 0)[2]
    return ScenarioResult(
        traj, metrics, wall, **planar_animation(su.plant, t, a["q"]),
        static_lines=yz_static_lines(su, (x0, x0 + D)),
        plots=yz_plots(t, pos, pos_d, ["x", "y", "phi"], None, None, fI, fd[:, 1], a["tau"]),
        extra_arrays={"internal_force": fI, "desired_forces": fd},
        series_doc={
            "internal_force": "average push of the two pins f_IS/sqrt(2) [N]",
            "desired_forces": "Table 2 (constraint, internal) [N]",
        },
    )  # fmt: skip
