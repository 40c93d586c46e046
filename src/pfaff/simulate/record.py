"""The per-step record a controller receives, and the Controller protocol.

At each controller sample the simulator hands the controller one
:class:`StepRecord`: what it has already computed at that state -- the
snapshot (M, h, g, frames), the constraint evaluation (A, drift, Phi), the
projection (P, A^+, N; one factorisation of A, the one the step itself uses)
and, if the controller declares ``needs_sensors``, the force-sensor readings
(the constraint force F and multipliers lambda that the torque held until now
produces). A controller reads these instead of evaluating the constraints or
factoring A again.

A controller is an object that follows :class:`Controller`::

    class MyPD:
        frames = ("tool",)          # frames the snapshot must hold (besides the constraints')
        needs_sensors = False       # True: record.sensors holds {"F", "lambda"}
        signals: dict = {}          # internal signals of the last sample (recorded)

        def __call__(self, t, rec):
            N = rec.N                # orthonormal basis of N(A), no second SVD
            e = rec.q[:7] - q_ref
            return rec.P @ (rec.snap.M @ (-kp * e - kd * rec.v) + rec.snap.h)

A plain callable ``f(t, snap)`` still works: :func:`as_controller` wraps it in a
:class:`SnapshotController` (``frames`` taken from ``f.frames`` if it has them,
no sensors, ``f.signals`` recorded if it keeps a dict there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from pfaff import dynamics as dyn
from pfaff.constraints.base import ConstraintEval, ConstraintSet
from pfaff.linalg import DEFAULT_RANK_TOL, null_space
from pfaff.mechanism.base import Snapshot

__all__ = ["Controller", "SnapshotController", "StepRecord", "as_controller"]


class StepRecord:
    """What the simulator computed at one controller sample.

    Attributes
    ----------
    t : time of the sample [s].
    snap : the :class:`~pfaff.mechanism.Snapshot` at the state (M, h, g, the
        constraints' and the controller's frames).
    constraints : the :class:`~pfaff.constraints.ConstraintEval` at the state
        (``A``, ``drift``, ``phi``).
    sensors : ``{"F": (nv,), "lambda": (m,)}``, the constraint force and the
        multipliers produced by the torque held up to this instant (what a force
        sensor reads just before the update), when the controller declared
        ``needs_sensors``; else None.
    rank_tol : the absolute singular-value threshold of the projection.

    Notes
    -----
    The projection (:attr:`projection`, :attr:`P`, :attr:`pinv`, :attr:`N`,
    :attr:`Cv`) is the one the simulator takes for the step at this state (one
    factorisation of A, with the null-space basis). A record built outside a
    simulation (:meth:`at`) takes it on first use, once.
    """

    __slots__ = ("t", "snap", "constraints", "sensors", "rank_tol", "_proj", "_pinv")

    def __init__(
        self,
        t: float,
        snap: Snapshot,
        constraints: ConstraintEval,
        projection: dyn.Projection | None = None,
        sensors: Mapping[str, np.ndarray] | None = None,
        rank_tol: float = DEFAULT_RANK_TOL,
    ) -> None:
        self.t, self.snap, self.constraints = t, snap, constraints
        self.sensors, self.rank_tol = sensors, rank_tol
        self._proj, self._pinv = projection, None

    @classmethod
    def at(
        cls,
        cset: ConstraintSet,
        snap: Snapshot,
        t: float = 0.0,
        sensors: Mapping[str, np.ndarray] | None = None,
        rank_tol: float = DEFAULT_RANK_TOL,
    ) -> StepRecord:
        """A record at ``snap`` outside a simulation (tests, benchmarks, one-off calls):
        evaluates the constraints once; the projection is taken on first use."""
        return cls(t, snap, cset.evaluate(snap), None, sensors, rank_tol)

    # -- the state --------------------------------------------------------------------
    @property
    def q(self) -> np.ndarray:
        """Configuration (``snap.q``)."""
        return self.snap.q

    @property
    def v(self) -> np.ndarray:
        """Velocity (``snap.v``)."""
        return self.snap.v

    @property
    def A(self) -> np.ndarray:
        """(m, nv) constraint Jacobian (``constraints.A``)."""
        return self.constraints.A

    # -- the projection (Aghili eq. 4, 15, 16) ------------------------------------------
    @property
    def projection(self) -> dyn.Projection:
        """The :class:`~pfaff.dynamics.Projection` at this state, with ``N``."""
        p = self._proj
        if p is None:
            c = self.constraints
            p = self._proj = dyn.projection(c.A, c.drift, self.rank_tol, with_null=True)
        return p

    @property
    def P(self) -> np.ndarray:
        """(nv, nv) orthogonal projector onto N(A): ``P = I - A^+ A``."""
        return self.projection.P

    @property
    def Cv(self) -> np.ndarray:
        """(nv,) normal acceleration ``C v = -A^+ drift`` (Aghili eq. 16)."""
        return self.projection.Cv

    @property
    def rank(self) -> int:
        """Numerical rank of A (threshold ``rank_tol``)."""
        return self.projection.rank

    @property
    def N(self) -> np.ndarray:
        """(nv, nv - rank) orthonormal basis of N(A) (the independent directions, Sec. 7.1)."""
        p = self.projection
        if p.N is None:  # a projection handed in without the basis: complete V1 once
            p.N = null_space(p.V1.T, 0.5) if p.V1.shape[1] else np.eye(p.P.shape[0])
        return p.N

    @property
    def pinv(self) -> np.ndarray:
        """(nv, m) Moore-Penrose pseudo-inverse ``A^+`` (rank decided by ``rank_tol``),
        formed from the factors of the projection on first use."""
        if self._pinv is None:
            p = self.projection
            if p.Rinv is not None:  # A^T = V1 R: A^+ = V1 R^-T
                self._pinv = p.V1 @ p.Rinv.T
            else:  # A = U1 diag(sigma) V1^T: A^+ = V1 diag(1/sigma) U1^T
                self._pinv = (p.V1 / p.sigma) @ p.U1.T
        return self._pinv


@runtime_checkable
class Controller(Protocol):
    """A sampled-data controller ``tau = controller(t, record)``.

    Attributes
    ----------
    frames : names of the frames the controller reads from ``record.snap``
        (computed besides the constraints' own).
    needs_sensors : True if the controller reads ``record.sensors`` (then the
        simulator computes the force-sensor readings before the call; else
        ``record.sensors`` is None).
    signals : the controller's internal signals of its last sample (name ->
        float or array), recorded into the trajectory; may be empty.

    Notes
    -----
    ``__call__(t, record)`` returns the torque (nv,), held until the next sample.

    Optional: a ``held_law`` lowering of the controller's exact type
    (:mod:`pfaff.lowering`: ``lowers(MyLaw, category="held_law")(fn)`` with
    ``fn(controller, q0)`` -> a list of force elements that have lowerings) whose
    summed force at a state is the controller's torque there, set up from the start
    configuration ``q0``. The compiled core then samples and holds them itself, at
    the same instants, without calling Python per sample (no ``signals`` are
    recorded then); the NumPy engine calls ``__call__`` as always (e.g.
    :class:`~pfaff.control.blind_grasp.BlindGrasp`).
    """

    frames: tuple[str, ...]
    needs_sensors: bool
    signals: dict

    def __call__(self, t: float, record: StepRecord) -> np.ndarray: ...


class SnapshotController:
    """Adapter: a plain callable ``f(t, snap) -> tau`` as a :class:`Controller`.

    ``frames``: the frames ``f`` reads (default: ``f.frames`` if it has them,
    else none). ``f`` gets no sensor readings. If ``f`` keeps a dict in
    ``f.signals``, it is recorded.
    """

    needs_sensors = False

    def __init__(self, fn: Callable[[float, Snapshot], np.ndarray], frames=None) -> None:
        if not callable(fn):
            raise TypeError(f"a controller must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.frames = tuple(getattr(fn, "frames", ()) if frames is None else frames)

    @property
    def signals(self) -> dict:
        sig = getattr(self.fn, "signals", None)
        return sig if isinstance(sig, dict) else {}

    def __call__(self, t: float, record: StepRecord) -> np.ndarray:
        return self.fn(t, record.snap)


def as_controller(controller) -> Controller | None:
    """The :class:`Controller` the simulator calls: ``controller`` itself if it
    follows the protocol (has ``frames``, ``needs_sensors`` and ``signals``), a
    :class:`SnapshotController` around a plain callable ``f(t, snap)``, None for None.

    Raises ``TypeError`` for something that is not callable or declares
    ``frames`` / ``needs_sensors`` of the wrong type.
    """
    if controller is None:
        return None
    if isinstance(controller, Controller):
        if isinstance(controller.frames, str) or not all(
            isinstance(f, str) for f in controller.frames
        ):
            raise TypeError(
                f"controller.frames must be a tuple of frame names, got {controller.frames!r}"
            )
        if not isinstance(controller.needs_sensors, (bool, np.bool_)):
            raise TypeError(
                f"controller.needs_sensors must be True or False, got {controller.needs_sensors!r}"
            )
        return controller
    return SnapshotController(controller)
