"""The KKT method and the adaptive integrators on the compiled core against the NumPy
reference: whole runs, the KKT's refusal where A loses rank, SciPy's error control of
RK45 and DOP853, and the inputs each refuses."""

from __future__ import annotations

import re

import numpy as np
import pinocchio as pin
import pytest

import pfaff
from pfaff import core
from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintSet
from pfaff.mechanism import PinocchioMechanism
from pfaff.scenarios import slider_crank
from pfaff.scenarios.four_bar import closure_state, four_bar_set
from pfaff.simulate import SimOptions, SimulationError, choose_engine, simulate
from pfaff.simulate.policy import RunStatus, StatusCode, status_message
from pfaff.simulate.steppers import branch_check
from pfaff.simulate.tableaus import adaptive_pair
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")


def _rel(a, b) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))


def _both(cset, q, v, t_end, opt, **kw):
    """The run on the reference and on the core: ``{engine: trajectory}``."""
    out = {}
    for engine in ("numpy", "core"):
        o = SimOptions(**{**opt.__dict__, "engine": engine, "progress": False})
        out[engine] = simulate(cset, q, v, t_end, o, **kw)
        assert out[engine].engine == engine
    return out["numpy"], out["core"]


def _failure(cset, q, v, t_end, opt):
    """The message of the run's failure and its partial trajectory, per engine."""
    out = {}
    for engine in ("numpy", "core"):
        o = SimOptions(**{**opt.__dict__, "engine": engine, "progress": False})
        with pytest.raises(SimulationError) as err:
            simulate(cset, q, v, t_end, o)
        out[engine] = (str(err.value), err.value.trajectory)
    return out["numpy"], out["core"]


def _starts(sys, n):
    """``n`` states of the four-bar with random velocities (projected by the run)."""
    rng = np.random.default_rng(7)
    return [
        (sys.q0 + 0.3 * rng.standard_normal(sys.nq), rng.standard_normal(sys.nv)) for _ in range(n)
    ]


@pytest.fixture(scope="module")
def four_bar():
    return pfaff.load(MODELS / "four_bar.xml")


def test_kkt_runs_equal_the_reference_on_the_four_bar():
    """The KKT method's whole runs from several states of the four-bar (a closed chain
    of two rows, A regular; the crank turns over): q, v, a, lambda, energy equal the
    NumPy engine's to 1e-9 relative, and the largest KKT condition number met too; it
    bounds cond([M A^T; A 0]) at every recorded state (numpy.linalg.cond of the
    recorded M, A: the witness of the figure)."""
    cset = four_bar_set(1.0, 0.4, 1.1, 0.8)
    opt = SimOptions(dt=1e-3, method="kkt")
    rng = np.random.default_rng(3)
    for theta in (0.0, 1.0, 2.5, 4.0):
        q0, v0 = closure_state(theta, 1.0, 0.4, 1.1, 0.8), 4.0 * rng.standard_normal(3)
        tau = np.array([0.5, -0.2, 0.1])
        ref, got = _both(cset, q0, v0, 0.3, opt, tau=tau)
        a, b = ref.arrays(), got.arrays()
        for key in ("q", "v", "a", "lambda", "energy"):
            assert _rel(b[key], a[key]) <= 1e-9, key
        assert got.kkt_cond_max > 1.0
        assert abs(got.kkt_cond_max / ref.kkt_cond_max - 1.0) <= 1e-9
        mech = cset.mechanism
        conds = []
        for q, v in zip(b["q"], b["v"]):
            snap = mech.compute(q, v, cset.frames)
            conds.append(np.linalg.cond(dyn.kkt_matrix(snap.M, cset.evaluate(snap).A)))
        assert max(conds) <= got.kkt_cond_max * (1 + 1e-9)
        assert max(conds) >= 0.5 * got.kkt_cond_max
        # the projection method meets no KKT matrix
        assert simulate(cset, q0, v0, 0.01, SimOptions(dt=1e-3, progress=False)).kkt_cond_max == 0


def _numbers(message: str) -> list[float]:
    return [float(x) for x in re.findall(r"[-+]?\d+\.?\d*(?:e[-+]?\d+)?", message)]


