"""pfaff.systems: the GraspPlant protocol, its two implementations, the YZ references
and the keyword-only YZController.

The reference numbers (tests/data/grasp_plants_reference.npz) were computed by the
code before the plants moved to ``pfaff.systems`` (``YZSetup`` / ``YZTwoArmPlant`` of
``scenarios/yoshikawa_zheng.py`` and ``DualPandaSetup`` of ``scenarios/dual_panda.py``,
commit 0dfadfa): mass matrices, bias forces, frames, grasp models, sensors and the
controller's torques at random states. The moved code must reproduce them to
round-off: 1e-12 relative to each array's size (a different BLAS kernel or NumPy
build rounds differently in the last bits; a change of the formulas would show at
1e-3 .. 1). The dual-arm start comes from a bounded least-squares IK that is
redundant (7 joints per arm, a posture term): its joints agree to 1e-6 rad, and the
hand poses it reaches are checked by forward kinematics. Beyond the squeeze, the
internal-force basis A_S is any orthonormal basis of the rest of N(W_S) (the SVD's
choice within a repeated singular value is LAPACK's): compared as a subspace.
"""

from __future__ import annotations

import numpy as np
import pytest
from where import DATA

from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.control.references import forth_back, smooth_move, time_at_speed
from pfaff.control.yoshikawa_zheng import YZ_PAPER_GAINS, YZController, YZGains
from pfaff.simulate.record import StepRecord
from pfaff.systems import GraspPlant, YZPlanarPlant
from pfaff.systems import yz_references as refs
from pfaff.systems.yz_planar import GAINS as YZ_GAINS
from pfaff.systems.yz_planar import internal_force

pin = pytest.importorskip("pinocchio")

REF = np.load(DATA / "grasp_plants_reference.npz")
FRAMES = ["arm1_tip", "arm2_tip", "arm1_elbow", "object", "hole1", "hole2"]


def assert_round_off(got, ref, name="") -> None:
    """``got`` equals the stored ``ref`` to round-off: 1e-12 times the array's size."""
    ref = np.asarray(ref, dtype=float)
    atol = 1e-12 * max(1.0, float(np.abs(ref).max(initial=0.0)))
    np.testing.assert_allclose(got, ref, rtol=0.0, atol=atol, err_msg=name)


def test_round_off_check_catches_a_formula_change():
    """The comparison can fail: a relative change of 1e-9 (far below any formula
    change, far above round-off) is caught."""
    ref = REF["yz0_M"]
    assert_round_off(ref * (1 + 1e-15), ref)
    with pytest.raises(AssertionError):
        assert_round_off(ref * (1 + 1e-9), ref)


def _planar():
    return YZPlanarPlant(
        0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14, contact_h=0.01, model="closed_form"
    )


@pytest.fixture(scope="module")
def dual():
    from pfaff.systems.dual_panda import DualPandaPlant

    return DualPandaPlant()


def test_both_plants_satisfy_the_protocol(dual):
    for plant in (_planar(), dual):
        assert isinstance(plant, GraspPlant)
        ctrl = plant.controller(lambda t, m: None)
        assert isinstance(ctrl, YZController) and ctrl.plant is plant
    assert not isinstance(object(), GraspPlant)


