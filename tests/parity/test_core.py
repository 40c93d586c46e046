"""The compiled core ``pfaff._core`` against the NumPy engine (its reference).

Independent witnesses: the NumPy engine (pfaff.mechanism / constraints / dynamics,
itself tested against KKT, Pinocchio's ``constraintDynamics`` and closed forms) at
many random states of every built-in constraint type, redundant and rank-deficient
stacks included; whole simulations of both engines from the same state.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff import core
from pfaff import dynamics as dyn
from pfaff.constraints import (
    ConstraintSet,
    FunctionConstraint,
    LockedJoint,
    PointOnCircle,
    PointOnPlane,
    PointsCoincide,
)
from pfaff.constraints.coupling import JointCoupling, Scaled
from pfaff.constraints.quat_aligned import QuatAligned
from pfaff.constraints.weld import FrameAligned, Weld
from pfaff.mechanism import PinocchioMechanism, planar_particle
from pfaff.scenarios import slider_crank
from pfaff.simulate import SimOptions, SimulationError, simulate
from pfaff.simulate.integrator import choose_engine

pytestmark = pytest.mark.skipif(not core.available(), reason="pfaff._core is not built")

TCP = "panda_hand_tcp"
RZ = pin.utils.rotate("z", 0.3) @ pin.utils.rotate("x", -0.2)


@pytest.fixture(scope="module")
def wheel():
    """A pendulum on a continuous joint (q = (cos t, sin t)) carrying a slider."""

    def at(*x):
        return pin.SE3(np.eye(3), np.array(x, dtype=float))

    model = pin.Model()
    j = model.addJoint(0, pin.JointModelRUBZ(), pin.SE3.Identity(), "wheel")
    model.appendBodyToJoint(j, pin.Inertia.FromSphere(1.0, 0.1), at(0.5, 0, 0))
    k = model.addJoint(j, pin.JointModelPX(), at(0.3, 0, 0), "slide")
    model.appendBodyToJoint(k, pin.Inertia.FromSphere(0.5, 0.05), pin.SE3.Identity())
    model.addFrame(pin.Frame("tip", k, at(0.2, 0.1, 0), pin.FrameType.OP_FRAME))
    model.gravity = pin.Motion(np.array([0.0, -9.81, 0.0]), np.zeros(3))
    return PinocchioMechanism(model, "wheel")


def _panda_sets(panda):
    """Stacks on the Panda covering every built-in type, with offsets and directions."""
    plane = PointOnPlane("panda_link5", (0.1, 0.2, 1.0), 0.3, point=(0.01, 0.02, 0.03))
    return {
        "coincide+plane": [PointsCoincide(TCP, target=(0.4, 0.0, 0.5)), plane],
        "coincide-dirs": [
            PointsCoincide(
                "panda_link6",
                "panda_link3",
                point1=(0.0, 0.05, 0.1),
                point2=(0.02, 0.0, -0.1),
                directions=((1.0, 1.0, 0.0), (0.0, 0.3, 1.0)),
            ),
            LockedJoint("panda_joint2", 0.3),
        ],
        "aligned": [
            FrameAligned("panda_link7", None, target=RZ, directions=((1, 0, 0), (0, 1, 0))),
            FrameAligned("panda_link7", "panda_link4", offset=RZ),
        ],
        "weld": [Weld("panda_link7", "panda_link3", offset=RZ)],
        # redundant: the plane's row is a combination of the coincide rows
        "redundant": [
            PointsCoincide(TCP, target=(0.4, 0.0, 0.5)),
            PointOnPlane(TCP, (0.0, 0.0, 1.0), 0.5),
            LockedJoint("panda_joint4", -1.5),
        ],
        # rank deficient: the same blocks twice (rank 4 of 8 rows)
        "duplicated": [
            PointsCoincide(TCP, target=(0.4, 0.0, 0.5)),
            LockedJoint("panda_joint1", 0.1),
            PointsCoincide(TCP, target=(0.4, 0.0, 0.5)),
            LockedJoint("panda_joint1", 0.1),
        ],
        # more rows than joints: 9 rows on 7 (rank 7)
        "overdetermined": [
            Weld("panda_link7", "panda_link3"),
            PointsCoincide(TCP, target=(0.4, 0.0, 0.5)),
        ],
        # the MJCF equality types: joint couplings (one locks a joint), MuJoCo's
        # quaternion residual to the world and between two frames, row factors
        "mjcf": [
            JointCoupling("panda_joint2", "panda_joint4", ratio=-0.7, offset=0.2),
            JointCoupling("panda_joint6", offset=0.4),
            Scaled(QuatAligned("panda_link7", "panda_link2", offset=RZ.T), (0.5, 2.0, 1.5)),
        ],
        "mjcf-world": [
            JointCoupling("panda_joint2", "panda_joint4", ratio=-0.7, offset=0.2),
            JointCoupling("panda_joint6", offset=0.4),
            QuatAligned("panda_link7", None, offset=RZ),
        ],
        # MuJoCo's weld with torquescale: position + scaled orientation, twice over
        # (rank 6 of 12), and a coupling repeated with a factor (rank 1 of 2)
        "mjcf-redundant": [
            PointsCoincide("panda_link7", "panda_link3", point1=(0.0, 0.05, 0.1)),
            Scaled(QuatAligned("panda_link7", "panda_link3", offset=RZ), (0.3, 0.3, 0.3)),
            PointsCoincide("panda_link7", "panda_link3", point1=(0.0, 0.05, 0.1)),
            Scaled(
                Scaled(QuatAligned("panda_link7", "panda_link3", offset=RZ), (2.0, 1, 1)),
                3.0 * np.ones(3),
            ),
        ],
        # a zero factor leaves a zero row: the absolute threshold drops it (rank 3 of 4)
        "mjcf-zero-factor": [
            Scaled(QuatAligned("panda_link6", None), (1.0, 0.0, 2.0)),
            Scaled(JointCoupling("panda_joint1", "panda_joint3"), (4.0,)),
        ],
    }


def _other_sets(wheel):
    particle = planar_particle(2.0)
    return {
        "circle": (particle, [PointOnCircle("particle", (0.1, -0.2), 0.7)]),
        "circle-twice": (
            particle,
            [
                PointOnCircle("particle", (0.1, -0.2), 0.7, point=(0.0, 0.0, 0.0)),
                PointOnCircle("particle", (0.1, -0.2), 0.7),
            ],
        ),
        "continuous": (
            wheel,
            [LockedJoint("wheel", 2.9), PointOnPlane("tip", (0.0, 1.0, 0.0), 0.2)],
        ),
    }


def _random_state(mech, rng):
    q = mech.integrate(mech.neutral(), rng.uniform(-1.2, 1.2, mech.nv))
    return q, rng.uniform(-1.5, 1.5, mech.nv), rng.uniform(-20.0, 20.0, mech.nv)


def _rel(x, ref):
    """Largest difference relative to the reference's largest entry."""
    x, ref = np.asarray(x, float), np.asarray(ref, float)
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-300))


