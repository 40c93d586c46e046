"""Drift correction (design.md Sec. 3; Aghili Sec. 6, eq. 39).

After each step: Newton-Raphson ``q <- integrate(q, -A^+ Phi(q))`` on the
holonomic rows until ``max |Phi| < position_tol``, then the velocity is
projected onto N(A) in the metric of M (the impulse that removes the
violating component with the least change of kinetic energy). Pfaffian rows
take part only in the velocity projection.
"""

from __future__ import annotations

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.linalg import metric_projection, row_space, svd
from pfaff.mechanism.base import Snapshot


def position_scale(cset: ConstraintSet, snap: Snapshot) -> float:
    """``max(1, max |p|)`` over the world positions of the constraints' frames (m).

    ``Phi`` of a point constraint is a difference of positions, so its round-off
    level grows with their size: a mechanism 100 m from the origin (a free-falling
    robot after 5 s) rounds ``Phi`` at 100 times the level of the same mechanism
    at the origin. :func:`newton_project` scales its round-off thresholds by it.
    """
    ps = [np.abs(snap.frames[f].p).max() for f in cset.frames if f in snap.frames]
    return max([1.0, *map(float, ps)])


def newton_project(
    cset: ConstraintSet,
    q: np.ndarray,
    position_tol: float = 1e-12,
    max_iter: int = 20,
    rank_tol: float = 1e-9,
    start: tuple[np.ndarray, np.ndarray] | None = None,
    step_tol: float = 1e-14,
    svd_fn=svd,
    floor: float = 1e-15,
    scale: float | None = None,
) -> tuple[np.ndarray, float, int, Snapshot | None]:
    """Bring ``q`` onto ``Phi(q) = 0`` by Newton-Raphson with the pseudo-inverse
    (Aghili eq. 39), stopped on the size of the step in ``q``.

    Iteration k, with ``A_k = dPhi/dq`` of the holonomic rows at ``q_k`` and the
    pseudo-inverse of :func:`~pfaff.linalg.pinv` (absolute ``rank_tol``, the
    threshold of the velocity projection and of the dynamics)::

        stop  if  max|Phi(q_k)| <= floor          (round-off level of Phi)
        dq_k = A_k^+ Phi(q_k)
        stop  if  max|Phi(q_k)| <= position_tol  and  max|dq_k| <= step_tol
        stop  if  k >= 1  and  max|dq_k| >= max|dq_{k-1}|   (round-off floor reached)
        stop  if  k = max_iter
        q_{k+1} = integrate(q_k, -dq_k)

    Why the step: ``|Phi| < position_tol`` alone leaves ``q`` off the manifold
    by up to ``position_tol / sigma_min(A)``, which near a fold (sigma_min ->
    0) is large; the M-metric velocity projection and ``C v = -A^+ A'v`` at
    that ``q`` then turn it into an error of ``|Phi| v / sigma^2`` in ``v``
    and ``|Phi| v^2 / sigma^3`` in ``a``. Conversely a step taken
    from ``|Phi|`` at its round-off level (``floor``, units of Phi) moves ``q``
    by ``noise / sigma`` off the manifold: none is taken. ``position_tol``
    remains the acceptance test the caller applies. Away from folds the
    predicted step ``dq_k`` is ``|Phi| / sigma`` and the extra check costs
    nothing: its SVD of ``A_k`` at the returned ``q`` is the one the velocity
    projection needs (``svd_fn``, e.g. a :class:`~pfaff.linalg.LastSVD`,
    shares it when the constraint set has no Pfaffian rows).

    ``floor`` and ``step_tol`` are for a mechanism of unit size; both are
    multiplied by ``scale`` (:func:`position_scale` at ``q``, computed when not
    given), the size of the positions ``Phi`` is made of.

    ``start`` may give ``(Phi, A_h)`` at ``q`` when the caller has them.
    Returns ``(q, max |Phi|, iterations, snapshot)`` where ``snapshot`` is the
    kinematics snapshot at the returned ``q`` (None if no iteration was
    made); the caller decides whether the final residual is acceptable.
    """
    mech = cset.mechanism
    if start is None or scale is None:  # one kinematics snapshot at q serves both
        snap0 = mech.compute(q, None, cset.frames, dynamics=False)
        phi, A = cset.holonomic_terms(snap0) if start is None else start
        scale = position_scale(cset, snap0) if scale is None else scale
    else:
        phi, A = start
    floor, step_tol = floor * scale, step_tol * scale
    err = float(np.abs(phi).max()) if phi.size else 0.0
    it = 0
    snap = None
    last = np.inf
    while phi.size and it < max_iter:
        rs = row_space(A, rank_tol, svd_fn)
        dq = rs.V1 @ ((rs.U1.T @ phi) / rs.sigma)
        step = float(np.abs(dq).max()) if dq.size else 0.0
        if not np.isfinite(step):
            break
        if err <= floor:
            break  # Phi at its round-off level: a step would move q by noise / sigma
        if err <= position_tol and step <= step_tol:
            break  # on the manifold, to step_tol in q
        if it and not step < last:
            break  # no progress: the round-off floor (or divergence) -- stop rather than wander
        q = mech.integrate(q, -dq)
        snap = mech.compute(q, None, cset.frames, dynamics=False)
        phi, A = cset.holonomic_terms(snap)
        err = float(np.abs(phi).max())
        last = step
        it += 1
    return q, err, it, snap