def test_planar_plant_reproduces_the_old_numbers():
    su = _planar()
    ref = lambda t, mode: (  # noqa: E731
        np.array([0.01 * t, 0.0]), np.array([0.01, 0.0]), np.zeros(2),
        np.array([0.5]), np.array([1.1]),
    )  # fmt: skip
    ctrl = su.controller(ref, 2e-3, mode=1)
    k = 0
    while f"yz{k}_in_r" in REF:
        r, v, lam = REF[f"yz{k}_in_r"], REF[f"yz{k}_in_v"], REF[f"yz{k}_in_lam"]
        # the initial posture comes from the one two-link IK (systems.ik) since issue
        # 17: equal to the old closed form to round-off; the rest to round-off
        q = su.initial_q(r)
        np.testing.assert_allclose(q, REF[f"yz{k}_q0"], rtol=0.0, atol=1e-14)
        q = REF[f"yz{k}_q0"]
        s = su.mech.compute(q, v, FRAMES)
        assert_round_off(s.M, REF[f"yz{k}_M"], "M")
        assert_round_off(s.h, REF[f"yz{k}_h"], "h")
        for f in FRAMES:
            fs = s.frames[f]
            got = np.concatenate([fs.p, fs.R.ravel(), fs.J.ravel(), fs.drift])
            assert_round_off(got, REF[f"yz{k}_{f}"], f)
        for mode in (0, 1):
            for name, val in vars(su.grasp_state(su.object_at(r, v[4:7]), mode)).items():
                assert_round_off(val, REF[f"yz{k}_g{mode}_{name}"], name)
        rec = StepRecord.at(ConstraintSet(su.mech), s, sensors={"lambda": lam})
        for mode in (0, 1):
            assert_round_off(
                np.concatenate(su.measure(rec, su.object_state(rec), mode)),
                REF[f"yz{k}_meas{mode}"],
            )
        assert_round_off(internal_force(su, q, lam), REF[f"yz{k}_internal"][0])
        s2 = su.mech.compute(q, v, ctrl.frames)
        rec2 = StepRecord.at(ConstraintSet(su.mech), s2, sensors={"lambda": lam})
        assert_round_off(ctrl(k * 2e-3, rec2), REF[f"yz{k}_tau"], "tau")
        k += 1
    assert k == 8


def test_dual_panda_plant_reproduces_the_old_numbers(dual):
    from pfaff.systems.dual_panda import HAND1, HAND2

    q0 = dual.initial_q(-0.05)
    np.testing.assert_allclose(q0, REF["dp_q0"], rtol=0.0, atol=1e-6)  # a redundant IK
    snap = dual.mech.compute(q0, None, list(dual.sys.tips), dynamics=False)
    for i, tip in enumerate(dual.sys.tips):  # forward kinematics: the hands hold the box
        box_centre = np.array([-0.05, 0.0, dual.zc])
        np.testing.assert_allclose(snap.frames[tip].p, box_centre + dual.c[i], atol=1e-9)
        np.testing.assert_allclose(snap.frames[tip].R, (HAND1, HAND2)[i], atol=1e-9)
    ref = lambda t, mode: (  # noqa: E731
        np.array([0.01 * t, 0, 0]), np.zeros(3), np.zeros(3),
        np.array([5.0, 0, 0]), np.array([14.0, 0, 0, 0, 0, 0]),
    )  # fmt: skip
    ctrl = dual.controller(ref, 5e-3)
    k = 0
    while f"dp{k}_in_q" in REF:
        q, v = REF[f"dp{k}_in_q"], REF[f"dp{k}_in_v"]
        s = dual.mech.compute(q, v, ctrl.frames)
        s = StepRecord.at(ConstraintSet(dual.mech), s, sensors={"lambda": REF[f"dp{k}_in_lam"]})
        obj = dual.object_state(s)
        r, rd = obj.r, obj.rd
        assert_round_off(np.concatenate([r, rd]), REF[f"dp{k}_r"], "r")
        for name, val in vars(dual.grasp_state(obj, 0)).items():
            ref_val = REF[f"dp{k}_g_{name}"]
            if name == "A_S":  # the squeeze, then any orthonormal basis of the rest of N(W_S)
                assert_round_off(val[:, 0], ref_val[:, 0], name)
                val, ref_val = val[:, 1:] @ val[:, 1:].T, ref_val[:, 1:] @ ref_val[:, 1:].T
            assert_round_off(val, ref_val, name)
        assert_round_off(dual.Q_r(obj), REF[f"dp{k}_Qr"], "Q_r")
        F_h, f_F = dual.measure(s, obj, 0)
        assert_round_off(np.concatenate([F_h, f_F]), REF[f"dp{k}_meas"], "measure")
        f_IS, ref_f_IS = dual.internal(q, F_h), REF[f"dp{k}_internal"]
        assert_round_off(f_IS[0], ref_f_IS[0], "squeeze")
        assert_round_off(np.linalg.norm(f_IS[1:]), np.linalg.norm(ref_f_IS[1:]), "internal")
        assert_round_off(ctrl(k * 5e-3, s), REF[f"dp{k}_tau"], "tau")
        k += 1
    assert k == 4


