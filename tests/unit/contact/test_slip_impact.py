"""Coulomb's impulse in a landing that slips (``Simulator(impact_friction="coulomb")``,
``src/cpp/algorithms/slip_impact.cpp``): a body thrown along a floor lands plastically
while it slides. Moreau's impact law takes ``mu v_n`` off its speed (a ball's impulse
spins it up too), or stops its contact point where that impulse lies inside the cone.
Witnesses: the closed forms of ``pfaff.contact.closed_forms.thrown_landing`` (the
impact's energy, the time the slip ends, where the body stops or starts to roll) at
several throws on both sides of the cone, to 1e-9; Moreau's law read from the run's own
states at random corner landings, whose slip turns in the impact; the earlier law
(``"stick"``: a point outside the cone slips through frictionless) misses the closed
forms by tenths of a second and the corner's law, which the same checks catch."""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.contact.closed_forms import thrown_landing
from tests.unit.contact.test_slip_onset import energy_account, idle_jams, idle_stops

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

MODELS = Path(__file__).parents[2] / "models" / "contact"
G, DT = 9.81, 1e-3
R = 0.1  # the ball's radius and the box's half-size [m]


def _thrown(tmp_path: Path, shape: str, h: float, mu: float, v0: float, law: str):
    """The box of box_thrown.xml, or a ball (r = 0.1 m, 1 kg) in its place, its lowest
    point h above the floor, friction mu, thrown along x at v0."""
    text = (MODELS / "box_thrown.xml").read_text().replace('"0.3 0 0"', f'"{mu} 0 0"')
    text = re.sub(r"<keyframe>.*</keyframe>", "", text, flags=re.S)  # its start: below
    text = text.replace('pos="0 0 0.3"', f'pos="0 0 {R + h}"')
    if shape == "ball":
        text = text.replace('type="box" size="0.1 0.1 0.1"', f'type="sphere" size="{R}"')
    path = tmp_path / f"{shape}_{h}_{mu}_{v0}.xml"
    path.write_text(text)
    sim = pfaff.Simulator(pfaff.load(path), dt=DT, impact_friction=law)
    v = np.zeros(6)
    v[0] = v0
    sim.reset(v=v)
    return sim


def _landed(tmp_path: Path, shape: str, v0: float, h: float, mu: float):
    """The throw of ``shape`` under Coulomb's impulse run 50 ms past its closed form's end
    of slip, the landing and the slip's end checked against it (to 1e-9); the Simulator
    and the closed form."""
    cf = thrown_landing(v0, h, mu, k=0.4 if shape == "ball" else None)
    sim = _thrown(tmp_path, shape, h, mu, v0, "coulomb")
    sim.step(n=int(round((cf["t_stick"] + 0.05) / DT)))
    impact, *rest = sim.events
    assert impact.kind == "impact" and abs(impact.t - cf["t_impact"]) < 1e-9  # [s]
    assert abs(impact.energy_lost - cf["lost"]) < 1e-9  # [J] (1 kg)
    sticks = [e.t for e in rest if e.kind == "stick"]
    if cf["slip_after"] > 0.0:  # slipped through the landing: the slip ends at t_stick
        assert sticks and abs(sticks[0] - cf["t_stick"]) < 1e-9, (sticks, cf["t_stick"])
    else:  # stuck by the landing: no slip to end
        assert not sticks
    return sim, cf


@pytest.mark.parametrize(
    ("v0", "h", "mu"),
    [(3.0, 0.2, 0.3), (2.0, 0.05, 0.5), (1.5, 0.4, 0.1), (1.0, 0.1, 0.8)],
)
def test_a_thrown_box_keeps_v0_less_mu_vn_and_slides_to_the_closed_form(tmp_path, v0, h, mu):
    # the last: 1 m/s under 0.8 v_n = 1.12 m/s, stopped dead by the landing
    sim, cf = _landed(tmp_path, "box", v0, h, mu)
    assert abs(sim.q[0] - cf["x_stick"]) < 1e-9  # [m]: at rest where it stopped
    assert np.max(np.abs(sim.v)) < 1e-9


