# Two commands do all the set-up on a machine with Python 3 and make:
#   make demo   -- virtual environment, install, run the slider-crank scenario
#   make test   -- same environment plus test extras (and headless Chromium where apt-get
#                  can install it), lint + format check + docs site + tests
#   make docs   -- the documentation site into site/ (mkdocs build --strict: a warning fails)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test docs bench lint clean browser

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

test: $(VENV)/.installed-test browser
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(MAKE) docs
	$(BIN)/python -m pytest -n 2 -q

# Headless Chromium for the browser tests (report, 3D scene, live view): Debian's
# packages, installed where apt-get runs as root (CI); elsewhere the tests say how, and
# skip -- under CI=1 (.ci/run) they fail instead.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver; } || echo "apt-get could not install Chromium"; \
	else echo "no Chromium: apt-get install chromium chromium-driver to run the browser tests"; fi

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[docs]'
	touch $@ $(VENV)/.installed

docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(VENV)/.installed
	$(BIN)/pfaff bench

clean:
	rm -rf $(VENV) runs build site src/*.egg-info
