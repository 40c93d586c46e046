"""A mechanism given in closed form (its Python ``compute``) run by the compiled loop
(:mod:`pfaff.plant`): whole runs equal the NumPy engine's runs of the same mechanism to
round-off (the slider-crank through its singular configuration, the YZ two-arm plant
under its controller), the closed-form slider-crank on the core equals the Pinocchio
slider-crank on the core, and what a plant returns is checked at the boundary."""

from __future__ import annotations

import numpy as np
import pytest
from both_engines import simulate_both

from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.mechanism import FrameState, Mechanism, SliderCrankChain, Snapshot
from pfaff.scenarios import slider_crank
from pfaff.simulate import SimOptions, simulate

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

M_, L_, G_ = 1.0, 1.0, 9.81


def _singular_start():
    return slider_crank.singular_start(M_, L_, G_, 0.0, 6.0)


def test_closed_form_slider_crank_on_the_core_equals_numpy():
    """1000 steps of 1 ms of the closed-form slider-crank from its singular
    configuration (A = 0 at the first sample, sigma_min ~ 0): the core calling its
    compute equals the NumPy engine in q (1e-12 rad), v (1e-11 rad/s), lambda (1e-9
    relative: near A = 0 lambda's condition grows as 1 / sigma_min^2), energy and
    correction energy (1e-11 J); the run passes sigma_min < 1e-3 twice."""
    mech, cset = slider_crank.build(M_, L_, G_, "closed-form")
    assert isinstance(mech, SliderCrankChain) and core.unsupported_reason(cset) is None
    q0, v0 = _singular_start()
    a, b = simulate_both(cset, q0, v0, 1.0, SimOptions(dt=1e-3), strict=True)
    assert a["q"].shape == (1001, 2)
    assert np.abs(a["q"] - b["q"]).max() <= 1e-12
    assert np.abs(a["v"] - b["v"]).max() <= 1e-11
    assert np.abs(a["lambda"] - b["lambda"]).max() <= 1e-9 * np.abs(b["lambda"]).max()
    for key in ("energy", "correction_energy", "kinetic", "potential"):
        assert np.abs(a[key] - b[key]).max() <= 1e-11, key
    sigma = a["sigma_min"].ravel()
    assert sigma[0] < 1e-12 and sigma[1:].min() < 1e-2  # A = 0 at the start, near it later
    assert np.abs(a["q"][-1] - a["q"][0]).max() > 0.1  # it moved


def test_closed_form_slider_crank_on_the_core_equals_the_pinocchio_chain():
    """The same 1000 steps on the core: the closed form (Aghili eq. 68, called from the
    loop) and the Pinocchio chain (the same coordinates: crank angle, rod angle relative
    to the crank; M and h computed apart, equal to round-off) agree in q to 1e-12 rad, v
    to 1e-9 rad/s, energy to 1e-9 J, lambda to 1e-9 relative where sigma_min > 0.1 and
    to 1e-4 relative next to the singular configuration (lambda's condition there:
    1 / sigma_min^2 ~ 1e5)."""
    q0, v0 = _singular_start()
    arrays = []
    for model in ("closed-form", "pinocchio"):
        _, cset = slider_crank.build(M_, L_, G_, model)
        tr = simulate(cset, q0, v0, 1.0, SimOptions(dt=1e-3, engine="core"))
        arrays.append(tr.arrays())
    a, b = arrays
    assert np.abs(a["q"] - b["q"]).max() <= 1e-12
    assert np.abs(a["v"] - b["v"]).max() <= 1e-9
    assert np.abs(a["energy"] - b["energy"]).max() <= 1e-9
    dlam, scale = np.abs(a["lambda"] - b["lambda"]).ravel(), np.abs(b["lambda"]).max()
    far = a["sigma_min"].ravel() > 0.1
    assert far.sum() > 900 and dlam[far].max() <= 1e-9 * scale
    assert dlam.max() <= 1e-4 * scale


