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
.PHONY: help venv offline viewer book book-force pdf test lab clean bench strip colab

help:
	@echo "make book   build the HTML book (prints the path of index.html)"
	@echo "make test   unit tests + every notebook (executed once) + book build + browser tests"
	@echo "make lab    open the notebooks in JupyterLab"
	@echo "make pdf    build the book, then the whole book as one PDF (_build/html/rbdlearn.pdf)"
	@echo "make book-force  build the book re-executing every notebook and re-reading every page"
	@echo "make bench  time rbdlearn against Pinocchio"
	@echo "make strip  remove outputs from the notebooks before committing"
	@echo "make viewer bundle the 3-D viewer (viewer/) into rbdlearn/viz/rbd3d.js"
	@echo "make colab  write the Colab edition colab/ of the notebooks (after editing book/)"
	@echo "make clean  remove _build (keeps .venv and node_modules)"

# Python writes the bytecode of each module it imports (to __pycache__/, ignored by git) also
# where the environment sets PYTHONDONTWRITEBYTECODE, as some CI machines do: each process
# after the first then reads compiled modules, and pytest keeps its rewritten test modules
# (without this, every pytest process rewrote and compiled some 160 modules, 3-4 s of CPU,
# and compiling all of .venv at install time instead took 35 s of CPU).
export PYTHONDONTWRITEBYTECODE =

# Every process that make starts (tests, notebook kernels, the book build) uses one BLAS
# thread: many of them share the cores, and rbdlearn's small matrices gain nothing from
# more (importing rbdlearn leaves BLAS alone; rbdlearn.one_blas_thread() is the explicit
# call that the timing cells and benchmarks/ make). Set it in the environment to override.
OPENBLAS_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS

# The interpreter is an order-only prerequisite: an existing .venv is reused, never recreated.
# It is made without pip: installing pip into it took 5 of the 13 s of `make venv`.
$(BIN)/python:
	$(PY) -m venv --without-pip $(VENV)

# The pinned requirements are installed by uv (itself pinned, from PyPI), which downloads and
# unpacks in parallel (measured on a two-core machine with empty caches: 21 s, pip 69 s).
# uv itself is installed by the pip wheel that Python ships (ensurepip's), run in place.
UV_VERSION := 0.13.9
UV_PIP := $(BIN)/uv pip install -q --python $(BIN)/python
PIP_WHEEL = $(shell $(BIN)/python -c "import ensurepip, pathlib; \
    print(*pathlib.Path(ensurepip.__file__).parent.glob('_bundled/pip-*.whl'))")
$(STAMP): requirements.txt pyproject.toml | $(BIN)/python
	@[ -n "$(PIP_WHEEL)" ] || { echo "Python's own pip wheel (ensurepip) is missing" \
	    "(Debian: apt-get install python3-venv)"; exit 1; }
	$(BIN)/python $(PIP_WHEEL)/pip install -q uv==$(UV_VERSION)
	$(UV_PIP) -r requirements.txt
	$(UV_PIP) -e . --no-deps
	touch $@

venv: $(STAMP)

# The scripts the pages load -- MathJax 4 and its font, and the ipywidgets HTML manager
# (embed.js, the build for ipywidgets 8, and its icon fonts) -- and the web font of the
# Japanese text (Noto Sans JP, @fontsource/noto-sans-jp) -- and three.js and esbuild, of
# which `make viewer` makes the 3-D viewer's bundle -- are pinned in package.json and
# package-lock.json and installed into node_modules/ (kept by `make clean`) by
# _ext/web_assets.py: npm fetches the packages (esbuild's program: the package of its
# build for this machine), the script checks each against the lock file and unpacks it,
# without the packages they depend on, which the book never serves (`npm ci` installs
# those too: 135 packages, 23 s of CPU, against 7 s for the first four, 8 s for all).
# They are copied to _build/static/offline/ (the font by _ext/cjk_font.py, which keeps its
# CJK slices and writes their stylesheet); _config.yml adds _build/static to
# html_static_path, so every build (`make book`, and the temporary one of `make test`)
# serves them from _static/offline/ and no page loads anything from a CDN.
NPM ?= npm
NODE_STAMP := node_modules/.rbdlearn-assets
OFFLINE_STAMP := _build/static/.copied

$(NODE_STAMP): package.json package-lock.json _ext/web_assets.py
	@command -v $(NPM) >/dev/null || { echo "npm not found: the book's MathJax and widget" \
	    "scripts are installed with npm (Debian: apt-get install npm)"; exit 1; }
	$(PY) _ext/web_assets.py --npm $(NPM)
	touch $@

$(OFFLINE_STAMP): $(NODE_STAMP)
	rm -rf _build/static/offline
	mkdir -p _build/static/offline/html-manager
	cp -R node_modules/mathjax _build/static/offline/mathjax
	mkdir -p _build/static/offline/mathjax-fonts/mathjax-newcm-font
	cp -R node_modules/@mathjax/mathjax-newcm-font/chtml node_modules/@mathjax/mathjax-newcm-font/chtml.js \
	    _build/static/offline/mathjax-fonts/mathjax-newcm-font/
	cd node_modules/@jupyter-widgets/html-manager/dist && \
	    cp embed.js *.woff2 *.woff *.ttf *.eot *.svg $(CURDIR)/_build/static/offline/html-manager/
	touch $@

