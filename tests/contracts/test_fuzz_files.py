"""Property-based tests of what users feed in: model files, system files and API calls.

Property: every input ends in success or in the documented exception (``ModelError``,
``ParameterError``, ``InitialStateError``, ``SimulationError``: all ``ValueError``
subclasses, exit status 2 or 3 on the command line) with a non-empty message --
never another exception, a crash or a hang.

The number of examples comes from the hypothesis profile (tests/conftest.py):
``ci`` (default, fast) or ``thorough`` (``pytest --hypothesis-profile=thorough``).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from where import MODELS

from pfaff.constraints import ConstraintSet
from pfaff.errors import ParameterError
from pfaff.files.model import load_model
from pfaff.files.system import load_system
from pfaff.mechanism import ModelError
from pfaff.simulate import SimOptions, simulate
from pfaff.simulate.trajectory import InitialStateError, SimulationError

OWN = MODELS
DOCUMENTED = (ModelError, ParameterError, InitialStateError, SimulationError)
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------ MJCF files

NUM = st.one_of(
    st.floats(-2.0, 2.0, allow_nan=False),
    st.sampled_from([0.0, -1.0, 1e9, float("nan"), float("inf")]),
)


def _nums(n_min: int = 1, n_max: int = 4):
    def fmt(xs):
        return " ".join("nan" if math.isnan(x) else repr(x) for x in xs)

    return st.lists(NUM, min_size=n_min, max_size=n_max).map(fmt)


BROKEN = st.one_of(_nums(), st.sampled_from(["", "abc", "0 0 0", "1e400 0 0"]))


def _mostly(good: list[str]):
    """A valid value of ``good`` 9 times in 10, else a broken one (wrong count, NaN,
    inf, zero, text)."""
    return st.integers(0, 9).flatmap(lambda i: st.sampled_from(good) if i < 9 else BROKEN)


AXIS = _mostly(["0 1 0", "1 0 0", "0 0 1", "1 1 0", "0 -1 0"])
POS = _mostly(["0 0 0", "0.3 0 0", "0 0 0.2", "0.1 0.2 0"])
TIP = _mostly(["0.3 0 0", "0 0 -0.3", "0.2 0.1 0"])
SIZE = _mostly(["0.01", "0.02"])
MASS = _mostly(["1", "0.5", "0", "-1"])
DIAG = _mostly(["0.01 0.01 0.01", "0.01 0.02 0.03", "0 0 0"])
JOINT_TYPE = st.sampled_from(["hinge", "slide", "ball", "free", "hinge", "hinge", "screw", ""])


@st.composite
def mjcf_text(draw) -> str:
    """A chain of 1-3 bodies with random joints, geoms and inertials (attributes valid
    or broken), and 0-2 equalities naming existing or missing bodies and joints."""
    n = draw(st.integers(1, 3))
    names = [f"b{i}" for i in range(n)]
    body = ""
    for i in reversed(range(n)):
        jt = draw(JOINT_TYPE)
        joint = "" if jt == "" else f'<joint name="j{i}" type="{jt}" axis="{draw(AXIS)}"/>'
        if draw(st.booleans()):
            geom = f'<geom type="capsule" fromto="0 0 0 {draw(TIP)}" size="{draw(SIZE)}"/>'
        else:
            geom = f'<inertial pos="{draw(POS)}" mass="{draw(MASS)}" diaginertia="{draw(DIAG)}"/>'
        site = f'<site name="s{i}" pos="{draw(TIP)}"/>'
        body = f'<body name="{names[i]}" pos="{draw(POS)}">{joint}{geom}{site}{body}</body>'
    eqs = []
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["connect", "weld", "joint"]))
        a, b = draw(st.sampled_from(names + ["nope"])), draw(st.sampled_from(names + [""]))
        if kind == "joint":
            coef = draw(_mostly(["0 1 0 0 0", "0.1 -1", "0"]))
            eqs.append(f'<joint joint1="j{draw(st.integers(0, 3))}" polycoef="{coef}"/>')
        elif draw(st.booleans()):
            s1 = draw(st.sampled_from(["s0", "s1", "nope"]))
            s2 = draw(st.sampled_from(["s0", "s2"]))
            eqs.append(f'<{kind} site1="{s1}" site2="{s2}"/>')
        else:
            b2 = f' body2="{b}"' if b else ""
            eqs.append(f'<{kind} body1="{a}"{b2} anchor="{draw(TIP)}"/>')
    eq = f"<equality>{''.join(eqs)}</equality>" if eqs else ""
    return f"<mujoco><worldbody>{body}</worldbody>{eq}</mujoco>"


def _documented(exc: BaseException) -> None:
    assert isinstance(exc, DOCUMENTED), f"{type(exc).__name__}: {exc}"
    assert str(exc).strip(), f"{type(exc).__name__} without a message"


@SETTINGS
@given(mjcf_text())
def test_fuzzed_mjcf_loads_and_steps_or_is_refused_by_name(text):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "model.xml"
        p.write_text(text)
        try:
            system = load_model(p)
            cset = ConstraintSet(system.mechanism, system.constraints)
            simulate(cset, system.q, system.v, 3e-3, SimOptions(dt=1e-3, progress=False))
        except Exception as exc:  # noqa: BLE001 - the property is about which ones
            _documented(exc)


# ---------------------------------------------------------------- system files

TOML_SCALAR = st.one_of(
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(['"crank"', '"coupler_tip"', '"rocker_tip"', '"nope"', "true", '""']),
)


def _toml(x) -> str:
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        return ("inf" if x > 0 else "-inf") if math.isinf(x) else repr(x)
    if isinstance(x, list):
        return "[" + ", ".join(_toml(v) for v in x) + "]"
    return str(x)


VALUE = st.one_of(TOML_SCALAR, st.lists(TOML_SCALAR, max_size=4)).map(_toml)
CTYPES = ["points_coincide", "point_on_plane", "locked_joint", "frame_aligned", "weld", "x"]
CKEYS = ["frame", "frame1", "frame2", "point1", "directions", "normal", "joint", "value", "q"]


@st.composite
def system_text(draw) -> str:
    """The four-bar system file (tests/models/four_bar.toml) with random keys and values
    in its start, simulation, constraints, forces and controller tables."""
    start = draw(
        st.sampled_from(
            [
                "start.joints = { crank = -1.0, coupler = 0.6, rocker = -1.3 }",
                f"start.q = {draw(VALUE)}",
                f"start.v = {draw(VALUE)}",
                f"start.joints = {{ crank = {draw(VALUE)} }}",
                f"start.keyframe = {draw(VALUE)}",
            ]
        )
    )
    lines = ['model.file = "four_bar.urdf"', start, "", "[simulation]"]
    lines += [f"t_end = {draw(st.sampled_from(['0.003', draw(VALUE)]))}"]
    lines += [f"dt = {draw(st.sampled_from(['1e-3', draw(VALUE)]))}"]
    for _ in range(draw(st.integers(0, 2))):
        lines += ["", "[[constraints]]", f'type = "{draw(st.sampled_from(CTYPES))}"']
        for k in draw(st.lists(st.sampled_from(CKEYS), max_size=3, unique=True)):
            lines.append(f"{k} = {draw(VALUE)}")
    if draw(st.booleans()):
        lines += ["", "[controller]", f'type = "{draw(st.sampled_from(["pidc", "pd"]))}"']
        lines += [f"joints = {draw(VALUE)}", f"target = {draw(VALUE)}"]
        lines += [f"control_dt = {draw(VALUE)}"]
    return "\n".join(lines) + "\n"


@SETTINGS
@given(system_text())
def test_fuzzed_system_file_runs_or_is_refused_naming_the_key(text):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "four_bar.urdf").write_text((OWN / "four_bar.urdf").read_text())
        p = Path(d) / "sys.toml"
        p.write_text(text)
        try:
            load_system(p)
        except Exception as exc:  # noqa: BLE001
            _documented(exc)


# ----------------------------------------------------------------- API calls

SHAPES = st.integers(0, 9).flatmap(
    lambda i: st.just((4,)) if i < 6 else st.sampled_from([(), (0,), (3,), (4, 1), (9,), (100,)])
)  # the right size (nq = nv = 4) 6 times in 10
VALUES = st.sampled_from([0.0, 0.3, -1.0, float("nan"), float("inf")])


@pytest.fixture(scope="module")
def five_bar():
    """The five-bar of tests/models/five_bar.xml (nq = nv = 4, one loop) and its start:
    a system both engines run."""
    m = load_model(OWN / "five_bar.xml")
    return ConstraintSet(m.mechanism, m.constraints), m.q


def test_fuzzed_simulate_arguments(five_bar, engine):
    cset, q_start = five_bar

    @SETTINGS
    @given(
        q_shape=SHAPES, v_shape=SHAPES, tau_shape=st.one_of(st.none(), SHAPES),
        fill=VALUES, t_end=st.sampled_from([0.003, 0.003, 0.003, 0.0, -1.0, 1e-5, float("nan")]),
        dt=st.sampled_from([1e-3, 1e-3, 1e-3, 0.0, -1e-3, float("inf")]),
    )  # fmt: skip
    def check(q_shape, v_shape, tau_shape, fill, t_end, dt):
        q = q_start if q_shape == (4,) else np.full(q_shape, 0.0)
        v = np.full(v_shape, 0.1)
        tau = None if tau_shape is None else np.full(tau_shape, fill)
        try:
            opt = SimOptions(dt=dt, engine=engine, progress=False)
            traj = simulate(cset, q, v, t_end, opt, tau=tau)
            assert traj.engine == engine
        except Exception as exc:  # noqa: BLE001
            assert isinstance(exc, (*DOCUMENTED, ValueError)), f"{type(exc).__name__}: {exc}"
            assert str(exc).strip()

    check()
