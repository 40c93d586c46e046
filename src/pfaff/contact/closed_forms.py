"""Closed forms of rigid contact: the witnesses of pfaff's contact dynamics and of what
MuJoCo's soft contacts make of the same cases (the files in ``tests/models/contact``).

- a ball dropped from a height ``h`` with Newton's restitution ``e``: impact times, the
  time it comes to rest (an accumulation point of impacts, reached in finite time);
- a block on an incline of angle ``alpha`` with Coulomb friction ``mu``: at rest when
  ``tan(alpha) <= mu``, else sliding ``0.5 g (sin(alpha) - mu cos(alpha)) t^2``;
- Housner's rocking block (Bull. Seism. Soc. Am. 53(2), 1963, eq. 11): at each impact of
  the other bottom edge, with no bounce and no slip, the angular velocity is multiplied by
  ``1 - 3/2 sin^2(alpha)``, ``alpha = atan(b / h)``;
- a round body (a ball, a capsule rolling about its axis) of radius ``r`` and inertia
  ``I = k m r^2`` about its rolling axis (a solid ball: ``k = 2/5``): launched along a floor
  at ``v0`` with no spin it slides, spins up and rolls from ``t* = 2 v0 / (7 mu g)`` (a
  ball) on at ``5/7 v0``; on an incline it rolls without slipping with
  ``a = g sin(alpha) / (1 + k)`` while ``tan(alpha) <= mu (1 + k) / k``, else slides with
  ``g (sin - mu cos)`` and spins up at ``mu g cos / (k r)``;
- the same round body (mass ``m``) on a plank of mass ``Mp`` that slides freely: launched
  along it at ``v0`` with no spin it slides, spins up and pushes the plank on until it
  rolls (:func:`plank_spin_up`); resting on the plank pushed by a force ``F`` it rolls
  back relative to it, or slips (:func:`pushed_plank`);
- a body thrown along a floor at ``v0`` from a height ``h`` that lands plastically while
  it slides (Moreau's impact law with Coulomb friction): the landing's tangential impulse
  ``mu m v_n`` takes ``mu v_n`` off its speed, a ball's spins it up too
  (:func:`thrown_landing`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "ball_impact_times",
    "ball_rest_time",
    "housner_ratio",
    "incline_distance",
    "plank_spin_up",
    "pushed_plank",
    "rocking_block_start",
    "roll_on_incline",
    "spin_up",
    "thrown_landing",
]


def _check_positive(**kw: float) -> None:
    for name, x in kw.items():
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {x!r}")


def _check_restitution(e: float) -> None:
    if not (0.0 <= e < 1.0):
        raise ValueError(f"restitution e must be in [0, 1), got {e!r}")


def ball_impact_times(h: float, e: float, g: float = 9.81, n: int = 10) -> np.ndarray:
    """The first ``n`` impact times [s] of a ball dropped from rest at height ``h`` [m]
    (its lowest point above the floor) with restitution ``e``.

    The first impact is at ``t1 = sqrt(2 h / g)`` with speed ``v1 = g t1``; the k-th
    bounce leaves at ``e^k v1`` and flies ``2 e^k v1 / g``. With ``e = 0`` the ball
    stays at the first impact: one time.
    """
    _check_positive(h=h, g=g)
    _check_restitution(e)
    if n < 1:
        raise ValueError(f"n must be >= 1 impacts, got {n}")
    t1 = math.sqrt(2.0 * h / g)
    if e == 0.0:
        return np.array([t1])
    flights = 2.0 * t1 * e ** np.arange(1, n)  # 2 e^k v1 / g = 2 e^k t1
    return t1 + np.concatenate(([0.0], np.cumsum(flights)))


def ball_rest_time(h: float, e: float, g: float = 9.81) -> float:
    """The time [s] the ball comes to rest: the sum of its flights,
    ``t1 + 2 t1 e / (1 - e) = t1 (1 + e) / (1 - e)``."""
    _check_positive(h=h, g=g)
    _check_restitution(e)
    return math.sqrt(2.0 * h / g) * (1.0 + e) / (1.0 - e)


def incline_distance(alpha: float, mu: float, t: np.ndarray, g: float = 9.81) -> np.ndarray:
    """The distance [m] a block released at rest slides down an incline of angle
    ``alpha`` [rad] with friction ``mu`` in the times ``t`` [s]: 0 when
    ``tan(alpha) <= mu`` (static friction holds it), else
    ``0.5 g (sin(alpha) - mu cos(alpha)) t^2``."""
    _check_positive(g=g)
    if not (0.0 <= alpha < math.pi / 2):
        raise ValueError(f"alpha must be in [0, pi/2) rad, got {alpha!r}")
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    a = g * (math.sin(alpha) - mu * math.cos(alpha))
    t = np.asarray(t, dtype=float)
    return 0.5 * max(a, 0.0) * t**2


def housner_ratio(b: float, h: float) -> float:
    """Housner's ratio of the angular velocities after and before an impact of a uniform
    rectangular block of half-width ``b`` and half-height ``h`` rocking on its edges:
    ``1 - 3/2 sin^2(alpha)``, ``alpha = atan(b / h)`` (angular momentum about the new
    edge is kept; inertia about an edge ``4/3 m R^2``, ``R^2 = b^2 + h^2``)."""
    _check_positive(b=b, h=h)
    return 1.0 - 1.5 * math.sin(math.atan2(b, h)) ** 2


def rocking_block_start(b: float, h: float, theta: float) -> tuple[float, float, float]:
    """``(x, z, theta)`` of the block's centre (from its upright place) and pitch when it
    is tilted by ``theta`` [rad] about the y axis onto its edge at ``x = +b``, the edge
    kept where it stood (``tests/models/contact/rocking_block.xml``'s keyframe)."""
    _check_positive(b=b, h=h)
    x = b - b * math.cos(theta) + h * math.sin(theta)
    z = b * math.sin(theta) + h * math.cos(theta) - h
    return x, z, theta


def spin_up(v0: float, mu: float, k: float = 0.4, g: float = 9.81) -> tuple[float, float]:
    """``(t*, v*)``: the time [s] a round body launched along a floor at ``v0`` [m/s] with
    no spin starts to roll without slipping, and its speed then [m/s].

    It slides with deceleration ``mu g`` while friction spins it up at ``mu g / (k r)``;
    its contact point's slip ``v - r w`` falls at ``mu g (1 + 1/k)`` and reaches 0 at
    ``t* = v0 k / (mu g (1 + k))`` (a solid ball, ``k = 2/5``: ``2 v0 / (7 mu g)``), with
    ``v* = v0 / (1 + k)`` (``5/7 v0``); from then on it rolls at ``v*``.
    """
    _check_positive(v0=v0, mu=mu, k=k, g=g)
    return v0 * k / (mu * g * (1.0 + k)), v0 / (1.0 + k)


def roll_on_incline(
    alpha: float, mu: float, k: float = 0.4, g: float = 9.81
) -> tuple[bool, float, float]:
    """``(rolls, a, k r alpha_dot)`` of a round body (inertia ``k m r^2`` about its rolling
    axis) released at rest on an incline of angle ``alpha`` [rad] with friction ``mu``.

    Rolling without slipping needs the friction ``k / (1 + k) m g sin(alpha)``, inside the
    cone while ``tan(alpha) <= mu (1 + k) / k`` (a ball: ``7/2 mu``): then ``rolls`` and
    ``a = g sin / (1 + k)`` [m/s^2]. Above, it slides with ``a = g (sin - mu cos)`` and
    friction ``mu m g cos`` spins it up at ``mu g cos / (k r)`` [rad/s^2]: the third
    figure is ``k r`` times that angular acceleration, ``mu g cos`` (rolling: ``k a``).
    """
    _check_positive(k=k, g=g)
    if not (0.0 <= alpha < math.pi / 2):
        raise ValueError(f"alpha must be in [0, pi/2) rad, got {alpha!r}")
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    s, c = math.sin(alpha), math.cos(alpha)
    if k * s <= mu * (1.0 + k) * c:
        a = g * s / (1.0 + k)
        return True, a, k * a
    return False, g * (s - mu * c), mu * g * c


def plank_spin_up(
    v0: float, mu: float, m: float, Mp: float, k: float = 0.4, g: float = 9.81
) -> tuple[float, float, float, float]:
    """``(t*, v_s, r w, v_p)``: a round body (mass ``m`` [kg], inertia ``k m r^2`` about
    its rolling axis) launched at ``v0`` [m/s] with no spin along a plank (mass ``Mp``
    [kg]) that slides without friction, friction ``mu`` between them; the time [s] it
    starts to roll on the plank and, from then on, its speed, its spin times its radius
    and the plank's speed [m/s].

    While it slides it decelerates at ``mu g``, spins up at ``mu g / (k r)`` and its
    friction pushes the plank at ``mu m g / Mp``: the slip ``v_s - r w - v_p`` falls at
    ``mu g (1 + 1/k + m / Mp)``, zero at ``t*``; after it no horizontal force acts and
    every velocity stays. The momentum ``m v_s + Mp v_p = m v0`` is kept throughout.
    """
    _check_positive(v0=v0, mu=mu, m=m, Mp=Mp, k=k, g=g)
    t = v0 / (mu * g * (1.0 + 1.0 / k + m / Mp))
    return t, v0 - mu * g * t, mu * g * t / k, mu * m * g * t / Mp


def pushed_plank(
    F: float, mu: float, m: float, Mp: float, k: float = 0.4, g: float = 9.81
) -> tuple[bool, float, float, float]:
    """``(rolls, a_p, a_s, r alpha)``: a plank (mass ``Mp`` [kg]) that slides without
    friction, pushed along by a force ``F`` [N] from rest, with a round body (mass ``m``
    [kg], inertia ``k m r^2`` about its rolling axis, across the push) resting on it,
    friction ``mu``: the plank's and the body's accelerations [m/s^2] and its angular
    acceleration times its radius [m/s^2] (positive: rolling the way of the push).

    Rolling on the plank (``a_s - r alpha = a_p``) needs the friction
    ``f = k / (1 + k) m a_p`` on the body: ``a_p = F / (Mp + k / (1 + k) m)``,
    ``a_s = k / (1 + k) a_p`` (a solid ball: ``2/7``), while ``|f| <= mu m g``. Above,
    it slips: ``a_s = mu g``, ``r alpha = -mu g / k`` and ``a_p = (F - mu m g) / Mp``
    (signs along ``F``).
    """
    _check_positive(mu=mu, m=m, Mp=Mp, k=k, g=g)
    if not math.isfinite(F):
        raise ValueError(f"F must be a finite force [N], got {F!r}")
    c = k / (1.0 + k)
    a_p = F / (Mp + c * m)
    if c * abs(a_p) <= mu * g:
        return True, a_p, c * a_p, c * a_p - a_p
    sign = math.copysign(1.0, F)
    return False, (F - sign * mu * m * g) / Mp, sign * mu * g, -sign * mu * g / k


def thrown_landing(
    v0: float, h: float, mu: float, k: float | None = None, g: float = 9.81
) -> dict[str, float]:
    """A body thrown along a floor at ``v0`` [m/s] with no spin, its lowest point ``h`` [m]
    above it, that lands plastically (``e = 0``) while it slides, with Coulomb friction
    ``mu`` in the impact and after it (Moreau's impact law: the tangential impulse is
    ``mu P_n`` against the slip after the impact, or sticks it inside the cone).

    ``k=None``: a box landing flat (no turn: its corners' impulses sum to ``m v_n``); it
    keeps ``v0 - mu v_n`` (stops dead where that is <= 0) and slides to rest at ``mu g``.
    ``k``: a round body of inertia ``k m r^2`` (a solid ball 2/5); its contact point's
    slip ``v - r w`` falls by ``mu v_n (1 + 1/k)`` in the impact: it slips through where
    ``v0 > mu v_n (1 + 1/k)``, then spins up to roll at ``v0 / (1 + k)`` (its angular
    momentum about the contact point is kept, impact included), else it rolls from the
    impact on.

    Returns ``t_impact`` [s], ``v_n`` (the approach speed [m/s]), ``v_after`` (the speed
    after the impact), ``slip_after`` (the contact point's slip after it), ``lost`` (the
    impact's energy per unit mass [J/kg]), ``t_stick`` (when the slip ends [s]) and
    ``x_stick`` (the distance along the floor by then [m]).
    """
    _check_positive(v0=v0, h=h, mu=mu, g=g)
    if k is not None:
        _check_positive(k=k)
    t1 = math.sqrt(2.0 * h / g)
    vn = g * t1
    c = 1.0 if k is None else 1.0 + 1.0 / k  # the slip's fall per unit of mu v_n
    through = v0 > c * mu * vn
    if through:
        v1 = v0 - mu * vn
        slip = v0 - c * mu * vn
    else:  # stuck by the impact: a box stops, a ball rolls at v0 / (1 + k)
        v1 = 0.0 if k is None else v0 / (1.0 + k)
        slip = 0.0
    w1 = 0.0 if k is None else (v1 - slip)  # r w after the impact
    kin = 0.5 * v1**2 + (0.0 if k is None else 0.5 * k * w1**2)  # per unit mass
    lost = 0.5 * vn**2 + 0.5 * v0**2 - kin
    dt = slip / (c * mu * g)  # the slip falls at mu g (1 + 1/k) after the impact
    x = v0 * t1 + v1 * dt - 0.5 * mu * g * dt**2
    return {
        "t_impact": t1,
        "v_n": vn,
        "v_after": v1,
        "slip_after": slip,
        "lost": lost,
        "t_stick": t1 + dt,
        "x_stick": x,
    }