# The slices of the font that hold the Japanese characters of the book's sources (made
# again when a page changes), and their stylesheet.
FONT_CSS := _build/static/offline/fonts/noto-sans-jp.css
BOOK_SOURCES := $(shell find book -name "*.md" -o -name "*.ipynb" -o -name "*.bib")
$(FONT_CSS): $(OFFLINE_STAMP) _ext/cjk_font.py $(BOOK_SOURCES)
	rm -rf _build/static/offline/fonts
	$(PY) _ext/cjk_font.py node_modules/@fontsource/noto-sans-jp _build/static/offline/fonts book

offline: $(OFFLINE_STAMP) $(FONT_CSS)

# The 3-D viewer: viewer/rbd3d.js and three.js (both from package.json) bundled by esbuild
# into one minified ES module, rbdlearn/viz/rbd3d.js, committed (package data: a notebook's
# live 3-D view works wherever rbdlearn is installed, without npm). Run it after changing
# viewer/ and commit the result; tests/test_web_assets.py checks that they agree.
viewer: $(NODE_STAMP)
	$(PY) _ext/web_assets.py --viewer rbdlearn/viz/rbd3d.js

# Notebooks run once, by _ext/nbexec.py, into the cache _build/.jupyter_cache/<fingerprint>
# that the build reads (execute_notebooks: cache); the fingerprint hashes rbdlearn/,
# requirements.txt and pyproject.toml, so a change there re-executes every notebook and
# re-reads every page, and a changed notebook alone re-executes alone. The log shows the
# notebooks executed, then only warnings (which fail the build; Sphinx writes them to
# stderr) and where the HTML is; jupyter-book's own report goes to a file.
book: $(STAMP) $(OFFLINE_STAMP) $(FONT_CSS)
	@$(BIN)/python _ext/nbexec.py
	@echo "jupyter-book build $(JB_FLAGS) (its report: _build/jupyter-book.log)"
	@$(BIN)/jupyter-book build -q $(JB_FLAGS) . > _build/jupyter-book.log \
	    || { cat _build/jupyter-book.log; exit 1; }
	@echo "$(CURDIR)/_build/html/index.html"

# The whole book as one PDF, _build/html/rbdlearn.pdf, which the intro page links to (with
# its size): every page of _toc.yml printed by Chromium's headless shell, joined by pypdf
# (_ext/pdf.py). Not part of `make book`: printing the 34 pages took 5-8 min on this
# two-core machine shared with other jobs (load 5-15), against about 1 min for the build.
# Build the published site with `make pdf`.
PDF_PRINT := $(BIN)/python _ext/pdf.py
pdf: book
	@$(PDF_PRINT) --quiet _build/html

# The nightly CI build: every notebook executed again (its cache dropped) and every page
# re-read (--all), so nothing can hide behind a cache.
book-force: $(STAMP)
	rm -rf _build/.jupyter_cache
	$(MAKE) book JB_FLAGS="$(JB_FLAGS) --all"

# 1. unit/property/Pinocchio tests and every notebook (one pytest item each, executed once
#    and cached: conftest.py, _ext/nbexec.py), five pytest-xdist workers on the two cores:
#    a worker waits while its notebook's kernel computes, the long notebooks' tails
#    overlap, and on a machine that other jobs share, the CPU is divided among the running
#    processes, so five keep a larger part of it than three (one run each with one core
#    busy: this step took 405 s on five workers, 429 s on three; without other jobs the
#    two extra workers cost their start-up, some 5 s of CPU each); each worker begins
#    with its share of the notebooks (conftest.py), so the last one finishes about when
#    the others do (with one core busy: 6 s after the mean, against 27 s with the
#    notebooks collected last). Beside it, from its start:
#    - the book's web assets (`make offline`: npm, their copy, the font's slices; done
#      before this step, they kept one core busy and the other mostly idle for 20 s),
#      then the book build (tests/test_book_build.py, marker `book`), started as soon as
#      every notebook is in the cache (nbexec.py --wait-until-cached), while the unit
#      tests go on: it reads every notebook from that cache (and fails if it had to
#      execute one); Sphinx uses one core, and alone after the tests it left the other
#      idle; then the PDF of that build (_ext/pdf.py; tests/test_pdf.py checks it in
#      step 2);
#    - the tests and notebooks marked `fp_sensitive` (pivoting, iteration, near-singular
#      solves) under a second floating-point environment (FP2 below: OpenBLAS forced to an
#      older kernel, numpy's newest SIMD paths off; the notebooks executed afresh, not
#      from the cache), on two workers of their own.
#    Their logs are printed when all three are done.
# 2. on three workers, the browser tests on that build (tests/test_browser.py, markers
#    `book` and `browser`: Chromium's headless shell; without it they are skipped,
#    and said so), the launch buttons, tests/test_book_freshness.py (`make book` in a
#    copy of the project) and the tests of the font's slices (tests/test_cjk_font.py:
#    they need the installed assets). Three, not two: a worker waits while its page
#    loads and typesets (measured with one core busy: 181 s on three workers, 199 s on
#    two).
# Every step runs; the target fails if any failed, and prints the time of each phase.
CHROMIUM := /usr/bin/chromium-headless-shell
TEST_HTML := _build/test-book/_build/html
FP2 := OPENBLAS_CORETYPE=Prescott NPY_DISABLE_CPU_FEATURES=X86_V3 RBDLEARN_NB_UNCACHED=1
FP2_LOG := _build/test-fp2.log
BUILD_LOG := _build/test-build.log
STEP1_DONE := _build/.tests-done
# The FP2 and browser runs collect only the test files that hold such tests (collecting
# every file costs each pytest process some 5 s of CPU); a browser test is marked
# pytest.mark.book directly or through test_browser.BROWSER_MARKS (or browser_test, which
# applies them).
FP2_TESTS := $(shell grep -l fp_sensitive tests/test_*.py)
BOOK_TESTS := $(filter-out tests/test_book_build.py,\
    $(shell grep -lE "mark\.book|BROWSER_MARKS|browser_test" tests/test_*.py))
