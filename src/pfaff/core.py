"""The compiled step core ``pfaff._core``: which systems it can run, and its set-up.

The core (C++17 on Pinocchio, ``src/cpp``) computes, per state, M and h
(``computeAllTerms``), the frames' placements, world-aligned Jacobians and drift,
the rows of the built-in constraints, the projection (certified full-row-rank QR,
SVD with the absolute ``rank_tol`` otherwise), the direct dynamics with the three
constraint inertia matrices, the constraint force and multipliers; and runs the RK4
step loop with the Newton-Raphson position correction and the M-metric velocity
projection. The NumPy engine (:mod:`pfaff.dynamics`, :mod:`pfaff.simulate`) stays
the reference: the tests compare the two.

It runs a :class:`~pfaff.constraints.ConstraintSet` whose mechanism is a
:class:`~pfaff.mechanism.PinocchioMechanism` (its own ``compute``) and whose
constraints are all of the built-in types :class:`PointOnPlane`,
:class:`PointsCoincide`, :class:`PointOnCircle`, :class:`LockedJoint`,
:class:`FrameAligned`, :class:`Weld` and the MJCF equality types
:class:`~pfaff.constraints.coupling.JointCoupling`,
:class:`~pfaff.constraints.quat_aligned.QuatAligned` and
:class:`~pfaff.constraints.coupling.Scaled` (row factors on any of these) -- not
subclasses -- and the constraints of higher layers whose own class describes itself
to the core (``core_spec``/``core_reason``): the contact and rolling rows of
:mod:`pfaff.manipulation.rolling` on the built-in contours (src/cpp/rolling.cpp).
On a Lie group (free, ball, planar joints: nq != nv) the core's RK4
stages are Runge-Kutta-Munthe-Kaas stages, as the NumPy engine's. Anything else runs
on the NumPy engine; :func:`unsupported_reason` says why.

Force elements (:mod:`pfaff.simulate.forces`) of the built-in kinds
:class:`PointSpring` (linear or cubic, no ``law`` callable), :class:`PointDamper`,
:class:`JointSpring` and :class:`JointDamper` run in the core too (``src/cpp/forces.cpp``,
evaluated at every RK4 stage, the springs' potential in ``potential``/``energy``, the
dampers' work in ``force_work``); an :class:`AppliedForce` or a spring ``law`` is a
Python callable and keeps the run on NumPy
(:func:`pfaff.simulate.core_engine.force_reason`).
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.constraints.coupling import JointCoupling, Scaled
from pfaff.constraints.library import LockedJoint, PointOnCircle, PointOnPlane, PointsCoincide
from pfaff.constraints.quat_aligned import QuatAligned
from pfaff.constraints.weld import FrameAligned, Weld
from pfaff.mechanism.pinocchio_backend import PinocchioMechanism

try:  # the extension is built at install; a source tree without it runs on NumPy
    from pfaff import _core
except ImportError as exc:  # pragma: no cover - only without a build
    _core = None
    _IMPORT_ERROR = str(exc)
else:
    _IMPORT_ERROR = ""

SUPPORTED = (
    PointOnPlane,
    PointsCoincide,
    PointOnCircle,
    LockedJoint,
    FrameAligned,
    Weld,
    JointCoupling,
    QuatAligned,
    Scaled,
)
VARIANT_CODE = {"Mc": 0, "Mc1": 1, "Mc2": 2}


def available() -> bool:
    """True when the compiled core was built and imports."""
    return _core is not None


def unsupported_reason(cset: ConstraintSet) -> str | None:
    """Why the core cannot run ``cset`` (None when it can)."""
    if _core is None:
        return f"the compiled core is not built ({_IMPORT_ERROR})"
    mech = cset.mechanism
    if not isinstance(mech, PinocchioMechanism):
        return f"mechanism {mech.name!r} is not Pinocchio-backed"
    if type(mech).compute is not PinocchioMechanism.compute:
        return f"mechanism {mech.name!r} overrides compute()"
    for c in cset.constraints:
        while type(c) is Scaled:
            c = c.inner
        if type(c) in SUPPORTED:
            continue
        if not _compiled(c):
            return f"constraint {c.name!r} ({type(c).__name__}) is not a built-in type"
        reason = c.core_reason()
        if reason is not None:
            return f"constraint {c.name!r}: {reason}"
    names = [f.name for f in mech.model.frames]
    for frame in cset.frames:
        if names.count(frame) > 1:
            return (
                f"frame name {frame!r} is not unique in the model (the core finds frames by name)"
            )
    return None


def _compiled(c) -> bool:
    """A constraint of a higher layer that describes itself to the core: its own class
    (not a subclass, which may change the rows) defines ``core_spec(system, shared)``
    and ``core_reason()`` (e.g. :mod:`pfaff.manipulation.rolling`)."""
    return "core_spec" in type(c).__dict__ and "core_reason" in type(c).__dict__


def contour(kind: str, U: float, a: float = 1.0, b: float = 1.0, p: int = 2, bx=(), coef=()):
    """A ``pfaff._core.Contour`` (src/cpp/rolling.hpp): ``kind`` one of ``Circle``
    (radius ``a``), ``Ellipse``, ``Superellipse`` (exponent ``p``) or ``Spline``
    (breakpoints ``bx``, 8 coefficients per segment in ``coef``); ``U`` the period."""
    c = _core.Contour()
    c.kind, c.U, c.a, c.b, c.p = getattr(_core.ContourKind, kind), float(U), a, b, int(p)
    c.bx, c.coef = [float(x) for x in bx], [float(x) for x in coef]
    c.check()
    return c


def rolling_spec(contact: int, holonomic: bool):
    """The ``pfaff._core.Spec`` of one row of the rolling contact ``contact`` (an index
    of ``System.add_contact``): the contact row Q (``holonomic``) or the rolling row."""
    s = _core.Spec()
    s.kind = _core.Kind.RollContact if holonomic else _core.Kind.RollTangent
    s.dim, s.contact = 1, int(contact)
    return s


def new_force_spec(kind: str):
    """An empty ``pfaff._core.ForceSpec`` of ``kind`` (a class name of
    ``pfaff.simulate.core_engine.BUILT_IN_FORCES``, e.g. ``PointSpring``);
    :mod:`pfaff.simulate.core_engine` fills it."""
    s = _core.ForceSpec()
    s.kind = getattr(_core.ForceKind, kind)
    return s


def _identity(D: np.ndarray) -> bool:
    return D.shape == (3, 3) and np.array_equal(D, np.eye(3))


def _spec(system, c, mech=None, shared=None) -> object:
    """The core's description of one built-in constraint (Scaled: the inner one's,
    with its row factors; a constraint that describes itself: its ``core_spec``, with
    ``shared`` the dict its rows share per system, e.g. a contact's index)."""
    if isinstance(c, Scaled):
        s = _spec(system, c.inner, mech, shared)
        f = np.asarray(c.f, dtype=float)
        s.scale = f if s.scale.size == 0 else f * s.scale
        return s
    if _compiled(c):
        return c.core_spec(system, {} if shared is None else shared)
    s = _core.Spec()
    s.dim = int(c.dim)
    s.unilateral = bool(c.unilateral)
    K = _core.Kind
    if isinstance(c, PointOnPlane):
        s.kind, s.s1 = K.PointOnPlane, system.add_frame(c.frame)
        s.n, s.d = c.n, c.d
        _point(s, 1, c.point)
    elif isinstance(c, PointOnCircle):
        s.kind, s.s1 = K.PointOnCircle, system.add_frame(c.frame)
        s.c, s.rho = c.c, c.rho
        _point(s, 1, c.point)
    elif isinstance(c, PointsCoincide):
        s.kind, s.s1 = K.PointsCoincide, system.add_frame(c.frame1)
        s.s2 = -1 if c.frame2 is None else system.add_frame(c.frame2)
        _point(s, 1, c.point1)
        _point(s, 2, c.point2)
        s.target = c.target
        s.D, s.D_identity = np.ascontiguousarray(c.D), _identity(c.D)
    elif isinstance(c, LockedJoint):
        s.kind, s.iq, s.iv = K.LockedJoint, int(c.iq), int(c.iv)
        s.unbounded, s.value = bool(c.unbounded), c.value
    elif isinstance(c, FrameAligned):
        s.kind, s.s1 = K.FrameAligned, system.add_frame(c.frame1)
        s.s2 = -1 if c.frame2 is None else system.add_frame(c.frame2)
        s.R_off, s.R_right = c.R_off, c._R_right
        s.D, s.D_identity = np.ascontiguousarray(c.D), _identity(c.D)
    elif isinstance(c, JointCoupling):
        s.kind = K.JointCoupling
        s.iq, s.iv = _joint_index(mech, c.joint1)
        if c.joint2 is not None:
            s.iq2, s.iv2 = _joint_index(mech, c.joint2)
        s.c0, s.c1 = c.c0, c.c1
    elif isinstance(c, QuatAligned):
        s.kind, s.s1 = K.QuatAligned, system.add_frame(c.frame1)
        s.s2 = -1 if c.frame2 is None else system.add_frame(c.frame2)
        s.R_off = c.R_off
    elif isinstance(c, Weld):
        s.kind = K.Weld
        s.s1, s.s2 = system.add_frame(c.frame1), system.add_frame(c.frame2)
        s.R_off = c.aligned.R_off
        s.D, s.D_identity = np.eye(3), True
    else:  # pragma: no cover - unsupported_reason() filters these
        raise TypeError(f"{type(c).__name__} is not supported by the core")
    return s


