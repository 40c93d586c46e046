"""Rolling contacts and held force laws on the compiled core: the contours,
the contact and rolling rows, the coordinate spring and a controller's law sampled by
the core, each against the NumPy engine."""

from __future__ import annotations

import numpy as np
import pytest

from pfaff import core, lowering
from pfaff import dynamics as dyn
from pfaff.control.blind_grasp import BlindGrasp
from pfaff.manipulation.contours import Circle, SplineContour
from pfaff.scenarios import get_scenario
from pfaff.simulate import CoordinateSpring, PointSpring, SimOptions, project_state, simulate
from pfaff.simulate.core_engine import build
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.integrator import use_engine
from pfaff.systems import rolling_fingers as rf

SHAPES = ("ellipse", "superellipse", "spline")
RADII = (0.01, 0.012)


def _contours():
    out = {s: rf.make_contour(s) for s in SHAPES}
    out["circle"] = Circle(0.02)
    out["spline-8"] = SplineContour([(np.cos(a) * 0.03, np.sin(a) * 0.02 + 0.003 * np.cos(3 * a))
                                     for a in np.linspace(0, 2 * np.pi, 9)[:-1]])  # fmt: skip
    return out


def _grasp(shape: str):
    contour = rf.make_contour(shape)
    mech, contacts, cset = rf.grasp_system(contour, 0.03, RADII)
    q0 = rf.initial_configuration(
        contour, (0.006, 0.085, 1.75), RADII, (0.0, 0.0), (np.pi + 0.05, 0.05), np.pi - 0.5
    )
    q0, _ = project_state(cset, q0, np.zeros(8), SimOptions(stage_projection=False))
    return mech, contacts, cset, q0


def _rel(x, ref) -> float:
    x, ref = np.asarray(x, float), np.asarray(ref, float)
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-300))


@pytest.mark.parametrize("name", [*SHAPES, "circle", "spline-8"])
def test_contours_agree_with_numpy(name):
    """gamma and its two derivatives at 400 parameters (also outside [0, U)), and the
    foot point of 60 points around the contour, cold and warm-started: core vs the
    Python contour to 1e-15 m (gamma) and 1e-12 (u). Wrong input: an ellipse with a
    semi-axis 1 mm off misses gamma by > 1e-4 m."""
    c = _contours()[name]
    cc = core.contour(**lowering.lower(c, "contour", None))
    rng = np.random.default_rng(3)
    for u in rng.uniform(-c.U, 2 * c.U, 400):
        assert (
            np.abs(np.array(cc.scalar(u)) - np.array(c.scalar(u))).max()
            <= 1e-15 * max(1.0, np.abs(c.scalar(u)).max()) + 1e-15
        )
    P = c.outline(60)[:-1]
    for p in P:
        x = p * rng.uniform(1.1, 1.8)  # outside the contour, as a fingertip centre
        u = c.foot_point(x)
        assert abs(cc.foot_point(*x) - u) <= 1e-12 * c.U
        u0 = (u + 0.01 * c.U) % c.U
        assert abs(cc.foot_point(*x, u0) - c.foot_point(x, u0)) <= 1e-12 * c.U
    if name == "ellipse":
        wrong = core.contour("Ellipse", c.U, c.a + 1e-3, c.b)
        assert abs(wrong.scalar(0.0)[0] - c.scalar(0.0)[0]) > 1e-4


@pytest.mark.parametrize("shape", SHAPES)
def test_rolling_terms_and_dynamics_agree_with_numpy(shape):
    """A, drift, Phi of the contact and rolling rows (two fingers, 4 rows, 2 of them
    Pfaffian) and a, F, lambda: core vs NumPy to 1e-12 relative at 25 states around the
    grasp. Wrong input: the core's contact set up with a fingertip radius 1 mm off
    moves Phi by > 1e-4 m."""
    mech, contacts, cset, q0 = _grasp(shape)
    assert core.unsupported_reason(cset) is None
    s = core.build(cset)
    assert s.rows == 4
    rng = np.random.default_rng(11)
    worst = {}
    for k in range(25):
        q = q0 + rng.uniform(-0.04, 0.04, 8) * (k > 0)
        v, tau = rng.uniform(-1.0, 1.0, 8), rng.uniform(-0.1, 0.1, 8)
        snap = mech.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        _, _, A, drift, phi = s.evaluate(q, v)
        ref = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift)
        a, F, lam, rank = s.solve(q, v, tau)
        assert rank == ref.proj.rank == 4
        for key, x, r in (("A", A, ev.A), ("drift", drift, ev.drift), ("a", a, ref.a),
                          ("F", F, ref.F), ("lambda", lam, ref.lam)):  # fmt: skip
            worst[key] = max(worst.get(key, 0.0), _rel(x, r))
        worst["phi"] = max(worst.get("phi", 0.0), float(np.abs(phi - ev.phi).max()))
    assert max(worst.values()) <= 1e-12, worst
    bad = core._core.System(mech.model.saveToString())
    c0 = contacts[0]
    k = bad.add_contact(
        core.contour(**lowering.lower(c0.contour, "contour", None)), bad.add_frame(c0.obj),
        bad.add_frame(c0.tip), c0.r + 1e-3,
    )  # fmt: skip
    spec = core.Build(bad, mech).spec("RollContact")
    spec.contact = k
    bad.add(spec)
    phi_ref = cset.evaluate(mech.compute(q0, None, cset.frames)).phi[0]
    assert abs(bad.evaluate(q0, np.zeros(8))[4][0] - phi_ref) > 1e-4


