"""A model whose collision geoms can meet gets one warning naming them (contact is not
modelled): the pairs are MuJoCo's own, by its collision filter (contype/conaffinity,
<exclude>, the parent-child rule, <pair>, the contact flag), read from the model."""

from __future__ import annotations

import json
import warnings

import mujoco
import numpy as np
import pytest

import pfaff
from pfaff.cli import main
from pfaff.mechanism.mjcf_collisions import CONTACT_WARNING, collision_pairs

BALL = """<mujoco>
  {option}
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" {floor}/>
    <body name="ball" pos="0 0 1"><freejoint/><geom name="ball" size="0.1" {ball}/></body>
  </worldbody>
  {contact}
</mujoco>"""


def _load(tmp_path, xml: str) -> tuple[pfaff.System, list[str]]:
    """The System of ``xml`` and the Python warnings its load raised."""
    path = tmp_path / "model.xml"
    path.write_text(xml)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        system = pfaff.load(path, contact=False)  # the warning of contact turned off
    return system, [str(w.message) for w in caught]


def _contact_lines(lines: list[str]) -> list[str]:
    return [w for w in lines if w.startswith(CONTACT_WARNING)]


def _ball(option="", floor="", ball="", contact="") -> str:
    return BALL.format(option=option, floor=floor, ball=ball, contact=contact)


def test_a_ball_above_a_floor_is_announced_once_by_name(tmp_path):
    system, raised = _load(tmp_path, _ball())
    expected = (
        "contact is not modelled: MuJoCo's collision filter lets 1 geom pair touch "
        "(geom 'floor' / geom 'ball'); with contact=False they pass through each other, "
        "where MuJoCo simulates their contacts (pfaff.load(path) holds them; to run the same "
        "model in both without them, turn them off in the file: <flag contact='disable'/>, "
        "contype='0' conaffinity='0', or <exclude>)"
    )
    assert _contact_lines(system.warnings) == [expected]
    assert _contact_lines(raised) == [expected]  # once, as a Python warning too


@pytest.mark.parametrize(
    "kw",
    [
        {"ball": "contype='0' conaffinity='0'"},
        {"floor": "contype='2' conaffinity='2'"},  # bitmasks that do not meet
        {"contact": "<contact><exclude body1='world' body2='ball'/></contact>"},
        {"option": "<option><flag contact='disable'/></option>"},
        {"option": "<option><flag constraint='disable'/></option>"},
    ],
    ids=["contype-0", "bitmasks", "exclude", "contact-off", "constraint-off"],
)
def test_geoms_that_cannot_meet_are_not_announced(tmp_path, kw):
    system, raised = _load(tmp_path, _ball(**kw))
    assert _contact_lines(system.warnings) == [] and _contact_lines(raised) == []


def test_an_explicit_pair_is_announced_whatever_the_bitmasks(tmp_path):
    xml = _ball(
        ball="contype='0' conaffinity='0'",
        contact="<contact><pair geom1='floor' geom2='ball'/></contact>",
    )
    system, raised = _load(tmp_path, xml)
    assert len(_contact_lines(raised)) == 1
    assert "(geom 'floor' / geom 'ball')" in _contact_lines(system.warnings)[0]


CHAIN = """<mujoco>
  {option}
  <worldbody>
    <body name="upper"><joint axis="0 1 0"/><geom size="0.1"/>
      <body name="lower" pos="0 0 -0.05"><joint axis="0 1 0"/><geom size="0.1"/></body>
    </body>
  </worldbody>
</mujoco>"""


def test_a_body_and_its_parent_do_not_meet_unless_the_file_says_so(tmp_path):
    system, raised = _load(tmp_path, CHAIN.format(option=""))
    assert _contact_lines(system.warnings) == [] and _contact_lines(raised) == []
    off = "<option><flag filterparent='disable'/></option>"
    system, raised = _load(tmp_path, CHAIN.format(option=off))
    assert len(_contact_lines(raised)) == 1
    assert "lets 1 geom pair touch (body 'upper' / body 'lower')" in system.warnings[-1]


def test_bodies_welded_together_never_meet_and_the_world_is_no_parent(tmp_path):
    """Geoms of one body, of bodies welded to it or to the world never meet; a child of
    the world meets the world's geoms (MuJoCo exempts the world from the parent rule)."""
    xml = """<mujoco><worldbody>
      <geom name="ground" type="box" size="1 1 0.1"/>
      <body name="post"><geom name="post" size="0.2"/></body>
      <body name="arm"><joint axis="0 0 1"/><geom name="a1" size="0.1"/>
        <geom name="a2" size="0.1"/>
        <body name="hand"><geom name="hand" size="0.1"/></body></body>
    </worldbody></mujoco>"""
    system, _ = _load(tmp_path, xml)
    (line,) = _contact_lines(system.warnings)
    assert "lets 6 geom pairs touch (geom 'ground' / geom 'a1'; geom 'ground' / geom 'a2';" in line
    m = mujoco.MjModel.from_xml_string(xml)
    got = {
        tuple(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in pair)
        for pair in collision_pairs(m)
    }
    world, arm = ("ground", "post"), ("a1", "a2", "hand")
    assert got == {(w, a) for w in world for a in arm}


SCRAMBLE = """<mujoco>
  <option><flag gravity='disable'/></option>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <geom name="wall" type="box" size="0.5 0.5 0.5"/>
    <body name="a"><freejoint/><geom name="a" size="0.3" contype="1" conaffinity="2"/>
      <body name="b"><joint axis="0 0 1"/><geom name="b" size="0.3"/>
        <body name="c"><joint axis="1 0 0"/><geom name="c" type="box" size="0.2 0.2 0.2"/>
          <geom name="c2" type="capsule" size="0.1 0.2" contype="4" conaffinity="4"/>
        </body></body></body>
    <body name="d"><joint type="slide" axis="0 0 1"/><geom name="d" size="0.3" contype="2"
      conaffinity="1"/></body>
    <body name="e"><freejoint/><geom name="e" type="cylinder" size="0.2 0.2" contype="0"
      conaffinity="0"/></body>
  </worldbody>
  <contact><exclude body1="b" body2="d"/><pair geom1="e" geom2="c"/></contact>
</mujoco>"""


def test_the_pairs_are_the_ones_mujoco_collides_when_everything_overlaps():
    """The witness: every geom placed around the origin, where all of them overlap, and
    MuJoCo's own collision detection (mj_forward) touches exactly the pairs named."""
    m = mujoco.MjModel.from_xml_string(SCRAMBLE)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    touching = {tuple(sorted(map(int, c.geom))) for c in d.contact[: d.ncon]}
    pairs = set(collision_pairs(m))
    assert pairs == touching
    assert len(pairs) >= 8  # the filters left something to name


def test_a_run_that_falls_through_its_floor_says_so(tmp_path):
    model = tmp_path / "ball.xml"
    model.write_text(_ball())
    out = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        argv = ["run", str(model), "--out", str(out), "--set", "t_end=0.5"]
        assert main([*argv, "--set", "contact=false"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok"
    lines = [w for w in summary["warnings"] if CONTACT_WARNING in w]
    assert len(lines) == 1 and "(geom 'floor' / geom 'ball')" in lines[0]
    z = np.load(out / "trajectory.npz")["q"][:, 2]
    assert z[-1] < 0  # through the floor: what the warning announces
    report = (out / "report.html").read_text()
    assert "geom &#x27;floor&#x27; / geom &#x27;ball&#x27;" in report or (
        "geom 'floor' / geom 'ball'" in report
    )
