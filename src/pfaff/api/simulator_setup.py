"""What a :class:`~pfaff.api.Simulator` and a rollout of a system start from: its
validated options, the engine, the bound force elements (the system's and its
actuators'), the built core system and the actuators driven by ``ctrl``; the check of a
step count."""

from __future__ import annotations

import dataclasses
import operator

from pfaff.api.simulator_record import CHUNK_MAX
from pfaff.api.system import System
from pfaff.simulate import SimOptions
from pfaff.simulate.actuators import Actuation
from pfaff.simulate.core_engine import build, configure
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.memory import check_record
from pfaff.simulate.options import engine_choice

__all__ = ["CORE_MAX_STEPS", "MAX_STEPS", "NOT_OPTIONS", "prepare", "steps_asked"]

#: SimOptions a Simulator does not take: it has no controller, and records every step
NOT_OPTIONS = ("dt", "control_dt", "record_every", "progress")

#: the largest step count ``step(n=...)`` takes (int64), and the steps since a reset the
#: compiled core counts (a C int)
MAX_STEPS = 2**63 - 1
CORE_MAX_STEPS = 2**31 - 1


def prepare(system: System, dt: float, options: dict) -> tuple:
    """``(options, engine, fallback, forces, proto, actuation)`` of a Simulator or a
    rollout of ``system``: the validated :class:`~pfaff.simulate.SimOptions`, ``"core"``
    or ``"numpy"`` with the reason of a fallback (else None), the bound force elements
    (the system's and its actuators'), the built core system (None on the NumPy engine)
    and the system's actuators driven by ``ctrl``
    (:class:`~pfaff.simulate.actuators.Actuation`, its own per Simulator)."""
    if not isinstance(system, System):
        raise TypeError(f"system must be a pfaff.System (pfaff.load), got {type(system)}")
    fields = {f.name for f in dataclasses.fields(SimOptions)} - set(NOT_OPTIONS)
    bad = sorted(set(options) - fields)
    if bad:
        raise ValueError(f"unknown option(s) {bad}; valid: {', '.join(sorted(fields))}")
    opt = SimOptions(dt=float(dt), progress=False, **options)
    opt.validate()
    cset = system.cset
    actuation = Actuation(system.actuators, system.mechanism)
    forces = ForceSet(system.mechanism, [*system.forces, *actuation.elements]).elements
    engine, fallback = engine_choice(cset, opt, tuple(forces))
    proto = None
    if engine == "core":
        proto = build(cset, forces)
        configure(proto, opt)
    return opt, engine, fallback, forces, proto, actuation


def steps_asked(n, record_all: bool, sample_bytes: int, taken: int | None) -> int:
    """A ``Simulator.step``'s ``n`` checked: a whole number of steps, >= 1, at most an
    int64 (on the compiled core, ``taken`` steps since the reset: at most
    :data:`CORE_MAX_STEPS` in all; None on the NumPy engine), whose record (every step,
    ``record_all``, of ``sample_bytes`` each) fits in the memory available
    (ValueError naming ``n`` otherwise, TypeError when it is not a whole number)."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n must be a whole number of steps >= 1, got {n!r}") from None
    if n < 1:
        raise ValueError(f"n must be >= 1 steps, got {n}")
    if n > MAX_STEPS:
        raise ValueError(f"n = {n} steps is beyond the largest step count 2**63 - 1")
    if record_all and n > CHUNK_MAX:
        check_record(
            n,
            sample_bytes,
            f"n = {n} steps (recorded, as record=True records every step)",
            "record less: pfaff.Simulator(system, record=False) keeps only the last "
            "sample (sim.last), in constant memory; or step in pieces, reading "
            "sim.record() and calling sim.reset(sim.q, sim.v) between them",
        )
    if taken is not None and taken + n > CORE_MAX_STEPS:
        raise ValueError(
            f"n = {n} steps: the compiled core counts at most 2**31 - 1 = "
            f"{CORE_MAX_STEPS} steps since the reset ({taken} taken); step less, or "
            "go on from sim.reset(sim.q, sim.v) (t starts at 0 again)"
        )
    return n
