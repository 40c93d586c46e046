"""The core's start: the Pinocchio model crosses to C++ as its binary serialisation, and
the initial state is brought onto the constraint manifold by the core
(``System.project_state``) by the rule of :func:`pfaff.simulate.project_state` on NumPy.

Witnesses: the text serialisation (``Model.saveToString``) of the same model, and the
NumPy engine's projection of the same start."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import pfaff
from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.simulate import InitialStateError, SimOptions, project_state
from pfaff.simulate.core_engine import (
    attach_buffers,
    build,
    configure,
    project_start,
    record_shapes,
)

pytestmark = pytest.mark.skipif(not core.available(), reason="compiled core not built")

MODELS = Path(__file__).resolve().parents[1] / "models"
FILES = ["five_bar.xml", "two_five_bars.xml", "slider_crank.xml", "gripper.xml"]


def _run(system, cset, q, v, steps=200):
    """q and v after ``steps`` steps of 1 ms of a core system of ``cset`` from (q, v)."""
    opt = SimOptions(dt=1e-3, progress=False)
    configure(system, opt)
    attach_buffers(system, record_shapes(cset), steps + 1)
    system.set_state(q, v)
    system.set_tau(np.zeros(len(v)))
    st = system.run(0, steps, steps, 0.0)
    assert st.code == 0
    return system.q, system.v


@pytest.mark.parametrize("name", FILES)
def test_binary_and_text_model_transfer_run_alike(name):
    """A System built from Model.saveToBinary steps bit for bit as one from
    Model.saveToString (round-trip doubles): the same model crossed over; a body's mass
    changed by 1e-6 in the binary one shows (the comparison can fail)."""
    sys_ = pfaff.load(MODELS / name)
    model = sys_.mechanism.model
    heavier = pin.Model(model)
    heavier.inertias[1].mass *= 1 + 1e-6
    from_text = core._core.System(model.saveToString())
    from_binary = core._core.System(core.model_bytes(model))
    changed = core._core.System(core.model_bytes(heavier))
    assert (from_binary.nq, from_binary.nv) == (sys_.nq, sys_.nv)
    for s in (from_text, from_binary, changed):
        into = core.Build(s, sys_.mechanism)
        for c in sys_.cset.constraints:
            s.add(core.lowering.lower(c, "constraint", into))
    q, v = sys_.q0, sys_.v0 + 0.3
    q_t, v_t = _run(from_text, sys_.cset, q, v)
    q_b, v_b = _run(from_binary, sys_.cset, q, v)
    assert np.array_equal(q_t, q_b) and np.array_equal(v_t, v_b)
    _, v_c = _run(changed, sys_.cset, q, v)
    assert np.abs(v_c - v_b).max() > 1e-12


def test_bad_model_bytes_are_refused_with_the_format_named():
    sys_ = pfaff.load(MODELS / "five_bar.xml")
    data = core.model_bytes(sys_.mechanism.model)
    with pytest.raises(ValueError, match="binary serialisation of a pinocchio.Model"):
        core._core.System(data[: len(data) // 2])
    with pytest.raises(ValueError, match="text serialisation"):
        core._core.System("not a model")


@pytest.mark.parametrize("name", FILES)
def test_core_projection_of_a_start_matches_numpys(name):
    """Starts 0.05 rad off the manifold with random velocities, at 10 states per model:
    the core's projected q and v are NumPy's to 1e-11 (rad, rad/s), and both are on
    the manifold (Phi and A v at round-off)."""
    sys_ = pfaff.load(MODELS / name)
    cset, opt = sys_.cset, SimOptions(progress=False)
    system = build(cset)
    configure(system, opt)
    rng = np.random.default_rng(7)
    hol = cset.holonomic_rows
    for _ in range(10):
        q0 = sys_.integrate(sys_.q0, rng.uniform(-0.05, 0.05, sys_.nv))
        v0 = rng.uniform(-1.0, 1.0, sys_.nv)
        q_np, v_np = project_state(cset, q0, v0, opt)
        q_c, v_c = project_start(system, q0, v0, opt)
        assert np.abs(sys_.difference(q_np, q_c)).max() <= 1e-11
        assert np.abs(v_c - v_np).max() <= 1e-11
        ev = cset.evaluate(sys_.mechanism.compute(q_c, v_c, cset.frames))
        assert np.abs(ev.phi[hol] if len(ev.phi) == cset.dim else ev.phi).max() <= 1e-11
        assert np.abs(ev.A @ v_c).max() <= 1e-10
        assert np.array_equal(system.q, q_c)  # the system is left at the projected state
    # the witness can fail: an unprojected start is not the projected one
    assert np.abs(v0 - v_np).max() > 1e-6


def test_a_start_off_every_branch_is_refused_alike_on_both_engines():
    """A five-bar whose tip must also lie on a plane 100 m up, out of its reach: both
    engines raise InitialStateError with the same message (policy.start_message)."""
    sys_ = pfaff.load(MODELS / "five_bar.xml")
    far = PointOnPlane("left_tip", (0.0, 0.0, 1.0), 100.0)
    cset, opt = ConstraintSet(sys_.mechanism, [*sys_.cset.constraints, far]), SimOptions()
    system = build(cset)
    configure(system, opt)
    q0 = sys_.q0
    errors = []
    for project in (
        lambda: project_state(cset, q0, sys_.v0, opt),
        lambda: project_start(system, q0, sys_.v0, opt),
    ):
        with pytest.raises(InitialStateError, match="cannot be brought onto") as info:
            project()
        errors.append(str(info.value).split(":")[0])
    assert errors[0] == errors[1]
    with pytest.raises(ValueError, match="max_iter"):
        system.project_state(0)


@pytest.mark.parametrize("name", ["jdotv_weld_3d", "equality_site", "connect", "two_five_bars"])
def test_sigma_min_of_the_core_is_the_svd_of_its_a(name):
    """At 40 random states (positions 0.3 rad off the start, off the manifold too):
    the core's sigma_min (blocks bounded and skipped, 4-8 rows by the certified
    Rayleigh quotient, up to 3 in closed form) is the smallest singular value of the
    core's own A by LAPACK's SVD to 1e-10 relative, and not the next one up (the
    least block was found); a wrong A (scaled by 1.5) gives another value."""
    from mjcf_support import OWN, shared_model

    path = OWN / f"{name}.xml" if name == "two_five_bars" else shared_model(name)
    sys_ = pfaff.load(path)
    system = build(sys_.cset)
    configure(system, SimOptions(progress=False))
    rng = np.random.default_rng(11)
    for _ in range(40):
        q = sys_.integrate(sys_.q0, rng.uniform(-0.3, 0.3, sys_.nv))
        system.set_state(q, rng.uniform(-1.0, 1.0, sys_.nv))
        s = system.sample(False)
        A = np.array(s.A)
        svd = np.linalg.svd(A, compute_uv=False)
        ref = svd.min() if A.shape[0] <= A.shape[1] else 0.0
        assert abs(s.sigma_min - ref) <= 1e-10 * max(ref, 1e-300) + 1e-15
        above = svd[svd > ref * (1 + 1e-6)]
        if ref > 0.0 and above.size:
            assert abs(s.sigma_min - above.min()) > 1e-8 * ref
        wrong = np.linalg.svd(1.5 * A, compute_uv=False).min()
        assert ref == 0.0 or abs(wrong - s.sigma_min) > 1e-8 * ref
