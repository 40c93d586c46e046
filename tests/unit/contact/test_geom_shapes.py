"""Contact with the geom shapes beyond spheres, capsules and boxes: a convex mesh
sliding down an incline (its base vertices held and slipping) against the closed form
``0.5 g (sin - mu cos) t^2``, a cylinder standing on its face (its rim points held, their
normal forces summing to its weight), a cylinder lying across an incline (its axis points
held a radius from the plane: it rolls at ``2/3 g sin``, or below ``mu = tan / 3`` slides
and spins up at ``2 mu g cos / r``), a cylinder tipping from its rim onto its side, and
the warning of a cylinder's pairs of two moving bodies (there its points are held fixed
in it: lying on its side on the other body it would stick, not roll)."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import pfaff
from pfaff.contact.closed_forms import roll_on_incline
from pfaff.contact.model import CYLINDER_WARNING
from pfaff.contact.penetration import penetration

MODELS = Path(__file__).parents[2] / "models" / "contact"
G = 9.81
ALPHA = math.radians(20.0)
DOWN = np.array([math.cos(ALPHA), 0.0, -math.sin(ALPHA)])
NORMAL = np.array([math.sin(ALPHA), 0.0, math.cos(ALPHA)])
#: the step of the rolling figures: the cylinder turning at up to 45 rad/s has a
#: body-frame velocity that RK4 integrates to about 1e-8 m in 1 s at 1 ms, 6e-11 m at
#: 0.25 ms (as the capsule's, tests/unit/contact/test_rolling_friction.py)
FINE = 2.5e-4
R_CYL = 0.05  # cylinder_incline.xml: radius [m], mass 1 kg, I_axis = m r^2 / 2


def _load(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cylinder's warning, tested on its own
        return pfaff.load(MODELS / name, contact=True)


def _slid(mu_file: float, mu_closed: float) -> tuple[float, float]:
    """The mesh's slide down the slope in 1 s, and the closed form's with ``mu_closed``."""
    path = MODELS / "mesh_incline.xml"
    system = _load(path.name)
    assert system.contacts is not None and system.contacts.mu == [mu_file]
    sim = pfaff.Simulator(system, dt=1e-3)
    q0 = sim.q.copy()
    sim.step(n=1000)
    a = math.radians(20)
    down = np.array([math.cos(a), 0.0, -math.sin(a)])
    assert {c.mode for c in sim.contacts} == {"slip"}
    return float((sim.q[:3] - q0[:3]) @ down), 0.5 * G * (math.sin(a) - mu_closed * math.cos(a))


def test_a_convex_mesh_slides_down_the_incline_as_the_closed_form():
    slid, want = _slid(0.3, 0.3)
    assert abs(slid - want) < 1e-9  # [m]
    # the witness: the closed form with another friction coefficient is far off
    slid, wrong = _slid(0.3, 0.25)
    assert abs(slid - wrong) > 1e-2


def test_a_standing_cylinder_rests_on_its_rim_with_its_weight():
    system = _load("cylinder_upright.xml")
    sim = pfaff.Simulator(system, dt=1e-3)
    q0 = sim.q.copy()
    for _ in range(5):
        sim.step(n=100)
        forces = [c.normal_force for c in sim.contacts]
        assert len(forces) >= 3
        assert abs(sum(forces) - 2.0 * G) < 1e-9  # [N], m g with m = 2 kg
        assert min(forces) > 0.0
        assert np.max(np.abs(sim.q[:3] - q0[:3])) < 1e-12  # [m]


def _world_v(sim) -> tuple[np.ndarray, np.ndarray]:
    """The free body's linear velocity of its origin and angular velocity, world axes."""
    Rb = Rotation.from_quat(sim.q[3:7]).as_matrix()  # Pinocchio's quaternion: x, y, z, w
    return Rb @ sim.v[:3], Rb @ sim.v[3:6]


