"""MJCF through MuJoCo's compiler (mechanism.mjcf) against MuJoCo itself: sizes, bodies,
equality rows, inertia, gravity, forward kinematics, the qpos <-> q mapping and the equality
residuals."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from mjcf_support import (
    OWN,
    SHARED_NAMES,
    mujoco_equality_residual,
    mujoco_or_skip,
    shared_model,
)

from pfaff.constraints import ConstraintSet, check_derivatives
from pfaff.constraints.mjcf_equality import equality_constraints
from pfaff.mechanism import ModelError, PinocchioMechanism
from pfaff.mechanism.mjcf import read_mjcf
from pfaff.simulate.assembly import assemble

OWN_NAMES = ("four_bar", "five_bar", "slider_crank", "gripper", "leg", "poly_coupling")


def _path(name: str):
    return OWN / f"{name}.xml" if name in OWN_NAMES else shared_model(name)


def _system(name: str):
    mj = read_mjcf(_path(name))
    mech = PinocchioMechanism(mj.model, name)
    return mj, mech, ConstraintSet(mech, equality_constraints(mj.equalities))


def _random_states(mech, q0, n, seed, scale=0.4):
    rng = np.random.default_rng(seed)
    return [mech.integrate(q0, scale * rng.standard_normal(mech.nv)) for _ in range(n)]


def _free_T(mj, q):
    """v_mujoco = T v_pfaff: a free joint's linear velocity is in the world in MuJoCo."""
    T = np.eye(mj.model.nv)
    for j in mj.joints:
        if j.type == "free":
            R = pin.Quaternion(*np.roll(q[j.idx_q + 3 : j.idx_q + 7], 1)).matrix()
            T[j.idx_v : j.idx_v + 3, j.idx_v : j.idx_v + 3] = R
    return T


@pytest.mark.parametrize("name", SHARED_NAMES + OWN_NAMES)
def test_sizes_bodies_and_equality_rows_as_mujoco(name):
    mujoco = mujoco_or_skip()
    mj, mech, cset = _system(name)
    m = mujoco.MjModel.from_xml_path(str(_path(name)))
    d = mujoco.MjData(m)
    rows = mujoco_equality_residual(mujoco, m, d, m.qpos0).size
    assert (mech.nq, mech.nv, len(mj.bodies), cset.dim) == (m.nq, m.nv, m.nbody - 1, rows)
    # qpos0 maps to pfaff's default posture and back
    assert np.abs(mj.q_to_qpos(mj.q0) - m.qpos0).max() <= 1e-12


@pytest.mark.parametrize("name", SHARED_NAMES + ("leg", "gripper"))
def test_inertia_gravity_and_kinematics_as_mujoco(name):
    """M(q), g(q) and every body's placement at random states: the XML inertias
    (capsule = cylinder + hemispheres, fromto boxes), joint order, hinge ref and
    quaternion order all agree with MuJoCo's compiler."""
    mujoco = mujoco_or_skip()
    mj, mech, _ = _system(name)
    m = mujoco.MjModel.from_xml_path(str(_path(name)))
    d = mujoco.MjData(m)
    for q in _random_states(mech, mj.q0, 4, seed=3, scale=0.8):
        d.qpos[:] = mj.q_to_qpos(q)
        mujoco.mj_forward(m, d)
        Mm = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, Mm)
        T = _free_T(mj, q)
        snap = mech.compute(q, None, mj.bodies)
        scale = max(1.0, np.abs(Mm).max())
        assert np.abs(T.T @ Mm @ T - snap.M).max() <= 1e-12 * scale
        assert np.abs(T.T @ d.qfrc_bias - snap.g).max() <= 1e-10 * scale
        for i, body in enumerate(mj.bodies, start=1):
            fs = snap.frames[body]
            assert np.abs(fs.p - d.xpos[i]).max() <= 1e-12
            assert np.abs(fs.R - d.xmat[i].reshape(3, 3)).max() <= 1e-12


def test_qpos_mapping_quaternion_order_and_hinge_ref():
    """Closed forms of the mapping: free (p, w, x, y, z) -> (p, x, y, z, w), ball
    (w, x, y, z) -> (x, y, z, w), hinge q = qpos - ref (ref in degrees)."""
    mj = read_mjcf(shared_model("jdotv_connect_3d"))  # ball joint, then a free joint
    qpos = np.array([0.1, 0.2, 0.3, 0.4, 1.0, 2.0, 3.0, 0.5, 0.6, 0.7, 0.8])
    q = mj.qpos_to_q(qpos)
    assert q.tolist() == [0.2, 0.3, 0.4, 0.1, 1.0, 2.0, 3.0, 0.6, 0.7, 0.8, 0.5]
    assert np.abs(mj.q_to_qpos(q) - qpos).max() <= 1e-15
    leg = read_mjcf(OWN / "leg.xml")
    knee = next(j for j in leg.joints if j.name == "knee")
    assert abs(knee.ref - np.deg2rad(10.0)) <= 1e-15
    q_key, v_key = leg.keyframes["crouch"]
    assert abs(q_key[knee.idx_q] - (0.1070 - np.deg2rad(10.0))) <= 1e-15
    assert not np.any(v_key)  # no qvel in the key: at rest


