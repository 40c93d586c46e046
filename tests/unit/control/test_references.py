"""control.references: rates and accelerations against finite differences of the positions."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff.control.references import (
    circle_reference,
    constant_reference,
    cosine_swing,
    raised_cosine,
    ramped_phase,
)

REFS = {
    "raised_cosine": raised_cosine(0.3, 0.05, 0.7),
    "cosine_swing": cosine_swing(np.pi / 2, 0.9, 0.4),
    "circle": circle_reference((0.4, -0.1), 0.05, 0.5, 0.4, rest=(0.1, -0.2, 3.0, -0.5)),
    "circle_short_ramp": circle_reference((0.0, 0.0), 0.2, 2.0, 0.05),
    "constant": constant_reference([1.0, -2.0]),
}


@pytest.mark.parametrize("name", list(REFS))
def test_derivatives_by_finite_differences(name):
    ref, h = REFS[name], 1e-6
    for t in np.linspace(0.0013, 3.0, 97):
        x, dx, ddx = ref(t)
        xp, dxp, _ = ref(t + h)
        xm, dxm, _ = ref(t - h)
        assert x.shape == dx.shape == ddx.shape
        assert np.abs((xp - xm) / (2 * h) - dx).max() < 1e-6 * (1 + np.abs(dx).max())
        assert np.abs((dxp - dxm) / (2 * h) - ddx).max() < 1e-5 * (1 + np.abs(ddx).max())


@pytest.mark.parametrize("name", ["raised_cosine", "cosine_swing", "circle", "constant"])
def test_starts_at_rest(name):
    _, dx, ddx = REFS[name](0.0)
    assert np.abs(dx).max() == 0.0
    if name == "circle":
        assert np.abs(ddx).max() < 1e-15  # the smoothstep ramp: zero acceleration too


def test_ramped_phase_rate_and_continuity():
    phase = ramped_phase(0.5, 0.4)
    w0 = 2 * np.pi * 0.5
    a, b = phase(0.4 - 1e-12), phase(0.4)
    assert np.allclose(a, b, atol=1e-9)  # phase, rate and acceleration continuous
    assert phase(0.4)[1] == w0 and phase(2.0)[2] == 0.0
    assert abs(phase(1.4)[0] - phase(0.4)[0] - w0) < 1e-12


def test_circle_geometry():
    ref = circle_reference((0.4, -0.1), 0.05, 0.5, 0.4, rest=(7.0,))
    for t in np.linspace(0, 3, 31):
        x = ref(t)[0]
        assert abs(np.hypot(x[0] - 0.4, x[1] + 0.1) - 0.05) < 1e-15 and x[2] == 7.0
    assert np.allclose(ref(0.0)[0][:2], [0.35, -0.1], atol=1e-16)
