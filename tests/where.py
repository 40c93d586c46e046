"""Where the tests' own files are, wherever a test module sits under tests/."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
MODELS = TESTS / "models"  # small model and system files the tests run
DATA = TESTS / "data"  # reference data
REPO = TESTS.parent  # the checkout (README.md, src/, examples/)
