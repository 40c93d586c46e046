"""What a careless user meets in the Python API and in model and system files: the
final time of ``simulate``, models that cannot move, constraints of a frame with
itself, tasks beyond the degrees of freedom, near-unit quaternions, force elements
without their parameters and the engine's fallback -- each a clear error or warning.
"""

from __future__ import annotations

import numpy as np
import pytest
from where import MODELS

from pfaff.cli import main
from pfaff.constraints import ConstraintSet, FunctionConstraint, PointsCoincide
from pfaff.errors import ParameterError
from pfaff.files.model import load_model
from pfaff.files.system import load_system
from pfaff.mechanism import ModelError
from pfaff.mechanism.base import unit_quaternion
from pfaff.scenarios import slider_crank
from pfaff.simulate import PointSpring, SimOptions, choose_engine, engine_choice, simulate
from pfaff.simulate.forces import ForceSet, element_types

OWN = MODELS


@pytest.fixture(scope="module")
def five_bar():
    m = load_model(OWN / "five_bar.xml", contact=False)
    return ConstraintSet(m.mechanism, m.constraints), m.q


# ---------------------------------------------------------- t_end is the final time


def test_t_end_is_the_final_time_and_stepping_in_pieces_matches_one_run(five_bar, engine):
    cset, q0 = five_bar
    opt = SimOptions(dt=1e-3, engine=engine, progress=False)
    tau = np.array([0.3, 0.0, -0.2, 0.0])
    one = simulate(cset, q0, np.zeros(4), 1.02, opt, tau=tau, t0=1.0)
    a = one.arrays()
    assert one.steps == 20 and abs(a["t"][0] - 1.0) < 1e-12 and abs(a["t"][-1] - 1.02) < 1e-12
    q, v, t = q0, np.zeros(4), 1.0
    for _ in range(20):  # the stepping loop a user writes: t0 = t, t_end = t + dt
        piece = simulate(cset, q, v, t + 1e-3, opt, tau=tau, t0=t)
        b = piece.arrays()
        q, v, t = b["q"][-1], b["v"][-1], float(b["t"][-1])
    assert abs(t - 1.02) < 1e-12
    assert np.abs(q - a["q"][-1]).max() < 1e-10  # rad
    assert np.abs(v - a["v"][-1]).max() < 1e-8  # rad/s


@pytest.mark.parametrize(
    "t0, t_end, words",
    [
        (1.0, 0.5, "t_end is the final time and must be > t0"),
        (1.0, 1.0, "must be > t0"),
        (0.0, 4e-4, "shorter than one step of dt = 0.001"),
        (0.0, float("nan"), "must be finite"),
        (float("inf"), 1.0, "must be finite"),
    ],
)
def test_a_run_that_ends_before_it_starts_or_takes_no_step_is_refused(five_bar, t0, t_end, words):
    cset, q0 = five_bar
    with pytest.raises(ValueError, match="t_end") as exc:
        simulate(cset, q0, np.zeros(4), t_end, SimOptions(dt=1e-3), t0=t0)
    assert words in str(exc.value)


# ------------------------------------------------------------------- model files

NO_JOINT = '<mujoco><worldbody><body name="b"><geom type="sphere" size="0.1"/></body></worldbody>'
SELF_CONNECT = """<mujoco><worldbody><body name="b"><joint type="hinge" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.01"/></body></worldbody>
<equality><connect name="loop" body1="b" body2="b" anchor="0.3 0 0"/></equality></mujoco>"""


