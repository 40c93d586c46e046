"""Joint limits as exact unilateral constraints: located events, impacts, held rows.

A limit keeps a one-dof joint's coordinate in ``[lower, upper]``. The run is a chain of
:func:`~pfaff.simulate.simulate` phases (:class:`~pfaff.simulate.phases.PhaseChain`), so
both engines run it unchanged:

* **Event location.** A phase's ``stop`` callback fires when a free coordinate is past a
  bound at the end of a step. The sample past it is dropped and the crossing time inside
  that step is found by Brent's method on ``s -> q_i(s) - bound``, where ``q_i(s)`` is one
  step of the run's own integrator of length ``s`` from the step's start state (on the
  same engine): the event state is the integrator's own state at the crossing, and the
  time is exact to ``event_tol`` (1e-15 s by default).
* **Impact.** The velocity is projected in the metric of M (the least change of kinetic
  energy, as :func:`~pfaff.simulate.integrator.project_state` does) onto
  ``{A v = 0, v_i = -e v_i^-}``: the loop's rows are kept and the limit row's velocity is
  reversed with the restitution ``e`` (Newton's law; ``e = 0``, plastic, by default). The
  kinetic energy lost is recorded in the event and in :attr:`LimitedRun.impact_loss`.
* **Contact.** A plastic impact (or one whose rebound velocity is below ``rest_speed``)
  holds the limit as a bilateral row :class:`~pfaff.constraints.LockedJoint` at the bound.
  With ``M a + h = tau - A^T lambda`` (pfaff's sign), the row pushes the coordinate back
  inside while ``lambda <= 0`` at a lower bound and ``lambda >= 0`` at an upper one; the
  recorded ``lambda`` is checked at every sample and the limit is released at the first
  sample where it would pull (complementarity). The release is located to the sample
  (``dt``), not root-found.

By default the steps after an event are of ``dt`` from the event (``grid="event"``);
``grid="fixed"`` finishes the step an event falls in with a short step to its end, so
the samples stay on ``t0 + k dt`` (plus the events' own samples) and a run cut into
pieces (each from where the last ended, with its ``held`` set) is the same run: the
stepping of :class:`pfaff.Simulator`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
from scipy.optimize import brentq

from pfaff.constraints.base import ConstraintSet
from pfaff.constraints.library import LockedJoint, joint_coordinate
from pfaff.simulate.integrator import project_state, simulate
from pfaff.simulate.options import SimOptions
from pfaff.simulate.phases import PhaseChain
from pfaff.simulate.trajectory import Trajectory

#: steps of a held phase between two checks of its multipliers
HOLD_CHUNK = 64
#: a held limit is released when its multiplier pulls by more than this [N m or N]
RELEASE_TOL = 1e-10


@dataclass(frozen=True)
class JointLimit:
    """``lower <= q_joint <= upper`` for a one-dof (hinge or slide) joint.

    Parameters
    ----------
    joint : the joint's name (Pinocchio mechanisms) or its coordinate index (nq == nv).
    lower, upper : the bounds [rad or m]; ``-inf`` / ``inf`` for a one-sided limit.
    restitution : Newton's coefficient ``e`` in [0, 1]: the limit row's velocity after
        an impact is ``-e`` times the one before (0: plastic, the limit is then held).
    """

    joint: str | int
    lower: float
    upper: float
    restitution: float = 0.0

    def __post_init__(self) -> None:
        lo, hi, e = float(self.lower), float(self.upper), float(self.restitution)
        if np.isnan(lo) or np.isnan(hi) or not lo < hi:
            raise ValueError(
                f"joint limit of {self.joint!r}: lower = {self.lower!r} must be < upper = "
                f"{self.upper!r} (numbers; -inf/inf for a one-sided limit)"
            )
        if not 0.0 <= e <= 1.0:
            raise ValueError(
                f"joint limit of {self.joint!r}: restitution = {self.restitution!r}, valid: [0, 1]"
            )


@dataclass
class LimitEvent:
    """One event of a limited run.

    ``kind`` is ``"impact"`` or ``"release"``; ``side`` ``"lower"`` or ``"upper"``;
    ``v_pre`` / ``v_post`` the joint's velocity before and after [rad/s or m/s];
    ``energy_lost`` the kinetic energy the impact took [J] (0 for a release).
    """

    t: float
    joint: str | int
    kind: str
    side: str
    v_pre: float
    v_post: float
    energy_lost: float = 0.0


@dataclass
class LimitedRun:
    """A run with limits: the phases joined into one trajectory, and the events."""

    trajectory: Trajectory
    events: list[LimitEvent] = field(default_factory=list)
    #: the limits held at the end (limit index -> ``"lower"`` / ``"upper"``): the
    #: ``held`` of a run that goes on from here
    held: dict[int, str] = field(default_factory=dict)

    @property
    def impact_loss(self) -> np.ndarray:
        """Kinetic energy taken by the impacts up to each sample [J]: ``energy -
        energy[0] + impact_loss`` is the balance of a run without other losses."""
        t = self.trajectory.t
        out = np.zeros(len(t))
        for e in self.events:
            out[t >= e.t] += e.energy_lost
        return out


def metric_impact(
    M: np.ndarray, A: np.ndarray, v: np.ndarray, iv: int, target: float, rank_tol: float = 1e-10
) -> np.ndarray:
    """The velocity nearest to ``v`` in the metric ``M`` with ``A v = 0`` and ``v[iv] =
    target``: ``v + M^-1 G^T (G M^-1 G^T)^+ (b - G v)``, ``G = [A; e_iv^T]``, the
    pseudo-inverse by SVD (singular values below ``rank_tol`` times the largest dropped,
    so a limit row dependent on the loop's rows is handled)."""
    nv = len(v)
    row = np.zeros((1, nv))
    row[0, iv] = 1.0
    G = np.vstack([np.asarray(A, float).reshape(-1, nv), row])
    b = np.zeros(len(G))
    b[-1] = target
    MiGt = np.linalg.solve(M, G.T)
    y = np.linalg.pinv(G @ MiGt, rcond=rank_tol, hermitian=True) @ (b - G @ v)
    return v + MiGt @ y


def _cut(tr: Trajectory, n: int) -> None:
    """Keep the first ``n`` samples of ``tr``."""
    for col in (*tr.rows.values(), *tr.signals.values()):
        del col[n:]
    tr.stopped_at = None


class _Bound:
    def __init__(self, lim: JointLimit, mech) -> None:
        self.lim = lim
        self.iq, self.iv, nq = joint_coordinate(mech, lim.joint)
        if nq != 1:
            raise ValueError(
                f"joint limit of {lim.joint!r}: the joint has {nq} coordinates; limits are "
                "for one-dof hinge and slide joints (not continuous ones)"
            )


def simulate_limited(
    cset: ConstraintSet,
    q0: np.ndarray,
    v0: np.ndarray,
    t_end: float,
    limits: list[JointLimit],
    options: SimOptions | None = None,
    controller=None,
    forces=(),
    t0: float = 0.0,
    tau: np.ndarray | None = None,
    event_tol: float = 1e-15,
    release_tol: float = RELEASE_TOL,
    rest_speed: float = 1e-9,
    held: dict[int, str] | None = None,
    grid: str = "event",
) -> LimitedRun:
    """Simulate ``cset`` from ``(q0, v0)`` to ``t_end`` with the joint ``limits`` held as
    unilateral constraints (module docstring: event location, impact, contact).

    Parameters
    ----------
    cset, q0, v0, t_end, options, controller, forces, t0, tau : as for
        :func:`~pfaff.simulate.simulate` (the controller is sampled again at each event).
    limits : the :class:`JointLimit` s.
    event_tol : the crossing time's tolerance [s].
    release_tol : a held limit is released when its multiplier pulls by more than this
        [N m or N].
    rest_speed : an impact slower than this [rad/s or m/s] is plastic (the rebound of an
        elastic limit dies out instead of chattering).
    held : the limits held at the start, ``{index in limits: "lower" or "upper"}`` (the
        ``held`` of the run this one goes on from; the joint must be at that bound):
        they start as held rows, not as new impacts. Default: none.
    grid : ``"event"`` (default): after an event the steps are of ``dt`` from it;
        ``"fixed"``: the step an event falls in is finished to its end, so the samples
        stay on ``t0 + k dt`` (``t_end - t0`` should then be a multiple of ``dt``).

    Returns
    -------
    LimitedRun: the joined trajectory, the events and the limits held at the end. A start
    outside a limit is refused (ValueError naming the joint, its value and its range), as
    are a bad ``grid`` and a ``held`` limit not at its bound.
    """
    opt = options or SimOptions()
    if grid not in ("event", "fixed"):
        raise ValueError(f"grid = {grid!r}; valid: 'event', 'fixed'")
    mech = cset.mechanism
    bounds = [_Bound(lim, mech) for lim in limits]
    q, v = project_state(cset, np.asarray(q0, float), np.asarray(v0, float), opt)
    held = _start_held(held, bounds, q)  # bound index -> side held
    check_inside(limits, mech, q, held)
    chain = PhaseChain(q, v, opt, controller, t0, forces)
    chain.tau = None if tau is None else np.asarray(tau, float)
    events: list[LimitEvent] = []
    while t_end - chain.t > 1e-9 * opt.dt:
        cs = held_rows(cset, limits, held)
        watch = _Watch(bounds, held)
        rest = t_end - chain.t
        n = int(np.floor(rest / opt.dt + 1e-9))  # whole steps left (the grid moves at events)
        if grid == "fixed" and (to_grid := _to_grid(chain.t, t0, opt.dt)) is not None:
            rest, n = min(rest, to_grid), 0  # finish the step the event fell in
        if held:
            n = min(n, HOLD_CHUNK)
        if n == 0:  # the run's last sliver: one short step
            o = dataclasses.replace(opt, dt=rest)
            tr = chain.run(cs, rest, stop=watch, options=o)
        else:
            tr = chain.run(cs, n * opt.dt, stop=watch)
        if held and _release(chain, tr, cset.dim, held, bounds, events, release_tol):
            continue
        if tr.stopped_at is None and len(tr) > 1:  # simulate's stop skips the last sample
            a = tr.arrays()
            last = SimpleNamespace(q=a["q"][-1], v=a["v"][-1])
            tr.stopped_at = float(a["t"][-1]) if watch(a["t"][-1], last, None) else None
        if tr.stopped_at is None:
            continue
        i, s = _locate(cs, chain, tr, watch, bounds, opt, forces, event_tol)
        chain.run(cs, s, options=dataclasses.replace(opt, dt=s)) if s > 0 else None
        _impact(chain, cs, bounds, i, held, events, opt, rest_speed)
    return LimitedRun(chain.trajectory(cset.dim + len(bounds)), events, dict(held))


def _start_held(held, bounds, q) -> dict[int, str]:
    """The ``held`` argument checked: indices of ``bounds``, sides, the joint at its bound."""
    out: dict[int, str] = {}
    for i, side in (held or {}).items():
        if not (isinstance(i, int | np.integer) and 0 <= i < len(bounds)):
            raise ValueError(f"held: limit index {i!r}, valid: 0 to {len(bounds) - 1}")
        if side not in ("lower", "upper"):
            raise ValueError(f"held: side {side!r} of limit {i}, valid: 'lower', 'upper'")
        b, x = bounds[i], limit_value(bounds[i].lim, side)
        if abs(q[b.iq] - x) > 1e-9:
            raise ValueError(
                f"held: joint {b.lim.joint!r} is held at its {side} bound {x!r} but q = "
                f"{float(q[b.iq])!r}"
            )
        out[int(i)] = side
    return out


def _to_grid(t: float, t0: float, dt: float) -> float | None:
    """The time from ``t`` to the next point of the grid ``t0 + k dt`` when ``t`` is off
    it (an event's time), else None."""
    k = (t - t0) / dt
    below = np.floor(k + 1e-9)
    if k - below <= 1e-9:
        return None
    return float(t0 + (below + 1) * dt - t)


def limit_value(lim: JointLimit, side: str) -> float:
    """The bound of ``lim`` on ``side`` ("lower" or "upper")."""
    return float(lim.lower if side == "lower" else lim.upper)


def held_rows(cset: ConstraintSet, limits: list[JointLimit], held: dict) -> ConstraintSet:
    """The loop's rows plus a :class:`~pfaff.constraints.LockedJoint` row at its bound per
    held limit (``held``: limit index -> side), in the order of ``held``."""
    locks = [
        LockedJoint(limits[i].joint, limit_value(limits[i], side), f"limit {i}")
        for i, side in held.items()
    ]
    return ConstraintSet(cset.mechanism, [*cset.constraints, *locks])


def pulling(side: str, lam: np.ndarray, tol: float) -> np.ndarray:
    """Where a held limit's multipliers ``lam`` pull (by more than ``tol``): with
    ``M a + h = tau - A^T lambda`` the row pushes while ``lambda <= 0`` at a lower bound
    and ``lambda >= 0`` at an upper one."""
    sign = 1.0 if side == "upper" else -1.0
    return sign * lam < -tol


def check_inside(limits: list[JointLimit], mech, q: np.ndarray, held=(), hint: str = "") -> None:
    """Refuse a ``q`` outside a limit not held (ValueError naming the joint, its value,
    its range, then ``hint``)."""
    for i, lim in enumerate(limits):
        x = float(q[joint_coordinate(mech, lim.joint)[0]])
        if i not in held and not lim.lower - 1e-12 <= x <= lim.upper + 1e-12:
            raise ValueError(
                f"the start is outside the limit of joint {lim.joint!r}: q = {x!r} is not "
                f"in [{lim.lower!r}, {lim.upper!r}]{hint}"
            )


class _Watch:
    """The ``stop`` callback: a free coordinate past a bound; keeps the previous state."""

    def __init__(self, bounds, held) -> None:
        self.bounds, self.held = bounds, held
        self.prev = self.last = None

    def __call__(self, t, snap, cev) -> bool:
        self.prev, self.last = self.last, (t, snap.q.copy(), snap.v.copy())
        for i, b in enumerate(self.bounds):
            if i not in self.held and not b.lim.lower <= snap.q[b.iq] <= b.lim.upper:
                return True
        return False


def _locate(cs, chain, tr, watch, bounds, opt, forces, event_tol):
    """Drop the sample past the bound, go back to the step's start and return ``(limit
    index, s)``: the first limit crossed and the crossing time after the start."""
    t1, q1, _ = watch.last
    if watch.prev is None:  # the phase's first sample is past a bound (after a release)
        i = next(i for i, b in enumerate(bounds) if not b.lim.lower <= q1[b.iq] <= b.lim.upper)
        return i, 0.0
    t_a, q_a, v_a = watch.prev
    tau = tr.arrays()["tau"][-2]
    _cut(tr, len(tr) - 1)
    chain.t, chain.q, chain.v, chain.tau = t_a, q_a, v_a, tau
    chain.next_sample = t1  # the controller is not sampled inside the partial step
    dt = t1 - t_a
    best = None
    for i, b in enumerate(bounds):
        if i in watch.held or b.lim.lower <= q1[b.iq] <= b.lim.upper:
            continue
        bound = b.lim.lower if q1[b.iq] < b.lim.lower else b.lim.upper

        def f(s, b=b, bound=bound):
            if s <= 0:
                return q_a[b.iq] - bound
            o = dataclasses.replace(opt, dt=s, progress=False)
            r = simulate(cs, q_a, v_a, t_a + s, o, tau=tau, t0=t_a, forces=forces)
            return r.arrays()["q"][-1][b.iq] - bound

        s = 0.0 if f(0.0) * f(dt) > 0 else brentq(f, 0.0, dt, xtol=event_tol, rtol=4.5e-16 * 2)
        if best is None or s < best[1]:
            best = (i, s)
    return best


def _impact(chain, cs, bounds, i, held, events, opt, rest_speed) -> None:
    """The impact map at the crossing of limit ``i``: the M-metric projection onto the
    loop's admissible velocities with the limit row's velocity reversed (times e)."""
    b = bounds[i]
    side = "lower" if chain.q[b.iq] <= 0.5 * (b.lim.lower + b.lim.upper) else "upper"
    q = chain.q.copy()
    q[b.iq] = limit_value(b.lim, side)  # the located state is on the bound to event_tol
    snap = cs.mechanism.compute(q, chain.v, cs.frames)
    A = cs.evaluate(snap).A if cs.dim else np.zeros((0, len(chain.v)))
    v_pre = chain.v[b.iv]
    e = b.lim.restitution if abs(v_pre) > rest_speed else 0.0
    v = metric_impact(snap.M, A, chain.v, b.iv, -e * v_pre, opt.rank_tol)
    loss = 0.5 * float(chain.v @ snap.M @ chain.v - v @ snap.M @ v)
    chain.q, chain.v = q, v
    chain.resample()
    if e == 0.0:
        held[i] = side
    events.append(LimitEvent(chain.t, b.lim.joint, "impact", side, v_pre, v[b.iv], loss))


def _release(chain, tr, m0, held, bounds, events, tol) -> bool:
    """Release the first held limit whose recorded multiplier pulls; the phase is cut at
    that sample. True when one was released."""
    lam = tr.arrays()["lambda"]
    order = list(held)
    first = None
    for col, i in enumerate(order):
        bad = np.flatnonzero(pulling(held[i], lam[:, m0 + col], tol))
        if bad.size and (first is None or bad[0] < first[0]):
            first = (int(bad[0]), i)
    if first is None:
        return False
    k, i = first
    a = tr.arrays()
    _cut(tr, k + 1)
    chain.t, chain.q, chain.v, chain.tau = float(a["t"][k]), a["q"][k], a["v"][k], a["tau"][k]
    chain.resample()
    side = held.pop(i)
    iv = bounds[i].iv
    events.append(
        LimitEvent(chain.t, bounds[i].lim.joint, "release", side, a["v"][k][iv], a["v"][k][iv])
    )
    return True
