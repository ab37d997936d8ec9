# The two commands a newcomer needs are `make run` and `make test` (README: Quick start).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
HOST ?= 127.0.0.1
PYTEST_ARGS ?=

.PHONY: install run test lint bench migrate clean mutate

# Idempotent: reinstalls only when a pyproject.toml changed since the last install. The
# Python client (clients/python) comes with its LangChain extra: tests/clients test both.
# The nlp extra (spaCy, graph/extract_nlp.py) is part of the default install, so that
# `make run` extracts typed relations and `make test` runs their tests.
install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,nlp]'
	$(BIN)/pip install --quiet -e './clients/python[langchain]'
	touch $@

migrate: install
	mkdir -p var/static
	$(BIN)/python manage.py migrate --noinput

# uvicorn would take the client's address from X-Forwarded-For on every connection from
# 127.0.0.1, where any local client can write that header itself, and so reset the login
# lockout and the address limit at will. The engine reads the header itself, and only behind
# a proxy the operator names (DJANGO_BEHIND_PROXY: README, Abuse limits), so uvicorn never.
UVICORN := $(BIN)/uvicorn maria.asgi:application --no-proxy-headers --lifespan off

# A local checkpoint signing key, made once (production keeps its own: README, Production).
TRAIL_KEY := var/trail-signing.key

# The address agents reach this server at (webhooks' `data.url`): the port it serves on, and
# the loopback address when it listens on every interface.
PUBLIC_HOST = $(if $(filter 0.0.0.0 ::,$(HOST)),127.0.0.1,$(HOST))

# The scheduler (manage.py run_scheduler: checkpoints, escalations, webhook retries) runs
# beside the server and is stopped with it, however the server ends.
run: migrate
	$(BIN)/python manage.py trail_key --new $(TRAIL_KEY)
	MARIA_TRAIL_SIGNING_KEY_FILE=$${MARIA_TRAIL_SIGNING_KEY_FILE:-$(TRAIL_KEY)} $(BIN)/python manage.py seed_demo
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C stops)"
	export MARIA_TRAIL_SIGNING_KEY_FILE=$${MARIA_TRAIL_SIGNING_KEY_FILE:-$(TRAIL_KEY)} \
	  MARIA_PUBLIC_URL=$${MARIA_PUBLIC_URL:-http://$(PUBLIC_HOST):$(PORT)}; \
	$(BIN)/python manage.py run_scheduler & scheduler=$$!; \
	trap 'kill $$scheduler 2>/dev/null; wait $$scheduler' EXIT; trap 'exit 130' INT TERM; \
	$(UVICORN) --host $(HOST) --port $(PORT)

test: install
	$(BIN)/pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .
	$(BIN)/lint-imports

bench: install
	@for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis mutants

# The pure cores' mutation score (issue 30: >= 90% each). Slow and CPU-bound, so never part
# of `make test` or CI. One core per run keeps each run bounded: `make mutate CORE=gates.grading`.
# mutmut copies the packages into mutants/ (git ignores it); `mutmut results` lists survivors.
CORE ?= evidence.scoring gates.grading graph.core coordinates.coordinate trail.chain
MUTATE_CHILDREN ?= 2
mutate: install
	@for core in $(CORE); do echo "== $$core"; \
	  nice -n 10 $(BIN)/mutmut run --max-children $(MUTATE_CHILDREN) "$$core.*" || exit 1; done
