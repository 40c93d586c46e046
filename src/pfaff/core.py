"""The compiled step core ``pfaff._core``: which systems it can run, and its set-up.

The core (C++17 on Pinocchio, ``src/cpp``) computes, per state, M and h
(``computeAllTerms``), the frames' placements, world-aligned Jacobians and drift,
the rows of the built-in constraints, the projection (certified full-row-rank QR,
SVD with the absolute ``rank_tol`` otherwise), the direct dynamics with the three
constraint inertia matrices, the constraint force and multipliers; and runs the RK4
step loop with the Newton-Raphson position correction and the M-metric velocity
projection. The NumPy engine (:mod:`pfaff.dynamics`, :mod:`pfaff.simulate`) stays
the reference: the tests compare the two. The compiled laws and plants of papers (the
controllers' kernels, the Yoshikawa-Zheng samples) are a second extension,
``pfaff._papers``, made here by :func:`control_kernel`, :func:`yz_kernel` and the like:
the step core holds none of them.

It runs a :class:`~pfaff.constraints.ConstraintSet` whose mechanism is a
:class:`~pfaff.mechanism.PinocchioMechanism` (its own ``compute``) or a mechanism given
in closed form on a vector space (:mod:`pfaff.plant`: its ``compute`` called from the
loop for the per-state terms), and whose constraints, force elements, contours and
held laws all have a lowering: each built-in type registers one next to its definition
(:mod:`pfaff.lowering`, the one registry; exact types, a subclass opts in explicitly).
On a Lie group (free, ball, planar joints: nq != nv) the core's RK4 stages are
Runge-Kutta-Munthe-Kaas stages, as the NumPy engine's. Anything else runs on the NumPy
engine; :func:`unsupported_reason` and :func:`pfaff.simulate.engine_choice` say why.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from pfaff import lowering, plant
from pfaff.constraints.base import ConstraintSet
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism

try:  # the extension is built at install; a source tree without it runs on NumPy
    from pfaff import _core
except ImportError as exc:  # pragma: no cover - only without a build
    _core = None
    _IMPORT_ERROR = str(exc)
else:
    _IMPORT_ERROR = ""
try:  # the compiled laws and plants of papers: a module of their own, beside the core
    import pfaff._papers as _papers
except ImportError:  # pragma: no cover - only without a build
    _papers = None

VARIANT_CODE = {"Mc": 0, "Mc1": 1, "Mc2": 2}
METHOD_CODE = {"projection": 0, "kkt": 1}
#: the options whose core field is a code of SimOptions' name (options.def)
OPTION_CODES = {"variant": VARIANT_CODE, "method": METHOD_CODE}
#: ``run_memory()``: a new ``pfaff._core.RunMemory`` (:func:`run_limited`'s ``memory``)
run_memory = getattr(_core, "RunMemory", None)


def option_value(name: str, value):
    """The core's value of the option ``name`` for SimOptions' ``value`` (its code where
    :data:`OPTION_CODES` has one)."""
    return OPTION_CODES[name][value] if name in OPTION_CODES else value


def available() -> bool:
    """True when the compiled core was built and imports."""
    return _core is not None


def unsupported_reason(cset: ConstraintSet) -> str | None:
    """Why the core cannot run ``cset`` (None when it can): a mechanism given in closed
    form (:func:`pfaff.plant.is_plant`) whose configuration is no vector space
    (:func:`pfaff.plant.plant_reason`) or a constraint that neither a lowering of its
    own nor the constraints' fallback (rows written in Python) takes. A frame name that
    repeats in a Pinocchio model is its last frame on both engines."""
    if _core is None:
        return f"the compiled core is not built ({_IMPORT_ERROR})"
    mech = cset.mechanism
    if plant.is_plant(mech):
        why = plant.plant_reason(mech)
        if why is not None:
            return why
    for c in cset.constraints:
        why = lowering.reason(c, "constraint")
        if why is not None:
            return f"constraint {c.name!r}: {why}"
    return None


class Build:
    """The compiled system being built: what a lowering (:mod:`pfaff.lowering`) writes
    into. ``system`` is the ``pfaff._core.System``; ``mechanism`` its
    :class:`PinocchioMechanism`; ``shared`` a dict the lowerings of one system share
    (e.g. a rolling contact added once for its two rows)."""

    def __init__(self, system, mechanism: PinocchioMechanism) -> None:
        self.system, self.mechanism, self.shared = system, mechanism, {}

    def frame(self, name: str | None) -> int:
        """The core's slot of frame ``name`` (-1 for None: the world)."""
        return -1 if name is None else self.system.add_frame(name)

    def spec(self, kind: str, c=None):
        """A ``pfaff._core.Spec`` of constraint kind ``kind`` (a ``pfaff._core.Kind``
        name), with ``dim`` and ``unilateral`` of the constraint ``c`` if given."""
        s = _core.Spec()
        s.kind = getattr(_core.Kind, kind)
        if c is not None:
            s.dim, s.unilateral = int(c.dim), bool(c.unilateral)
        return s

    def force_spec(self, kind: str):
        """An empty ``pfaff._core.ForceSpec`` of ``kind`` (a ``pfaff._core.ForceKind``
        name)."""
        s = _core.ForceSpec()
        s.kind = getattr(_core.ForceKind, kind)
        return s

    def joint(self, name: str) -> tuple[int, int]:
        """``(idx_q, idx_v)`` of the joint ``name``."""
        jm = self.mechanism.model.joints[self.mechanism.model.getJointId(name)]
        return int(jm.idx_q), int(jm.idx_v)

    @staticmethod
    def point(s, k: int, offset) -> None:
        """Set the point offset ``p{k}`` of spec ``s`` (nothing for None: the origin)."""
        if offset is not None:
            setattr(s, f"p{k}", np.asarray(offset, dtype=float))
            setattr(s, f"has_p{k}", True)

    @staticmethod
    def directions(s, D: np.ndarray) -> None:
        """The row directions ``D`` (k x 3) of spec ``s``."""
        s.D = np.ascontiguousarray(D, dtype=float)
        s.D_identity = bool(D.shape == (3, 3) and np.array_equal(D, np.eye(3)))


