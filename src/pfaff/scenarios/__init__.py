"""Named, parametrised case studies (design.md Sec. 5)."""

from pfaff.scenarios import (  # noqa: F401  (registration)
    dual_panda,
    four_bar,
    geometry_scenarios,
    handwriting,
    panda_contact,
    panda_table,
    particle_circle,
    planar_arm_force,
    redundant_chain,
    rolling_grasp,
    slider_crank,
    slider_crank_pidc,
    yoshikawa_zheng,
    yoshikawa_zheng_contact,
)
from pfaff.scenarios.registry import (
    SCENARIOS,
    Param,
    ParameterError,
    Scenario,
    ScenarioResult,
    get_scenario,
    parse_sets,
    scenario,
)
from pfaff.scenarios.runner import Run, execute, run_scenario

__all__ = [
    "SCENARIOS",
    "Param",
    "ParameterError",
    "Run",
    "Scenario",
    "ScenarioResult",
    "execute",
    "get_scenario",
    "parse_sets",
    "run_scenario",
    "scenario",
]