def test_a_user_contour_runs_as_rows_written_in_python():
    """A contour subclass has no compiled form: the rolling rows on it reach the core as
    a constraint written in Python (pfaff.constraints.python_rows), its rows called from
    the loop; a run of both engines agrees to 1e-9."""

    class Wobbly(type(rf.make_contour("ellipse"))):
        pass

    mech, contacts, cset, q0 = _grasp("ellipse")
    contacts[0].contour = Wobbly(0.026, 0.018)
    assert core.unsupported_reason(cset) is None
    runs = {}
    for engine in ("numpy", "core"):
        opt = SimOptions(dt=1e-3, engine=engine, progress=False)
        runs[engine] = simulate(cset, q0, np.zeros(mech.nv), 0.02, opt).arrays()
    for key in ("q", "v", "lambda"):
        assert _rel(runs["core"][key], runs["numpy"][key]) <= 1e-9, key


@pytest.mark.parametrize("law", ["sampled", "continuous"])
def test_rolling_grasp_runs_agree(law):
    """rolling-grasp on the core (the contact rows compiled; the 4 kHz law sampled by the
    core from its held force elements, or the law at every stage) and on NumPy (the
    law's Python __call__, or its elements): same q, v, lambda to 1e-9, and the same
    rolling figures."""
    sc = get_scenario("rolling-grasp")
    p = sc.resolve({"t_end": 0.3, "law": law, "dt": 2.5e-4 if law == "sampled" else 1e-3})
    out = {}
    for engine in ("numpy", "auto"):
        with use_engine(engine):
            res = sc.func(p)
        out[engine] = (res.trajectory.engine, res.trajectory.arrays(), res.metrics)
    assert out["numpy"][0] == "numpy" and out["auto"][0] == "core"
    ref, got = out["numpy"][1], out["auto"][1]
    for key in ("q", "v", "lambda", "tau"):
        assert _rel(got[key], ref[key]) <= 1e-9, key
    assert out["auto"][2]["rolling_slip_max"] <= 1e-12
    assert out["auto"][2]["arclength_ode_mismatch"] <= 1e-9


def test_held_law_is_sampled_at_the_controllers_instants():
    """The blind-grasping law at a controller period of 4 steps (and 2.6 steps, which
    the samples round as the NumPy engine does): the core, sampling the held elements
    itself, against NumPy calling the law: same tau, q and v to 1e-9; tau is constant
    between samples. Wrong input: the core's law sampled every step differs by > 1e-6."""
    mech, _, cset, q0 = _grasp("ellipse")

    def law():
        return BlindGrasp(("f1_tip", "f2_tip"), rf.FINGER_JOINTS, RADII, 1.0, 0.008, 200.0, 8,
                          k_q=0.01)  # fmt: skip

    def run(engine, control_dt):
        opt = SimOptions(dt=2.5e-4, control_dt=control_dt, stage_projection=False, engine=engine)
        tr = simulate(cset, q0, np.zeros(8), 0.05, opt, controller=law())
        return tr.engine, tr.arrays(), tr.next_control

    for control_dt in (1e-3, 6.5e-4):
        (e_ref, ref, n_ref), (e_got, got, n_got) = (run(e, control_dt) for e in ("numpy", "core"))
        assert (e_ref, e_got) == ("numpy", "core") and n_got == pytest.approx(n_ref, abs=1e-15)
        for key in ("tau", "q", "v"):
            assert _rel(got[key], ref[key]) <= 1e-9, (control_dt, key)
        changes = np.flatnonzero(np.any(np.diff(got["tau"], axis=0) != 0.0, axis=1)) + 1
        t_changes = got["t"][changes]
        if control_dt == 1e-3:
            assert np.allclose(np.diff(t_changes), 1e-3, atol=1e-12)
    every = run("core", 2.5e-4)[1]
    assert _rel(every["tau"], got["tau"]) > 1e-6


