"""The step's cost against the mechanism's size (``pfaff bench scaling``).

design.md Sec. 8: the step's cost grows with the mechanism's size no faster than
MuJoCo's. The mechanism: a strip of ``N`` four-bar loops (:func:`n_four_bar_xml`),
written as MJCF for each N of :data:`NS` -- ``2N + 1`` hinges, ``N`` loops closed by
``<connect>`` (3 rows each, rank 2 in the plane of the strip), one degree of freedom.
Each file is timed as ``pfaff bench mujoco-rk4`` times a model file
(:func:`~pfaff.bench.mujoco_rk4.time_step`: pfaff's compiled core against MuJoCo's RK4,
like for like, paired in one process, same start and dt). The exponent of each engine
is the least-squares slope of log cost against log N (:func:`fit_exponent`); the bars:
pfaff's exponent at most MuJoCo's, and pfaff's step at the largest N at most MuJoCo's.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .timing import REPEATS, Row, row

BENCH = "scaling"
#: the numbers of loops timed
NS = (2, 5, 10, 20, 40)
#: the step of both engines [s]
DT = 1e-3
#: N at or above which the asymptotic exponent is fitted too
LARGE_N = 10


def _points(n: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The strip's joint points in the x-z plane: bottom row ``b_j`` (the pivots, held
    by the world at j = 0, 1) and the hanging row ``t_j`` one below, j = 0..n, jittered
    so that no loop is a parallelogram and the verticals lean (the strip swings)."""
    b = [np.array([j + 0.03 * math.sin(1.7 * j), 0.03 * math.sin(2.3 * j + 0.5)])
         for j in range(n + 1)]  # fmt: skip
    t = [np.array([j + 0.3 + 0.03 * math.cos(1.3 * j), -1.0 + 0.03 * math.cos(0.7 * j)])
         for j in range(n + 1)]  # fmt: skip
    return b, t


def _links(n: int) -> tuple[list[tuple[str, str, np.ndarray, list]], list[tuple]]:
    """The strip as a tree: ``(name, parent, hinge point, points it carries)`` per body
    (parents first) and ``(body1, body2, point)`` per loop-closing connect.

    Loop k has the corners ``b_{k-1}, b_k, t_k, t_{k-1}``; its left side is the
    vertical ``v{k-1}``, its right side the vertical ``v{k}``, its top and bottom are
    bars that span two loops (``top{k}`` for odd k, ``bot{k}`` for even k; loop 1's
    bottom is the world). Odd k: ``v{k}`` hangs on the bottom (the world or
    ``bot{k-1}``) at ``b_k``, ``top{k}`` on ``v{k}`` at ``t_k``, closed on ``v{k-1}``
    at ``t_{k-1}``. Even k: ``bot{k}`` on ``v{k-1}`` at ``b_{k-1}``, ``v{k}`` on
    ``bot{k}`` at ``b_k``, closed on ``top{k-1}`` at ``t_k``.
    """
    b, t = _points(n)
    bodies = [("v0", "world", b[0], [b[0], t[0]])]
    connects = []
    for k in range(1, n + 1):
        if k % 2:
            bottom = "world" if k == 1 else f"bot{k - 1}"
            bodies.append((f"v{k}", bottom, b[k], [b[k], t[k]]))
            bodies.append((f"top{k}", f"v{k}", t[k], [t[k - 1], t[k], *t[k + 1 : k + 2]]))
            connects.append((f"top{k}", f"v{k - 1}", t[k - 1]))
        else:
            bodies.append((f"bot{k}", f"v{k - 1}", b[k - 1],
                           [b[k - 1], b[k], *b[k + 1 : k + 2]]))  # fmt: skip
            bodies.append((f"v{k}", f"bot{k}", b[k], [b[k], t[k]]))
            connects.append((f"v{k}", f"top{k - 1}", t[k]))
    return bodies, connects


def _xyz(p: np.ndarray) -> str:
    return f"{p[0]:.6g} 0 {p[1]:.6g}"


