"""Friction at a sphere's and a capsule's contact on the compiled loop: the material point
at the contact sticks (rolls without slipping: the Pfaffian rows of
pfaff.contact.rolling) or slips (Coulomb's force at that point). Against the closed forms
(pfaff.contact.closed_forms.spin_up, roll_on_incline): a ball launched along a floor
spins up and rolls from t* = 2 v0 / (7 mu g) at 5/7 v0; a ball on an incline rolls at
5/7 g sin or slides and spins up; a capsule across an incline rolls at
g sin / (1 + I / (m r^2)); a ball landing with a horizontal speed rolls at once. The rows
and their drift against the NumPy reference and against finite differences along a
motion (a point fixed in the body would miss a term); wrong inputs caught."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import pfaff
from pfaff import core
from pfaff.constraints.base import ConstraintSet
from pfaff.constraints.library import PointOnPlane
from pfaff.contact.closed_forms import roll_on_incline, spin_up
from pfaff.contact.rolling import (
    RollingPoint,
    contact_point_jacobian,
    rolling_constraints,
    tangent_basis,
)
from pfaff.mechanism.base import ModelError

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

MODELS = Path(__file__).parents[2] / "models" / "contact"
G = 9.81
DT = 1e-3
ALPHA = math.radians(20.0)
DOWN = np.array([math.cos(ALPHA), 0.0, -math.sin(ALPHA)])
NORMAL = np.array([math.sin(ALPHA), 0.0, math.cos(ALPHA)])
V0, MU_FLOOR, R_BALL = 2.0, 0.3, 0.1  # ball_roll.xml
#: the step of the incline's figures: a ball (capsule) turning at up to 24 (45) rad/s has
#: a body-frame velocity that RK4 integrates to 1.4e-9 (1.4e-8) m in 1 s at 1 ms, 6e-12
#: (6e-11) m at 0.25 ms (fourth order: 16 times less per halving)
FINE = 2.5e-4


def _file(tmp_path: Path, name: str, mu: float | None = None) -> Path:
    if mu is None:
        return MODELS / name
    path = tmp_path / f"{mu:g}_{name}"
    path.write_text((MODELS / name).read_text().replace('"0.5 0.005', f'"{mu} 0.005'))
    return path


def _sim(path: Path, dt: float = DT, **kw) -> pfaff.Simulator:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ball or a capsule with friction: no warning
        system = pfaff.load(path, contact=True)
    return pfaff.Simulator(system, dt=dt, **kw)


def _world_v(sim) -> tuple[np.ndarray, np.ndarray]:
    """The free body's linear velocity of its origin and angular velocity, world axes."""
    Rb = _rot(sim.q[3:7])  # Pinocchio's quaternion: x, y, z, w
    return Rb @ sim.v[:3], Rb @ sim.v[3:6]


def _rot(quat) -> np.ndarray:
    """The rotation matrix of a quaternion (x, y, z, w: Pinocchio's order)."""
    return Rotation.from_quat(quat).as_matrix()