def test_free_joint_velocity_mapping_against_mujoco():
    """qvel -> v at a random state: the free body's world-frame velocity of MuJoCo
    (cvel-independent check: kinetic energy 1/2 qvel' M_mj qvel = 1/2 v' M v)."""
    mujoco = mujoco_or_skip()
    mj, mech, _ = _system("jdotv_connect_3d")
    m = mujoco.MjModel.from_xml_path(str(shared_model("jdotv_connect_3d")))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(7)
    for q in _random_states(mech, mj.q0, 3, seed=8, scale=1.0):
        qvel = rng.standard_normal(m.nv)
        d.qpos[:], d.qvel[:] = mj.q_to_qpos(q), qvel
        mujoco.mj_forward(m, d)
        Mm = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, Mm)
        v = mj.qvel_to_v(q, qvel)
        assert abs(0.5 * qvel @ Mm @ qvel - mech.compute(q, v).kinetic) <= 1e-12
        assert np.abs(mj.v_to_qvel(q, v) - qvel).max() <= 1e-14


@pytest.mark.parametrize("name", SHARED_NAMES + OWN_NAMES)
def test_equality_residuals_are_mujocos(name):
    """Off the manifold pfaff's residual blocks have MuJoCo's norms (connect and weld
    position rows: the same numbers); after pfaff's assembly MuJoCo's own residual
    vanishes -- anchors, relpose, site frames and torquescale read as MuJoCo does."""
    mujoco = mujoco_or_skip()
    mj, mech, cset = _system(name)
    m = mujoco.MjModel.from_xml_path(str(_path(name)))
    d = mujoco.MjData(m)
    for q in _random_states(mech, mj.q0, 3, seed=11, scale=0.3):
        phi, _ = cset.holonomic_terms_at(q)
        r_mj = mujoco_equality_residual(mujoco, m, d, mj.q_to_qpos(q))
        if not any(e.kind == "joint" for e in mj.equalities):
            blocks = lambda x: np.linalg.norm(x.reshape(-1, 3), axis=1)  # noqa: E731
            assert np.abs(blocks(phi) - blocks(r_mj)).max() <= 1e-12
        asm = assemble(cset, q)
        assert asm.residual <= 1e-12
        assert np.abs(mujoco_equality_residual(mujoco, m, d, mj.q_to_qpos(asm.q))).max() <= 1e-11


@pytest.mark.parametrize(
    "name", ("jdotv_weld_3d", "weld", "equality_site", "gripper", "leg", "poly_coupling")
)
def test_equality_jacobians_and_drifts_against_finite_differences(name):
    mj, mech, cset = _system(name)
    rng = np.random.default_rng(5)
    for q in _random_states(mech, mj.q0, 3, seed=6):
        err = check_derivatives(cset, q, rng.standard_normal(mech.nv))
        assert err["jacobian"] <= 1e-7 and err["drift"] <= 1e-6


def test_derivative_check_catches_a_wrong_weld_jacobian():
    """The finite-difference witness is not blind: a weld's orientation rows with the
    Jacobian of the wrong sign are caught."""
    from pfaff.constraints.quat_aligned import QuatAligned

    class Wrong(QuatAligned):
        def terms(self, snap):
            A, dr, u = super().terms(snap)
            return -A, dr, u

    mj, mech, _ = _system("jdotv_weld_3d")
    e = mj.equalities[0]
    cset = ConstraintSet(mech, [Wrong(e.frame1, e.frame2, offset=e.R_rel)])
    q = _random_states(mech, mj.q0, 1, seed=2)[0]
    assert check_derivatives(cset, q, np.ones(mech.nv))["jacobian"] > 1e-3


def _write(tmp_path, body: str, equality: str = "", extra: str = "") -> str:
    p = tmp_path / "m.xml"
    p.write_text(
        f"<mujoco><worldbody>{body}</worldbody>{extra}<equality>{equality}</equality></mujoco>"
    )
    return str(p)


_ARM = (
    '<body name="a"><joint name="j1" axis="0 1 0"/><geom size="0.1"/>'
    '<body name="b" pos="1 0 0"><joint name="j2" axis="0 1 0"/><geom size="0.1"/>'
    "</body></body>"
)
_TENDON = '<tendon><fixed name="t"><joint joint="j1" coef="1"/></fixed></tendon>'


