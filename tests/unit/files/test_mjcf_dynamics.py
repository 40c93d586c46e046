"""The robot as its file describes it: constrained accelerations of MJCF models with
armature, joint springs (about springref) and dampers against a Gauss-principle
reference built from MuJoCo's own terms (mj_fullM with armature, qfrc_passive,
qfrc_bias, the equality rows from mj_jac and their drift from mj_jacDot, SVD least
squares for redundant rows); the armature and the force elements on both engines;
what MuJoCo's compiler alone reads (include, frame, replicate, a mesh's inertia)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from mjcf_support import (
    OWN,
    SHARED_NAMES,
    gauss_reference,
    mujoco_efc_equality_J,
    mujoco_equality_drift_fd,
    mujoco_equality_residual,
    mujoco_equality_rows,
    mujoco_full_M,
    shared_model,
)

import pfaff
from pfaff.api.system import System
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.assembly import assemble
from pfaff.simulate.forces import JointDamper, JointSpring

mujoco = pytest.importorskip("mujoco")

PASSIVE = ("five_bar_passive", "leg_passive", "gripper_passive")


def _free_T(mj, q: np.ndarray) -> np.ndarray:
    """qvel = T v: a free joint's linear velocity is in the world in MuJoCo."""
    T = np.eye(mj.nv_mj)
    for j in mj.joints:
        if j.type == "free":
            R = pin.Quaternion(*np.roll(q[j.idx_q + 3 : j.idx_q + 7], 1)).matrix()
            T[j.idx_v : j.idx_v + 3, j.idx_v : j.idx_v + 3] = R
    return T


