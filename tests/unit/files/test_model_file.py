"""Model files as systems: assembly, rank after assembly, redundant loops against KKT,
the passive figures (violation, energy) and the metrics' power to catch wrong input."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from mjcf_support import OWN, shared_model

from pfaff import dynamics as dyn
from pfaff.constraints import ConstraintSet
from pfaff.constraints.coupling import JointCoupling
from pfaff.files.model import load_model
from pfaff.mechanism import ModelError, PlanarLink, planar_chain
from pfaff.scenarios.model_file import run_system
from pfaff.simulate import InitialStateError, SimOptions
from pfaff.simulate.assembly import assemble
from pfaff.simulate.trajectory import energy_drift_rel


def _cset(system):
    return ConstraintSet(system.mechanism, system.constraints)


def test_rank_is_judged_after_assembly():
    """The floating leg's keyframe leaves its knee loop open by 1.7 mm: the base's rotation
    then moves the two points apart out of the plane, and the SVD sees three independent
    rows (smallest singular value 2e-3); after assembly rank 2 and 9 - 2 = 7 dof."""
    s = load_model(OWN / "leg.xml")
    cset = _cset(s)
    _, A = cset.holonomic_terms_at(s.q)
    sigma_open = np.linalg.svd(A, compute_uv=False)
    assert sigma_open[-1] > 1e-3  # open loop: the dependent row is not yet dependent
    asm = assemble(cset, s.q)
    assert asm.residual <= 1e-12
    assert (asm.rows, asm.rank, asm.dof) == (3, 2, 7)
    assert asm.sigma[-1] <= 1e-12
    assert asm.displacement > 1e-3


def test_assembly_displacement_closed_form():
    """Start (delta, 0) off the line q1 = q2: the tangent-space Newton step lands on the
    nearest point (delta/2, delta/2), a displacement of delta / sqrt(2)."""
    mech = planar_chain([PlanarLink(1.0, 1.0), PlanarLink(1.0, 1.0)])
    names = [n for n in mech.model.names[1:]]
    cset = ConstraintSet(mech, [JointCoupling(names[0], names[1])])
    for delta in (1e-3, 0.2, -0.7):
        asm = assemble(cset, np.array([delta, 0.0]))
        assert abs(asm.displacement - abs(delta) / np.sqrt(2)) <= 1e-12
        assert abs(asm.q[0] - asm.q[1]) <= 1e-12
        assert (asm.rows, asm.rank, asm.dof) == (1, 1, 1)


def test_no_assembled_state_near_the_start_reports_the_residual(tmp_path):
    p = tmp_path / "far.xml"
    p.write_text(
        '<mujoco><worldbody><site name="far" pos="10 0 0"/>'
        '<body name="a"><joint axis="0 1 0"/><geom size="0.1"/>'
        '<body name="b" pos="1 0 0"><joint axis="0 1 0"/><geom size="0.1"/>'
        '<site name="tip" pos="1 0 0"/></body></body></worldbody>'
        '<equality><connect site1="tip" site2="far"/></equality></mujoco>'
    )
    s = load_model(p)
    with pytest.raises(InitialStateError, match=r"max \|Phi\| = 8") as exc:
        assemble(_cset(s), s.q)
    assert "no assembled state near the start" in str(exc.value)


@pytest.mark.parametrize(
    "path",
    [
        lambda: shared_model("jdotv_connect_2d"),
        lambda: OWN / "four_bar.xml",
        lambda: OWN / "leg.xml",
        lambda: OWN / "gripper.xml",
        lambda: OWN / "slider_crank.xml",
    ],
    ids=["jdotv_connect_2d", "four_bar", "leg", "gripper", "slider_crank"],
)
def test_redundant_loop_accelerations_agree_with_kkt_least_squares(path):
    """Rank-deficient A (a planar loop closed by a 3D point constraint): Aghili's
    projection dynamics against the KKT system solved by least squares (the
    multipliers' undetermined part set to its minimum norm), at many states."""
    s = load_model(path())
    cset = _cset(s)
    mech = s.mechanism
    asm = assemble(cset, s.q)
    assert asm.rank < asm.rows
    rng = np.random.default_rng(4)
    for _ in range(8):
        q = assemble(cset, mech.integrate(asm.q, 0.05 * rng.standard_normal(mech.nv))).q
        snap = mech.compute(q, None, cset.frames)
        A = cset.evaluate(snap).A
        N = np.linalg.svd(A)[2][asm.rank :].T  # admissible velocities
        v = N @ rng.standard_normal(N.shape[1])
        tau = rng.standard_normal(mech.nv)
        snap = mech.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        a = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift, with_force=False).a
        K = dyn.kkt_matrix(snap.M, ev.A)
        rhs = np.concatenate([tau - snap.h, -ev.drift])
        a_kkt = np.linalg.lstsq(K, rhs, rcond=1e-12)[0][: mech.nv]
        assert np.abs(a - a_kkt).max() <= 1e-9 * max(1.0, np.abs(a_kkt).max())
        assert np.abs(ev.A @ a + ev.drift).max() <= 1e-9 * max(1.0, np.abs(a).max())


