"""Options of :func:`~pfaff.simulate.simulate` and the choice of engine (the compiled
core or the NumPy reference).

The options the compiled core also reads take their defaults from its one table of
them (``src/cpp/tables/options.def``, read through ``pfaff._core.Options()``): a default is
written once, in C++; :func:`pfaff.core.options` copies the fields by name."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from pfaff import core, lowering
from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintSet
from pfaff.simulate.tableaus import TABLEAUS

ADAPTIVE = ("RK45", "DOP853", "Radau")
#: the fixed-step methods (pfaff.simulate.tableaus) and SciPy's adaptive ones
INTEGRATORS = (*TABLEAUS, *ADAPTIVE)
ENGINES = ("auto", "core", "numpy")

#: the core's options with their defaults (src/cpp/tables/options.def): SimOptions' defaults
CORE_DEFAULTS = core._core.Options()


_ENGINE_OVERRIDE: list[str] = []


@contextlib.contextmanager
def use_engine(engine: str):
    """Within the block, every :func:`simulate` runs with ``engine`` in place of its
    ``SimOptions.engine`` (``"numpy"`` or ``"auto"``: the two engines side by side on a
    whole scenario, in the tests and ``pfaff bench``)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; valid: {', '.join(ENGINES)}")
    _ENGINE_OVERRIDE.append(engine)
    try:
        yield
    finally:
        _ENGINE_OVERRIDE.pop()


def choose_engine(cset: ConstraintSet, opt: SimOptions, forces=()) -> str:
    """The engine that runs ``cset`` under ``opt``: ``"core"`` or ``"numpy"``.

    Raises ValueError when ``engine="core"`` is asked for a system the core cannot run.
    """
    return engine_choice(cset, opt, forces)[0]


def engine_choice(cset: ConstraintSet, opt: SimOptions, forces=()) -> tuple[str, str | None]:
    """``(engine, fallback)``: the engine that runs ``cset`` with the force elements
    ``forces`` under ``opt`` and, when ``engine="auto"`` falls back to NumPy because
    the core cannot run the system, why (else None).

    Raises ValueError when ``engine="core"`` is asked for a system the core cannot run.
    """
    engine = _ENGINE_OVERRIDE[-1] if _ENGINE_OVERRIDE else opt.engine
    reason = core.unsupported_reason(cset)
    if reason is None and opt.integrator not in TABLEAUS:
        runs = ", ".join(TABLEAUS)
        reason = f"integrator {opt.integrator!r} (the core runs the fixed-step methods {runs})"
    if reason is None and opt.method != "projection":
        reason = f"method {opt.method!r} (the core runs the projection method)"
    if reason is None and forces:
        why = lowering.first_reason(forces, "force")
        reason = None if why is None else f"force elements: {why}"
    if engine == "core" and reason is not None:
        raise ValueError(f"engine='core' cannot run this system: {reason}")
    if engine == "numpy":
        return "numpy", None
    if reason is not None:
        return "numpy", f"running on the NumPy engine: the compiled core cannot run it: {reason}"
    return "core", None