def test_coordinate_spring_core_and_numpy():
    """CoordinateSpring: Q = -dV/dq (central differences) and the core's Q and V equal
    NumPy's to 1e-12 at 20 states. Wrong input: a coefficient's sign flipped moves Q."""
    mech, _, cset, q0 = _grasp("ellipse")
    spring = CoordinateSpring([0, 1, 2, 3, 4], [0.01, 0.01, -0.012, -0.012, -0.012], 150.0, 0.004)
    fset = ForceSet(mech, [spring])
    s = build(cset, [spring])
    rng = np.random.default_rng(5)
    h = 1e-6
    for _ in range(20):
        q, v = q0 + rng.uniform(-0.3, 0.3, 8), rng.uniform(-1, 1, 8)
        snap = mech.compute(q, v)
        Q, _ = fset.evaluate(0.0, snap)
        Qc, Vc, _ = s.force_terms(q, v)
        assert _rel(Qc, Q) <= 1e-12 and abs(Vc - fset.potential(snap)) <= 1e-15
        grad = [
            (spring.potential(mech.compute(q + h * e)) - spring.potential(mech.compute(q - h * e)))
            / (2 * h)
            for e in np.eye(8)
        ]
        assert np.abs(Q + np.array(grad)).max() <= 1e-8
    flipped = CoordinateSpring([0, 1, 2, 3, 4], [0.01, 0.01, 0.012, -0.012, -0.012], 150.0, 0.004)
    ForceSet(mech, [flipped])
    assert np.abs(flipped.force(0.0, snap) - Q).max() > 1e-3


def test_a_subclassed_law_is_not_sampled_from_its_parents_elements():
    """A BlindGrasp subclass that changes __call__ inherits held_forces; the core must
    not run the parent's elements for it: the run calls the subclass (its torque
    doubled here), and the core run equals the NumPy one."""
    from pfaff.simulate.core_engine import held_law

    class Doubled(BlindGrasp):
        def __call__(self, t, rec):
            return 2.0 * super().__call__(t, rec)

    mech, _, cset, q0 = _grasp("ellipse")
    law = Doubled(("f1_tip", "f2_tip"), rf.FINGER_JOINTS, RADII, 1.0, 0.008, 200.0, 8)
    assert held_law(law, q0, mech) is None
    runs = {e: simulate(cset, q0, np.zeros(8), 0.01,
                        SimOptions(dt=2.5e-4, stage_projection=False, engine=e),
                        controller=Doubled(
        ("f1_tip", "f2_tip"), rf.FINGER_JOINTS, RADII, 1.0, 0.008, 200.0, 8)).arrays()
        for e in ("numpy", "core")}  # fmt: skip
    assert _rel(runs["core"]["tau"], runs["numpy"]["tau"]) <= 1e-9