def test_kkt_refuses_a_singular_configuration_as_the_reference():
    """The slider-crank at q1 = pi/2 (A = 0): both engines stop at step 0 with the
    reference's message (the condition number of the singular K aside: round-off's);
    on the way to it with rank_tol = 0.05 both stop at the same
    time and step, where sigma_min(A) <= rank_tol (the same words, the figures to
    1e-6). The projection method runs through both (the refusal is the KKT's)."""
    mech, cset = slider_crank.build(1.0, 0.5, 9.81, "pinocchio")
    q0, v0 = slider_crank.singular_start(1.0, 0.5, 9.81, 0.0, 8.0)
    (m_ref, t_ref), (m_core, t_core) = _failure(cset, q0, v0, 0.1, SimOptions(method="kkt"))
    # the condition number of a singular K is round-off's (1e31 or inf)
    assert m_core.split("; condition")[0] == m_ref.split("; condition")[0]
    assert "kkt dynamics failed at t = 0 s (step 0): KKT matrix singular: A has rank 0" in m_core
    assert t_core.kkt_cond_max > 1e12 and t_ref.kkt_cond_max > 1e12
    q1, v1 = np.array([0.3, -0.6]), np.array([8.0, -16.0])
    opt = SimOptions(dt=1e-3, method="kkt", rank_tol=0.05)
    (m_ref, t_ref), (m_core, t_core) = _failure(cset, q1, v1, 1.0, opt)
    assert re.sub(r"[-+\d.e]+", "#", m_core) == re.sub(r"[-+\d.e]+", "#", m_ref)
    np.testing.assert_allclose(_numbers(m_core), _numbers(m_ref), rtol=1e-6)
    assert t_core.steps == t_ref.steps > 10
    assert abs(t_core.kkt_cond_max / t_ref.kkt_cond_max - 1.0) <= 1e-6
    for engine in ("numpy", "core"):  # the projection passes the same states
        o = SimOptions(dt=1e-3, rank_tol=0.05, engine=engine, progress=False)
        assert simulate(cset, q1, v1, 1e-3 * (t_ref.steps + 5), o).steps == t_ref.steps + 5


@pytest.mark.parametrize("integrator", ["RK45", "DOP853"])
def test_adaptive_runs_equal_the_reference(four_bar, integrator):
    """SciPy's solve_ivp on the reference and the core's own embedded pair with its
    error control, over each interval dt, then the correction: the whole runs agree
    far below the tolerance (the same steps in the same order: 1e-11 relative, at
    rtol 1e-8), while a run at rtol 1e-5 differs from them by more than 1e-9 (the
    witness: the tolerance matters to this comparison)."""
    cset = four_bar.cset
    for q0, v0 in _starts(four_bar, 3):
        opt = SimOptions(dt=2e-2, integrator=integrator, rtol=1e-8, atol=1e-10)
        ref, got = _both(cset, q0, v0, 0.4, opt, tau=0.3 * np.ones(four_bar.nv))
        a, b = ref.arrays(), got.arrays()
        for key in ("q", "v", "a", "energy"):
            assert _rel(b[key], a[key]) <= 1e-11, key
        loose = SimOptions(**{**opt.__dict__, "rtol": 1e-5, "atol": 1e-7, "engine": "core"})
        c = simulate(cset, q0, v0, 0.4, loose, tau=0.3 * np.ones(four_bar.nv)).arrays()
        assert _rel(c["q"], a["q"]) > 1e-9


def test_adaptive_work_precision_on_the_core(four_bar):
    """The core's RK45 error against a DOP853 run at rtol 1e-13 falls with rtol as the
    reference's does (at each rtol within a factor 1.01 of the reference's error, and
    down by at least 100 from rtol 1e-4 to 1e-8)."""
    cset = four_bar.cset
    q0, v0 = _starts(four_bar, 1)[0]
    tight = SimOptions(dt=2e-2, integrator="DOP853", rtol=1e-13, atol=1e-14, progress=False)
    exact = simulate(cset, q0, v0, 0.4, tight).arrays()["q"]
    errors = []
    for rtol in (1e-4, 1e-6, 1e-8):
        opt = SimOptions(dt=2e-2, integrator="RK45", rtol=rtol, atol=1e-3 * rtol)
        ref, got = _both(cset, q0, v0, 0.4, opt)
        e_core = np.abs(got.arrays()["q"] - exact).max()
        e_ref = np.abs(ref.arrays()["q"] - exact).max()
        assert abs(e_core / e_ref - 1.0) <= 0.01, rtol
        errors.append(e_core)
    assert errors[0] > 100 * errors[2]