@dataclass
class SimOptions:
    """Options of :func:`simulate`.

    Attributes
    ----------
    dt : integrator step [s] (> 0).
    integrator : a fixed-step explicit Runge-Kutta method of
        :data:`pfaff.simulate.tableaus.TABLEAUS` (``"rk4"``, the default and the one
        the compiled core runs; ``"rk3"``, ``"heun"``) or a SciPy ``solve_ivp`` method
        (``"RK45"``, ``"DOP853"``, ``"Radau"``) run over each step interval; an
        interval whose velocity jumps (a switch of branch at a fold of the
        constraint manifold) stops the run with a :class:`SimulationError`
        naming the time (see ``branch_check``).
    rtol, atol : tolerances of the adaptive integrator.
    control_dt : controller period [s]; default ``dt``.
    position_tol : Newton-Raphson tolerance on ``max |Phi|`` (units of Phi).
    max_newton : iteration bound of the position correction.
    newton_step_tol : the position correction also iterates until its next
        Newton step is at most this in every coordinate of ``q`` (units of q;
        see :func:`~pfaff.simulate.newton_project`): near a fold ``|Phi|``
        small does not mean ``q`` close to the manifold.
    position_floor : round-off level of ``Phi`` (units of Phi, <= position_tol):
        no Newton step is taken from ``max |Phi| <= position_floor``. Both this
        and ``newton_step_tol`` are for a mechanism of unit size: the correction
        multiplies them by ``max(1, max |p|)`` over its constraint frames' world
        positions (m; :func:`~pfaff.simulate.correction.position_scale`).
    stage_projection : put each RK4 stage state on the manifold (Newton-Raphson and
        the M-metric velocity projection, as after a step) before its acceleration is
        evaluated (default True). RK4 then integrates ``y' = F(pi(y))``, which has the
        same solutions on the manifold as ``y' = F(y)`` and is smooth up to the
        folds, where the index-reduced ``F`` off the manifold is not: a stage point
        off a curved branch by O(dt^2) at a distance x from a fold sees an
        acceleration error ~ dt^2 v^4 / x^2 (docs/forces-and-folds.md). A stage where
        Newton takes no step keeps its velocity
        (:func:`~pfaff.simulate.correction.on_manifold`): straight branches
        pay nothing. False: the stages as they fall (the scheme before; 1.6-1.8x
        faster per step on the passive core scenarios, 7-15 % on the controlled ones,
        same order away from folds).
    rank_tol : absolute singular-value threshold of the SVD (units of A).
    variant : constraint inertia matrix ``"Mc"``, ``"Mc1"`` or ``"Mc2"``.
    method : ``"projection"`` (Aghili) or ``"kkt"`` (baseline for comparison).
    record_every : record one sample every this many steps (and the last:
        :func:`~pfaff.simulate.policy.record_due`).
    potential_offset : subtracted from the mechanism's potential energy
        (choose the zero of the potential).
    position_failure : a position correction that ends above ``position_tol`` counts
        as a Newton failure (``Trajectory.newton_failures``); one that ends above this
        ``max |Phi|`` (units of Phi, > 0) stops the run with a
        :class:`SimulationError`.
    progress : show a progress bar (default: when stderr is a terminal).
    engine : ``"core"`` (the compiled step core, :mod:`pfaff.core`), ``"numpy"``
        (the reference engine) or ``"auto"``: the core whenever it can run the
        system (Pinocchio mechanism, built-in constraints, RK4, projection method),
        else NumPy. ``Trajectory.engine`` says which ran.
    """

    dt: float = CORE_DEFAULTS.dt
    integrator: str = "rk4"
    rtol: float = 1e-10
    atol: float = 1e-12
    control_dt: float | None = None
    position_tol: float = CORE_DEFAULTS.position_tol
    max_newton: int = CORE_DEFAULTS.max_newton
    newton_step_tol: float = CORE_DEFAULTS.newton_step_tol
    position_floor: float = CORE_DEFAULTS.position_floor
    stage_projection: bool = CORE_DEFAULTS.stage_projection
    rank_tol: float = CORE_DEFAULTS.rank_tol
    variant: str = dyn.VARIANTS[CORE_DEFAULTS.variant]
    method: str = "projection"
    record_every: int = CORE_DEFAULTS.record_every
    potential_offset: float = CORE_DEFAULTS.potential_offset
    position_failure: float = CORE_DEFAULTS.position_failure
    progress: bool | None = None
    engine: str = "auto"

    def validate(self) -> None:
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"dt must be > 0 s, got {self.dt!r}")
        if self.control_dt is not None and not self.control_dt >= self.dt:
            raise ValueError(f"control_dt must be >= dt = {self.dt} s, got {self.control_dt!r}")
        if self.integrator not in INTEGRATORS:
            raise ValueError(
                f"unknown integrator {self.integrator!r}; valid: {', '.join(INTEGRATORS)}"
            )
        if self.variant not in dyn.VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; valid: {', '.join(dyn.VARIANTS)}")
        if self.method not in ("projection", "kkt"):
            raise ValueError(f"unknown method {self.method!r}; valid: projection, kkt")
        if not self.position_tol > 0 or not self.rank_tol > 0 or not self.newton_step_tol > 0:
            raise ValueError("position_tol, newton_step_tol and rank_tol must be > 0")
        if not self.position_failure > 0:
            raise ValueError(f"position_failure must be > 0, got {self.position_failure!r}")
        if not 0.0 <= self.position_floor <= self.position_tol:
            raise ValueError(
                f"position_floor must be in [0, position_tol = {self.position_tol:g}], "
                f"got {self.position_floor!r}"
            )
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; valid: {', '.join(ENGINES)}")
        if int(self.record_every) < 1:
            raise ValueError(f"record_every must be >= 1, got {self.record_every!r}")
