"""Contacts in the batch entry points: ``pfaff run FILE.xml --set contact=true`` and
``simulate_limited(..., contacts=)``: the ball's impacts at the closed-form times, the
impacts' loss in the energy balance, no penetration as MuJoCo's own narrow phase measures
it on the recorded states (and that measure catching an overlap), an overlapping start
moved out with a warning, and the inputs refused."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import pfaff
from pfaff.cli import main
from pfaff.constraints.base import ConstraintSet
from pfaff.contact.closed_forms import ball_impact_times
from pfaff.contact.penetration import Penetration, penetration
from pfaff.files.model import load_model
from pfaff.mechanism.mjcf_collisions import CONTACT_WARNING
from pfaff.scenarios.model_file import run_system
from pfaff.simulate import SimOptions
from pfaff.simulate.limit_events import ContactEvent
from pfaff.simulate.limits import simulate_limited
from pfaff.simulate.trajectory import SimulationError

MODELS = Path(__file__).parents[2] / "models" / "contact"
BALL = MODELS / "ball_drop.xml"
G = 9.81


def _ball():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the friction warning, tested elsewhere
        return load_model(BALL, contact=True)


def test_pfaff_run_holds_the_floor_at_the_closed_form_impacts(tmp_path):
    out = tmp_path / "ball"
    args = ["run", str(BALL), "--out", str(out), "--set", "contact=true"]
    assert main([*args, "--set", "restitution=0.5", "--set", "t_end=1.2"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    m = summary["metrics"]
    closed = ball_impact_times(1.0, 0.5, G, n=3)  # 0.4515, 0.9031, 1.1288 s
    assert m["contact_events"] == 3 and m["limit_events"] == 0
    # each impact keeps e^2 of the kinetic energy: m g h (1 - e^4 ... ) lost over three
    assert m["limit_impact_loss"] == pytest.approx(1.0 * G * 1.0 * (1 - 0.5**6), abs=1e-9)
    assert m["energy_balance_rel"] < 1e-9
    assert m["max_penetration"] < 1e-9
    data = np.load(out / "trajectory.npz")
    assert data["penetration"].shape == data["t"].shape
    assert data["q"][:, 2].min() > 0.1 - 1e-9  # the ball's centre never below its radius
    # the notes list the located impacts
    html = (out / "report.html").read_text()
    for t in closed:
        assert f"impact of floor / ball at {t:.9g} s" in html


def test_without_contact_the_ball_falls_through_and_no_contact_metric_is_made(tmp_path):
    out = tmp_path / "ball"
    argv = ["run", str(BALL), "--out", str(out), "--set", "t_end=0.6"]
    assert main([*argv, "--set", "contact=false"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert "max_penetration" not in summary["metrics"]
    assert any("contact is not modelled" in w for w in summary["warnings"])
    z = np.load(out / "trajectory.npz")["q"][:, 2]
    assert z[-1] < 0.1 - 0.1  # through the floor: 1.1 - g 0.6^2 / 2 = -0.67 m


def test_the_penetration_measure_catches_an_overlap():
    # the witness of max_penetration: MuJoCo's narrow phase on states put into the floor
    m = _ball()
    q = np.tile(m.q, (5, 1))
    q[:, 2] = [1.1, 0.1, 0.0999, 0.09, 0.05]
    depth = penetration(m.contacts, m.coords.q_to_qpos, q)
    assert np.allclose(depth, [0.0, 0.0, 1e-4, 0.01, 0.05], atol=1e-12)
    pen = Penetration(m.contacts, m.coords.q_to_qpos)
    assert pen.overlaps(q[3], 1e-6) == ["floor / ball 0.01 m"]
    assert pen.overlaps(q[1], 1e-6) == []


def test_an_overlapping_start_is_moved_out_with_a_warning():
    m = _ball()
    m.q = m.q.copy()
    m.q[2] = 0.08  # 2 cm into the floor
    with pytest.warns(UserWarning, match=r"start overlaps \(floor / ball 0.02 m\)"):
        res = run_system(m, 0.3, SimOptions(dt=1e-3, progress=False), "ball")
    a = res.trajectory.arrays()
    assert abs(a["q"][0, 2] - 0.1) < 1e-9  # moved onto the floor at the first instant
    assert np.abs(a["q"][:, 2] - 0.1).max() < 1e-9  # and resting there
    assert res.metrics["max_penetration"] < 1e-9
    assert abs(a["lambda"][-1].sum()) == pytest.approx(G, abs=1e-9)  # m g on the floor


def test_simulate_limited_with_contacts_matches_the_closed_form():
    m = _ball()
    cset = ConstraintSet(m.mechanism, m.constraints)
    opt = SimOptions(dt=1e-3, progress=False)
    run = simulate_limited(cset, m.q, m.v, 1.0, [], opt, contacts=m.contacts, restitution=0.8)
    hits = [e.t for e in run.events if isinstance(e, ContactEvent) and e.kind == "impact"]
    assert np.abs(np.array(hits) - ball_impact_times(1.0, 0.8, G, n=len(hits))).max() < 1e-9


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_a_restitution_outside_0_1_is_refused(bad, tmp_path):
    m = _ball()
    cset = ConstraintSet(m.mechanism, m.constraints)
    opt = SimOptions(dt=1e-3, progress=False)
    with pytest.raises(ValueError, match=r"restitution = .*valid: a number in \[0, 1\]"):
        simulate_limited(cset, m.q, m.v, 0.1, [], opt, contacts=m.contacts, restitution=bad)
    args = ["run", str(BALL), "--out", str(tmp_path / "x"), "--set", f"restitution={bad}"]
    assert main(args) == 2


def test_contacts_on_the_numpy_engine_are_refused():
    m = _ball()
    cset = ConstraintSet(m.mechanism, m.constraints)
    opt = SimOptions(dt=1e-3, progress=False, engine="numpy")
    with pytest.raises(ValueError, match="contacts run on the compiled core only"):
        simulate_limited(cset, m.q, m.v, 0.1, [], opt, contacts=m.contacts)


def test_a_urdfs_collision_elements_are_warned_not_read(tmp_path):
    urdf = Path(__file__).parents[2] / "models" / "four_bar.urdf"
    plain = load_model(urdf)  # contact on by default: a URDF has no pairs pfaff reads
    assert plain.contacts is None
    assert not [w for w in plain.warnings if w.startswith(CONTACT_WARNING)]
    text = urdf.read_text()
    collision = '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'
    with_collision = tmp_path / "four_bar.urdf"
    i = text.index("</link>")
    with_collision.write_text(text[:i] + collision + text[i:])
    said = [w for w in load_model(with_collision).warnings if w.startswith(CONTACT_WARNING)]
    assert len(said) == 1 and "1 <collision> element" in said[0]
    off = load_model(with_collision, contact=False).warnings
    assert not [w for w in off if w.startswith(CONTACT_WARNING)]
    # the command line's contact parameter is an MJCF's: refused for a URDF
    assert main(["run", str(urdf), "--out", str(tmp_path / "u"), "--set", "contact=true"]) == 2


def test_a_simulator_reset_into_the_floor_warns_and_moves_out():
    import pfaff

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        system = pfaff.load(BALL, contact=True)
    sim = pfaff.Simulator(system, dt=1e-3)
    q = system.q0.copy()
    q[2] = 0.09
    with pytest.warns(UserWarning, match=r"start overlaps \(floor / ball 0.01 m\)"):
        sim.reset(q=q)
    sim.step(n=20)
    assert abs(sim.q[2] - 0.1) < 1e-9 and sim.events[0].t == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a start on the floor or above it: no warning
        sim.reset()
        q[2] = 0.1
        sim.reset(q=q)


def test_pfaff_compare_with_contact_puts_the_soft_contact_beside_the_exact_one(tmp_path):
    out = tmp_path / "cmp"
    args = ["compare", str(BALL), "--out", str(out), "--set", "contact=true"]
    assert main([*args, "--set", "t_end=0.8"]) == 0
    m = json.loads((out / "summary.json").read_text())["metrics"]
    t1 = ball_impact_times(1.0, 0.0, G, n=1)[0]
    assert abs(m["pfaff_first_impact_s"] - t1) < 1e-9
    # MuJoCo's first step with a contact: the step the ball reaches the floor in
    assert 0.0 <= m["mujoco_first_impact_s"] - t1 < 1e-3 + 1e-9
    assert m["pfaff_max_penetration"] < 1e-9
    # soft: it sinks in at the impact (docs/contact.md quotes 33 mm for mujoco 4.0.0)
    assert 0.025 < m["mujoco_max_penetration"] < 0.04
    data = np.load(out / "trajectory.npz")
    assert data["mujoco_penetration"].max() == pytest.approx(m["mujoco_max_penetration"])


@pytest.mark.parametrize("pose", [None, ("0 0 0.8", "10 15 5")])
def test_legs_dropped_on_the_floor_keep_the_energy_balance_through_their_events(pose, tmp_path):
    # the file's pose: a stop reached inside the step to a sample where a held contact
    # also pulls; the stop is located first (the pull read there is past it). Read the
    # other way round, the knee was put onto its bound without an event: 1.3e-3.
    # the second pose: an ankle past its stop and back inside one step, found past it at
    # a foot's located impact; located again up to there (else put onto its bound: 3e-7)
    path = MODELS / "legs_drop.xml"
    if pose is not None:
        text = path.read_text().replace(
            'pos="0 0 0.95" euler="12 30 6"', f'pos="{pose[0]}" euler="{pose[1]}"'
        )
        path = tmp_path / "legs.xml"
        path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = load_model(path, contact=True)
    res = run_system(m, 2.0, SimOptions(dt=1e-3, progress=False), "legs")
    assert res.metrics["limit_events"] > 10 and res.metrics["contact_events"] > 10
    assert res.metrics["energy_balance_rel"] < 2e-9
    assert res.metrics["max_penetration"] < 1e-9


@pytest.mark.parametrize("mu", [0.5, 0.1])
def test_the_recorded_contact_forces_hold_the_box_on_the_incline(mu, tmp_path):
    # the record's contact forces per sample, once the box has landed: normal m g cos a;
    # friction m g sin a up the slope while it sticks (mu 0.5 > tan 20 deg), Coulomb's
    # mu m g cos a against the slide while it slips (mu 0.1)
    a = np.radians(20.0)
    down = np.array([np.cos(a), 0.0, -np.sin(a)])
    text = (MODELS / "incline.xml").read_text().replace('friction="0.5 ', f'friction="{mu:g} ')
    path = tmp_path / "incline.xml"
    path.write_text(text)
    m = load_model(path, contact=True)
    res = run_system(m, 0.3, SimOptions(dt=1e-3, progress=False), "incline")
    fn = res.extra_arrays["contact_normal_force"][:, 0]
    ft = res.extra_arrays["contact_friction_force"][:, 0]
    t = res.trajectory.arrays()["t"]
    held = t > 0.01  # landed (the first impact is at the start, onto the plane)
    assert np.abs(fn[held] - G * np.cos(a)).max() < 1e-9
    want = -G * np.sin(a) * down if mu == 0.5 else -mu * G * np.cos(a) * down
    assert np.abs(ft[held] - want).max() < 1e-9
    assert "contact_forces" in res.plots
    # a wrong force is caught: the weight alone is not the normal force on a slope
    assert np.abs(fn[held] - G).max() > 0.5


def test_a_run_at_rest_is_judged_against_the_energy_floor(tmp_path):
    """A box resting on its four corners: its kinetic energy stays round-off (1e-32 J),
    so the relative energy metrics take 1e-9 J (ENERGY_FLOOR) as their scale; over the
    largest kinetic energy, as before, round-off over round-off read as drift 1."""
    from pfaff.scenarios.model_file import ENERGY_FLOOR
    from pfaff.simulate.trajectory import energy_drift_rel

    system = load_model(MODELS / "box_on_plane.xml", contact=True)
    res = run_system(system, 0.3, SimOptions(dt=1e-3), "box")
    m, a = res.metrics, res.trajectory.arrays()
    assert a["kinetic"].max() < 1e-20  # [J] at rest
    assert m["energy_reference"] == ENERGY_FLOOR
    assert m["energy_drift_rel"] < 1e-9 and m["energy_balance_rel"] < 1e-9
    assert energy_drift_rel(a["energy"], a["kinetic"]) > 0.1  # the old scale: caught


_ARM = """<mujoco><worldbody><geom name="floor" type="plane" size="2 2 0.1"/>
  <body name="upper">{joint}
    <geom name="upper" type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
    <body name="lower" pos="0.3 0 0"><joint name="elbow" type="hinge" axis="0 1 0"/>
      <geom name="lower" type="capsule" fromto="0 0 {lower}" size="0.02"/>
    </body>
  </body>