def test_ball_launched_along_a_floor_spins_up_and_rolls_from_the_closed_form_time():
    sim = _sim(MODELS / "ball_roll.xml")
    t_star, v_star = spin_up(V0, MU_FLOOR, 0.4, G)
    assert abs(t_star - 2 * V0 / (7 * MU_FLOOR * G)) < 1e-15 and v_star == V0 * 5 / 7
    sim.step(n=1000)
    ev = [e for e in sim.events if e.kind == "stick"]
    assert len(ev) == 1 and abs(ev[0].t - t_star) < 1e-9, [(e.t, e.kind) for e in sim.events]
    # the start touching (an impact at rest, at t = 0), then the stop of the slip
    assert [(e.kind, e.t) for e in sim.events][0] == ("impact", 0.0)
    assert [e.kind for e in sim.events] == ["impact", "stick"]
    v, w = _world_v(sim)
    assert abs(v[0] - v_star) < 1e-9 and abs(v[0] - R_BALL * w[1]) < 1e-9
    x = V0 * t_star - 0.5 * MU_FLOOR * G * t_star**2 + v_star * (1.0 - t_star)
    assert abs(sim.q[0] - x) < 1e-9
    assert abs(sim.q[2] - R_BALL) < 1e-12  # no penetration
    (c,) = sim.contacts
    assert c.mode == "stick" and abs(c.normal_force - G) < 1e-9 and c.tangent_force < 1e-9
    assert np.linalg.norm(np.array(c.point) - [sim.q[0], sim.q[1], 0.0]) < 1e-12
    # the energy: constant once it rolls; friction's work before t* is what it lost,
    # -mu m g (v0 t* / 2) = -m v0^2 / 7 (the slip v - r w falls linearly to 0)
    tr = sim.record()
    t, e = np.asarray(tr.t), np.asarray(tr.series("energy"))
    fw = np.asarray(tr.series("force_work"))
    assert abs(fw[-1] + V0**2 / 7) < 1e-9
    assert abs(e[-1] - e[0] + V0**2 / 7) < 1e-9
    rolling = t > t_star + DT
    # (RK4 integrates the body-frame velocity of a turning ball: 1e-10 J in 1 s)
    assert np.ptp(e[rolling]) < 1e-9 and np.ptp(fw[rolling]) < 1e-12
    rest = np.asarray(tr.series("work")) + fw + np.asarray(tr.series("correction_energy"))
    assert np.max(np.abs(e - e[0] - rest)) < 1e-9


def test_sliding_ball_friction_acts_at_its_contact_point():
    # while it slides the friction -mu m g x at the contact point (r below the centre)
    # decelerates it and spins it up: alpha = mu g / (2/5 r) about y
    sim = _sim(MODELS / "ball_roll.xml")
    sim.step(n=100)
    (c,) = sim.contacts
    assert c.mode == "slip"
    assert np.linalg.norm(np.array(c.tangent) - [-MU_FLOOR * G, 0, 0]) < 1e-9
    v, w = _world_v(sim)
    assert abs(v[0] - (V0 - MU_FLOOR * G * 0.1)) < 1e-9
    assert abs(w[1] - MU_FLOOR * G / (0.4 * R_BALL) * 0.1) < 1e-9


def _down(sim, q0) -> float:
    return float((sim.q[:3] - q0[:3]) @ DOWN)


def test_ball_on_an_incline_rolls_at_five_sevenths_g_sin(tmp_path):
    sim = _sim(_file(tmp_path, "ball_incline.xml"), FINE)
    rolls, a, _ = roll_on_incline(ALPHA, 0.5, 0.4, G)
    assert rolls and abs(a - 5 / 7 * G * math.sin(ALPHA)) < 1e-15
    q0 = sim.q.copy()
    sim.step(n=4000)
    assert abs(_down(sim, q0) - 0.5 * a) < 1e-9
    # the file's position (rounded to 17 digits) starts the ball 8e-18 m above the
    # plane: it lands 1.3e-9 s later, plastic, and rolls from there
    assert [e.kind for e in sim.events] == ["impact"] and sim.events[0].t < 1e-8
    assert [c.mode for c in sim.contacts] == ["stick"]
    (c,) = sim.contacts  # the friction that rolls it: 2/7 m g sin, up the slope
    assert np.linalg.norm(np.array(c.tangent) + 2 / 7 * G * math.sin(ALPHA) * DOWN) < 1e-9
    v, w = _world_v(sim)
    assert abs(v @ DOWN - a) < 1e-9 and abs(v @ DOWN - R_BALL * w[1]) < 1e-9
    assert abs((sim.q[:3] - q0[:3]) @ NORMAL) < 1e-12


