"""A frame name that repeats in a Pinocchio model (a URDF's joint and link of one name)
names its last frame on both engines (``pfaff.mechanism.base.frame_ids``, the core's
``ModelBuilder::new_frame``): the core runs such a system, the same run as NumPy's,
holding the frame NumPy holds."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from both_engines import simulate_both

from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import PinocchioMechanism
from pfaff.mechanism.base import frame_index
from pfaff.mechanism.builders import PlanarLink, planar_chain
from pfaff.simulate import SimOptions

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def _two_tips():
    """A planar two-link arm with two frames named "pen" on its last link (a body frame
    and an operational one: Pinocchio keeps one frame per name and type): the first at
    the link's origin, the last at its end (0.5 m along x)."""
    arm = planar_chain([PlanarLink(0.5, 1.0, com=0.25), PlanarLink(0.5, 1.0, com=0.25)])
    model = arm.model.copy()
    f = model.frames[model.getFrameId("arm_tip")]
    j = f.parentJoint
    model.addFrame(pin.Frame("pen", j, 0, pin.SE3.Identity(), pin.FrameType.BODY))
    model.addFrame(pin.Frame("pen", j, 0, f.placement, pin.FrameType.OP_FRAME))
    return PinocchioMechanism(model, "two pens")


def test_a_repeated_frame_name_is_its_last_frame_on_both_engines():
    """The pen (the last "pen") held on the line x = 0.6: the core runs it (no fallback)
    and its 300 steps equal NumPy's to 1e-12 rad; the held frame is the last one (its x
    stays at 0.6 m to 1e-9, the first "pen" frame's moves off it by > 0.05 m)."""
    mech = _two_tips()
    cset = ConstraintSet(mech, [PointOnPlane("pen", (1.0, 0.0, 0.0), 0.6)])
    assert core.unsupported_reason(cset) is None
    # the start: both links along one ray whose end is at x = 0.6 (|tip| = 1 m)
    q0 = np.array([np.arccos(0.6), 0.0])
    a, b = simulate_both(cset, q0, np.zeros(2), 0.3, SimOptions(dt=1e-3), strict=True)
    assert np.abs(a["q"] - b["q"]).max() <= 1e-12
    model, data = mech.model, mech.model.createData()
    ids = [i for i, f in enumerate(model.frames) if f.name == "pen"]
    # one rule for every lookup by name (the viewer's, IK's, the geometry's too)
    assert frame_index(model, "pen") == mech.frame_id("pen") == ids[-1] != ids[0]
    xs = []
    for q in a["q"][::30]:
        pin.framesForwardKinematics(model, data, q)
        xs.append([data.oMf[i].translation[0] for i in ids])
    xs = np.array(xs)
    assert np.abs(xs[:, 1] - 0.6).max() <= 1e-9
    assert np.abs(xs[:, 0] - 0.6).max() > 0.05
