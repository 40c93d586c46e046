"""The message of a failed run of the compiled core, worded as the NumPy engine words it
(:mod:`pfaff.simulate.policy`): shared by :class:`pfaff.Simulator` and :func:`pfaff.rollout`."""

from __future__ import annotations

from pfaff.constraints.base import ConstraintSet
from pfaff.simulate.policy import contact_message, nonfinite_message, position_message


def status_message(
    cset: ConstraintSet, code: int, what: str, idx: int, value: float, t: float, step: int, it: int
) -> str:
    """The message of ``System.run``'s status (code 1 non-finite, 2 a unilateral contact
    would open, 3 position correction; -1 an exception inside a rollout, ``what`` its
    message or the step's failure on the NumPy engine)."""
    if code == 1:
        return nonfinite_message(what, idx, value, t, step)
    if code == 2:
        return contact_message(cset.row_names[idx], value, t, step)
    if code == 3:
        return position_message(value, t, step, it)
    return what