def test_the_engine_choice_runs_every_method_on_the_core(four_bar):
    """auto is the core for the KKT method and the explicit adaptive pairs; Radau is the
    reference's, asked for with engine='numpy' (auto and core refuse it, saying so)."""
    cset = four_bar.cset
    for opt in (SimOptions(method="kkt"), SimOptions(integrator="RK45")):
        assert choose_engine(cset, opt) == "core"
    assert choose_engine(cset, SimOptions(integrator="DOP853", engine="core")) == "core"
    assert choose_engine(cset, SimOptions(integrator="Radau", engine="numpy")) == "numpy"
    for engine in ("auto", "core"):
        with pytest.raises(ValueError, match="'Radau'.*NumPy reference engine only"):
            choose_engine(cset, SimOptions(integrator="Radau", engine=engine))
    opt = SimOptions(dt=2e-2, integrator="Radau", engine="numpy", progress=False)
    assert simulate(cset, four_bar.q0, four_bar.v0, 0.04, opt).engine == "numpy"


def test_wrong_inputs_are_refused(four_bar):
    """Tolerances, an unknown pair, the arrays of set_adaptive, a Lie-group model and an
    unknown method code: each refused with a message naming it."""
    with pytest.raises(ValueError, match="rtol must be > 0"):
        SimOptions(rtol=0.0).validate()
    with pytest.raises(ValueError, match="atol >= 0"):
        SimOptions(atol=-1.0).validate()
    with pytest.raises(ValueError, match="no explicit embedded pair 'Radau'"):
        adaptive_pair("Radau")
    s = core.build(four_bar.cset)
    p = adaptive_pair("RK45")
    with pytest.raises(ValueError, match=r"e has shape \(6,\), expected \(7,\)"):
        s.set_adaptive(p.a, p.b, p.c, p.e[:6], p.e3, p.order)
    with pytest.raises(ValueError, match="strictly lower triangular"):
        s.set_adaptive(p.a + np.eye(6), p.b, p.c, p.e, p.e3, p.order)
    with pytest.raises(ValueError, match=r"e3 has shape \(3,\)"):
        s.set_adaptive(p.a, p.b, p.c, p.e, np.ones(3), p.order)
    s.set_adaptive(p.a, p.b, p.c, p.e, p.e3, p.order)
    assert s.adaptive
    s.set_tableau(np.zeros((1, 1)), np.ones(1))
    assert not s.adaptive
    o = s.options
    o.method = 2
    s.options = o
    s.set_state(four_bar.q0, four_bar.v0)
    with pytest.raises(ValueError, match="options.method"):
        s.acceleration(four_bar.q0, four_bar.v0, np.zeros(four_bar.nv))
    model = pin.Model()  # a continuous joint: q = (cos, sin), nq = 2 != nv = 1
    j = model.addJoint(0, pin.JointModelRUBZ(), pin.SE3.Identity(), "wheel")
    model.appendBodyToJoint(j, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    wheel = ConstraintSet(PinocchioMechanism(model, "wheel"), [])
    with pytest.raises(ValueError, match="needs nq == nv"):
        core.build(wheel).set_adaptive(p.a, p.b, p.c, p.e, p.e3, p.order)


def test_the_adaptive_failures_are_worded_as_the_reference():
    """The core's statuses of an adaptive step (a branch switch, a step below the
    spacing of the numbers) give the reference's messages: branch_check's text, SciPy's."""
    v0, a0 = np.array([1.0, 0.0]), np.zeros(2)
    with pytest.raises(RuntimeError) as err:
        branch_check(v0, -v0, a0, a0, 1e-2)
    st = RunStatus(StatusCode.BRANCH_SWITCH, value=2.0, extra=1.0, t=0.05, step=10)
    assert status_message(None, st) == (
        f"projection dynamics failed in the step from t = 0.05 s (step 10): {err.value}"
    )
    st = RunStatus(StatusCode.STEP_TOO_SMALL, t=0.5, step=3)
    assert status_message(None, st, "kkt").endswith(
        "(step 3): Required step size is less than spacing between numbers."
    )