def test_yz_two_arm_plant_under_its_controller_on_the_core_equals_numpy():
    """yz-free on the YZ two-arm closed form (7 coordinates, 7 frames, the pins' rows)
    under the Yoshikawa-Zheng controller (its samples read M, h, A, the frames and g from
    the core's record): the core and NumPy agree in q to 1e-12 and in tau and lambda to
    1e-9 relative."""
    from pfaff.scenarios import get_scenario
    from pfaff.simulate.options import use_engine

    sc = get_scenario("yz-free")
    sets = sc.resolve({"model": "closed_form", "probe": False, "t_move": 0.4, "t_acc": 0.1})
    out = {}
    for engine in ("auto", "numpy"):
        with use_engine(engine):
            tr = sc.func(sets).trajectory
        out[engine] = (tr.engine, tr.arrays())
    (e1, a), (e2, b) = out["auto"], out["numpy"]
    assert (e1, e2) == ("core", "numpy")
    assert np.abs(a["q"] - b["q"]).max() <= 1e-12
    for key in ("tau", "lambda"):
        assert np.abs(a[key] - b[key]).max() <= 1e-9 * np.abs(b[key]).max(), key
    assert np.abs(a["q"][-1, 4] - a["q"][0, 4]) > 1e-3  # the object moved


class _Pendulum(Mechanism):
    """A point mass on a massless rod (length l) in the vertical plane, as a user writes
    one: q the angle from the downward vertical."""

    nq = nv = 1
    name = "user pendulum"

    def __init__(self, m=1.2, l=0.8, g=9.81):
        self.m, self.l, self.g = m, l, g

    @property
    def frame_names(self):
        return ["bob"]

    def compute(self, q, v=None, frames=(), dynamics=True, extras=True):
        v = np.zeros(1) if v is None else v
        m, l, g, th, w = self.m, self.l, self.g, float(q[0]), float(v[0])
        s, c = np.sin(th), np.cos(th)
        snap = Snapshot(q=q, v=v)
        for f in frames:
            R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            J = np.array([[l * c], [l * s], [0.0], [0.0], [0.0], [1.0]])
            drift = np.array([-l * s * w * w, l * c * w * w, 0.0, 0.0, 0.0, 0.0])
            snap.frames[f] = FrameState(np.array([l * s, -l * c, 0.0]), R, J, drift)
        if dynamics:
            snap.M = np.array([[m * l * l]])
            snap.g = np.array([m * g * l * s])
            snap.h = snap.g.copy()
            snap.kinetic = 0.5 * m * l * l * w * w
            snap.potential = -m * g * l * c
        return snap


def test_a_users_mechanism_runs_on_the_core_and_keeps_its_energy():
    """A user's Mechanism subclass with no constraint: engine auto takes the core, the
    run equals NumPy's (1e-12 rad) and the energy stays to 1e-8 J (RK4, 1 ms)."""
    mech = _Pendulum()
    cset = ConstraintSet(mech, [])
    a, b = simulate_both(cset, np.array([1.0]), np.zeros(1), 1.0, SimOptions(dt=1e-3), strict=True)
    assert np.abs(a["q"] - b["q"]).max() <= 1e-12
    assert np.abs(a["energy"] - a["energy"][0]).max() <= 1e-8
    assert np.abs(a["q"]).min() < 0.2  # it swung through the bottom


class _Bad(_Pendulum):
    """The pendulum with one quantity of its compute broken (``what``)."""

    def __init__(self, what):
        super().__init__()
        self.what = what

    def compute(self, q, v=None, frames=(), dynamics=True, extras=True):
        snap = super().compute(q, v, frames, dynamics, extras)
        if self.what == "M shape" and dynamics:
            snap.M = np.eye(2)
        elif self.what == "h NaN" and dynamics:
            snap.h = np.array([np.nan])
        elif self.what == "J NaN" and frames:
            snap.frames["bob"].J = np.full((6, 1), np.nan)
        return snap


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("M shape", r"mechanism 'user pendulum' \(_Bad.compute\): M has shape \(2, 2\), "
                    r"expected \(1, 1\)"),
        ("h NaN", r"mechanism 'user pendulum' \(_Bad.compute\): h has a non-finite entry nan"),
        ("J NaN", r"mechanism 'user pendulum' \(_Bad.compute\): frame 'bob' J has a non-finite"),
    ],
)  # fmt: skip
def test_a_bad_plant_is_named_at_the_boundary(what, message):
    """What a plant returns is checked where it enters the core: a wrong shape or a NaN
    is a ValueError naming the mechanism, its compute and the quantity."""
    mech = _Bad(what)
    cset = ConstraintSet(mech, [PointOnPlane("bob", (1.0, 0.0, 0.0), 0.5)])
    q0 = np.array([np.arcsin(0.5 / mech.l)])
    with pytest.raises(ValueError, match=message):
        simulate(cset, q0, np.zeros(1), 0.01, SimOptions(dt=1e-3, engine="core"))


