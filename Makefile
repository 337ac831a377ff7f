# Quick start: `make demo` then `make test`. Both create and reuse .venv with the Python found on PATH.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_BRAIN := brain-demo

.PHONY: demo test test-fast lint install install-dev bench clean

$(BIN)/activate:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "brain needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Editable installs: code changes need no re-install, so pip runs again only when pyproject.toml changes
# (a stamp file per extra), not on every `make test-fast`.
$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/activate
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

demo: install
	rm -rf $(DEMO_BRAIN)
	SOURCE_DATE_EPOCH=1767225600 $(BIN)/brain --brain $(DEMO_BRAIN) --actor demo@example.org init
	SOURCE_DATE_EPOCH=1767225600 $(BIN)/brain --brain $(DEMO_BRAIN) --actor demo@example.org ingest fixtures/corpus --license CC-BY-4.0
	$(BIN)/brain --brain $(DEMO_BRAIN) verify
	$(BIN)/brain --brain $(DEMO_BRAIN) status
	$(BIN)/brain --brain $(DEMO_BRAIN) search "how do I deploy a release"
	@echo
	@echo "brain is installed in $(VENV)/, which is not on your PATH. To use it:"
	@echo "  . $(VENV)/bin/activate      # this shell: then 'brain --brain $(DEMO_BRAIN) ls'"
	@echo "  pipx install .   (or: uv tool install .)   # everywhere, as a tool"

# Lint and types first (settings in pyproject.toml), so a regression fails `make test` and CI before the suite runs.
# Every first-party package that exists is type-checked (packages arriving later join by existing).
PACKAGES := brain ingest oci cli retrieval serve export signers sdk
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/mypy $(wildcard $(PACKAGES))

# The suite runs on every core (pytest-xdist; each worker starts its own session registries), the
# longest tests first so none is left alone at the end. `make test-fast` is the inner loop: no registry,
# no browser, nothing marked slow.
# Bytecode is written even where the environment sets PYTHONDONTWRITEBYTECODE (this machine's does): without
# it each worker re-rewrites every test module's asserts on every run (7.5 s of CPU for collection instead of
# 3 s) and each `brain` subprocess compiles the project again. It goes to .venv/pycache, outside the tree.
JOBS ?= auto
PYTEST := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache $(BIN)/python -m pytest
test: lint
	$(PYTEST) -n $(JOBS) --dist worksteal $(PYTEST_ARGS)

test-fast: install-dev
	$(PYTEST) -n $(JOBS) --dist worksteal -m "not slow and not registry and not browser" -q $(PYTEST_ARGS)

bench: install-dev
	$(BIN)/python bench/core.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/verify.py
	$(BIN)/python bench/oci.py

clean:
	rm -rf $(VENV) $(DEMO_BRAIN) .pytest_cache .hypothesis