def test_controller_is_keyword_only():
    su = _planar()
    with pytest.raises(TypeError, match="positional"):
        YZController(su, YZ_PAPER_GAINS, lambda t, m: None)  # type: ignore[misc]
    with pytest.raises(TypeError, match="reference"):
        YZController(plant=su, gains=YZ_PAPER_GAINS)  # type: ignore[call-arg]
    ctrl = YZController(plant=su, gains=YZ_PAPER_GAINS, reference=lambda t, m: None, mode=1)
    assert ctrl.mode == 1 and ctrl.tips == ("arm1_tip", "arm2_tip")


def test_gains_per_mode_are_the_paper_entries():
    g = YZ_PAPER_GAINS.per_mode({0: [0, 1, 2], 1: [0, 2]})
    assert isinstance(g, YZGains)
    np.testing.assert_array_equal(g.K_V[1], [65.0, 55.0])
    np.testing.assert_array_equal(g.K_P[0], [13000.0, 13000.0, 15000.0])
    assert (g.K_IF, g.K_II) == (100.0, 70.0)


def test_references_are_smooth_and_reach_their_targets():
    T, D, ta = 0.8, 0.05, 0.2
    assert smooth_move(T, T, D, ta) == (D, 0.0, 0.0)
    h = 1e-6
    for t in (0.05, 0.3, 0.7):  # s' and s'' are the derivatives of s
        s0, s1 = smooth_move(t - h, T, D, ta), smooth_move(t + h, T, D, ta)
        mid = smooth_move(t, T, D, ta)
        assert (s1[0] - s0[0]) / (2 * h) == pytest.approx(mid[1], rel=1e-6)
        assert (s1[1] - s0[1]) / (2 * h) == pytest.approx(mid[2], rel=1e-5, abs=1e-9)
    assert forth_back(T, T, 0.025, 0.1)[0] == pytest.approx(0.0, abs=1e-15)
    tc = time_at_speed(0.025, 0.4, 0.1, 0.068)
    assert smooth_move(tc, 0.4, 0.025, 0.1)[1] == pytest.approx(0.068, rel=1e-12)
    with pytest.raises(ValueError, match="must lie in"):
        time_at_speed(0.025, 0.4, 0.1, 1.0)
    assert refs.table2(0.3) == (0.75, 1.0) and refs.TABLE2_STEPS == (0.27, 0.53)


# -- the YZ plant as a Pinocchio model (the core) against its closed form -------------

#: q_abs = T_ABS q_rel: the closed form's absolute arm angles from Pinocchio's relative
T_ABS = np.eye(7)
T_ABS[1, 0] = T_ABS[3, 2] = 1.0
PLANT_FRAMES = ["arm1_tip", "arm2_tip", "arm1_elbow", "arm2_elbow", "object", "hole1", "hole2"]


def _plant_mismatch(pin_plant, cf_plant, q, v, T=T_ABS) -> dict[str, float]:
    """Largest differences of M, h (in the Pinocchio coordinates) and of the frames'
    positions, Jacobians and drifts between the two plants at ``(q, v)`` (Pinocchio's
    coordinates; ``T`` maps them to the closed form's)."""
    sp = pin_plant.mech.compute(q, v, PLANT_FRAMES)
    sc = cf_plant.mech.compute(T @ q, T @ v, PLANT_FRAMES)
    fr = [(sp.frames[f], sc.frames[f]) for f in PLANT_FRAMES]
    return {
        "M": float(np.abs(T.T @ sc.M @ T - sp.M).max()),
        "h": float(np.abs(T.T @ sc.h - sp.h).max()),
        "p": max(float(np.abs(a.p - b.p).max()) for a, b in fr),
        "R": max(float(np.abs(a.R - b.R).max()) for a, b in fr),
        "J": max(float(np.abs(a.J - b.J @ T).max()) for a, b in fr),
        "drift": max(float(np.abs(a.drift - b.drift).max()) for a, b in fr),
    }