def test_an_asymmetric_mass_matrix_is_refused():
    """M of a plant must be symmetric (the core factors its upper triangle)."""
    from pfaff.plant import plant_model, plant_name, plant_terms

    class Skew(SliderCrankChain):
        def compute(self, q, v=None, frames=(), dynamics=True, extras=True):
            snap = super().compute(q, v, frames, dynamics, extras)
            if dynamics:
                snap.M = snap.M + np.array([[0.0, 1e-3], [0.0, 0.0]])
            return snap

    mech = Skew()
    system = core._core.System(core.model_bytes(plant_model(mech)))
    system.set_plant(plant_terms(mech), plant_name(mech))
    with pytest.raises(ValueError, match=r"M is not symmetric: max \|M - M\^T\| = 0.001"):
        system.evaluate(np.array([0.3, 0.2]), np.zeros(2))
    good = core._core.System(core.model_bytes(plant_model(SliderCrankChain())))
    good.set_plant(plant_terms(SliderCrankChain()), "good")
    M, h = good.evaluate(np.array([0.3, 0.2]), np.array([0.5, -1.0]))[:2]
    snap = SliderCrankChain().compute(np.array([0.3, 0.2]), np.array([0.5, -1.0]))
    assert np.abs(M - snap.M).max() <= 1e-15 and np.abs(h - snap.h).max() <= 1e-15


def test_what_the_core_refuses_for_a_plant():
    """A closed-form mechanism on a Lie group (nq != nv) or with its own integrate is
    refused by name (engine auto falls back to NumPy)."""

    class Curved(_Pendulum):
        def integrate(self, q, dv):
            return q + 2.0 * dv

    class Circle(_Pendulum):
        nq = 2

    why = core.unsupported_reason(ConstraintSet(Curved(), []))
    assert "overrides integrate()" in why and "q + dv" in why
    why = core.unsupported_reason(ConstraintSet(Circle(), []))
    assert "nq = 2 != nv = 1" in why
    with pytest.raises(ValueError, match="nq = 2 != nv = 1"):
        core.differentiator(ConstraintSet(Circle(), []), 1e-9)


def test_a_pinocchio_mechanism_that_overrides_compute_runs_as_a_plant():
    """A PinocchioMechanism whose compute adds viscous joint friction to h is a plant: the
    core calls the override (its run differs from the chain's own by > 1e-3 rad) and
    equals the NumPy engine's run of it to 1e-12 rad over 500 steps through A = 0."""
    from pfaff.mechanism import PinocchioMechanism

    chain, cset = slider_crank.build(M_, L_, G_, "pinocchio")

    class Damped(PinocchioMechanism):
        def compute(self, q, v=None, frames=(), dynamics=True, extras=True):
            snap = super().compute(q, v, frames, dynamics, extras)
            if dynamics:
                snap.h = snap.h + 0.5 * snap.v  # N m s / rad
            return snap

    damped = ConstraintSet(Damped(chain.model, "damped chain"), cset.constraints)
    assert core.unsupported_reason(damped) is None
    q0, v0 = _singular_start()
    a, b = simulate_both(damped, q0, v0, 0.5, SimOptions(dt=1e-3), strict=True)
    assert np.abs(a["q"] - b["q"]).max() <= 1e-12
    own = simulate(cset, q0, v0, 0.5, SimOptions(dt=1e-3, engine="core")).arrays()
    assert np.abs(a["q"] - own["q"]).max() > 1e-3