def test_ball_above_the_rolling_limit_slides_and_spins_up(tmp_path):
    mu = 0.05  # tan 20 deg = 0.364 > 7/2 mu = 0.175
    sim = _sim(_file(tmp_path, "ball_incline.xml", mu), FINE)
    rolls, a, kra = roll_on_incline(ALPHA, mu, 0.4, G)
    assert not rolls and abs(a - G * (math.sin(ALPHA) - mu * math.cos(ALPHA))) < 1e-15
    q0 = sim.q.copy()
    sim.step(n=2000)
    w_half = _world_v(sim)[1][1]
    sim.step(n=2000)
    assert abs(_down(sim, q0) - 0.5 * a) < 1e-9
    _, w = _world_v(sim)
    alpha = 5 * mu * G * math.cos(ALPHA) / (2 * R_BALL)
    assert abs(alpha - kra / (0.4 * R_BALL)) < 1e-12
    # the spin-up rate over the second half second (the landing 1.3e-9 s after the
    # start, a sticking impact, leaves the ball 1.6e-8 rad/s ahead of alpha t)
    assert abs((w[1] - w_half) / 0.5 - alpha) < 1e-9
    assert abs(w[1] - alpha) < 1e-7
    kinds = [(e.kind, e.t) for e in sim.events]
    assert [k for k, _ in kinds] == ["impact", "slip"] and kinds[1][1] < 1e-8
    assert [c.mode for c in sim.contacts] == ["slip"]


def _capsule_axis_inertia(path: Path) -> tuple[float, float, float]:
    """(I about the capsule's axis y, m, r) from MuJoCo's compiled model."""
    m = mujoco.MjModel.from_xml_path(str(path))
    b = 1
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, m.body_iquat[b])
    R = R.reshape(3, 3)
    inertia = R @ np.diag(m.body_inertia[b]) @ R.T
    return float(inertia[1, 1]), float(m.body_mass[b]), float(m.geom_size[1][0])


def test_capsule_across_an_incline_rolls_at_the_closed_form_rate():
    path = MODELS / "capsule_incline.xml"
    I_axis, m, r = _capsule_axis_inertia(path)
    k = I_axis / (m * r * r)
    rolls, a, _ = roll_on_incline(ALPHA, 0.5, k, G)
    assert rolls and 0.4 < k < 0.5  # a capsule rolls between a ball and a cylinder
    sim = _sim(path, FINE)
    q0 = sim.q.copy()
    sim.step(n=4000)
    assert abs(_down(sim, q0) - 0.5 * a) < 1e-9
    # the plain slide (k = 0) would be 3.5 times further: the rolling rows hold
    assert abs(_down(sim, q0) - 0.5 * G * math.sin(ALPHA)) > 0.3
    assert len(sim.contacts) == 2 and all(c.mode == "stick" for c in sim.contacts)
    assert abs(sum(c.normal_force for c in sim.contacts) - m * G * math.cos(ALPHA)) < 1e-9
    assert abs(sim.q[1] - q0[1]) < 1e-12  # along its axis: no drift


def test_ball_landing_with_a_horizontal_speed_rolls_at_once(tmp_path):
    # dropped from 1 cm with 1 m/s along x and no spin (e = 0, mu = 1): the sticking
    # impulse at the contact point, 2/7 m vx along -x, is inside the cone
    # (mu m vz = 0.44 N s): it rolls from the impact on at 5/7 vx
    xml = (MODELS / "ball_roll.xml").read_text()
    xml = xml.replace('qpos="0 0 0.1 1', 'qpos="0 0 0.11 1').replace('qvel="2 0', 'qvel="1 0')
    path = tmp_path / "landing.xml"
    path.write_text(xml.replace('"0.3 0.005', '"1 0.005'))
    sim = _sim(path)
    sim.step(n=200)
    t1 = math.sqrt(2 * 0.01 / G)
    kinds = [(e.kind, e.t) for e in sim.events]
    assert [k for k, _ in kinds] == ["impact"] and abs(kinds[0][1] - t1) < 1e-9
    v, w = _world_v(sim)
    assert abs(v[0] - 5 / 7) < 1e-9 and abs(v[0] - R_BALL * w[1]) < 1e-9
    assert abs(sim.q[0] - (t1 + 5 / 7 * (0.2 - t1))) < 1e-9
    assert [c.mode for c in sim.contacts] == ["stick"]


# -- the rows against the NumPy reference and against finite differences --------------


def _held_ball(tmp_path):
    """A rolling ball's held system (its normal row and two rolling rows), the frame and
    the held point: the core's rows at any state."""
    sim = _sim(_file(tmp_path, "ball_incline.xml"))
    sim.step(n=5)
    held = sim._limited.held_system(sim.q, sim.v)
    frame = sim.system.contacts.frames[0]
    return sim, held, frame


