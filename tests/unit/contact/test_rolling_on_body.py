"""Friction at a sphere's and a capsule's contact with a moving body on the compiled loop:
the material point at the contact sticks relative to the other body's material point
there (rolls on it: RollingPoint rows with a plane body, pfaff.contact.rolling) or slips
against it (Coulomb's force at that point, the opposite on the other body). Against the
closed forms (pfaff.contact.closed_forms.plank_spin_up, pushed_plank): a ball or a
capsule launched along a plank that slides freely spins up, pushes the plank on and
rolls from t* on, the momentum kept; a ball on a pushed plank rolls back on it at
2/7 of its acceleration, or slips. The rows and their drift against the NumPy reference
and against differences along a motion (the world plane's drift is caught); the slipping
forces against the NumPy solve; wrong inputs caught."""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import pfaff
from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnBodyPlane
from pfaff.contact.closed_forms import plank_spin_up, pushed_plank
from pfaff.contact.friction import SlipPoint, slip_dynamics, slip_rows
from pfaff.contact.rolling import RollingPoint, contact_point_jacobian, rolling_constraints
from pfaff.derivatives import forward_dynamics_derivatives
from pfaff.mechanism.base import ModelError

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

MODELS = Path(__file__).parents[2] / "models" / "contact"
G, DT = 9.81, 1e-3
V0, MU, M, MP = 2.0, 0.3, 1.0, 2.0  # ball_plank.xml, capsule_plank.xml
R_BALL, K_BALL = 0.1, 0.4
#: the step of the launched runs' figures: RK4 on the turning body's body-frame velocity
#: leaves 1.4e-9 rad/s (a ball) and 3.6e-8 rad/s (a capsule) in 1 s at 1 ms, 5e-12 and
#: 1e-10 at 0.25 ms (fourth order)
FINE = 2.5e-4


def _sim(name: str, keyframe: str = "launched", dt: float = DT) -> pfaff.Simulator:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a round geom on a moving body: no warning now
        system = pfaff.load(MODELS / name, keyframe=keyframe, contact=True)
    return pfaff.Simulator(system, dt=dt)


def _rot(quat) -> np.ndarray:
    """The rotation matrix of a quaternion (x, y, z, w: Pinocchio's order)."""
    return Rotation.from_quat(quat).as_matrix()


def _state(q, v) -> tuple[float, float, float, float, float]:
    """(x_p, v_p, x_s, v_s, w_y): the plank's slide and speed, the round body's x, its
    speed along x and its spin about y (world axes)."""
    R = _rot(q[4:8])
    return q[0], v[0], q[1], (R @ v[1:4])[0], (R @ v[4:7])[1]


def _axis_inertia(name: str) -> tuple[float, float]:
    """(k, r): the round body's I about y over m r^2, and its radius (MuJoCo's compiler)."""
    m = mujoco.MjModel.from_xml_path(str(MODELS / name))
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, m.body_iquat[2])
    R = R.reshape(3, 3)
    inertia = R @ np.diag(m.body_inertia[2]) @ R.T
    r = float(m.geom_size[1][0])
    return float(inertia[1, 1]) / (float(m.body_mass[2]) * r * r), r


def _launched_miss(sim, k: float, r: float, Mp: float = MP, t_end: float = 1.0) -> float:
    """The largest miss of the launched run's end state, its "stick" time and its
    momentum at every sample from plank_spin_up with inertia ratio k and plank mass Mp
    [m/s, m, s, rad/s, kg m/s]."""
    t_star, vs, rw, vp = plank_spin_up(V0, MU, M, Mp, k, G)
    xs = V0 * t_star - 0.5 * MU * G * t_star**2 + vs * (t_end - t_star)
    xp = 0.5 * MU * M * G / Mp * t_star**2 + vp * (t_end - t_star)
    got = _state(sim.q, sim.v)
    want = (xp, vp, xs, vs, rw / r)
    miss = max(abs(a - b) for a, b in zip(got, want))
    sticks = [e.t for e in sim.events if e.kind == "stick"]
    miss = max(miss, abs(sticks[0] - t_star) if sticks else np.inf)
    tr = sim.record()
    for q, v in zip(tr.series("q"), tr.series("v")):
        _, v_p, _, v_s, _ = _state(q, v)
        miss = max(miss, abs(M * v_s + Mp * v_p - M * V0))
    return miss