def _exact_least_squares(A, b):
    """The x minimising ||A x - b|| for A of full column rank, in rational arithmetic
    (the normal equations of A's and b's doubles solved exactly), rounded to doubles."""
    from fractions import Fraction

    Af = [[Fraction(float(x)) for x in row] for row in A]
    bf = [Fraction(float(x)) for x in b]
    m, n = len(Af), len(Af[0])
    N = [[sum(Af[k][i] * Af[k][j] for k in range(m)) for j in range(n)] for i in range(n)]
    y = [sum(Af[k][i] * bf[k] for k in range(m)) for i in range(n)]
    for c in range(n):  # Gaussian elimination (exact: any nonzero pivot)
        p = next(r for r in range(c, n) if N[r][c] != 0)
        N[c], N[p], y[c], y[p] = N[p], N[c], y[p], y[c]
        for r in range(c + 1, n):
            f = N[r][c] / N[c][c]
            N[r] = [N[r][j] - f * N[c][j] for j in range(n)]
            y[r] -= f * y[c]
    x = [Fraction(0)] * n
    for c in reversed(range(n)):
        x[c] = (y[c] - sum(N[c][j] * x[j] for j in range(c + 1, n))) / N[c][c]
    return np.array([float(t) for t in x])


def _cases(panda, wheel):
    out = [(name, panda, cs) for name, cs in _panda_sets(panda).items()]
    out += [(name, mech, cs) for name, (mech, cs) in _other_sets(wheel).items()]
    return out


