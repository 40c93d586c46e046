"""Coulomb friction on the compiled loop's contacts against the closed forms
(pfaff.contact.closed_forms): a box on an incline below the friction angle stays (its
corners' forces sum to m g cos and m g sin), above it slides 0.5 g (sin - mu cos) t^2, a
box launched along an incline below the angle stops at v0 / (g (mu cos -+ sin)) (a
located "stick"); Housner's rocking block (a sticking impact that lets the old edge go);
the slipping dynamics against the NumPy reference (pfaff.contact.friction); wrong inputs
caught."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff.contact.closed_forms import incline_distance
from pfaff.contact.friction import SlipPoint, slip_dynamics, slip_rows

G = 9.81
DT = 1e-3
ALPHA = math.radians(20.0)
#: the incline's down-slope direction (the plane tilted by ALPHA about y)
DOWN = np.array([math.cos(ALPHA), 0.0, -math.sin(ALPHA)])
NORMAL = np.array([math.sin(ALPHA), 0.0, math.cos(ALPHA)])

INCLINE = """<mujoco model="incline">
  <option timestep="0.001" gravity="0 0 -9.81"/>
  <worldbody>
    <geom name="incline" type="plane" size="5 5 0.1" euler="0 20 0" friction="{mu} 0 0"/>
    <body name="box" pos="0 0 0" euler="0 20 0">
      <freejoint name="box"/>
      <geom name="box" type="box" size="0.1 0.1 0.05" mass="1" pos="0 0 0.05"
            friction="{mu} 0 0"/>
    </body>
  </worldbody>
