"""Potential restricted to a constraint leaf (pfaff.geometry.morse) against closed forms."""

import numpy as np
import pytest

from pfaff.constraints import ConstraintSet, PointOnCircle
from pfaff.geometry.morse import leaf_flow, leaf_hessian
from pfaff.mechanism import planar_particle

RHO = 0.7


@pytest.fixture(scope="module")
def circle():
    mech = planar_particle(1.0)
    return ConstraintSet(mech, [PointOnCircle("particle", (0.0, 0.0), RHO)])


def _height(q):
    return float(q[1])


def test_leaf_flow_stays_on_the_circle(circle):
    """The flow leaves the circle only by the RK4 error, O(n_steps^-4)."""
    q = RHO * np.array([np.cos(0.3), np.sin(0.3)])
    d = np.array([-0.4, 0.2])
    err = [abs(np.linalg.norm(leaf_flow(circle, q, d, n_steps=n)) - RHO) for n in (8, 16)]
    assert err[1] < 1e-8 and 12 < err[0] / err[1] < 20
    assert np.linalg.norm(leaf_flow(circle, q, d) - q) > 0.1  # it moved


@pytest.mark.parametrize("theta", [-np.pi / 2, -1.0, 0.4])
def test_height_on_a_circle(circle, theta):
    """V = y on the circle: V(s) = rho sin(s / rho), s the arclength from theta = 0.

    Leaf gradient dV/ds = cos(theta) (up to the sign of the basis); at the bottom
    (a critical point) the Hessian is d2V/ds2 = -sin(theta) / rho = 1 / rho.
    """
    q = RHO * np.array([np.cos(theta), np.sin(theta)])
    L = leaf_hessian(_height, circle, q, h=1e-3)
    assert L.Z.shape == (2, 1)
    assert abs(abs(L.gradient[0]) - abs(np.cos(theta))) < 1e-6  # O(h^2) truncation
    if theta == -np.pi / 2:
        errs = [abs(leaf_hessian(_height, circle, q, h=h).hessian[0, 0] - 1 / RHO)
                for h in (1e-3, 5e-4)]  # fmt: skip
        assert errs[0] < 2e-6 and errs[1] < errs[0] / 3  # converges as h^2
        assert L.is_morse_minimum()


def test_degenerate_minimum_is_not_morse(circle):
    """A constant potential: zero Hessian, not a nondegenerate minimum."""
    L = leaf_hessian(lambda q: 1.0, circle, np.array([RHO, 0.0]))
    assert np.abs(L.hessian).max() < 1e-9 and not L.is_morse_minimum()


def test_step_must_be_positive(circle):
    with pytest.raises(ValueError, match="h must be > 0"):
        leaf_hessian(_height, circle, np.array([RHO, 0.0]), h=0.0)
