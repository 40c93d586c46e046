"""Two fingers grasping a planar object under rolling contact (Arimoto & Yoshida 2010, Sec. 6).

The plant of the ``rolling-grasp`` scenario: finger 1 (2 joints), finger 2 (3
joints) and the object (x, y, theta) in one horizontal-plane model (g = 0);
the object's contours; a pre-shaped initial configuration with the fingertips
on the object; the contact and rolling rows (eq. 67, 71) per finger; and the
per-sample contact quantities a run is judged by.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pfaff.constraints import ConstraintSet
from pfaff.manipulation.contours import Contour, Ellipse, SplineContour, Superellipse
from pfaff.manipulation.rolling import RollingContact, rolling_constraints
from pfaff.manipulation.slip import material_slip
from pfaff.mechanism import Mechanism, ModelBuilder, PlanarChain, PlanarLink
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism
from pfaff.systems.ik import two_link_ik

#: default spline object: an egg-like convex outline through 7 points [m]
SPLINE_POINTS = np.array(
    [
        [0.026, 0.000],
        [0.016, 0.017],
        [-0.004, 0.021],
        [-0.021, 0.012],
        [-0.024, -0.006],
        [-0.010, -0.019],
        [0.012, -0.016],
    ]
)
SHAPES = ("ellipse", "superellipse", "spline")

F1 = [PlanarLink(0.060, 0.040, inertia=0.040 * 0.060**2 / 12),
      PlanarLink(0.050, 0.030, inertia=0.030 * 0.050**2 / 12)]  # fmt: skip
F2 = [PlanarLink(0.050, 0.040, inertia=0.040 * 0.050**2 / 12),
      PlanarLink(0.040, 0.030, inertia=0.030 * 0.040**2 / 12),
      PlanarLink(0.030, 0.020, inertia=0.020 * 0.030**2 / 12)]  # fmt: skip
BASE1, BASE2 = (-0.045, 0.0), (0.045, 0.0)
#: finger joints of the model: finger 1 q[0:2], finger 2 q[2:5]; the object q[5:8]
FINGER_JOINTS = ([0, 1], [2, 3, 4])


def make_contour(shape: str, points: np.ndarray = SPLINE_POINTS) -> Contour:
    """The object's contour for ``shape`` in {ellipse, superellipse, spline}.

    Ellipse 26 x 18 mm semi-axes, superellipse p = 4 24 x 18 mm, or a periodic
    cubic spline through ``points`` ((N, 2) in the object frame [m]).
    """
    if shape == "ellipse":
        return Ellipse(0.026, 0.018)
    if shape == "superellipse":
        return Superellipse(0.024, 0.018, 4)
    if shape == "spline":
        return SplineContour(points)
    raise ValueError(f"unknown shape {shape!r}; valid: {', '.join(SHAPES)}")


def plate_inertia(contour: Contour, mass: float) -> float:
    """Polar moment of a uniform plate with the contour's outline, about the frame origin.

    Green's theorem on the 400-gon of the outline [kg m^2].
    """
    P = contour.outline(400)[:-1]
    area = 0.5 * np.sum(P[:, 0] * np.roll(P[:, 1], -1) - np.roll(P[:, 0], -1) * P[:, 1])
    cross = P[:, 0] * np.roll(P[:, 1], -1) - np.roll(P[:, 0], -1) * P[:, 1]
    nxt = np.roll(P, -1, axis=0)
    J0 = np.sum(cross * (P[:, 0] ** 2 + P[:, 0] * nxt[:, 0] + nxt[:, 0] ** 2
                         + P[:, 1] ** 2 + P[:, 1] * nxt[:, 1] + nxt[:, 1] ** 2)) / 12  # fmt: skip
    return mass * J0 / area


def grasp_mechanism(mass: float, inertia: float) -> PinocchioMechanism:
    """Finger 1 (2 joints), finger 2 (3 joints), the object (x, y, theta): one model, g = 0."""
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_planar_chain(PlanarChain(F1, name="f1", base=BASE1))
    b.add_planar_chain(PlanarChain(F2, name="f2", base=BASE2))
    b.add_planar_body("obj", mass, inertia)
    return b.build("two-fingers")


def grasp_system(
    contour: Contour, mass: float, radii: Sequence[float]
) -> tuple[PinocchioMechanism, list[RollingContact], ConstraintSet]:
    """The two-finger plant: ``(mech, contacts, cset)``.

    The object is a uniform plate (:func:`plate_inertia`); fingertip ``i`` is a
    disc of radius ``radii[i]`` at frame ``f{i+1}_tip``; ``cset`` holds the
    contact (eq. 67) and rolling (eq. 71) rows of finger 1, then of finger 2.
    """
    mech = grasp_mechanism(mass, plate_inertia(contour, mass))
    contacts = [RollingContact(contour, "obj", f"f{i + 1}_tip", radii[i]) for i in range(2)]
    cset = ConstraintSet(mech, rolling_constraints(contacts[0]) + rolling_constraints(contacts[1]))
    return mech, contacts, cset


def initial_configuration(
    contour: Contour, pose, radii, gaps, approach, tip2_angle: float
) -> np.ndarray:
    """Fingers pre-shaped so that each tip centre lies at ``r_i + gap_i`` along the normal.

    ``pose`` = object (x, y, theta); ``approach`` = world directions (rad) from
    the object centre towards the two contacts; ``tip2_angle`` = absolute angle
    of finger 2's last link. Finger 1 takes the branch q2 < 0, finger 2 q2 > 0
    (:func:`~pfaff.systems.ik.two_link_ik`; ValueError out of reach).
    """
    x, y, th = pose
    R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    centres = []
    for ang, r, gap in zip(approach, radii, gaps):
        far = R.T @ (np.array([np.cos(ang), np.sin(ang)]) * 1.0)
        g, _, n, _ = contour.local(contour.foot_point(far))
        centres.append(np.array([x, y]) + R @ (g + (r + gap) * n))
    c1 = centres[0] - BASE1
    q1 = two_link_ik(c1[0], c1[1], F1[0].length, F1[1].length, elbow=-1.0)
    wrist = centres[1] - F2[2].length * np.array([np.cos(tip2_angle), np.sin(tip2_angle)])
    w = wrist - BASE2
    q2 = two_link_ik(w[0], w[1], F2[0].length, F2[1].length, elbow=1.0)
    q2 = np.append(q2, tip2_angle - q2.sum())
    return np.concatenate([q1, q2, [x, y, th]])


def contact_monitor(
    mech: Mechanism,
    cset: ConstraintSet,
    contacts: Sequence[RollingContact],
    ctrl,
    q: np.ndarray,
    v: np.ndarray,
    lam: np.ndarray,
) -> dict[str, np.ndarray]:
    """Per-sample contact quantities of a run (T samples of q, v and the multipliers).

    Returns ``wrench`` (T,) the norm of the sum of the wrench vectors (eq. 77,
    ``= -M_0 x''``), ``potential`` (T,) the controller's ``V``, ``point``,
    ``normal`` (T, 2, 2) the contact points and normals, ``rel_rate`` (T, 2)
    ``phi_i' - theta'``, ``slip`` (T, 2) the material slip velocities
    (:func:`~pfaff.manipulation.slip.material_slip`), ``s`` (T, 2) the contact
    arclengths from the geometry and ``angle`` (T, 2) the contour angles of the
    rolling integral (eq. 81).
    """
    T = len(q)
    s_geo, rel, slip, wr, Rang = (np.zeros((T, 2)) for _ in range(5))
    pot = np.zeros(T)
    pts, nrm = np.zeros((T, 2, 2)), np.zeros((T, 2, 2))
    for k in range(T):
        snap = mech.compute(q[k], v[k], cset.frames, dynamics=False)
        ev = cset.evaluate(snap)
        wr_k = ev.A[:, 5:8].T @ lam[k]  # sum of the wrench vectors (eq. 77) = -M_0 x''
        wr[k] = [np.linalg.norm(wr_k), 0.0]
        pot[k] = ctrl.potential(snap)
        for i, c in enumerate(contacts):
            g = c.geometry(snap)
            pts[k, i], nrm[k, i] = g.point, g.n
            rel[k, i] = -g.Jrot @ v[k]  # phi' - theta'
            slip[k, i] = material_slip(mech.model, c, q[k], v[k])[0]
            s_geo[k, i], Rang[k, i] = c.rolling_integral(snap)
    return {
        "wrench": wr[:, 0],
        "potential": pot,
        "point": pts,
        "normal": nrm,
        "rel_rate": rel,
        "slip": slip,
        "s": s_geo,
        "angle": Rang,
    }


def grasp_outlines(
    mech: Mechanism,
    contour: Contour,
    contacts: Sequence[RollingContact],
    q: np.ndarray,
    idx: np.ndarray,
    points: np.ndarray,
    normals: np.ndarray,
) -> list[np.ndarray]:
    """World outlines at the samples ``idx``: the object, the fingertip discs, the normals.

    Returns ``[object (K, 120, 2), tip 1 (K, 41, 2), tip 2, normal 1 (K, 2, 2),
    normal 2]`` (normals 15 mm long from the contact points).
    """
    outline = contour.outline(120)
    ang = np.linspace(0, 2 * np.pi, 41)
    obj = np.zeros((len(idx), len(outline), 2))
    tips = [np.zeros((len(idx), 41, 2)) for _ in range(2)]
    nrms = [np.zeros((len(idx), 2, 2)) for _ in range(2)]
    for j, k in enumerate(idx):
        x, y, th = q[k, 5:8]
        Rm = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        obj[j] = np.array([x, y]) + outline @ Rm.T
        for i, c in enumerate(contacts):
            ctr = mech.compute(q[k], None, [c.tip], dynamics=False).frames[c.tip].p[:2]
            tips[i][j] = ctr + c.r * np.column_stack([np.cos(ang), np.sin(ang)])
            nrms[i][j] = [points[k, i], points[k, i] + 0.015 * normals[k, i]]
    return [obj, *tips, *nrms]