def _cylinder_sim(tmp_path: Path, mu: float) -> pfaff.Simulator:
    path = tmp_path / f"cylinder_{mu:g}.xml"
    text = (MODELS / "cylinder_incline.xml").read_text()
    path.write_text(text.replace('"0.5 0.005', f'"{mu} 0.005'))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a cylinder on a still geom: no warning
        system = pfaff.load(path, contact=True)
    assert system.contacts is not None and system.contacts.mu == [mu]
    return pfaff.Simulator(system, dt=FINE)


def _down(sim, q0) -> float:
    return float((sim.q[:3] - q0[:3]) @ DOWN)


def _as_closed_form(distance: float, a: float, t: float) -> bool:
    """The distance down the slope [m] is ``a t^2 / 2`` to 1e-9 m."""
    return abs(distance - 0.5 * a * t * t) < 1e-9


def test_a_lying_cylinder_rolls_down_the_incline_as_the_closed_form(tmp_path):
    sim = _cylinder_sim(tmp_path, 0.5)
    rolls, a, _ = roll_on_incline(ALPHA, 0.5, 0.5, G)  # a solid cylinder: k = 1/2
    assert rolls and abs(a - 2 / 3 * G * math.sin(ALPHA)) < 1e-15
    q0 = sim.q.copy()
    for k in range(1, 5):
        sim.step(n=1000)  # 0.25 s
        t = 0.25 * k
        assert _as_closed_form(_down(sim, q0), a, t)
        v, w = _world_v(sim)
        # it rolls without slipping: its spin about its axis (y) is its speed over r
        assert abs(float(v @ DOWN) - a * t) < 1e-9
        assert abs(float(v @ DOWN) - R_CYL * w[1]) < 1e-9
        assert abs(w[0]) + abs(w[2]) < 1e-9 and abs(sim.q[1] - q0[1]) < 1e-12
        cs = sim.contacts  # its two axis ends held, rolling ("stick")
        assert len(cs) == 2 and all(c.mode == "stick" for c in cs)
        assert abs(sum(c.normal_force for c in cs) - G * math.cos(ALPHA)) < 1e-9
        # the friction that rolls it: m g sin k / (1 + k) up the slope, at the contact
        # points, which lie on the plane (a radius below the held axis points)
        assert (
            abs(sum(float(np.array(c.tangent) @ DOWN) for c in cs) + G * math.sin(ALPHA) / 3)
            < 1e-9
        )
        assert max(abs(float(np.array(c.point) @ NORMAL)) for c in cs) < 1e-9
    d = _down(sim, q0)
    assert abs(d - 1.118406) < 1e-6  # g sin 20 deg / 3 in 1 s
    # the witnesses, caught by the same check: a hollow cylinder's closed form (k = 1:
    # g sin / 2, 0.28 m short), a sliding block's (g sin, 0.56 m beyond), the rim points
    # held fixed in it (stuck: 0 m)
    assert not _as_closed_form(d, roll_on_incline(ALPHA, 0.5, 1.0, G)[1], 1.0)
    assert not _as_closed_form(d, G * math.sin(ALPHA), 1.0)
    assert not _as_closed_form(d, 0.0, 1.0)
    assert abs(d - 0.5 * roll_on_incline(ALPHA, 0.5, 1.0, G)[1]) > 0.1
    system = sim.system
    deep = penetration(system.contacts, system.q_to_qpos, sim.record().arrays()["q"])
    assert deep.max() < 1e-9  # [m]
    assert [e.kind for e in sim.events] == ["impact"]  # the start's touch, then rolling


