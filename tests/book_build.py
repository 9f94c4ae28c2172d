"""One build of the whole book per pytest session, shared by test_book_build.py (the
build log and the pages) and test_browser.py (the pages in Chromium).

The build goes to _build/test-book/ (`--path-output`), emptied first, so Sphinx reads
every page afresh. The notebooks' outputs come from the cache of the current sources
(_ext/nbexec.py), which the first step of `make test` filled by executing each notebook
once; its HTML stays there to be looked at after a failure.
"""

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_notebooks_clean import ROOT

JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
BUILD_DIR = ROOT / "_build" / "test-book"
BUILD_TIMEOUT = 15 * 60  # seconds; the build normally takes a few minutes


@functools.cache
def build_book():
    """Build the book into a fresh directory; returns (the finished process, the HTML dir)."""
    shutil.rmtree(BUILD_DIR, ignore_errors=True)
    proc = subprocess.run(
        [str(JUPYTER_BOOK), "build", "-W", "-n", "--keep-going",
         "--path-output", str(BUILD_DIR), "."],
        cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT,
    )
    return proc, BUILD_DIR / "_build" / "html"


def book_html():
    """The HTML to test in the browser: $RBDLEARN_BOOK_HTML if set (e.g. _build/html after
    `make book`, to rerun the browser tests without rebuilding), else this session's build."""
    if os.environ.get("RBDLEARN_BOOK_HTML"):
        return Path(os.environ["RBDLEARN_BOOK_HTML"]).resolve()
    return build_book()[1]
