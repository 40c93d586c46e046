"""Named, parametrised case studies (design.md Sec. 5).

Every module of this package is imported here, and each registers its
scenarios with the :func:`scenario` decorator: a new scenario is one new file,
with no list to edit. Scenarios of other packages come in through the
entry-point group ``pfaff.scenarios`` (:func:`~pfaff.scenarios.registry.load_plugins`).
"""

import importlib
import pkgutil

from pfaff.scenarios.lookup import get_scenario
from pfaff.scenarios.registry import (
    SCENARIOS,
    Param,
    ParameterError,
    Scenario,
    ScenarioResult,
    load_plugins,
    parse_sets,
    scenario,
)
from pfaff.scenarios.runner import Run, execute, run_scenario

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
load_plugins()

__all__ = [
    "SCENARIOS",
    "Param",
    "ParameterError",
    "Run",
    "Scenario",
    "ScenarioResult",
    "execute",
    "get_scenario",
    "load_plugins",
    "parse_sets",
    "run_scenario",
    "scenario",
]