def _qacc(mj, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """pfaff's a -> MuJoCo's qacc: a free joint's linear part is the world-frame
    acceleration of its origin, R (a_lin + omega x v_lin)."""
    out = a.copy()
    for j in mj.joints:
        if j.type == "free":
            i = j.idx_v
            R = pin.Quaternion(*np.roll(q[j.idx_q + 3 : j.idx_q + 7], 1)).matrix()
            out[i : i + 3] = R @ (a[i : i + 3] + np.cross(v[i + 3 : i + 6], v[i : i + 3]))
    return out


def _states(system: System, m, d, n: int, seed: int):
    """``n`` random states on the constraint manifold: q assembled (MuJoCo's own
    residual < 1e-10 there), qvel in the null space of MuJoCo's equality rows, and a
    random generalized force; yields (q, v, tau) in pfaff's and (qpos, qvel, qfrc) in
    MuJoCo's coordinates."""
    rng = np.random.default_rng(seed)
    mj = system.model.coords
    for _ in range(n):
        q = system.integrate(system.q0, 0.3 * rng.standard_normal(system.nv))
        q = assemble(system.cset, q).q
        qpos = mj.q_to_qpos(q)
        assert np.abs(mujoco_equality_residual(mujoco, m, d, qpos)).max(initial=0) <= 1e-10
        J = mujoco_efc_equality_J(mujoco, m, d, qpos)
        if J.shape[0]:
            _, s, Vt = np.linalg.svd(J)
            N = Vt[int(np.sum(s > 1e-9 * s[0])) :].T
        else:
            N = np.eye(m.nv)
        qvel = 2.0 * N @ rng.standard_normal(N.shape[1])
        qfrc = 0.5 * rng.standard_normal(m.nv)
        T = _free_T(mj, q)
        yield (q, mj.qvel_to_v(q, qvel), T.T @ qfrc), (qpos, qvel, qfrc)


def gauss_errors(
    system: System, path, n: int = 20, seed: int = 0, fd: bool = False, drift_scale: float = 1.0
):
    """|qacc_pfaff - qacc_ref| / |qacc_ref| at ``n`` random on-manifold states; the
    reference's rows from mj_jac with their drift from mj_jacDot (connect and joint
    rows), or with ``fd`` MuJoCo's efc_J with its drift by finite differences (any
    rows, welds included). Fluid forces, which pfaff lists as not modelled, are off."""
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    m.opt.viscosity = m.opt.density = 0.0
    d = mujoco.MjData(m)
    mj = system.model.coords
    out = []
    for (q, v, tau), (qpos, qvel, qfrc) in _states(system, m, d, n, seed):
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
        mujoco.mj_forward(m, d)
        eq = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        efc_J = np.asarray(d.efc_J).reshape(d.nefc, m.nv)[eq].copy()
        if fd:
            J, drift = efc_J, mujoco_equality_drift_fd(mujoco, m, qpos, qvel)
        else:
            J, drift = mujoco_equality_rows(mujoco, m, d)
            assert np.abs(efc_J - J).max(initial=0) <= 1e-12  # the rows are MuJoCo's own
        f = qfrc + d.qfrc_passive - d.qfrc_bias
        ref = gauss_reference(mujoco_full_M(mujoco, m, d), f, J, drift_scale * drift)
        res = system.forward_dynamics(q, v, tau)
        out.append(float(np.linalg.norm(_qacc(mj, q, v, res.a) - ref) / np.linalg.norm(ref)))
    return out


@pytest.mark.parametrize("name", PASSIVE)
def test_constrained_accelerations_equal_gauss_reference_from_mujocos_terms(name):
    """20 random on-manifold states per model: armature, springs about springref and
    dampers as MuJoCo applies them; redundant connect rows (planar loops) included."""
    path = OWN / f"{name}.xml"
    system = pfaff.load(path)
    assert np.any(system.mechanism.model.armature > 0) and system.forces
    err = gauss_errors(system, path)
    assert max(err) <= 1e-9, err


@pytest.mark.parametrize("name", PASSIVE)
def test_gauss_reference_catches_missing_armature_or_passive_forces(name):
    """The figure is not blind: without the armature, or without the springs and
    dampers, the accelerations are off by far more than 1e-9."""
    path = OWN / f"{name}.xml"
    bare = System(dataclasses.replace(pfaff.load(path).model, forces=[]))
    assert min(gauss_errors(bare, path, n=3)) > 1e-4
    no_arm = pfaff.load(path)
    no_arm.mechanism.model.armature[:] = 0.0
    assert min(gauss_errors(no_arm, path, n=3)) > 1e-4


ALL_OWN = (
    "four_bar",
    "four_bar_inertial",
    "five_bar",
    "slider_crank",
    "gripper",
    "leg",
    "mesh_arm",
    "poly_coupling",
    *PASSIVE,
)


def _any_path(name: str):
    if name == "quadruped":
        return OWN.parent.parent / "examples" / "quadruped.xml"
    return OWN / f"{name}.xml" if name in ALL_OWN else shared_model(name)


@pytest.mark.parametrize("name", (*SHARED_NAMES, *ALL_OWN, "quadruped"))
def test_every_model_against_gauss_reference_with_mujocos_own_rows(name):
    """Every MJCF model of the tests, welds, ball and free joints included: MuJoCo's
    efc_J rows with their drift by Richardson-extrapolated central differences along
    mj_integratePos; 20 random on-manifold states each, 1e-8 relative (the difference
    quotient's own error is ~1e-11)."""
    path = _any_path(name)
    err = gauss_errors(pfaff.load(path), path, fd=True)
    assert max(err) <= 1e-8, err


@pytest.mark.parametrize("name", ("jdotv_weld_3d", "jdotv_connect_3d", "leg", "poly_coupling"))
def test_the_figure_sees_a_missing_drift_term(name):
    """A reference without J'v (what an engine without the drift would compute) is far
    from pfaff's accelerations: the figure would catch its absence."""
    path = _any_path(name)
    assert min(gauss_errors(pfaff.load(path), path, n=3, fd=True, drift_scale=0.0)) > 1e-6


def test_finite_difference_drift_witness_agrees_with_mj_jacdot():
    """The difference quotient of efc_J against mj_jacDot's analytic drift on the
    passive five-bar and the floating leg (connect rows): the same within 1e-9."""
    for name in ("five_bar_passive", "leg_passive"):
        path = OWN / f"{name}.xml"
        system = pfaff.load(path)
        m = mujoco.MjModel.from_xml_path(str(path))
        m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
        d = mujoco.MjData(m)
        for _, (qpos, qvel, _) in _states(system, m, d, 3, seed=5):
            d.qpos[:], d.qvel[:] = qpos, qvel
            mujoco.mj_forward(m, d)
            _, exact = mujoco_equality_rows(mujoco, m, d)
            fd = mujoco_equality_drift_fd(mujoco, m, qpos, qvel)
            assert np.abs(fd - exact).max() <= 1e-9 * max(1.0, np.abs(exact).max())


def test_passive_elements_are_mujocos_qfrc_passive():
    """Each spring and damper against MuJoCo's qfrc_passive at random states (springref
    and ref in degrees: the rest in pfaff's q is springref - ref)."""
    path = OWN / "five_bar_passive.xml"
    system = pfaff.load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mj = system.model.coords
    kinds = sorted({type(e).__name__ for e in system.forces})
    assert kinds == ["JointDamper", "JointSpring"]
    right = next(e for e in system.forces if isinstance(e, JointSpring) and e.joint == "right")
    assert abs(right.rest - np.deg2rad(-90 - -80)) <= 1e-15
    rng = np.random.default_rng(4)
    for _ in range(5):
        q, v = rng.standard_normal(4), rng.standard_normal(4)
        d.qpos[:], d.qvel[:] = mj.q_to_qpos(q), mj.v_to_qvel(q, v)
        mujoco.mj_forward(m, d)
        snap = system.mechanism.compute(q, v)
        Q = sum(e.force(0.0, snap) for e in system.forces)
        assert np.abs(Q - d.qfrc_passive).max() <= 1e-13


def test_what_is_not_modelled_is_listed():
    system = pfaff.load(OWN / "five_bar_passive.xml")
    w = "\n".join(system.warnings)
    assert "joint 'left': frictionloss 0.01 is not modelled" in w
    assert "joint 'left': limits [-2.96706, -0.174533]" in w  # autolimits, in radians
    assert [a.name for a in system.actuators] == ["left_motor"]  # modelled: not in warnings
    assert "left_motor" not in w
    with pytest.warns(UserWarning, match="contact is not modelled"):
        five_bar = pfaff.load(OWN / "five_bar.xml", contact=False)
    assert [w for w in five_bar.warnings if w.startswith("contact")] == [
        "contact is not modelled: MuJoCo's collision filter lets 4 geom pairs touch "
        "(body 'left' / body 'right'; body 'left' / body 'right_distal'; body 'left_distal' / "
        "body 'right'; body 'left_distal' / body 'right_distal'); with contact=False they "
        "pass through each other, where MuJoCo simulates their contacts (pfaff.load(path) "
        "holds them; to run the same model in both without them, turn them off in the file: "
        "<flag contact='disable'/>, contype='0' conaffinity='0', or <exclude>)"
    ]  # the two sides' links (the distal ones touch where the loop closes)
    mesh_arm = [
        w for w in pfaff.load(OWN / "mesh_arm.xml", contact=False).warnings if "contact" in w
    ]
    assert len(mesh_arm) == 1 and "(body 'bob0' / body 'bob1')" in mesh_arm[0]


def test_armature_and_passive_forces_on_both_engines():
    """0.3 s of the five-bar with armature, springs and dampers: the compiled core and
    the NumPy engine agree to 1e-10 and both close the energy balance
    E(t) - E(0) = force_work + correction_energy to 1e-8 of the largest kinetic energy."""
    system = pfaff.load(OWN / "five_bar_passive.xml")
    runs = {}
    for engine in ("core", "numpy"):
        opt = SimOptions(dt=1e-3, engine=engine, progress=False)
        traj = simulate(system.cset, system.q0, system.v0 + 0.0, 0.3, opt, forces=system.forces)
        assert traj.engine == engine
        runs[engine] = a = traj.arrays()
        balance = a["energy"] - a["energy"][0] - a["work"] - a["force_work"]
        balance -= a["correction_energy"]
        assert a["force_work"][-1] < -1e-4  # the dampers took energy out
        assert np.abs(balance).max() <= 1e-8 * a["kinetic"].max()
    assert np.abs(runs["core"]["q"] - runs["numpy"]["q"]).max() <= 1e-10
    assert np.abs(runs["core"]["v"] - runs["numpy"]["v"]).max() <= 1e-9


def test_armature_is_in_the_compiled_cores_mass_matrix():
    """The core builds its model from Model.saveToString, armature included: with the
    armature zeroed after loading, the core's run differs from the file's."""
    system = pfaff.load(OWN / "five_bar_passive.xml")
    opt = SimOptions(dt=1e-3, engine="core", progress=False)
    a = simulate(system.cset, system.q0, system.v0, 0.1, opt, forces=system.forces).arrays()
    system.mechanism.model.armature[:] = 0.0
    b = simulate(system.cset, system.q0, system.v0, 0.1, opt, forces=system.forces).arrays()
    assert np.abs(a["q"] - b["q"]).max() > 1e-4


def test_include_frame_replicate_and_a_mesh_without_inertial():
    """mesh_arm.xml: an included asset, a <frame>, two <replicate>d bodies and a box
    mesh without <inertial>. Witnesses: the box's closed-form inertia (mesh vertices
    are float32 in MuJoCo: 1e-6 relative), MuJoCo's M (armature included), and the
    damper against qfrc_passive."""
    path = OWN / "mesh_arm.xml"
    system = pfaff.load(path)
    mj = system.model.coords
    assert mj.bodies == ["arm", "bob0", "bob1"] and system.nv == 3
    Y = system.mechanism.model.inertias[system.mechanism.model.getJointId("swing")]
    a, b, c, rho = 0.2, 0.04, 0.02, 2000.0
    mass = rho * a * b * c
    I = mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    assert abs(Y.mass - mass) <= 1e-6 * mass
    assert np.abs(Y.lever - [a / 2, 0, 0]).max() <= 1e-8
    assert np.abs(Y.inertia - I).max() <= 1e-6 * I.max()
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v = rng.standard_normal(3), rng.standard_normal(3)
        d.qpos[:], d.qvel[:] = mj.q_to_qpos(q), v
        mujoco.mj_forward(m, d)
        snap = system.mechanism.compute(q, v, mj.bodies)
        assert np.abs(snap.M - mujoco_full_M(mujoco, m, d)).max() <= 1e-12
        assert np.abs(snap.g - d.qfrc_bias + snap.h - snap.g).max() <= 1e-12
        for i, body in enumerate(mj.bodies, start=1):
            assert np.abs(snap.frames[body].p - d.xpos[i]).max() <= 1e-12
        Q = sum(e.force(0.0, snap) for e in system.forces)
        assert np.abs(Q - d.qfrc_passive).max() <= 1e-14
    assert [type(e) for e in system.forces] == [JointDamper]


def test_system_maps_mujocos_coordinates_both_ways():
    """sys.qpos_to_q / q_to_qpos and qvel_to_v / v_to_qvel on the floating leg: round
    trips to 1e-15, and MuJoCo's kinetic energy (armature included) is pfaff's."""
    path = OWN / "leg_passive.xml"
    system = pfaff.load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = system.integrate(system.q0, rng.standard_normal(system.nv))
        qvel = rng.standard_normal(m.nv)
        qpos = system.q_to_qpos(q)
        v = system.qvel_to_v(q, qvel)
        assert np.abs(system.qpos_to_q(qpos) - q).max() <= 1e-15
        assert np.abs(system.v_to_qvel(q, v) - qvel).max() <= 1e-14
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        T_mj = 0.5 * qvel @ mujoco_full_M(mujoco, m, d) @ qvel
        assert abs(T_mj - system.mechanism.compute(q, v).kinetic) <= 1e-12 * max(1.0, T_mj)


def test_flags_that_disable_springs_dampers_gravity_and_contacts_are_read(tmp_path):
    """<flag spring/damper/gravity/contact="disable">: no force elements, zero gravity,
    no contact warning -- as MuJoCo's qfrc_passive and qfrc_bias (at rest) say."""
    text = (OWN / "five_bar_passive.xml").read_text()
    flags = '<option><flag spring="disable" damper="disable" gravity="disable" contact="disable"/>'
    path = tmp_path / "five_bar_flags.xml"
    path.write_text(text.replace("<default>", flags + "</option>\n  <default>", 1))
    system = pfaff.load(path)
    assert system.forces == []
    assert not any("contact" in w for w in system.warnings)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mj = system.model.coords
    q = system.q0
    d.qpos[:], d.qvel[:] = mj.q_to_qpos(q), 1.0
    mujoco.mj_forward(m, d)
    assert np.abs(d.qfrc_passive).max() <= 1e-15  # MuJoCo applies none either
    snap = system.mechanism.compute(q, np.zeros(system.nv))
    d.qvel[:] = 0.0
    mujoco.mj_forward(m, d)
    assert np.abs(snap.g).max() <= 1e-15 and np.abs(d.qfrc_bias).max() <= 1e-15
