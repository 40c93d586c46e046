"""Every array that crosses into the compiled core is checked at the boundary
(design.md Sec. 1): a wrong size or a NaN/inf is a ValueError naming the entry point and
the argument, never undefined behaviour. A wrong-length torque once aborted the
interpreter ("double free or corruption"); these calls would crash it, not fail.

The table drives each bound entry point with its valid arguments, then with one
argument replaced by a wrong one at a time (too short, too long, 2-D, NaN, inf).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from where import MODELS

from pfaff import core
from pfaff.constraints import ConstraintSet
from pfaff.files.model import load_model

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")
OWN = MODELS
N = 4  # the five-bar: nq = nv = 4, 3 rows


@pytest.fixture(scope="module")
def five_bar():
    m = load_model(OWN / "five_bar.xml")
    return ConstraintSet(m.mechanism, m.constraints), m.q


def _bad_vectors(n: int) -> list[tuple[str, np.ndarray, str]]:
    """(label, bad value, words of the message) for an argument of size n."""
    nan, inf = np.zeros(n), np.zeros(n)
    nan[n // 2], inf[0] = np.nan, np.inf
    return [
        ("short", np.zeros(n - 1), f"has shape ({n - 1},), expected ({n},)"),
        ("long", np.zeros(n + 5), f"has shape ({n + 5},), expected ({n},)"),
        ("nan", nan, "non-finite entry nan"),
        ("inf", inf, "non-finite entry inf"),
    ]


def _system_calls(s, q):
    v, tau = np.zeros(N), np.zeros(N)
    return {
        "System.evaluate": (s.evaluate, [("q", q), ("v", v)]),
        "System.solve": (s.solve, [("q", q), ("v", v), ("tau", tau)]),
        "System.acceleration": (s.acceleration, [("q", q), ("v", v), ("tau", tau)]),
        "System.set_state": (s.set_state, [("q", q), ("v", v)]),
        "System.set_tau": (s.set_tau, [("tau", tau)]),
        "System.force_terms": (s.force_terms, [("q", q), ("v", v)]),
    }


CASES = [
    (where, arg, label)
    for where, args in (
        ("System.evaluate", ("q", "v")),
        ("System.solve", ("q", "v", "tau")),
        ("System.acceleration", ("q", "v", "tau")),
        ("System.set_state", ("q", "v")),
        ("System.set_tau", ("tau",)),
        ("System.force_terms", ("q", "v")),
    )
    for arg in args
    for label in ("short", "long", "nan", "inf")
]


@pytest.mark.parametrize("where,arg,label", CASES)
def test_system_entry_points_refuse_a_wrong_array(five_bar, where, arg, label):
    cset, q = five_bar
    s = core.build(cset)
    fn, args = _system_calls(s, q)[where]
    fn(*(x for _, x in args))  # the valid call goes through
    bad, words = next((b, w) for lab, b, w in _bad_vectors(N) if lab == label)
    call = [bad if name == arg else x for name, x in args]
    with pytest.raises(ValueError) as exc:
        fn(*call)
    msg = str(exc.value)
    assert msg.startswith(f"{where}: {arg} ") and words in msg, msg


def test_run_refuses_steps_out_of_range_and_a_missing_state(five_bar):
    cset, q = five_bar
    s = core.build(cset)
    with pytest.raises(ValueError, match="System.run: no record buffers"):
        s.run(0, 1, 1, 0.0)
    s.set_buffers([np.zeros((10, 4)) for _ in range(17)], 10)
    s.set_force_buffers(np.zeros(10), np.zeros(10))
    s.set_state(q, np.zeros(N))
    s.set_tau(np.zeros(N))
    for args, words in (
        ((0, 5, 3, 0.0), "k1 = 5 is out of range"),
        ((4, 4, 3, 0.0), "k0 = 4 is out of range"),
        ((2, 1, 3, 0.0), "k1 = 1 is out of range"),
        ((0, 1, -1, 0.0), "n_steps = -1 is out of range"),
        ((0, 1, 3, float("nan")), "t0 = nan"),
    ):
        with pytest.raises(ValueError, match=words):
            s.run(*args)
    o = s.options
    o.dt = 0.0
    s.options = o
    with pytest.raises(ValueError, match="options.dt"):
        s.run(0, 1, 1, 0.0)


def test_specs_are_checked_when_added(five_bar):
    cset, _ = five_bar
    s = core.build(cset)
    into = core.Build(s, cset.mechanism)
    plane = into.spec("PointOnPlane")
    plane.s1 = 7  # no such frame slot
    with pytest.raises(ValueError, match="spec.s1 = 7 is out of range"):
        s.add(plane)
    plane.s1 = -1  # a point on a plane needs its frame
    with pytest.raises(ValueError, match="spec.s1 = -1"):
        s.add(plane)
    lock = into.spec("LockedJoint")
    lock.iq, lock.iv = 9, 0
    with pytest.raises(ValueError, match="spec.iq = 9 is out of range"):
        s.add(lock)
    coin = into.spec("PointsCoincide")
    coin.s1, coin.dim = into.frame("left_tip"), 2
    coin.D = np.eye(3)
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
    point = into.force_spec("PointForce")
    with pytest.raises(ValueError, match="add_held_force: spec.s1 = -1"):
        s.add_held_force(point)


def test_record_buffers_too_small_are_refused(five_bar):
    cset, _ = five_bar
    s = core.build(cset)
    with pytest.raises(ValueError, match="17 record buffers"):
        s.set_buffers([np.zeros(3)], 3)


def test_control_kernel_refuses_inconsistent_terms():
    k = core.control_kernel()
    n = 3
    good = dict(M=np.eye(n), h=np.zeros(n), V1=np.zeros((n, 1)), Cv=np.zeros(n), N=np.eye(n),
                J=np.eye(n), Jdv=np.zeros(n), rhs_ref=np.zeros(n), rel_tol=1e-9,
                u_F=np.zeros(0))  # fmt: skip
    k(**good)
    for arg, bad, words in (
        ("h", np.zeros(n + 2), "h has shape (5,), expected (3,)"),
        ("M", np.zeros((n, n + 1)), "M has shape (3, 4), expected (3, 3)"),
        ("Jdv", np.zeros(1), "Jdv has shape (1,), expected (3,)"),
        ("J", np.zeros((2, n + 1)), "J has shape (2, 4)"),
        ("u_F", np.zeros(2), "u_F has shape (2,), expected (3,)"),
        ("Cv", np.full(n, np.nan), "Cv has a non-finite entry"),
    ):
        with pytest.raises(ValueError) as exc:
            k(**{**good, arg: bad})
        assert str(exc.value).startswith("ControlKernel.__call__:") and words in str(exc.value)


def test_yz_kernel_and_grasp_refuse_inconsistent_terms():
    g = core.yz_grasp()
    I3 = np.eye(3)
    terms = dict(S=I3, W=I3, S_rate=I3 * 0, W_rate=I3 * 0, A_S=np.zeros((3, 0)), T=I3,
                 T_rate=I3 * 0, E_P=I3, E_F=np.zeros((0, 3)), E_P_rate=I3 * 0,
                 E_F_rate=np.zeros((0, 3)), I_B=I3)  # fmt: skip
    g.set(**terms)
    with pytest.raises(ValueError, match="YZGrasp.set: S_rate has shape \\(2, 3\\)"):
        g.set(**{**terms, "S_rate": np.zeros((2, 3))})
    with pytest.raises(ValueError, match="YZGrasp.set: E_P and E_F together"):
        g.set(**{**terms, "E_P": np.zeros((2, 3)), "E_P_rate": np.zeros((2, 3))})
    kern = core.yz_kernel()
    n = 3
    args = dict(M=np.eye(n), h=np.zeros(n), qd=np.zeros(n), J=np.eye(3), Jdqd=np.zeros(3),
                grasp=g, Q_r=np.zeros(3), rd=np.zeros(3), u1=np.zeros(3), u2=np.zeros(0),
                u3=np.zeros(0), held=np.zeros(n), trapezoid=False)  # fmt: skip
    kern(**args)
    for arg, bad, words in (
        ("h", np.zeros(9), "h has shape (9,), expected (3,)"),
        ("Q_r", np.zeros(2), "Q_r has shape (2,), expected (3,)"),
        ("u1", np.zeros(5), "u1 has shape (5,), expected (3,)"),
        ("held", np.full(n, np.inf), "held has a non-finite entry inf"),
    ):
        with pytest.raises(ValueError) as exc:
            kern(**{**args, arg: bad})
        assert str(exc.value).startswith("YZKernel.__call__:") and words in str(exc.value)


@settings(max_examples=200, deadline=None)
@given(
    which=st.sampled_from(["evaluate", "solve", "acceleration", "set_state", "force_terms"]),
    sizes=st.lists(st.integers(0, 12), min_size=3, max_size=3),
    fill=st.sampled_from([0.0, 0.5, float("nan"), float("inf"), -1e300]),
)
def test_fuzzed_arrays_into_the_core_end_in_a_result_or_value_error(which, sizes, fill):
    """Arrays of random sizes and values: a result or a ValueError, never a crash."""
    m = load_model(OWN / "five_bar.xml")
    s = core.build(ConstraintSet(m.mechanism, m.constraints))
    arrays = [np.full(k, fill) for k in sizes]
    fn = getattr(s, which)
    n_args = {"evaluate": 2, "set_state": 2, "force_terms": 2}.get(which, 3)
    try:
        fn(*arrays[:n_args])
    except ValueError as exc:
        assert str(exc).startswith(f"System.{which}:")
