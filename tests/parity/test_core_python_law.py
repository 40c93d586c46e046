"""Force elements written in Python, called from the compiled loop at every stage (as
MuJoCo's callbacks): the same runs as the NumPy engine's (whole trajectories, the
energy accounts), their derivatives on the core, and the boundary checks of what a law
returns."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.files.model import load_model
from pfaff.scenarios.parallelogram_chain import branch_state, parallelogram_chain
from pfaff.simulate import AppliedForce, ForceElement, PointSpring, SimOptions, simulate
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

ANCHOR = np.array([1.2, -0.9, 0.0])


def _drive(t, q, v):
    """A time-varying torque with velocity feedback [N m]."""
    return np.array([0.3 * np.sin(5.0 * t), 0.0, 0.0]) - 0.05 * v


def _elements():
    return [
        AppliedForce(_drive, name="drive"),
        PointSpring("c1_tip", law=lambda s: (8.0 * s + 20.0 * s**3, 4.0 * s**2 + 5.0 * s**4),
                    target=ANCHOR, name="cubic spring"),
    ]  # fmt: skip


def test_python_laws_run_on_the_core_as_on_numpy():
    """1 s at 1 ms of a parallelogram with a time-varying Python torque and a spring with
    a Python law: engine "core" (no fallback) and the NumPy engine agree on q, v,
    energy, force_work and force_potential to 1e-9; the energy balance holds on the
    core to 1e-9 J while the law does work (> 1e-2 J)."""
    cs = parallelogram_chain(1)
    q0, v0 = branch_state(1, -1.0, 1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = {
            e: simulate(cs, q0, v0, 1.0, SimOptions(dt=1e-3, engine=e), forces=_elements())
            for e in ("auto", "numpy")
        }
    assert runs["auto"].engine == "core" and runs["numpy"].engine == "numpy"
    a, b = runs["auto"].arrays(), runs["numpy"].arrays()
    for key in ("q", "v", "energy", "force_work", "force_potential"):
        assert np.abs(a[key] - b[key]).max() <= 1e-9, key
    bal = a["energy"] - a["energy"][0] - a["work"] - a["force_work"] - a["correction_energy"]
    assert np.abs(bal).max() <= 1e-9
    assert abs(a["force_work"][-1]) > 1e-2 and np.abs(a["force_potential"]).max() > 1e-2


def test_a_python_law_is_called_at_each_stage_time():
    """The core calls a law at t + c_i dt: with tau = sin(5 t) the core's one step equals
    the NumPy engine's to 1e-14, and a law that reads a wrong time (t + dt: the
    deliberate wrong input) differs by more than 1e-9."""
    cs = parallelogram_chain(1)
    q0, v0 = branch_state(1, -1.0, 1.5)

    def run(fn, engine):
        f = AppliedForce(fn)
        return simulate(cs, q0, v0, 0.01, SimOptions(dt=0.01, engine=engine), forces=[f])

    ok = run(lambda t, q, v: np.array([np.sin(5 * t), 0, 0]), "core").arrays()["v"][-1]
    ref = run(lambda t, q, v: np.array([np.sin(5 * t), 0, 0]), "numpy").arrays()["v"][-1]
    late = run(lambda t, q, v: np.array([np.sin(5 * (t + 0.01)), 0, 0]), "core")
    assert np.abs(ok - ref).max() <= 1e-14
    assert np.abs(late.arrays()["v"][-1] - ref).max() > 1e-9


def test_simulator_and_derivatives_with_a_python_law():
    """A Simulator of a four-bar with a Python drag runs on the core with no warning,
    equal to one on the NumPy engine; forward_dynamics_derivatives on the core (the
    law's partials by central differences) equal NumPy's to 1e-6."""
    model = load_model(MODELS / "four_bar.xml", contact=False)
    model.forces.append(AppliedForce(lambda t, q, v: -0.2 * v * np.abs(v), name="drag"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the file's assembly note
        sys_ = pfaff.System(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = pfaff.Simulator(sys_, dt=1e-3)
        d = sys_.forward_dynamics_derivatives(sys_.q0, np.ones(sys_.nv), None)
    ref = pfaff.Simulator(sys_, dt=1e-3, engine="numpy")
    for s in (sim, ref):
        s.reset(v=sys_.qvel_to_v(sys_.q0, np.array([2.0, 0.0, 0.0])))
        s.step(np.array([0.1, 0.0, 0.0]), n=200)
    assert sim.engine == "core" and not sim.warnings
    assert np.abs(sim.q - ref.q).max() <= 1e-9
    n = sys_.forward_dynamics_derivatives(sys_.q0, np.ones(sys_.nv), None, engine="numpy")
    assert d.engine == "core"
    for f in ("da_dq", "da_dv"):
        x, r = getattr(d, f), getattr(n, f)
        assert np.abs(x - r).max() <= 1e-6 * max(1.0, np.abs(r).max()), f


def test_what_a_law_returns_is_checked_at_the_boundary():
    """A user's element whose law returns the wrong size or a non-finite force, or
    raises, stops the run with a message naming the element and what is valid (or its
    own exception)."""
    cs = parallelogram_chain(1)
    q0, v0 = branch_state(1, -1.0, 1.5)
    opt = SimOptions(dt=1e-3, engine="core")

    class Mine(ForceElement):  # a user's element: no check of its own
        name = "mine"

        def __init__(self, fn):
            self.fn = fn

        def force(self, t, snap):
            return self.fn(t, snap.q, snap.v)

    def run(fn):
        return simulate(cs, q0, v0, 0.01, opt, forces=[Mine(fn)])

    with pytest.raises(ValueError, match=r"mine.*Q has shape \(2,\), expected \(3,\)"):
        run(lambda t, q, v: np.zeros(2))
    with pytest.raises(ValueError, match=r"mine.*Q has a non-finite entry"):
        run(lambda t, q, v: np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(ZeroDivisionError):
        run(lambda t, q, v: 1 / 0)


def test_a_python_law_in_threaded_rollouts():
    """Rollouts on threads (the GIL released by the loop, taken by the law): equal to
    one Simulator's steps."""
    model = load_model(MODELS / "four_bar.xml", contact=False)
    model.forces.append(AppliedForce(lambda t, q, v: -0.1 * v, name="drag"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys_ = pfaff.System(model)
    K, T = 4, 50
    taus = np.zeros((K, T, sys_.nv))
    taus[:, :, 0] = np.linspace(-0.2, 0.2, K)[:, None]
    q0s, v0s = np.tile(sys_.q0, (K, 1)), np.zeros((K, sys_.nv))
    out = pfaff.rollout(sys_, q0s, v0s, taus, 1e-3, threads=2)
    sim = pfaff.Simulator(sys_, dt=1e-3)
    sim.step(taus[-1, 0], n=T)
    assert np.abs(out["q"][-1, -1] - sim.q).max() <= 1e-12