def test_a_law_whose_elements_do_not_bind_is_called_per_sample():
    """held_law returns None (the controller is called, not its elements) when an
    element does not bind to the mechanism: ArimotoHybrid's per-coordinate dampers on a
    model with nq != nv (a continuous joint: q = (cos, sin)); it binds on the Panda."""
    import pinocchio as pin

    from pfaff.control.arimoto import ArimotoHybrid
    from pfaff.mechanism import PinocchioMechanism, load_robot
    from pfaff.simulate.core_engine import held_law

    model = pin.Model()
    j = model.addJoint(0, pin.JointModelRUBZ(), pin.SE3.Identity(), "wheel")
    model.appendBodyToJoint(j, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    model.addFrame(pin.Frame("rim", j, 0, pin.SE3(np.eye(3), np.array([0.1, 0, 0])),
                             pin.FrameType.OP_FRAME))  # fmt: skip
    wheel = PinocchioMechanism(model)
    law = ArimotoHybrid("rim", (0.0, 0.1), 10.0, 0.7, 0.03, 1.0)
    assert wheel.nq == 2 and wheel.nv == 1
    assert held_law(law, np.array([1.0, 0.0]), wheel) is None
    panda = load_robot("panda")
    law = ArimotoHybrid("panda_hand_tcp", (0.4, 0.0), 10.0, 0.7, 0.03, 1.0)
    assert len(held_law(law, np.zeros(panda.nq), panda)) == 4 + panda.nv


def test_a_data_built_from_the_model_alone_runs_the_same():
    """The core's per-state workspace (its Data) is built from its Model alone, as
    pinocchio.Data(model): after a run, a Data rebuilt from the Model (rebuild_data)
    reruns the rolling grasp with a coordinate spring and a spring between the two
    fingertips (frame slots, contacts' geometry, force elements' terms, rows, stages)
    from the start state bit for bit as a freshly built System. Wrong input: a start
    0.1 mrad away is seen."""
    from pfaff.simulate.policy import CORE_SERIES, FORCE_SERIES, series_shape

    mech, contacts, cset, q0 = _grasp("ellipse")
    els = [
        CoordinateSpring([0, 1, 2, 3, 4], [0.01, 0.01, -0.012, -0.012, -0.012], 150.0, 0.004),
        PointSpring(contacts[0].tip, contacts[1].tip, stiffness=2.0, rest_length=0.05),
    ]
    ForceSet(mech, els)  # binds the elements to the mechanism (coordinates, frames)
    sizes = {"nq": mech.nq, "nv": mech.nv, "m": cset.dim, "m_h": len(cset.holonomic_rows), "na": 0}
    n = 60
    v0 = np.zeros(mech.nv)

    def run(s, q):
        bufs = [np.empty((n + 1, *series_shape(x, sizes))) for x in CORE_SERIES]
        fbufs = [np.zeros(n + 1), np.zeros(n + 1)]
        s.set_buffers(bufs, n + 1)
        s.set_force_buffers(*fbufs)
        s.reset_counters()
        s.set_state(q, v0)
        s.set_tau(np.full(mech.nv, 0.01))
        assert s.run(0, n + 1, n, 0.0).code == 0 and s.recorded == n + 1
        return dict(zip((x.name for x in (*CORE_SERIES, *FORCE_SERIES)), (*bufs, *fbufs)))

    fresh = run(build(cset, els), q0)
    used = build(cset, els)
    moved = run(used, q0 + 1e-4 * np.eye(mech.nq)[0])
    used.rebuild_data()
    again = run(used, q0)
    assert np.abs(fresh["force_potential"]).max() > 1e-4  # the springs act
    for name, x in fresh.items():
        np.testing.assert_array_equal(again[name], x, err_msg=name)
    assert np.abs(moved["q"] - fresh["q"]).max() > 1e-5


def test_a_held_law_in_a_limited_run_is_sampled_by_the_core(monkeypatch):
    """The blind-grasping law in simulate_limited with a stop on the first finger's base
    joint (hit at 0.0342 s, the clock restarted there): the core samples the law's
    elements itself -- Python's __call__ is not called once -- and the run equals the
    same law called from the core per sample (a subclass, which has no held law) to 1e-12
    in tau, q and v, with the same events. Wrong input: a law sampled every step (no
    controller period) differs by > 1e-6."""
    from pfaff.simulate.limits import JointLimit, simulate_limited

    calls = {"n": 0}
    call = BlindGrasp.__call__

    def counted(self, t, rec):
        calls["n"] += 1
        return call(self, t, rec)

    class Same(BlindGrasp):  # the parent's law, called from Python per sample
        def __call__(self, t, rec):
            return BlindGrasp.__call__(self, t, rec)  # counted

    monkeypatch.setattr(BlindGrasp, "__call__", counted)
    mech, _, cset, q0 = _grasp("ellipse")
    stop = [JointLimit(0, -10.0, 1.88, 0.0)]

    def run(cls, control_dt=1e-3):
        opt = SimOptions(dt=2.5e-4, control_dt=control_dt, stage_projection=False)
        law = cls(("f1_tip", "f2_tip"), rf.FINGER_JOINTS, RADII, 1.0, 0.008, 200.0, 8, k_q=0.01)
        return simulate_limited(cset, q0, np.zeros(8), 0.05, stop, opt, controller=law)

    got = run(BlindGrasp)
    assert calls["n"] == 0
    ref = run(Same)
    assert calls["n"] > 40  # the subclass: one call per sample
    assert [(e.kind, round(e.t, 9)) for e in got.events] == [
        (e.kind, round(e.t, 9)) for e in ref.events
    ]
    assert len(got.events) >= 1
    a, b = got.trajectory.arrays(), ref.trajectory.arrays()
    for key in ("tau", "q", "v"):
        assert _rel(a[key], b[key]) <= 1e-12, key
    every = run(BlindGrasp, 2.5e-4).trajectory.arrays()
    assert _rel(every["tau"], a["tau"]) > 1e-6
