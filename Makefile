# `make run` starts the whole product; `make test` runs the whole suite.
# Both create .venv and install into it when pyproject.toml or constraints.txt changed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PIP_INSTALL := $(BIN)/python -m pip install -qq --disable-pip-version-check -c constraints.txt
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test lint format clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Oracle needs Python 3.11; set PYTHON=/path/to/python3.11"'
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed-run: $(BIN)/python pyproject.toml constraints.txt
	$(PIP_INSTALL) -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed-run
	$(PIP_INSTALL) -e '.[dev]'
	touch $@

run: $(VENV)/.installed-run
	$(BIN)/python manage.py serve

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	ORACLE_VAR_DIR=$${ORACLE_VAR_DIR:-$(CURDIR)/var/test} $(BIN)/pytest

format: $(VENV)/.installed-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) var/test-*