def test_pinocchio_plant_equals_the_closed_form():
    """The Pinocchio plant (each five-bar as its serial equivalent, relative angles) and
    the closed form (absolute angles): M, h, frame positions, orientations, Jacobians
    and drifts agree at 40 random states. Scales: |M| ~ 1.4e-3 kg m^2, |v| <= 6 rad/s
    and m/s, |p| <= 0.3 m; the wrong input (q fed unmapped) is caught."""
    bases = [(-0.08, 0.0), (0.08, 0.0)]
    P = YZPlanarPlant(0.12, bases, model="pinocchio")
    C = YZPlanarPlant(0.12, bases, model="closed_form")
    rng = np.random.default_rng(93)
    for _ in range(40):
        q, v = rng.uniform(-np.pi, np.pi, 7), rng.uniform(-6.0, 6.0, 7)
        d = _plant_mismatch(P, C, q, v)
        assert d["M"] <= 1e-17 and d["h"] <= 1e-15, d  # kg m^2, N m (|M| |v|^2 ~ 5e-2)
        assert d["p"] <= 1e-15 and d["R"] <= 1e-15 and d["J"] <= 1e-15, d
        assert d["drift"] <= 1e-13, d  # m/s^2 (|p| |v|^2 ~ 10)
    # the initial postures: the same tips, in each plant's coordinates
    r = np.array([-0.025, 0.13, 0.1])
    np.testing.assert_allclose(T_ABS @ P.initial_q(r), C.initial_q(r), rtol=0, atol=1e-15)
    bad = _plant_mismatch(P, C, q, v, T=np.eye(7))
    assert bad["p"] > 1e-2 and bad["M"] > 1e-6


def test_pinocchio_plant_refuses_an_unknown_model():
    with pytest.raises(ValueError, match="unknown model 'urdf'; valid: pinocchio, closed_form"):
        YZPlanarPlant(0.12, [(-0.08, 0.0), (0.08, 0.0)], model="urdf")


@pytest.mark.parametrize("name", ["yz-free", "yz-contact"])
def test_yz_scenarios_on_both_plants_agree(name):
    """A whole run on the Pinocchio plant (the core) and on the closed form (NumPy):
    object pose, multipliers and torques (mapped to absolute coordinates) agree, and so
    do the metrics (impacts and phase switches included). Tolerance 1e-9 relative; 1e-8
    on yz-contact, whose impact time is a root of the gap found to ~3e-12 s (rounding),
    which the position gains (K_P = 13000) carry into tau as 2.6e-9."""
    from pfaff.scenarios import get_scenario

    sc = get_scenario(name)
    out = {}
    for model in ("pinocchio", "closed_form"):
        sets = {"model": model, **({"probe": False} if name == "yz-free" else {})}
        res = sc.func(sc.resolve(sets))
        out[model] = (res.trajectory.engine, res.trajectory.arrays(), res.metrics)
    (e1, a, m1), (e2, b, m2) = out["pinocchio"], out["closed_form"]
    tol = 1e-9 if name == "yz-free" else 1e-8
    assert (e1, e2) == ("core", "numpy")
    assert a["t"].shape == b["t"].shape
    assert np.abs(a["q"][:, 4:] - b["q"][:, 4:]).max() <= 1e-9  # m, rad
    np.testing.assert_allclose(a["q"] @ T_ABS.T, b["q"], rtol=0, atol=1e-9)
    for key in ("lambda", "tau"):
        ref = b[key]
        got = a[key] if key == "lambda" else a[key] @ np.linalg.inv(T_ABS)  # tau_abs
        assert np.abs(got - ref).max() <= tol * np.abs(ref).max(), key
    for k, val in m2.items():
        if isinstance(val, float):
            assert m1[k] == pytest.approx(val, rel=1e-7, abs=1e-12), k


# -- the compiled YZ law (pfaff._papers.YZKernel) against the NumPy law -----------------


