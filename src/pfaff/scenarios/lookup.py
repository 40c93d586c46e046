"""A scenario by name, or a file run as a scenario: the one place that knows both the
registry of named scenarios and the file scenarios (model files, system files, the
MuJoCo comparison). The file scenarios import the registry; the registry imports none
of them, so the scenarios layer has no import circle."""

from __future__ import annotations

from pathlib import Path

from pfaff.errors import ModelError, ParameterError
from pfaff.scenarios.compare import compare_scenario
from pfaff.scenarios.model_file import model_scenario
from pfaff.scenarios.registry import SCENARIOS, Scenario
from pfaff.scenarios.system_file import system_scenario

FILE_SUFFIXES = (".xml", ".urdf", ".toml")


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``, or a model / system file (``.xml``, ``.urdf``,
    ``.toml``), or ``compare:FILE.xml``; a bad name or file raises
    :class:`ParameterError` naming the valid ones or the problem."""
    if name not in SCENARIOS and name.startswith("compare:"):
        return file_scenario(name[len("compare:") :], compare=True)
    if name not in SCENARIOS and name.lower().endswith(FILE_SUFFIXES):
        return file_scenario(name)
    if name not in SCENARIOS:
        kinds = "a model file (.xml MJCF, .urdf URDF) or a system file (.toml)"
        if Path(name).suffix or Path(name).exists() or "/" in name or "\\" in name:
            raise ParameterError(
                f"{name!r} is neither a scenario name nor a file pfaff runs: give {kinds}, "
                f"or a scenario name (pfaff list)"
            )
        raise ParameterError(
            f"unknown scenario {name!r}; valid scenarios: {', '.join(sorted(SCENARIOS))}; "
            f"or {kinds}"
        )
    return SCENARIOS[name]


def file_scenario(path: str, compare: bool = False) -> Scenario:
    """A model file (MJCF, URDF) or a system file (TOML) as a scenario -- with
    ``compare``, the MJCF file in MuJoCo and in pfaff side by side; bad files raise
    :class:`ParameterError` naming the problem."""
    p = Path(path)
    if not p.is_file():
        raise ParameterError(f"file {path!r} does not exist")
    try:
        if compare:
            return compare_scenario(p)
        if p.suffix.lower() == ".toml":
            return system_scenario(p)
        return model_scenario(p)
    except ParameterError:
        raise
    except (ModelError, ValueError) as exc:
        raise ParameterError(str(exc)) from None
