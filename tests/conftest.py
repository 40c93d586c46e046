"""Shared test settings: the hypothesis profiles of the fuzz tests.

``ci`` (the default) keeps ``make test`` fast; ``thorough`` runs many more examples:
``.venv/bin/python -m pytest tests/test_fuzz_files.py --hypothesis-profile=thorough``.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=3000, deadline=None)
settings.load_profile("ci")
