"""PointOnBodyPlane: a point of one frame on a plane fixed in another frame (the row a
contact between two moving bodies holds). Its NumPy rows against finite differences of
its own Phi along motions (A v = Phi', A a + drift = Phi'' along q(t) = integrate(q,
t v + t^2 a / 2)), the compiled kind (src/cpp/kinds/point_on_body_plane.cpp) against the
NumPy class at many states, and the inputs refused."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnBodyPlane
from pfaff.mechanism.base import ModelError
from tests.unit.dynamics.test_derivatives import _floating_ball

H = 1e-4  # the differences' step [s]


def _cases(panda):
    rng = np.random.default_rng(11)
    out = []
    for mech, f1, f2 in ((_floating_ball(), "tip", "corner"),
                         (panda, "panda_hand_tcp", "panda_link3")):  # fmt: skip
        for _ in range(10):
            c = PointOnBodyPlane(
                f1, f2, rng.standard_normal(3), offset=0.1 * rng.standard_normal(),
                point1=0.1 * rng.standard_normal(3), point2=0.2 * rng.standard_normal(3),
            )  # fmt: skip
            q = pin.integrate(mech.model, pin.neutral(mech.model), rng.standard_normal(mech.nv))
            v, a = rng.standard_normal(mech.nv), rng.standard_normal(mech.nv)
            out.append((mech, c, q, v, a))
    return out


def _phi(mech, c, q) -> float:
    snap = mech.compute(q, None, c.frames, dynamics=False)
    return float(c.residual(snap)[0])


def _along(mech, c, q, v, a):
    """Phi' and Phi'' at t = 0 along q(t) = integrate(q, t v + t^2 a / 2), by central
    differences of Phi (Richardson-extrapolated second differences)."""
    p = {t: _phi(mech, c, mech.integrate(q, t * v + 0.5 * t * t * a)) for t in
         (-2 * H, -H, 0.0, H, 2 * H)}  # fmt: skip
    d1 = (8 * (p[H] - p[-H]) - (p[2 * H] - p[-2 * H])) / (12 * H)
    d2 = (16 * (p[H] + p[-H]) - (p[2 * H] + p[-2 * H]) - 30 * p[0.0]) / (12 * H * H)
    return d1, d2


def _rows(mech, c, q, v, a):
    snap = mech.compute(q, v, c.frames, dynamics=False)
    return float(c.jacobian(snap)[0] @ v), float(c.jacobian(snap)[0] @ a + c.drift(snap)[0])


def test_rows_are_phis_derivatives_along_motions(panda):
    worst = 0.0
    for mech, c, q, v, a in _cases(panda):
        d1, d2 = _along(mech, c, q, v, a)
        rate, accel = _rows(mech, c, q, v, a)
        assert abs(rate - d1) < 1e-8, (rate, d1)  # m/s
        assert abs(accel - d2) < 1e-5, (accel, d2)  # m/s^2 (second differences)
        worst = max(worst, abs(accel - d2))
    print(f"A a + drift vs Phi'': {worst:.1e} m/s^2")


def test_a_drift_without_the_coriolis_term_is_caught(panda):
    """The witness can fail: the drift without -2 n . (w2 x u) (body 2's turning) misses
    Phi'' by far more than the tolerance at these states."""
    missed = 0
    for mech, c, q, v, a in _cases(panda):
        snap = mech.compute(q, v, c.frames, dynamics=False)
        f1, f2 = snap.frame(c.frame1), snap.frame(c.frame2)
        p1 = f1.point(c.point1)
        u = c._relative_jacobian(f1, f2, p1) @ v
        coriolis = -2.0 * (f2.R @ c.n) @ np.cross(f2.J[3:] @ v, u)
        _, d2 = _along(mech, c, q, v, a)
        _, accel = _rows(mech, c, q, v, a)
        missed += abs(accel - coriolis - d2) > 1e-3
    assert missed >= 15


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
def test_core_rows_agree_with_numpy(panda):
    worst = 0.0
    for mech, c, q, v, _ in _cases(panda):
        cset = ConstraintSet(mech, [c])
        _, _, A, drift, phi = core.build(cset).evaluate(q, v)
        ev = cset.evaluate(mech.compute(q, v, cset.frames, dynamics=False))
        for x, r in ((A, ev.A), (drift, ev.drift), (phi, ev.phi)):
            worst = max(worst, float(np.abs(np.asarray(x) - r).max()))
    assert worst < 1e-12
    print(f"core vs numpy: {worst:.1e}")


def test_bad_input_is_refused():
    with pytest.raises(ModelError, match="needs frame2"):
        PointOnBodyPlane("tip", None, (0, 0, 1))
    with pytest.raises(ModelError, match="same frame"):
        PointOnBodyPlane("tip", "tip", (0, 0, 1))
    with pytest.raises(ModelError, match="non-zero"):
        PointOnBodyPlane("tip", "corner", (0, 0, 0))
    with pytest.raises(ModelError, match="3 finite numbers"):
        PointOnBodyPlane("tip", "corner", (0, 0, np.nan))


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
def test_the_core_refuses_a_spec_without_its_plane_frame():
    mech = _floating_ball()
    s = core.build(ConstraintSet(mech, []))
    spec = core._core.Spec()
    spec.kind = core._core.Kind.PointOnBodyPlane
    spec.s1 = s.add_frame("tip")
    with pytest.raises(ValueError, match="spec.s2"):
        s.add(spec)  # s2 -1: the world's plane is PointOnPlane
    spec.s2 = s.add_frame("corner")
    spec.n = np.array([0.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="unit normal"):
        s.add(spec)
    spec.n = np.array([0.0, 0.0, 1.0])
    s.add(spec)
