"""Singularity tests that do not depend on round-off.

Each check is exercised at many postures, so it passes or fails the same way
on any BLAS kernel: a matrix that is singular in exact arithmetic must be
refused whether its computed smallest singular value is 0.0 or 5e-17, and a
regular one must be accepted.
"""

import numpy as np
import pytest

from pfaff import dynamics as D
from pfaff.constraints import ConstraintSet, PointOnCircle, PointOnPlane
from pfaff.control import FrameTask, JointTask, ProjectedController, TaskError
from pfaff.control.laws import task_acceleration, task_regularity
from pfaff.geometry.morse import LeafHessian, leaf_hessian
from pfaff.manipulation.objects import ObjectConstraints, ScalarFunction, planar_contact_surface
from pfaff.mechanism import SliderCrankChain, planar_particle

# postures on the slider-crank branch q2 = -2 q1, away from the singular q1 = +-pi/2
BRANCH = [q for q in np.linspace(-3.0, 3.0, 241) if abs(np.cos(q)) > 1e-3]


@pytest.fixture(scope="module")
def slider_crank():
    mech = SliderCrankChain(1.0, 1.0, 9.81)
    cset = ConstraintSet(mech, [PointOnPlane("slider", (0.0, 1.0, 0.0))])
    return mech, cset


def _zero_ref(t):
    return np.zeros(1), np.zeros(1), np.zeros(1)


def test_slider_y_task_refused_at_every_posture(slider_crank):
    """slider_y is what the constraint fixes: J_theta N = 0 in exact arithmetic (1x1)."""
    mech, cset = slider_crank
    bad = ProjectedController(cset, FrameTask("slider", "y"), _zero_ref, actuated=[0])
    good = ProjectedController(cset, JointTask([0]), _zero_ref, actuated=[0])
    for q1 in BRANCH:
        q = np.array([q1, -2 * q1])
        with pytest.raises(TaskError, match="do not parametrise N\\(A\\)"):
            bad.check(q)
        good.check(q)  # the crank angle parametrises N(A) everywhere on the branch


def test_task_acceleration_flags_an_irregular_task(slider_crank):
    """task_acceleration reports ok=False for slider_y and True for q1, at every posture."""
    mech, cset = slider_crank
    rng = np.random.default_rng(3)
    for q1 in BRANCH[::4]:
        q, v = np.array([q1, -2 * q1]), rng.normal(size=2)
        snap = mech.compute(q, v, ["slider"])
        ev = cset.evaluate(snap)
        proj = D.projection(ev.A, ev.drift, with_null=True)
        for task, regular in ((FrameTask("slider", "y"), False), (JointTask([0]), True)):
            task.bind(mech)
            J = task.jacobian(snap)
            u, ok = task_acceleration(J, task.drift(snap), proj.N, proj.Cv, np.array([1.0]))
            assert ok is regular
            assert np.abs(ev.A @ u + ev.drift).max() <= 1e-9  # admissible either way
            s, tol = task_regularity(J, proj.N)
            assert bool(s[-1] > tol) is regular


def test_task_regularity_of_a_1x1_product_is_not_a_ratio():
    """For a 1x1 J N the ratio of its own singular values is always 1; the threshold
    is scaled by ||J_theta|| instead: 5e-17 and 0.0 are both singular."""
    N = np.array([[1.0], [0.0]])
    for tiny in (0.0, 5.2e-17, -5.2e-17, 1e-12):
        J = np.array([[tiny, 1.0]])
        s, tol = task_regularity(J, N)
        assert s.shape == (1,) and not s[-1] > tol
    s, tol = task_regularity(np.array([[0.3, 1.0]]), N)
    assert s[-1] > tol


def test_kkt_baseline_refuses_a_rank_deficient_A_on_any_kernel(slider_crank):
    """The KKT matrix is singular iff A loses rank: judged by rank_tol, so it is refused
    however LU rounds the pivot; near (but not within rank_tol of) the fold it solves."""
    mech, cset = slider_crank
    bound = D.DEFAULT_RANK_TOL / np.sqrt(5)  # sigma(A) = sqrt(5) l |c1| on the branch
    tau = np.array([0.3, -0.2])
    for frac in np.linspace(-0.95, 0.95, 21):
        q1 = np.arccos(frac * bound) if frac >= 0 else -np.arccos(-frac * bound)
        q = np.array([q1, -2 * q1])
        snap = mech.compute(q, np.array([0.1, -0.2]), ["slider"])
        ev = cset.evaluate(snap)
        with pytest.raises(np.linalg.LinAlgError, match="KKT matrix singular"):
            D.kkt_dynamics(snap.M, snap.h, tau, ev.A, ev.drift)
    for q1 in BRANCH[::10]:
        q = np.array([q1, -2 * q1])
        snap = mech.compute(q, np.array([0.1, -0.2]), ["slider"])
        ev = cset.evaluate(snap)
        a, lam, cond = D.kkt_dynamics(snap.M, snap.h, tau, ev.A, ev.drift)
        ref = D.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
        assert np.abs(a - ref.a).max() <= 1e-9 * max(1.0, cond * 1e-6)