</worldbody></mujoco>"""
_HINGE = '<joint name="shoulder" type="hinge" axis="0 1 0"/>'


def test_a_link_pinned_in_the_floor_is_left_out_of_contact_and_said(tmp_path):
    """An arm hinged at the floor, its shoulder link lying half in it: no motion brings
    the pin out, so that pair is not modelled (warned, naming it); the elbow link, which
    can leave the floor, keeps its contact and falls onto it. A free link overlapping the
    floor is no pin: it keeps its pair and is moved out at the start."""
    from pfaff.contact.model import PINNED_WARNING

    f = tmp_path / "arm.xml"
    f.write_text(_ARM.format(joint=_HINGE, lower="0.03 0 0 0.3"))
    system = load_model(f, contact=True)
    said = [w for w in system.warnings if w.startswith(PINNED_WARNING)]
    assert len(said) == 1 and "floor / upper" in said[0] and "lower" not in said[0]
    assert [n for n in system.contacts.names] == [("floor", "lower")]
    out = tmp_path / "o"
    assert main(["run", str(f), "--out", str(out), "--set", "t_end=1.5"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["contact_events"] >= 1  # the elbow link lands on the floor
    assert summary["metrics"]["max_penetration"] < 1e-9
    assert [PINNED_WARNING in w for w in summary["warnings"]] == [True]  # no move-out
    # the wrong input for the rule: a free upper link is no pin, its pair is kept
    free = tmp_path / "free.xml"
    free.write_text(_ARM.format(joint="<freejoint/>", lower="0.03 0 0 0.3"))
    system = load_model(free, contact=True)
    assert not [w for w in system.warnings if w.startswith(PINNED_WARNING)]
    assert ("floor", "upper") in system.contacts.names


#: a free ball between a floor and a ceiling 6 cm above it, its radius
#: 5 cm: in the floor by {depth} m (and in the ceiling by 4 cm less), which no motion
#: undoes where the depth is above 1 cm
_SQUEEZED = """<mujoco><worldbody><geom name="floor" type="plane" size="2 2 0.1"/>
  <geom name="ceiling" type="box" pos="0 0 0.11" size="1 1 0.05"/>
  <body name="ball" pos="0 0 {z}"><freejoint/>
    <geom name="ball" type="sphere" size="0.05"/></body>