@pytest.mark.parametrize(
    "text, words",
    [
        (NO_JOINT + "</mujoco>", "has no joints (nv = 0)"),
        (SELF_CONNECT, "element 'b' is repeated in equality constraint"),  # MuJoCo's words
    ],
)
def test_degenerate_models_are_refused_by_name(tmp_path, capsys, text, words):
    p = tmp_path / "m.xml"
    p.write_text(text)
    with pytest.raises(ModelError) as exc:
        load_model(p, contact=False)
    assert words in str(exc.value)
    assert main(["run", str(p), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_a_constraint_of_a_frame_with_itself_is_refused():
    with pytest.raises(ModelError, match="same frame 'tip'"):
        PointsCoincide("tip", "tip")


FOUR_BAR = """model.file = "four_bar.urdf"
start.joints = { crank = -1.0, coupler = 0.6, rocker = -1.3 }
[[constraints]]
type = "points_coincide"
frame1 = "coupler_tip"
frame2 = "rocker_tip"
directions = [[1, 0, 0], [0, 0, 1]]
"""


def _system(tmp_path, text: str):
    (tmp_path / "four_bar.urdf").write_text((OWN / "four_bar.urdf").read_text())
    (tmp_path / "leg.xml").write_text((OWN / "leg.xml").read_text())
    p = tmp_path / "sys.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "extra, words",
    [
        (
            '[controller]\ntype = "pidc"\njoints = ["crank", "rocker"]\ntarget = [-0.8, -1.2]\n',
            ["controller.joints", "2 task coordinates", "1 degree(s) of freedom"],
        ),
        (
            '[controller]\ntype = "computed_torque"\njoints = ["crank", "crank"]\n'
            "target = [-0.8, -0.8]\n",
            ["controller.joints", "2 task coordinates"],
        ),
        (
            '[[constraints]]\ntype = "points_coincide"\nframe1 = "rocker_tip"\n'
            'frame2 = "rocker_tip"\n',
            ["constraints[1]", "same frame 'rocker_tip'"],
        ),
    ],
)
def test_system_files_that_cannot_work_are_refused_naming_the_key(tmp_path, extra, words):
    with pytest.raises(ParameterError) as exc:
        load_system(_system(tmp_path, FOUR_BAR + extra))
    for w in words:
        assert w in str(exc.value), str(exc.value)


def test_a_joint_task_within_the_dof_is_accepted(tmp_path):
    extra = '[controller]\ntype = "pidc"\njoints = ["crank"]\ntarget = [-0.8]\n'
    assert load_system(_system(tmp_path, FOUR_BAR + extra)).controller is not None


LEG_Q = "0, 0, 1, 0, 0, 0, {w}, 0.1, -0.2, 0.1"


def test_a_quaternion_printed_with_six_digits_is_normalised_and_said(tmp_path):
    text = f'model.file = "leg.xml"\nstart.q = [{LEG_Q.format(w="1.000001")}]\n'
    sf = load_system(_system(tmp_path, text))
    assert abs(np.linalg.norm(sf.system.q[3:7]) - 1.0) < 1e-12
    assert any("quaternions were normalised" in w for w in sf.system.warnings)


def test_a_quaternion_far_from_unit_is_refused(tmp_path):
    text = f'model.file = "leg.xml"\nstart.q = [{LEG_Q.format(w="1.001")}]\n'
    with pytest.raises(ParameterError, match="start.q") as exc:
        load_system(_system(tmp_path, text))
    assert "within 1e-05 of 1" in str(exc.value)


def test_mjcf_keyframe_quaternions_are_normalised_as_mujoco_does_and_said():
    m = load_model(
        OWN / "leg.xml", contact=False
    )  # its keyframe's quaternion has 4 printed digits
    assert abs(np.linalg.norm(m.q[3:7]) - 1.0) < 1e-12
    assert any("quaternion of norm" in w and "normalised" in w for w in m.warnings)


@pytest.mark.parametrize("off", [-3e-10, 8.7e-10, 4e-7, -9e-7])
def test_a_quaternion_off_by_its_printed_digits_is_normalised_without_a_warning(off):
    """A keyframe written with 6 digits (MuJoCo's humanoid's) is off 1 by ~1e-9: no
    line; 4 digits' worth (1e-4) is said, with the deviation."""
    x = np.array([0.6, 0.0, 0.8, 0.0]) * (1.0 + off)
    said: list[str] = []
    assert np.allclose(unit_quaternion(x, "key", said), [0.6, 0.0, 0.8, 0.0], atol=1e-15)
    assert said == []
    unit_quaternion(x * (1.0 + 1e-4), "key", said, tol=np.inf)  # a keyframe's tol
    assert len(said) == 1 and "(off 1 by " in said[0], said


# ---------------------------------------------------------- force elements, engine


def test_a_point_spring_needs_a_stiffness():
    with pytest.raises(ModelError, match="give its stiffness"):
        PointSpring("tip")
    assert PointSpring("tip", law=lambda s: (s, 0.5 * s * s)).law is not None


def test_the_force_element_error_lists_every_element_type(five_bar):
    cset, _ = five_bar
    with pytest.raises(ModelError) as exc:
        ForceSet(cset.mechanism, ["not an element"])
    names = [c.__name__ for c in element_types()]
    assert len(names) >= 10 and all(n in str(exc.value) for n in names)


def test_engine_auto_says_why_it_falls_back_to_numpy(five_bar):
    """A mechanism given in closed form whose configuration is no vector space (its own
    integrate) is what the core cannot run: auto falls back, naming it; a spring with a
    Python law, a constraint written in Python and a closed form on a vector space run on
    the core (called from its loop)."""
    cset, q0 = five_bar
    law = PointSpring("left_tip", law=lambda s: (2.0 * s, s * s), name="python law spring")
    opt = SimOptions(dt=1e-3, progress=False)
    assert choose_engine(cset, opt) == "core"
    assert engine_choice(cset, opt, (law,)) == ("core", None)
    user = ConstraintSet(
        cset.mechanism,
        [*cset.constraints, FunctionConstraint(1, phi=lambda q: q[:1] - q0[:1], name="probe")],
    )
    assert engine_choice(user, opt) == ("core", None)
    mech, closed = slider_crank.build(1.0, 0.5, 9.81, "closed-form")
    assert engine_choice(closed, opt) == ("core", None)

    class Wrapped(type(mech)):
        def integrate(self, q, dv):  # angles kept in (-pi, pi]: not q + dv
            return np.angle(np.exp(1j * (q + dv)))

    wrapped = ConstraintSet(Wrapped(1.0, 0.5, 9.81), closed.constraints)
    engine, why = engine_choice(wrapped, opt)
    assert engine == "numpy" and "overrides integrate()" in why
    with pytest.warns(UserWarning, match="overrides integrate"):
        traj = simulate(wrapped, np.array([0.3, -0.6]), np.zeros(2), 3e-3, opt)
    assert traj.engine == "numpy"
    assert any("NumPy engine" in w and "integrate" in w for w in traj.warnings)
    # asked for by name, nothing falls back: no warning
    traj = simulate(cset, q0, np.zeros(4), 3e-3, SimOptions(dt=1e-3, engine="numpy"))
    assert not any("NumPy engine" in w for w in traj.warnings)


@pytest.mark.parametrize("n", [1, 3, 9, 100])
def test_a_wrong_length_torque_is_refused_naming_tau(five_bar, engine, n):
    """A torque of the wrong length once corrupted the core's memory: both engines
    refuse it before any step, naming tau, its shape and nv."""
    cset, q0 = five_bar
    opt = SimOptions(dt=1e-3, engine=engine, progress=False)
    with pytest.raises(ValueError, match=rf"tau has shape \({n},\), expected \(4,\)"):
        simulate(cset, q0, np.zeros(4), 0.01, opt, tau=np.ones(n))
    with pytest.raises(ValueError, match="tau must be finite"):
        simulate(cset, q0, np.zeros(4), 0.01, opt, tau=np.array([0.0, np.nan, 0.0, 0.0]))


def test_a_start_with_a_non_unit_quaternion_is_refused_by_every_entry_point():
    """A free joint's quaternion of norm 2 (e.g. a MuJoCo qpos scaled by mistake) is a
    rotation Pinocchio cannot read: reset, forward_dynamics, rollout and simulate name
    the joint instead of simulating a body that shears."""
    from where import REPO

    import pfaff

    with pytest.warns(UserWarning):  # the quadruped's own notes (contact not modelled)
        s = pfaff.load(REPO / "examples" / "quadruped.xml", contact=False)
    free = next(j for j in s.mechanism.model.joints[1:] if j.nq == 7)
    q = s.q0.copy()
    q[free.idx_q + 3 : free.idx_q + 7] *= 2.0
    sim = pfaff.Simulator(s, dt=1e-3)
    calls = {
        "reset": lambda: sim.reset(q=q),
        "forward_dynamics": lambda: s.forward_dynamics(q, s.v0, np.zeros(s.nv)),
        "rollout": lambda: pfaff.rollout(s, q, None, np.zeros((1, 2, s.nv)), 1e-3),
        "simulate": lambda: simulate(s.cset, q, s.v0, 1e-3, SimOptions(dt=1e-3)),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match="quaternion has norm 2") as exc:
            call()
        assert "(x, y, z, w)" in str(exc.value), name
    sim.reset(q=s.q0)  # the unit start still runs
    sim.step()