def _joint_index(mech, joint: str) -> tuple[int, int]:
    """``(idx_q, idx_v)`` of a joint (the coupling's bind() has checked it)."""
    jm = mech.model.joints[mech.model.getJointId(joint)]
    return int(jm.idx_q), int(jm.idx_v)


def _point(s, k: int, offset) -> None:
    if offset is not None:
        setattr(s, f"p{k}", np.asarray(offset, dtype=float))
        setattr(s, f"has_p{k}", True)


def build(cset: ConstraintSet):
    """A ``pfaff._core.System`` for ``cset`` (check :func:`unsupported_reason` first).

    The Pinocchio model crosses over as Pinocchio's own serialisation
    (``Model.saveToString``, doubles written to round-trip precision).
    """
    reason = unsupported_reason(cset)
    if reason is not None:
        raise ValueError(f"the compiled core cannot run this system: {reason}")
    system = _core.System(cset.mechanism.model.saveToString())
    shared: dict = {}
    for c in cset.constraints:
        system.add(_spec(system, c, cset.mechanism, shared))
    return system


def control_kernel():
    """A ``pfaff._core.ControlKernel`` (the per-sample laws of
    :class:`~pfaff.control.ProjectedController`), or None without the extension."""
    return None if _core is None else _core.ControlKernel()


