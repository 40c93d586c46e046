"""The per-step record (pfaff.simulate.record) and the Controller protocol.

Independent witnesses: SciPy's pseudo-inverse and null space of A at the same state
(absolute threshold), the constrained least-squares torque of
:func:`pfaff.scenarios.witnesses.least_norm_torque` (SciPy), a KKT solve for the
force-sensor readings; counting wrappers for constraint evaluations and projections.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from pfaff import core
from pfaff import dynamics as dyn
from pfaff.constraints import ConstraintSet, PointOnPlane, PointsCoincide
from pfaff.scenarios import get_scenario
from pfaff.scenarios import panda_table as pt
from pfaff.scenarios.witnesses import least_norm_torque
from pfaff.simulate import SimOptions, project_state, simulate
from pfaff.simulate.record import Controller, SnapshotController, StepRecord, as_controller

TCP = "panda_hand_tcp"
TOL = 1e-9  # rank_tol
ENGINES = ["numpy"] + (["core"] if core.available() else [])


def _sets(panda):
    """Full-rank (1 and 3 rows) and rank-deficient stacks (a repeated plane; a point
    fixed plus a plane through it: 4 rows, rank 3)."""
    plane = PointOnPlane(TCP, (0.0, 0.0, 1.0), 0.45)
    return {
        "plane": ConstraintSet(panda, [plane]),
        "point": ConstraintSet(panda, [PointsCoincide(TCP, target=(0.4, 0.1, 0.5))]),
        "twice": ConstraintSet(panda, [plane, PointOnPlane(TCP, (0.0, 0.0, 2.0), 0.9)]),
        "over": ConstraintSet(
            panda, [PointsCoincide(TCP, target=(0.4, 0.1, 0.5)), PointOnPlane(TCP, (0, 0, 1), 0.5)]
        ),
    }


def _witness(A):
    """SciPy's A^+ (absolute threshold, as pfaff's) and its rank."""
    s = np.linalg.svd(A, compute_uv=False)
    r = int((s >= TOL).sum())
    return sla.pinv(A, atol=TOL, rtol=0.0), r


def _check_projection(rec: StepRecord, n: int):
    A = rec.constraints.A
    Ap, r = _witness(A)
    assert rec.rank == r
    scale = 1.0 + np.abs(Ap).max()
    np.testing.assert_allclose(rec.pinv, Ap, atol=1e-9 * scale)
    np.testing.assert_allclose(rec.P, np.eye(n) - Ap @ A, atol=1e-10)
    N = rec.N
    assert N.shape == (n, n - r)
    np.testing.assert_allclose(N.T @ N, np.eye(n - r), atol=1e-12)
    np.testing.assert_allclose(N @ N.T, rec.P, atol=1e-10)
    np.testing.assert_allclose(rec.Cv, -Ap @ rec.constraints.drift, atol=1e-9 * scale)


def test_record_projection_matches_scipy_at_many_states(panda):
    """StepRecord.at: P, A^+, N, C v against SciPy (rank-deficient stacks included)
    and against dynamics.projection."""
    rng = np.random.default_rng(0)
    ranks = set()
    for name, cset in _sets(panda).items():
        for _ in range(15):
            q = panda.neutral() + rng.uniform(-0.6, 0.6, 7)
            snap = panda.compute(q, rng.normal(size=7), cset.frames)
            rec = StepRecord.at(cset, snap, rank_tol=TOL)
            _check_projection(rec, 7)
            ref = dyn.projection(rec.A, rec.constraints.drift, TOL, with_null=True)
            np.testing.assert_allclose(rec.P, ref.P, atol=1e-12)
            ranks.add((name, rec.rank, rec.A.shape[0]))
    assert ("twice", 1, 2) in ranks and ("over", 3, 4) in ranks  # rank-deficient seen


class _Probe:
    """A protocol controller that keeps every record it gets (and returns zero)."""

    frames = (TCP,)

    def __init__(self, needs_sensors):
        self.needs_sensors = needs_sensors
        self.signals: dict = {}
        self.records: list[tuple[StepRecord, np.ndarray]] = []

    def __call__(self, t, rec):
        # copy what the record holds now (a core record's arrays are its own copies)
        self.records.append((rec, rec.pinv.copy()))
        return 0.5 * np.sin(3.0 * t + np.arange(7.0))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["plane", "over"])
def test_engine_records_agree_with_an_independent_evaluation(panda, engine, name):
    """Each engine's record at a sample: the state's A, drift, Phi, M, h equal a fresh
    evaluation at the recorded (q, v); P, A^+, N equal SciPy's; the sensors equal the
    KKT / projection solve with the torque held until then."""
    cset = _sets(panda)[name]
    q0, v0 = project_state(cset, panda.neutral() + 0.2, np.full(7, 0.3))
    probe = _Probe(needs_sensors=True)
    opt = SimOptions(dt=2e-3, control_dt=6e-3, engine=engine, progress=False)
    tr = simulate(cset, q0, v0, 0.09, opt, controller=probe)
    assert tr.engine == engine
    assert len(probe.records) == 16
    held = np.zeros(7)
    for rec, pinv in probe.records:
        snap = panda.compute(rec.q, rec.v, cset.frames)
        ev = cset.evaluate(snap)
        np.testing.assert_allclose(rec.A, ev.A, atol=1e-12)
        np.testing.assert_allclose(rec.constraints.drift, ev.drift, atol=1e-10)
        np.testing.assert_allclose(rec.constraints.phi, ev.phi, atol=1e-13)
        np.testing.assert_allclose(rec.snap.M, snap.M, atol=1e-12)
        np.testing.assert_allclose(rec.snap.h, snap.h, atol=1e-10)
        np.testing.assert_allclose(rec.snap.g, snap.g, atol=1e-10)
        np.testing.assert_allclose(rec.snap.frame(TCP).p, snap.frame(TCP).p, atol=1e-14)
        _check_projection(rec, 7)
        np.testing.assert_allclose(pinv, rec.pinv, atol=0)
        sol = dyn.solve_constrained(snap.M, snap.h, held, ev.A, ev.drift, TOL)
        np.testing.assert_allclose(rec.sensors["F"], sol.F, atol=1e-8)
        np.testing.assert_allclose(rec.sensors["lambda"], sol.lam, atol=1e-8)
        held = 0.5 * np.sin(3.0 * rec.t + np.arange(7.0))


@pytest.mark.parametrize("engine", ENGINES)
def test_needs_sensors_false_gets_no_sensors(panda, engine):
    cset = _sets(panda)["plane"]
    q0, v0 = project_state(cset, panda.neutral() + 0.2, np.zeros(7))
    probe = _Probe(needs_sensors=False)
    opt = SimOptions(dt=2e-3, engine=engine, progress=False)
    simulate(cset, q0, v0, 0.02, opt, controller=probe)
    assert len(probe.records) == 11
    assert all(rec.sensors is None for rec, _ in probe.records)


@pytest.mark.parametrize("engine", ENGINES)
def test_plain_callable_still_works(panda, engine):
    """f(t, snap) gets a Snapshot with its declared frames; its torque is applied
    (same run as the protocol controller returning the same torque)."""
    cset = _sets(panda)["plane"]
    q0, v0 = project_state(cset, panda.neutral() + 0.2, np.zeros(7))
    seen = []

    def f(t, snap):
        seen.append(snap)
        return -2.0 * snap.v + 0.1 * snap.frame("panda_link4").p[0]

    f.frames = ("panda_link4",)

    class Same:
        frames, needs_sensors, signals = ("panda_link4",), False, {}

        def __call__(self, t, rec):
            return -2.0 * rec.v + 0.1 * rec.snap.frame("panda_link4").p[0]

    opt = SimOptions(dt=2e-3, engine=engine, progress=False)
    a = simulate(cset, q0, v0, 0.05, opt, controller=f).arrays()
    b = simulate(cset, q0, v0, 0.05, opt, controller=Same()).arrays()
    assert len(seen) == 26 and not isinstance(seen[0], StepRecord)
    np.testing.assert_array_equal(a["q"], b["q"])
    assert np.abs(a["tau"]).max() > 0.01


def test_adapter_and_protocol_checks():
    def f(t, snap):
        return snap.v

    c = as_controller(f)
    assert isinstance(c, SnapshotController) and isinstance(c, Controller)
    assert c.frames == () and c.needs_sensors is False and c.signals == {}
    f.frames, f.signals = ["a"], {"x": 1.0}
    c = as_controller(f)
    assert c.frames == ("a",) and c.signals == {"x": 1.0}
    assert as_controller(None) is None

    class Bad:
        frames, needs_sensors, signals = "tool", False, {}

        def __call__(self, t, rec):
            return rec.v

    with pytest.raises(TypeError, match="tuple of frame names"):
        as_controller(Bad())
    Bad.frames, Bad.needs_sensors = ("tool",), "yes"
    with pytest.raises(TypeError, match="needs_sensors must be True or False"):
        as_controller(Bad())
    with pytest.raises(TypeError, match="must be callable"):
        SnapshotController(3)


# -- controllers on the record --------------------------------------------------------


def _panda_table():
    p = get_scenario("panda-table").resolve({})
    return p, *pt.build(p)


@pytest.mark.parametrize("engine", ENGINES)
def test_projected_controller_torque_is_the_least_norm_torque(engine):
    """ProjectedController fed the simulator's record (both engines): its torque equals
    SciPy's constrained least-squares torque realising the commanded task acceleration
    and the commanded multipliers lambda_u (eq. 45 + 51-52), at every sample."""
    p, mech, cset, ctrl, q0 = _panda_table()
    task = ctrl.task
    got = []

    class Keep:
        frames, needs_sensors = ctrl.frames, ctrl.needs_sensors

        @property
        def signals(self):
            return ctrl.signals

        def __call__(self, t, rec):
            tau = ctrl(t, rec)
            got.append((t, rec.q.copy(), rec.v.copy(), tau, ctrl.signals["lambda_u"].copy()))
            return tau

    opt = SimOptions(dt=p["dt"], engine=engine, progress=False)
    simulate(cset, q0, np.zeros(7), 0.3, opt, controller=Keep())
    assert len(got) == 61
    for t, q, v, tau, lam_u in got:
        snap = mech.compute(q, v, ctrl.frames)
        ev = cset.evaluate(snap)
        J = task.jacobian(snap)
        th_d, dth_d, ddth_d = (np.asarray(x, dtype=float) for x in ctrl.reference(t))
        ref = ddth_d + ctrl.kd * (dth_d - J @ v) + ctrl.kp * task.error(th_d, snap)
        best, infeasible = least_norm_torque(
            snap.M, snap.h, ev.A, ev.drift, J, ref - task.drift(snap), lam_u
        )
        assert infeasible <= 1e-9
        np.testing.assert_allclose(tau, best, atol=1e-8 * (1.0 + np.abs(best).max()))


def test_controllers_evaluate_no_constraint_and_take_no_projection(monkeypatch):
    """Counting wrappers: a run with the hybrid ProjectedController makes exactly the
    constraint evaluations and projections of the same run with a controller that
    reads nothing (the simulator's own), on the NumPy engine."""
    p, mech, cset, ctrl, q0 = _panda_table()
    counts = {"evaluate": 0, "projection": 0}

    class Counting(ConstraintSet):
        def evaluate(self, snap):
            counts["evaluate"] += 1
            return super().evaluate(snap)

    real = dyn.projection

    def projection(*a, **k):
        counts["projection"] += 1
        return real(*a, **k)

    monkeypatch.setattr(dyn, "projection", projection)
    ccs = Counting(mech, cset.constraints)
    ctrl.cset = ccs
    opt = SimOptions(dt=p["dt"], engine="numpy", progress=False)
    tr = simulate(ccs, q0, np.zeros(7), 0.1, opt, controller=ctrl)
    with_ctrl = dict(counts)
    taus = tr.arrays()["tau"]
    counts.update(evaluate=0, projection=0)

    class Replay:
        frames, needs_sensors, signals = ctrl.frames, True, {}

        def __init__(self):
            self.k = 0

        def __call__(self, t, rec):
            self.k += 1
            return taus[self.k - 1]

    tr2 = simulate(ccs, q0, np.zeros(7), 0.1, opt, controller=Replay())
    np.testing.assert_array_equal(tr2.arrays()["q"], tr.arrays()["q"])
    assert with_ctrl == counts
    assert with_ctrl["evaluate"] > 0 and with_ctrl["projection"] > 0


def test_rolling_geometry_once_per_snapshot():
    """The rolling contact's geometry is derived once per snapshot (its two rows and
    the monitors share it, in ``snap.derived``) and is never another state's: the
    same q in a new snapshot computes it afresh, a different q gives a different one."""
    from pfaff.manipulation.contours import Ellipse
    from pfaff.manipulation.rolling import RollingContact, rolling_constraints
    from pfaff.systems import rolling_fingers as rg

    shape = Ellipse(0.026, 0.018)
    mech = rg.grasp_mechanism(0.03, 5e-6)
    contacts = [RollingContact(shape, "obj", f"f{i}_tip", r) for i, r in ((1, 0.01), (2, 0.012))]
    cset = ConstraintSet(mech, rolling_constraints(contacts[0]) + rolling_constraints(contacts[1]))
    q0 = rg.initial_configuration(
        shape, (0.006, 0.085, 1.75), (0.01, 0.012), (0, 0), (np.pi, 0), np.pi - 0.5
    )
    calls = []
    real = shape.foot_point

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    shape.foot_point = counted
    rng = np.random.default_rng(5)
    for _ in range(10):
        q = q0 + 0.01 * rng.normal(size=8)
        snap = mech.compute(q, rng.normal(size=8), cset.frames)
        calls.clear()
        ev = cset.evaluate(snap)
        for c in contacts:
            c.slip_velocity(snap), c.rolling_integral(snap)
        assert len(calls) == 2  # one geometry per contact and state
        fresh = mech.compute(q, snap.v, cset.frames)  # same state, new snapshot: recomputed
        calls.clear()
        np.testing.assert_allclose(cset.evaluate(fresh).A, ev.A, atol=1e-14)
        assert len(calls) == 2
        moved = mech.compute(q + 1e-3, snap.v, cset.frames)
        assert contacts[0].geometry(moved).d != contacts[0].geometry(snap).d
