"""A fixed tendon's spring (with MuJoCo's dead band ``springlength``) and damper
(:class:`pfaff.simulate.TendonSpring`, ``src/cpp/forces/tendon_spring.cpp``): the NumPy
element against MuJoCo's own ``qfrc_passive`` (the witness of the equations, joints'
``ref`` and ``springref`` included), the core's Q, V and power against the NumPy
element at many states, and whole runs of the two engines."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from both_engines import assert_force_terms_agree, assert_series_agree, simulate_both

import pfaff
from pfaff import core
from pfaff.mechanism.base import ModelError
from pfaff.simulate import SimOptions, TendonSpring
from pfaff.simulate.forces import ForceSet

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

TENDONS = """
<mujoco>
  <option gravity="0 0 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 0 1" ref="0.3" springref="0.5"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
      <body name="b" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0" ref="-0.7"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.4"/>
        <body name="c" pos="0.3 0 0">
          <joint name="s3" type="slide" axis="1 0 0" ref="0.05" springref="0.1"/>
          <geom type="sphere" size="0.03" mass="0.2"/>
          <site name="tip"/>
        </body>
      </body>
    </body>
    <site name="anchor" pos="0 0 0.5"/>
  </worldbody>
  <tendon>
    <fixed name="band" stiffness="20" damping="0.7" springlength="0.1 0.4">
      <joint joint="j1" coef="0.5"/><joint joint="j2" coef="-0.8"/>
    </fixed>
    <fixed name="at_spring" stiffness="5">
      <joint joint="j1" coef="1"/><joint joint="s3" coef="2"/>
    </fixed>
    <fixed name="damper" damping="0.3" frictionloss="0.2">
      <joint joint="j2" coef="1.5"/><joint joint="s3" coef="-1"/>
    </fixed>
    <spatial name="rope" stiffness="3"><site site="anchor"/><site site="tip"/></spatial>
  </tendon>
</mujoco>
"""


@pytest.fixture
def tendons(tmp_path):
    path = tmp_path / "tendons.xml"
    path.write_text(TENDONS)
    return path


def _state(rng):
    """A random (q, v) of the three joints, the band tendon inside its dead band at
    some draws and outside at others."""
    return rng.uniform(-1.5, 1.5, 3) * (1.0, 1.0, 0.3), rng.normal(0.0, 2.0, 3)


def test_tendon_springs_and_dampers_equal_mujocos_qfrc_passive(tendons):
    """MuJoCo's qfrc_passive equals pfaff's elements' Q at 30 random states (1e-9
    relative to max(1, |Q|)): the dead band, the spring length MuJoCo computes at
    qpos_spring where the file leaves springlength out, the joints' ref. A copy with one
    coefficient's sign flipped (the deliberate wrong input) misses by far."""
    sys_ = pfaff.load(tendons)
    names = sorted(e.name for e in sys_.forces)
    assert names == ["tendon at_spring", "tendon band", "tendon damper"]
    m = mujoco.MjModel.from_xml_path(str(tendons))
    m.tendon_stiffness[3] = 0.0  # the spatial rope: pfaff warns it is not modelled
    d = mujoco.MjData(m)
    mech = sys_.mechanism
    fset = ForceSet(mech, list(sys_.forces))
    band = next(e for e in sys_.forces if e.name == "tendon band")
    wrong = TendonSpring(band.joints, band.c * (1.0, -1.0), band.k, band.b,
                         (band.lo, band.hi))  # fmt: skip
    wset = ForceSet(mech, [wrong, *(e for e in sys_.forces if e is not band)])
    rng = np.random.default_rng(7)
    inside = outside = 0
    worst_wrong = 0.0
    for _ in range(30):
        q, v = _state(rng)
        d.qpos[:], d.qvel[:] = sys_.q_to_qpos(q), v
        mujoco.mj_forward(m, d)
        snap = mech.compute(q, v)
        Q, _ = fset.evaluate(0.0, snap)
        mj = d.qfrc_passive.copy()
        assert np.abs(Q - mj).max() <= 1e-9 * max(1.0, np.abs(mj).max()), (Q, mj)
        L = float(band.c @ q[band.iq])
        inside += band.lo < L < band.hi
        outside += not band.lo <= L <= band.hi
        worst_wrong = max(worst_wrong, np.abs(wset.evaluate(0.0, snap)[0] - mj).max())
    assert inside >= 3 and outside >= 10, (inside, outside)
    assert worst_wrong > 1e-2