def task_block(frame: int = -1, rows=(), orientation: bool = False, point=None):
    """A ``pfaff._core.TaskBlock``: rows of a built-in task for ``ControlKernel.set_task``.

    ``frame >= 0``: a FrameTask on the ``frame``-th frame handed to ``task_law`` (world
    position rows ``rows`` of the point at ``point`` in the frame, then the orientation
    rows); ``frame < 0``: a JointTask on the joints ``rows``.
    """
    b = _core.TaskBlock()
    b.frame, b.rows, b.orientation = int(frame), [int(i) for i in rows], bool(orientation)
    if point is not None:
        b.point, b.has_point = np.asarray(point, dtype=float), True
    return b


def yz_kernel():
    """A ``pfaff._core.YZKernel`` (Yoshikawa-Zheng eq. 31-37 of
    :class:`~pfaff.control.YZController` in one call), or None without the core."""
    return None if _core is None else _core.YZKernel()


def yz_grasp():
    """A ``pfaff._core.YZGrasp``: the grasp terms handed to a ``YZKernel`` (or None)."""
    return None if _core is None else _core.YZGrasp()


def yz_rigid_box():
    """A ``pfaff._core.YZRigidBox`` (one sample of :class:`~pfaff.control.YZController`
    on a box held by rigid grasps, src/cpp/yz_sample.hpp), or None without the core."""
    return None if _core is None else _core.YZRigidBox()


def yz_pinned_plane():
    """A ``pfaff._core.YZPinnedPlane`` (one sample of :class:`~pfaff.control.YZController`
    on a planar object held by pins, src/cpp/yz_sample.hpp), or None without the core."""
    return None if _core is None else _core.YZPinnedPlane()


def yz_servo():
    """A ``pfaff._core.YZServo``: the servo state of eq. (41)-(43) that a
    ``YZRigidBox`` or ``YZPinnedPlane`` sample carries (or None without the core)."""
    return None if _core is None else _core.YZServo()


def options(system, opt) -> None:
    """Copy a :class:`~pfaff.simulate.SimOptions` into the core's options."""
    o = system.options
    o.dt, o.rank_tol, o.position_tol = opt.dt, opt.rank_tol, opt.position_tol
    o.max_newton, o.variant = int(opt.max_newton), VARIANT_CODE[opt.variant]
    o.newton_step_tol, o.position_floor = opt.newton_step_tol, opt.position_floor
    o.stage_projection = bool(opt.stage_projection)
    o.record_every, o.potential_offset = int(opt.record_every), opt.potential_offset
    system.options = o
