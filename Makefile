# Two commands do all the set-up on a machine with Python 3 and make:
#   make demo   -- virtual environment, install, run the slider-crank scenario
#   make test   -- same environment plus test extras, lint + format check + test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/pfaff run slider-crank --out runs/slider-crank --force

test: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/python -m pytest -n 2 -q

bench: $(VENV)/.installed
	$(BIN)/pfaff bench

clean:
	rm -rf $(VENV) runs build src/*.egg-info