</worldbody></mujoco>"""


def _squeezed(depth: float) -> str:
    return _SQUEEZED.format(depth=depth, z=0.05 - depth)


@pytest.mark.parametrize("joint", ["slide", "hinge"])
def test_a_body_on_a_slide_in_the_floor_is_no_pin(tmp_path, joint):
    """A box on a vertical slide 1 cm in the floor: the slide lifts it out (moved out at
    the start, no overlap left); the same box hinged at its centre (the wrong input for
    the rule: no motion brings its centre out) is a link pinned to the world, its pair
    left out and said."""
    from pfaff.contact.model import PINNED_WARNING

    f = tmp_path / "box.xml"
    f.write_text(
        '<mujoco><worldbody><geom name="floor" type="plane" size="2 2 0.1"/>'
        f'<body name="box" pos="0 0 0.04"><joint type="{joint}" axis="0 0 1"/>'
        '<geom name="box" type="box" size="0.05 0.05 0.05"/></body></worldbody></mujoco>'
    )
    system = load_model(f, contact=True)
    pinned = [w for w in system.warnings if w.startswith(PINNED_WARNING)]
    assert len(pinned) == (joint == "hinge")
    if joint == "slide":
        res = run_system(system, 0.05, SimOptions(dt=1e-3, progress=False), "box")
        assert res.metrics["max_penetration"] < 1e-9 and res.metrics["contact_events"] >= 1


def test_a_start_too_deep_to_move_out_names_the_pairs(tmp_path):
    """A ball 2 cm into the floor and 2 cm into the ceiling cannot be moved out: the run
    fails at its start and says which pairs overlap and what to do. The arm whose elbow
    link hangs 30 cm into the floor is no such start: its shoulder swings the link out
    (its lower end held on the floor, nothing left inside)."""
    f = tmp_path / "squeezed.xml"
    f.write_text(_squeezed(0.02))
    system = load_model(f, contact=True)
    with pytest.raises(SimulationError, match=r"the start overlaps \(.*floor / ball 0\.02"):
        run_system(system, 0.01, SimOptions(dt=1e-3, progress=False), "ball")
    f.write_text(_ARM.format(joint=_HINGE, lower="0 0 0 -0.3"))
    system = load_model(f, contact=True)
    res = run_system(system, 0.01, SimOptions(dt=1e-3, progress=False), "arm")
    assert res.metrics["max_penetration"] < 1e-9


def test_an_overlap_whose_points_cannot_all_touch_is_left_by_its_deepest(tmp_path):
    """The elbow link hanging 1 cm into the floor (its capsule's lower end 3 cm deep, its
    elbow end 2 cm): both ends on the floor would take a quarter turn of the link, which
    the first order does not see; the least motion out of the overlap (a QP: every gap
    >= 0) lifts the lower end onto the floor and brings the elbow end clear. The start
    holds one point, and no overlap is left (MuJoCo's narrow phase reads it)."""
    f = tmp_path / "arm.xml"
    f.write_text(_ARM.format(joint=_HINGE, lower="0 0 0 -0.01"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the overlap and the pinned shoulder link: said
        system = pfaff.load(f, contact=True)
        sim = pfaff.Simulator(system, dt=1e-3)
    before = penetration(system.contacts, system.q_to_qpos, sim.q[None])[0]
    assert abs(before - 0.03) < 1e-9  # the wrong start the check reads: 3 cm deep
    sim.step(n=20)
    deep = penetration(system.contacts, system.q_to_qpos, sim.record().arrays()["q"])
    assert np.max(deep) < 1e-9
    held = [c for c in sim.contacts if (c.geom1, c.geom2) == ("floor", "lower")]
    assert len(held) == 1 and held[0].normal_force > 0.0
    assert abs(held[0].point[2]) < 1e-9  # on the floor


def test_a_simulator_whose_start_is_too_deep_names_the_pairs(tmp_path):
    """The same start through the Simulator: its first step fails, naming the pairs and
    what to do; the arm with its elbow link out of the floor (the wrong input to the
    check: no overlap) steps on."""
    f = tmp_path / "squeezed.xml"
    f.write_text(_squeezed(0.02))
    with pytest.warns(UserWarning, match="the start overlaps"):
        sim = pfaff.Simulator(pfaff.load(f, contact=True), dt=1e-3)
    with pytest.raises(SimulationError, match=r"deeper than a motion of the mechanism"):
        sim.step(n=5)
    f.write_text(_ARM.format(joint=_HINGE, lower="0.03 0 0 0.3"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the shoulder link pinned in the floor: said
        out = pfaff.Simulator(pfaff.load(f, contact=True), dt=1e-3)
    out.step(n=5)
    assert out.steps == 5
