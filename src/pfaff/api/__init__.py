"""The Python API of design.md Sec. 4: :func:`load` a file into a :class:`System`."""

from pfaff.api.system import DynamicsResult, System, load

__all__ = ["DynamicsResult", "System", "load"]