def test_kkt_baseline_refuses_redundant_rows_at_many_states():
    """Two copies of one row: rank 1 < 2 rows at every state, never an arbitrary split."""
    mech = planar_particle(1.0)
    cset = ConstraintSet(
        mech, [PointOnCircle("particle", (0.0, 0.0), 0.7), PointOnCircle("particle", (0, 0), 0.7)]
    )
    for th in np.linspace(0, 2 * np.pi, 25):
        q = 0.7 * np.array([np.cos(th), np.sin(th)])
        snap = mech.compute(q, np.array([-np.sin(th), np.cos(th)]), cset.frames)
        ev = cset.evaluate(snap)
        with pytest.raises(np.linalg.LinAlgError, match="rank 1 < 2"):
            D.kkt_dynamics(snap.M, snap.h, np.zeros(2), ev.A, ev.drift)


def test_morse_test_uses_the_error_of_the_hessian():
    """Tiny positive eigenvalues that the finite differences cannot resolve are not a
    nondegenerate minimum, even when they are all of one size (ratio 1)."""
    Z = np.eye(2)
    for ev in ([1e-15, 1e-15], [2e-12, 3e-12], [1e-11]):
        k = len(ev)
        L = LeafHessian(Z[:, :k], np.zeros(k), np.diag(ev), np.array(ev), error=2e-11)
        assert not L.is_morse_minimum()
        assert L.is_morse_minimum(tol=1e-16)  # with a threshold below them, accepted
    L = LeafHessian(Z, np.zeros(2), np.diag([1e-3, 2e-3]), np.array([1e-3, 2e-3]), 2e-11)
    assert L.is_morse_minimum()


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e3])
def test_morse_test_on_a_circle_at_every_scale(scale):
    """V = scale * y on a circle: the bottom is a Morse minimum with Hessian scale/rho
    (1x1), a constant potential is not, at any scale of V."""
    mech = planar_particle(1.0)
    rho = 0.7
    cset = ConstraintSet(mech, [PointOnCircle("particle", (0.0, 0.0), rho)])
    q = np.array([0.0, -rho])
    L = leaf_hessian(lambda x: scale * float(x[1]), cset, q)
    assert abs(L.hessian[0, 0] - scale / rho) <= 1e-5 * scale
    assert L.error <= 1e-5 * scale and L.is_morse_minimum()
    C = leaf_hessian(lambda x: scale * 1.0, cset, q)
    assert not C.is_morse_minimum()


def test_object_frame_refuses_dependent_functions_in_any_size():
    """E = [E_P; E_F] with a vanishing or dependent row is refused, 1x1 included
    (the condition number of a nonzero 1x1 E is 1 however small it is)."""
    zero = ScalarFunction(lambda r: 0.0, lambda r: np.zeros(1), None)
    tiny = ScalarFunction(lambda r: 1e-20 * r[0], lambda r: np.array([1e-20]), None)
    small = ScalarFunction(lambda r: 1e-6 * r[0], lambda r: np.array([1e-6]), None)
    unit = ScalarFunction(lambda r: float(r[0]), lambda r: np.array([1.0]), None)
    for fn, ok in ((zero, False), (tiny, False), (small, True), (unit, True)):
        obj = ObjectConstraints([fn], [], n_r=1)
        for r in np.linspace(-1, 1, 9):
            if ok:
                obj.E(np.array([r]))
            else:
                with pytest.raises(ValueError, match="not independent"):
                    obj.E(np.array([r]))
    sx = ScalarFunction(lambda r: r[0], lambda r: np.array([1.0, 0.0, 0.0]), None)
    st = ScalarFunction(lambda r: r[2], lambda r: np.array([0.0, 0.0, 1.0]), None)
    wall = planar_contact_surface((0.0, 0.1), (0.0, 1.0), 0.0)
    # the same contact twice: dependent rows at every pose
    twice = ObjectConstraints([wall, wall], [sx], n_r=3)
    good = ObjectConstraints([wall], [sx, st], n_r=3)
    for th in np.linspace(-0.5, 0.5, 11):
        r = np.array([0.0, 0.0, th])
        with pytest.raises(ValueError, match="not independent"):
            twice.E(r)
        assert good.E(r).shape == (3, 3)
