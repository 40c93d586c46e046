"""A mechanism given in closed form on the compiled core (``pfaff bench plant``).

The closed-form slider-crank (:class:`~pfaff.mechanism.SliderCrankChain`, Aghili eq.
68) run as a plant (:mod:`pfaff.plant`: its Python ``compute`` called from the
compiled loop) against the same mechanism on the NumPy engine and against the
Pinocchio chain of the same slider-crank on the core: the cost of a step of each
(``simulate`` of ``STEPS`` steps from the singular configuration, its set-up included,
divided by the steps; the three loops timed in turn within each repeat, the ratios
the medians of the paired ratios). Witness: the largest difference in q between the
plant's run and the NumPy engine's (round-off: <= 1e-12 rad).

Its dynamics derivatives too: the core's (``pfaff.core.differentiator``: central
differences of the terms it calls from Python, ``src/cpp/algorithms/plant_derivatives.cpp``)
against the NumPy reference's (:func:`pfaff.derivatives.forward_dynamics_derivatives`,
its own differences of ``compute``) at ``STATES`` states, paired. Witness: the largest
difference of the two, relative to max(1, |NumPy's|).
"""

from __future__ import annotations

import numpy as np

from .timing import Row, paired_us, row

#: steps per timed run, and the slider-crank's parameters (kg, m, m/s^2) and step (s)
STEPS, M, L, G, DT = 500, 1.0, 1.0, 9.81, 1e-3
#: states at which the derivatives are timed and compared
STATES = 20


def bench_plant() -> list[Row]:
    """The rows of ``pfaff bench plant`` (module docstring)."""
    from pfaff import core
    from pfaff.scenarios import slider_crank
    from pfaff.simulate import SimOptions, simulate

    b = "plant"
    if not core.available():
        return [row(b, "status", "skipped", "", "", "the compiled core is not built")]
    q0, v0 = slider_crank.singular_start(M, L, G, 0.0, 6.0)
    t_end = STEPS * DT
    closed = slider_crank.build(M, L, G, "closed-form")[1]
    chain = slider_crank.build(M, L, G, "pinocchio")[1]

    def run(cset, engine: str):
        opt = SimOptions(dt=DT, engine=engine, progress=False)
        return simulate(cset, q0, v0, t_end, opt)

    gap = np.abs(run(closed, "core").arrays()["q"] - run(closed, "numpy").arrays()["q"]).max()
    loops = [lambda: run(closed, "core"), lambda: run(chain, "core"), lambda: run(closed, "numpy")]
    (t_plant, t_chain, t_numpy), (r_plant, r_chain, _) = paired_us(loops, STEPS)
    note = f"closed-form slider-crank, {STEPS} steps of {DT:g} s from A = 0, set-up included"
    return [
        row(b, "plant step (core, Python compute)", round(t_plant, 2), "us", "", note),
        row(b, "closed form step (NumPy engine)", round(t_numpy, 2), "us", "", note),
        row(b, "Pinocchio chain step (core)", round(t_chain, 2), "us", "", "the same mechanism"),
        row(b, "ratio plant/NumPy", round(r_plant, 3), "", "<= 1", "paired, median"),
        row(b, "ratio Pinocchio chain/NumPy", round(r_chain, 3), "", "", "paired, median"),
        row(b, "max |q plant - q NumPy|", float(gap), "rad", "<= 1e-12", "the witness"),
        *_derivative_rows(closed),
    ]


def _derivative_rows(cset) -> list[Row]:
    """The closed form's derivatives on the core against NumPy's (module docstring)."""
    from pfaff import core
    from pfaff.derivatives import forward_dynamics_derivatives

    b, nv = "plant", cset.mechanism.nv
    rng = np.random.default_rng(0)
    states = [tuple(rng.uniform(-2, 2, (3, nv))) for _ in range(STATES)]
    compiled = core.differentiator(cset, 1e-9)

    def numpy(q, v, tau):
        return forward_dynamics_derivatives(cset, q, v, tau, 1e-9)

    gap = 0.0
    for q, v, tau in states:
        c, n = compiled(q, v, tau), numpy(q, v, tau)
        for f in core.DERIVATIVE_FIELDS:
            ref = getattr(n, f)
            gap = max(gap, float(np.abs(c[f] - ref).max() / max(1.0, np.abs(ref).max())))

    def loop(fn):
        return lambda: [fn(q, v, tau) for q, v, tau in states]

    loops = [loop(compiled), loop(numpy)]
    (t_core, t_numpy), (ratio, _) = paired_us(loops, STATES)
    note = f"closed-form slider-crank, a state of {STATES}"
    return [
        row(b, "derivatives (core, Python compute)", round(t_core, 2), "us", "", note),
        row(b, "derivatives (NumPy reference)", round(t_numpy, 2), "us", "", "the same states"),
        row(b, "ratio derivatives core/NumPy", round(ratio, 3), "", "<= 1", "paired, median"),
        row(b, "max rel |core - NumPy| derivatives", gap, "", "<= 1e-9", "the witness"),
    ]