@pytest.mark.parametrize(
    ("body", "equality", "extra", "words"),
    [  # pfaff's own refusals, then MuJoCo's compiler's (quoted, naming the element)
        (_ARM, '<tendon tendon1="t"/>', _TENDON, ["connect, weld and joint", "tendon"]),
        (_ARM, '<joint joint1="j1" joint2="nope"/>', "", ["compiler refuses", "'nope'"]),
        (_ARM, '<connect body1="a" body2="zz" anchor="0 0 0"/>', "", ["'zz'"]),
        ('<body name="m"><joint/><geom type="mesh" mesh="x"/></body>', "", "", ["mesh 'x'"]),
        ('<body name="f"><joint type="screw"/><geom size="1"/></body>', "", "", ["'screw'"]),
        (
            '<body name="n"><body name="c"><freejoint/><geom size="1"/></body></body>',
            "",
            "",
            ["free joint", "top level"],
        ),
        ('<body name="m"><joint/></body>', "", "", ["mass and inertia", "'m'"]),
        ('<include file="x.xml"/>', "", "", ["'x.xml'"]),
        ('<body name="e" euler="0 0"><geom size="1"/></body>', "", "", ["euler"]),
    ],
)
def test_bad_mjcf_is_refused_naming_the_element(tmp_path, body, equality, extra, words):
    with pytest.raises(ModelError) as exc:
        read_mjcf(_write(tmp_path, body, equality, extra))
    for w in words:
        assert w in str(exc.value)


def test_equality_site_viscosity_is_reported_as_ignored():
    mj = read_mjcf(shared_model("equality_site"))
    assert any("<option viscosity> is ignored" in w for w in mj.warnings)
    assert not read_mjcf(shared_model("connect")).warnings


def test_malformed_and_missing_files(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody>")
    with pytest.raises(ModelError, match="compiler refuses it: XML parse error"):
        read_mjcf(bad)
    with pytest.raises(ModelError, match="does not exist"):
        read_mjcf(tmp_path / "none.xml")


_CLASSES = """<mujoco><compiler angle="radian"/>
  <default><default class="arm"><joint type="ball" damping="0.1"/>
    <geom type="capsule" size="0.02" fromto="0 0 0 0 0 -0.3"/></default></default>
  <worldbody><body name="a" childclass="arm"><joint/><geom/>
    <body name="b" pos="0 0 -0.3" axisangle="1 0 0 0.3"><joint/><geom/>
      <body name="c" pos="0 0 -0.3" xyaxes="0 1 0 -1 0 0"><joint class="arm" type="hinge"
        axis="1 0 0" ref="0.2"/><geom/></body></body></body></worldbody></mujoco>"""


def test_default_classes_childclass_and_damping(tmp_path):
    """Joint types from a childclass (ball, ball, then an explicit hinge), radians, axisangle
    and xyaxes; the hinge's damping is a passive element, and so are the ball joints'
    (per-dof dampers, nothing "not modelled"). Witness: MuJoCo's nq, nv, M."""
    p = tmp_path / "classes.xml"
    p.write_text(_CLASSES)
    mj = read_mjcf(p)
    assert [j.type for j in mj.joints] == ["ball", "ball", "hinge"]
    assert mj.joints[2].ref == 0.2
    hinge = [(p.joint, p.damping, p.stiffness) for p in mj.passive if not p.ref]
    assert hinge == [("c_joint0", 0.1, 0.0)]
    balls = [(p.joint, p.dof_damping, p.ref) for p in mj.passive if p.ref]
    assert balls == [(f"{b}_joint0", (0.1, 0.1, 0.1), (0.0, 0.0, 0.0, 1.0)) for b in "ab"]
    assert not any("ball joint" in w for w in mj.warnings)
    mujoco = mujoco_or_skip()
    m = mujoco.MjModel.from_xml_path(str(p))
    d = mujoco.MjData(m)
    mech = PinocchioMechanism(mj.model)
    assert (mech.nq, mech.nv) == (m.nq, m.nv) == (9, 7)
    for q in _random_states(mech, mj.q0, 3, seed=1, scale=1.0):
        d.qpos[:] = mj.q_to_qpos(q)
        mujoco.mj_forward(m, d)
        Mm = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, Mm)
        snap = mech.compute(q, None, mj.bodies)
        assert np.abs(Mm - snap.M).max() <= 1e-12
        assert np.abs(snap.frames["c"].p - d.xpos[3]).max() <= 1e-12