def contour(kind: str, U: float, a: float = 1.0, b: float = 1.0, p: int = 2, bx=(), coef=()):
    """A ``pfaff._core.Contour`` (src/cpp/model/rolling.hpp): ``kind`` one of ``Circle``
    (radius ``a``), ``Ellipse``, ``Superellipse`` (exponent ``p``) or ``Spline``
    (breakpoints ``bx``, 8 coefficients per segment in ``coef``); ``U`` the period."""
    c = _core.Contour()
    c.kind, c.U, c.a, c.b, c.p = getattr(_core.ContourKind, kind), float(U), a, b, int(p)
    c.bx, c.coef = [float(x) for x in bx], [float(x) for x in coef]
    c.check()
    return c


def model_bytes(model: pin.Model) -> bytes:
    """``model`` in Pinocchio's binary serialisation (``Model.saveToBinary`` into a
    ``StreamBuffer``), as ``pfaff._core.System(bytes)`` reads it: some 20 times faster
    both ways than the text of ``Model.saveToString``, which the core also reads."""
    buffer = pin.serialization.StreamBuffer()
    model.saveToBinary(buffer)
    return buffer.tobytes()


def build(cset: ConstraintSet):
    """A ``pfaff._core.System`` for ``cset`` (check :func:`unsupported_reason` first).

    The Pinocchio model crosses over as Pinocchio's own binary serialisation
    (:func:`model_bytes`: the doubles copied, no rounding). A mechanism given in closed
    form crosses over as :func:`pfaff.plant.plant_model` (sizes and frame names) and its
    per-state terms (:func:`pfaff.plant.plant_terms`, ``System.set_plant``).
    """
    reason = unsupported_reason(cset)
    if reason is not None:
        raise ValueError(f"the compiled core cannot run this system: {reason}")
    mech = cset.mechanism
    if plant.is_plant(mech):
        system = _core.System(model_bytes(plant.plant_model(mech)))
        system.set_plant(plant.plant_terms(mech), plant.plant_name(mech))
    else:
        system = _core.System(model_bytes(mech.model))
    into = Build(system, cset.mechanism)
    for c in cset.constraints:
        system.add(lowering.lower(c, "constraint", into))
    return system