def test_terms_and_dynamics_agree_with_numpy(panda, wheel):
    """M, h, A, drift, Phi; a, F, lambda (three M_c variants) and the rank: core vs
    NumPy to 1e-12 relative, at 25 random states of each stack."""
    rng = np.random.default_rng(18)
    worst = {}
    ranks = {}
    for name, mech, cons in _cases(panda, wheel):
        cset = ConstraintSet(mech, cons)
        assert core.unsupported_reason(cset) is None
        systems = {}
        for variant in dyn.VARIANTS:
            s = core.build(cset)
            o = s.options
            o.variant = core.VARIANT_CODE[variant]
            s.options = o
            systems[variant] = s
        for _ in range(25):
            q, v, tau = _random_state(mech, rng)
            snap = mech.compute(q, v, cset.frames)
            ev = cset.evaluate(snap)
            M, h, A, drift, phi = systems["Mc"].evaluate(q, v)
            for key, x, ref in (
                ("M", M, snap.M),
                ("h", h, snap.h),
                ("A", A, ev.A),
                ("drift", drift, ev.drift),
                ("phi", phi, ev.phi),
            ):
                worst[key] = max(worst.get(key, 0.0), _rel(x, ref))
            for variant, s in systems.items():
                ref = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift, variant=variant)
                a, F, lam, rank = s.solve(q, v, tau)
                assert rank == ref.proj.rank, (name, variant)
                ranks.setdefault(name, set()).add(rank)
                for key, x, r in (("a", a, ref.a), ("F", F, ref.F), ("lambda", lam, ref.lam)):
                    worst[key] = max(worst.get(key, 0.0), _rel(x, r))
    assert max(worst.values()) <= 1e-12, worst
    # the stacks do cover the rank-deficient cases
    assert ranks["duplicated"] == {4} and ranks["redundant"] == {4}
    assert ranks["overdetermined"] == {7} and ranks["circle-twice"] == {1}
    assert ranks["mjcf"] == ranks["mjcf-world"] == {5} and ranks["mjcf-redundant"] == {6}
    assert ranks["mjcf-zero-factor"] == {3}


def test_stage_accelerations_of_dependent_rows(panda):
    """The RK4 stages' row space (certified full-row-rank QR, else the certified
    column-pivoted QR, else the SVD) on stacks with exactly dependent rows (more rows
    than coordinates among them), and on the
    30-DOF quadruped assembled at random postures (12 rows of rank 8): the stage
    acceleration equals NumPy's (SVD) to 1e-12 relative."""
    from mjcf_support import HERE

    from pfaff.files.model import load_model
    from pfaff.simulate.assembly import assemble

    rng = np.random.default_rng(11)
    sets = _panda_sets(panda)
    cases = [
        (panda, sets[k], None)
        for k in (
            "duplicated",
            "redundant",
            "overdetermined",
            "mjcf-redundant",
            "mjcf-zero-factor",
        )
    ]
    quad = load_model(HERE.parent / "examples" / "quadruped.xml")
    cases.append((quad.mechanism, quad.constraints, quad.q))
    worst, ranks = 0.0, set()
    for mech, cons, q0 in cases:
        cset = ConstraintSet(mech, cons)
        s = core.build(cset)
        for _ in range(15):
            q, v, tau = _random_state(mech, rng)
            if q0 is not None:  # on the manifold: the loops' third rows are dependent
                q = assemble(cset, mech.integrate(q0, 0.2 * rng.standard_normal(mech.nv))).q
            snap = mech.compute(q, v, cset.frames)
            ev = cset.evaluate(snap)
            ref = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
            # rows of rank nv fix a alone: off the manifold, A's least-squares solution
            # (solved exactly: the SVD's own error reaches 7e-13 there)
            exact = ref.proj.rank == mech.nv
            want = _exact_least_squares(ev.A, -ev.drift) if exact else ref.a
            worst = max(worst, _rel(s.acceleration(q, v, tau), want))
            ranks.add((mech.nv, ref.proj.rank, ev.A.shape[0]))
    assert worst <= 1e-12
    assert (30, 8, 12) in ranks and (7, 4, 8) in ranks
    # more rows than coordinates, of full column rank and below it
    assert (7, 7, 9) in ranks and (7, 6, 12) in ranks


