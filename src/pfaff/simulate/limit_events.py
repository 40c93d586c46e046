"""The events of a limited run: location, impact, release, and the rule that bounds them.

:func:`~pfaff.simulate.limits.simulate_limited` runs phases; this module holds what it
does between them (its module docstring tells the whole story):

* :func:`locate` -- the crossing of a bound inside a step, by Brent's method on
  ``s -> x(s) - bound`` (``x`` the joint's coordinate or the tendon's length) over the
  run's own integrator (a phase that starts on the bound
  and leaves it inwards is bracketed past that start, so a rebound is not taken for a
  new crossing at ``s = 0``);
* :func:`impact` -- Newton's law in the metric of M (:func:`metric_impact`);
* :func:`release` -- a held limit whose multiplier pulls;
* :class:`EventGuard` -- no chatter (Zeno): an impact slower than ``rest_speed`` is
  plastic and holds the stop; after ``max_events`` events within one step ``dt`` every
  impact is plastic and no held limit is released before a step has passed; a limit
  impacted again within one step of its release is held for a step. The events of one
  step are therefore at most ``max_events`` plus one impact per limit, and time moves on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from pfaff.simulate.integrator import simulate
from pfaff.simulate.trajectory import Trajectory

#: events within one step ``dt`` after which the step's stops are held (Zeno)
MAX_EVENTS_PER_STEP = 8
#: a step's start within this of a bound is on it [m or rad]: a tendon's length or a ball's
#: angle put on its bound by an impact carries the round-off of its coordinates (a joint's
#: coordinate is set to the bound exactly), which must not read as past it
ON_BOUND = 1e-13


@dataclass
class LimitEvent:
    """One event of a limited run.

    ``joint`` names the limit (the joint, or a tendon limit's tendon); ``kind`` is
    ``"impact"`` or ``"release"``; ``side`` ``"lower"`` or ``"upper"``; ``v_pre`` /
    ``v_post`` the joint's velocity (the tendon's rate) before and after [rad/s or m/s];
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
class ContactEvent:
    """An event of a contact pair (``Simulator.events``).

    Attributes
    ----------
    t : the time [s].
    kind : ``"impact"``, ``"release"`` (a held point's normal force pulled), ``"stick"``
        (a slipping point's slip stopped and the force it needs lies inside the friction
        cone), ``"slip"`` (a stuck point's friction force left the cone, or a stopped
        slip goes on along the slip it impends) or ``"jam"`` (a slipping point whose
        friction would make its normal force pull, Painleve's case, stuck by a tangential
        impulse).
    geom1, geom2 : the pair's geoms (geom1 fixed in the world).
    v_pre, v_post : an impact's normal velocity of the pair's first point before and
        after it [m/s] (negative: approaching; 0 for a release); a stick's or a slip's
        slip speed before and after it [m/s].
    energy_lost : the kinetic energy the impact (a stick's or a jam's impulse) took [J].
    """

    t: float
    kind: str
    geom1: str
    geom2: str
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
    #: the contact rows held at the end ``(len(limits) + pair, row)``: the core's
    contact_held: list[tuple[int, int]] = field(default_factory=list)
    #: per sample and contact pair (the system's ``contacts.pairs``): the normal force
    #: the still geom exerts [N], then the friction force's x, y, z in the world [N]
    #: (the held points' sums); None without contact pairs
    contact_force: np.ndarray | None = None

    @property
    def impact_loss(self) -> np.ndarray:
        """Kinetic energy taken by the impacts up to each sample [J]: ``energy -
        energy[0] + impact_loss`` is the balance of a run without other losses."""
        t = self.trajectory.t
        out = np.zeros(len(t))
        for e in self.events:
            out[t >= e.t] += e.energy_lost
        return out


def limit_value(lim, side: str) -> float:
    """The bound of ``lim`` on ``side`` ("lower" or "upper")."""
    return float(lim.lower if side == "lower" else lim.upper)


def pulling(side: str, lam: np.ndarray, tol: float) -> np.ndarray:
    """Where a held limit's multipliers ``lam`` pull (by more than ``tol``): with
    ``M a + h = tau - A^T lambda`` the row pushes while ``lambda <= 0`` at a lower bound
    and ``lambda >= 0`` at an upper one."""
    sign = 1.0 if side == "upper" else -1.0
    return sign * lam < -tol


