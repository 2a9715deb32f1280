# The two commands a newcomer needs: `make run` and `make test`. Everything else is bootstrapped.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 1
# Test processes; tests/scheduling.py decides which runs what.
TEST_WORKERS ?= 2

.PHONY: install install-test run test lint format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

run: install
	$(BIN)/admit migrate
	ADMIT_BASE_URL=$${ADMIT_BASE_URL:-http://$(HOST):$(PORT)} $(BIN)/admit demo
	@echo "API docs: http://$(HOST):$(PORT)/api/v1/docs"
	@echo "Back office: http://$(HOST):$(PORT)/control/ (log in as a team member: admit createuser EMAIL, then admit organizer create SLUG NAME --owner EMAIL)"
	$(BIN)/admit serve --host $(HOST) --port $(PORT) --workers $(WORKERS)

# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set (as on CI machines): the suite
# starts many `admit` processes (servers, workers, the CLI), and each would compile every module anew.
test: install-test
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

lint: install-test
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools

format: install-test
	$(BIN)/ruff check --fix src tests bench tools
	$(BIN)/ruff format src tests bench tools

bench: install-test
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) var build *.egg-info src/*.egg-info