def n_four_bar_xml(n: int, dt: float = DT) -> str:
    """An MJCF strip of ``n`` four-bar loops hanging from two pivots (module docstring).

    Every body has one hinge about y, a unit mass at the centroid of its points and
    capsules between them (no collisions); each loop is closed by a ``<connect>``.
    ``2n + 1`` dof, ``3n`` equality rows of rank ``2n``, one degree of freedom.
    """
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    bodies, connects = _links(int(n))
    children: dict[str, list] = {}
    for body in bodies:
        children.setdefault(body[1], []).append(body)

    def write(parent: str, origin: np.ndarray, indent: str) -> list[str]:
        out = []
        for name, _, hinge, pts in children.get(parent, []):
            c = sum(pts) / len(pts) - hinge
            caps = [
                f'{indent}  <geom type="capsule" size="0.03" fromto="{_xyz(p - hinge)} '
                f'{_xyz(q - hinge)}"/>'
                for p, q in zip(pts, pts[1:])
            ]
            out += [
                f'{indent}<body name="{name}" pos="{_xyz(hinge - origin)}">',
                f'{indent}  <joint name="{name}" type="hinge" axis="0 1 0"/>',
                f'{indent}  <inertial pos="{_xyz(c)}" mass="1" diaginertia="0.05 0.1 0.05"/>',
                *caps,
                *write(name, hinge, indent + "  "),
                f"{indent}</body>",
            ]
        return out

    lines = [
        f'<mujoco model="n-four-bar-{n}">',
        f'  <option timestep="{dt:g}"/>',
        '  <default><geom contype="0" conaffinity="0" mass="0"/></default>',
        "  <worldbody>",
        *write("world", np.zeros(2), "    "),
        "  </worldbody>",
        "  <equality>",
        *(
            f'    <connect body1="{b1}" body2="{b2}" anchor="{_xyz(p - _hinge(bodies, b1))}"/>'
            for b1, b2, p in connects
        ),  # fmt: skip
        "  </equality>",
        "</mujoco>",
    ]
    return "\n".join(lines) + "\n"


def _hinge(bodies, name: str) -> np.ndarray:
    return next(h for n, _, h, _ in bodies if n == name)