def _yz_cases(dual):
    """(plant, constraint set, reference, q0, mode) of the planar pair (free and on the
    wall) and the two Pandas."""
    su = _planar()
    pinned = YZPlanarPlant(0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14, contact_h=0.01)
    ref0 = lambda t, m: (  # noqa: E731
        np.array([0.01, 0.13, 0.02]), np.zeros(3), np.array([0.3, 0.2, -1.0]),
        np.zeros(0), np.array([1.1]),
    )  # fmt: skip
    ref1 = lambda t, m: (  # noqa: E731
        np.array([0.01 * t, 0.0]), np.array([0.01, 0.0]), np.zeros(2),
        np.array([0.5]), np.array([1.1]),
    )  # fmt: skip
    refd = lambda t, m: (  # noqa: E731
        np.array([0.01 * t, 0, 0]), np.zeros(3), np.zeros(3),
        np.array([5.0, 0, 0]), np.array([14.0, 0, 0, 0, 0, 0]),
    )  # fmt: skip
    r0 = np.array([-0.02, 0.13, 0.05])
    kernel_only = _KernelOnlyPlane(0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14)
    return [
        (su, su.free, ref0, su.initial_q(r0), 0),
        (pinned, pinned.contact, ref1, pinned.initial_q(r0), 1),
        (dual, dual.cset, refd, dual.initial_q(-0.05), 0),
        (kernel_only, kernel_only.contact, ref1, kernel_only.initial_q(r0), 1),
    ]


class _KernelOnlyPlane(YZPlanarPlant):
    """The planar plant without its compiled terms: the compiled law is YZKernel alone
    (eq. 31-37), the plant's terms and the servo in Python (a user's GraspModel)."""

    def compiled_grasp(self):
        return None


GAINS_OF = [YZ_GAINS, YZ_GAINS, YZ_PAPER_GAINS, YZ_GAINS]


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
@pytest.mark.parametrize(
    "case", [0, 1, 2, 3], ids=["planar-free", "planar-wall", "dual-panda", "kernel-only"]
)
def test_compiled_yz_law_equals_the_numpy_law(dual, case):
    """``YZController`` with the compiled law and with the NumPy law: the torque and the
    force estimate at the start of the next hold (the trapezoid rule, eq. 31) agree to
    1e-12 and 1e-10 relative over three successive samples (integrators and held torque carried)
    at 8 random states of each plant (the whole sample compiled for the planar pair and the
    Pandas, the law alone for a plant without compiled terms); a change of 1e-9 in one grasp
    term is seen."""
    plant, cset, ref, q0, mode = _yz_cases(dual)[case]
    rng = np.random.default_rng(11 + case)
    nv = plant.mech.nv
    for _ in range(8):
        ctrls = [
            YZController(plant=plant, gains=GAINS_OF[case], reference=ref, mode=mode, compiled=c)
            for c in (True, False)
        ]
        assert (ctrls[0]._plant_sample is None) == (case == 3) and ctrls[0]._kernel is not None
        q = q0.copy()
        q[plant.arm_idx] += rng.normal(scale=0.02, size=plant.arm_idx.size)  # arms first in q
        for k in range(3):
            v = rng.normal(scale=0.2, size=nv)
            lam = rng.normal(scale=2.0, size=cset.dim)
            out = []
            for ctrl in ctrls:
                snap = plant.mech.compute(q, v, ctrl.frames)
                rec = StepRecord.at(ConstraintSet(plant.mech), snap, sensors={"lambda": lam})
                out.append((ctrl(k * 2e-3, rec), ctrl.hold_start()))
            (tau_c, s_c), (tau_n, s_n) = out
            assert np.abs(tau_c - tau_n).max() <= 1e-12 * np.abs(tau_n).max()
            # through a solve with K of eq. (31), which mixes inertias of 1e-4 .. 1 kg (m^2)
            assert np.abs(s_c - s_n).max() <= 1e-10 * max(1.0, np.abs(s_n).max())
    # the wrong input: one grasp term changed by 1e-9 moves the torque beyond 1e-12
    g = plant.grasp_state(plant.object_state(rec), mode)
    kern, grasp = core.yz_kernel(), core.yz_grasp()
    args = [g.S, g.W, g.S_rate, g.W_rate, g.A_S, g.T, g.T_rate, g.E_P, g.E_F, g.E_P_rate]
    ctrl = ctrls[1]
    M, h = snap.M[ctrl._arm_block], snap.h[ctrl.arm_idx]
    J, Jd = ctrl.arm_terms(snap)
    u = [ctrl.last["u1"], ctrl.last["u2"], ctrl.last["u3"]]
    obj, taus = plant.object_state(rec), []
    for dW in (0.0, 1e-9):
        grasp.set(*args[:1], args[1] + dW, *args[2:], g.E_F_rate, ctrl.I_B)
        held = np.zeros(M.shape[0])
        out = kern(M, h, v[ctrl.arm_idx], J, Jd, grasp, plant.Q_r(obj), obj.rd, *u, held, True)
        taus.append(out[0])
    assert np.abs(taus[1] - taus[0]).max() > 1e-12 * np.abs(taus[0]).max()