@pytest.mark.parametrize("name", ["ball_plank.xml", "capsule_plank.xml"])
def test_round_body_launched_on_a_sliding_plank_spins_up_and_rolls(name):
    k, r = _axis_inertia(name)
    assert (abs(k - K_BALL) < 1e-12) == (name == "ball_plank.xml") and 0.4 <= k < 0.5
    sim = _sim(name, dt=FINE)
    sim.step(n=int(round(1.0 / FINE)))
    assert _launched_miss(sim, k, r) < 1e-9
    assert [e.kind for e in sim.events] == ["impact", "stick"]
    assert all(c.mode == "stick" for c in sim.contacts)
    assert abs(sum(c.normal_force for c in sim.contacts) - M * G) < 1e-9
    assert sum(np.linalg.norm(c.tangent) for c in sim.contacts) < 1e-9  # no force left
    # friction's work is the kinetic energy lost, m v0^2 / 2 less the final state's
    # (the ball's translation and spin, the plank's)
    _, vs, rw, vp = plank_spin_up(V0, MU, M, MP, k, G)
    lost = 0.5 * M * V0**2 - 0.5 * (M * vs**2 + k * M * rw**2 + MP * vp**2)
    tr = sim.record()
    assert abs(tr.series("force_work")[-1] + lost) < 1e-9
    e = np.asarray(tr.series("energy"))
    assert abs(e[-1] - e[0] + lost) < 1e-9
    # the wrong inputs the same check catches: a hollow ball's inertia (k = 2/3), a
    # plank held still (Mp -> infinity: spin_up's closed form), k off by 1 %
    assert _launched_miss(sim, 2.0 / 3.0, r) > 1e-2
    assert _launched_miss(sim, k, r, Mp=1e12) > 1e-2
    assert _launched_miss(sim, k * 1.01, r) > 1e-4


def test_ball_launched_on_a_plank_slides_with_coulombs_force_at_its_contact():
    sim = _sim("ball_plank.xml")
    sim.step(n=100)  # 0.1 s < t*
    (c,) = sim.contacts
    assert c.mode == "slip" and (c.geom1, c.geom2) == ("plank", "ball")
    assert np.linalg.norm(np.array(c.tangent) - [-MU * M * G, 0, 0]) < 1e-9
    x_p, v_p, _, v_s, w = _state(sim.q, sim.v)
    t = 0.1
    assert abs(v_s - (V0 - MU * G * t)) < 1e-9
    assert abs(w - 5 * MU * G / (2 * R_BALL) * t) < 1e-9
    assert abs(v_p - MU * M * G / MP * t) < 1e-9 and abs(x_p - 0.5 * MU * M * G / MP * t**2) < 1e-9
    # the contact point: on the plank's face below the centre
    assert np.linalg.norm(np.array(c.point) - [sim.q[1], sim.q[2], 0.05]) < 1e-12
    # friction's work, -mu m g times the slip: the relative slip, not the ball's speed
    tr = sim.record()
    slip = V0 - MU * G * t * (3.5 + M / MP)
    want = -MU * M * G * 0.5 * (V0 + slip) * t
    assert abs(tr.series("force_work")[-1] - want) < 1e-9


@pytest.mark.parametrize("F", [10.0, 40.0])
def test_ball_on_a_pushed_plank_rolls_back_or_slips(F):
    rolls, a_p, a_s, r_alpha = pushed_plank(F, MU, M, MP, K_BALL, G)
    assert rolls == (F < 23.0)
    if rolls:
        assert abs(a_p - F / (MP + 2 / 7 * M)) < 1e-15 and abs(a_s - 2 / 7 * a_p) < 1e-15
    # 0.5 s at 0.25 ms: the slipping ball spins at 37 rad/s by then (RK4 on its
    # body-frame velocity: 1e-11 m; at 1 ms, 2.7e-9 m)
    sim = _sim("ball_plank.xml", keyframe="rest", dt=FINE)
    tau = np.zeros(sim.system.nv)
    tau[0] = F
    t = 0.5
    sim.step(tau=tau, n=int(round(t / FINE)))
    x_p, v_p, x_s, v_s, w = _state(sim.q, sim.v)
    got = np.array([x_p, v_p, x_s, v_s, w * R_BALL])
    want = np.array([0.5 * a_p * t**2, a_p * t, 0.5 * a_s * t**2, a_s * t, r_alpha * t])
    assert np.max(np.abs(got - want)) < 1e-9, got - want
    (c,) = sim.contacts
    assert c.mode == ("stick" if rolls else "slip")
    assert np.linalg.norm(np.array(c.tangent) - [M * a_s, 0, 0]) < 1e-9
    assert abs(c.normal_force - M * G) < 1e-9 and abs(sim.q[3] - 0.15) < 1e-12
    kinds = [e.kind for e in sim.events]
    assert kinds == (["impact"] if rolls else ["impact", "slip"]), kinds
    # the wrong input caught by the same check: the ball riding along as a box would
    # (a_s = a_p, no spin), and the slipping force read as the rolling one
    ride = np.array([0.5 * t**2, t, 0.5 * t**2, t, 0.0]) * F / (MP + M)
    assert np.max(np.abs(got - ride)) > 0.1
    other = pushed_plank(F, MU, M, MP, K_BALL, 0.1 * G if rolls else 10.0 * G)
    assert other[0] != rolls and np.max(np.abs(got[[1, 3, 4]] - t * np.array(other[1:]))) > 0.1