def _states(mech, rng, n):
    for _ in range(n):
        q = np.concatenate([rng.normal(size=3), rng.normal(size=4)])
        q[3:] /= np.linalg.norm(q[3:])
        yield q, rng.normal(size=mech.nv)


def _reference(mech, frame, q, v):
    n = NORMAL
    cons = [PointOnPlane(frame, n, offset=R_BALL)]
    cons += rolling_constraints(frame, (0.0, 0.0, 0.0), n, R_BALL)
    cset = ConstraintSet(mech, cons)
    return cset.evaluate(mech.compute(q, v, cset.frames, extras=False))


@pytest.mark.parametrize("seed", range(3))
def test_rolling_rows_and_drift_match_the_numpy_reference(tmp_path, seed):
    sim, held, frame = _held_ball(tmp_path)
    mech = sim.system.mechanism
    rng = np.random.default_rng(seed)
    for q, v in _states(mech, rng, 6):
        _, _, A, drift, phi = held.evaluate(q, v)
        ev = _reference(mech, frame, q, v)
        assert A.shape == (3, 6) and phi.shape == (1,)
        scale = max(1.0, float(np.abs(v).max()) ** 2)
        assert np.max(np.abs(A - ev.A)) < 1e-12
        assert np.max(np.abs(drift - ev.drift)) < 1e-12 * scale
        assert abs(phi[0] - ev.phi[0]) < 1e-12


def test_rolling_drift_is_the_rate_of_a_v_along_a_motion(tmp_path):
    # d/dt (A(q(t)) v) along q(t) = integrate(q0, t v), v fixed: the drift; the drift of
    # the body point at the contact (fixed in the body) differs by t . w x (w x l)
    sim, held, frame = _held_ball(tmp_path)
    mech = sim.system.mechanism
    rng = np.random.default_rng(7)
    h = 1e-5
    for q, v in _states(mech, rng, 5):
        qp, qm = mech.integrate(q, h * v), mech.integrate(q, -h * v)
        rate = (held.evaluate(qp, v)[2] @ v - held.evaluate(qm, v)[2] @ v) / (2 * h)
        drift = held.evaluate(q, v)[3]
        scale = max(1.0, float(np.abs(v).max()) ** 2)
        assert np.max(np.abs(rate - drift)) < 1e-7 * scale
        # a point fixed in the body: the wrong drift is caught by the differences
        fr = mech.compute(q, v, (frame,), extras=False).frame(frame)
        w = fr.J[3:] @ v
        lever = -R_BALL * NORMAL
        fixed = fr.point_drift(fr.R.T @ lever, v)
        t1, t2 = tangent_basis(NORMAL)
        wrong = np.array([t1 @ fixed, t2 @ fixed])
        miss = np.cross(w, np.cross(w, lever))
        assert np.max(np.abs(rate[1:] - wrong)) > 1e-4
        assert np.max(np.abs(wrong - drift[1:] - [t1 @ miss, t2 @ miss])) < 1e-12 * scale


def test_rolling_rows_derivatives_match_the_references(tmp_path):
    # the core's derive_RollingPoint against the NumPy derivatives (central differences
    # of the reference's rows) and against differences of the core's own dynamics
    from tests.unit.dynamics.test_derivatives_core_kinds import _agree

    sim, _, frame = _held_ball(tmp_path)

    def make(rng, q):
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        return rolling_constraints(frame, rng.normal(size=3) * 0.05, n, 0.1)

    worst_np, worst_fd = _agree(make, sim.system.mechanism, n=4)
    assert worst_np < 1e-5 and worst_fd < 1e-6


