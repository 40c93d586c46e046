"""What MuJoCo's soft contacts make of the closed-form contact cases
(``tests/models/contact``, :mod:`pfaff.contact.closed_forms`): the figures to put beside
the closed forms and beside pfaff's exact contact.

Each function steps MuJoCo (``mj_step``, the file's own options) on one file and reads
its contacts (``d.contact``, ``mj_contactForce``): penetration is ``-dist`` of the
deepest contact, an impact is a step where contacts appear after a step with none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from pfaff.contact.penetration import deepest

__all__ = ["MujocoRun", "run_mujoco"]


@dataclass
class MujocoRun:
    """Per-step series of one MuJoCo run (the step's end state).

    Attributes
    ----------
    t, qpos, qvel : time [s], MuJoCo's coordinates.
    ncon : contacts per step.
    penetration : ``max(0, -dist)`` of the deepest contact [m] (0 with none).
    normal_force : the sum of the contacts' normal forces [N].
    impacts : the times [s] of the steps where contacts appear.
    """

    t: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray
    ncon: np.ndarray
    penetration: np.ndarray
    normal_force: np.ndarray
    impacts: list[float] = field(default_factory=list)


def run_mujoco(path: str | Path, t_end: float, keyframe: int | None = None) -> MujocoRun:
    """Step MuJoCo on the file ``path`` from its keyframe ``keyframe`` (None: qpos0)
    until ``t_end`` [s] and record what its contacts do.

    Parameters
    ----------
    path : an MJCF file.
    t_end : the final time [s] (> 0; at most 1e5 steps of the file's timestep).
    keyframe : the keyframe's index, or None.
    """
    m = mujoco.MjModel.from_xml_path(str(path))
    steps = int(round(t_end / m.opt.timestep))
    if not (np.isfinite(t_end) and t_end > 0) or steps > 100_000:
        raise ValueError(
            f"t_end must be > 0 s and at most 1e5 steps of {m.opt.timestep} s, got {t_end!r}"
        )
    d = mujoco.MjData(m)
    if keyframe is not None:
        if not 0 <= keyframe < m.nkey:
            raise ValueError(f"keyframe {keyframe} is not one of the file's {m.nkey}")
        mujoco.mj_resetDataKeyframe(m, d, keyframe)
    mujoco.mj_forward(m, d)
    t, qpos, qvel = np.empty(steps), np.empty((steps, m.nq)), np.empty((steps, m.nv))
    ncon, pen, fn = np.zeros(steps, int), np.zeros(steps), np.zeros(steps)
    wrench, impacts, before = np.zeros(6), [], d.ncon
    for k in range(steps):
        mujoco.mj_step(m, d)
        t[k], qpos[k], qvel[k], ncon[k] = d.time, d.qpos, d.qvel, d.ncon
        if d.ncon:
            pen[k] = deepest(d)
            for i in range(d.ncon):
                mujoco.mj_contactForce(m, d, i, wrench)
                fn[k] += wrench[0]
            if before == 0:
                impacts.append(float(d.time))
        before = d.ncon
    return MujocoRun(t, qpos, qvel, ncon, pen, fn, impacts)
