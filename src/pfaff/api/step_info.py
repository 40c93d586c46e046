"""The sample a :class:`pfaff.Simulator`'s last step started from (``sim.last``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np

__all__ = ["StepInfo", "info_of"]


@dataclass(frozen=True)
class StepInfo:
    """The sample of the state the last step started from (what that step was taken
    with, as MuJoCo's ``mjData`` holds after ``mj_step``): one row of the
    :class:`~pfaff.simulate.Trajectory` series.

    Attributes
    ----------
    t : its time [s]; q, v : the state; a : the acceleration (Aghili eq. 22);
    tau : the torque applied over the step; F : the constraint force ``A^T lam``
    (eq. 32); lam : the multipliers (with joint limits: after the loop's rows, one
    column per limit held, in the order they were taken up, then zeros); av : ``A v``;
    phi : ``Phi(q)`` (holonomic rows); rank, sigma_min : of A; kinetic, potential,
    energy : [J]; work : of tau since the reset [J].
    """

    t: float
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    F: np.ndarray
    lam: np.ndarray
    av: np.ndarray
    phi: np.ndarray
    rank: int
    sigma_min: float
    kinetic: float
    potential: float
    energy: float
    work: float


#: the recorded series each field of a StepInfo holds (pfaff.simulate.policy.SERIES)
SERIES_OF = {"lam": "lambda"}


def info_of(sample: Mapping) -> StepInfo:
    """A :class:`StepInfo` of one sample: ``sample`` maps a series' name
    (:data:`~pfaff.simulate.policy.SERIES`) to its entry at the sample."""
    vals = {}
    for f in fields(StepInfo):
        x = sample[SERIES_OF.get(f.name, f.name)]
        vals[f.name] = np.array(x) if np.ndim(x) else float(x)
    vals["rank"] = int(vals["rank"])
    return StepInfo(**vals)
