"""``pfaff bench derivatives-files``: the compiled derivatives of user-style model files
with force elements (``tests/models/parallel_gripper.xml``: a tendon, springs,
dampers, two five-bar loops; ``closed_chain_biped.xml``: a free base, ball-joint
springs and dampers, two knee loops) against one compiled dynamics evaluation of the
same system (``System.acceleration``: the same force elements), on the same states,
paired; the witness is the NumPy reference's derivatives on those states."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pfaff import core
from pfaff.simulate.core_engine import build
from pfaff.simulate.forces import ForceSet

from .timing import REPEATS, Row, paired_us, row

FILES = ("parallel_gripper", "closed_chain_biped")
N_STATES = 20


def _states(sys_, n: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``n`` states near the file's start (q moved along random tangents, random v and
    tau), the same for both timings."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = sys_.integrate(sys_.q0, rng.normal(0, 0.05, sys_.nv))
        out.append((q, rng.normal(0, 0.5, sys_.nv), rng.normal(0, 0.5, sys_.nv)))
    return out


def bench_derivatives_files() -> list[Row]:
    """Per file: the core's derivatives and one dynamics evaluation (us, paired), their
    ratio (bar <= 3, design.md Sec. 8) and the derivatives' largest disagreement with
    the NumPy reference (whose force partials are central differences)."""
    if not core.available():
        return []
    from pfaff.api import load

    models = Path(__file__).resolve().parents[3] / "tests" / "models"
    rows: list[Row] = []
    b = "derivatives-files"
    for name in FILES:
        path = models / f"{name}.xml"
        if not path.is_file():  # an installed package without the test models
            continue
        sys_ = load(path)
        forces = ForceSet(sys_.mechanism, list(sys_.forces)).elements
        compiled = core.differentiator(sys_.cset, sys_.rank_tol, forces)
        system = build(sys_.cset, forces)
        states = _states(sys_, N_STATES)

        def loop(f, states=states):
            return lambda: [f(q, v, tau) for q, v, tau in states]

        (t_der, t_dyn), r = paired_us(
            [loop(compiled.raw), loop(system.acceleration)], len(states), 2 * REPEATS + 1
        )
        err = 0.0
        for q, v, tau in states:
            c = compiled(q, v, tau)
            n = sys_.forward_dynamics_derivatives(q, v, tau, engine="numpy")
            for k in ("da_dq", "da_dv", "da_dtau"):
                ref = getattr(n, k)
                err = max(err, float(np.abs(c[k] - ref).max() / max(1.0, np.abs(ref).max())))
        what = f"nv {sys_.nv}, {sys_.cset.dim} rows, {len(forces)} force elements"
        rows += [
            row(b, f"{name}: derivatives (core)", t_der, "us", "", f"{what}; binding alone"),
            row(b, f"{name}: dynamics (core)", t_dyn, "us", "", "System.acceleration"),
            row(b, f"{name}: ratio derivatives/dynamics", r[0] / r[1], "", "<= 3", "paired"),
            row(b, f"{name}: max rel |core - numpy|", err, "", "<= 1e-6", "da_dq, da_dv, da_dtau"),
        ]
    return rows
