"""What a :class:`~pfaff.api.Simulator` and a rollout of a system start from: its
validated options, the engine, the bound force elements (the system's and its
actuators'), the built core system and the actuators driven by ``ctrl``."""

from __future__ import annotations

import dataclasses

from pfaff.api.system import System
from pfaff.simulate import SimOptions
from pfaff.simulate.actuators import Actuation
from pfaff.simulate.core_engine import build, configure
from pfaff.simulate.forces import ForceSet
from pfaff.simulate.options import engine_choice

__all__ = ["NOT_OPTIONS", "prepare"]

#: SimOptions a Simulator does not take: it has no controller, and records every step
NOT_OPTIONS = ("dt", "control_dt", "record_every", "progress")


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
    actuation = Actuation(system.actuators, system.mechanism, opt.dt)
    forces = ForceSet(system.mechanism, [*system.forces, *actuation.elements]).elements
    engine, fallback = engine_choice(cset, opt, tuple(forces))
    proto = None
    if engine == "core":
        proto = build(cset, forces)
        configure(proto, opt)
    return opt, engine, fallback, forces, proto, actuation
