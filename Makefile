# Two commands do all the set-up on a machine with Python 3 and make:
#   make demo   -- virtual environment, install, run the slider-crank scenario
#   make test   -- same environment plus test extras, lint + format check + docs site + tests
#   make docs   -- the documentation site into site/ (mkdocs build --strict: a warning fails)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test docs bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'
	touch $@ $(VENV)/.installed $(VENV)/.installed-docs

demo: $(VENV)/.installed
	$(BIN)/pfaff run slider-crank --out runs/slider-crank --force

test: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(MAKE) docs
	$(BIN)/python -m pytest -n 2 -q

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[docs]'
	touch $@ $(VENV)/.installed

docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(VENV)/.installed
	$(BIN)/pfaff bench

clean:
	rm -rf $(VENV) runs build site src/*.egg-info