@pytest.mark.parametrize(
    ("v0", "h", "mu"),
    [(3.0, 0.2, 0.3), (4.0, 0.05, 0.4), (1.5, 0.2, 0.3), (2.0, 0.1, 0.5)],
)
def test_a_thrown_ball_spins_up_in_its_landing_and_rolls_at_the_closed_form(tmp_path, v0, h, mu):
    # slips through where v0 > 3.5 mu v_n (the first two), else rolls from the landing on
    sim, cf = _landed(tmp_path, "ball", v0, h, mu)
    # rolling at v0 / (1 + k) = 5/7 v0 from t_stick on (the free joint's linear velocity
    # is in the ball's axes: its world speed is the norm)
    assert abs(np.linalg.norm(sim.v[:3]) - 5.0 / 7.0 * v0) < 1e-8  # [m/s]
    x = cf["x_stick"] + 5.0 / 7.0 * v0 * (sim.t - cf["t_stick"])
    assert abs(sim.q[0] - x) < 1e-8  # [m] (the rolling rows' projection: 2e-9 m)


def test_the_stick_law_slips_through_frictionless_and_the_closed_form_catches_it(tmp_path):
    # the same throw under "stick": the landing keeps all of v0 (only the normal impulse
    # takes energy), so the box slides mu v_n / (mu g) = t_impact longer and further
    cf = thrown_landing(3.0, 0.2, 0.3)
    sim = _thrown(tmp_path, "box", 0.2, 0.3, 3.0, "stick")
    sim.step(n=int(round((cf["t_stick"] + 0.3) / DT)))
    impact, stick = sim.events[:2]
    assert abs(impact.energy_lost - 0.5 * cf["v_n"] ** 2) < 1e-9  # [J]: none to friction
    assert abs(impact.energy_lost - cf["lost"]) > 1.0
    assert abs(stick.t - (cf["t_stick"] + cf["t_impact"])) < 1e-9  # [s]: 0.20 s late
    assert abs(sim.q[0] - cf["x_stick"]) > 0.5  # [m]


def test_impact_friction_is_refused_where_it_is_not_a_law(tmp_path):
    system = pfaff.load(MODELS / "box_thrown.xml")
    for bad in ("Coulomb", "", None, 1):
        with pytest.raises(ValueError, match=r"impact_friction = .*valid: stick, coulomb"):
            pfaff.Simulator(system, impact_friction=bad)


def test_thrown_landing_refuses_what_is_not_a_throw():
    for kw in ({"v0": -1.0}, {"h": 0.0}, {"mu": math.nan}, {"k": 0.0}):
        args = {"v0": 1.0, "h": 0.1, "mu": 0.3, "k": 0.4} | kw
        with pytest.raises(ValueError, match="must be a finite number > 0"):
            thrown_landing(**args)


