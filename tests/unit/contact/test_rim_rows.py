"""A cylinder's rim on a still plane (pfaff.contact.rim, NumPy only): the normal row's
residual against the lowest of 20000 points sampled on the circle, its Jacobian against
central differences on the Lie group, both kinds' drift against the rate of ``A v`` along
a motion at constant ``v`` (and the normal row's ``A v`` against ``Phi'``, its drift
against ``Phi''``), at random states of a free body with ``|n . a| < 0.9``. Wrong drifts
are caught: a lever fixed in the world (no ``w x l'``: RollingPoint's drift) and a lever
fixed in the body (a vertex). Bad inputs raise ModelError naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.constraints.base import check_derivatives
from pfaff.contact.rim import RimOnPlane, RimRolling, rim_constraints
from pfaff.contact.rolling import RollingPoint, tangent_basis
from pfaff.mechanism import ModelBuilder, ModelError

FRAME = "wheel_body"
N_STATES = 20


@pytest.fixture(scope="module")
def mech():
    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_free_body("wheel", 2.0, np.diag([0.02, 0.02, 0.03]))
    return b.build("wheel")


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x)


def _cases(mech, seed: int, n: int = N_STATES):
    """``n`` random rims (centre, axis, radius, plane) with a state ``(q, v)`` each at
    which ``|s| = |n . a| < 0.9``."""
    rng = np.random.default_rng(seed)
    while n:
        point, axis = 0.1 * rng.normal(size=3), rng.normal(size=3)
        radius, normal, offset = rng.uniform(0.05, 0.5), _unit(rng.normal(size=3)), rng.normal()
        q = np.concatenate([rng.normal(size=3), _unit(rng.normal(size=4))])
        R = mech.compute(q, None, (FRAME,), dynamics=False).frame(FRAME).R
        if abs(normal @ R @ _unit(axis)) < 0.9:
            n -= 1
            yield (point, axis, radius, normal, offset), q, rng.uniform(-2.0, 2.0, mech.nv)


def _snap(mech, q, v=None):
    return mech.compute(q, v, (FRAME,), dynamics=False)


def _rate(mech, c, q, v, h: float = 1e-5) -> np.ndarray:
    """``d/dt (A(q(t)) v)`` at ``t = 0`` along ``q(t) = integrate(q, t v)``."""
    ap = c.jacobian(_snap(mech, mech.integrate(q, h * v), v)) @ v
    am = c.jacobian(_snap(mech, mech.integrate(q, -h * v), v)) @ v
    return (ap - am) / (2 * h)


def test_normal_row_is_the_gradient_of_the_residual(mech):
    worst, h = 0.0, 1e-6
    for args, q, v in _cases(mech, 1):
        c = RimOnPlane(FRAME, *args)
        A = c.jacobian(_snap(mech, q))
        fd = np.empty(mech.nv)
        for i, e in enumerate(h * np.eye(mech.nv)):
            up, down = mech.integrate(q, e), mech.integrate(q, -e)
            fd[i] = (c.phi(_snap(mech, up)) - c.phi(_snap(mech, down)))[0] / (2 * h)
        assert A.shape == (1, mech.nv) and c.phi(_snap(mech, q)).shape == (1,)
        worst = max(worst, float(np.abs(A[0] - fd).max()))
        # the library's own check agrees (all three rows)
        err = check_derivatives(ConstraintSet(mech, rim_constraints(FRAME, *args)), q, v)
        assert err["jacobian"] < 1e-7 and err["drift"] < 1e-6
    assert worst < 1e-7, worst


def test_residual_is_the_height_of_the_rims_lowest_point(mech):
    theta = np.linspace(0.0, 2 * np.pi, 20000, endpoint=False)
    worst_phi = worst_x = 0.0
    for (point, axis, radius, normal, offset), q, _ in _cases(mech, 2):
        c = RimOnPlane(FRAME, point, axis, radius, normal, offset)
        snap = _snap(mech, q)
        fr = snap.frame(FRAME)
        a = fr.R @ _unit(axis)
        e1 = _unit(np.cross(a, np.eye(3)[int(np.argmin(np.abs(a)))]))
        e2 = np.cross(a, e1)
        circle = fr.point(point) + radius * (
            np.outer(np.cos(theta), e1) + np.outer(np.sin(theta), e2)
        )
        height = circle @ normal - offset
        k = int(np.argmin(height))
        worst_phi = max(worst_phi, abs(height[k] - c.phi(snap)[0]))
        worst_x = max(worst_x, float(np.linalg.norm(circle[k] - c.contact(snap))))
    assert worst_phi < 1e-6 and worst_x < 1e-3, (worst_phi, worst_x)


def test_drift_is_the_rate_of_a_v_along_a_motion(mech):
    worst, worst_v, worst_2, h2 = 0.0, 0.0, 0.0, 1e-4
    for args, q, v in _cases(mech, 3):
        rows = rim_constraints(FRAME, *args)
        snap = _snap(mech, q, v)
        for c in rows:
            assert c.drift(snap).shape == (1,)
            worst = max(worst, float(np.abs(_rate(mech, c, q, v) - c.drift(snap)).max()))
        # the normal row: A v = Phi' and its drift = Phi'' at constant v
        normal = rows[0]
        qp, qm = mech.integrate(q, h2 * v), mech.integrate(q, -h2 * v)
        phi_p, phi_0, phi_m = (normal.phi(_snap(mech, x))[0] for x in (qp, q, qm))
        worst_v = max(worst_v, abs((phi_p - phi_m) / (2 * h2) - (normal.jacobian(snap) @ v)[0]))
        worst_2 = max(worst_2, abs((phi_p - 2 * phi_0 + phi_m) / h2**2 - normal.drift(snap)[0]))
    assert worst < 1e-6 and worst_v < 1e-6 and worst_2 < 1e-5, (worst, worst_v, worst_2)


class _WorldLever(RimRolling):
    """A wrong drift: the lever held fixed in the world (no ``w x l'``)."""

    def _lever_rate(self, a, s, rho, w):
        return np.zeros(3)


def test_a_lever_fixed_in_the_world_or_in_the_body_is_caught(mech):
    least_world = least_body = np.inf
    for (point, axis, radius, normal, offset), q, v in _cases(mech, 4, 10):
        snap = _snap(mech, q, v)
        fr = snap.frame(FRAME)
        touch = RimOnPlane(FRAME, point, axis, radius, normal, offset)
        lever = touch.contact(snap) - fr.point(point)
        vertex = point + fr.R.T @ lever  # the material point at x, frozen in the body
        miss_world, miss_body = [], []
        for t in tangent_basis(normal):
            rim = (FRAME, point, axis, radius, normal, t)
            good, wrong = RimRolling(*rim), _WorldLever(*rim)
            rate = _rate(mech, good, q, v)[0]
            miss_world.append(abs(rate - wrong.drift(snap)[0]))
            # RollingPoint with the lever fixed in the world: the same row, the wrong drift
            ball = RollingPoint(FRAME, t, lever, point)
            assert np.abs(ball.jacobian(snap) - good.jacobian(snap)).max() < 1e-12
            assert abs(ball.drift(snap)[0] - wrong.drift(snap)[0]) < 1e-12
            miss_body.append(abs(rate - t @ fr.point_drift(vertex, v)))
        # a vertex on the plane: the same residual and row, the wrong drift
        corner = PointOnPlane(FRAME, normal, offset, vertex)
        assert abs(corner.residual(snap)[0] - touch.phi(snap)[0]) < 1e-12
        assert np.abs(corner.jacobian(snap) - touch.jacobian(snap)).max() < 1e-12
        miss_body.append(abs(_rate(mech, touch, q, v)[0] - corner.drift(snap)[0]))
        least_world = min(least_world, max(miss_world))
        least_body = min(least_body, max(miss_body))
    assert least_world > 1e-3 and least_body > 1e-3, (least_world, least_body)


def test_rim_constraints_rows_and_inputs_normalised():
    rows = rim_constraints(FRAME, (0.0, 0.0, 0.0), (0.0, 2.0, 0.0), 0.3, (0.0, 0.0, 5.0), 0.1)
    t1, t2 = tangent_basis(np.array([0.0, 0.0, 1.0]))
    assert [type(c) for c in rows] == [RimOnPlane, RimRolling, RimRolling]
    assert [c.holonomic for c in rows] == [True, False, False]
    assert np.allclose(rows[0].n, [0, 0, 1]) and np.allclose(rows[0].axis, [0, 1, 0])
    assert np.allclose(rows[1].t, t1) and np.allclose(rows[2].t, t2) and rows[0].d == 0.1


@pytest.mark.parametrize(
    "kw, what",
    [
        ({"radius": 0.0}, "radius"),
        ({"radius": -0.1}, "radius"),
        ({"radius": np.nan}, "radius"),
        ({"radius": np.inf}, "radius"),
        ({"radius": "big"}, "radius"),
        ({"normal": (0.0, 0.0, 0.0)}, "normal"),
        ({"normal": (0.0, np.nan, 1.0)}, "normal"),
        ({"axis": (0.0, 0.0, 0.0)}, "axis"),
        ({"point": (0.0, 0.0)}, "point"),
        ({"direction": (0.0, 0.1, 1.0)}, "rolling direction must be perpendicular"),
        ({"direction": (0.0, 0.0, 0.0)}, "rolling direction"),
        ({"offset": np.inf}, "offset"),
        ({"offset": "low"}, "offset"),
    ],
)
def test_bad_inputs_name_the_parameter(kw, what):
    args = {"frame": FRAME, "point": (0.0, 0.0, 0.0), "axis": (0.0, 1.0, 0.0)}
    args |= {"radius": 0.3, "normal": (0.0, 0.0, 1.0)}
    args |= kw
    if "direction" in args:
        make = lambda: RimRolling(**args)
    else:
        make = lambda: RimOnPlane(**{"offset": 0.0, **args})
    with pytest.raises(ModelError, match=what):
        make()
    if "offset" not in kw and "direction" not in kw:  # the rolling rows check alike
        with pytest.raises(ModelError, match=what):
            RimRolling(**args, direction=(1.0, 0.0, 0.0))
