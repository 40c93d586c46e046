"""A mechanism given in closed form, run by the compiled core (a "Python plant").

A mechanism that is not Pinocchio's own -- a :class:`~pfaff.mechanism.SliderCrankChain`,
a :class:`~pfaff.mechanism.YZArm`, any user subclass of
:class:`~pfaff.mechanism.base.Mechanism`, or a
:class:`~pfaff.mechanism.PinocchioMechanism` whose ``compute()`` is overridden --
reaches the core as a plant: the core calls its :meth:`Mechanism.compute` where it
computes the per-state terms of a Pinocchio model (each stage's M, h and frames with
drift, the correction's kinematics pass with ``dynamics=False``, M at the corrected
q, gravity's g and potential where the record or a gravity compensation element reads
them), as MuJoCo calls its callbacks, and checks what comes back (shapes, finite, M
symmetric) as every array entering the core. The loop is the core's own; only the
terms cost Python's time.

The core keeps its ``pinocchio::Model`` for what does not change: a chain of ``nv``
prismatic joints, each the child of the one before (so M's factor has M's dense
pattern, and the configuration is the vector space ``q + dv``), with every frame of the
mechanism on the last joint (so each frame's Jacobian window is every column). No
Pinocchio algorithm runs on it: it holds the sizes, the frame names and the tree the
core's sparse factor walks, so the rest of the core is unchanged.
"""

from __future__ import annotations

import pinocchio as pin

from pfaff.mechanism.base import Mechanism
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism

__all__ = ["is_plant", "plant_model", "plant_reason", "plant_terms"]


def is_plant(mech: Mechanism) -> bool:
    """True when ``mech`` reaches the core as a plant (its per-state terms from Python):
    it is not a :class:`PinocchioMechanism` with Pinocchio's own ``compute``."""
    return not (
        isinstance(mech, PinocchioMechanism) and type(mech).compute is PinocchioMechanism.compute
    )


def plant_reason(mech: Mechanism) -> str | None:
    """Why the core cannot run the plant ``mech`` (None when it can): its configuration
    is not the vector space ``q + dv`` the core integrates, or a frame name repeats."""
    nq, nv = int(mech.nq), int(mech.nv)
    if nq != nv:
        return (
            f"mechanism {mech.name!r} is given in closed form on a configuration space "
            f"with nq = {nq} != nv = {nv}: the core integrates a closed-form mechanism as "
            "q + dv (a vector space, nq == nv)"
        )
    if not isinstance(mech, PinocchioMechanism) and type(mech).integrate is not (
        Mechanism.integrate
    ):
        return (
            f"mechanism {mech.name!r} overrides integrate(): the core integrates a "
            "closed-form mechanism as q + dv (Mechanism.integrate)"
        )
    names = list(mech.frame_names)
    for n in names:
        if names.count(n) > 1:
            return (
                f"frame name {n!r} is not unique in {mech.name!r} (the core finds frames by name)"
            )
    return None


def plant_model(mech: Mechanism) -> pin.Model:
    """The core's ``pinocchio::Model`` of the plant ``mech``: ``nv`` prismatic joints in
    one chain and every frame of ``mech`` on the last one (see the module's notes)."""
    model = pin.Model()
    model.name = str(mech.name)
    parent = 0
    for k in range(int(mech.nv)):
        parent = model.addJoint(parent, pin.JointModelPX(), pin.SE3.Identity(), f"plant_{k}")
        model.appendBodyToJoint(parent, pin.Inertia.Identity(), pin.SE3.Identity())
    on_last = pin.FrameType.OP_FRAME
    for name in map(str, mech.frame_names):
        if not model.existFrame(name):  # "universe" is the world's already
            model.addFrame(pin.Frame(name, parent, 0, pin.SE3.Identity(), on_last))
    return model


def plant_terms(mech: Mechanism):
    """The per-state terms ``(q, v, names, dynamics, extras) -> (M, h, g, potential,
    frames)`` of ``mech`` that ``System.set_plant`` takes: ``mech.compute`` at ``(q, v)``
    (``v`` None: a kinematics pass at zero velocity) for the frames ``names`` (a list),
    ``frames`` a list of one ``(p, R, J, drift)`` per name in their order."""

    def terms(q, v, names, dynamics: bool, extras: bool):
        s = mech.compute(q, v, names, dynamics=dynamics, extras=extras)
        fs = s.frames
        frames = [(f.p, f.R, f.J, f.drift) for f in (fs[n] for n in names)]
        return s.M, s.h, s.g, s.potential, frames

    return terms


def plant_name(mech: Mechanism) -> str:
    """How the core's messages name the plant ``mech``."""
    return f"mechanism {mech.name!r} ({type(mech).__name__}.compute)"