def test_what_of_the_tendons_is_still_warned(tendons):
    """The fixed tendons' springs and dampers are modelled (no line names them); the
    spatial tendon's spring and the friction loss are warned."""
    sys_ = pfaff.load(tendons)
    w = "\n".join(sys_.warnings)
    assert "tendon 'rope': a spatial tendon's spring is not modelled" in w
    assert "tendon 'damper': frictionloss 0.2 (dry friction) is not modelled" in w
    assert "'band'" not in w and "'at_spring'" not in w


def test_core_tendon_terms_agree_with_numpy_and_runs_agree(tendons):
    """The core's Q [N m, N], V [J], power [W] equal the NumPy elements' at 40 states
    (1e-12 relative); 0.4 s of the two engines agree to 1e-9 on q, v, energy and the
    force work, and the energy account closes on both."""
    sys_ = pfaff.load(tendons)
    mech, cs = sys_.mechanism, sys_.cset
    els = list(sys_.forces)
    rng = np.random.default_rng(5)
    assert_force_terms_agree(mech, cs, els, (_state(rng) for _ in range(40)), 1e-12)
    q0, v0 = np.array([0.9, -0.6, 0.2]), np.array([1.0, -2.0, 0.5])
    a, b = simulate_both(cs, q0, v0, 0.4, SimOptions(dt=1e-3), forces=els)
    assert_series_agree(a, b, ("q", "v", "energy", "force_work", "force_potential"), 1e-9)
    drift = a["energy"] - a["energy"][0] - a["force_work"] - a["work"] - a["correction_energy"]
    assert np.abs(drift).max() <= 1e-6


def test_tendon_spring_potential_is_its_force():
    """Without damping Q = -dV/dq (central differences, 1e-7 N m) inside and outside
    the band; the spring is slack inside it."""
    from pfaff.mechanism import load_robot

    panda = load_robot("panda")
    e = TendonSpring(["panda_joint1", "panda_joint3"], [1.0, -0.7], 4.0, 0.0, (-0.2, 0.3))
    e.bind(panda)
    assert e.conservative
    rng = np.random.default_rng(2)
    for _ in range(20):
        q = panda.integrate(panda.neutral(), rng.uniform(-1, 1, panda.nv))
        snap = panda.compute(q, np.zeros(panda.nv))
        Q = e.force(0.0, snap)
        for k, i in zip(e.iv, e.iq):
            dq = np.zeros(panda.nq)
            dq[i] = 1e-6
            up, down = panda.compute(q + dq, snap.v), panda.compute(q - dq, snap.v)
            assert abs(Q[k] + (e.potential(up) - e.potential(down)) / 2e-6) <= 1e-7
    q = panda.neutral()
    q[e.iq] = (0.1, 0.0)  # L = 0.1, inside (-0.2, 0.3)
    assert np.abs(e.force(0.0, panda.compute(q, np.zeros(panda.nv)))).max() <= 1e-15


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"coefficients": [1.0]}, "one coefficient per joint"),
        ({"springlength": (0.4, 0.1)}, "lo <= hi"),
        ({"stiffness": -1.0}, "stiffness must be a finite number >= 0"),
        ({"damping": float("nan")}, "damping must be a finite number >= 0"),
    ],
)
def test_tendon_spring_refuses_bad_parameters(kwargs, words):
    args = {"joints": ["a", "b"], "coefficients": [1.0, 0.5], "stiffness": 1.0, **kwargs}
    with pytest.raises(ModelError, match=words):
        TendonSpring(**args)


def test_tendon_spring_refuses_a_ball_joint():
    from tests.parity.test_lowerings import _balls

    with pytest.raises(ModelError, match="'ball' is not a one-dof joint"):
        TendonSpring(["ball"], [1.0], 1.0).bind(_balls())