def on_manifold(cset: ConstraintSet, snap: Snapshot, ev, v: np.ndarray, opt) -> bool:
    """Whether an RK4 stage is left as it is by ``SimOptions.stage_projection``:
    ``max |Phi| <= position_floor * s`` (``s`` the :func:`position_scale`), where
    Newton takes no step, and the velocity rows of Pfaffian constraints, if any, hold
    to ``position_floor * s * max(1, max |v|)``.

    The velocity of such a stage is not projected onto N(A) of the holonomic rows:
    its position is then as close to the branch as ``Phi`` resolves, ``delta ~
    noise / sigma_min``, and near a fold (at a distance x) N(A) there is tilted
    from the branch's tangent by ``delta / x``; projecting onto it would inject
    ``|v| delta / x`` (measured: 3.8e-8 rad/s at 5e-5 rad from a fold of 10
    parallelograms, an acceleration error of 1.9e-2 rad/s^2 and 7.6e-5 J in that
    step). A stage on a straight branch (the parallelogram's, the slider-crank's)
    is such a stage, and costs nothing."""
    err = float(np.abs(ev.phi).max()) if ev.phi.size else 0.0
    if ev.holonomic_rows.size == ev.A.shape[0]:  # the scale (>= 1) only where it matters
        return err <= opt.position_floor or err <= opt.position_floor * position_scale(cset, snap)
    tol = opt.position_floor * position_scale(cset, snap)
    if err > tol:
        return False
    rows = np.setdiff1d(np.arange(ev.A.shape[0]), ev.holonomic_rows)
    return np.abs(ev.A[rows] @ v).max() <= tol * max(1.0, np.abs(v).max())


def correct_state(
    cset: ConstraintSet, q: np.ndarray, v: np.ndarray, opt, svd_fn=svd, terms=None
) -> tuple[np.ndarray, np.ndarray, float, int, float]:
    """The drift correction after one step (design.md Sec. 3).

    Newton-Raphson on the holonomic rows, then the velocity projected onto
    N(A) at the corrected ``q`` in the metric M there (the kinetic energy of the
    state the projection returns; the step's next dynamics use the same M).
    ``opt`` provides ``position_tol``, ``max_newton``, ``newton_step_tol``,
    ``position_floor`` and ``rank_tol``.

    ``svd_fn`` factors A for the velocity projection (a
    :class:`~pfaff.linalg.LastSVD` lets the next step reuse it).

    ``terms``: ``(snapshot, constraint evaluation)`` at ``(q, v)`` when the caller has
    them (a snapshot with at least the constraint frames and M).

    Returns ``(q, v, max |Phi|, Newton iterations, kinetic-energy change)``.
    """
    if terms is None:
        snap = cset.mechanism.compute(q, v, cset.frames, extras=False)
        ev = cset.evaluate(snap)
    else:
        snap, ev = terms
    q, err, iters, kin = newton_project(
        cset,
        q,
        opt.position_tol,
        opt.max_newton,
        opt.rank_tol,
        start=(ev.phi, ev.A[ev.holonomic_rows]),
        step_tol=opt.newton_step_tol,
        svd_fn=svd_fn,
        floor=opt.position_floor,
        scale=position_scale(cset, snap),
    )
    if kin is not None:  # Newton moved q: A and M at the corrected q
        snap = cset.mechanism.compute(q, None, cset.frames, extras=False)
        ev = cset.evaluate(snap)
    A, M = ev.A, snap.M
    v_new = metric_projection(v, A, M, opt.rank_tol, svd_fn)
    dE = 0.5 * float(v_new @ M @ v_new - v @ M @ v)
    return q, v_new, err, iters, dE
