"""Control laws of Aghili Sec. 7 as theorems, each against an independent computation."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pfaff import dynamics as D
from pfaff.constraints import ConstraintSet, PointOnCircle, PointOnPlane, PointsCoincide
from pfaff.control import (
    FrameTask,
    JointTask,
    ProjectedController,
    StackedTask,
    TaskError,
    characteristic_length_weight,
    force_control_torque,
    hybrid_torque,
    min_norm_torque,
    passive_joint_torque,
    pidc_torque,
    task_acceleration,
)
from pfaff.linalg import null_space
from pfaff.mechanism import ModelBuilder, ModelError, load_robot
from pfaff.scenarios import run_scenario


@pytest.fixture(scope="module")
def panda_table():
    """Panda with its tool point on a plane (1 row) at a random state, and a 6-row task."""
    mech = load_robot("panda")
    rng = np.random.default_rng(3)
    q = np.array([0.1, -0.5, 0.2, -2.2, 0.1, 1.8, 0.7]) + rng.uniform(-0.1, 0.1, 7)
    v = rng.uniform(-0.5, 0.5, 7)
    snap0 = mech.compute(q, None, ["panda_hand_tcp"], dynamics=False)
    z = snap0.frames["panda_hand_tcp"].p[2]
    cs = ConstraintSet(mech, [PointOnPlane("panda_hand_tcp", (0, 0, 1), z)])
    snap = mech.compute(q, v, cs.frames)
    ev = cs.evaluate(snap)
    v = v - np.linalg.pinv(ev.A) @ (ev.A @ v)  # an admissible velocity
    snap = mech.compute(q, v, cs.frames)
    return mech, cs, snap, cs.evaluate(snap), rng


def _admissible_acc(ev, snap, rng):
    proj = D.projection(ev.A, ev.drift)
    N = null_space(ev.A)
    return proj, N, proj.Cv + N @ rng.normal(size=N.shape[1])


def test_pidc_is_the_minimum_norm_torque_for_the_motion(panda_table):
    mech, cs, snap, ev, rng = panda_table
    proj, _, u_p = _admissible_acc(ev, snap, rng)
    f = pidc_torque(snap.M, snap.h, proj.P, u_p)
    # it produces the acceleration u_p (Aghili eq. 22) ...
    a = D.direct_dynamics(snap.M, snap.h, f, proj)
    np.testing.assert_allclose(a, u_p, atol=1e-9 * (1 + np.abs(u_p).max()))
    # ... and no torque producing u_p is shorter (least squares over lambda, eq. 48)
    assert np.linalg.norm(f) == pytest.approx(
        min_norm_torque(snap.M, snap.h, ev.A, u_p), rel=1e-12
    )
    # any other torque with the same motion is longer by Pythagoras
    other = f + ev.A.T @ np.array([3.0])
    assert np.linalg.norm(other) > np.linalg.norm(f)
    np.testing.assert_allclose(D.direct_dynamics(snap.M, snap.h, other, proj), u_p, atol=1e-8)


def test_weighted_pidc_minimises_the_weighted_norm():
    """Mixed units (Sec. 7.2): a planar body (x [m], y [m], theta [rad]) on a circle."""
    b = ModelBuilder(gravity=(0, -9.81, 0))
    b.add_planar_body("body", 2.0, 0.05)
    mech = b.build()
    cs = ConstraintSet(mech, [PointOnCircle("body", (0, 0), 0.7, point=(0.1, 0.0, 0.0))])
    rng = np.random.default_rng(5)
    q = np.array([0.6, 0.2, 0.4])
    from pfaff.simulate import project_state

    q, v = project_state(cs, q, rng.normal(size=3))
    snap = mech.compute(q, v, cs.frames)
    ev = cs.evaluate(snap)
    proj, _, u_p = _admissible_acc(ev, snap, rng)
    for kappa in (0.05, 1.0, 20.0):
        W = characteristic_length_weight([True, True, False], kappa)
        f = pidc_torque(snap.M, snap.h, proj.P, u_p, ev.A, W)
        np.testing.assert_allclose(D.direct_dynamics(snap.M, snap.h, f, proj), u_p, atol=1e-9)
        wnorm = np.sqrt(f @ np.linalg.solve(W, f))
        assert wnorm == pytest.approx(min_norm_torque(snap.M, snap.h, ev.A, u_p, W), rel=1e-10)
    # the unweighted minimum differs from the weighted one: units matter
    f1 = pidc_torque(snap.M, snap.h, proj.P, u_p)
    f2 = pidc_torque(
        snap.M, snap.h, proj.P, u_p, ev.A, characteristic_length_weight([1, 1, 0], 0.01)
    )
    assert np.abs(f1 - f2).max() > 1e-2 * np.abs(f1).max()


def test_task_acceleration_is_admissible_and_realises_the_task(panda_table):
    mech, cs, snap, ev, rng = panda_table
    proj = D.projection(ev.A, ev.drift)
    from pfaff.control import StackedTask

    task = StackedTask([FrameTask("panda_hand_tcp", "xy", orientation=True), JointTask([2])])
    task.bind(mech)
    J, Jd = task.jacobian(snap), task.drift(snap)
    ref = rng.normal(size=6)
    u_p, s = task_acceleration(J, Jd, null_space(ev.A), proj.Cv, ref)
    assert s > 1e-3
    np.testing.assert_allclose(ev.A @ u_p, -ev.drift, atol=1e-10)
    np.testing.assert_allclose(J @ u_p + Jd, ref, atol=1e-9)


def test_hybrid_control_gives_the_force_and_the_motion(panda_table):
    mech, cs, snap, ev, rng = panda_table
    proj, _, u_p = _admissible_acc(ev, snap, rng)
    u_F = ev.A.T @ np.array([-7.5])
    f = hybrid_torque(snap.M, snap.h, proj, u_p, u_F)
    # Aghili's law (45)+(51) equals the direct inverse dynamics M u_p + h + u_F
    np.testing.assert_allclose(f, snap.M @ u_p + snap.h + u_F, atol=1e-9)
    sol = D.solve_constrained(snap.M, snap.h, f, ev.A, ev.drift)
    np.testing.assert_allclose(sol.a, u_p, atol=1e-9)
    np.testing.assert_allclose(sol.F, u_F, atol=1e-9)
    # the force channel does not disturb the motion channel: P f_perp = 0
    f_par = pidc_torque(snap.M, snap.h, proj.P, u_p)
    f_perp = force_control_torque(snap.M, snap.h, proj, f_par, u_F)
    np.testing.assert_allclose(proj.P @ f_perp, 0.0, atol=1e-10)


def test_passive_joints_carry_no_torque_and_keep_the_motion():
    """A 3-joint planar arm whose tip is pinned (2 rows): 1 DOF; only joint 1 actuated."""
    from pfaff.mechanism import PlanarLink, planar_chain

    mech = planar_chain([PlanarLink(0.5, 1.0), PlanarLink(0.4, 1.0), PlanarLink(0.3, 1.0)])
    q = np.array([0.3, 0.9, -0.6])
    tip = mech.compute(q, None, ["arm_tip"], dynamics=False).frames["arm_tip"].p
    cs = ConstraintSet(
        mech, [PointsCoincide("arm_tip", target=tip, directions=[(1, 0, 0), (0, 1, 0)])]
    )
    rng = np.random.default_rng(2)
    snap = mech.compute(q, np.zeros(3), cs.frames)
    ev = cs.evaluate(snap)
    proj, N, u_p = _admissible_acc(ev, snap, rng)
    f_par = pidc_torque(snap.M, snap.h, proj.P, u_p)
    f, sigma, resid = passive_joint_torque(proj.P, np.array([0]), f_par, N)
    assert sigma > 1e-3  # condition (64) holds
    assert resid <= 1e-12 and np.abs(f[1:]).max() <= 1e-12
    np.testing.assert_allclose(D.direct_dynamics(snap.M, snap.h, f, proj), u_p, atol=1e-9)
    # eq. (63): the added part lies in N(A)^perp
    np.testing.assert_allclose(proj.P @ (f - f_par), 0.0, atol=1e-12)
    # with joint 1 passive instead of actuated... actuate only joint 3 at a config where
    # N(A) is orthogonal to the actuated axis, (64) fails: use the free (unconstrained) arm
    P_free = np.eye(3)
    _, sigma_free, resid_free = passive_joint_torque(P_free, np.array([0]), np.ones(3))
    assert sigma_free == 0.0 and resid_free > 0.5  # no constraint: passive joints uncontrollable


def test_controller_refuses_bad_input(panda_table):
    mech, cs, snap, ev, _ = panda_table
    ref = lambda t: (np.zeros(6), np.zeros(6), np.zeros(6))
    from pfaff.control import StackedTask

    task = StackedTask([FrameTask("panda_hand_tcp", "xy", orientation=True), JointTask([2])])
    with pytest.raises(ValueError, match="kp must be > 0"):
        ProjectedController(cs, task, ref, kp=-1.0)
    with pytest.raises(ValueError, match=r"kd must be a scalar or have shape \(6,\)"):
        ProjectedController(cs, task, ref, kd=[1.0, 2.0])
    with pytest.raises(ModelError, match="unknown joint 'elbow'.*valid joints"):
        ProjectedController(cs, task, ref, actuated=["panda_joint1", "elbow"])
    # 2 task coordinates for a 6-dimensional N(A): Lambda cannot span N(A)
    small = ProjectedController(cs, FrameTask("panda_hand_tcp", "xy"), lambda t: (0, 0, 0))
    with pytest.raises(TaskError, match="N\\(A\\) has dimension 6"):
        small.check(snap.q)
    # x, y and z of the tool with z fixed by the plane: J_theta N is singular
    bad = StackedTask([FrameTask("panda_hand_tcp", "xyz", orientation=True)])
    with pytest.raises(TaskError, match="do not parametrise N\\(A\\)"):
        ProjectedController(cs, bad, ref).check(snap.q)


def test_slider_crank_pidc_figures():
    s = run_scenario("slider-crank-pidc")
    m = s["metrics"]
    assert s["status"] == "ok"
    assert s["engine"] == "core"  # the Pinocchio model by default
    assert m["max_tracking_error_after"] <= 1e-3
    assert m["passive_torque_max"] <= 1e-9
    assert s["max_constraint_violation"] <= 1e-10
    assert m["singular_crossings"] >= 2
    assert m["uncontrollable_samples"] == 0


@pytest.mark.parametrize("task", ["q1", "slider_x"])
def test_slider_crank_pidc_closed_form_witness(task):
    """The closed form of eq. 68 on NumPy and the Pinocchio chain on the core: the same
    controlled motion, torques and metrics (the closed form runs on the core too by
    default: tests/parity/test_core_plant.py holds the two engines to each other)."""
    from pfaff.scenarios import get_scenario
    from pfaff.simulate.options import use_engine

    sc = get_scenario("slider-crank-pidc")
    runs = []
    for model, engine in (("closed-form", "numpy"), ("pinocchio", "auto")):
        with use_engine(engine):
            runs.append(sc.func(sc.resolve({"model": model, "task": task, "t_end": "1.5"})))
    assert [r.trajectory.engine for r in runs] == ["numpy", "core"]
    a, b = (r.trajectory.arrays() for r in runs)
    np.testing.assert_allclose(a["q"], b["q"], atol=1e-9)  # rad
    np.testing.assert_allclose(a["v"], b["v"], atol=1e-8)  # rad/s
    np.testing.assert_allclose(a["tau"], b["tau"], atol=1e-6)  # N m
    ma, mb = (r.metrics for r in runs)
    assert ma.keys() == mb.keys()
    for key in ("uncontrollable_samples", "singular_crossings", "decoupled"):
        assert ma[key] == mb[key], key
    for key in ("rms_tracking_error", "max_tracking_error_after"):
        assert abs(ma[key] - mb[key]) <= 1e-9, key  # rad
    assert abs(ma["decoupling_residual_max"] - mb["decoupling_residual_max"]) <= 1e-9
    assert max(ma["passive_torque_max"], mb["passive_torque_max"]) <= 1e-9  # N m


def test_planar_arm_force_figures_and_the_coupled_baseline():
    # 3 s hold the worst force drift (pressing 5 N, 1-2.5 s) and the step at 2.5 s
    s = run_scenario("planar-arm-force", {"t_end": "3"})
    m = s["metrics"]
    assert s["status"] == "ok"
    assert m["max_tracking_error_after"] <= 1e-4
    assert m["max_force_error_after"] <= 1e-3
    # what the force sensor reads just before each sample (3.3e-3 N at 250 Hz)
    assert m["max_force_error_before_sample"] <= 1e-3
    assert m["max_force_error_before_sample"] > m["max_force_error_after"]
    assert m["min_contact_force"] > 0
    assert m["min_norm_gap"] <= 1e-8
    assert not m["decoupled"]
    # ignoring the projection couples motion into the force channel
    assert m["baseline_max_force_error_after"] > 100 * m["max_force_error_after"]


def test_panda_table_figures(tmp_path):
    from pfaff.report.output import write_run
    from pfaff.scenarios import execute

    run = execute("panda-table", {"t_end": "2"})
    s, m = run.summary, run.summary["metrics"]
    assert s["status"] == "ok"
    assert m["max_position_error_after"] <= 1e-3
    assert m["max_force_error_after"] <= 1e-2
    assert m["min_contact_force"] > 0
    assert m["min_norm_gap"] <= 1e-8
    # with the contact force prescribed, the torque producing a motion is unique
    assert m["torque_norm_ratio_vs_computed_torque"] == pytest.approx(1.0, abs=1e-3)
    names = {p.name for p in write_run(run, tmp_path)}
    assert {"scene.html", "report.html", "summary.json"} <= names
    assert "scene.html" in (tmp_path / "report.html").read_text()


def test_multiplier_error_bound_eq53(panda_table):
    """Aghili eq. (53): sigma_min(A) |e_lambda| <= |e_F| with e_F = A^T e_lambda."""
    mech, cs, snap, ev, rng = panda_table
    A = np.vstack([ev.A, rng.normal(size=(2, 7))])  # a full-rank 3-row A
    smin = np.linalg.svd(A, compute_uv=False)[-1]
    for _ in range(20):
        e_lam = rng.normal(size=3)
        assert smin * np.linalg.norm(e_lam) <= np.linalg.norm(A.T @ e_lam) * (1 + 1e-12)


def _both_controllers(cs, task, force, **kw):
    """The compiled laws and the NumPy reference, each with its own force-PI state."""
    ref = lambda t: (np.full(task.dim, 0.1) * t, np.full(task.dim, 0.1), np.zeros(task.dim))  # noqa: E731
    make = lambda compiled: ProjectedController(  # noqa: E731
        cs, task, ref, kp=50.0, kd=10.0, force=force, compiled=compiled, **kw
    )
    return make(True), make(False)


@pytest.mark.parametrize("with_force", [False, True])
def test_compiled_laws_equal_the_numpy_laws(with_force):
    """ProjectedController's eq. (45, 46, 51) in one call into pfaff._core equal the
    NumPy laws (pfaff.control.laws) to 1e-10 relative at 30 random states of the Panda
    with its tool on a plane (6-row tasks: J N square, task_regular 1), and in tau, u_p
    and every signal over consecutive samples (the force PI carries state). 5- and
    7-row tasks (J N not square: task_regular 0, least-squares z) too. The built-in
    tasks (a frame's origin, a point off it, orientation rows, joints, stacked, two
    frames) have their rows compiled as well and equal the tasks' own methods; a
    subclass keeps its rows in Python. A wrong input is caught: the compiled laws fed
    a tool orientation 1e-6 rad off, or a mass matrix 1e-6 off, differ by far more
    than the tolerance."""
    from pfaff.control import ForceReference
    from pfaff.simulate.record import StepRecord

    mech = load_robot("panda")
    rng = np.random.default_rng(21)
    z = mech.compute(mech.neutral(), None, ["panda_hand_tcp"], dynamics=False)
    cs = ConstraintSet(
        mech, [PointOnPlane("panda_hand_tcp", (0, 0, 1), z.frames["panda_hand_tcp"].p[2])]
    )
    force = ForceReference(lambda t: np.array([-5.0 - t])) if with_force else None
    tcp = (0.01, -0.02, 0.05)  # a point off the frame's origin

    class PythonTask(FrameTask):  # not a built-in type: its rows are evaluated in Python
        pass

    tasks = [
        FrameTask("panda_hand_tcp", "xy", orientation=True),
        JointTask([0, 1, 2, 3, 4, 5, 6]),
        StackedTask([FrameTask("panda_hand_tcp", "xy", True, point=tcp), JointTask([2])]),
        StackedTask(
            [
                FrameTask("panda_link5", "y"),
                FrameTask("panda_hand_tcp", "xyz", point=tcp),
                JointTask([0, 6]),
            ]
        ),  # fmt: skip
        PythonTask("panda_hand_tcp", "xy", orientation=True),
    ]
    for task in tasks:
        fast, slow = _both_controllers(cs, task, force)
        # the built-in tasks' rows are compiled too; the subclass's stay in Python
        assert (fast._task_frames is None) == isinstance(task, PythonTask)
        worst = 0.0
        for k in range(30):
            q = mech.integrate(mech.neutral(), rng.uniform(-1.0, 1.0, mech.nv))
            v = rng.uniform(-1.0, 1.0, mech.nv)
            snap = mech.compute(q, v, fast.frames)
            lam = rng.uniform(-10.0, 10.0, cs.dim)
            rec = StepRecord.at(
                cs, snap, sensors={"lambda": lam, "F": cs.evaluate(snap).A.T @ lam}
            )
            t = 0.01 * k
            a, b = fast(t, rec), slow(t, rec)
            worst = max(worst, np.abs(a - b).max() / max(1.0, np.abs(b).max()))
            for key, val in slow.signals.items():
                np.testing.assert_allclose(fast.signals[key], val, rtol=1e-10, atol=1e-10)
        assert worst <= 1e-10, (task.names, worst)
        assert fast.signals["task_regular"] == (1.0 if task.dim == 6 else 0.0)
    bad = ProjectedController(cs, tasks[2], lambda t: (np.zeros(6), np.zeros(6), np.zeros(6)))
    good = bad(0.0, rec)
    R = rec.snap.frames["panda_hand_tcp"].R
    R0 = R.copy()
    R[:] = R0 @ pin.exp3(np.array([0.0, 1e-6, 0.0]))  # the compiled rows read the frames
    assert np.abs(bad(0.0, rec) - good).max() >= 1e-5
    R[:] = R0
    rec.snap.M = rec.snap.M * (1 + 1e-6)
    assert np.abs(bad(0.0, rec) - good).max() >= 1e-5


def test_panda_table_runs_equal_with_compiled_and_numpy_laws(monkeypatch):
    """Whole panda-table runs (hybrid PIDC + force control on the core, 1 s) with the
    compiled laws and with the NumPy laws agree in q and v to 1e-9."""
    from pfaff import core
    from pfaff.scenarios.runner import execute

    over = {"t_end": "1", "baseline": "false"}
    fast = execute("panda-table", over).arrays
    monkeypatch.setattr(core, "control_kernel", lambda: None)
    slow = execute("panda-table", over).arrays
    for key in ("q", "v", "tau", "lambda"):
        scale = max(1.0, np.abs(slow[key]).max())
        assert np.abs(fast[key] - slow[key]).max() <= 1e-9 * scale, key
