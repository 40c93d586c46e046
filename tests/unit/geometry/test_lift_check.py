"""The horizontal lift checked from its definition, independently of how it was built."""

import numpy as np
import pytest

from pfaff.geometry.lift_check import fk_jacobian_fd, lift_defect
from pfaff.geometry.submersion import horizontal_lift_matrix, task_jacobian
from pfaff.linalg import pinv
from pfaff.mechanism import load_robot, planar_chain
from pfaff.scenarios.redundant_chain import LINKS_3R, Q0_3R, Q0_PANDA


@pytest.fixture(scope="module", params=["3r", "panda"])
def chain(request):
    if request.param == "3r":
        mech = planar_chain(LINKS_3R, gravity=(0.0, 0.0, 0.0), name="arm")
        return mech, "arm_tip", [0, 1], Q0_3R
    return load_robot("panda"), "panda_hand_tcp", slice(None), Q0_PANDA


def _postures(q0, n=8, seed=0):
    rng = np.random.default_rng(seed)
    return [q0 + rng.uniform(-0.3, 0.3, q0.size) for _ in range(n)]


def test_finite_difference_jacobian_matches_pinocchio(chain):
    mech, frame, rows, q0 = chain
    for q in _postures(q0):
        J = mech.compute(q, None, [frame], extras=False).frames[frame].J
        assert np.abs(fk_jacobian_fd(mech.model, frame, q) - J).max() < 1e-9


def test_lift_defect_small_for_the_lift_and_large_for_wrong_ones(chain):
    mech, frame, rows, q0 = chain
    task = task_jacobian(mech, frame, rows)
    for q in _postures(q0):
        J, M, _ = task(q)
        G = horizontal_lift_matrix(J, M)
        d = lift_defect(mech.model, frame, rows, q, G)
        assert max(d.values()) < 1e-10
        # J^+ lifts (J J^+ = I) but is not M-orthogonal to the fiber
        d = lift_defect(mech.model, frame, rows, q, pinv(J))
        assert d["lifts"] < 1e-10 and d["horizontal"] > 0.05
        # horizontal, but lifts X to 1.001 X
        d = lift_defect(mech.model, frame, rows, q, 1.001 * G)
        assert d["lifts"] == pytest.approx(1e-3, rel=1e-6)
        # the lift of a wrong metric (one link 20% heavier in the diagonal)
        M2 = M + 0.2 * np.diag(np.diag(M)) * (np.arange(len(q)) == 1)
        d = lift_defect(mech.model, frame, rows, q, horizontal_lift_matrix(J, M2))
        assert d["lifts"] < 1e-10 and d["horizontal"] > 1e-3