def test_slip_at_the_contact_point_matches_the_numpy_reference():
    # a sliding ball's normal force and friction against pfaff.contact.friction's solve
    # with the Jacobian of the material point at the contact
    from pfaff.contact.friction import SlipPoint, slip_dynamics, slip_rows

    sim = _sim(MODELS / "ball_roll.xml")
    sim.step(n=30)
    mech = sim.system.mechanism
    frame = sim.system.contacts.frames[0]
    rng = np.random.default_rng(3)
    for _ in range(3):
        tau = np.concatenate([rng.normal(size=2), [0.0], 0.05 * rng.normal(size=3)])
        sim.step(tau=tau, n=5)
        (c,) = sim.contacts
        assert c.mode == "slip"
        q, v = sim.q, sim.v
        n = np.array([0.0, 0.0, 1.0])
        cset = ConstraintSet(mech, [PointOnPlane(frame, n, offset=R_BALL)])
        snap = mech.compute(q, v, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        Jp = contact_point_jacobian(snap.frame(frame), np.zeros(3), -R_BALL * n)
        vt = Jp @ v
        vt -= n * (n @ vt)
        p = SlipPoint(0, Jp, n, MU_FLOOR, vt / np.linalg.norm(vt))
        W = slip_rows(ev.A, v, [p])
        f = tau - snap.h
        a, lam = slip_dynamics(snap.M, f, ev.A, ev.drift, W, sim.system.rank_tol)
        assert abs(c.normal_force + lam[0]) < 1e-9
        want = MU_FLOOR * lam[0] * vt / np.linalg.norm(vt)
        assert np.linalg.norm(np.array(c.tangent) - want) < 1e-9
        got = sim._limited.held_system(q, v).solve(q, v, tau)[0]
        assert np.max(np.abs(got - a)) < 1e-9
        # the force at the centre (the held point) would give the ball no torque: caught
        Jc = snap.frame(frame).point_jacobian(None)
        wrong = SlipPoint(0, Jc, n, MU_FLOOR, p.s0)
        a_bad, _ = slip_dynamics(snap.M, f, ev.A, ev.drift, slip_rows(ev.A, v, [wrong]))
        assert np.max(np.abs(got - a_bad)) > 10.0  # mu g / (2/5 r) = 74 rad/s^2


def test_bad_rolling_inputs_are_refused():
    with pytest.raises(ModelError, match="radius must be a finite number > 0"):
        rolling_constraints("ball", (0, 0, 0), (0, 0, 1), -0.1)
    with pytest.raises(ModelError, match="normal must be a unit vector"):
        rolling_constraints("ball", (0, 0, 0), (0, 0, 2), 0.1)
    with pytest.raises(ModelError, match="rolling direction must be non-zero"):
        RollingPoint("ball", (0, 0, 0), (0, 0, -0.1))
    with pytest.raises(ModelError, match="lever must be 3 finite numbers"):
        RollingPoint("ball", (1, 0, 0), (0, float("nan"), -0.1))
    with pytest.raises(ValueError, match="mu must be a finite number > 0"):
        spin_up(1.0, 0.0)
    with pytest.raises(ValueError, match="alpha must be in"):
        roll_on_incline(2.0, 0.5)
    t1, t2 = tangent_basis((0.0, 0.0, 1.0))
    assert np.allclose(np.cross(t1, t2), (0, 0, 1), atol=1e-15)


def _mujoco(path: Path, sub=None) -> tuple[mujoco.MjModel, mujoco.MjData, np.ndarray]:
    xml = path.read_text()
    if sub:
        xml = xml.replace(*sub)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    q0 = d.qpos[:3].copy()
    for _ in range(1000):
        mujoco.mj_step(m, d)
    return m, d, q0


def test_mujoco_figures_beside_the_closed_forms():
    # MuJoCo's soft contact (condim 3, default solref) on the same files: its ball rolls
    # too, near the closed forms: 5/7 v0 within 0.1 mm/s at 1 s, 1.3 mm further down the
    # incline; sliding, its spin lags by 2 mrad/s... within these bounds
    _, d, _ = _mujoco(MODELS / "ball_roll.xml")
    assert abs(d.qvel[0] - V0 * 5 / 7) < 1e-3
    _, d, q0 = _mujoco(MODELS / "ball_incline.xml")
    want = 0.5 * roll_on_incline(ALPHA, 0.5)[1]
    assert 1e-4 < (d.qpos[:3] - q0) @ DOWN - want < 3e-3
