"""`make test` fails when any of its parts fails: the tests and notebooks, the second
floating-point environment and the book build (both run in the background beside them),
and the browser tests.

The recipe runs for real on a temporary copy of the project (as in test_book_freshness.py),
with PYTEST set to a stand-in that passes at once, or fails for the run whose arguments
hold a given string. The copy links the project's .venv for its Python; the targets that
install things (the packages, the web assets) are given as stamp files made just now, so
`make test`'s own `make venv` and `make offline` find nothing to do and install nothing
into the linked .venv (`make -o` would not reach them: make does not pass -o on).
"""

import os
import subprocess

import pytest

from test_book_freshness import copy_project

# the Makefile's variables naming the stamps of its installing targets
STAMPS = ("STAMP", "NODE_STAMP", "OFFLINE_STAMP", "FONT_CSS")
STAND_IN = """#!/bin/sh
case "$*" in *"$FAIL_ON"*) echo "stand-in: failing $*"; exit 1;; esac
echo "stand-in: passing $*"
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    copy = copy_project(tmp_path_factory, "make-test", links=[".venv"])
    (copy / "stamps").mkdir()
    for name in STAMPS:
        (copy / "stamps" / name).touch()    # newer than every copied file (they keep their times)
    stand_in = copy / "stand_in_pytest"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    return copy


@pytest.mark.parametrize("fail_on, says", [
    (None, None),
    ("worksteal -m not book", None),                      # the tests and notebooks
    ("fp_sensitive", "FAILED under the second floating-point environment"),
    ("tests/test_book_build.py", "FAILED: the book's web assets (make offline) or its build"),
    ("pdf.py --quiet", "FAILED: the book's web assets (make offline) or its build"),  # its PDF
    ("-rs", None),                                        # the browser tests
])
def test_make_test_fails_when_a_part_fails(project, fail_on, says):
    stamps = [f"{name}=stamps/{name}" for name in STAMPS]
    stand_in = project / "stand_in_pytest"
    proc = subprocess.run(["make", "test", *stamps, f"PYTEST={stand_in}",
                           f"PDF_PRINT={stand_in} pdf.py"],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, FAIL_ON=fail_on or "\n"))
    log = proc.stdout + proc.stderr
    assert (proc.returncode == 0) == (fail_on is None), log
    assert "make test phases:" in log, log
    if says:
        assert says in log, log
