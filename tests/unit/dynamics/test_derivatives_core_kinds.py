"""The compiled derivative rows of the orientation, hinge and circle kinds (derive_K
in src/cpp/kinds/*.cpp): Weld, FrameAligned, QuatAligned, RevoluteClosure and
PointOnCircle, each at 10 random states (off their manifolds too, where the rotation
error is not the identity) against the NumPy reference (pfaff.derivatives, which takes
these kinds by central differences of their own A and drift: 1e-6 relative) and against
central differences of the core's own dynamics."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff import core
from pfaff.constraints import (
    BallAngle,
    ConstraintSet,
    CoordinateLock,
    FrameAligned,
    PointOnBodyPlane,
    PointOnCircle,
    PointOnPlane,
    QuatAligned,
    RevoluteClosure,
    Weld,
)
from pfaff.constraints.coupling import Scaled
from pfaff.contact.rim import rim_constraints
from pfaff.derivatives import forward_dynamics_derivatives
from tests.unit.dynamics.test_derivatives import _fd, _floating_ball, _tangent, _two_link
from tests.unit.dynamics.test_derivatives_core import FIELDS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

TOL_NUMPY = 1e-6  # the reference's rows are central differences (step 1e-5)
TOL_FD = 1e-6  # Richardson-extrapolated central differences of the core's dynamics


def _rel(x, ref) -> float:
    return float(np.abs(x - ref).max(initial=0.0) / max(1.0, np.abs(ref).max(initial=0.0)))


def _rot(rng) -> np.ndarray:
    return pin.exp3(rng.standard_normal(3))


def _agree(make, mech, n=10, seed=0):
    """``make(rng, q)`` -> constraints at a random q: the core's derivatives against the
    NumPy reference and against central differences of the core's own a and lambda.
    Returns the largest relative errors (vs NumPy, vs differences)."""
    rng = np.random.default_rng(seed)
    nv = mech.nv
    worst_np = worst_fd = 0.0
    for _ in range(n):
        q = rng.uniform(-1.0, 1.0, mech.nq)  # the test's own generator, not Pinocchio's
        if mech.nq > nv:  # free flyer / ball: a proper random element
            q = pin.integrate(mech.model, pin.neutral(mech.model), rng.standard_normal(nv))
        cset = ConstraintSet(mech, make(rng, q))
        A = cset.evaluate(mech.compute(q, None, cset.frames, dynamics=False)).A
        v, tau = _tangent(A, rng.standard_normal(nv)), rng.standard_normal(nv)
        v += 0.3 * rng.standard_normal(nv)  # off the velocity manifold too
        compiled = core.differentiator(cset, 1e-9)
        c, d = compiled(q, v, tau), forward_dynamics_derivatives(cset, q, v, tau)
        assert c["rank"] == d.rank == A.shape[0]
        err_np, err_fd = _agree_at(compiled, c, d, mech, q, v, tau, TOL_NUMPY, TOL_FD)
        worst_np, worst_fd = max(worst_np, err_np), max(worst_fd, err_fd)
    return worst_np, worst_fd


def _agree_at(compiled, c, d, mech, q, v, tau, tol_numpy, tol_fd) -> tuple[float, float]:
    """At one state: the core's derivatives ``c`` against the NumPy reference's ``d``
    and against central differences of the core's own a and lambda, each relative error
    within its tolerance; returns the largest (vs NumPy, vs differences)."""
    # the references' differences lose digits as 1 / sigma_min of A (7 rows on 7
    # coordinates near a singular set): their tolerance scales with A's condition
    cond = max(1.0, d.sigma[0] / d.sigma[d.rank - 1]) if d.rank else 1.0
    worst_np = worst_fd = 0.0
    for name in FIELDS:
        err = _rel(c[name], getattr(d, name)) / cond
        assert err <= tol_numpy, (name, err, cond)
        worst_np = max(worst_np, err)
    for field, ref in _differences(compiled, mech, q, v, tau).items():
        err = _rel(c[field], ref) / cond
        assert err <= tol_fd, (field, err, cond)
        worst_fd = max(worst_fd, err)
    return worst_np, worst_fd


def _differences(compiled, mech, q, v, tau) -> dict:
    """da_dq, dlam_dq, da_dv, dlam_dv by central differences of the core's a, lambda."""
    nv = mech.nv

    def out(qq, vv):
        r = compiled(qq, vv, tau)
        return np.concatenate([r["a"], r["lam"]])

    Jq = _fd(lambda x: out(x, v), q, mech.integrate, nv, 1e-5)
    Jv = _fd(lambda x: out(q, x), v, lambda x, dx: x + dx, nv, 1e-3)
    return {"da_dq": Jq[:nv], "dlam_dq": Jq[nv:], "da_dv": Jv[:nv], "dlam_dv": Jv[nv:]}


