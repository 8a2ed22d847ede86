# suture: the two commands are `make run` (sample batch) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
# The exact versions every install here uses (pyproject.toml keeps the ranges); `make constraints` renews it.
CONSTRAINTS := requirements/constraints.txt

.PHONY: run test test-fast durations check format bench soak clean browser promtool clients constraints

$(STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c $(CONSTRAINTS) -e '.[all,dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/suture batch examples/ --out out/

# The suite starts a few hundred interpreters (pytest, each worker, each CLI a test runs). With
# PYTHONDONTWRITEBYTECODE set, as in this machine's environment, every one of them compiled suture again
# and each pytest re-rewrote every test module (collecting took 10.7 s of CPU, 5.1 s with the bytecode
# kept); the .pyc files go to __pycache__ folders, which git ignores.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

# Everything but the soak variants, on four processes, a file to each at a time (a module's shared Redis,
# workers or server stay in one process). Four on two cores, because most integration tests wait on
# workers, faults and deadlines rather than compute: the longest files go first (tests/schedule.py,
# from tests/file_durations.json; --no-loadscope-reorder keeps pytest-xdist from re-sorting them by
# their number of tests) and the CPU-bound fast files fill the waits. Every test starts its own Redis,
# workers and servers on free ports, network namespaces and RabbitMQ vhosts of its own process, so
# none sees another's. With $$REDIS_URL (an external Redis, README) the stacks share that server's
# databases 1-15, which one process hands out in turn: then the suite runs in one process.
TEST_PROCESSES ?= $(if $(REDIS_URL),0,4)
test: $(STAMP) browser promtool clients
	$(PYTEST) -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder -m "not soak"

# Re-measure the seconds each test file takes (the order above): the whole suite, as `make test` runs it.
durations: $(STAMP) browser promtool clients
	$(PYTEST) -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder -m "not soak" --store-file-durations

# The inner loop: every test that starts no Redis, worker or server process (tests/conftest.py marks
# the others `integration` from the fixtures they use). Three processes on two cores: about a sixth of
# the tier waits (slow replies, timeouts, CPU budgets of child processes), which a third process fills
# (97 s against 132 s on two; four gave 98 s).
test-fast: $(STAMP)
	$(PYTEST) -n 3 --dist loadfile --no-loadscope-reorder -m "not soak and not integration and not browser"

# The review pages are tested in Debian's Chromium (Playwright drives it; no browser is downloaded).
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "no $(CHROMIUM), and not root with apt-get: the browser tests will fail (install chromium)"; \
	  fi; \
	fi

# The alert rules (docs/prometheus-rules.yaml) are checked by Debian's promtool (package prometheus;
# its service is not started). In CI the rule tests fail, not skip, without it.
PROMTOOL ?= promtool
promtool:
	@if ! command -v $(PROMTOOL) >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's prometheus package for promtool (the alert rule tests)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	  else \
	    echo "no promtool, and not root with apt-get: the alert rule tests will fail in CI (install prometheus)"; \
	  fi; \
	fi

# The generated-client tests compile a TypeScript client with npm's openapi-typescript, typescript and
# openapi-fetch (tests/clients/typescript/package-lock.json); Debian's nodejs and npm run them.
clients:
	@if ! command -v npm >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's nodejs and npm for the generated-client tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	  else \
	    echo "no npm, and not root with apt-get: the generated-client tests will fail in CI (install nodejs, npm)"; \
	  fi; \
	fi
	@if command -v npm >/dev/null && [ ! -d tests/clients/typescript/node_modules/typescript ]; then \
	  npm ci --no-audit --no-fund --prefix tests/clients/typescript; \
	fi

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/deptry .
	$(BIN)/lint-imports --no-logo
	@# Module and function sizes are a reading guide: reported here, never a failure.
	$(BIN)/python tools/sizes.py

# Format the code, then re-flow the prose and long strings the formatter leaves past the line length.
# (Each round splits one long literal a line; three rounds leave nothing the tool can split.)
format: $(STAMP)
	$(BIN)/ruff format -q .
	for round in 1 2 3; do \
	  $(BIN)/python -m tools.wrap_long_lines $$(git ls-files '*.py') >/dev/null && $(BIN)/ruff format -q . ; \
	done
	$(BIN)/ruff check --select E501 .

# The peers suture is compared with (Instructor, pydantic-ai) are the `bench` extra: never a runtime dependency.
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -c $(CONSTRAINTS) -e '.[all,dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench

soak: $(STAMP)
	$(PYTEST) -m soak tests/reliability

# Renew the pinned versions: resolve every extra afresh in a throwaway venv and freeze it (review the diff).
constraints:
	rm -rf .venv-constraints
	$(PYTHON) -m venv .venv-constraints
	.venv-constraints/bin/python -m pip install -q --upgrade pip
	.venv-constraints/bin/python -m pip install -q '.[all,dev,bench]'
	{ sed -n '/^#/p' $(CONSTRAINTS); \
	  .venv-constraints/bin/python -m pip freeze --exclude-editable | grep -iv '^suture[= @]'; \
	} > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)
	rm -rf .venv-constraints

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache .import_linter_cache tests/clients/typescript/node_modules