def test_a_lying_cylinder_with_little_friction_slides_and_spins_up(tmp_path):
    mu = 0.05  # below tan / 3 = 0.121: rolling would need more friction than the cone's
    sim = _cylinder_sim(tmp_path, mu)
    rolls, a, kra = roll_on_incline(ALPHA, mu, 0.5, G)
    assert not rolls and abs(a - G * (math.sin(ALPHA) - mu * math.cos(ALPHA))) < 1e-15
    spin = kra / (0.5 * R_CYL)  # 2 mu g cos / r [rad/s^2]
    q0 = sim.q.copy()
    sim.step(n=2000)
    w_half = _world_v(sim)[1][1]
    sim.step(n=2000)
    assert abs(_down(sim, q0) - 0.5 * a) < 1e-9  # [m]
    v, w = _world_v(sim)
    assert abs(float(v @ DOWN) - a) < 1e-9
    assert abs((w[1] - w_half) / 0.5 - spin) < 1e-9  # the spin-up rate [rad/s^2]
    assert abs(w[1] - spin) < 1e-7
    # the witness: rolling's closed form is far off (it slips: v > r w)
    assert abs(_down(sim, q0) - 0.5 * roll_on_incline(ALPHA, 0.5, 0.5, G)[1]) > 0.1
    assert float(v @ DOWN) - R_CYL * w[1] > 1.0
    cs = sim.contacts
    assert len(cs) == 2 and all(c.mode == "slip" for c in cs)
    friction = sum(float(np.array(c.tangent) @ DOWN) for c in cs)
    assert abs(friction + mu * G * math.cos(ALPHA)) < 1e-9


def test_a_cylinder_tipping_off_its_rim_ends_lying_on_its_side():
    system = _load("cylinder_tips.xml")
    sim = pfaff.Simulator(system, dt=1e-3)
    sim.step(n=1500)
    # the start on its rim, which slips near the end of the fall, then the side's landing
    # at 0.345 s (a plastic impact: its other end's axis point taken up; the rim, level
    # now, is its end's, and the impact stops its slip): no more events
    kinds = [e.kind for e in sim.events]
    assert kinds == ["impact", "slip", "impact", "stick"], kinds
    assert 0.3 < sim.events[-1].t < 0.4 and sim.events[-1].t == sim.events[-2].t
    x, y, _, _ = sim.q[3:7]
    axis_z = 1 - 2 * (x * x + y * y)  # the world z of its axis (body z)
    assert abs(axis_z) < 1e-9 and abs(sim.q[2] - 0.05) < 1e-9  # lying, at its radius
    assert np.max(np.abs(sim.v)) < 1e-9
    cs = sim.contacts  # its two axis ends, each carrying half its weight
    assert [c.mode for c in cs] == ["stick", "stick"]
    assert max(abs(c.normal_force - G) for c in cs) < 1e-9  # [N]
    deep = penetration(system.contacts, system.q_to_qpos, sim.record().arrays()["q"])
    assert deep.max() < 1e-9  # [m]


def test_a_tilted_cylinder_lands_end_after_end_on_the_incline_and_rolls(tmp_path):
    # dropped 13 mm with its axis tilted 1.5 deg: one end's rim lands and slips, the
    # other end comes down, its axis points take over from the rim points (no hang:
    # the rim and axis rows of one end held together locked it on one end) and it rolls
    text = (MODELS / "cylinder_incline.xml").read_text()
    path = tmp_path / "tilted.xml"
    path.write_text(
        text.replace(
            'pos="0.017101007166283436 0 0.04698463103929543"',
            'pos="0.0171 0 0.06" euler="1.5 0 0"',
        )
    )
    system = pfaff.load(path, contact=True)
    sim = pfaff.Simulator(system, dt=FINE)
    sim.step(n=4000)
    assert len(sim.events) <= 12 and sim.events[-1].t < 0.1
    v, w = _world_v(sim)
    cs = sim.contacts
    assert [c.mode for c in cs] == ["stick", "stick"]
    assert abs(sum(c.normal_force for c in cs) - G * math.cos(ALPHA)) < 1e-9  # [N]
    # it rolls: the material point at each contact is still, and (landed askew, it
    # turns about the normal as it rolls) its energy is constant from the last event on
    for c in cs:
        arm = np.array(c.point) - sim.q[:3]
        assert np.linalg.norm(v + np.cross(w, arm)) < 1e-9  # [m/s]
    assert float(v @ DOWN) > 2.0
    tr = sim.record()
    t, e = np.asarray(tr.t), np.asarray(tr.series("energy"))
    assert np.ptp(e[t > sim.events[-1].t + 1e-3]) < 1e-8  # [J] (2e-7 J at dt 1 ms)
    deep = penetration(system.contacts, system.q_to_qpos, tr.arrays()["q"])
    assert deep.max() < 1e-9  # [m]