def _weld_panda(rng, q):
    return [Weld("panda_hand_tcp", "panda_link3", offset=_rot(rng))]


def _weld_world(rng, q):
    # frame 2 on the world (its joint the universe): fixed
    return [Weld("panda_hand_tcp", "panda_link0", offset=_rot(rng))]


def _weld_floating(rng, q):
    return [Weld("tip", "corner", offset=_rot(rng))]


def _aligned_world_two_rows(rng, q):
    return [FrameAligned("panda_hand_tcp", target=_rot(rng), directions=((1, 0, 0), (0, 1, 1)))]


def _aligned_frames(rng, q):
    return [FrameAligned("panda_hand_tcp", "panda_link4", offset=_rot(rng))]


def _aligned_floating_scaled(rng, q):
    inner = FrameAligned("tip", "corner", offset=_rot(rng))
    return [Scaled(inner, (2.0, -0.5, 1.5))]


def _quat_world(rng, q):
    return [QuatAligned("panda_hand_tcp", offset=_rot(rng))]


def _quat_frames(rng, q):
    return [QuatAligned("panda_hand_tcp", "panda_link2", offset=_rot(rng))]


def _quat_floating(rng, q):
    return [QuatAligned("tip", "corner", offset=_rot(rng))]


def _revolute_panda(rng, q):
    return [
        RevoluteClosure(
            "panda_hand_tcp", "panda_link2", axis=rng.standard_normal(3),
            point_a=0.1 * rng.standard_normal(3), point_b=0.1 * rng.standard_normal(3),
            axis_b=rng.standard_normal(3),
        )
    ]  # fmt: skip


def _revolute_floating_scaled(rng, q):
    inner = RevoluteClosure("tip", "corner", axis=(0.3, -0.2, 1.0), point_b=(0.0, 0.1, 0.0))
    return [Scaled(inner, (1.0, 2.0, 0.5, 3.0, -1.0))]


def _circle_panda(rng, q):
    return [PointOnCircle("panda_hand_tcp", center=0.2 * rng.standard_normal(2), radius=0.4)]


def _circle_two_link(rng, q):
    inner = PointOnCircle("tip", center=(0.1, -0.2), radius=1.5, point=(0.05, 0.1, 0))
    return [Scaled(inner, (3.0,))]


def _body_plane_panda(rng, q):
    return [
        PointOnBodyPlane(
            "panda_hand_tcp", "panda_link3", rng.standard_normal(3), offset=0.1,
            point1=0.1 * rng.standard_normal(3), point2=0.2 * rng.standard_normal(3),
        )
    ]  # fmt: skip


def _body_plane_floating_scaled(rng, q):
    inner = PointOnBodyPlane(
        "tip", "corner", rng.standard_normal(3), point1=(0.02, -0.05, 0.1),
        point2=0.1 * rng.standard_normal(3),
    )  # fmt: skip
    return [Scaled(inner, (2.5,))]


def _everything_panda(rng, q):
    # rows of several kinds in one set: 1 + 2 + 3 + 1 = 7 rows on 7 coordinates
    return [
        PointOnCircle("panda_hand_tcp", radius=0.5),
        FrameAligned("panda_link6", target=_rot(rng), directions=((0, 0, 1), (1, 0, 0))),
        QuatAligned("panda_link7", "panda_link2", offset=_rot(rng)),
        PointOnPlane("panda_link4", (0.0, 1.0, 1.0)),
    ]