def fit_exponent(ns: Sequence[float], costs: Sequence[float]) -> float:
    """The least-squares slope of ``log(cost)`` against ``log(N)`` (cost ~ N^slope).

    Raises
    ------
    ValueError
        With fewer than two distinct N, or a cost that is not positive and finite.
    """
    x, y = np.asarray(ns, float), np.asarray(costs, float)
    if x.shape != y.shape or len(set(x.tolist())) < 2:
        raise ValueError(f"need costs at two or more distinct N, got N={list(x)}")
    if not (np.all(np.isfinite(y)) and np.all(y > 0) and np.all(x > 0)):
        raise ValueError(f"N and costs must be positive and finite, got {list(y)}")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def steps_for(n: int) -> int:
    """Steps per timed loop: fewer for larger N (a loop of some 10-100 ms)."""
    return max(100, 4000 // int(n))


def bench_scaling(ns: Sequence[int] = NS, repeats: int = REPEATS, steps=steps_for) -> list[Row]:
    """``pfaff bench scaling``: per N the step of both engines [us] and their ratio,
    the model's size and start residual; the exponents of both, with the bars.

    Parameters
    ----------
    ns : the numbers of loops (at least two distinct).
    repeats : timed repeats per N.
    steps : steps per timed loop, a function of N.

    Returns
    -------
    list of rows (benchmark ``scaling``); the figures by N ride on the ``exponent
    pfaff`` row under ``data`` (``summary_json`` puts them under ``scaling``).
    """
    try:
        import mujoco
    except ImportError as exc:
        return [row(BENCH, "scaling", "n/a", "", "", f"skipped: mujoco: {exc}")]
    from .mujoco_rk4 import time_step

    rows: list[Row] = []
    per_n: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            path = Path(tmp) / f"n_four_bar_{n}.xml"
            path.write_text(n_four_bar_xml(n), encoding="utf-8")
            try:
                f = time_step(path, int(steps(n)), int(repeats), as_file=False)
            except Exception as exc:  # say so, go on with the other sizes
                rows.append(row(BENCH, f"N={n} status", "error", "", "== ok",
                                f"{type(exc).__name__}: {exc}"))  # fmt: skip
                continue
            per_n[n] = f
            size = f"nv {f['nv']}, {f['rows']} rows of rank {f['rank']}"
            rows += [
                row(BENCH, f"N={n} pfaff step", f["pfaff_us"], "us", "",
                    f"{size}; dt {f['dt']:g} s, {steps(n)} steps, median of {repeats}"),
                row(BENCH, f"N={n} MuJoCo RK4 step", f["mujoco_us"], "us", "",
                    f"like for like: {', '.join(f['disabled'])} off"),
                row(BENCH, f"N={n} ratio pfaff/MuJoCo", f["ratio"], "", ""),
                row(BENCH, f"N={n} rank", f["rank"], "", f"== {2 * n}", f"nv {f['nv']}"),
                row(BENCH, f"N={n} start residual MuJoCo", f["start_residual"], "", "<= 1e-9"),
            ]  # fmt: skip
    if len(per_n) < 2:
        return rows
    rows += _exponent_rows(per_n, repeats, mujoco.__version__)
    return rows


def scaling_figures(per_n: dict[int, dict]) -> dict:
    """The JSON record: per-N costs, both exponents (all N, and N >= :data:`LARGE_N`),
    the ratio at the largest N and whether each bar is met."""
    ns = sorted(per_n)
    pf = [per_n[n]["pfaff_us"] for n in ns]
    mj = [per_n[n]["mujoco_us"] for n in ns]
    e_pf, e_mj = fit_exponent(ns, pf), fit_exponent(ns, mj)
    large = [i for i, n in enumerate(ns) if n >= LARGE_N]
    out = {
        "n": ns,
        "nv": [per_n[n]["nv"] for n in ns],
        "rank": [per_n[n]["rank"] for n in ns],
        "pfaff_step_us": pf,
        "mujoco_rk4_step_us": mj,
        "ratio_pfaff_mujoco": [per_n[n]["ratio"] for n in ns],
        "exponent_pfaff": e_pf,
        "exponent_mujoco": e_mj,
        "mujoco_disabled": per_n[ns[-1]]["disabled"],
    }
    if len(large) >= 2:
        out[f"exponent_pfaff_n_ge_{LARGE_N}"] = fit_exponent([ns[i] for i in large],
                                                           [pf[i] for i in large])  # fmt: skip
        out[f"exponent_mujoco_n_ge_{LARGE_N}"] = fit_exponent([ns[i] for i in large],
                                                            [mj[i] for i in large])  # fmt: skip
    ratio_max_n = per_n[ns[-1]]["ratio"]
    out["bars"] = {
        "exponent_pfaff <= exponent_mujoco": bool(e_pf <= e_mj),
        f"ratio at N={ns[-1]} <= 1.0": bool(ratio_max_n <= 1.0),
    }
    return out


def _exponent_rows(per_n: dict[int, dict], repeats: int, version: str) -> list[Row]:
    fig = scaling_figures(per_n)
    n_max = fig["n"][-1]
    ns = ", ".join(map(str, fig["n"]))
    first = row(BENCH, "exponent pfaff", fig["exponent_pfaff"], "",
                f"<= {fig['exponent_mujoco']:.4g}",
                f"least-squares slope of log(step) against log(N), N = {ns}; the bar: "
                "at most MuJoCo's exponent")  # fmt: skip
    first["data"] = fig
    rows = [first, row(BENCH, "exponent MuJoCo", fig["exponent_mujoco"], "", "")]
    for who in ("pfaff", "mujoco"):
        key = f"exponent_{who}_n_ge_{LARGE_N}"
        if key in fig:
            label = "pfaff" if who == "pfaff" else "MuJoCo"
            rows.append(row(BENCH, f"exponent {label}, N >= {LARGE_N}", fig[key], "", "",
                            "the slope over the larger mechanisms only"))  # fmt: skip
    rows.append(row(BENCH, f"ratio pfaff/MuJoCo at N={n_max}", fig["ratio_pfaff_mujoco"][-1],
                    "", "<= 1", f"mujoco {version}"))  # fmt: skip
    return rows


def plot_scaling(fig: dict, path: str | Path) -> Path:
    """The step's cost against N, log-log, both engines with their fitted lines
    (``fig``: :func:`scaling_figures`' record, as in the JSON's ``scaling``)."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = np.asarray(fig["n"], float)
    f, ax = plt.subplots(figsize=(5.5, 4))
    for key, exp, style, label in (
        ("pfaff_step_us", "exponent_pfaff", "k-o", "pfaff (core)"),
        ("mujoco_rk4_step_us", "exponent_mujoco", "C0--s", "MuJoCo RK4, like for like"),
    ):
        y = np.asarray(fig[key], float)
        ax.loglog(ns, y, style, label=f"{label}: ~N^{fig[exp]:.2f}")
    ax.set(xlabel="N (four-bar loops; 2N + 1 dof)", ylabel="one step [us]",
           title="Step cost against mechanism size")  # fmt: skip
    ax.set_xticks(ns, [str(int(n)) for n in ns])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    f.tight_layout()
    f.savefig(path, dpi=90)
    plt.close(f)
    return Path(path)
