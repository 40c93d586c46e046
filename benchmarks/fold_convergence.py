"""Error at t_end against dt through folds: rows of parallelograms.

Usage: ``python benchmarks/fold_convergence.py [--fast] [--kite] [N ...]`` (default: 1 2
10; ``--fast``: the faster mechanisms of tests/test_folds.py; ``--kite``: the kite
four-bar, whose branch through its folds is curved, with and without
``SimOptions.stage_projection``, against its quadrature reference).
For each row of N parallelograms (pfaff.scenarios.parallelogram_chain) started at
crank angle 0.2 rad, rate -3 rad/s, it simulates 2 s (five fold crossings)
with RK4 at dt = 5, 2.5, 1.25, 0.625, 0.3125 ms and prints the largest
joint-angle error at t_end against the reduced ODE (DOP853, rtol 1e-13), the
ratio to the previous dt, and the largest energy change in one step. Slow
(minutes for N = 10): an accuracy study, not part of the test suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pfaff.scenarios.parallelogram_chain import (  # noqa: E402
    branch_state,
    parallelogram_chain,
    reduced_solution,
)
from pfaff.simulate import SimOptions, SimulationError, simulate  # noqa: E402

TH0, W0, T = 0.2, -3.0, 2.0
# the mechanisms of tests/test_folds.py (``--fast``): l = 0.8 m, g = 88 m/s^2,
# theta0 = 0.3 rad, -9 rad/s, 1 s (five crossings)
FAST = {"l": 0.8, "g": 88.0}, 0.3, -9.0, 1.0
DTS = (5e-3, 2.5e-3, 1.25e-3, 6.25e-4, 3.125e-4)


def table(n: int, fast: bool = False) -> list[tuple[float, float, float, float]]:
    """Rows ``(dt, error [rad], ratio, largest one-step energy change [J])``."""
    kw, th0, w0, T_end = FAST if fast else ({}, TH0, W0, T)
    cs = parallelogram_chain(n, **kw)
    q0, v0 = branch_state(n, th0, w0)
    q_ref = branch_state(n, *reduced_solution(n, th0, w0, [T_end], **kw)[-1])[0]
    rows, prev = [], np.nan
    for dt in DTS:
        a = simulate(cs, q0, v0, T_end, SimOptions(dt=dt)).arrays()
        err = float(np.abs(a["q"][-1] - q_ref).max())
        rows.append((dt, err, prev / err, float(np.abs(np.diff(a["energy"])).max())))
        prev = err
    return rows


def kite_table(theta0: float = np.pi / 2, w0: float = 6.0, t_end: float = 1.0):
    """Rows ``(dt, error [rad] and max one-step |dE| [J] with stage projection, the same
    without)`` for the kite four-bar (pfaff.scenarios.kite) through two folds."""
    from pfaff.scenarios.kite import kite_trial

    rows = []
    for dt in (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4):
        row = [dt]
        for sp in (True, False):
            try:
                run = kite_trial(theta0, w0, t_end, SimOptions(dt=dt, stage_projection=sp))
                row += [run["error"], run["energy_jump"]]
            except SimulationError as exc:  # a run that leaves the branch
                row += [np.inf, np.inf]
                print(f"  dt {dt * 1e3:g} ms, stage_projection={sp}: {exc}", flush=True)
        rows.append(tuple(row))
    return rows


def main(argv: list[str]) -> int:
    fast = "--fast" in argv
    if "--kite" in argv:
        print("kite four-bar: dt [ms], error at t_end [rad], max |dE| per step [J];")
        print("  with stage projection | without")
        for dt, e1, j1, e0, j0 in kite_table():
            print(f"  {dt * 1e3:7.4f}  {e1:9.2e}  {j1:9.2e} | {e0:9.2e}  {j0:9.2e}", flush=True)
        return 0
    for n in [int(x) for x in argv if x != "--fast"] or [1, 2, 10]:
        print(f"{n} parallelogram(s): dt [ms], error at t_end [rad], ratio, max |dE| per step [J]")
        for dt, err, ratio, jump in table(n, fast):
            print(f"  {dt * 1e3:7.4f}  {err:9.2e}  {ratio:6.1f}  {jump:9.2e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