def test_energy_drift_rel_catches_work_done():
    """Passive: the drift is small; with a constant torque on a joint (work done on the
    system) the same metric reports it."""
    s = load_model(OWN / "four_bar.xml")
    opt = dict(dt=2e-3, progress=False)
    passive = run_system(s, 0.4, SimOptions(**opt), "four-bar").metrics["energy_drift_rel"]
    tau = np.zeros(s.mechanism.nv)
    tau[0] = 0.5
    driven = run_system(s, 0.4, SimOptions(**opt), "four-bar", tau=tau)
    assert passive <= 1e-6
    assert driven.metrics["energy_drift_rel"] >= 1e-2
    assert energy_drift_rel(np.array([1.0, 1.0, 1.5]), np.array([0.0, 1.0, 1.0])) == 0.5


def test_load_model_refusals(tmp_path):
    with pytest.raises(ModelError, match="keyframe 'nope'.*valid: open"):
        load_model(OWN / "four_bar.xml", "nope")
    bad = tmp_path / "m.step"
    bad.write_text("x")
    with pytest.raises(ModelError, match=r"expected \.xml \(MJCF\) or \.urdf"):
        load_model(bad)


@pytest.mark.parametrize(
    "name",
    ["jdotv_connect_2d", "jdotv_connect_3d", "jdotv_weld_3d", "connect", "weld", "equality_site"],
)
def test_mujoco_models_passive_exact(name):
    """MuJoCo's own equality models, passive from qpos0 (0.25 s here; 5 s in the
    table of docs/your-robot.md): the loops stay closed to 1e-10 and the energy is kept
    to 1e-6 of the largest kinetic energy. jdotv_connect_2d: 3 rows of rank 2."""
    s = load_model(shared_model(name))
    viscous = name == "equality_site"  # <option viscosity="1">: reported, not modelled
    with pytest.warns(UserWarning, match="viscosity") if viscous else contextlib.nullcontext():
        res = run_system(s, 0.25, SimOptions(dt=1e-3, progress=False), name)
    m = res.metrics
    assert res.trajectory.max_constraint_violation() <= 1e-10
    assert m["energy_drift_rel"] <= 1e-6
    assert m["max_kinetic_energy"] > 1e-3  # it moves
    assert m["dof"] == s.mechanism.nv - m["constraint_rank"]
    if name == "jdotv_connect_2d":
        assert (m["constraint_rows"], m["constraint_rank"], m["dof"]) == (3, 2, 2)


@pytest.mark.parametrize("name", ["four_bar", "slider_crank"])
def test_redundant_loop_accelerations_agree_with_pinocchio_proximal(name):
    """Second witness: Pinocchio's constraintDynamics on the same 3D point loop (3 rows of
    rank 2) with the proximal settings mu = 1e-12 (its defaults, mu = 0 and one
    iteration, return NaN on this rank-deficient loop with Pinocchio 4.1)."""
    import pinocchio as pin

    s = load_model(OWN / f"{name}.xml")
    mech, cset = s.mechanism, _cset(s)
    m = mech.model
    c = s.constraints[0]
    f1, f2 = (m.frames[m.getFrameId(f)] for f in (c.frame1, c.frame2))
    cm = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D,
        m,
        f1.parentJoint,
        f1.placement,
        f2.parentJoint,
        f2.placement,
        pin.ReferenceFrame.LOCAL,
    )
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    cms.append(cm)
    cds.append(cm.createData())
    pdata = m.createData()
    pin.initConstraintDynamics(m, pdata, cms, cds)
    settings = pin.ProximalSettings(1e-14, 1e-12, 200)
    asm = assemble(cset, s.q)
    rng = np.random.default_rng(9)
    for _ in range(6):
        q = assemble(cset, mech.integrate(asm.q, 0.05 * rng.standard_normal(mech.nv))).q
        A = cset.evaluate(mech.compute(q, None, cset.frames)).A
        v = np.linalg.svd(A)[2][asm.rank :].T @ rng.standard_normal(mech.nv - asm.rank)
        tau = rng.standard_normal(mech.nv)
        snap = mech.compute(q, v, cset.frames)
        ev = cset.evaluate(snap)
        a = dyn.solve_constrained(snap.M, snap.h, tau, ev.A, ev.drift, with_force=False).a
        a_pin = pin.constraintDynamics(m, pdata, q, v, tau, cms, cds, settings)
        assert np.abs(a - a_pin).max() <= 1e-9 * max(1.0, np.abs(a).max())