def test_the_quadrupeds_landing_takes_energy_in_every_impact_and_accounts_for_it():
    """Twenty round shins and feet landing at up to 3.3 m/s with mu = 1. Under Coulomb's
    impulse no impact or jam adds energy (a friction impulse along the slip after the
    impact would), and the energy account closes to the integrator's error: its slips
    come slower out of the impacts, and steps next to Painleve's pole (normal forces of
    9 kN) carry RK4's error, 1e-3 - 0.16 J of ~100 J lost over dt 0.125 - 1 ms (the
    landing is chaotic: the bound is the one a missed impact's loss breaks; ``"stick"``,
    whose slips keep off the pole, closes to 1e-6 J: test_slip_onset.py)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        system = pfaff.load(MODELS / "quadruped_floor.xml", keyframe="stand")
    sim = pfaff.Simulator(system, dt=2.5e-4)
    sim.step(n=int(round(0.45 / 2.5e-4)))
    impacts = [e for e in sim.events if e.kind in ("impact", "jam")]
    assert len(impacts) > 20
    assert min(e.energy_lost for e in impacts) > -1e-9  # [J]
    assert sum(e.energy_lost for e in impacts) > 50.0
    rec = sim.record().arrays()
    assert np.max(np.abs(energy_account(rec, sim.events))) < 0.5  # [J]
    # the account catches an impact's loss left out
    short = [e for e in sim.events if e is not max(impacts, key=lambda e: e.energy_lost)]
    assert np.max(np.abs(energy_account(rec, short))) > 1.0
    # a shin stuck at rest from 0.401 s, its force outside the cone with no direction
    # its slip would grow along (slip_onset), is held stuck a step at a time: no event
    # (16 pairs of a slip and a stick at the same instant, at zero speed, before)
    assert idle_stops(sim.events) == [] and idle_jams(sim.events) == []
    slip = next(e for e in sim.events if e.kind == "slip")
    stop = dataclasses.replace(slip, kind="stick", v_pre=1e-15)
    assert idle_stops([*sim.events, stop])  # the check catches one


def _corner_landing(tmp_path: Path, seed: int, law: str):
    """A 0.2 m cube (1 kg, mu 0.4) turned at random and spun at random, landing on one
    corner while it slides: its velocities (world) just before and after the impact, the
    corner (from the centre) and the impulse that the momentum's change gives."""
    rng = np.random.default_rng(seed)
    text = (MODELS / "box_thrown.xml").read_text().replace('"0.3 0 0"', '"0.4 0 0"')
    path = tmp_path / "corner.xml"
    path.write_text(re.sub(r"<keyframe>.*</keyframe>", "", text, flags=re.S))
    system = pfaff.load(path)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)  # MuJoCo's (w, x, y, z)
    corners = np.array([[x, y, z] for x in (-R, R) for y in (-R, R) for z in (-R, R)])

    def turn(q: np.ndarray) -> np.ndarray:
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, system.q_to_qpos(q)[3:7])
        return rot.reshape(3, 3)

    sim = pfaff.Simulator(system, dt=DT, impact_friction=law)
    q = sim.q.copy()
    q[3:7] = [*quat[1:], quat[0]]  # Pinocchio's (x, y, z, w)
    rot = turn(q)
    q[2] = 0.05 - min((rot @ c)[2] for c in corners)  # its lowest corner 5 cm up
    v_w, w_w = np.array([*rng.uniform(-3.0, 3.0, 2), 0.0]), rng.uniform(-4.0, 4.0, 3)
    sim.reset(q=q, v=np.r_[rot.T @ v_w, rot.T @ w_w])  # the free joint's: in the body's axes
    sim.step(n=150)
    first = sim.events[0]
    rec = sim.record().arrays()
    k = int(np.searchsorted(rec["t"], first.t - 1e-12))  # the impact's sample: after it
    assert first.kind == "impact" and abs(rec["t"][k] - first.t) < 1e-12
    r0, r1 = turn(rec["q"][k - 1]), turn(rec["q"][k])
    # before: ballistic from the sample before (a cube's angular velocity is constant)
    v0 = r0 @ rec["v"][k - 1][:3] + np.array([0.0, 0.0, -G]) * (first.t - rec["t"][k - 1])
    w0 = r0 @ rec["v"][k - 1][3:]
    v1, w1 = r1 @ rec["v"][k][:3], r1 @ rec["v"][k][3:]
    arm = r1 @ min(corners, key=lambda c: (r1 @ c)[2])
    return v0, w0, v1, w1, arm, 1.0 * (v1 - v0)


@pytest.mark.parametrize("seed", range(6))
def test_a_cube_landing_on_a_corner_takes_coulombs_impulse_against_its_slip_after(tmp_path, seed):
    """Moreau's law read from the run's own states, at six random landings (the slip
    turns by 1-62 degrees in the impact, so its direction after is not the one before):
    the impulse P = m (v+ - v-) turns the cube by r x P / I (one contact), stops the
    corner along the normal, and its tangential part is mu P_n against the slip after."""
    v0, w0, v1, w1, arm, P = _corner_landing(tmp_path, seed, "coulomb")
    n = np.array([0.0, 0.0, 1.0])
    inertia = 1.0 * (2 * R) ** 2 / 6.0  # a cube's, about any axis through its centre
    assert np.linalg.norm((w1 - w0) - np.cross(arm, P) / inertia) < 1e-9  # [rad/s]
    u = v1 + np.cross(w1, arm)  # the corner's velocity after
    assert abs(u @ n) < 1e-9 and P @ n > 0.1  # [m/s], [N s]
    p_t, u_t = P - (P @ n) * n, u - (u @ n) * n
    assert abs(np.linalg.norm(p_t) - 0.4 * (P @ n)) < 1e-9  # [N s]
    if np.linalg.norm(u_t) > 1e-6:  # slipping on: the impulse against the slip
        assert np.linalg.norm(p_t / np.linalg.norm(p_t) + u_t / np.linalg.norm(u_t)) < 1e-6


def test_the_corner_check_catches_a_landing_without_coulombs_impulse(tmp_path):
    # the "stick" law: the corner slips through with no tangential impulse
    *_, P = _corner_landing(tmp_path, 0, "stick")
    assert np.linalg.norm(P[:2]) < 1e-9 and P[2] > 0.1  # [N s]: |P_t| is not mu P_n
