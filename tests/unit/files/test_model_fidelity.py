"""Fidelity of two user-written model files against MuJoCo's own terms.

``parallel_gripper.xml`` (two five-bar fingers closed by ``connect``, a ``joint``
coupling, a ``general`` actuator on a fixed tendon with an affine bias, ctrlrange and
forcerange, springs, dampers, armature) and ``closed_chain_biped.xml`` (a free base,
knee four-bars with ball-jointed rods, ball-joint springs and dampers, limits, position
actuators). At 20 states on the constraint manifold (``q0`` perturbed, assembled by
Newton-Raphson; random velocities and controls, some outside ``ctrlrange``), pfaff's
terms are held to MuJoCo's, mapped into pfaff's coordinates:

* ``M``: ``T^T M_mj T`` with ``M_mj`` from ``mj_fullM`` (armature included) and
  ``qvel = T v`` (a free joint's linear velocity is in the world frame in MuJoCo, in
  the body frame in Pinocchio: ``T`` holds ``R`` there);
* ``h`` (without the passive forces): ``T^T qfrc_bias + M w``, ``w`` the free joint's
  ``omega x v_lin`` (MuJoCo's ``qacc = T (a + w)``);
* the force elements' ``Q``: ``T^T qfrc_passive``;
* the actuators' generalized force for a ``ctrl``: ``T^T qfrc_actuator``.

The NumPy reference (``mechanism.compute``, the force elements, ``Actuation``) and the
compiled core (``System.evaluate``, ``System.force_terms``) are both compared, each
to 1e-8 relative with an absolute floor in the quantity's units.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from mjcf_support import OWN, gauss_reference, mujoco_equality_rows, mujoco_full_M

import pfaff
from pfaff import core
from pfaff.simulate.actuators import Actuation
from pfaff.simulate.assembly import assemble
from pfaff.simulate.core_engine import build, set_ctrl

mujoco = pytest.importorskip("mujoco")

MODELS = ("parallel_gripper", "closed_chain_biped")
N_STATES = 20
RTOL = 1e-8
#: absolute floors: inertia [kg m^2], generalized forces [N m or N]
FLOOR = {"M": 1e-14, "h": 1e-12, "passive": 1e-12, "actuator": 1e-12}


@dataclasses.dataclass
class State:
    """One state in pfaff's coordinates and MuJoCo's terms mapped into them."""

    q: np.ndarray
    v: np.ndarray
    ctrl: np.ndarray
    M: np.ndarray
    h: np.ndarray
    passive: np.ndarray
    actuator: np.ndarray
    J: np.ndarray
    drift: np.ndarray


def velocity_map(system, q: np.ndarray) -> np.ndarray:
    """``T`` with ``qvel = T v`` at ``q`` (column k: MuJoCo's qvel of the unit v_k)."""
    return np.column_stack([system.v_to_qvel(q, e) for e in np.eye(system.nv)])


def free_offset(system, v: np.ndarray) -> np.ndarray:
    """``w`` with MuJoCo's ``qacc = T (a + w)``: ``omega x v_lin`` on each free joint's
    linear dofs (body frame), zero elsewhere."""
    w = np.zeros(system.nv)
    for j in system.model.coords.joints:
        if j.type == "free":
            i = j.idx_v
            w[i : i + 3] = np.cross(v[i + 3 : i + 6], v[i : i + 3])
    return w


def ctrl_sample(system, rng) -> np.ndarray:
    """A random ctrl per actuator over its ctrlrange widened by 10 % on each side (the
    clamp is part of what is compared); [-1, 1] without a range."""
    lo = np.array([a.ctrlrange[0] if a.ctrlrange else -1.0 for a in system.actuators])
    hi = np.array([a.ctrlrange[1] if a.ctrlrange else 1.0 for a in system.actuators])
    return rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo))


@functools.cache
def model(name: str):
    """``(system, states)``: the loaded file and its states with MuJoCo's terms."""
    path = OWN / f"{name}.xml"
    system = pfaff.load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(11)
    states = []
    for _ in range(N_STATES):
        q = system.integrate(system.q0, 0.3 * rng.standard_normal(system.nv))
        q = assemble(system.cset, q).q
        v = 2.0 * rng.standard_normal(system.nv)
        u = ctrl_sample(system, rng)
        d.qpos[:], d.qvel[:], d.ctrl[:] = system.q_to_qpos(q), system.v_to_qvel(q, v), u
        mujoco.mj_forward(m, d)
        T = velocity_map(system, q)
        M = T.T @ mujoco_full_M(mujoco, m, d) @ T
        w = free_offset(system, v)
        h = T.T @ d.qfrc_bias + M @ w
        J, drift = mujoco_equality_rows(mujoco, m, d)  # J qacc = -drift, qacc = T (a + w)
        J, drift = J @ T, drift + J @ T @ w
        P, A = T.T @ d.qfrc_passive, T.T @ d.qfrc_actuator
        states.append(State(q, v, u, M, h, P, A, J, drift))
    return system, states


def rel_error(got: np.ndarray, ref: np.ndarray, floor: float) -> float:
    """``max |got - ref| / max(max |ref|, floor / RTOL)``: below RTOL exactly when the
    difference is within ``RTOL |ref| + floor`` (the floor in the quantity's units)."""
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), floor / RTOL))