def control_kernel():
    """A ``pfaff._papers.ControlKernel`` (the per-sample laws of
    :class:`~pfaff.control.ProjectedController`), or None without the extension."""
    return None if _papers is None else _papers.ControlKernel()


def task_block(frame: int = -1, rows=(), orientation: bool = False, point=None):
    """A ``pfaff._papers.TaskBlock``: rows of a built-in task for
    ``ControlKernel.set_task``.

    ``frame >= 0``: a FrameTask on the ``frame``-th frame handed to ``task_law`` (world
    position rows ``rows`` of the point at ``point`` in the frame, then the orientation
    rows); ``frame < 0``: a JointTask on the joints ``rows``.
    """
    b = _papers.TaskBlock()
    b.frame, b.rows, b.orientation = int(frame), [int(i) for i in rows], bool(orientation)
    if point is not None:
        b.point, b.has_point = np.asarray(point, dtype=float), True
    return b


def yz_kernel():
    """A ``pfaff._papers.YZKernel`` (Yoshikawa-Zheng eq. 31-37 of
    :class:`~pfaff.control.YZController` in one call), or None without the extension."""
    return None if _papers is None else _papers.YZKernel()


def yz_grasp():
    """A ``pfaff._papers.YZGrasp``: the grasp terms handed to a ``YZKernel`` (or None)."""
    return None if _papers is None else _papers.YZGrasp()


def yz_rigid_box():
    """A ``pfaff._papers.YZRigidBox`` (one sample of :class:`~pfaff.control.YZController`
    on a box held by rigid grasps, src/cpp/papers/yz_sample.hpp), or None without the
    extension."""
    return None if _papers is None else _papers.YZRigidBox()


def yz_pinned_plane():
    """A ``pfaff._papers.YZPinnedPlane`` (one sample of :class:`~pfaff.control.YZController`
    on a planar object held by pins, src/cpp/papers/yz_sample.hpp), or None without the
    extension."""
    return None if _papers is None else _papers.YZPinnedPlane()


def yz_servo():
    """A ``pfaff._papers.YZServo``: the servo state of eq. (41)-(43) that a
    ``YZRigidBox`` or ``YZPinnedPlane`` sample carries (or None without the extension)."""
    return None if _papers is None else _papers.YZServo()


#: fields of the core's Options that SimOptions does not have, with the value they keep
CORE_ONLY_OPTIONS = {
    "gamma": "-1: M''_c's gamma is ||M||_2, as the NumPy engine's default",
}


def option_names() -> tuple[str, ...]:
    """The fields of the core's ``Options`` (``src/cpp/tables/options.def``, the one table of
    them: ``pfaff._core.OPTIONS``) copied from :class:`~pfaff.simulate.SimOptions`: each
    is a field of the same name, meaning and default there (all but
    :data:`CORE_ONLY_OPTIONS`)."""
    return tuple(name for name, _ in _core.OPTIONS if name not in CORE_ONLY_OPTIONS)


def options(system, opt) -> None:
    """Copy a :class:`~pfaff.simulate.SimOptions` into the core's options: every field
    the core has, by name (``variant`` and ``method`` as their codes)."""
    o = system.options
    for name in option_names():
        setattr(o, name, option_value(name, getattr(opt, name)))
    system.options = o


def clone(system):
    """A copy of a ``pfaff._core.System`` (model, rows, options, state, counters) that
    writes into no record buffer until ``set_buffers`` (src/cpp/bindings/bind_sim.cpp): every
    :class:`pfaff.Simulator` reset and every rollout starts from a copy of the system as
    it was built."""
    return _core.clone_system(system)


def stepper():
    """``pfaff._core.sim_step(system, tau, k0, n, t0)``: set the torque and run the ``n``
    steps from step ``k0`` (one sample recorded per step) in one call; None when they
    ran, else ``System.run``'s ``Status``."""
    return _core.sim_step