def test_quadruped_has_30_dof_and_12_loop_rows_as_mujoco():
    """examples/quadruped.xml (the model of the model-file bench figure): nq 31, nv 30 and 12
    equality rows in pfaff and in MuJoCo; after assembly rank 8 (each planar loop's
    third row is dependent), 22 dof; the keyframe starts off the manifold."""
    from mjcf_support import mujoco_or_skip

    s = load_model(OWN.parent.parent / "examples" / "quadruped.xml")
    cset = _cset(s)
    assert (s.mechanism.nq, s.mechanism.nv, cset.dim) == (31, 30, 12)
    asm = assemble(cset, s.q)
    assert (asm.rows, asm.rank, asm.dof) == (12, 8, 22)
    assert asm.residual <= 1e-12 and 1e-4 < asm.displacement < 0.05
    assert asm.sigma[7] > 1e-2 and asm.sigma[8] <= 1e-12
    mujoco = mujoco_or_skip()
    m = mujoco.MjModel.from_xml_path(str(OWN.parent.parent / "examples" / "quadruped.xml"))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    eq = int((d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY).sum())
    assert (m.nq, m.nv, eq) == (31, 30, 12)


URDF_LIMITED = """<?xml version="1.0"?>
<robot name="limited_arm">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="1.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.15 0 0"/><mass value="0.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="l3"><inertial><origin xyz="0.1 0 0"/><mass value="0.2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 1 0"/><limit lower="-0.3" upper="0.2" effort="10" velocity="5"/></joint>
  <joint name="elbow" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="0.1" upper="1.5" effort="10" velocity="5"/></joint>
  <joint name="stuck" type="revolute"><parent link="l2"/><child link="l3"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="0" effort="10" velocity="5"/></joint>
</robot>
"""


def test_a_urdf_holds_its_joint_limits_from_a_start_inside_them(tmp_path):
    """A URDF's ``<limit lower upper>`` are held as joint limits (plastic stops): the
    arm falls onto them and stays inside (to 1e-9 rad) where the run told to step
    through them leaves them; a neutral position outside a limit starts at its bound;
    an empty range is said and not held."""
    import pfaff

    path = tmp_path / "arm.urdf"
    path.write_text(URDF_LIMITED)
    m = load_model(path)
    assert [(lim.joint, lim.lower, lim.upper, lim.restitution) for lim in m.limits] == [
        ("shoulder", -0.3, 0.2, 0.0),
        ("elbow", 0.1, 1.5, 0.0),
    ]
    assert abs(m.q[1] - 0.1) < 1e-15 and "neutral posture, moved" in m.start
    assert any("'elbow' (0 -> 0.1)" in w for w in m.warnings)
    assert any("'stuck'" in w and "not held" in w for w in m.warnings)
    sys = pfaff.load(path)
    assert any("'elbow' (0 -> 0.1)" in w for w in sys.warnings)
    sim = pfaff.Simulator(sys, dt=1e-3)
    sim.step(n=600)
    q = sim.record().arrays()["q"]
    assert sim.events and {e.kind for e in sim.events} >= {"impact"}
    for k, lim in enumerate(m.limits):
        assert q[:, k].min() >= lim.lower - 1e-9 and q[:, k].max() <= lim.upper + 1e-9
    with pytest.warns(UserWarning, match="not held"):
        free = pfaff.Simulator(sys, dt=1e-3, limits=False)
    free.step(n=600)
    qf = free.record().arrays()["q"]
    assert qf[:, 0].max() > 0.2 + 1e-3 or qf[:, 0].min() < -0.3 - 1e-3
