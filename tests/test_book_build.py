"""The whole book builds with no warnings, from a clean execution cache.

`make book` caches executed notebooks in _build/.jupyter_cache, and that cache does not
notice changes to rbdlearn. This test therefore builds into a fresh temporary directory
(`--path-output`), so every notebook is executed against the current package.

Marked `book`: `make test` runs it on its own, after the unit tests and nbval, so that the
build does not compete with the notebook kernels for the CPU.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_notebooks_clean import ROOT, toc_entries

pytestmark = pytest.mark.book

JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
BUILD_TIMEOUT = 15 * 60  # seconds; the build normally takes a few minutes
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("book")
    proc = subprocess.run(
        [str(JUPYTER_BOOK), "build", "-W", "-n", "--keep-going", "--path-output", str(out), "."],
        cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT,
    )
    return proc, out / "_build" / "html"


def test_build_succeeds_without_warnings(build):
    proc, _ = build
    log = ANSI_ESCAPE.sub("", proc.stdout + proc.stderr)
    problems = [line for line in log.splitlines()
                if re.search(r"WARNING|ERROR|CRITICAL|Error:", line)
                and not line.startswith("[IPKernelApp]")]  # kernel chatter, not Sphinx
    tail = "\n".join(log.splitlines()[-15:])
    returncode = proc.returncode  # (asserting on proc would print the whole log twice)
    assert returncode == 0, (
        f"jupyter-book build exited with {returncode}.\n\nEnd of the log:\n{tail}\n\n"
        "Warnings and errors:\n" + ("\n".join(problems) or "(none found in the log)")
    )


def test_every_page_is_built(build):
    _, html = build
    pages = ["index"] + toc_entries()
    missing = [page for page in pages if not (html / f"{page}.html").is_file()]
    assert not missing, f"pages missing from {html}: {missing}"
