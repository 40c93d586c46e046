"""Every array that crosses into the compiled core is checked at the boundary
(design.md Sec. 1): a wrong size, a wrong number of dimensions, a NaN/inf or no array at
all is a ValueError naming the entry point and the argument, never undefined behaviour.
A wrong-length torque once aborted the interpreter ("double free or corruption").

``TABLE`` drives each bound entry point with its valid arguments, then with one argument
replaced by a wrong one at a time; the relations between arguments (rows of J against
the grasp, a run's steps, the record buffers) have their own tests below; random arrays
are in test_core_fuzz.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from where import MODELS

from pfaff import core
from pfaff.constraints import ConstraintSet, PointOnPlane
from pfaff.files.model import load_model
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.policy import CORE_SERIES

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
N = 4  # the five-bar: nq = nv = 4, 3 rows
Z = np.zeros


def _five_bar():
    m = load_model(MODELS / "five_bar.xml", contact=False)
    cset = ConstraintSet(m.mechanism, m.constraints)
    return core.build(cset), cset, m.q


# -- the table: entry point, its valid arguments, the arguments to spoil -----------------


def _variants(x: np.ndarray) -> dict[str, tuple[object, str]]:
    """Wrong versions of a valid array ``x``: label -> (value, words of the message)."""
    out: dict[str, tuple[object, str]] = {}
    if x.ndim == 1:
        n = x.size
        if n:
            out["short"] = (x[:-1], f"has shape ({n - 1},), expected")
        out["long"] = (Z(n + 2), f"has shape ({n + 2},), expected")
        out["ndim"] = (x[None, :], f"has shape (1, {n}), expected")
    else:
        r, c = x.shape
        if r:
            out["short"] = (x[:-1], f"has shape ({r - 1}, {c}), expected")
        out["long"] = (Z((r + 2, c)), f"has shape ({r + 2}, {c}), expected")
        out["ndim"] = (x.ravel(), f"has shape ({r * c},), expected")
    if x.size:
        for bad in (np.nan, np.inf):
            y = x.astype(float).copy()
            y.flat[x.size // 2] = bad
            out[str(bad)] = (y, f"has a non-finite entry {bad}")
    out["text"] = ("abc", "is a str, expected an array of numbers")
    out["none"] = (None, "is None, expected an array of numbers")
    return out


ALL = ("short", "long", "ndim", "nan", "inf", "text", "none")
VALUES = ("ndim", "nan", "inf", "text", "none")  # its size is free or set by another one


SYSTEM_ARGS = {  # System's calls and their arrays
    "evaluate": ("q", "v"), "solve": ("q", "v", "tau"), "acceleration": ("q", "v", "tau"),
    "set_state": ("q", "v"), "set_tau": ("tau",), "force_terms": ("q", "v"),
}  # fmt: skip


def _system(method: str):
    s, _, q = _five_bar()
    args = {"q": q, "v": Z(N), "tau": Z(N)}
    return getattr(s, method), {k: args[k] for k in SYSTEM_ARGS[method]}


def _sim_step():
    """pfaff.Simulator.step hands tau to the core (pfaff._core.sim_step) unchecked in
    Python; tau=None is zero torque, so "none" is valid there."""
    import pfaff

    sim = pfaff.Simulator(pfaff.load(MODELS / "five_bar.xml", contact=False))
    return (lambda tau: sim.step(tau)), {"tau": Z(N)}


def _run_limited():
    """A limited run on the core (pfaff._core.run_limited): the torque held over it."""
    import pfaff

    s = pfaff.load(MODELS / "limited_pendulum.xml", contact=False)
    sys_ = core.build(s.cset)
    core.add_limit(sys_, 0, 0, -0.5, 2.0, 0.0, 1e-9)
    sys_.set_state(s.q0, s.v0)
    args = (0.0, 1e-3, [], True, 1, 8, 1e-15, 1e-10, 64, 50)
    return (lambda tau: core.run_limited(sys_, tau, *args)), {"tau": Z(1)}


def _control_kernel():
    n = 3
    args = dict(M=np.eye(n), h=Z(n), V1=Z((n, 1)), Cv=Z(n), N=np.eye(n), J=np.eye(2, n),
                Jdv=Z(2), rhs_ref=Z(2), rel_tol=1e-9, u_F=Z(n))  # fmt: skip
    return core.control_kernel(), args


def _task_law():
    k, n = core.control_kernel(), 3
    k.set_task([core.task_block(-1, [0, 2])])  # a joint task on joints 0 and 2
    args = dict(frames=[], q=Z(n), v=Z(n), theta_d=Z(2), dtheta_d=Z(2), ddtheta_d=Z(2),
                kp=np.ones(2), kd=np.ones(2), M=np.eye(n), h=Z(n), V1=Z((n, 1)), Cv=Z(n),
                N=np.eye(n), rel_tol=1e-9, u_F=Z(0))  # fmt: skip
    return k.task_law, args


I3 = np.eye(3)
GRASP = dict(S=I3, W=I3, S_rate=0 * I3, W_rate=0 * I3, A_S=Z((3, 1)), T=I3, T_rate=0 * I3,
             E_P=I3, E_F=Z((0, 3)), E_P_rate=0 * I3, E_F_rate=Z((0, 3)), I_B=I3)  # fmt: skip


def _yz_kernel():
    g = core.yz_grasp()
    g.set(**GRASP)
    n = 3
    args = dict(M=np.eye(n), h=Z(n), qd=Z(n), J=np.eye(3), Jdqd=Z(3), grasp=g, Q_r=Z(3),
                rd=Z(3), u1=Z(3), u2=Z(0), u3=Z(1), held=Z(n), trapezoid=False)  # fmt: skip
    return core.yz_kernel(), args


def _servo(p: int):
    sv = core.yz_servo()
    sv.K_V, sv.K_P, sv.K_IF, sv.K_II = np.ones(p), np.ones(p), np.ones(1), np.ones(1)
    return sv


def _box():
    """Two rigid hands on a free box (k = 2: S is 12 x 12) and 12 arm joints."""
    b = core.yz_rigid_box()
    b.R_hands, b.c_hands = np.hstack([I3, I3]), Z((3, 2))
    b.set_object(Z((12, 6)), np.eye(6), Z((0, 6)), np.eye(6))
    b.F_sel, b.E_sel, b.P_off = Z((12, 1)), Z((6, 1)), Z(6)
    return b


def _plane():
    """Two pins on a planar object (S is 6 x 4), one set without contact, 4 arm joints."""
    p = core.yz_pinned_plane()
    p.c_hands, p.F_sel = Z((2, 2)), Z((6, 1))
    p.set_object(Z((4, 1)), I3)
    p.add_set(I3, Z(3), Z((0, 2)), Z((0, 2)), Z(0), Z((0, 1)))
    return p


def _box_sample():
    n, q = 12, np.r_[Z(6), 1.0]
    args = dict(servo=_servo(6), q=q, v=Z(6), lam=Z(1), M=np.eye(n), h=Z(n), qd=Z(n),
                J=np.eye(n), Jdqd=Z(n), r_Pd=Z(6), r_Pd_dot=Z(6), r_Pd_dd=Z(6), f_Fd=Z(0),
                f_ISd=Z(6), held=Z(n))  # fmt: skip
    return _box().sample, args


def _plane_sample():
    n = 4
    args = dict(servo=_servo(3), q=Z(3), v=Z(3), lam=Z(1), M=np.eye(n), h=Z(n), qd=Z(n),
                J=np.eye(6, n), Jdqd=Z(6), r_Pd=Z(3), r_Pd_dot=Z(3), r_Pd_dd=Z(3), f_Fd=Z(0),
                f_ISd=Z(1), held=Z(n))  # fmt: skip
    return _plane().sample, args


def _setter(obj, name: str, good):
    return (lambda **kw: setattr(obj, name, kw[name])), {name: good}


def _spec():
    return core._core.Spec()


def _force_spec():
    return core._core.ForceSpec()


def _plane_terms():
    return _plane().terms, dict(q=Z(3), v=Z(3), lam=Z(1))


def _add_set():
    args = dict(E_P=I3[:2], P_off=Z(2), offsets=Z((1, 2)), normals=np.array([[0.0, 1.0]]),
                levels=Z(1), f_sel=Z((1, 1)))  # fmt: skip
    return core.yz_pinned_plane().add_set, args


TABLE = {  # where -> (factory, {argument: the variants that must be refused})
    **{f"System.{m}": (lambda m=m: _system(m), dict.fromkeys(args, ALL))
       for m, args in SYSTEM_ARGS.items()},
    "Simulator.step": (_sim_step, {"tau": ("short", "long", "ndim", "nan", "inf", "text")}),
    "run_limited": (_run_limited, {"tau": ALL}),
    "ControlKernel.__call__": (_control_kernel, {
        "M": ALL, "h": ALL, "V1": ALL, "Cv": ALL, "N": ALL, "J": VALUES, "Jdv": ALL,
        "rhs_ref": ALL, "u_F": ALL}),
    "ControlKernel.task_law": (_task_law, {
        "q": ALL, "v": ALL, "theta_d": ALL, "dtheta_d": ALL, "ddtheta_d": ALL, "kp": VALUES,
        "kd": ALL, "M": ALL, "h": ALL, "V1": ALL, "Cv": ALL, "N": ALL}),
    "YZGrasp.set": (lambda: (core.yz_grasp().set, dict(GRASP)),
                    {k: VALUES if x.size else ("ndim", "text", "none") for k, x in GRASP.items()}),
    "YZKernel.__call__": (_yz_kernel, {
        "M": ALL, "h": ALL, "qd": ALL, "J": VALUES, "Jdqd": ALL, "Q_r": ALL, "rd": ALL,
        "u1": ALL, "u2": ("long", "ndim", "text", "none"), "u3": ALL, "held": ALL}),
    "YZRigidBox.set_object": (
        lambda: (core.yz_rigid_box().set_object,
                 dict(A_S=Z((12, 6)), E_P=np.eye(6), E_F=Z((0, 6)), I_B=np.eye(6))),
        {"A_S": VALUES, "E_P": ("long", *VALUES), "E_F": ("long", "ndim", "text", "none"),
         "I_B": ALL}),
    "YZRigidBox.terms": (lambda: (_box().terms, dict(q=np.r_[Z(6), 1.0], v=Z(6), lam=Z(1))),
                         dict.fromkeys(("q", "v", "lam"), VALUES)),
    "YZRigidBox.sample": (_box_sample, {
        **dict.fromkeys(("q", "v", "lam", "J"), VALUES),
        **dict.fromkeys(("M", "h", "qd", "Jdqd", "r_Pd", "r_Pd_dot", "r_Pd_dd", "f_ISd",
                         "held"), ALL)}),
    "YZPinnedPlane.set_object": (lambda: (core.yz_pinned_plane().set_object,
                                          dict(A_S=Z((4, 1)), I_B=I3)),
                                 {"A_S": VALUES, "I_B": ALL}),
    "YZPinnedPlane.add_set": (_add_set, {
        "E_P": ALL, "P_off": ALL, "offsets": ALL, "normals": ALL, "levels": VALUES,
        "f_sel": ("short", "long", *VALUES)}),
    "YZPinnedPlane.terms": (_plane_terms, dict.fromkeys(("q", "v", "lam"), VALUES)),
    "YZPinnedPlane.sample": (_plane_sample, {
        **dict.fromkeys(("q", "v", "lam", "J"), VALUES),
        **dict.fromkeys(("M", "h", "qd", "Jdqd", "r_Pd", "r_Pd_dot", "r_Pd_dd", "f_ISd",
                         "held"), ALL)}),
    **{f"Spec: {f}": (lambda f=f: _setter(_spec(), f, Z(3)), {f: ALL}) for f in ("p1", "p2", "n")},
    "Spec: c": (lambda: _setter(_spec(), "c", Z(2)), {"c": ALL}),
    "Spec: R_off": (lambda: _setter(_spec(), "R_off", I3), {"R_off": ALL}),
    "Spec: D": (lambda: _setter(_spec(), "D", I3[:2]), {"D": VALUES}),
    "Spec: scale": (lambda: _setter(_spec(), "scale", Z(2)), {"scale": VALUES}),
    **{f"ForceSpec: {f}": (lambda f=f: _setter(_force_spec(), f, Z(3)), {f: ALL})
       for f in ("p1", "target", "F")},
    **{f"YZServo: {f}": (lambda f=f: _setter(core.yz_servo(), f, Z(2)), {f: VALUES})
       for f in ("K_V", "K_IF")},
}  # fmt: skip
CASES = [
    (where, arg, label)
    for where, (_, spoil) in TABLE.items()
    for arg, labels in spoil.items()
    for label in labels
]


@pytest.mark.parametrize("where,arg,label", CASES, ids=[":".join(c) for c in CASES])
def test_each_entry_point_refuses_a_wrong_array_naming_it(where, arg, label):
    factory, _ = TABLE[where]
    fn, good = factory()
    fn(**good)  # the valid call goes through
    fn, good = factory()  # a fresh object: the check comes before any state changes
    variants = _variants(np.asarray(good[arg]))
    if label not in variants:
        pytest.skip(f"{arg} is empty: no {label} version")
    bad, words = variants[label]
    with pytest.raises(ValueError) as exc:
        fn(**{**good, arg: bad})
    msg = str(exc.value)
    prefix = f"{where} " if ":" in where else f"{where}: {arg} "  # "Spec: p1" is a field
    assert msg.startswith(prefix) and words in msg, msg


def test_lists_and_other_dtypes_are_taken_as_arrays(panda):
    """What NumPy would take as an array of numbers the core takes too: lists, integers,
    float32, strided views."""
    s = core.build(ConstraintSet(panda, [PointOnPlane("panda_hand", (0, 0, 1), 0.5)]))
    q = np.zeros(panda.nq)
    a_ref = s.acceleration(q, Z(7), Z(7))
    for tau in ([0] * 7, np.zeros(7, np.int64), np.zeros(7, np.float32), Z(14)[::2]):
        assert np.allclose(s.acceleration(q.tolist(), Z(7), tau), a_ref, atol=1e-12)


# -- the simulate reproduction: a wrong-length tau on the Panda --------------------------


@pytest.mark.parametrize("n", [3, 9, 100])
def test_simulate_refuses_a_tau_of_the_wrong_length(panda, engine, n):
    cset = ConstraintSet(panda, [PointOnPlane("panda_hand", (0.0, 0.0, 1.0), 0.5)])
    with pytest.raises(ValueError, match=rf"tau has shape \({n},\), expected \(7,\)"):
        simulate(cset, np.zeros(7), Z(7), 0.02, SimOptions(dt=1e-2, engine=engine),
                 tau=np.ones(n))  # fmt: skip
    with pytest.raises(ValueError, match="tau"):
        simulate(cset, np.zeros(7), Z(7), 0.02, SimOptions(dt=1e-2, engine=engine),
                 tau=np.full(7, np.nan))  # fmt: skip


# -- relations between arguments and calls -----------------------------------------------


def test_run_refuses_steps_out_of_range_and_inconsistent_buffers():
    s, cset, q = _five_bar()
    with pytest.raises(ValueError, match="System.run: no record buffers"):
        s.run(0, 1, 1, 0.0)
    n_bufs = len(CORE_SERIES)
    s.set_buffers([Z((10, 3 if i in (6, 7, 8) else 4)) for i in range(n_bufs)], 10)  # m = 3
    s.set_force_buffers(Z(10), Z(10))
    s.set_state(q, Z(N))
    s.set_tau(Z(N))
    for args, words in (
        ((0, 5, 3, 0.0), "k1 = 5 is out of range"),
        ((4, 4, 3, 0.0), "k0 = 4 is out of range"),
        ((2, 1, 3, 0.0), "k1 = 1 is out of range"),
        ((0, 1, -1, 0.0), "n_steps = -1 is out of range"),
        ((0, 1, 3, float("nan")), "t0 = nan"),
    ):
        with pytest.raises(ValueError, match=words):
            s.run(*args)
    s.set_force_buffers(Z(2), Z(2))  # shorter than the record buffers
    with pytest.raises(ValueError, match="the force buffers hold 2 samples"):
        s.run(0, 1, 3, 0.0)
    s.set_force_buffers(Z(10), Z(10))
    o = s.options
    o.dt = 0.0
    s.options = o
    with pytest.raises(ValueError, match="options.dt"):
        s.run(0, 1, 1, 0.0)
    o.dt, o.variant = 1e-3, 7
    s.options = o
    with pytest.raises(ValueError, match="System.solve: options.variant = 7"):
        s.solve(q, Z(N), Z(N))
    # a row added after the buffers were sized: run refuses instead of writing past them
    o.variant = 0
    s.options = o
    into = core.Build(s, cset.mechanism)
    lock = into.spec("LockedJoint")
    lock.iq, lock.iv = 0, 0
    s.add(lock)
    with pytest.raises(ValueError, match="System.run: record buffer 6 holds 30 values, 40 needed"):
        s.run(0, 1, 3, 0.0)


def test_record_buffers_must_be_writable_float64_of_their_size():
    s, _, _ = _five_bar()
    with pytest.raises(ValueError, match=f"{len(CORE_SERIES)} record buffers"):
        s.set_buffers([Z(3)], 3)
    bufs = [Z((10, 4)) for _ in CORE_SERIES]
    for i, bad, words in (
        (1, Z((10, 4), np.float32), "buffers\\[1\\] has dtype .* expected float64"),
        (2, Z((4, 10)).T, "buffers\\[2\\] is not C-contiguous"),
        (8, Z((9, 3)), "record buffer 8 holds 27 values, 30 needed"),
    ):
        with pytest.raises(ValueError, match=words):
            s.set_buffers([bad if j == i else b for j, b in enumerate(bufs)], 10)
    with pytest.raises(ValueError, match="System.set_force_buffers: .*equal length"):
        s.set_force_buffers(Z(3), Z(4))
    with pytest.raises(ValueError, match="System.set_held: control_dt = 0"):
        s.set_held(0.0, 0.0)
    with pytest.raises(ValueError, match="System.set_held: next_control = nan"):
        s.set_held(float("nan"), 0.01)


def test_specs_are_checked_when_added():
    s, cset, _ = _five_bar()
    into = core.Build(s, cset.mechanism)
    plane = into.spec("PointOnPlane")
    plane.s1 = 7  # no such frame slot
    with pytest.raises(ValueError, match="spec.s1 = 7 is out of range"):
        s.add(plane)
    lock = into.spec("LockedJoint")
    lock.iq, lock.iv = 9, 0
    with pytest.raises(ValueError, match="spec.iq = 9 is out of range"):
        s.add(lock)
    coin = into.spec("PointsCoincide")
    coin.s1, coin.dim, coin.D = into.frame("left_tip"), 2, np.eye(3)
    with pytest.raises(ValueError, match="spec.D has shape \\(3, 3\\), expected \\(2, 3\\)"):
        s.add(coin)
    lock.iq, lock.iv, lock.scale = 0, 0, np.ones(3)
    with pytest.raises(ValueError, match="spec.scale has shape \\(3,\\), expected \\(1,\\)"):
        s.add(lock)
    spring = into.force_spec("JointSpring")
    spring.iq, spring.iv, spring.k = 0, 11, 1.0
    with pytest.raises(ValueError, match="add_force: spec.iv = 11 is out of range"):
        s.add_force(spring)
    spring.iv, spring.k = 0, float("nan")
    with pytest.raises(ValueError, match="spec.k, L0, k3, c = nan"):
        s.add_force(spring)
    with pytest.raises(ValueError, match="add_held_force: spec.s1 = -1"):
        s.add_held_force(into.force_spec("PointForce"))
    with pytest.raises(ValueError, match="System.add_frame: unknown frame 'nope'"):
        s.add_frame("nope")


def test_contours_are_checked_before_they_are_sampled():
    c = core._core.Contour()
    c.kind = core._core.ContourKind.Spline  # no breakpoints: once a read before the array
    with pytest.raises(ValueError, match="Contour.scalar: a spline contour has 0 breakpoints"):
        c.scalar(0.1)
    with pytest.raises(ValueError, match="Contour.foot_point: a spline contour"):
        c.foot_point(0.1, 0.2)
    c.kind, c.a = core._core.ContourKind.Ellipse, float("inf")
    s, _, _ = _five_bar()
    s.add_frame("left_tip")
    with pytest.raises(ValueError, match="System.add_contact: contour.a .* = inf"):
        s.add_contact(c, 0, 0, 0.1)


def test_yz_plants_refuse_terms_they_do_not_have():
    """Each of these once read or wrote past an array (a segmentation fault)."""
    fn, args = _box_sample()
    box = core.yz_rigid_box()
    box.R_hands, box.c_hands = np.hstack([I3, I3]), Z((3, 2))  # no set_object
    with pytest.raises(ValueError, match="YZRigidBox.terms: the object's terms are not set"):
        box.terms(np.r_[Z(6), 1.0], Z(6), Z(1))
    sv = core.yz_servo()  # no gains
    with pytest.raises(ValueError, match="YZRigidBox.sample: servo.K_V has shape \\(0,\\)"):
        fn(**{**args, "servo": sv})
    fn, args = _plane_sample()
    sv = _servo(3)
    sv.has_int_I = sv.has_prev = True  # a state no sample left
    with pytest.raises(ValueError, match="YZPinnedPlane.sample: servo.int_I has shape \\(0,\\)"):
        fn(**{**args, "servo": sv})
    with pytest.raises(ValueError, match="YZPinnedPlane.sample: J has shape \\(4, 4\\)"):
        fn(**{**args, "J": np.eye(4), "Jdqd": Z(4)})
    p = _plane()
    p.mode = 3
    with pytest.raises(ValueError, match="YZPinnedPlane.terms: mode 3 has no object-constraint"):
        p.terms(Z(3), Z(3), Z(1))
    with pytest.raises(ValueError, match="YZGrasp.set: E_P and E_F together"):
        core.yz_grasp().set(**{**GRASP, "E_P": Z((2, 3)), "E_P_rate": Z((2, 3))})