def metric_impact(
    M: np.ndarray,
    A: np.ndarray,
    v: np.ndarray,
    iv: int | np.ndarray,
    target: float,
    rank_tol: float = 1e-10,
) -> np.ndarray:
    """The velocity nearest to ``v`` in the metric ``M`` with ``A v = 0`` and ``v[iv] =
    target``: ``v + M^-1 G^T (G M^-1 G^T)^+ (b - G v)``, ``G = [A; e_iv^T]``, the
    pseudo-inverse by SVD (singular values below ``rank_tol`` times the largest dropped,
    so a limit row dependent on the loop's rows is handled). ``iv`` an (nv,) row ``r``
    instead of an index: ``r . v = target`` (a tendon's rate)."""
    nv = len(v)
    row = np.zeros((1, nv))
    if np.ndim(iv):
        row[0] = iv
    else:
        row[0, iv] = 1.0
    G = np.vstack([np.asarray(A, float).reshape(-1, nv), row])
    b = np.zeros(len(G))
    b[-1] = target
    MiGt = np.linalg.solve(M, G.T)
    y = np.linalg.pinv(G @ MiGt, rcond=rank_tol, hermitian=True) @ (b - G @ v)
    return v + MiGt @ y


class EventGuard:
    """The no-chatter rule of one limited run (module docstring).

    Parameters
    ----------
    dt : the step [s]: the window events are counted in, and how long a stop stays held.
    rest_speed : an impact whose approach speed is at most this [rad/s or m/s] is plastic.
    max_events : events within one step after which impacts are plastic and held stops
        are kept for a step.
    """

    def __init__(self, dt: float, rest_speed: float, max_events: int = MAX_EVENTS_PER_STEP):
        self.dt, self.rest_speed, self.max_events = float(dt), float(rest_speed), int(max_events)
        self.times: list[float] = []  # the events of the last step
        self.released: dict[int, float] = {}  # limit -> time of its last release
        self.pinned: dict[int, float] = {}  # limit -> not released before this time

    def count(self, t: float) -> None:
        """Count an event at ``t``; only the last step's are kept."""
        self.times = [x for x in self.times if x > t - self.dt] + [t]

    def saturated(self, t: float) -> bool:
        """``max_events`` or more events within the step before ``t``."""
        return sum(x > t - self.dt for x in self.times) >= self.max_events

    def plastic(self, i: int, t: float, approach: float, held) -> bool:
        """Whether the impact of limit ``i`` at ``t`` with ``approach`` speed is plastic
        (and the stop held); pins the stops the rule holds for a step."""
        again = t - self.released.get(i, -np.inf) < self.dt
        full = self.saturated(t)
        if full:
            for j in held:
                self.pinned[j] = max(self.pinned.get(j, -np.inf), t + self.dt)
        if again or full:
            self.pinned[i] = t + self.dt
        return again or full or approach <= self.rest_speed

    def may_release(self, i: int, t: np.ndarray) -> np.ndarray:
        """Which sample times ``t`` limit ``i`` may be released at."""
        return t >= self.pinned.get(i, -np.inf)


def cut(tr: Trajectory, n: int) -> None:
    """Keep the first ``n`` samples of ``tr``."""
    for col in (*tr.rows.values(), *tr.signals.values()):
        del col[n:]
    tr.stopped_at = None


def thin(tr: Trajectory, every: int) -> None:
    """Keep the samples of a phase recorded at every step that a phase recorded with
    ``record_every = every`` keeps: every ``every``-th step and the last (where the
    phase stopped, was cut or ended)."""
    n = len(tr)
    if every == 1 or n == 0:
        return
    keep = [k for k in range(n) if k % every == 0 or k == n - 1]
    for col in (*tr.rows.values(), *tr.signals.values()):
        col[:] = [col[k] for k in keep if k < len(col)]


def outside(b, x: float, slack: float) -> bool:
    """Coordinate ``x`` past a bound of ``b``'s limit by more than ``slack``."""
    return x < b.lim.lower - slack or x > b.lim.upper + slack


class Watch:
    """The ``stop`` callback: a free coordinate past a bound by more than ``slack`` (the
    run's ``position_tol``: a release at the bound does not read round-off as a
    crossing); keeps the previous state."""

    def __init__(self, bounds, held, slack: float = 0.0) -> None:
        self.bounds, self.held, self.slack = bounds, held, float(slack)
        self.prev = self.last = None

    def __call__(self, t, snap, cev) -> bool:
        self.prev, self.last = self.last, (t, snap.q.copy(), snap.v.copy())
        return any(
            i not in self.held and outside(b, b.value(snap.q), self.slack)
            for i, b in enumerate(self.bounds)
        )