@pytest.mark.parametrize("name", ["weld", "equality_site"])
def test_blocks_whose_rows_fix_their_trees(name):
    """MuJoCo's weld and equality_site models weld free bodies to the world: their
    rows' block spans the body's six velocities, and the core takes the acceleration
    and the velocity projection there from the rows alone (a_b = V1_b c_b, v_b = 0).
    At 12 random states off the velocity manifold (so the drift, and with it a_b, is
    not zero) the acceleration and the projected start are NumPy's (SVD of the whole A,
    M_c by LU) to 1e-12 relative and 1e-11 absolute."""
    from mjcf_support import shared_model

    from pfaff.files.model import load_model
    from pfaff.simulate import project_state
    from pfaff.simulate.core_engine import configure, project_start

    system = load_model(shared_model(name))
    mech = system.mechanism
    cset = ConstraintSet(mech, system.constraints)
    s = core.build(cset)
    opt = SimOptions(progress=False)
    configure(s, opt)
    rng = np.random.default_rng(5)
    worst, moved = 0.0, 0.0
    for _ in range(12):
        q = mech.integrate(system.q, rng.uniform(-0.02, 0.02, mech.nv))
        v, tau = rng.uniform(-1.5, 1.5, mech.nv), rng.uniform(-20.0, 20.0, mech.nv)
        snap = mech.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        ref = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
        worst = max(worst, _rel(s.acceleration(q, v, tau), ref.a))
        moved = max(moved, np.abs(ref.a).max())
        q_np, v_np = project_state(cset, q, v, opt)
        q_c, v_c = project_start(s, q, v, opt)
        assert np.abs(mech.difference(q_np, q_c)).max() <= 1e-11
        assert np.abs(v_c - v_np).max() <= 1e-11
    assert worst <= 1e-12
    assert moved > 1.0  # the welded bodies are driven by the drift: a wrong a_b shows


def test_dual_arm_box_terms(dual):
    """Two welds, a plane and a two-row orientation lock on a free-flying box
    (Lie-group q): the core against NumPy at random states."""
    cset = dual.cset
    mech = cset.mechanism
    s = core.build(cset)
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(15):
        q, v, tau = _random_state(mech, rng)
        snap = mech.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        ref = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
        a, F, lam, rank = s.solve(q, v, tau)
        assert rank == ref.proj.rank == 15
        worst = max(worst, _rel(a, ref.a), _rel(F, ref.F), _rel(lam, ref.lam))
    assert worst <= 1e-12


@pytest.fixture(scope="module")
def dual():
    from pfaff.scenarios import get_scenario
    from pfaff.scenarios.dual_panda import dual_panda_plant

    return dual_panda_plant(get_scenario("dual-panda-box").resolve({}))


# -- whole runs ------------------------------------------------------------------


class _PD:
    """A joint-space PD law with gravity compensation that reads the force sensor
    (exercises the per-sample crossing: record, snapshot, sensors, signals)."""

    frames = (TCP,)
    needs_sensors = True

    def __init__(self, q_ref):
        self.q_ref = q_ref
        self.signals = {}

    def __call__(self, t, rec):
        snap = rec.snap
        e = snap.q[: self.q_ref.size] - self.q_ref
        self.signals = {"err": float(np.abs(e).max()), "fz": float(rec.sensors["F"][1])}
        return snap.g - 10.0 * e - 2.0 * snap.v + np.sin(20.0 * t) * snap.frame(TCP).p[2]


def _both(cset, q, v, t_end, opt, **kw):
    out = {}
    for engine in ("numpy", "core"):
        o = SimOptions(**{**opt.__dict__, "engine": engine, "progress": False})
        tr = simulate(cset, q, v, t_end, o, **kw)
        assert tr.engine == engine
        out[engine] = tr.arrays()
    return out["numpy"], out["core"]


def _assert_same_run(ref, got, tol=1e-9):
    assert ref["t"].shape == got["t"].shape
    for key in ("q", "v", "lambda", "a", "F", "energy", "work"):
        if ref[key].size:
            assert _rel(got[key], ref[key]) <= tol, key
    # residuals and corrections are rounding-level numbers: compared on the energy scale
    # and in absolute terms
    scale = max(np.abs(ref["energy"]).max(), np.abs(ref["kinetic"]).max(), 1e-3)
    dE = np.abs(got["correction_energy"] - ref["correction_energy"]).max()
    assert dE <= tol * scale
    if ref["phi"].size:
        assert np.abs(got["phi"]).max() <= 1e-10 and np.abs(ref["phi"]).max() <= 1e-10
    np.testing.assert_array_equal(got["rank"], ref["rank"])


