"""A rollout whose output would not fit in memory is refused before it runs, naming K,
T, the estimate and how to ask for less."""

from __future__ import annotations

import numpy as np
import pytest

import pfaff
from pfaff.api.examples import five_bar
from pfaff.simulate import memory


def test_a_rollout_too_large_is_refused_naming_k_and_t(monkeypatch):
    """K = 1000 rollouts of T = 1e6 steps of the five-bar: about 90 GB of output, refused
    against 8 GiB with the counts named; a small one still runs."""
    sys_ = five_bar()
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * 2**30)
    taus = np.broadcast_to(np.zeros(sys_.nv), (1000, 10**6, sys_.nv))
    with pytest.raises(ValueError, match=r"K = 1000 rollouts of T = 1000000 steps.*GiB"):
        pfaff.rollout(sys_, None, None, taus, 1e-3)
    out = pfaff.rollout(sys_, None, None, np.zeros((2, 3, sys_.nv)), 1e-3)
    assert out["q"].shape == (2, 4, sys_.nv)