# -- the rows against the NumPy reference and against finite differences --------------


def _held(t_end: float = 0.5):
    """The rolling ball's held system on the plank (stuck after t* = 0.17 s), the ball's
    and the plank's frames."""
    sim = _sim("ball_plank.xml")
    sim.step(n=int(round(t_end / DT)))
    assert sim.contacts[0].mode == "stick"
    contacts = sim.system.contacts
    return sim, sim._limited.held_system(sim.q, sim.v), contacts.frames[0], contacts.frames2[0]


def _states(rng, n):
    for _ in range(n):
        q = np.concatenate([rng.normal(size=4), rng.normal(size=4)])
        q[4:] /= np.linalg.norm(q[4:])
        yield q, rng.normal(size=7)


def _reference(mech, ball, plank, q, v):
    n = np.array([0.0, 0.0, 1.0])  # the plank's face normal in its axes (it only slides)
    cons = [PointOnBodyPlane(ball, plank, n, point2=(0.0, 0.0, 0.05))]
    cons += rolling_constraints(ball, (0.0, 0.0, 0.0), n, R_BALL, frame2=plank)
    cset = ConstraintSet(mech, cons)
    return cset.evaluate(mech.compute(q, v, cset.frames, extras=False))


def test_rolling_rows_on_a_body_match_the_numpy_reference():
    sim, held, ball, plank = _held()
    mech = sim.system.mechanism
    rng = np.random.default_rng(11)
    for q, v in _states(rng, 12):
        _, _, A, drift, _ = held.evaluate(q, v)
        ev = _reference(mech, ball, plank, q, v)
        scale = max(1.0, float(np.abs(v).max()) ** 2)
        assert A.shape == (3, 7)
        assert np.max(np.abs(A - ev.A)) < 1e-12
        assert np.max(np.abs(drift - ev.drift)) < 1e-12 * scale


def test_rolling_drift_on_a_turning_body_is_the_rate_of_a_v_along_a_motion():
    # d/dt (A(q(t)) v) along q(t) = integrate(q0, t v): the drift. A plank turning (the
    # reference's RollingPoint on a frame that turns, the panda's links) needs the terms
    # of body 2: the still plane's drift (its t, l fixed in the world) is caught
    from pfaff.mechanism import load_robot

    mech = load_robot("panda")
    rng = np.random.default_rng(5)
    h = 1e-5
    link, other = "panda_link7", "panda_link4"
    for _ in range(5):
        t = rng.normal(size=3)
        lever = 0.05 * rng.normal(size=3)
        cons = [RollingPoint(link, t, lever, 0.1 * rng.normal(size=3), frame2=other)]
        cset = ConstraintSet(mech, cons)
        q = rng.uniform(-1, 1, size=mech.nq)
        v = rng.normal(size=mech.nv)

        def rows(x, cset=cset, v=v):
            return cset.evaluate(mech.compute(x, v, cset.frames, extras=False))

        rate = (rows(mech.integrate(q, h * v)).A - rows(mech.integrate(q, -h * v)).A) @ v
        rate /= 2 * h
        ev = rows(q)
        scale = max(1.0, float(np.abs(v).max()) ** 2)
        assert abs(rate[0] - ev.drift[0]) < 1e-6 * scale
        # the same row as if t and l were fixed in the world and body 2 still
        snap = mech.compute(q, v, cset.frames, extras=False)
        f2 = snap.frame(other)
        still = RollingPoint(link, f2.R @ cons[0].t, f2.R @ lever, cons[0].point)
        wrong = ConstraintSet(mech, [still]).evaluate(snap).drift[0]
        assert abs(rate[0] - wrong) > 1e-3 * scale


