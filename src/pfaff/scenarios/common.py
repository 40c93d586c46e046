"""Helpers shared by scenarios: timed simulation, planar drawings, crossings."""

from __future__ import annotations

import time

import numpy as np

from pfaff.constraints.base import ConstraintSet
from pfaff.mechanism.base import Mechanism
from pfaff.scenarios.registry import Param
from pfaff.simulate import SimOptions, Trajectory, simulate


def stage_projection_param(sigma_min: float) -> Param:
    """The ``stage_projection`` parameter (off) of a scenario that meets no fold of its
    constraint manifold: the RK4 stages on the manifold matter only near folds
    (:class:`~pfaff.simulate.SimOptions`), and cost 1.3-2.4x per step on a grasp."""
    return Param(
        False,
        "put the RK4 stages on the manifold (SimOptions.stage_projection), which matters "
        f"near folds; this system meets none (sigma_min(A) >= {sigma_min} in the default run)",
    )


def timed_simulate(
    cset: ConstraintSet, q0, v0, t_end: float, options: SimOptions, **kw
) -> tuple[Trajectory, float]:
    """Run :func:`~pfaff.simulate.simulate` and return ``(trajectory, wall seconds)``."""
    t0 = time.perf_counter()
    traj = simulate(cset, q0, v0, t_end, options, **kw)
    return traj, time.perf_counter() - t0


def planar_animation(
    mech: Mechanism, t: np.ndarray, q: np.ndarray, max_frames: int = 200
) -> dict[str, object]:
    """``polylines_xy`` and ``animation_t`` of a ScenarioResult for a planar mechanism.

    The origins of the frames in each of ``mech.polylines`` at (at most
    ``max_frames``) evenly spaced samples, as (T', npts, 2) arrays.
    """
    polylines = mech.polylines
    idx = np.unique(np.linspace(0, len(q) - 1, min(len(q), max_frames)).astype(int))
    names = sorted({n for line in polylines for n in line})
    out = [np.zeros((len(idx), len(line), 2)) for line in polylines]
    for k, i in enumerate(idx):
        snap = mech.compute(q[i], None, names, dynamics=False)
        for line, arr in zip(polylines, out):
            for j, n in enumerate(line):
                arr[k, j] = snap.frames[n].p[:2]
    return {"polylines_xy": out, "animation_t": t[idx]}


def sign_changes(x: np.ndarray) -> int:
    """Number of sign changes of a sampled continuous function (zeros skipped)."""
    s = np.sign(x)
    s = s[s != 0]
    return int(np.count_nonzero(s[1:] != s[:-1]))


def fold_crossings(sigma_min: np.ndarray) -> int:
    """Fold crossings seen in a sampled ``sigma_min(A)`` series.

    Through a fold a singular value of A passes through zero like ``c |t - t_f|``:
    the sample nearest the fold is a local minimum whose two neighbours sum to at
    least 4 times it (for a V sampled at spacing h with the fold e <= h/2 from the
    sample: ``(h - e + h + e) / e >= 4``). A local minimum (strictly below the
    previous sample, not above the next) with ``s[k-1] + s[k+1] >= 3 s[k]`` counts;
    a smooth minimum ``s0 + b t^2`` fails it unless ``s0 <= 2 b h^2`` (zero within
    the sampling resolution). The end samples are not counted.
    """
    s = np.asarray(sigma_min, dtype=float)
    if s.size < 3:
        return 0
    a, b, c = s[:-2], s[1:-1], s[2:]
    return int(np.count_nonzero((b < a) & (b <= c) & (a + c >= 3.0 * b)))


def hermite_crossings(t: np.ndarray, x: np.ndarray, xdot: np.ndarray) -> np.ndarray:
    """Times where ``x`` crosses zero upwards, by cubic Hermite interpolation.

    The cubic through ``(x, x')`` at both ends of a sample interval is solved
    by Newton's method from the linear estimate: error O(dt^4).
    """
    out = []
    for k in np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0)):
        h = t[k + 1] - t[k]
        x0, x1, d0, d1 = x[k], x[k + 1], xdot[k] * h, xdot[k + 1] * h
        s = -x0 / (x1 - x0)
        for _ in range(20):
            h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
            h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
            f = h00 * x0 + h10 * d0 + h01 * x1 + h11 * d1
            df = (
                (6 * s**2 - 6 * s) * (x0 - x1)
                + (3 * s**2 - 4 * s + 1) * d0
                + (3 * s**2 - 2 * s) * d1
            )
            step = f / df
            s -= step
            if abs(step) < 1e-15:
                break
        out.append(t[k] + s * h)
    return np.array(out)


def decoupling(cset: ConstraintSet, q: np.ndarray, every: int = 1) -> dict[str, object]:
    """Proposition 3 over a run: ``||(I - P) M P|| / ||M||`` at the samples ``q[::every]``.

    Returns the metrics ``decoupled`` (N(A) invariant under M -- and M^-1 -- at
    every sample, to 1e-9) and ``decoupling_residual_max``.
    """
    from pfaff import dynamics as dyn

    mech = cset.mechanism
    res = []
    for qi in q[::every]:
        snap = mech.compute(qi, None, cset.frames)
        P = dyn.projection(cset.evaluate(snap).A, np.zeros(cset.dim)).P
        res.append(dyn.decoupling_residual(snap.M, P))
    r = float(np.max(res)) if res else float("nan")
    return {"decoupled": bool(r <= 1e-9), "decoupling_residual_max": r}


def frame_path(mech: Mechanism, q: np.ndarray, frame: str) -> np.ndarray:
    """World positions (T, 3) of a frame's origin along the configurations ``q``."""
    return np.array([mech.compute(qi, None, [frame], dynamics=False).frames[frame].p for qi in q])


def project_xz(mech, t, q, names, max_frames=150):
    """Planar drawing: the frames' (x, z) at (at most) ``max_frames`` samples."""
    idx = np.unique(np.linspace(0, len(q) - 1, min(len(q), max_frames)).astype(int))
    out = np.zeros((len(idx), len(names), 2))
    for k, i in enumerate(idx):
        snap = mech.compute(q[i], None, names, dynamics=False)
        for j, n in enumerate(names):
            out[k, j] = snap.frames[n].p[[0, 2]]
    return {"polylines_xy": [out], "animation_t": t[idx]}
