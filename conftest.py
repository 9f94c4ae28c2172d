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


@pytest.hookimpl(trylast=True)                  # after -m / -k have deselected items
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist, start each worker on its share of the notebooks. ``--dist
    worksteal`` hands worker k the k-th of n equal runs of the items (sizes as below),
    and an idle worker takes the end of a busy one's run. Collected after the tests, the
    notebooks (seconds to a minute each, against milliseconds for most tests) all came
    last: the longest began late, and the last worker finished 27 s after the mean (one
    core busy). Here each run begins with every n-th notebook, in the book's order, and
    what is left to take at the end is tests: 6 s after the mean."""
    workers = getattr(config, "workerinput", {}).get("workercount")
    notebooks = [item for item in items if isinstance(item, NotebookItem)]
    tests = [item for item in items if not isinstance(item, NotebookItem)]
    if not workers or not notebooks or not tests:
        return
    ordered, used = [], 0
    for k in range(workers):
        size = (len(items) - len(ordered)) // (workers - k)     # worksteal's k-th run
        share = notebooks[k::workers]
        take = max(size - len(share), 0)
        ordered += share + tests[used:used + take]
        used += take
    items[:] = ordered + tests[used:]
