"""The Python API of design.md Sec. 4: :func:`load` a file into a :class:`System`, step
it with a :class:`Simulator`, run many at once with :func:`rollout`, watch it in a
:class:`Viewer`."""

from pfaff.api.rollout import rollout
from pfaff.api.simulator import Simulator, StepInfo
from pfaff.api.system import DynamicsResult, System, load
from pfaff.api.viewer import Viewer

__all__ = ["DynamicsResult", "Simulator", "StepInfo", "System", "Viewer", "load", "rollout"]
