"""Contact against MuJoCo on the same files (``pfaff bench contact``): what a step costs
and what the contact does, side by side in one process.

Like for like: both simulate the file's contacts with RK4 at the file's timestep, with
the file's friction where pfaff holds it (the incline's box, the balls, the stack) and
frictionless elsewhere (MuJoCo's ``condim`` set to 1 where pfaff's pairs have none: a
file's ``condim`` 1); pfaff's Simulator holds them exactly (located impacts, Newton's
restitution, held rows, stick and slip), MuJoCo's are soft (its default
``solref``/``solimp``). Per file:

- the cost of a step over a whole run (``Simulator.step(n=T)`` against ``mj_step`` T
  times; paired loops, :func:`~pfaff.bench.timing.paired_us`) and its ratio;
- the deepest penetration over the run (pfaff's measured by MuJoCo's own narrow phase on
  pfaff's states, :mod:`pfaff.contact.penetration`); for the dropped ball, the first
  impact's time against the closed form; for the box on the incline below its friction
  angle, its creep (the distance it moved, the closed form's 0).

The files (``tests/models/contact``): a ball dropped 1 m (restitution 0.5 in pfaff), a
box resting on four corners, two legs dropped onto a floor (hips, knees and ankles on
their stops too: MuJoCo's limits on, as pfaff's), a box on a 20 degree incline with
friction 0.5 (above tan 20 deg: it stays), a ball launched along a floor with friction
(it slips, then rolls: its rolling rows against MuJoCo's condim 3), a box resting on a
box resting on the floor (contact between two moving bodies), a disk rolling on its rim
(its lowest rim point held rolling). Both start from the file's first keyframe.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from .timing import Row, paired_us, row

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "tests" / "models" / "contact"
BENCH = "contact"
#: (label, file, restitution in pfaff, simulated time [s])
FILES = (
    ("ball", MODELS / "ball_drop.xml", 0.5, 1.0),
    ("box", MODELS / "box_on_plane.xml", 0.0, 0.5),
    ("legs", MODELS / "legs_drop.xml", 0.0, 1.0),
    ("incline", MODELS / "incline.xml", 0.0, 1.0),
    ("roll", MODELS / "ball_roll.xml", 0.0, 1.0),
    ("stack", MODELS / "box_stack.xml", 0.0, 1.0),
    ("disk", MODELS / "rolling_disk.xml", 0.0, 0.5),
)


def bench_contact() -> list[Row]:
    """The rows of ``pfaff bench contact`` (module docstring)."""
    try:
        import mujoco  # noqa: F401
    except ImportError as exc:  # pragma: no cover - mujoco is a dependency
        return [row(BENCH, "contact", "n/a", "", "", f"skipped: mujoco: {exc}")]
    rows: list[Row] = []
    for label, path, e, t_end in FILES:
        rows += _file(label, path, e, t_end)
    return rows


def _file(label: str, path: Path, e: float, t_end: float) -> list[Row]:
    import mujoco

    import pfaff
    from pfaff.contact.closed_forms import ball_impact_times
    from pfaff.contact.penetration import deepest, penetration

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the friction warning: like for like, below
        system = pfaff.load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    if not any(system.contacts.mu):  # frictionless, as pfaff holds it
        m.geom_condim[:] = 1
    d = mujoco.MjData(m)
    dt = float(m.opt.timestep)
    T = int(round(t_end / dt))
    sim = pfaff.Simulator(system, dt=dt, restitution=e, max_events=64)

    def run_pfaff():
        sim.reset()
        sim.step(n=T)

    pen_mj = np.zeros(T)
    first_mj: list[float] = []
    q_mj = np.zeros((2, m.nq))  # MuJoCo's qpos after its first contact step and at the end

    def run_mujoco(record: bool = False):
        mujoco.mj_resetData(m, d)
        if m.nkey:  # the file's first keyframe: pfaff.load's start
            mujoco.mj_resetDataKeyframe(m, d, 0)
        for k in range(T):
            mujoco.mj_step(m, d)
            if record and d.ncon:
                pen_mj[k] = deepest(d)
                if not first_mj:
                    first_mj.append(float(d.time))
                    q_mj[0] = d.qpos
        q_mj[1] = d.qpos

    (t_pf, t_mj), (ratio, _) = paired_us([run_pfaff, run_mujoco], T, repeats=5)
    run_mujoco(record=True)
    run_pfaff()
    q = sim.record().arrays()["q"]
    pen_pf = float(penetration(system.contacts, system.q_to_qpos, q).max())
    events = len(sim.events)
    friction = "with friction" if any(system.contacts.mu) else "frictionless"
    note = (
        f"{system.nv} dof, {len(system.contacts.pairs)} pairs, {T} steps of {dt:g} s, RK4, "
        f"{friction}"
    )
    rows = [
        row(BENCH, f"{label} pfaff step (run of {t_end:g} s)", t_pf, "us", "", note),
        row(BENCH, f"{label} MuJoCo RK4 step", t_mj, "us", ""),
        row(BENCH, f"{label} ratio pfaff / MuJoCo", ratio, "x", "", f"{events} events"),
        row(BENCH, f"{label} pfaff max penetration", pen_pf, "m", "<= 1e-9",
            "MuJoCo's narrow phase on pfaff's states"),
        row(BENCH, f"{label} MuJoCo max penetration", float(pen_mj.max()), "m", ""),
    ]  # fmt: skip
    if label == "incline":  # at rest from its landing on: the closed form moves 0 m
        a = sim.record().arrays()
        landed = int(np.argmax(a["t"] > 0.01))
        creep = float(np.linalg.norm(a["q"][-1, :3] - a["q"][landed, :3]))
        rows += [
            row(BENCH, "incline pfaff creep below the friction angle", creep, "m", "<= 1e-9",
                f"after {t_end:g} s, from 0.01 s on"),
            row(BENCH, "incline MuJoCo creep below the friction angle",
                float(np.linalg.norm(q_mj[1][:3] - q_mj[0][:3])), "m", "",
                "from its first contact step on"),
        ]  # fmt: skip
    if label == "ball":
        closed = float(ball_impact_times(1.0, e, 9.81, n=1)[0])
        hits = [ev.t for ev in sim.events if ev.kind == "impact"]
        rows += [
            row(BENCH, "ball pfaff first impact - closed form", abs(hits[0] - closed), "s",
                "<= 1e-9", f"closed form {closed:.9f} s"),
            row(BENCH, "ball MuJoCo first contact step - closed form",
                first_mj[0] - closed if first_mj else float("nan"), "s", ""),
        ]  # fmt: skip
    return rows