def _coordinate_lock_with_circle(rng, q):
    # a tendon's held length (constant row) beside a kind with derivative rows
    c = rng.uniform(-1.0, 1.0, 3)
    return [
        CoordinateLock(["panda_joint2", "panda_joint4", "panda_joint6"], c, 0.1),
        PointOnCircle("panda_hand_tcp", radius=0.5),
    ]


def _ball_angle_floating(rng, q):
    # the pendulum's ball angle (held off its value too: Phi != 0) beside a point row
    return [BallAngle("ball", 0.7), PointOnPlane("corner", (0.0, 0.3, 1.0), 0.1)]


def _rim_panda(rng, q):
    # a rim's normal row and its two rolling rows (the lever turns with the body)
    return rim_constraints(
        "panda_hand_tcp", 0.05 * rng.standard_normal(3), rng.standard_normal(3), 0.04,
        (0.0, 0.3, 1.0), 0.1,
    )  # fmt: skip


def _rim_floating(rng, q):
    return rim_constraints(
        "corner", (0.02, -0.05, 0.1), rng.standard_normal(3), 0.1, (0, 0, 1), 0.0
    )


CASES = {
    "weld": ("panda", _weld_panda),
    "weld-world-frame": ("panda", _weld_world),
    "weld-floating": ("floating", _weld_floating),
    "frame-aligned-world-two-rows": ("panda", _aligned_world_two_rows),
    "frame-aligned-frames": ("panda", _aligned_frames),
    "frame-aligned-floating-scaled": ("floating", _aligned_floating_scaled),
    "quat-aligned-world": ("panda", _quat_world),
    "quat-aligned-frames": ("panda", _quat_frames),
    "quat-aligned-floating": ("floating", _quat_floating),
    "revolute-closure": ("panda", _revolute_panda),
    "revolute-closure-floating-scaled": ("floating", _revolute_floating_scaled),
    "point-on-circle": ("panda", _circle_panda),
    "point-on-circle-2r-scaled": ("two_link", _circle_two_link),
    "point-on-body-plane": ("panda", _body_plane_panda),
    "point-on-body-plane-floating-scaled": ("floating", _body_plane_floating_scaled),
    "mixed": ("panda", _everything_panda),
    "coordinate-lock": ("panda", _coordinate_lock_with_circle),
    "ball-angle-floating": ("floating", _ball_angle_floating),
    "rim-panda": ("panda", _rim_panda),
    "rim-floating": ("floating", _rim_floating),
}


@pytest.mark.parametrize("case", list(CASES))
def test_kind_rows_agree_with_numpy_and_differences(case, panda):
    where, make = CASES[case]
    mech = {"panda": lambda: panda, "floating": _floating_ball, "two_link": _two_link}[where]()
    worst_np, worst_fd = _agree(make, mech)
    print(f"{case}: vs numpy {worst_np:.1e}, vs differences {worst_fd:.1e}")


def test_a_wrong_weld_offset_is_caught(panda):
    """The comparison can fail: the core's weld with an offset turned by 1e-3 rad gives
    derivatives that the reference of the true offset refuses."""
    rng = np.random.default_rng(3)
    pin.seed(3)  # the posture: the same in any test order (Pinocchio's generator is shared)
    q = pin.randomConfiguration(panda.model)
    R = _rot(rng)
    right = ConstraintSet(panda, [Weld("panda_hand_tcp", "panda_link3", offset=R)])
    wrong = ConstraintSet(
        panda, [Weld("panda_hand_tcp", "panda_link3", offset=R @ pin.exp3(np.array([1e-3, 0, 0])))]
    )
    A = right.evaluate(panda.compute(q, None, right.frames, dynamics=False)).A
    v, tau = _tangent(A, rng.standard_normal(panda.nv)), rng.standard_normal(panda.nv)
    d = forward_dynamics_derivatives(right, q, v, tau)
    good = core.differentiator(right, 1e-9)(q, v, tau)
    bad = core.differentiator(wrong, 1e-9)(q, v, tau)
    assert _rel(good["da_dq"], d.da_dq) <= TOL_NUMPY
    assert _rel(bad["da_dq"], d.da_dq) > 1e2 * TOL_NUMPY
