"""`make book` never shows outputs of older code: after a change to the package, the
page shows the new output; after a change to one notebook, only that notebook runs again;
with nothing changed, nothing runs.

The test works on a temporary copy of the project (its .venv and node_modules linked, not
copied, and so are the web assets of _build/static when `make offline` has installed them)
whose book is two small notebooks printing what rbdlearn computes, and imports the copy's
rbdlearn (PYTHONPATH), so it can change a package function without touching the real one.
Marked `book`: it runs `make book` four times.
"""

import os
import re
import shutil
import subprocess

import nbformat
import pytest

from test_notebooks_clean import ROOT

pytestmark = pytest.mark.book

TOC = "format: jb-book\nroot: book/probe_a\nchapters:\n  - file: book/probe_b\n"
# The Makefile's targets of the web assets (`make offline`): not made again in the copy
# when linked to the project's own (they would be written into the project's _build).
OFFLINE_STAMPS = ("_build/static/.copied", "_build/static/offline/fonts/noto-sans-jp.css")
COPY_IGNORE = shutil.ignore_patterns(".venv", "_build", "node_modules", ".git", "*.egg-info",
                                     ".pytest_cache", ".hypothesis", "__pycache__")


def copy_project(tmp_path_factory, name, links=(".venv", "node_modules")):
    """A temporary copy of the project (files keep their times: copy2), with ``links`` to
    the project's own folders instead of copies."""
    copy = tmp_path_factory.mktemp(name) / "project"
    shutil.copytree(ROOT, copy, ignore=COPY_IGNORE)
    for link in links:
        (copy / link).symlink_to(ROOT / link)
    return copy


def probe_notebook(title, code):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}"), nbformat.v4.new_code_cell(code)]
    return nb


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    copy = copy_project(tmp_path_factory, "fresh")
    if all((ROOT / stamp).is_file() for stamp in OFFLINE_STAMPS):
        (copy / "_build").mkdir()
        (copy / "_build" / "static").symlink_to(ROOT / "_build" / "static")
    (copy / "_toc.yml").write_text(TOC)
    nbformat.write(probe_notebook("Probe A", 'import rbdlearn as rbd\n'
                                  'print("neutral:", rbd.neutral_q(rbd.planar_chain(2)))'),
                   copy / "book" / "probe_a.ipynb")
    nbformat.write(probe_notebook("Probe B", 'print("probe b:", 6 * 7)'),
                   copy / "book" / "probe_b.ipynb")
    return copy


def make_book(project):
    """`make book` in the copy (its .venv is the real one: never reinstall it; nor its
    web assets when they are the project's)."""
    env = dict(os.environ, PYTHONPATH=str(project))
    keep = [".venv/.rbdlearn-installed"]
    if (project / "_build" / "static").is_symlink():
        keep += OFFLINE_STAMPS
    proc = subprocess.run(["make", *(f"-o{target}" for target in keep), "book"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = re.search(r"notebooks: (\d+) cached for sources (\w+), (\d+) to execute",
                        proc.stdout)
    assert summary, proc.stdout[-3000:]
    return int(summary[1]), int(summary[3]), proc.stdout + proc.stderr


def page(project, name):
    return (project / "_build" / "html" / "book" / f"{name}.html").read_text(encoding="utf-8")


def test_make_book_follows_the_package_and_the_notebooks(project):
    # the first build executes both notebooks
    assert make_book(project)[:2] == (0, 2)
    assert "neutral: [0. 0.]" in page(project, "probe_a")

    # a package function changes: every notebook runs again, the page shows the new output
    model_py = project / "rbdlearn" / "model.py"
    model_py.write_text(model_py.read_text() + "\n\ndef neutral_q(model):  # changed\n"
                        "    return np.full(model.nq, 7.0)\n")
    assert make_book(project)[:2] == (0, 2)
    html = page(project, "probe_a")
    assert "neutral: [7. 7.]" in html and "neutral: [0. 0.]" not in html

    # one notebook changes: it alone runs again
    nb = nbformat.read(project / "book" / "probe_b.ipynb", as_version=4)
    nb.cells[1].source = 'print("probe b:", 6 * 9)'
    nbformat.write(nb, project / "book" / "probe_b.ipynb")
    assert make_book(project)[:2] == (1, 1)
    assert "probe b: 54" in page(project, "probe_b")
    assert "neutral: [7. 7.]" in page(project, "probe_a")

    # nothing changes: nothing runs, and the build log is short
    cached, executed, log = make_book(project)
    assert (cached, executed) == (2, 0)
    assert len(log.strip().splitlines()) <= 10, log