def test_passive_runs_agree(panda, wheel):
    """Passive runs (Panda on a plane and with a closed loop; the continuous joint):
    the core's whole trajectory equals NumPy's in q, v, lambda to 1e-9."""
    q0 = panda.neutral() + 0.2
    cases = [
        (panda, [PointOnPlane(TCP, (0.0, 0.0, 1.0), 0.4)], 0.3, 3),
        (
            panda,
            [PointsCoincide(TCP, target=(0.4, 0.0, 0.5)), PointOnPlane(TCP, (0, 0, 1), 0.5)],
            0.2,
            1,
        ),
        (wheel, [PointOnPlane("tip", (0.0, 1.0, 0.0), 0.2)], 0.5, 2),
    ]
    for mech, cons, t_end, every in cases:
        cset = ConstraintSet(mech, cons)
        q = q0 if mech is panda else mech.integrate(mech.neutral(), np.array([0.4, 0.1]))
        v = np.full(mech.nv, 0.3)
        opt = SimOptions(dt=2e-3, record_every=every)
        ref, got = _both(cset, q, v, t_end, opt)
        _assert_same_run(ref, got)
        assert ref["t"].size == int(round(t_end / 2e-3)) // every + 1


def test_controlled_runs_agree(panda):
    """A sampled controller (period 3 dt, force sensor, signals) and the M'_c variant:
    same trajectory and same recorded signals on both engines."""
    cset = ConstraintSet(panda, [PointOnPlane(TCP, (0.0, 0.0, 1.0), 0.45)])
    q0 = panda.neutral() + 0.1
    for variant in ("Mc", "Mc1", "Mc2"):
        opt = SimOptions(dt=1e-3, control_dt=3e-3, variant=variant, record_every=2)
        ref, got = _both(cset, q0, np.zeros(panda.nv), 0.15, opt, controller=_PD(q0 + 0.02))
        _assert_same_run(ref, got)
        assert _rel(got["fz"], ref["fz"]) <= 1e-9 and _rel(got["err"], ref["err"]) <= 1e-9


def test_stop_callback_runs_agree(panda):
    """A ``stop`` callback on the core: checked before every step as on NumPy, with and
    without a controller (period 3 dt, so most checks fall between samples) and with
    record_every = 2 (the stopping sample is recorded anyway): both engines stop at the
    same step with the same trajectory; a stop that never fires runs to t_end."""
    cset = ConstraintSet(panda, [PointOnPlane(TCP, (0.0, 0.0, 1.0), 0.45)])
    q0 = panda.neutral() + 0.1

    def moved_by(d):  # a stop: the tool point has moved by d along x since the start
        start = []

        def stop(t, snap, cev):
            x = snap.frame(TCP).p[0]
            start[:] = start or [x]
            return abs(x - start[0]) >= d

        return stop

    for ctrl in (None, _PD(q0 + 0.02)):
        opt = SimOptions(dt=1e-3, control_dt=3e-3, record_every=2)
        stops = {}
        for engine in ("numpy", "core"):
            o = SimOptions(**{**opt.__dict__, "engine": engine, "progress": False})
            tr = simulate(
                cset, q0, np.full(panda.nv, 0.3), 0.3, o, controller=ctrl,
                stop=moved_by(2e-3),
            )  # fmt: skip
            assert tr.engine == engine
            stops[engine] = (tr.stopped_at, tr.arrays())
        (t_ref, ref), (t_got, got) = stops["numpy"], stops["core"]
        assert t_ref is not None and 0.0 < t_ref < 0.3 and t_got == t_ref
        assert got["t"][-1] == t_ref
        _assert_same_run(ref, got)
    never = SimOptions(dt=1e-3, engine="core", progress=False)
    tr = simulate(cset, q0, np.zeros(panda.nv), 0.05, never, stop=lambda t, s, c: False)
    assert tr.stopped_at is None and tr.arrays()["t"][-1] == pytest.approx(0.05, abs=1e-12)


def test_lie_group_runs_agree(dual):
    """A free box held by two welds, a plane and an orientation lock (nq != nv): the
    core's Runge-Kutta-Munthe-Kaas stages give NumPy's trajectory to 1e-9; auto takes
    the core."""
    cset = dual.constraints(unilateral=False)
    assert choose_engine(cset, SimOptions()) == "core"
    mech = cset.mechanism
    from pfaff.simulate.assembly import assemble

    rng = np.random.default_rng(3)
    q0 = mech.integrate(dual.initial_q(-0.05), 1e-3 * rng.standard_normal(mech.nv))
    asm = assemble(cset, q0)
    v = np.zeros(mech.nv)
    ref, got = _both(cset, asm.q, v, 0.1, SimOptions(dt=2e-3))
    _assert_same_run(ref, got)


