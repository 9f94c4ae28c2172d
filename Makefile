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
.PHONY: help venv book book-force test lab clean bench strip

help:
	@echo "make book   build the HTML book (prints the path of index.html)"
	@echo "make test   unit tests + every notebook (nbval) + book build from a clean cache"
	@echo "make lab    open the notebooks in JupyterLab"
	@echo "make book-force  build the book re-executing every notebook (no cache)"
	@echo "make bench  time rbdlearn against Pinocchio"
	@echo "make strip  remove outputs from the notebooks before committing"
	@echo "make clean  remove _build (keeps .venv and node_modules)"

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

# The scripts the pages load -- MathJax 3, require.js and the ipywidgets HTML manager
# (embed-amd.js, the build for ipywidgets 8, and its icon fonts) -- are pinned in package.json and
# package-lock.json and installed with `npm ci` into node_modules/ (kept by `make clean`).
# They are copied to _build/static/offline/; _config.yml adds _build/static to
# html_static_path, so every build (`make book`, and the temporary one of `make test`)
# serves them from _static/offline/ and no page loads anything from a CDN.
NPM ?= npm
NODE_STAMP := node_modules/.package-lock.json
OFFLINE_STAMP := _build/static/.copied

$(NODE_STAMP): package.json package-lock.json
	@command -v $(NPM) >/dev/null || { echo "npm not found: the book's MathJax and widget" \
	    "scripts are installed with npm (Debian: apt-get install npm)"; exit 1; }
	$(NPM) ci --ignore-scripts --no-audit --no-fund
	touch $@

$(OFFLINE_STAMP): $(NODE_STAMP)
	rm -rf _build/static/offline
	mkdir -p _build/static/offline/html-manager
	cp -R node_modules/mathjax/es5 _build/static/offline/mathjax
	cp node_modules/requirejs/require.js _build/static/offline/
	cd node_modules/@jupyter-widgets/html-manager/dist && \
	    cp embed-amd.js *.woff2 *.woff *.ttf *.eot *.svg $(CURDIR)/_build/static/offline/html-manager/
	touch $@

book: $(STAMP) $(OFFLINE_STAMP) _build/.rbdlearn-sources
	$(BIN)/jupyter-book build $(JB_FLAGS) .
	@echo "$(CURDIR)/_build/html/index.html"

# The nightly CI build: `make book` with `execute_notebooks: force`, so every notebook runs
# again and a change in a pinned package cannot hide behind the notebook cache. The config
# is a copy of _config.yml with that one key replaced (the build fails if the key was not
# found), next to it because Jupyter Book resolves relative paths (local_extensions) against
# the config file's folder; it is removed after the build. Extra build options go in
# FORCE_FLAGS, e.g. a build outside the project: make book-force FORCE_FLAGS="--path-output /tmp/b"
FORCE_CONFIG := _config.force.yml
FORCE_FLAGS ?=
book-force: $(STAMP)
	sed 's/^\(  *execute_notebooks:\).*/\1 force/' _config.yml > $(FORCE_CONFIG)
	grep -q '^ *execute_notebooks: force$$' $(FORCE_CONFIG) || { rm -f $(FORCE_CONFIG); exit 1; }
	status=0; $(MAKE) book JB_FLAGS="$(JB_FLAGS) --config $(FORCE_CONFIG) $(FORCE_FLAGS)" || status=$$?; \
	rm -f $(FORCE_CONFIG); exit $$status

# 1. unit/property/Pinocchio tests and every notebook, two workers; --dist loadscope
#    keeps all cells of one notebook on the same worker (they share one kernel);
# 2. the book build (tests/test_book_build.py, marker `book`) on its own, so it does not
#    compete with the notebook kernels for the two cores, then the browser tests
#    (tests/test_browser.py, markers `book` and `browser`) on that same build in headless
#    Chromium; without /usr/bin/chromium they are skipped, and said so.
# Both steps always run; the target fails if either failed.
CHROMIUM := /usr/bin/chromium
test: $(STAMP) $(OFFLINE_STAMP)
	status=0; \
	$(PYTEST) -n 2 --dist loadscope -m "not book" \
	    --nbval-lax --nbval-current-env --nbval-cell-timeout=120 tests book || status=$$?; \
	[ -x $(CHROMIUM) ] || echo "NOTE: the browser tests will be SKIPPED: $(CHROMIUM) not found" \
	    "(Debian: apt-get install chromium; .ci/run does this)"; \
	$(PYTEST) -m book -rs tests || status=$$?; \
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