def rollout(system, q0s, v0s, taus, t0: float, threads: int, q, v, lam, phi) -> list:
    """``K`` rollouts of ``T`` steps of copies of ``system`` on ``threads`` threads with the
    GIL released (src/cpp/bindings/bind_sim.cpp): writes the ``T + 1`` states' q, v, lambda and
    Phi into ``q, v, lam, phi`` (K, T + 1, width), NaN after a failure, and returns the
    ``K`` ``Status`` of ``System.run`` (code -1: an exception, its message in ``what``)."""
    return _core.rollout(system, q0s, v0s, taus, t0, threads, q, v, lam, phi)


def rollout_ctrl(system, q0s, v0s, taus, ctrls, act0s, t0: float, threads: int, *out) -> list:
    """:func:`rollout` with the actuators' ``ctrls`` (K, T, nu, clamped) set before each
    step and their activations from ``act0s`` (K, na): ``out`` is ``q, v, lam, phi``
    and ``act`` (K, T + 1, na)."""
    return _core.rollout_ctrl(system, q0s, v0s, taus, ctrls, act0s, t0, threads, *out)


#: the arrays of pfaff.derivatives.DynamicsDerivatives the compiled derivatives give
DERIVATIVE_FIELDS = (
    "a", "lam", "F", "sigma", "da_dq", "da_dv", "da_dtau",
    "dF_dq", "dF_dv", "dF_dtau", "dlam_dq", "dlam_dv", "dlam_dtau",
)  # fmt: skip


def differentiator(cset: ConstraintSet, rank_tol: float, forces=()):
    """The compiled derivatives of the projection dynamics of ``cset`` with the bound
    force elements ``forces`` (``src/cpp/algorithms/derivatives.cpp`` and each element's
    ``src/cpp/forces/<name>.cpp``, the NumPy reference :mod:`pfaff.derivatives`): a
    function ``(q, v, tau) -> dict`` of ``a, lam, F, sigma, rank, rank_radius``, the
    derivatives ``da_dq, ..., dlam_dtau`` (arrays of their own) and ``fd_constraints`` (the
    kinds whose rows are central differences: every kind of a plant).

    Every force element lowers (one written in Python as a law the core calls, its
    partials by central differences) and every constraint kind that lowers has its
    derivative rows in the core (``derive_K`` in ``src/cpp/kinds/``). A mechanism given
    in closed form (:mod:`pfaff.plant`) has no Pinocchio derivative pass behind its
    terms: the core takes its partials by central differences of the terms it calls
    (``src/cpp/algorithms/plant_derivatives.cpp``, as the NumPy reference). Raises
    ``ValueError`` (naming it) for a system the core cannot run.
    """
    system = build(cset)
    into = Build(system, cset.mechanism)
    for e in forces:
        system.add_force(lowering.lower(e, "force", into))
    o = system.options
    o.rank_tol = float(rank_tol)
    system.options = o
    diff = _core.Differentiator(system)

    # the kinds whose rows are central differences: a plant's every kind
    fd = ()
    if plant.is_plant(cset.mechanism):
        fd = tuple(dict.fromkeys(type(c).__name__ for c in cset.constraints))

    def compute(q, v, tau) -> dict:
        r = diff.compute(q, v, tau)
        out = {name: getattr(r, name) for name in DERIVATIVE_FIELDS}
        out.update(rank=r.rank, rank_radius=r.rank_radius, fd_constraints=fd)
        return out

    compute.raw = diff.compute  # the binding alone (pfaff bench derivatives)
    return compute


def add_limit(system, iq: int, iv: int, lower: float, upper: float, restitution: float,
              rest_speed: float, iqs=(), ivs=(), coefs=(), ball=False) -> None:  # fmt: skip
    """Add the joint limit ``lower <= q[iq] <= upper`` of a one-dof joint (velocity ``iv``),
    with ``coefs`` a fixed tendon's ``lower <= sum_j coefs[j] q[iqs[j]] <= upper`` (``iq =
    iv = -1``), with ``ball`` a ball joint's angle ``<= upper`` (``lower = -inf``), to a
    ``pfaff._core.System`` (``src/cpp/sim/limits.cpp``): Newton's ``restitution`` in [0, 1],
    an impact no faster than ``rest_speed`` plastic (ValueError naming what is wrong)."""
    tendon = ([int(i) for i in iqs], [int(i) for i in ivs], [float(c) for c in coefs])
    _core.add_limit(system, iq, iv, lower, upper, restitution, rest_speed, *tendon, ball)


