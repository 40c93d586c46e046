"""Shared test settings and fixtures: the hypothesis profiles of the fuzz tests, the
real robot (``panda``) and the engine parametrisation (``engine``).

``ci`` (the default) keeps ``make test`` fast; ``thorough`` runs many more examples:
``.venv/bin/python -m pytest tests/test_fuzz_files.py --hypothesis-profile=thorough``.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from pfaff import core
from pfaff.mechanism import load_robot

settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=3000, deadline=None)
settings.load_profile("ci")


@pytest.fixture(scope="module")
def panda():
    """The Franka Panda of example-robot-data (7 dof, Pinocchio), one per test module."""
    return load_robot("panda")


ENGINES = ["numpy", pytest.param("core", marks=pytest.mark.skipif(
    not core.available(), reason="the compiled core is not built"))]  # fmt: skip


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    """Each test that takes ``engine`` runs on both engines: ``"numpy"``, ``"core"``."""
    return request.param
