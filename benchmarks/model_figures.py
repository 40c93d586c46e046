"""The model-file figures: each MJCF / system file run passively for 5 s.

    python benchmarks/model_figures.py [--t-end 5] [--dt 1e-3] [FILE ...]

Default files: MuJoCo's six equality models (../shared/models/mujoco-equality or
$PFAFF_MUJOCO_MODELS) and tests/models. Prints one Markdown row per model:
nq, nv, constraint rows, rank and dof after assembly, assembly displacement,
max |Phi|, energy_drift_rel and the realtime factor (this machine, its load).
With MuJoCo installed, `pfaff compare` figures for jdotv_connect_2d follow.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _files() -> list[Path]:
    env = os.environ.get("PFAFF_MUJOCO_MODELS")
    shared = Path(env) if env else ROOT.parent / "shared" / "models" / "mujoco-equality"
    names = ["jdotv_connect_2d", "jdotv_connect_3d", "jdotv_weld_3d", "connect", "weld"]
    out = [
        shared / f"{n}.xml" for n in [*names, "equality_site"] if (shared / f"{n}.xml").is_file()
    ]
    own = ROOT / "tests" / "models"
    return out + sorted(own.glob("*.xml")) + sorted(own.glob("*.toml"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--t-end", type=float, default=5.0)
    ap.add_argument("--dt", type=float, default=1e-3)
    args = ap.parse_args()
    from pfaff.scenarios import execute

    print(
        "| model | nq | nv | rows | rank | dof | assembly displacement | max abs Phi "
        "| energy_drift_rel | realtime x |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for f in args.files or _files():
        s = execute(str(f), {"t_end": args.t_end, "dt": args.dt})
        m, sm = s.summary["metrics"], s.summary
        q = s.arrays["q"]
        print(
            f"| {f.name} | {q.shape[1]} | {s.arrays['v'].shape[1]} | {m['constraint_rows']} "
            f"| {m['constraint_rank']} | {m['dof']} | {m['assembly_displacement']:.3g} "
            f"| {sm['max_constraint_violation']:.2g} | {m['energy_drift_rel']:.2g} "
            f"| {sm['realtime_factor']:.3g} |",
            flush=True,
        )
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return
    f = _files()[0]
    if f.name == "jdotv_connect_2d.xml":
        m = execute(f"compare:{f}", {"t_end": args.t_end}).summary["metrics"]
        print(f"\npfaff compare {f.name}, {args.t_end:g} s:")
        for k, v in m.items():
            print(f"  {k} = {v:.3g}")


if __name__ == "__main__":
    main()
