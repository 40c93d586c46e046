"""The step loop's policy, written once for both engines and the chained phases.

- :class:`SampleClock`: when the controller samples (period, next instant, the
  round-off rule of "due"); the NumPy loop, the core's loop
  (:mod:`pfaff.simulate.core_engine`, which hands the clock's instants to C++) and
  :class:`~pfaff.simulate.phases.PhaseChain` use it.
- :data:`SERIES`: the recorded series (name, width, unit, doc), in the order the
  compiled core writes its record buffers; :class:`~pfaff.simulate.Trajectory`, both
  recorders and the report's documentation read it.
- :data:`POSITION_FAILURE` and :func:`position_message`: when a position correction
  that missed ``position_tol`` stops the run, and its message; the other failure
  messages (non-finite values, a unilateral contact that would open), the same for both
  engines.
- :func:`steps_of`: the steps a run of a given span takes (the rounding of ``t_end``).
- :data:`START_ITERATIONS` and :func:`start_message`: how the initial state is brought
  onto the constraint manifold (``project_state`` on NumPy, ``System.project_state``
  on the core) and when it cannot be.
"""

from __future__ import annotations

from dataclasses import dataclass

#: a sample is due at step time t when t >= next - SAMPLE_TOL * dt: the step times
#: t0 + k dt carry round-off, the controller's instants t0 + j control_dt too
SAMPLE_TOL = 1e-9

#: relative tolerance of "a whole number of steps" (times given in decimal, e.g. 0.3 / 0.1)
STEP_TOL = 1e-6


def steps_of(span: float, dt: float) -> int:
    """The steps of ``dt`` a run of ``span`` seconds takes: ``round(span / dt)``, and 0 when
    ``span`` is shorter than one step (within :data:`STEP_TOL`): such a run takes none.
    ``simulate`` and the parameter checks of the command line apply this one rule."""
    return 0 if span < dt * (1 - STEP_TOL) else int(round(span / dt))


#: a position correction that ends above position_tol counts as a Newton failure;
#: above this [units of Phi] the run stops (both engines)
POSITION_FAILURE = 1e-6


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
        """True when a sample is due at the step time ``t`` (steps of ``dt``)."""
        return t >= self.next - SAMPLE_TOL * dt

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
    name of a row (``nq``, ``nv``, ``m``: constraint rows, ``m_h``: holonomic rows)."""

    name: str
    width: str | None
    unit: str
    doc: str

    @property
    def description(self) -> str:
        """The line written to the report and ``SERIES_DOC``: doc, unit and shape."""
        unit = f" [{self.unit}]" if self.unit else ""
        shape = "(T,)" if self.width is None else f"(T, {self.width})"
        return f"{self.doc}{unit} {shape}"


#: the series every run records, in the order of the core's record buffers
#: (src/cpp/record.cpp: record), then those of the force elements
SERIES: tuple[Series, ...] = (
    Series("t", None, "s", "time of each sample"),
    Series("q", "nq", "rad or m", "configuration q"),
    Series("v", "nv", "rad/s or m/s", "generalized velocity v"),
    Series("a", "nv", "rad/s^2 or m/s^2", "generalized acceleration a"),
    Series("tau", "nv", "N m or N", "applied joint torque tau, held by the controller"),
    Series("F", "nv", "N m or N", "generalized constraint force F = A^T lambda, Aghili eq. 32"),
    Series("lambda", "m", "N or N m", "least-norm Lagrange multipliers"),
    Series("av", "m", "m/s or rad/s", "velocity constraint residuals A v"),
    Series("phi", "m_h", "m or rad", "holonomic residuals Phi(q) after correction"),
    Series("rank", None, "", "numerical rank of A"),
    Series("sigma_min", None, "units of A", "smallest singular value of A"),
    Series("kinetic", None, "J", "kinetic energy"),
    Series("potential", None, "J", "potential energy, the scenario's zero, with the springs'"),
    Series("energy", None, "J", "total energy kinetic + potential"),
    Series("work", None, "J", "work done by tau since the start"),
    Series("correction_energy", None, "J", "energy changed by the drift corrections"),
    Series("newton_iterations", None, "", "Newton-Raphson iterations of the last correction"),
    Series("force_work", None, "J", "work of the non-conservative force elements"),
    Series("force_potential", None, "J", "potential energy of the spring force elements"),
)

#: the series the core writes into its 17 record buffers (the rest: force buffers)
CORE_SERIES = SERIES[:17]
FORCE_SERIES = SERIES[17:]

#: series name -> description (trajectory.npz and the report)
SERIES_DOC = {s.name: s.description for s in SERIES}
#: the running accounts a run counts from zero (a chain of runs counts them on)
ACCOUNTS = ("work", "correction_energy", "force_work")


def series_shape(s: Series, sizes: dict[str, int]) -> tuple[int, ...]:
    """The per-sample shape of ``s`` given ``sizes`` (``nq``, ``nv``, ``m``, ``m_h``)."""
    return () if s.width is None else (sizes[s.width],)


@dataclass
class RunStatus:
    """How a run ended, as the compiled core's ``Status`` holds it (the NumPy rollout
    makes one of these): ``code`` 0 ok, 1 non-finite, 2 a unilateral contact would
    open, 3 position correction failed, -1 an exception (``what`` its message)."""

    code: int = 0
    what: str = ""
    index: int = -1
    value: float = 0.0
    t: float = 0.0
    step: int = 0
    iterations: int = 0


def status_message(cset, st) -> str:
    """The message of a run's status ``st`` (the core's ``Status`` or a
    :class:`RunStatus`), worded as the NumPy engine words it: code 1 non-finite
    (:func:`nonfinite_message`), 2 a unilateral contact would open
    (:func:`contact_message`, ``st.index`` the row of ``cset``), 3 position correction
    (:func:`position_message`); -1 an exception inside a rollout, ``st.what`` its
    message."""
    if st.code == 1:
        return nonfinite_message(st.what, st.index, st.value, st.t, st.step)
    if st.code == 2:
        return contact_message(cset.row_names[st.index], st.value, st.t, st.step)
    if st.code == 3:
        return position_message(st.value, st.t, st.step, st.iterations)
    return st.what
