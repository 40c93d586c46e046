"""The step loop's policy, written once for both engines and the chained phases.

The rules and tables the compiled core also reads are written once in C++
(``src/cpp/tables/tables.hpp``, ``options.def``, ``series.def``, ``status.def``) and read
here from ``pfaff._core``; this module gives them their Python form:

- :class:`SampleClock`: when the controller samples (period, next instant); its
  "due" is the core's rule (``_core.sample_due``, :data:`SAMPLE_TOL`). The NumPy
  loop, the core's loop (:mod:`pfaff.simulate.core_engine`, which hands the clock's
  instants to C++) and :class:`~pfaff.simulate.phases.PhaseChain` use it.
- :func:`record_due` and :func:`record_count`: which steps a run records (the core's
  ``record_due``, ``record_count``).
- :data:`SERIES`: the recorded series (name, width, unit, doc) of ``series.def``, in
  the order the compiled core writes its record buffers;
  :class:`~pfaff.simulate.Trajectory`, both recorders and the report's documentation
  read it, and callers take a buffer by its series' name (:func:`by_name`).
- :class:`StatusCode`: how a run ended (``status.def``), and
  :func:`status_message`, its message; :data:`POSITION_FAILURE` (the default of
  ``SimOptions.position_failure``, ``options.def``) and :func:`position_message`: when a
  position correction that missed ``position_tol`` stops the run, and its message; the
  other failure messages (non-finite values, a unilateral contact that would open), the
  same for both engines.
- :func:`steps_of`: the steps a run of a given span takes (the rounding of ``t_end``).
- :data:`START_ITERATIONS` and :func:`start_message`: how the initial state is brought
  onto the constraint manifold (``project_state`` on NumPy, ``System.project_state``
  on the core) and when it cannot be.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from pfaff.core import _core

if _core is None:  # pragma: no cover - only without a build
    raise ImportError("pfaff._core is not built: the step loop's tables live in it")

#: a sample is due at step time t when t >= next - SAMPLE_TOL * dt: the step times
#: t0 + k dt carry round-off, the controller's instants t0 + j control_dt too
#: (src/cpp/tables/tables.hpp)
SAMPLE_TOL: float = _core.SAMPLE_TOL

#: relative tolerance of "a whole number of steps" (times given in decimal, e.g. 0.3 / 0.1)
STEP_TOL = 1e-6


def steps_of(span: float, dt: float) -> int:
    """The steps of ``dt`` a run of ``span`` seconds takes: ``round(span / dt)``, and 0 when
    ``span`` is shorter than one step (within :data:`STEP_TOL`): such a run takes none.
    ``simulate`` and the parameter checks of the command line apply this one rule."""
    return 0 if span < dt * (1 - STEP_TOL) else int(round(span / dt))


#: a position correction that ends above position_tol counts as a Newton failure;
#: above this [units of Phi] the run stops (both engines): the default of
#: SimOptions.position_failure and of the core's Options (src/cpp/tables/options.def)
POSITION_FAILURE: float = _core.Options().position_failure


def record_due(k: int, every: int, n_steps: int) -> bool:
    """True when a run of ``n_steps`` steps records step ``k``: every ``every``-th step
    and the last (``_core.record_due``, the rule the core's loop applies)."""
    return _core.record_due(int(k), int(every), int(n_steps))


def record_count(n_steps: int, every: int) -> int:
    """The samples a full run of ``n_steps`` steps records, one per step
    :func:`record_due` accepts (``_core.record_count``)."""
    return _core.record_count(int(n_steps), int(every))


#: Newton-Raphson iterations that bring an initial state onto the manifold (a step's
#: correction takes SimOptions.max_newton)
START_ITERATIONS = 50


def start_message(err: float, iterations: int, position_tol: float) -> str | None:
    """Why the initial state cannot be brought onto the constraint manifold (None when it
    can): Newton-Raphson ended at ``max |Phi| = err`` above ``max(1e3 position_tol,
    1e-9)`` (both engines raise :class:`~pfaff.simulate.InitialStateError` with it)."""
    if err <= max(1e3 * position_tol, 1e-9):
        return None
    return (
        f"the initial state cannot be brought onto the constraint manifold: "
        f"max |Phi| = {err:.3g} after {iterations} Newton-Raphson iterations"
    )


@dataclass
class SampleClock:
    """The controller's sampling instants ``next, next + period, ...`` [s].

    ``due(t, dt)`` is the one rule both engines apply at the step times ``t``.
    """

    period: float
    next: float

    def due(self, t: float, dt: float) -> bool:
        """True when a sample is due at the step time ``t`` (steps of ``dt``): the
        core's rule ``_core.sample_due``, ``t >= next - SAMPLE_TOL dt``."""
        return _core.sample_due(float(t), float(self.next), float(dt))

    def advance(self) -> None:
        """The sample at ``next`` was taken: move to the following instant."""
        self.next += self.period

    def first_due_step(self, k: int, t0: float, dt: float, n_steps: int) -> int:
        """The first step index ``k' >= k`` (at most ``n_steps + 1``: none) whose time
        ``t0 + k' dt`` is due."""
        while k <= n_steps and not self.due(t0 + k * dt, dt):
            k += 1
        return k


def nonfinite_message(what: str, index: int, value: float, t: float, step: int) -> str:
    """A run stopped by a NaN or inf in ``what[index]`` (both engines)."""
    return f"non-finite {what}[{index}] = {value} at t = {t:.6g} s (step {step})"


def contact_message(row: str, normal_force: float, t: float, step: int) -> str:
    """A run stopped because the unilateral contact ``row`` would pull (both engines)."""
    return (
        f"unilateral contact {row!r} would open at t = {t:.6g} s "
        f"(step {step}): normal force {normal_force:.3g} N < 0"
    )


def position_message(err: float, t: float, step: int, iterations: int) -> str:
    """The failure message of a position correction that ended at ``max |Phi| = err``
    above :data:`POSITION_FAILURE` (both engines stop the run there)."""
    return (
        f"position correction failed at t = {t:.6g} s (step {step}): "
        f"max |Phi| = {err:.3g} after {iterations} iterations"
    )


@dataclass(frozen=True)
class Series:
    """One recorded series: ``width`` is ``None`` (a number per sample) or the size
    name of a row (``nq``, ``nv``, ``m``: constraint rows, ``m_h``: holonomic rows);
    ``buffer`` the core's buffers it is written into (``"record"`` or ``"force"``)."""

    name: str
    width: str | None
    unit: str
    doc: str
    buffer: str = "record"

    @property
    def description(self) -> str:
        """The line written to the report and ``SERIES_DOC``: doc, unit and shape."""
        unit = f" [{self.unit}]" if self.unit else ""
        shape = "(T,)" if self.width is None else f"(T, {self.width})"
        return f"{self.doc}{unit} {shape}"


#: the series every run records (src/cpp/tables/series.def), in the order of the core's
#: record buffers (src/cpp/sim/record.cpp: record), then those of the force elements
SERIES: tuple[Series, ...] = tuple(
    Series(name, width, unit, doc, buffer) for name, width, buffer, unit, doc in _core.SERIES
)

#: the series the core writes into its record buffers (System.set_buffers, in order)
CORE_SERIES = tuple(s for s in SERIES if s.buffer == "record")
#: the series of the force buffers (System.set_force_buffers, in order)
FORCE_SERIES = tuple(s for s in SERIES if s.buffer == "force")


def by_name(series: Sequence[Series], arrays: Sequence) -> dict:
    """``{series name: array}`` of buffers ``arrays`` given in the order of ``series``
    (e.g. :data:`CORE_SERIES` and a core system's record buffers)."""
    if len(series) != len(arrays):
        raise ValueError(f"{len(arrays)} arrays for {len(series)} series")
    return {s.name: a for s, a in zip(series, arrays)}


#: series name -> description (trajectory.npz and the report)
SERIES_DOC = {s.name: s.description for s in SERIES}
#: the running accounts a run counts from zero (a chain of runs counts them on)
ACCOUNTS = ("work", "correction_energy", "force_work")


def series_shape(s: Series, sizes: dict[str, int]) -> tuple[int, ...]:
    """The per-sample shape of ``s`` given ``sizes`` (``nq``, ``nv``, ``m``, ``m_h``)."""
    return () if s.width is None else (sizes[s.width],)


#: how a run of the core ends (src/cpp/tables/status.def): OK, NON_FINITE, CONTACT_OPENS,
#: POSITION_FAILED, EXCEPTION (a ``Status.code``)
StatusCode = enum.IntEnum(
    "StatusCode", {name.upper(): code for name, code, _ in _core.STATUS}, module=__name__
)
StatusCode.__doc__ = "How a run ended: the codes of the core's Status (src/cpp/tables/status.def)."


@dataclass
class RunStatus:
    """How a run ended, as the compiled core's ``Status`` holds it (the NumPy rollout
    makes one of these): ``code`` a :class:`StatusCode` (``what`` the message of an
    exception)."""

    code: int = StatusCode.OK
    what: str = ""
    index: int = -1
    value: float = 0.0
    t: float = 0.0
    step: int = 0
    iterations: int = 0


def status_message(cset, st) -> str:
    """The message of a run's status ``st`` (the core's ``Status`` or a
    :class:`RunStatus`), worded as the NumPy engine words it: NON_FINITE
    (:func:`nonfinite_message`), CONTACT_OPENS (:func:`contact_message`, ``st.index``
    the row of ``cset``), POSITION_FAILED (:func:`position_message`); EXCEPTION, an
    exception inside a rollout, ``st.what`` its message."""
    if st.code == StatusCode.NON_FINITE:
        return nonfinite_message(st.what, st.index, st.value, st.t, st.step)
    if st.code == StatusCode.CONTACT_OPENS:
        return contact_message(cset.row_names[st.index], st.value, st.t, st.step)
    if st.code == StatusCode.POSITION_FAILED:
        return position_message(st.value, st.t, st.step, st.iterations)
    return st.what