def test_every_model_in_the_shared_folder_loads_and_assembles():
    """Whatever MJCF files the shared folder holds (not only the six named above): read,
    constrained and assembled to 1e-12, with MuJoCo's sizes when MuJoCo is here."""
    from mjcf_support import shared_dir

    folder = shared_dir()
    if folder is None:
        pytest.skip("MuJoCo's equality test models are not here (PFAFF_MUJOCO_MODELS)")
    files = sorted(folder.glob("*.xml"))
    assert len(files) >= 6
    try:
        import mujoco
    except ImportError:
        mujoco = None
    for f in files:
        mj = read_mjcf(f)
        mech = PinocchioMechanism(mj.model, f.stem)
        cset = ConstraintSet(mech, equality_constraints(mj.equalities))
        start = next(iter(mj.keyframes.values()))[0] if mj.keyframes else mj.q0
        assert assemble(cset, start).residual <= 1e-12, f.name
        if mujoco is not None:
            m = mujoco.MjModel.from_xml_path(str(f))
            assert (mech.nq, mech.nv, len(mj.bodies)) == (m.nq, m.nv, m.nbody - 1), f.name


def test_non_finite_numbers_are_refused_and_mujocos_log_stays_out_of_the_folder(
    tmp_path, monkeypatch
):
    """MuJoCo's compiler accepts pos="nan 0 0" with a warning it writes to
    ./MUJOCO_LOG.TXT; pfaff refuses the file, quotes the warning and writes no log."""
    monkeypatch.chdir(tmp_path)
    for bad in ("nan", "inf"):
        body = f'<body name="a" pos="{bad} 0 0"><joint axis="0 1 0"/><geom size="0.1"/></body>'
        with pytest.raises(ModelError, match="non-finite numbers .* in body_pos"):
            read_mjcf(_write(tmp_path, body))
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


_OFFSET_JOINTS = """<mujoco><worldbody><body name="a" pos="0.1 0 0.2" euler="10 20 30">
  <joint name="h" type="hinge" axis="0 1 0" pos="0.05 0.02 0"/>
  <geom type="box" size="0.1 0.02 0.01" pos="0.1 0 0" euler="0 0 15"/>
  <body name="b" pos="0.2 0 0"><joint name="s" type="ball" pos="0 0 0.03"/>
    <joint name="p" type="slide" axis="1 0 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.01"/></body></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("name", ("jdotv_connect_3d", "weld", "gripper", "leg", "offsets"))
def test_drawn_geoms_sit_where_mujoco_puts_them(tmp_path, name):
    """Each drawn geom's placement (in its body's frame) composed with the frame's
    world placement is MuJoCo's geom_xpos / geom_xmat at random states, joints with
    anchors off the body origin included."""
    mujoco = mujoco_or_skip()
    if name == "offsets":
        path = tmp_path / "offsets.xml"
        path.write_text(_OFFSET_JOINTS)
    else:
        path = _path(name)
    mj = read_mjcf(path)
    mech = PinocchioMechanism(mj.model, name)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    drawn = [g for g in range(m.ngeom) if int(m.geom_type[g]) in (2, 3, 4, 5, 6)]
    assert len(mj.geoms) == len(drawn)
    data = mj.model.createData()
    for q in _random_states(mech, mj.q0, 3, seed=9, scale=0.8):
        d.qpos[:] = mj.q_to_qpos(q)
        mujoco.mj_forward(m, d)
        pin.framesForwardKinematics(mj.model, data, q)
        for g, (frame, _, _, T) in zip(drawn, mj.geoms):
            W = data.oMf[mj.model.getFrameId(frame)].homogeneous @ T
            assert np.abs(W[:3, 3] - d.geom_xpos[g]).max() <= 1e-12
            assert np.abs(W[:3, :3] - d.geom_xmat[g].reshape(3, 3)).max() <= 1e-12


def test_polynomial_joint_coupling_is_mujocos_residual():
    """polycoef beyond the linear term: pfaff's residual is MuJoCo's efc_pos row (the same
    number, offsets from qpos0 with a ref on both joints) at random states."""
    mujoco = mujoco_or_skip()
    mj, mech, cset = _system("poly_coupling")
    assert type(cset.constraints[0]).__name__ == "PolynomialJointCoupling"
    m = mujoco.MjModel.from_xml_path(str(_path("poly_coupling")))
    d = mujoco.MjData(m)
    for q in _random_states(mech, mj.q0, 5, seed=12, scale=0.7):
        phi, _ = cset.holonomic_terms_at(q)
        r_mj = mujoco_equality_residual(mujoco, m, d, mj.q_to_qpos(q))
        assert abs(phi[0] - r_mj[0]) <= 1e-14 and abs(phi[0]) > 1e-3