def reference_terms(system, s: State) -> dict[str, np.ndarray]:
    """pfaff's NumPy reference at a state: M, h, the force elements' Q, and the
    actuators' force as simulated (the held torque of ``ctrl`` plus the actuator
    elements' Q)."""
    snap = system.mechanism.compute(s.q, s.v)
    act = Actuation(system.actuators, system.mechanism)
    tau = act.tau(s.ctrl)
    Q = sum((e.force(0.0, snap) for e in system.forces), np.zeros(system.nv))
    A = tau + sum((e.force(0.0, snap) for e in act.elements), np.zeros(system.nv))
    return {"M": snap.M, "h": snap.h, "passive": Q, "actuator": A}


@functools.cache
def core_system(name: str, elements: str):
    """The core built with no force element (``"none"``), the file's (``"passive"``) or
    its actuators' (``"actuator"``); with the :class:`Actuation` of the latter."""
    system, _ = model(name)
    act = Actuation(system.actuators, system.mechanism)
    forces = {"none": [], "passive": system.forces, "actuator": act.elements}[elements]
    return build(system.cset, forces), act


def core_terms(name: str, term: str, s: State) -> np.ndarray:
    """The compiled core's term at a state: M and h of the bare core (the core's ``h``
    holds ``-Q`` of its force elements: it has none there), the file's force elements'
    Q, the actuators' held torque plus their elements' Q."""
    if term in ("M", "h"):
        M, h, *_ = core_system(name, "none")[0].evaluate(s.q, s.v)
        return M if term == "M" else h
    system, act = core_system(name, term)
    if term == "passive":
        return system.force_terms(s.q, s.v)[0]
    tau = act.tau(s.ctrl)
    set_ctrl(system, act.elements)
    return tau + system.force_terms(s.q, s.v)[0]


def errors(name: str, term: str, engine: str) -> list[float]:
    system, states = model(name)
    out = []
    for s in states:
        got = reference_terms(system, s)[term] if engine == "numpy" else core_terms(name, term, s)
        out.append(rel_error(got, getattr(s, term), FLOOR[term]))
    return out


TERMS = ("M", "h", "passive", "actuator")


@pytest.mark.parametrize("term", TERMS)
@pytest.mark.parametrize("name", MODELS)
def test_reference_terms_are_mujocos(name, term):
    """The NumPy reference's M, h, passive and actuator forces are MuJoCo's."""
    err = errors(name, term, "numpy")
    assert max(err) <= RTOL, err


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
@pytest.mark.parametrize("term", TERMS)
@pytest.mark.parametrize("name", MODELS)
def test_core_terms_are_mujocos(name, term):
    """The compiled core's M, h (without the passive forces), passive and actuator
    forces are MuJoCo's."""
    err = errors(name, term, "core")
    assert max(err) <= RTOL, err


@pytest.mark.parametrize("name", MODELS)
def test_constrained_accelerations_are_gauss_reference_from_mujocos_terms(name):
    """``System.forward_dynamics`` with the actuators' force for the state's ctrl against
    Gauss's principle on MuJoCo's terms and its own equality rows (``mj_jac``, the drift
    from ``mj_jacDot``): the exact constrained acceleration MuJoCo's soft constraints
    approach. 1e-8 relative, floor 1e-10 rad/s^2."""
    system, states = model(name)
    err = []
    for s in states:
        f = s.actuator + s.passive - s.h
        ref = gauss_reference(s.M, f, s.J, s.drift)
        a = system.forward_dynamics(s.q, s.v, s.actuator).a
        err.append(rel_error(a, ref, 1e-10))
    assert max(err) <= RTOL, err


def test_the_figures_see_a_missing_term():
    """Not blind: without the armature M is off, without the ball joints' springs and
    dampers the biped's passive forces are, and without the force range the gripper's
    actuator force is, each by far more than RTOL."""
    system, states = model("closed_chain_biped")
    s = states[0]
    arm = system.mechanism.model.armature.copy()
    try:
        system.mechanism.model.armature[:] = 0.0
        assert rel_error(system.mechanism.compute(s.q, s.v).M, s.M, FLOOR["M"]) > 1e-4
    finally:
        system.mechanism.model.armature[:] = arm
    snap = system.mechanism.compute(s.q, s.v)
    hinge_only = [e for e in system.forces if "Ball" not in type(e).__name__]
    hinge_only = [e for e in hinge_only if "Dof" not in type(e).__name__]
    assert len(hinge_only) < len(system.forces)
    Q = sum(e.force(0.0, snap) for e in hinge_only)
    assert max(rel_error(Q, s.passive, FLOOR["passive"]) for s in states[:3]) > 1e-4
    gripper, gstates = model("parallel_gripper")
    (a,) = gripper.actuators
    free = Actuation([dataclasses.replace(a, forcerange=None)], gripper.mechanism)
    worst = max(
        rel_error(free.torque(s.q, s.v, s.ctrl), s.actuator, FLOOR["actuator"]) for s in gstates
    )
    assert worst > 1e-4


def test_the_models_load_as_written():
    """Both files compile in MuJoCo and load in pfaff: sizes, rows, rank, degrees of
    freedom, the limits, force elements and actuators the files declare."""
    g, _ = model("parallel_gripper")
    assert (g.nq, g.nv, g.cset.dim, g.rank) == (8, 8, 7, 5)
    assert [a.name for a in g.actuators] == ["fingers_actuator"]
    assert g.actuators[0].forcerange == (-5.0, 5.0) and len(g.limits) == 8
    b, _ = model("closed_chain_biped")
    assert (b.nq, b.nv, b.cset.dim, b.rank) == (25, 22, 6, 6)
    assert len(b.actuators) == 8 and len(b.limits) == 10
    knee = next(lim for lim in b.limits if lim.joint == "left_knee")
    assert abs(knee.lower - np.deg2rad(-18.0)) <= 1e-12  # 12 deg short of the straight leg