def _random_box_state(dual, rng):
    """q, v of the two Pandas and the box at a random pose and velocity (not on the
    constraints: the terms are functions of (q, v) alone)."""
    q = dual.initial_q(-0.05)
    q[dual.arm_idx] += rng.normal(scale=0.05, size=dual.arm_idx.size)
    bq = dual.sys.box_q
    q[bq.start : bq.start + 3] += rng.normal(scale=0.05, size=3)
    quat = rng.normal(size=4)
    quat[3] += 4.0 * np.sign(quat[3])  # keep theta of r away from its singularity 0
    q[bq.start + 3 : bq.stop] = quat / np.linalg.norm(quat)
    return q, rng.normal(scale=0.5, size=dual.mech.nv)


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
def test_compiled_box_terms_equal_the_plant(dual):
    """``YZRigidBox.terms`` (src/cpp/papers/yz_sample.cpp) against DualPandaPlant's object_state,
    grasp_state, Q_r and measure at 40 random box poses, velocities and multipliers: r,
    r', S, W, S', W', T, T', Q_r, r_P, F_h, f_F to 1e-12 (their units: m, rad, m/s, N,
    N m); a box model with the grasp points 1 mm off (wrong input) is caught."""
    box = dual.compiled_grasp()
    rng = np.random.default_rng(5)
    for _ in range(40):
        q, v = _random_box_state(dual, rng)
        lam = rng.normal(scale=10.0, size=dual.cset.dim)
        snap = dual.mech.compute(q, v)
        obj = dual.object_state(snap)
        g = dual.grasp_state(obj, 0)
        rec = StepRecord.at(ConstraintSet(dual.mech), snap, sensors={"lambda": lam})
        F_h, f_F = dual.measure(rec, obj, 0)
        want = (obj.r, obj.rd, g.S, g.W, g.S_rate, g.W_rate, g.T, g.T_rate, dual.Q_r(obj))
        want += (g.r_P, F_h, f_F)
        got = box.terms(q, v, lam)
        for name, x, y in zip("r rd S W Sd Wd T Td Q_r r_P F_h f_F".split(), got, want):
            assert np.abs(x - y).max() <= 1e-12 * max(1.0, np.abs(y).max()), name
    box.c_hands = dual._c_hands + 1e-3
    assert np.abs(box.terms(q, v, lam)[3] - g.W).max() > 1e-4


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
@pytest.mark.parametrize("model", ["pinocchio", "closed_form"])
def test_compiled_plane_terms_equal_the_plant(model):
    """``YZPinnedPlane.terms`` (src/cpp/papers/yz_sample.cpp) against YZPlanarPlant's
    object_state, grasp_state, Q_r and measure in both modes (free; on the wall) at 40
    random states and multipliers each: r, r', S, W, S', W', T, T', Q_r, r_P, F_h, f_F,
    E_P, E_F, E_F' to 1e-12 (m, rad, m/s, N); wrong input: pins 1 mm off, a wall 1 mm
    off (E_F, E_F' of a contact point at another height) are caught, a mode without a set
    is refused by name."""
    su = YZPlanarPlant(0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14, contact_h=0.01, model=model)
    plane = su.compiled_grasp()
    rng = np.random.default_rng(3)
    q0 = su.initial_q(np.array([-0.02, 0.13, 0.05]))
    names = "r rd S W Sd Wd T Td Q_r r_P F_h f_F E_P E_F E_Fd".split()
    for mode, cset in ((0, su.free), (1, su.contact)):
        plane.mode = mode
        for _ in range(40):
            q = q0 + rng.normal(scale=0.3, size=7)  # theta anywhere near [-1, 1] rad
            v = rng.normal(scale=0.5, size=7)
            lam = rng.normal(scale=10.0, size=cset.dim)
            snap = su.mech.compute(q, v)
            obj = su.object_state(snap)
            g = su.grasp_state(obj, mode)
            rec = StepRecord.at(ConstraintSet(su.mech), snap, sensors={"lambda": lam})
            F_h, f_F = su.measure(rec, obj, mode)
            want = (obj.r, obj.rd, g.S, g.W, g.S_rate, g.W_rate, g.T, g.T_rate, su.Q_r(obj))
            want += (g.r_P, F_h, f_F, g.E_P, g.E_F, g.E_F_rate)
            got = plane.terms(q, v, lam)
            for name, x, y in zip(names, got, want):
                assert np.shape(x) == np.shape(y), name
                assert np.abs(x - y).max(initial=0.0) <= 1e-12 * np.abs(y).max(initial=1.0), name
    assert np.abs(got[13][0, 2]) > 1e-3  # the wall's row turns with theta: E_F[2] = -h sin
    off = YZPlanarPlant(
        0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14, contact_h=0.011, model=model
    ).compiled_grasp()
    off.mode = 1
    moved = off.terms(q, v, lam)
    assert np.abs(moved[13] - g.E_F).max() > 1e-5 and np.abs(moved[14] - g.E_F_rate).max() > 1e-6
    plane.c_hands = plane.c_hands + 1e-3
    assert np.abs(plane.terms(q, v, lam)[3] - g.W).max() > 1e-4
    plane.mode = 2
    with pytest.raises(ValueError, match="mode 2 has no object-constraint set; valid: 0 .. 1"):
        plane.terms(q, v, lam)


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
def test_compiled_plane_servo_carries_through_mode_switches():
    """The whole compiled sample of the planar pair against the NumPy law over 14 samples
    with the switches of yz-contact (free -> on the wall -> free, the integrator of f_F
    restarted at each) and an interrupt: the torque to 1e-12 relative, the integrators and
    hold-start estimates to 1e-10 (N s, N), the signals to 1e-10. Wrong input: an
    integrator forgotten gives another torque; a compiled plant left on the wall while the
    law is free is refused, naming the sizes."""
    su = YZPlanarPlant(0.12, [(-0.08, 0.0), (0.08, 0.0)], wall_y=0.14, contact_h=0.01)

    def ref(t, mode):
        r, rd, rdd = np.array([0.01 * t, 0.13, 0.0]), np.array([0.01, 0.0, 0.0]), np.zeros(3)
        if mode == 0:
            return r, rd, rdd, np.zeros(0), np.array([1.1 + t])
        return r[[0, 2]], rd[[0, 2]], rdd[[0, 2]], np.array([0.5 - t]), np.array([1.1 + t])

    ctrls = [YZController(plant=su, gains=YZ_GAINS, reference=ref, compiled=c) for c in (1, 0)]
    assert ctrls[0]._plant_sample is not None and ctrls[1]._plant_sample is None
    rng = np.random.default_rng(17)
    q0 = su.initial_q(np.array([-0.02, 0.13, 0.05]))
    for k in range(14):
        for c in ctrls:
            if k in (4, 10):
                c.set_mode(1 if k == 4 else 0)
            if k == 7:
                c.interrupt()
        cset = su.contact if ctrls[0].mode == 1 else su.free
        q = q0.copy()
        q[:4] += rng.normal(scale=0.02, size=4)
        v, lam = rng.normal(scale=0.2, size=7), rng.normal(scale=2.0, size=cset.dim)
        taus = []
        for c in ctrls:
            snap = su.mech.compute(q, v, c.frames)
            rec = StepRecord.at(ConstraintSet(su.mech), snap, sensors={"lambda": lam})
            taus.append(c(k * 2e-3, rec))
        assert np.abs(taus[0] - taus[1]).max() <= 1e-12 * np.abs(taus[1]).max(), k
        sv, ref_c = ctrls[0]._servo, ctrls[1]
        np.testing.assert_allclose(sv.int_I, ref_c.int_I, rtol=0, atol=1e-10)
        np.testing.assert_allclose(sv.int_F, ref_c.int_F, rtol=0, atol=1e-10)
        np.testing.assert_allclose(ctrls[0].hold_start(), ref_c.hold_start(), rtol=0, atol=1e-10)
        assert ctrls[0].signals == pytest.approx(ref_c.signals, rel=1e-10, abs=1e-10)
    assert ctrls[0].mode == 0 and sv.int_F.size == 0
    snap = su.mech.compute(q, v, ctrls[0].frames)
    rec = StepRecord.at(ConstraintSet(su.mech), snap, sensors={"lambda": lam})
    sv.has_int_I = False  # wrong input: the internal-force integral forgotten
    assert np.abs(ctrls[0](0.1, rec) - ctrls[1](0.1, rec)).max() > 1e-6
    ctrls[0]._plant_sample.mode = 1  # wrong input: the compiled plant on the wall, the law free
    rec.sensors["lambda"] = rng.normal(scale=2.0, size=su.contact.dim)
    with pytest.raises(ValueError, match="r_Pd of size 3, f_Fd 0.*2 position functions, 1 hyp"):
        ctrls[0](0.12, rec)


@pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
@pytest.mark.parametrize("rule,unloaded", [("trapezoid", True), ("end", False)])
def test_compiled_box_servo_equals_the_numpy_servo(dual, rule, unloaded):
    """The whole compiled sample (plant terms, servo of eq. 41-43, law) against the
    NumPy law over a sequence of samples with an interrupt (an impact: no integration of
    that hold), a reset and a repeated reference: the torque to 1e-12 relative, the
    integrators and the hold-start estimates to 1e-10 (N s, N); an integrator that does
    not carry (wrong input: the servo state cleared) is caught."""
    ref = _yz_cases(dual)[2][2]
    rng = np.random.default_rng(7)
    ctrls = [
        YZController(
            plant=dual, gains=YZ_PAPER_GAINS, reference=ref, compiled=c, integral_rule=rule,
            unloaded_start=unloaded,
        )
        for c in (True, False)
    ]  # fmt: skip
    assert ctrls[0]._plant_sample is not None and ctrls[1]._plant_sample is None
    for k in range(12):
        if k == 5:
            for c in ctrls:
                c.interrupt()
        if k == 9:
            for c in ctrls:
                c.reset()
        q, v = _random_box_state(dual, rng)
        lam = rng.normal(scale=10.0, size=dual.cset.dim)
        taus = []
        for c in ctrls:
            snap = dual.mech.compute(q, v, c.frames)
            taus.append(
                c(k * 5e-3, StepRecord.at(ConstraintSet(dual.mech), snap, sensors={"lambda": lam}))
            )
        assert np.abs(taus[0] - taus[1]).max() <= 1e-12 * np.abs(taus[1]).max(), k
        sv, ref_c = ctrls[0]._servo, ctrls[1]
        np.testing.assert_allclose(sv.int_I, ref_c.int_I, rtol=0, atol=1e-10)
        np.testing.assert_allclose(sv.int_F, ref_c.int_F, rtol=0, atol=1e-10)
        np.testing.assert_allclose(ctrls[0].hold_start(), ref_c.hold_start(), rtol=0, atol=1e-10)
        for key in ("u1", "u2", "u3", "q_dd", "r_dd", "F_hSd"):
            np.testing.assert_allclose(ctrls[0].last[key], ref_c.last[key], rtol=1e-10, atol=1e-9)
        assert ctrls[0].signals == pytest.approx(ref_c.signals, rel=1e-10, abs=1e-10)
    # wrong input: the compiled integrators forgotten before a sample
    ctrls[0]._servo.has_int_I = ctrls[0]._servo.has_int_F = False
    snap = dual.mech.compute(q, v, ctrls[0].frames)
    rec = StepRecord.at(ConstraintSet(dual.mech), snap, sensors={"lambda": lam})
    assert np.abs(ctrls[0](0.1, rec) - ctrls[1](0.1, rec)).max() > 1e-6