</mujoco>"""


def incline_file(tmp_path: Path, mu: float) -> Path:
    """tests/models/contact/incline.xml with friction ``mu`` (both geoms: MuJoCo's max)."""
    path = tmp_path / f"incline_{mu:g}.xml"
    path.write_text(INCLINE.format(mu=mu))
    return path


def _sim(path: Path, v0: float = 0.0, **kw) -> pfaff.Simulator:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a box on a plane: no warning
        system = pfaff.load(path, contact=True)
    sim = pfaff.Simulator(system, dt=DT, **kw)
    if v0:
        v = np.zeros(6)
        v[0] = v0  # the free joint's velocity in the box's axes: x is down the slope
        sim.reset(v=v)
    return sim


def _slide(sim: pfaff.Simulator, q0: np.ndarray) -> float:
    return float((sim.q[:3] - q0[:3]) @ DOWN)


def test_box_below_the_friction_angle_stays_and_its_forces_hold_its_weight(tmp_path):
    sim = _sim(incline_file(tmp_path, 0.5))
    q0 = sim.q.copy()
    sim.step(n=1000)
    assert np.linalg.norm(sim.q[:3] - q0[:3]) < 1e-12
    assert np.max(np.abs(sim.v)) < 1e-12
    cs = sim.contacts
    assert len(cs) == 4 and all(c.mode == "stick" for c in cs)
    fn = sum(c.normal_force for c in cs)
    ft = sum(np.array(c.tangent) for c in cs)
    assert abs(fn - G * math.cos(ALPHA)) < 1e-9
    # the friction holds the box up the slope, in the plane
    assert np.linalg.norm(ft + G * math.sin(ALPHA) * DOWN) < 1e-9
    for c in cs:  # each inside the cone, tangent to the plane
        assert c.tangent_force <= 0.5 * c.normal_force + 1e-9
        assert abs(np.array(c.tangent) @ NORMAL) < 1e-12
    assert [e.kind for e in sim.events] == ["impact"]


@pytest.mark.parametrize("mu", [0.0, 0.1, 0.3])
def test_box_above_the_friction_angle_slides_the_closed_form_distance(tmp_path, mu):
    sim = _sim(incline_file(tmp_path, mu))
    q0 = sim.q.copy()
    sim.step(n=1000)
    want = float(incline_distance(ALPHA, mu, np.array(1.0), G))
    assert abs(_slide(sim, q0) - want) < 1e-9
    # no motion across the slope nor into the plane, no turn
    off = sim.q[:3] - q0[:3] - _slide(sim, q0) * DOWN
    assert np.linalg.norm(off) < 1e-9
    cs = sim.contacts
    assert len(cs) == 4 and all(c.mode == "slip" for c in cs)
    fn = sum(c.normal_force for c in cs)
    ft = sum(np.array(c.tangent) for c in cs)
    assert abs(fn - G * math.cos(ALPHA)) < 1e-9
    assert np.linalg.norm(ft + mu * fn * DOWN) < 1e-9  # Coulomb's, against the slip
    kinds = {e.kind for e in sim.events}
    assert kinds == ({"impact"} if mu == 0.0 else {"impact", "slip"})


@pytest.mark.parametrize("v0", [0.5, 1.0, -0.5, -1.0])
def test_box_launched_below_the_angle_stops_at_the_closed_form_time(tmp_path, v0):
    # down the slope (v0 > 0): friction less gravity's pull decelerates it; up (v0 < 0):
    # both do; it stops at v0 / decel and sticks (tan alpha < mu)
    mu = 0.5
    if v0 > 0:
        decel = G * (mu * math.cos(ALPHA) - math.sin(ALPHA))
    else:
        decel = -G * (mu * math.cos(ALPHA) + math.sin(ALPHA))
    t_stop = v0 / decel
    sim = _sim(incline_file(tmp_path, mu), v0=v0)
    q0 = sim.q.copy()
    sim.step(n=int(math.ceil(t_stop / DT)) + 200)
    sticks = [e.t for e in sim.events if e.kind == "stick"]
    assert len(sticks) == 1
    assert abs(sticks[0] - t_stop) < 1e-9
    assert abs(_slide(sim, q0) - v0**2 / (2 * decel)) < 1e-9
    assert np.max(np.abs(sim.v)) < 1e-9
    assert all(c.mode == "stick" for c in sim.contacts)


def test_slipping_forces_match_the_numpy_reference(tmp_path):
    # the core's multipliers (normal and friction forces of the four slipping corners)
    # against the NumPy solve of the same equations at several states of a slide pushed
    # across the slope and turned
    from pfaff.constraints.base import ConstraintSet
    from pfaff.constraints.library import PointOnPlane

    rng = np.random.default_rng(0)
    mu = 0.3
    sim = _sim(incline_file(tmp_path, mu))
    system = sim.system
    mech = system.mechanism
    sim.step(n=20)
    for _ in range(4):
        tau = np.concatenate([0.5 * rng.normal(size=2), [0.0], [0.0, 0.0], [0.05 * rng.normal()]])
        sim.step(tau=tau, n=7)
        cs = sim.contacts
        assert len(cs) == 4 and all(c.mode == "slip" for c in cs)
        q, v = sim.q, sim.v
        R = mech.compute(q, v, ("box",), extras=False).frame("box").R
        locals_ = [R.T @ (np.array(c.point) - q[:3]) for c in cs]
        n = np.array(cs[0].normal)
        cons = [PointOnPlane("box", n, offset=float(n @ c.point), point=p)
                for c, p in zip(cs, locals_)]  # fmt: skip
        cset = ConstraintSet(mech, cons)
        snap = mech.compute(q, v, cset.frames, extras=False)
        ev = cset.evaluate(snap)
        fr = snap.frame("box")
        J = np.asarray(fr.J)
        pts = []
        for k, p in enumerate(locals_):
            r = fr.R @ p
            skew = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
            Jp = J[:3] - skew @ J[3:]
            vp = Jp @ v
            vt = vp - n * (n @ vp)
            pts.append(SlipPoint(k, Jp, n, mu, vt / np.linalg.norm(vt)))
        W = slip_rows(ev.A, v, pts)
        _, lam = slip_dynamics(snap.M, tau - snap.h, ev.A, ev.drift, W, system.rank_tol)
        got_n = np.array([c.normal_force for c in cs])
        assert np.max(np.abs(got_n + lam)) < 1e-9
        for c, p, ln in zip(cs, pts, lam):
            vp = p.Jp @ v
            vt = vp - n * (n @ vp)
            want = mu * ln * vt / np.linalg.norm(vt)  # -mu f_n s
            assert np.linalg.norm(np.array(c.tangent) - want) < 1e-9


def test_numpy_reference_reduces_to_the_frictionless_solve_and_refuses_bad_shapes():
    rng = np.random.default_rng(1)
    B = rng.normal(size=(4, 4))
    M = B @ B.T + 4 * np.eye(4)
    A = rng.normal(size=(2, 4))
    f, drift = rng.normal(size=4), rng.normal(size=2)
    a, lam = slip_dynamics(M, f, A, drift, A)
    # the KKT system's solution
    K = np.block([[M, A.T], [A, np.zeros((2, 2))]])
    ref = np.linalg.solve(K, np.concatenate([f, -drift]))
    assert np.allclose(a, ref[:4], atol=1e-12) and np.allclose(lam, ref[4:], atol=1e-12)
    with pytest.raises(ValueError, match="W must be"):
        slip_dynamics(M, f, A, drift, A[:1])
    with pytest.raises(ValueError, match="M must be"):
        slip_dynamics(M, f[:3], A, drift, A)


def test_a_slipping_row_that_pulls_carries_no_friction():
    # a unit point mass on the plane z = 0 slipping along +x, mu 0.5: pulled up by 5 N
    # its row pulls (lambda > 0) and carries no friction (no force along the slip);
    # pushed down by 5 N with the weight, it pushes and friction decelerates it
    M, A, drift = np.eye(3), np.array([[0.0, 0.0, 1.0]]), np.zeros(1)
    W = A - 0.5 * np.array([[1.0, 0.0, 0.0]])  # (A_n - mu s^T J_p), s = +x
    a, lam = slip_dynamics(M, np.array([0.0, 0.0, 5.0]), A, drift, W)
    assert lam[0] > 1.0 and abs(a[0]) < 1e-12  # the turned-round friction would give +2.5
    a, lam = slip_dynamics(M, np.array([0.0, 0.0, -14.81]), A, drift, W)
    assert lam[0] < -1.0 and a[0] == pytest.approx(-0.5 * 14.81, abs=1e-12)


def test_reference_friction_opposes_the_slip_and_keeps_s0_past_a_stop():
    # a unit mass sliding on the plane z = 0: Coulomb's deceleration mu g against its
    # velocity; below the slip speed, or once the velocity turned against s0 (a stop
    # inside the step), along s0, so that the step goes on smoothly past the stop
    M, A, Jp = np.eye(3), np.array([[0.0, 0.0, 1.0]]), np.eye(3)
    f = np.array([0.0, 0.0, -G])
    z = np.array([0.0, 0.0, 1.0])
    for v, s0, want in (
        ([1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [-0.5 * G, 0.0]),
        ([0.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, -0.5 * G]),
        ([0.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3 * G, -0.4 * G]),
        ([-1e-3, 0.0, 0.0], [1.0, 0.0, 0.0], [-0.5 * G, 0.0]),  # turned: s0 kept
    ):
        p = SlipPoint(0, Jp, z, 0.5, np.array(s0))
        a, lam = slip_dynamics(M, f, A, np.zeros(1), slip_rows(A, np.array(v), [p]))
        assert np.max(np.abs(a[:2] - want)) < 1e-12 and abs(lam[0] + G) < 1e-12
    # a friction along the slip (a wrong sign of mu) would speed it up: caught here
    bad = SlipPoint(0, Jp, z, -0.5, np.array([1.0, 0.0, 0.0]))
    a, _ = slip_dynamics(M, f, A, np.zeros(1), slip_rows(A, np.array([1.0, 0, 0]), [bad]))
    assert a[0] > 0


def test_friction_is_refused_where_it_is_not_a_coefficient(tmp_path):
    from pfaff import core

    sim = _sim(incline_file(tmp_path, 0.5))
    sys_ = core.clone(sim._limited._core)
    for mu in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="mu = .*expected a finite number >= 0"):
            core.add_contact_pair(sys_, 0, 1, "box", 0.0, 1e-7, mu)


def test_a_ball_keeps_its_friction_and_only_condim_six_warns(tmp_path):
    from pfaff.contact.model import FRICTION_WARNING

    path = tmp_path / "ball.xml"
    text = INCLINE.format(mu=0.5).replace(
        'type="box" size="0.1 0.1 0.05"', 'type="sphere" size="0.05"')  # fmt: skip
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        system = pfaff.load(path, contact=True)
    assert system.contacts.mu == [0.5]
    path.write_text(text.replace('type="sphere"', 'type="sphere" condim="4"'))
    want = re.escape(FRICTION_WARNING) + ".*incline / box .condim 4: its torsional friction"
    with pytest.warns(UserWarning, match=want):
        system = pfaff.load(path, contact=True)
    assert system.contacts.mu == [0.5]  # its sliding friction is held
    box = pfaff.load(incline_file(tmp_path, 0.5), contact=True)
    assert box.contacts.mu == [0.5]


def _mujoco_slide(mu: float, t_end: float, v0: float = 0.0) -> float:
    import mujoco

    m = mujoco.MjModel.from_xml_string(INCLINE.format(mu=mu))
    d = mujoco.MjData(m)
    d.qvel[:3] = v0 * DOWN
    q0 = d.qpos[:3].copy()
    for _ in range(int(round(t_end / m.opt.timestep))):
        mujoco.mj_step(m, d)
    return float((d.qpos[:3] - q0) @ DOWN)


def test_mujoco_figures_beside_the_closed_forms():
    # MuJoCo's soft contact (default solref, pyramidal cone) on the same file: the box
    # below the friction angle creeps (1.8 mm in 1 s), above it slides near the closed
    # form (0.295 m for mu 0.3, +0.3 mm), launched at 1 m/s it is 0.03 mm short of the
    # closed-form stop at 1 s (and creeps on)
    creep = _mujoco_slide(0.5, 1.0)
    assert 1e-3 < creep < 3e-3
    slide = _mujoco_slide(0.3, 1.0)
    want = float(incline_distance(ALPHA, 0.3, np.array(1.0), G))
    assert 1e-4 < slide - want < 1e-3
    decel = G * (0.5 * math.cos(ALPHA) - math.sin(ALPHA))
    stop = _mujoco_slide(0.5, 1.0, v0=1.0) - 1.0 / (2 * decel)
    assert abs(stop) < 1e-3


def test_housner_rocking_block_keeps_his_ratio_at_each_impact():
    # tests/models/contact/rocking_block.xml: a block (half-width 0.1 m, half-height 0.3
    # m, 1 kg, friction 2) tilted by 0.1 rad onto its edge at x = +b rocks back; at each
    # impact the new edge sticks (a sticking impact) and the old one lets go (its
    # impulse would pull), so the angular velocity is multiplied by Housner's ratio r =
    # 1 - 3/2 sin^2 alpha: rocking keeps the energy between impacts, so impact k takes
    # m g z0 r^(2(k-1)) (1 - r^2), z0 the centre's rise at the start
    from pfaff.contact.closed_forms import housner_ratio, rocking_block_start

    models = Path(__file__).parents[2] / "models" / "contact"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        system = pfaff.load(models / "rocking_block.xml", contact=True)
    sim = pfaff.Simulator(system, dt=DT)
    x, z0, th = rocking_block_start(0.1, 0.3, 0.1)
    sim.reset(q=np.array([x, z0, th]))
    sim.step(n=1000)
    r = housner_ratio(0.1, 0.3)
    impacts = [e for e in sim.events if e.kind == "impact"][1:]  # after the landing at 0
    releases = [e for e in sim.events if e.kind == "release"]
    assert len(impacts) >= 3
    for k, e in enumerate(impacts[:3]):
        want = G * z0 * r ** (2 * k) * (1 - r**2)
        assert abs(e.energy_lost - want) < 1e-9 * G * z0
        assert any(abs(x.t - e.t) < 1e-12 for x in releases)  # the old edge let go
    # no slip: the edge on the floor stays where it is
    assert all(c.mode == "stick" for c in sim.contacts)


def test_friction_work_is_counted_in_the_energy_balance(tmp_path):
    # above the friction angle the slide loses mu m g cos per metre to friction: the
    # record's force_work counts it, so energy - energy[0] = work + force_work (+ the
    # correction) holds; without the count the balance would miss 0.87 J
    mu = 0.3
    sim = _sim(incline_file(tmp_path, mu))
    q0 = sim.q.copy()
    sim.step(n=1000)
    tr = sim.record()
    fw = np.asarray(tr.series("force_work"))
    want = -mu * G * math.cos(ALPHA) * _slide(sim, q0)
    assert abs(fw[-1] - want) < 1e-9
    e = np.asarray(tr.series("energy"))
    rest = np.asarray(tr.series("work")) + fw + np.asarray(tr.series("correction_energy"))
    assert np.max(np.abs(e - e[0] - rest)) < 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_stuck_box_corner_forces_match_the_numpy_reference(tmp_path, seed):
    # box_on_plane.xml with MuJoCo's default friction (1, condim 3): pushed along the
    # floor less than mu m g, it sticks; each corner is also held along the floor's
    # tangents t1 = y, t2 = -x (the core's tangent_basis of z) where it stands: the twelve
    # PointOnPlane rows' least-norm multipliers by the NumPy engine
    from pfaff import dynamics as dyn
    from pfaff.constraints.base import ConstraintSet
    from pfaff.constraints.library import PointOnPlane

    src = (Path(__file__).parents[2] / "models" / "contact" / "box_on_plane.xml").read_text()
    path = tmp_path / "box_friction.xml"
    path.write_text(src.replace(' condim="1"', ""))
    sim = _sim(path)
    system = sim.system
    sim.step(n=10)
    rng = np.random.default_rng(seed)
    tau = np.concatenate([rng.normal(size=2), [rng.uniform(-5, 5)], 0.1 * rng.normal(size=3)])
    sim.step(tau=tau, n=3)
    cs = sim.contacts
    assert len(cs) == 4 and all(c.mode == "stick" for c in cs)
    q = sim.q
    mech = system.mechanism
    R = mech.compute(q, sim.v, ("box",), extras=False).frame("box").R
    local = [R.T @ (np.array(c.point) - q[:3]) for c in cs]
    rows = [(p, 0.0, (0, 0, 1)) for p in local]
    for t in ((0, 1, 0), (-1, 0, 0)):
        rows += [(p, float(np.dot(t, c.point)), t) for p, c in zip(local, cs)]
    cset = ConstraintSet(mech, [PointOnPlane("box", n, offset=d, point=p) for p, d, n in rows])
    snap = mech.compute(q, sim.v, cset.frames, extras=False)
    ev = cset.evaluate(snap)
    f = -dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift, system.rank_tol).lam
    tangent = np.zeros((4, 3))
    tangent[:, 1], tangent[:, 0] = f[4:8], -f[8:12]  # f1 t1 + f2 t2 of each corner
    got = np.array([c.normal_force for c in cs])
    assert abs(got.sum() - (2 * G - tau[2])) < 1e-9 * 2 * G  # tau[2]: a lift (box axes)
    assert np.max(np.abs(got - f[:4])) < 1e-8 * 2 * G
    assert np.max(np.abs(np.array([c.tangent for c in cs]) - tangent)) < 1e-8 * 2 * G
    # the corners hold the push: the friction forces sum to minus its floor components
    assert np.linalg.norm(tangent.sum(axis=0)[:2] + tau[:2]) < 1e-9


def test_file_contacts_pickled_before_friction_load_frictionless(tmp_path):
    import pickle

    system = _sim(incline_file(tmp_path, 0.5)).system
    fc = system.contacts
    old = pickle.loads(pickle.dumps(fc))
    assert old.mu == [0.5]
    del fc.__dict__["mu"]  # as a FileContacts pickled before friction was modelled
    try:
        again = pickle.loads(pickle.dumps(fc))
    finally:
        fc.mu = [0.5]
    assert again.mu == [0.0] and again.pairs == fc.pairs


def test_a_rollout_slides_as_the_simulator_does(tmp_path):
    system = _sim(incline_file(tmp_path, 0.3)).system
    out = pfaff.rollout(system, None, None, np.zeros((2, 300, 6)), dt=DT)
    sim = pfaff.Simulator(system, dt=DT)
    q0 = sim.q.copy()
    sim.step(n=300)
    want = float(incline_distance(ALPHA, 0.3, np.array(0.3), G))
    for k in range(2):  # to round-off (a rollout steps one step per call)
        assert np.max(np.abs(out["q"][k, -1] - sim.q)) < 1e-12
        assert abs(float((out["q"][k, -1, :3] - q0[:3]) @ DOWN) - want) < 1e-9
