# MIRIX SaaS. Two commands on a fresh machine (Python 3.11, gcc, git): `make run`, `make test`.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run test test-unit system-packages lint format bench clean-var

$(INSTALLED): requirements/base.txt requirements/dev.txt requirements/prod.txt clients/python/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements/dev.txt
	$(BIN)/python -m apps.providers.minilm_onnx
	@touch $(INSTALLED)

## The service on the embedded stack (or the servers in DATABASE_URL / CELERY_BROKER_URL).
run: $(INSTALLED)
	$(BIN)/python -m infra.embedded.stack

## The whole suite against the embedded Postgres, with the 25 slowest tests listed.
test: system-packages $(INSTALLED)
	$(BIN)/python -m pytest --durations=25

## Only the tests marked `unit`: no Postgres, Redis or broker is started (settings.unit).
test-unit: $(INSTALLED)
	$(BIN)/python -m pytest -m unit --ds=mirix_saas.settings.unit --durations=10

## What the suite needs from the system (Chromium): installed if missing, or the command to run.
system-packages:
	@bash infra/setup/system_packages.sh

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check apps workers infra mirix_saas
	$(BIN)/mypy apps workers
	$(BIN)/lint-imports --no-cache

format: $(INSTALLED)
	$(BIN)/ruff format apps workers infra mirix_saas tests
	$(BIN)/ruff check --fix .

## Stop the embedded services and delete all local data.
clean-var: $(INSTALLED)
	$(BIN)/python -c "from infra.embedded import postgres, redis; from infra.embedded.environment import postgres_dir, redis_dir; redis.stop_redis(redis_dir()); postgres.stop_postgres(postgres_dir())"
	rm -rf var