def locate(cs, chain, tr, watch, bounds, opt, forces, event_tol):
    """Drop the sample past the bound, go back to the step's start and return ``(limit
    index, s)``: the first limit crossed and the crossing time after the start."""
    t1, q1, _ = watch.last
    past = [
        i
        for i, b in enumerate(bounds)
        if i not in watch.held and outside(b, b.value(q1), watch.slack)
    ]
    if watch.prev is None:  # the phase's first sample is past a bound (after a release)
        return past[0], 0.0
    t_a, q_a, v_a = watch.prev
    tau = tr.arrays()["tau"][-2]
    cut(tr, len(tr) - 1)
    chain.t, chain.q, chain.v, chain.tau = t_a, q_a, v_a, tau
    chain.next_sample = t1  # the controller is not sampled inside the partial step
    dt = t1 - t_a
    best = None
    for i in past:
        b = bounds[i]
        lower = b.value(q1) < b.lim.lower
        bound, sign = (b.lim.lower, 1.0) if lower else (b.lim.upper, -1.0)

        x0 = b.value(q_a)
        x0 = bound if abs(x0 - bound) <= ON_BOUND else x0  # put on it by an impact

        def g(s, b=b, bound=bound, sign=sign, x0=x0):  # > 0 inside
            if s <= 1e-9 * dt:  # below the time's resolution: the start's Taylor line
                return sign * (x0 + b.rate(q_a, v_a) * s - bound)
            o = dataclasses.replace(opt, dt=s, progress=False, control_dt=None)
            r = simulate(cs, q_a, v_a, t_a + s, o, tau=tau, t0=t_a, forces=forces)
            return sign * (b.value(r.arrays()["q"][-1]) - bound)

        s = _crossing(g, sign * b.rate(q_a, v_a), dt, event_tol)
        if best is None or s < best[1]:
            best = (i, s)
    return best


def _crossing(g, rate: float, dt: float, event_tol: float) -> float:
    """The first root of ``g`` (inside > 0) in ``(0, dt]`` with ``g(dt) < 0``; 0 when the
    start is past the bound, or on it and not moving inside (``rate``: ``g'(0)``). A
    start on the bound that moves inside is bracketed from where ``g`` is positive."""
    g0, lo = g(0.0), 0.0
    if g0 < 0 or (g0 == 0 and rate <= 0):
        return 0.0
    if g0 == 0:
        lo = next((dt * 0.5**k for k in range(1, 60) if g(dt * 0.5**k) > 0), None)
        if lo is None:
            return 0.0
    if g(dt) >= 0:  # the step's own sample was past by round-off only
        return dt
    return float(brentq(g, lo, dt, xtol=event_tol, rtol=4.5e-16 * 2))


def impact(chain, cs, bounds, i, held, events, opt, guard: EventGuard) -> None:
    """The impact map at the crossing of limit ``i``: the M-metric projection onto the
    loop's admissible velocities with the limit row's velocity reversed (times e), or
    stopped (held) when :meth:`EventGuard.plastic` says so."""
    b = bounds[i]
    side = "lower" if b.value(chain.q) <= 0.5 * (b.lim.lower + b.lim.upper) else "upper"
    q = b.on_bound(chain.q, limit_value(b.lim, side))  # located on the bound to event_tol
    snap = cs.mechanism.compute(q, chain.v, cs.frames)
    A = cs.evaluate(snap).A if cs.dim else np.zeros((0, len(chain.v)))
    v_pre = b.rate(q, chain.v)
    approach = max(0.0, -v_pre if side == "lower" else v_pre)
    e = 0.0 if guard.plastic(i, chain.t, approach, held) else b.lim.restitution
    v = metric_impact(snap.M, A, chain.v, b.row(q), -e * v_pre, opt.rank_tol)
    loss = 0.5 * float(chain.v @ snap.M @ chain.v - v @ snap.M @ v)
    chain.q, chain.v = q, v
    chain.resample()
    if e == 0.0:
        held[i] = side
    events.append(LimitEvent(chain.t, b.lim.joint, "impact", side, v_pre, b.rate(q, v), loss))
    guard.count(chain.t)


def release(chain, tr, m0, held, bounds, events, tol, guard: EventGuard) -> bool:
    """Release the first held limit whose recorded multiplier pulls (at a sample the
    guard allows); the phase is cut at that sample. True when one was released."""
    a = tr.arrays()
    lam, t = a["lambda"], a["t"]
    first = None
    for col, i in enumerate(held):
        bad = pulling(held[i], lam[:, m0 + col], tol) & guard.may_release(i, t)
        k = np.flatnonzero(bad)
        if k.size and (first is None or k[0] < first[0]):
            first = (int(k[0]), i)
    if first is None:
        return False
    k, i = first
    cut(tr, k + 1)
    chain.t, chain.q, chain.v, chain.tau = float(t[k]), a["q"][k], a["v"][k], a["tau"][k]
    chain.resample()
    side = held.pop(i)
    rate = bounds[i].rate(a["q"][k], a["v"][k])
    events.append(LimitEvent(chain.t, bounds[i].lim.joint, "release", side, rate, rate))
    guard.released[i] = chain.t
    guard.count(chain.t)
    return True
