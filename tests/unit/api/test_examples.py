"""pfaff.api.examples: the built-in five-bar is the model file the tests read."""

from __future__ import annotations

import numpy as np

import pfaff
from pfaff.api.examples import five_bar
from tests.where import MODELS


def test_five_bar_is_the_test_model():
    a, b = five_bar(), pfaff.load(MODELS / "five_bar.xml")
    assert (a.nq, a.nv, a.cset.dim, a.assembly.rank) == (b.nq, b.nv, b.cset.dim, 2)
    np.testing.assert_array_equal(a.q0, b.q0)
    q, v = b.q0, np.arange(1.0, 5.0)
    np.testing.assert_array_equal(a.forward_dynamics(q, v).a, b.forward_dynamics(q, v).a)
    assert "examples" in repr(a)
