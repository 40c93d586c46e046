"""MJCF through MuJoCo's compiler (mechanism.mjcf_compiled) against the hand-written
reader (mechanism.mjcf) on every model file the tests read: M, g, every body's and
site's placement, the equality residuals, q0 and the keyframes, at random states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mjcf_support import OWN, shared_dir

from pfaff.constraints import ConstraintSet
from pfaff.constraints.mjcf_equality import equality_constraints
from pfaff.mechanism import PinocchioMechanism
from pfaff.mechanism.mjcf import read_mjcf
from pfaff.mechanism.mjcf_compiled import compile_mjcf

ROOT = Path(__file__).resolve().parents[3]


def _files() -> list[Path]:
    out = sorted(OWN.glob("*.xml")) + [ROOT / "examples" / "quadruped.xml"]
    d = shared_dir()
    return out + (sorted(d.glob("*.xml")) if d is not None else [])


def _deviation(old, new, n: int = 5, seed: int = 0) -> dict[str, float]:
    """Largest differences of the two readings at ``n`` random states."""
    ma, mb = PinocchioMechanism(old.model), PinocchioMechanism(new.model)
    ca = ConstraintSet(ma, equality_constraints(old.equalities))
    cb = ConstraintSet(mb, equality_constraints(new.equalities))
    frames = old.bodies + list(old.site_frames.values())
    err = {"M": 0.0, "g": 0.0, "frames": 0.0, "phi": 0.0}
    err["q0"] = float(np.abs(old.q0 - new.q0).max())
    err["keys"] = max(
        [np.abs(old.keyframes[k][0] - new.keyframes[k][0]).max() for k in old.keyframes] + [0.0]
    )
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = ma.integrate(old.q0, 0.5 * rng.standard_normal(ma.nv))
        sa, sb = ma.compute(q, None, frames), mb.compute(q, None, frames)
        scale = max(1.0, np.abs(sa.M).max())
        err["M"] = max(err["M"], np.abs(sa.M - sb.M).max() / scale)
        err["g"] = max(err["g"], np.abs(sa.g - sb.g).max() / scale)
        for f in frames:
            fa, fb = sa.frames[f], sb.frames[f]
            err["frames"] = max(
                err["frames"], np.abs(fa.p - fb.p).max(), np.abs(fa.R - fb.R).max()
            )
        pa, pb = ca.holonomic_terms_at(q)[0], cb.holonomic_terms_at(q)[0]
        err["phi"] = max(err["phi"], float(np.abs(pa - pb).max()) if pa.size else 0.0)
    return err


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_compiled_route_equals_the_hand_written_reader(path):
    old, new = read_mjcf(path), compile_mjcf(path)
    assert (new.nq_mj, new.nv_mj, new.bodies) == (old.nq_mj, old.nv_mj, old.bodies)
    assert [e.kind for e in new.equalities] == [e.kind for e in old.equalities]
    err = _deviation(old, new)
    assert max(err.values()) <= 1e-12, err


def test_the_cross_check_sees_a_moved_body(tmp_path):
    """A body moved by 1 mm in the file the compiled route reads is caught."""
    src = (OWN / "five_bar.xml").read_text()
    moved = tmp_path / "five_bar.xml"
    moved.write_text(src.replace('pos="0.3 0 0"', 'pos="0.301 0 0"'))
    err = _deviation(read_mjcf(OWN / "five_bar.xml"), compile_mjcf(moved))
    assert err["frames"] >= 0.9e-3 and err["phi"] >= 0.9e-3