def set_contact_world(system, mjb: bytes, label: str) -> None:
    """Give a ``pfaff._core.System`` the compiled MuJoCo model whose geoms the contact
    pairs name: ``mjb``, ``mujoco.mj_saveModel``'s buffer (``src/cpp/sim/contact.cpp``);
    ``label`` names it in messages. Raises ValueError when MuJoCo cannot load it."""
    _core.set_contact_world(system, bytes(mjb), str(label))


def add_contact_pair(
    system, g1: int, g2: int, body_frame: str, restitution: float, rest_speed: float,
    mu: float = 0.0, body_frame2: str = "", slip_impulse: bool = False,
) -> None:  # fmt: skip
    """Add the contact pair of geoms ``g1``, ``g2`` (one fixed in the world, the other's
    body frame ``body_frame``; or both on moving bodies, ``g1``'s point held on a plane of
    ``g2``'s body, ``body_frame`` ``g1``'s body frame and ``body_frame2`` ``g2``'s) to a
    ``pfaff._core.System`` after its constraints, with Newton's ``restitution``, the
    approach speed ``rest_speed`` at or below which an impact is plastic and Coulomb's
    friction ``mu`` (0: frictionless; ``src/cpp/sim/friction.hpp``); ``slip_impulse``: a
    point that slips through an impact takes Coulomb's impulse (Moreau's law), else it
    slips through frictionless. Raises ValueError naming what is wrong."""
    _core.add_contact_pair(
        system, g1, g2, body_frame, restitution, rest_speed, mu, body_frame2, bool(slip_impulse)
    )


def held_contacts(system, held, pushing: bool = True) -> list:
    """``pfaff._core.held_contacts``: the held contact points at the system's state and
    torque (its docstring lists the fields); ``pushing`` False: the least-norm forces."""
    return _core.held_contacts(system, held, pushing)


def set_held(system, held) -> None:
    """Make the ``held`` rows of a ``pfaff._core.System`` (``(limit, side)`` at its
    bound, ``(L + pair, row)`` of its last run) bilateral rows of its active set: its
    steps are then those of that fixed mode. Raises ValueError naming a bad entry."""
    _core.set_held(system, held)


def run_limited(system, tau, t0: float, t_end: float, held, fixed_grid: bool,
                record_every: int, max_events: int, event_tol: float, release_tol: float,
                hold_chunk: int, start_iterations: int, control=None,
                next_control: float = 0.0, control_period: float = 0.0,
                watch=None, memory=None):  # fmt: skip
    """``simulate_limited(..., grid="fixed" or "event")`` from the state of a
    ``pfaff._core.System`` with limits at ``t0`` to ``t_end``, ``tau`` held, in one call
    (``src/cpp/sim/limits.cpp``): ``(Status or None, events, held at the end, the most
    limits held at once, steps, Newton failures, the samples of every series of
    series.def, the controller's samples taken before each, its next instant)`` (after a
    failure: those up to it); ``held`` and the events' ``(limit, side)`` as ``(index, 0
    lower / 1 upper)``. ``control(t, n_held) -> bool``, called where a sample is due on
    the clock ``next_control + k control_period`` (restarted at each event), sets the
    torque (``set_tau``) from the system's state; False ends the run. ``watch(t, q,
    contact)``, every ``LIMITED_CHECK_EVERY`` steps, is handed the last recorded sample
    (its time, configuration and contact forces, per pair as returned); it only reads,
    and an exception it raises ends the run and is raised again. ``memory``: the last
    call's clocks (:data:`run_memory`), taken up at its end ``t0``, this run's written in."""
    return _core.run_limited(
        system, tau, t0, t_end, held, fixed_grid, record_every, max_events, event_tol,
        release_tol, hold_chunk, start_iterations, control, next_control, control_period,
        watch, memory,
    )  # fmt: skip