def test_unconstrained_runs_on_the_core(wheel):
    """No constraints: auto takes the core as for any system it can run (the same
    trajectory as NumPy's)."""
    cset = ConstraintSet(wheel, [])
    assert choose_engine(cset, SimOptions()) == "core"
    assert choose_engine(cset, SimOptions(engine="numpy")) == "numpy"
    q = wheel.integrate(wheel.neutral(), np.array([0.4, 0.1]))
    ref, got = _both(cset, q, np.array([1.0, -0.5]), 0.3, SimOptions(dt=2e-3))
    _assert_same_run(ref, got)


def test_engine_choice_and_errors(panda):
    """auto takes the core when it can, NumPy otherwise; engine='core' refuses what it
    cannot run; both engines stop at the same step when a contact would pull."""
    plane = PointOnPlane(TCP, (0.0, 0.0, -1.0), -0.4, unilateral=True)  # pushes down only
    cset = ConstraintSet(panda, [plane])
    assert choose_engine(cset, SimOptions()) == "core"
    assert choose_engine(cset, SimOptions(engine="numpy")) == "numpy"
    assert choose_engine(cset, SimOptions(integrator="RK45")) == "core"
    assert choose_engine(cset, SimOptions(method="kkt")) == "core"
    # a constraint written in Python and a mechanism given in closed form run on the
    # core (called from its loop); a closed form on a Lie group (nq != nv) does not
    user = ConstraintSet(panda, [FunctionConstraint(1, phi=lambda q: q[:1] - 0.1)])
    assert core.unsupported_reason(user) is None
    assert choose_engine(user, SimOptions()) == "core"
    mech, closed = slider_crank.build(1.0, 0.5, 9.81, "closed-form")
    assert core.unsupported_reason(closed) is None
    assert choose_engine(closed, SimOptions()) == "core"

    class OnACircle(type(mech)):
        nq = 3

    lie = ConstraintSet(OnACircle(), [])
    assert "nq = 3 != nv = 2" in core.unsupported_reason(lie)
    assert choose_engine(lie, SimOptions()) == "numpy"
    with pytest.raises(ValueError, match="cannot run"):
        choose_engine(lie, SimOptions(engine="core"))
    with pytest.raises(ValueError, match="unknown engine"):
        SimOptions(engine="gpu").validate()
    # gravity pulls the hand away from a plane that can only push it down: it opens
    msgs, q0 = [], panda.neutral() + 0.2
    for engine in ("numpy", "core"):
        with pytest.raises(SimulationError, match="would open") as exc:
            simulate(cset, q0, np.zeros(panda.nv), 0.1, SimOptions(engine=engine))
        msgs.append(str(exc.value))
        assert exc.value.trajectory is not None
    assert msgs[0].split(":")[0] == msgs[1].split(":")[0]


# short runs of the scenarios that run on the core (overrides keep each a few seconds on
# the NumPy engine; the passive ones are chaotic, so rounding differences grow by
# about e per 0.2 s and a longer run would part the two engines beyond 1e-9)
SCENARIO_RUNS = [
    ("particle-circle", {"t_end": 2.0}),
    ("four-bar", {"t_end": 1.0}),
    ("slider-crank", {"model": "pinocchio", "t_end": 1.0}),
    ("slider-crank-pidc", {"t_end": 1.0}),
    ("panda-contact", {"t_end": 0.6}),
    ("panda-table", {"t_end": 0.7}),
    ("planar-arm-force", {"t_end": 0.6}),
    ("yz-free", {"probe": False}),
    ("yz-contact", {}),
    # the Arimoto law sampled by the core itself (held_forces), 2000 samples
    ("handwriting-robot", {"t_end": 1.0, "qstar": False, "sweep": False}),
]


