"""The file formats users feed in, read as data and refused with a clear message
(:class:`~pfaff.errors.ModelError`, :class:`~pfaff.errors.ParameterError`):

- :mod:`pfaff.files.model`: model files (MJCF, URDF) -> :class:`ModelSystem`;
- :mod:`pfaff.files.system`: TOML system files (a model, constraints, force elements,
  a start, a controller) -> :class:`SystemFile`;
- :mod:`pfaff.files.controller`: the ``[controller]`` table of a system file.

The scenarios that run them are :mod:`pfaff.scenarios.model_file` and
:mod:`pfaff.scenarios.system_file`.
"""

from pfaff.files.controller import parse_controller
from pfaff.files.model import MODEL_SUFFIXES, ModelSystem, load_model
from pfaff.files.system import SystemFile, load_system

__all__ = [
    "MODEL_SUFFIXES",
    "ModelSystem",
    "SystemFile",
    "load_model",
    "load_system",
    "parse_controller",
]
