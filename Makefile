# rbdlearn — GNU make. On a fresh machine only Python 3.11 is needed:
# every target below creates .venv and installs the pinned requirements first.

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.rbdlearn-installed
PYTEST := $(BIN)/python -m pytest
# -W: warnings are errors; -n: nitpicky (every reference must resolve);
# --keep-going: report all warnings at once instead of stopping at the first.
JB_FLAGS := -W -n --keep-going

.DEFAULT_GOAL := help
.PHONY: help venv book test lab clean bench strip

help:
	@echo "make book   build the HTML book (prints the path of index.html)"
	@echo "make test   unit tests + every notebook (nbval) + book build from a clean cache"
	@echo "make lab    open the notebooks in JupyterLab"
	@echo "make bench  time rbdlearn against Pinocchio"
	@echo "make strip  remove outputs from the notebooks before committing"
	@echo "make clean  remove _build"

# The interpreter is an order-only prerequisite: an existing .venv is reused, never recreated.
$(BIN)/python:
	$(PY) -m venv $(VENV)

$(STAMP): requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -r requirements.txt
	$(BIN)/pip install -e . --no-deps
	touch $@

venv: $(STAMP)

# With `execute_notebooks: cache` a notebook re-runs only when its code cells change,
# not when rbdlearn changes; drop the cache whenever the package (or its environment)
# changes, so the book never shows outputs of an older rbdlearn.
_build/.rbdlearn-sources: $(wildcard rbdlearn/*.py) requirements.txt pyproject.toml
	rm -rf _build/.jupyter_cache
	mkdir -p _build
	touch $@

book: $(STAMP) _build/.rbdlearn-sources
	$(BIN)/jupyter-book build $(JB_FLAGS) .
	@echo "$(CURDIR)/_build/html/index.html"

# 1. unit/property/Pinocchio tests and every notebook, two workers; --dist loadscope
#    keeps all cells of one notebook on the same worker (they share one kernel);
# 2. the book build (tests/test_book_build.py, marker `book`) on its own, so it does not
#    compete with the notebook kernels for the two cores.
# Both steps always run; the target fails if either failed.
test: $(STAMP)
	status=0; \
	$(PYTEST) -n 2 --dist loadscope -m "not book" \
	    --nbval-lax --nbval-current-env --nbval-cell-timeout=120 tests book || status=$$?; \
	$(PYTEST) -m book tests || status=$$?; \
	exit $$status

# Extra options for JupyterLab, e.g. make lab LAB_ARGS="--no-browser --port 8889".
# Jupyter refuses to run as root unless told to (containers, CI machines).
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	$(BIN)/jupyter lab $(LAB_ARGS) book/

clean:
	rm -rf _build

bench: $(STAMP)
	@set -e; for f in benchmarks/bench_*.py; do \
	    if [ ! -e "$$f" ]; then echo "no scripts in benchmarks/"; break; fi; \
	    echo "== $$f"; $(BIN)/python "$$f"; \
	done

# Notebooks are committed without outputs (tests/test_notebooks_clean.py checks it).
define STRIP_PY
import pathlib, nbformat
for path in sorted(pathlib.Path("book").rglob("*.ipynb")):
    if ".ipynb_checkpoints" in path.parts:
        continue
    nb = nbformat.read(path, as_version=4)
    dirty = nb.metadata.pop("widgets", None) is not None
    for cell in nb.cells:
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None
                                         or "execution" in cell.metadata):
            cell.outputs, cell.execution_count, dirty = [], None, True
            cell.metadata.pop("execution", None)  # timestamps recorded by the executor
    if dirty:
        nbformat.write(nb, path)
        print("stripped", path)
endef
export STRIP_PY

strip: $(STAMP)
	$(BIN)/python -c "$$STRIP_PY"
