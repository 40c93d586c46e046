"""The contact pairs of a file and their parameters are MuJoCo's: each case puts a ball on
a floor (both touching) and compares :func:`contact_pairs` with the contact MuJoCo's own
collision driver makes there (``mj_forward``: ``d.contact``)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pfaff.mechanism import mjcf_contacts
from pfaff.mechanism.mjcf_contacts import contact_pairs

XML = """<mujoco><worldbody>
  <geom name="floor" type="plane" size="2 2 0.1" friction="{ff}" priority="{pf}" condim="{cf}"
        margin="{mf}"/>
  <body name="ball" pos="0 0 0.099"><freejoint/>
    <geom name="ball" size="0.1" friction="{fb}" priority="{pb}" condim="{cb}" margin="{mb}"/>
  </body></worldbody>{contact}</mujoco>"""

FRICTION = st.tuples(*[st.floats(0.0, 2.0, allow_nan=False)] * 3)
CONDIM = st.sampled_from([1, 3, 4, 6])


def _model(ff, fb, pf, pb, cf, cb, mf=0.0, mb=0.0, contact="") -> mujoco.MjModel:
    def fmt(f):
        return " ".join(f"{x:.6g}" for x in f)

    xml = XML.format(
        ff=fmt(ff), fb=fmt(fb), pf=pf, pb=pb, cf=cf, cb=cb, mf=mf, mb=mb, contact=contact
    )
    return mujoco.MjModel.from_xml_string(xml)


def _mujoco_contact(m: mujoco.MjModel):
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.ncon == 1, "the ball touches the floor: MuJoCo makes one contact"
    return d.contact[0]


def _agree(m: mujoco.MjModel) -> None:
    (pair,) = contact_pairs(m)
    c = _mujoco_contact(m)
    assert {pair.geom1, pair.geom2} == {int(c.geom1), int(c.geom2)}
    assert pair.condim == int(c.dim)
    np.testing.assert_allclose(pair.friction, c.friction, rtol=0, atol=1e-12)
    assert pair.mu == pytest.approx(float(c.friction[0]) if c.dim > 1 else 0.0, abs=1e-12)
    assert pair.margin == pytest.approx(float(m.geom_margin.max()) if not pair.explicit else 0)


@settings(max_examples=60, deadline=None)
@given(FRICTION, FRICTION, st.integers(0, 2), st.integers(0, 2), CONDIM, CONDIM)
def test_the_mixed_parameters_are_mujocos(ff, fb, pf, pb, cf, cb):
    _agree(_model(ff, fb, pf, pb, cf, cb))


@settings(max_examples=30, deadline=None)
@given(FRICTION, FRICTION, st.floats(0.0, 2.0), CONDIM)
def test_a_pair_of_the_file_replaces_the_geoms_parameters(ff, fb, mu, condim):
    pair = (
        f'<contact><pair geom1="ball" geom2="floor" condim="{condim}" '
        f'friction="{mu:.6g} {mu:.6g} 0.01 0.001 0.001"/></contact>'
    )
    m = _model(ff, fb, 0, 0, 3, 3, contact=pair)
    _agree(m)
    (p,) = contact_pairs(m)
    assert p.explicit and p.condim == condim
    what = {4: "torsional friction", 6: "torsional and rolling friction"}
    assert p.dropped == (None if condim <= 3 else f"condim {condim}: its {what[condim]}")


def test_margins_mix_by_the_larger():
    m = _model((1, 0.005, 1e-4), (0.5, 0.005, 1e-4), 0, 0, 3, 3, mf=0.01, mb=0.03)
    (p,) = contact_pairs(m)
    assert p.margin == pytest.approx(0.03, abs=1e-15)
    assert p.gap == pytest.approx(0.0, abs=1e-15)


def test_no_pairs_when_the_file_turns_contact_off():
    xml = XML.replace("<worldbody>", "<option><flag contact='disable'/></option><worldbody>")
    f = "1 0.005 0.0001"
    m = mujoco.MjModel.from_xml_string(
        xml.format(ff=f, fb=f, pf=0, pb=0, cf=3, cb=3, mf=0, mb=0, contact="")
    )
    assert contact_pairs(m) == []


def test_the_comparison_catches_a_wrong_mixing_rule(monkeypatch):
    """The witness discriminates: mixing by the smaller friction (a plausible slip)
    disagrees with MuJoCo's contact."""

    def smaller(m, g1, g2):
        f = np.minimum(m.geom_friction[g1], m.geom_friction[g2])
        condim = max(int(m.geom_condim[g1]), int(m.geom_condim[g2]))
        five = mjcf_contacts._five(f)
        return mjcf_contacts.ContactPair(g1, g2, condim, five[0], five, 0.0, 0.0)

    monkeypatch.setattr(mjcf_contacts, "_mixed", smaller)
    with pytest.raises(AssertionError):
        _agree(_model((1.0, 0.005, 1e-4), (0.4, 0.005, 1e-4), 0, 0, 3, 3))
