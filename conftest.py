"""pytest collects each notebook under book/ as one test: it runs every cell once, in a
fresh kernel, from a temporary directory outside the repository, and fails naming each
failing cell (_ext/nbexec.py). A notebook that ran cleanly is cached, and the book build
reuses that execution instead of running the notebook again.

(nbval, still installed, takes over when asked: ``pytest --nbval-lax book/…``.)

The notebooks whose numbers rest on pivoting, iteration or near-singular solves are marked
``fp_sensitive``, as such tests are: `make test` runs them again under a second
floating-point environment, with RBDLEARN_NB_UNCACHED=1, which executes a notebook
without reading or writing the cache (whose outputs the book shows: the first
environment's).
"""

import os

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))
import nbexec  # noqa: E402

BOOK = nbexec.ROOT / "book"
FP_SENSITIVE = {                       # see the module docstring
    "ch2_aba/06_contact.ipynb",        # Lemke's pivots, PGS, the box and biped runs
}


def pytest_collect_file(file_path, parent):
    nbval_asked = any(parent.config.getoption(o, False) for o in ("nbval", "nbval_lax"))
    if (file_path.suffix == ".ipynb" and file_path.is_relative_to(BOOK) and not nbval_asked
            and ".ipynb_checkpoints" not in file_path.parts):
        return NotebookFile.from_parent(parent, path=file_path)
    return None


class NotebookFile(pytest.File):
    def collect(self):
        item = NotebookItem.from_parent(self, name="every cell")
        if self.path.relative_to(BOOK).as_posix() in FP_SENSITIVE:
            item.add_marker(pytest.mark.fp_sensitive)
        yield item


class NotebookFailed(Exception):
    def __init__(self, execution):
        super().__init__(execution.report())


class NotebookItem(pytest.Item):
    def runtest(self):
        if os.environ.get("RBDLEARN_NB_UNCACHED") == "1":
            execution = nbexec.execute(self.path)
            if execution.failures:
                raise NotebookFailed(execution)
            return
        folder = nbexec.cache_dir()       # the package as it is now
        if nbexec.is_cached(self.path, folder):
            return                        # ran cleanly against these sources already
        execution = nbexec.run_and_cache(self.path, folder)
        if execution.failures:
            raise NotebookFailed(execution)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, NotebookFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.path.relative_to(nbexec.ROOT)}: every cell"