def test_a_lying_cylinder_lifted_at_one_end_pivots_on_its_rim_and_lies_again(tmp_path):
    # one end kicked up (0.4 m/s up, 2 rad/s about x): the other end's axis point is
    # superseded by its rim point as it tips (held at its axis point, its rim would dip
    # r (1 - cos) into the floor), then both axis ends hold again where it lands
    text = (MODELS / "cylinder_incline.xml").read_text().replace('euler="0 20 0"', "")
    text = text.replace(
        'pos="0.017101007166283436 0 0.04698463103929543"', 'pos="0 0 0.05"'
    ).replace(
        "</worldbody>",
        '</worldbody>\n  <keyframe><key qpos="0 0 0.05 1 0 0 0" qvel="0 0 0.4 -2 0 0"/>'
        "</keyframe>",
    )
    path = tmp_path / "lifted.xml"
    path.write_text(text)
    system = pfaff.load(path, contact=True)
    sim = pfaff.Simulator(system, dt=1e-3)
    sim.step(n=50)
    (c,) = sim.contacts  # pivoting on one end's rim point
    assert c.mode in ("stick", "slip") and abs(float(np.array(c.point)[2])) < 1e-9
    sim.step(n=950)
    assert len(sim.events) < 10
    x, y, z, w = sim.q[3:7]
    assert abs(2 * (y * z + x * w)) < 1e-9 and abs(sim.q[2] - R_CYL) < 1e-9  # lying
    assert np.max(np.abs(sim.v)) < 1e-9
    cs = sim.contacts  # its two axis ends, each carrying half its weight
    assert len(cs) == 2 and max(abs(c.normal_force - G / 2) for c in cs) < 1e-9  # [N]
    # the landing's impulse stopped the end that slipped: it sticks with the other (it
    # was left "slip" at zero slip, the two ends squeezing the body with mu f_n each)
    assert [c.mode for c in cs] == ["stick", "stick"]
    assert max(np.linalg.norm(c.tangent) for c in cs) < 1e-9  # [N]
    landing = [e for e in sim.events if e.kind == "impact" and e.t > 0.1]
    assert len(landing) == 1
    assert [e.t for e in sim.events if e.kind == "stick"][-1] == landing[0].t
    deep = penetration(system.contacts, system.q_to_qpos, sim.record().arrays()["q"])
    assert deep.max() < 1e-9  # [m]


_ON_A_BOX = """<mujoco model="cylinder_on_box">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom name="box" type="box" size="0.3 0.3 0.1" mass="3"/>
    </body>
    <body name="cyl" pos="0 0 0.25" euler="90 0 0">
      <freejoint/>
      <geom name="cyl" type="cylinder" size="0.05 0.1" mass="1"/>
    </body>
  </worldbody>
</mujoco>"""


def test_a_cylinder_on_a_moving_body_is_warned_that_it_does_not_roll(tmp_path):
    path = tmp_path / "cylinder_on_box.xml"
    path.write_text(_ON_A_BOX)
    with pytest.warns(UserWarning, match=re.escape(CYLINDER_WARNING) + ".*box / cyl"):
        pfaff.load(path, contact=True)
    for name in ("cylinder_upright.xml", "cylinder_incline.xml", "mesh_incline.xml"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # on a still geom a cylinder rolls: no warning
            system = pfaff.load(MODELS / name, contact=True)
        assert not [w for w in system.warnings if w.startswith(CYLINDER_WARNING)]
