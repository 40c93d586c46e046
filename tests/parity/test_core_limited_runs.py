"""Whole limited runs in one call into C++ (simulate_limited on the core,
src/cpp/sim/limits.cpp) against the Python phase loop (pfaff.simulate.limits.phase_loop, the
reference): the closed-chain biped falling onto its stops for 2 s, the limited pendulum
file, the chattering ball, on both grids, with a record stride and a t_end off the step
grid; a failed core run keeps what it has and is not run again."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pfaff
from pfaff import core
from pfaff.simulate import SimOptions, limits
from pfaff.simulate.limits import JointLimit, phase_loop, simulate_limited
from pfaff.simulate.limits_core import LimitedRunError
from pfaff.simulate.options import use_engine
from pfaff.simulate.policy import StatusCode
from tests.where import MODELS

pytestmark = pytest.mark.skipif(not core.available(), reason="the compiled core is not built")

BIPED = MODELS / "closed_chain_biped.xml"
PENDULUM = MODELS / "limited_pendulum.xml"
BALL = MODELS / "ball_on_rail.xml"


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an engine note of the file, not tested here
        return pfaff.load(path)


def _both(system, t_end, dt=1e-3, lims=None, **kw):
    """``(core run, reference run)``: simulate_limited in one call into the core, and the
    Python phase loop over the core's steps, from the system's start."""
    opt = SimOptions(dt=dt, progress=False, record_every=kw.pop("record_every", 1))
    lims = system.limits if lims is None else lims
    args = (system.cset, system.q0, system.v0, t_end, lims, opt)
    forces = tuple(system.forces)  # the file's springs and dampers
    with use_engine("core"):
        got = simulate_limited(*args, forces=forces, **kw)
        rest = max(1e-9, opt.position_tol / opt.dt)
        ref = phase_loop(
            *args, forces, 0.0, kw.get("tau"), 1e-15, limits.RELEASE_TOL, rest, None,
            kw.get("grid", "event"), limits.MAX_EVENTS_PER_STEP,
        )  # fmt: skip
    assert got.trajectory.engine == "core"
    return got, ref


def _reference(cset, q0, v0, t_end, lims, opt, controller=None):
    """The phase loop itself (its defaults), on the engine in use."""
    rest = max(1e-9, opt.position_tol / opt.dt)
    return phase_loop(
        cset, q0, v0, t_end, lims, opt, (), 0.0, None, 1e-15, limits.RELEASE_TOL, rest,
        None, "event", limits.MAX_EVENTS_PER_STEP, controller=controller,
    )  # fmt: skip


def _gaps(got, ref) -> dict[str, float]:
    """The worst gaps between two runs: inf where the events or samples do not pair.
    Events at one instant pair as a set: two stops a symmetric body reaches together
    (the biped's ankles) are located in an order round-off decides."""

    def instant(e):
        return (round(e.t, 9), e.kind, e.side, str(e.joint))

    ge, re = sorted(got.events, key=instant), sorted(ref.events, key=instant)
    a = [(e.kind, e.side, str(e.joint)) for e in ge]
    b = [(e.kind, e.side, str(e.joint)) for e in re]
    x, y = got.trajectory.arrays(), ref.trajectory.arrays()
    if a != b or len(x["t"]) != len(y["t"]):
        return dict.fromkeys(("events", "t", "q", "v", "lambda", "energy"), np.inf)
    out = {"events": max((abs(e.t - f.t) for e, f in zip(ge, re)), default=0)}
    for key in ("t", "q", "v", "lambda", "energy", "work", "correction_energy"):
        out[key] = float(np.abs(x[key] - y[key]).max())
    return out


def _assert_close(gaps, t_tol=1e-12, tol=1e-10):
    assert gaps["events"] <= t_tol and gaps["t"] <= t_tol, gaps
    keys = ("q", "v", "lambda", "energy", "work", "correction_energy")
    assert max(gaps[k] for k in keys) <= tol, gaps


@pytest.fixture
def no_phase_loop(monkeypatch):
    """The Python phase loop made unreachable from simulate_limited: a run that fell
    back to it (or re-ran a failure in it) fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("simulate_limited ran the Python phase loop")

    monkeypatch.setattr(limits, "phase_loop", refuse)


@pytest.mark.parametrize("grid", ["event", "fixed"])
def test_the_biped_falling_onto_its_stops_for_two_seconds_is_the_phase_loop(grid):
    """2 s of the closed-chain biped falling onto its knee stops (impacts, held stops,
    releases): the same events, their times to 1e-12 s, q, v, lambda, energy to 1e-10."""
    got, ref = _both(_load(BIPED), 2.0, grid=grid)
    impacts = [e for e in got.events if e.kind == "impact"]
    assert {"left_knee", "right_knee"} <= {e.joint for e in impacts}
    _assert_close(_gaps(got, ref))
    assert got.held == ref.held


@pytest.mark.parametrize(
    ("grid", "every", "t_end"),
    [("event", 1, 4.0), ("event", 7, 4.0), ("fixed", 7, 4.0), ("event", 1, 3.7654321)],
)
def test_the_limited_pendulum_file_is_the_phase_loop(grid, every, t_end):
    """The file's stop at -0.5 rad made elastic (e = 0.6, rebounds, then held): the
    same samples and events on both grids, with a record stride, and to a t_end off the
    step grid (its last step a sliver)."""
    s = _load(PENDULUM)
    lims = [JointLimit("hinge", -0.5, 2.0, 0.6)]
    got, ref = _both(s, t_end, lims=lims, grid=grid, record_every=every)
    assert len(got.events) >= 2
    _assert_close(_gaps(got, ref))
    assert abs(got.trajectory.arrays()["t"][-1] - t_end) <= 1e-12


def test_the_chattering_ball_ends_held_as_the_phase_loop():
    """A ball on a rail bouncing on its floor stop (e = 0.7): the guard ends the Zeno
    chatter in the core as in the reference, event for event."""
    got, ref = _both(_load(BALL), 2.0, lims=[JointLimit("z", 0.0, 1.0, 0.7)])
    assert 15 <= len(got.events) <= 200 and got.held == {0: "lower"}
    _assert_close(_gaps(got, ref))


def test_a_torque_and_a_record_stride_on_the_biped_are_the_phase_loop():
    """A constant torque on the biped with one sample in 10 recorded: a release is read
    from the recorded samples alone, as the reference reads its phases' records."""
    s = _load(BIPED)
    tau = 0.3 * np.sin(np.arange(s.nv))
    got, ref = _both(s, 1.0, tau=tau, record_every=10)
    assert got.events
    _assert_close(_gaps(got, ref))
    # the torque's work is counted over every step, recorded or not: the stride's run
    # ends with the work of the run that records every step
    with use_engine("core"):
        every = simulate_limited(
            s.cset, s.q0, s.v0, 1.0, s.limits, SimOptions(dt=1e-3, progress=False),
            forces=tuple(s.forces), tau=tau,
        )  # fmt: skip
    work = got.trajectory.arrays()["work"][-1]
    assert abs(work - every.trajectory.arrays()["work"][-1]) <= 1e-9 and abs(work) > 1.0


class Push:
    """A sampled law that presses the pendulum onto its stop and lifts it off again (a
    held stop, then its release), with a recorded signal."""

    frames: tuple = ()
    needs_sensors = False

    def __init__(self) -> None:
        self.signals: dict = {}

    def __call__(self, t, rec):
        u = -0.5 * rec.snap.v[0] - 4.0 + 6.0 * np.sin(3.0 * t)
        self.signals = {"u": u}
        return np.array([u])


@pytest.mark.parametrize("control_dt", [1e-3, 5e-3])
def test_a_controlled_limited_pendulum_is_the_phase_loop(control_dt, no_phase_loop):
    """The controller sampled from the core (at its clock, again at each event, the
    torque held over a located step): the same events, samples and recorded signal
    as the phase loop, which calls it between its phases."""
    s = _load(PENDULUM)
    lims = [JointLimit("hinge", -0.5, 2.0, 0.2)]
    opt = SimOptions(dt=1e-3, progress=False, control_dt=control_dt)
    args = (s.cset, s.q0, s.v0, 3.0, lims, opt)
    with use_engine("core"):
        got = simulate_limited(*args, controller=Push())
        ref = _reference(*args, controller=Push())
    assert got.trajectory.engine == "core"
    kinds = {e.kind for e in got.events}
    assert kinds == {"impact", "release"}, got.events
    _assert_close(_gaps(got, ref))
    u, u_ref = got.trajectory.signals["u"], ref.trajectory.signals["u"]
    assert len(u) == len(got.trajectory) and np.abs(np.subtract(u, u_ref)).max() <= 1e-10


@pytest.mark.parametrize("every", [5, 13])
def test_the_record_stride_moves_no_event(every):
    """A held stop released by the law: the release is read at every step, recorded or
    not, so a record stride keeps every event time and the final state of the run that
    records every step (to round-off), on the core and in the phase loop alike."""
    s = _load(PENDULUM)
    lims = [JointLimit("hinge", -0.5, 2.0, 0.2)]
    runs = {}
    for stride in (1, every):
        opt = SimOptions(dt=1e-3, progress=False, record_every=stride)
        args = (s.cset, s.q0, s.v0, 3.0, lims, opt)
        with use_engine("core"):
            runs[stride] = simulate_limited(*args, controller=Push())
            ref = _reference(*args, controller=Push())
        _assert_close(_gaps(runs[stride], ref))
    one, thin = runs[1], runs[every]
    assert [e.kind for e in one.events] == [e.kind for e in thin.events]
    assert "release" in {e.kind for e in one.events}
    assert max(abs(e.t - f.t) for e, f in zip(one.events, thin.events)) <= 1e-12
    x, y = one.trajectory.arrays(), thin.trajectory.arrays()
    for key in ("t", "q", "v", "work"):
        assert np.abs(x[key][-1] - y[key][-1]).max() <= 1e-10, key
    assert len(y["t"]) < len(x["t"])


def test_a_controller_error_ends_the_core_run_and_is_raised(no_phase_loop):
    """A controller that returns the wrong shape: its ValueError, raised from the core
    run as the phase loop raises it."""
    s = _load(PENDULUM)
    opt = SimOptions(dt=1e-3, progress=False)
    with pytest.raises(ValueError, match="controller returned a torque of shape"):
        simulate_limited(s.cset, s.q0, s.v0, 0.5, s.limits, opt,
                         controller=lambda t, snap: np.zeros(3))  # fmt: skip


def test_a_moved_stop_is_caught_by_the_comparison():
    """The core run with its stop 1 degree off the reference's: the comparison fails."""
    s = _load(PENDULUM)
    got, _ = _both(s, 1.0, lims=[JointLimit("hinge", -0.5 + np.radians(1.0), 2.0, 0.6)])
    _, ref = _both(s, 1.0, lims=[JointLimit("hinge", -0.5, 2.0, 0.6)])
    gaps = _gaps(got, ref)
    assert gaps["events"] > 1e-6 and gaps["q"] > 1e-6


def test_simulate_limited_on_auto_and_the_run_command_are_one_core_call(no_phase_loop):
    """engine="auto" (the default) runs a limited system on the core without the Python
    phase loop; so does ``pfaff run`` of the biped file (its scenario)."""
    s = _load(PENDULUM)
    run = simulate_limited(s.cset, s.q0, s.v0, 0.6, s.limits, SimOptions(dt=1e-3))
    assert run.trajectory.engine == "core" and run.events
    from pfaff.scenarios.model_file import run_system

    sys_ = pfaff.files.model.load_model(BIPED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_system(sys_, 0.3, SimOptions(dt=1e-3, progress=False), "biped")
    assert res.trajectory.engine == "core" and res.metrics["limit_events"] >= 2


def test_a_failed_core_run_keeps_its_record_and_events_and_is_not_rerun(no_phase_loop):
    """A law that turns to 1e308 N m after 0.6 s, past the impact on the plastic stop at
    0.51 s and the release gravity makes: the acceleration overflows. The
    LimitedRunError names the status and holds the two events and the samples up to the
    failure; the phase loop is not run. A NaN from the law itself is the law's error,
    raised as such."""
    s = _load(PENDULUM)
    lims = [JointLimit("hinge", -0.5, 2.0, 0.0)]
    opt = SimOptions(dt=1e-3, progress=False)

    def law(t, snap):
        return np.array([1e308 if t > 0.6 else 0.0])

    with pytest.raises(LimitedRunError, match="NON_FINITE") as info:
        simulate_limited(s.cset, s.q0, s.v0, 1.0, lims, opt, controller=law)
    err = info.value
    assert err.status.code == StatusCode.NON_FINITE and 0.6 < err.status.t <= 0.601
    assert [e.kind for e in err.events] == ["impact", "release"] and err.held == {}
    t = err.trajectory.arrays()["t"]
    assert len(t) > 500 and 0.599 < t[-1] < err.status.t  # the samples before it
    with pytest.raises(pfaff.simulate.SimulationError, match="controller torque"):
        simulate_limited(s.cset, s.q0, s.v0, 1.0, lims, opt,
                         controller=lambda t, snap: np.array([np.nan]))  # fmt: skip


def test_run_limited_refuses_a_bad_t_end_and_record_stride():
    """The new arguments are checked at the boundary: a ValueError naming them."""
    s = _load(PENDULUM)
    sys_ = core.build(s.cset)
    core.add_limit(sys_, 0, 0, -0.5, 2.0, 0.0, 1e-9)
    sys_.set_state(s.q0, s.v0)
    tau = np.zeros(1)
    for t_end, every, match in [
        (0.0, 1, "t_end = 0.* must be finite and after t0"),
        (float("nan"), 1, "t_end = nan"),
        (1.0, 0, "record_every = 0 is out of range"),
    ]:
        with pytest.raises(ValueError, match=match):
            core.run_limited(sys_, tau, 0.0, t_end, [], True, every, 8, 1e-15, 1e-10, 64, 50)