@pytest.mark.parametrize("name,overrides", SCENARIO_RUNS, ids=[n for n, _ in SCENARIO_RUNS])
def test_scenario_runs_agree(name, overrides):
    """The scenario on the core (auto) and on NumPy: same q, v, lambda to 1e-9."""
    from pfaff.scenarios import get_scenario
    from pfaff.simulate.integrator import use_engine

    sc = get_scenario(name)
    p = sc.resolve(overrides)
    out = {}
    for engine in ("numpy", "auto"):
        with use_engine(engine):
            tr = sc.func(p).trajectory
        out[engine] = (tr.engine, tr.arrays())
    assert out["numpy"][0] == "numpy" and out["auto"][0] == "core"
    ref, got = out["numpy"][1], out["auto"][1]
    assert ref["t"].shape == got["t"].shape
    for key in ("q", "v"):
        assert _rel(got[key], ref[key]) <= 1e-9, key
    # Near the slider-crank's singular crossings a and F are ill-conditioned functions
    # of the state: on the NumPy engine alone, v0 scaled by 1 + 1e-15 moves F by
    # 2.4e-8 (relative to max |F|) at the sample with sigma_min 3.3e-3 while v moves
    # by 1.6e-11. So F is held to 1e-9 where A is well conditioned and to 1e-7
    # everywhere; lambda = (A^+)^T F also carries 1 / sigma_min.
    ok = ref["sigma_min"] >= 0.1
    assert ok.mean() > 0.5
    assert _rel(got["F"], ref["F"]) <= 1e-7
    for key in ("F", "lambda"):
        assert _rel(got[key][ok], ref[key][ok]) <= 1e-9, key


# -- model files: the MJCF equality types and Lie-group joints on the core -----------

MODEL_RUNS = [
    ("own", "four_bar", 0.5),
    ("own", "five_bar", 0.5),
    ("own", "two_five_bars", 0.5),
    ("own", "slider_crank", 0.5),
    ("own", "gripper", 0.5),
    ("own", "leg", 0.3),
    ("shared", "connect", 0.3),
    ("shared", "weld", 0.3),
    ("shared", "equality_site", 0.3),
    ("shared", "jdotv_connect_3d", 0.3),
    ("shared", "jdotv_weld_3d", 0.3),
    ("examples", "quadruped", 0.1),
]


@pytest.mark.parametrize("where,name,t_end", MODEL_RUNS, ids=[n for _, n, _ in MODEL_RUNS])
def test_model_file_runs_agree(where, name, t_end):
    """A model file (assembled from its keyframe or qpos0) on the core and on NumPy:
    the same q, v, lambda, rank and sigma_min over the run (free and ball joints,
    connect, weld with torquescale, joint couplings; rows in independent blocks, which
    the core factors block by block)."""
    from mjcf_support import OWN, shared_model

    from pfaff.files.model import load_model
    from pfaff.simulate.assembly import assemble

    if where == "examples":
        path = OWN.parent.parent / "examples" / f"{name}.xml"
    else:
        path = OWN / f"{name}.xml" if where == "own" else shared_model(name)
    system = load_model(path)
    cset = ConstraintSet(system.mechanism, system.constraints)
    assert core.unsupported_reason(cset) is None
    assert choose_engine(cset, SimOptions()) == "core"
    asm = assemble(cset, system.q, system.v)
    ref, got = _both(cset, asm.q, asm.v, t_end, SimOptions(dt=1e-3, record_every=5))
    assert ref["t"].shape == got["t"].shape
    for key in ("q", "v", "a"):
        assert _rel(got[key], ref[key]) <= 1e-9, key
    # forces and energies in absolute terms on their scales: a free-falling leg has
    # F ~ 1e-15 N (no internal force), so a relative figure would compare round-off
    weight = pin.computeTotalMass(system.mechanism.model) * 9.81
    for key in ("F", "lambda"):
        scale = max(np.abs(ref[key]).max(), weight)
        assert np.abs(got[key] - ref[key]).max() <= 1e-9 * scale, key
    scale = max(np.abs(ref["energy"]).max(), np.abs(ref["kinetic"]).max(), 1e-3)
    for key in ("energy", "work", "correction_energy"):
        assert np.abs(got[key] - ref[key]).max() <= 1e-9 * scale, key
    assert np.abs(got["phi"]).max() <= 1e-10 and np.abs(ref["phi"]).max() <= 1e-10
    np.testing.assert_array_equal(got["rank"], ref["rank"])
    # the smallest singular value of A: NumPy's SVD of the whole A, the core's of each
    # independent block of rows (two five-bars, the welds of five free bodies)
    dsig = np.abs(got["sigma_min"] - ref["sigma_min"]).max()
    assert dsig <= 1e-9 * max(1.0, np.abs(ref["sigma_min"]).max())


