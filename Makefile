# Two set-up commands: `make demo` and `make test`. Each creates .venv and installs on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The lock: every package's version, so the outputs the docs show stay the same until it moves (`make lock`).
LOCK := constraints.txt
LOCK_VENV := .lock-venv
# Nothing here reaches the Hugging Face Hub: every model and dataset is local.
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export TOKENIZERS_PARALLELISM := false
# Material for MkDocs prints a banner about its successor on every build; the docs build is quiet without it.
export NO_MKDOCS_2_WARNING := 1
# Bytecode is written as modules are first imported (an empty value clears a PYTHONDONTWRITEBYTECODE=1 set outside),
# so pip installs without compiling: it compiled all 21,157 modules of the venv one after another, 42 s of a 79 s
# install on 2 cores, where the whole test suite imports 8,653 of them.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: venv lock demo test check test-fast bench figures lint docs docs-serve clean

venv: $(STAMP)

# Reinstalled when pyproject.toml or the lock changes.
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade -q pip
	$(BIN)/pip install --no-compile -q -c $(LOCK) -e ".[all,test]"
	touch $(STAMP)

# Moves the lock: the newest versions pyproject.toml allows, resolved in a throwaway venv and frozen into $(LOCK)
# (the project itself left out; torch without its local label, so the CPU wheel and a CUDA one both match).
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --upgrade -q pip
	$(LOCK_VENV)/bin/pip install -q -e ".[all,test]"
	{ sed -n '1,/^$$/p' $(LOCK); $(LOCK_VENV)/bin/pip freeze --exclude-editable | sed -E 's/^(torch==[^+]*)\+.*/\1/'; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf $(LOCK_VENV)

# The official published figures, shown as a labelled "reported" group when the shared data is beside us.
REPORTED := $(wildcard ../shared/data/reference/freshstack-official-leaderboard.json)

demo: $(STAMP)
	$(BIN)/freshstack-hf demo --out demo-out $(if $(REPORTED),--reported $(REPORTED))

# Tests run on every core (pytest-xdist); a file's tests stay on one worker, so a module's fixtures are built once.
# One worker more than the cores: about a quarter of a test's time is spent waiting on a board, a worker or a
# browser it started, and the extra worker fills it (on 2 cores the suite took 685 s with 3 workers, 732 s with 2).
# tests/scheduling.py hands the longest files out first.
PYTEST_WORKERS ?= $(shell $(PYTHON) -c "import os; print((os.cpu_count() or 1) + 1)")
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile
# The project's bytecode, written once before the tests rather than by each of the workers that import a module first.
COMPILE := $(BIN)/python -m compileall -q -j 0 freshstack_hf leaderboard loaders scripts

# The docs site is built with --strict by the suite itself (test_docs_site.py's `site`), not a second time here.
test: $(STAMP)
	$(BIN)/ruff check .
	$(COMPILE)
	$(BIN)/pytest $(PYTEST_PARALLEL) --durations=25

# The contributor's loop (under 3 minutes on 2 cores): ruff, the import and shape rules, every test not marked slow.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check --quiet .
	$(COMPILE)
	$(BIN)/pytest $(PYTEST_PARALLEL) -q -m "not slow"

test-fast: check

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# Each section's last record (bench-out/SECTION.json) copied to docs/figures/, which the pages' figures are built from.
figures: $(STAMP)
	$(BIN)/python -m benchmarks.figures

# The docs site (mkdocs.yml, pages under docs/), built into site/ and read offline; docs-serve rebuilds on save.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

docs-serve: $(STAMP)
	$(BIN)/mkdocs serve -a 127.0.0.1:8000

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) $(LOCK_VENV) demo-out bench-out site .pytest_cache .ruff_cache
