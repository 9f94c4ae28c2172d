"""`make test` fails when any of its parts fails: the tests and notebooks, the second
floating-point environment and the book build (both run in the background beside them),
and the browser tests.

The recipe runs for real on a temporary copy of the project (as in test_book_freshness.py),
with PYTEST set to a stand-in that passes at once, or fails for the run whose arguments
hold a given string. Marked `book`: the copy links the web assets `make offline` installed.
"""

import os
import shutil
import subprocess

import pytest

from test_book_freshness import COPY_IGNORE, OFFLINE_STAMPS
from test_notebooks_clean import ROOT

pytestmark = pytest.mark.book

STAND_IN = """#!/bin/sh
case "$*" in *"$FAIL_ON"*) echo "stand-in: failing $*"; exit 1;; esac
echo "stand-in: passing $*"
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    if not all((ROOT / stamp).is_file() for stamp in OFFLINE_STAMPS):
        pytest.skip("the web assets are not installed (make offline)")
    copy = tmp_path_factory.mktemp("make-test") / "project"
    shutil.copytree(ROOT, copy, ignore=COPY_IGNORE)
    for name in (".venv", "node_modules"):
        (copy / name).symlink_to(ROOT / name)
    (copy / "_build").mkdir()
    (copy / "_build" / "static").symlink_to(ROOT / "_build" / "static")
    stand_in = copy / "stand_in_pytest"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    return copy


@pytest.mark.parametrize("fail_on, says", [
    (None, None),
    ('not book', None),                                   # the tests and notebooks
    ("fp_sensitive", "FAILED under the second floating-point environment"),
    ("tests/test_book_build.py", "FAILED: the book's web assets (make offline) or its build"),
    ("-rs", None),                                        # the browser tests
])
def test_make_test_fails_when_a_part_fails(project, fail_on, says):
    keep = [f"-o{target}" for target in (".venv/.rbdlearn-installed", *OFFLINE_STAMPS)]
    proc = subprocess.run(["make", *keep, "test", f"PYTEST={project / 'stand_in_pytest'}"],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, FAIL_ON=fail_on or "\n"))
    log = proc.stdout + proc.stderr
    assert (proc.returncode == 0) == (fail_on is None), log
    assert "make test phases:" in log, log
    if says:
        assert says in log, log