def test_slipping_ball_on_a_plank_matches_the_numpy_reference():
    # the normal force, the friction and the acceleration of the sliding ball against
    # pfaff.contact.friction's solve with Jp = J1(c) - J2(c) at the contact point c
    sim = _sim("ball_plank.xml")
    mech = sim.system.mechanism
    ball, plank = sim.system.contacts.frames[0], sim.system.contacts.frames2[0]
    rng = np.random.default_rng(2)
    sim.step(n=20)
    for _ in range(3):
        tau = np.concatenate([rng.normal(size=3), [0.0], 0.02 * rng.normal(size=3)])
        sim.step(tau=tau, n=5)
        (c,) = sim.contacts
        assert c.mode == "slip"
        q, v = sim.q, sim.v
        n = np.array([0.0, 0.0, 1.0])
        cset = ConstraintSet(mech, [PointOnBodyPlane(ball, plank, n, point2=(0, 0, 0.05))])
        snap = mech.compute(q, v, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        f1, f2 = snap.frame(ball), snap.frame(plank)
        x = f1.p - R_BALL * n
        Jp = contact_point_jacobian(f1, np.zeros(3), -R_BALL * n) - f2.point_jacobian(
            f2.R.T @ (x - f2.p)
        )
        vt = Jp @ v
        vt -= n * (n @ vt)
        W = slip_rows(ev.A, v, [SlipPoint(0, Jp, n, MU, vt / np.linalg.norm(vt))])
        a, lam = slip_dynamics(snap.M, tau - snap.h, ev.A, ev.drift, W, sim.system.rank_tol)
        assert abs(c.normal_force + lam[0]) < 1e-9
        assert np.linalg.norm(np.array(c.tangent) - MU * lam[0] * vt / np.linalg.norm(vt)) < 1e-9
        got = sim._limited.held_system(q, v).solve(q, v, tau)[0]
        assert np.max(np.abs(got - a)) < 1e-9
        # the force at the centre (a vertex's rule) is caught: no torque spins it up
        Jc = f1.point_jacobian(None) - f2.point_jacobian(f2.R.T @ (f1.p - f2.p))
        Wc = slip_rows(ev.A, v, [SlipPoint(0, Jc, n, MU, vt / np.linalg.norm(vt))])
        ac, _ = slip_dynamics(snap.M, tau - snap.h, ev.A, ev.drift, Wc, sim.system.rank_tol)
        assert np.max(np.abs(got - ac)) > 1.0


def test_rolling_point_refuses_a_plane_on_its_own_frame_and_bad_closed_form_inputs():
    with pytest.raises(ModelError, match="panda_link7"):
        RollingPoint("panda_link7", (1, 0, 0), (0, 0, -0.1), frame2="panda_link7")
    with pytest.raises(ValueError, match="Mp must be"):
        plank_spin_up(V0, MU, M, 0.0)
    with pytest.raises(ValueError, match="F must be"):
        pushed_plank(float("nan"), MU, M, MP)
    with pytest.raises(ValueError, match="mu must be"):
        pushed_plank(1.0, -0.1, M, MP)


def test_rolling_rows_on_a_turning_body_have_their_derivatives_on_the_core():
    # derive_RollingPoint on a plane of body 2 (PointOnBodyPlane's row of normal t at p
    # plus the angular row (l x t) . (w1 - w2)) against the NumPy derivatives (central
    # differences of the reference's rows) and differences of the core's own dynamics,
    # at random states of the Panda with link 7 rolling on a plane of link 4
    from pfaff.mechanism import load_robot
    from tests.unit.dynamics.test_derivatives_core_kinds import _agree

    mech = load_robot("panda")

    def make(rng, q):
        t, lever = rng.normal(size=3), 0.05 * rng.normal(size=3)
        return [
            RollingPoint("panda_link7", t, lever, 0.1 * rng.normal(size=3), frame2="panda_link4")
        ]

    worst_np, worst_fd = _agree(make, mech, n=6)
    assert worst_np < 1e-5 and worst_fd < 1e-6
    # the world's rolling row at the same t and l (body 2's terms left out) is caught
    rng = np.random.default_rng(1)
    q, v, tau = rng.uniform(-1, 1, mech.nq), rng.normal(size=mech.nv), rng.normal(size=7)
    cons = make(rng, q)
    got = core.differentiator(ConstraintSet(mech, cons), 1e-9)(q, v, tau)["da_dq"]
    f2 = mech.compute(q, v, ("panda_link4",), extras=False).frame("panda_link4")
    still = RollingPoint("panda_link7", f2.R @ cons[0].t, f2.R @ cons[0].lever, cons[0].point)
    wrong = forward_dynamics_derivatives(ConstraintSet(mech, [still]), q, v, tau).da_dq
    assert np.max(np.abs(got - wrong)) > 1.0  # [1/s^2]