test:
	@t0=$$(date +%s); \
	$(MAKE) --no-print-directory venv || exit 1; \
	t1=$$(date +%s); status=0; mkdir -p _build; rm -f $(STEP1_DONE); \
	echo "beside the tests and notebooks: the book's web assets (make offline) and its build" \
	    "once every notebook is cached (log: $(BUILD_LOG)), and the fp_sensitive tests and" \
	    "notebooks under a second floating-point environment ($(FP2); log: $(FP2_LOG))"; \
	( $(FP2) $(PYTEST) -n 2 -p no:cacheprovider -m "fp_sensitive and not book" $(FP2_TESTS) book \
	    > $(FP2_LOG) 2>&1; rc=$$?; echo "FP2 done after $$(( $$(date +%s) - t1 )) s" >> $(FP2_LOG); \
	  exit $$rc ) & fp2=$$!; \
	( $(MAKE) --no-print-directory offline > $(BUILD_LOG) 2>&1 || exit 1; \
	  echo "web assets installed after $$(( $$(date +%s) - t1 )) s" >> $(BUILD_LOG); \
	  $(BIN)/python _ext/nbexec.py --wait-until-cached $(STEP1_DONE) >> $(BUILD_LOG) 2>&1; \
	  echo "book build started after $$(( $$(date +%s) - t1 )) s" >> $(BUILD_LOG); \
	  $(PYTEST) -p no:cacheprovider -m book tests/test_book_build.py >> $(BUILD_LOG) 2>&1; \
	  rc=$$?; echo "book build done after $$(( $$(date +%s) - t1 )) s" >> $(BUILD_LOG); \
	  if [ $$rc = 0 ] && [ -x $(CHROMIUM) ]; then \
	    $(PDF_PRINT) --quiet $(TEST_HTML) >> $(BUILD_LOG) 2>&1 || rc=1; \
	    echo "PDF printed after $$(( $$(date +%s) - t1 )) s" >> $(BUILD_LOG); fi; \
	  exit $$rc ) & build=$$!; \
	$(PYTEST) -n 5 --dist worksteal -m "not book" tests book || status=$$?; \
	t2=$$(date +%s); touch $(STEP1_DONE); \
	wait $$build || { status=1; build_failed=1; }; \
	wait $$fp2 || { status=1; fp2_failed=1; }; \
	tail -n 40 $(BUILD_LOG); [ -z "$$build_failed" ] || echo "FAILED: the book's web" \
	    "assets (make offline) or its build (tests/test_book_build.py, then its PDF," \
	    "_ext/pdf.py): see $(BUILD_LOG)"; \
	tail -n 40 $(FP2_LOG); [ -z "$$fp2_failed" ] || echo "FAILED under the second" \
	    "floating-point environment: see $(FP2_LOG)"; \
	t3=$$(date +%s); \
	[ -x $(CHROMIUM) ] || echo "NOTE: the browser tests will be SKIPPED: $(CHROMIUM) not found" \
	    "(Debian: apt-get install chromium-headless-shell; .ci/run does this)"; \
	RBDLEARN_BOOK_HTML=$(TEST_HTML) $(PYTEST) -n 3 --dist worksteal -m book -rs \
	    $(BOOK_TESTS) || status=$$?; \
	t4=$$(date +%s); \
	echo "make test phases: set-up $$((t1 - t0)) s, tests and notebooks $$((t2 - t1)) s" \
	     "(book build and second FP environment beside them, $$((t3 - t2)) s after)," \
	     "browser tests $$((t4 - t3)) s; total $$((t4 - t0)) s"; \
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

# The Colab edition: colab/<path under book/>.ipynb, each notebook's MyST turned into the
# Markdown Colab renders (_ext/colab.py). Committed, as Colab opens notebooks from GitHub;
# tests/test_colab.py fails when it is older than book/.
colab: $(STAMP)
	$(BIN)/python _ext/colab.py