def test_record_buffers_are_checked_and_kept_alive():
    """The core writes samples into NumPy arrays it was handed: a buffer too small
    for its capacity is refused with the buffer's index and size (not a heap
    overflow), and the arrays live as long as the System even when the caller drops
    them (nanobind keep_alive)."""
    import gc

    from pfaff.simulate.policy import CORE_SERIES

    mech = planar_particle(1.0)
    cset = ConstraintSet(mech, [PointOnCircle("particle", (0.0, 0.0), 1.0)])
    s = core.build(cset)
    sizes = {"nq": mech.nq, "nv": mech.nv, "m": cset.dim, "m_h": len(cset.holonomic_rows), "na": 0}
    cap = 11

    def bufs(short=None):
        return [
            np.empty(((cap - (i == short)),) if w is None else (cap - (i == short), sizes[w]))
            for i, w in enumerate(x.width for x in CORE_SERIES)
        ]

    for i in (0, 1, 8):
        with pytest.raises(ValueError, match=f"record buffer {i} holds"):
            s.set_buffers(bufs(short=i), cap)
    s.set_buffers(bufs(), cap)  # the only reference to the arrays is the System's
    s.set_force_buffers(np.zeros(cap), np.zeros(cap))
    gc.collect()
    junk = [np.full(64, 7.0) for _ in range(200)]  # reuse of freed memory would show
    s.set_state(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    code = s.run(0, 11, 10, 0.0).code
    assert code == 0 and s.recorded == cap and len(junk) == 200
    with pytest.raises(ValueError, match="equal length"):
        s.set_force_buffers(np.zeros(cap), np.zeros(cap - 1))


def _snapshot_gap(rec, ref, ev_ref, frames) -> float:
    """Largest difference between a record's snapshot and constraint terms and
    Python Pinocchio's, each relative to max(1, the reference's largest entry)."""
    snap, ev = rec.snap, rec.constraints
    pairs = [(snap.q, ref.q), (snap.v, ref.v), (snap.M, ref.M), (snap.h, ref.h)]
    pairs += [(snap.g, ref.g), (snap.kinetic, ref.kinetic), (snap.potential, ref.potential)]
    pairs += [(ev.A, ev_ref.A), (ev.drift, ev_ref.drift), (ev.phi, ev_ref.phi)]
    for name in frames:
        f, fr = snap.frame(name), ref.frame(name)
        pairs += [(f.p, fr.p), (f.R, fr.R), (f.J, fr.J), (f.drift, fr.drift)]
    return max(
        float(np.abs(np.asarray(x) - y).max(initial=0.0) / max(1.0, np.abs(y).max(initial=0.0)))
        for x, y in pairs
    )


def test_controller_record_equals_pythons_snapshot(dual):
    """The controller's record on the core (one call: the core's M, h, A, drift, Phi,
    projection factors, sensors, and the frames it observes, g and the energies)
    equals what Python Pinocchio computes at the same state -- snapshot, constraint
    terms, a, F, lambda of the held torque -- at random states of the free-flying
    box held by two arms, with a frame the constraints do not use. A record of a
    state 1e-6 away (wrong input) is caught."""
    from pfaff.simulate import core_engine

    cset = dual.cset
    mech = cset.mechanism
    frames = (*cset.frames, "arm1_panda_link4")
    system = core_engine.build(cset)
    for name in frames:
        system.observe(name)
    core.options(system, SimOptions())
    hol = cset.holonomic_rows
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(10):
        q, v, tau = _random_state(mech, rng)
        system.set_state(q, v)
        system.set_tau(tau)
        rec = core_engine.sample_record(system, frames, hol, 0.0, True, mech.nv, 1e-9)
        ref = mech.compute(q, v, frames)
        ev = cset.evaluate(ref)
        worst = max(worst, _snapshot_gap(rec, ref, ev, frames))
        sol = dyn.solve_constrained(ref.M, ref.h, tau, ev.A, ev.drift)
        assert _rel(rec.sensors["F"], sol.F) <= 1e-12
        assert _rel(rec.sensors["lambda"], sol.lam) <= 1e-12
        np.testing.assert_allclose(rec.projection.P, sol.proj.P, rtol=0, atol=1e-12)
        off = mech.compute(mech.integrate(q, 1e-6 * np.ones(mech.nv)), v, frames)
        assert _snapshot_gap(rec, off, cset.evaluate(off), frames) >= 1e-7
    assert worst <= 1e-12
