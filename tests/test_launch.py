"""Run it yourself: the Binder environment, and the Binder / Colab launch buttons.

Binder (repo2docker) reads binder/ instead of the repository root: binder/requirements.txt
must install exactly the pinned root requirements.txt, binder/postBuild must install
rbdlearn itself, and binder/runtime.txt must ask for the Python the pins were made with.
The launch buttons come from _config.yml (`repository`, `launch_buttons`); the test marked
`book` checks that every notebook page of the built book has both, pointing at its notebook.
"""

import os
import re
from pathlib import Path

import pytest
import yaml

from test_notebooks_clean import ROOT, pinned, toc_entries

BINDER = ROOT / "binder"


def pins(path):
    """The requirement lines of a requirements file, following `-r` includes (relative to
    the including file, as pip resolves them)."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            found += pins((path.parent / line[3:].strip()).resolve())
        elif line:
            found.append(line)
    return found


def test_binder_installs_exactly_the_pinned_requirements():
    assert pins(BINDER / "requirements.txt") == pins(ROOT / "requirements.txt")
    assert all("==" in line for line in pins(BINDER / "requirements.txt"))


def test_binder_installs_rbdlearn_and_uses_python_311():
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    commands = [line.strip() for line in post.read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert any(re.fullmatch(r"pip install( --no-cache-dir)? -e \. --no-deps", c) for c in commands), (
        f"binder/postBuild must install rbdlearn (pip install -e . --no-deps): {commands}")
    assert (BINDER / "runtime.txt").read_text(encoding="utf-8").strip() == "python-3.11"


def test_jupyterlab_renders_myst():
    # The notebooks' Markdown is MyST ({cite}, {eq}, labelled equations, dropdown
    # solutions): JupyterLab shows it raw without jupyterlab-myst. It is pinned in
    # requirements.txt (so `make lab` and Binder, which installs those pins, both have it),
    # and where it is installed its JupyterLab extension is where JupyterLab loads it from.
    import importlib.metadata
    import json
    import sys

    version = pinned("jupyterlab-myst").split("==")[1]
    try:
        installed = importlib.metadata.version("jupyterlab-myst")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("jupyterlab-myst is not installed: the venv is older than "
                    "requirements.txt (`make venv` installs it)")
    assert installed == version, f"installed jupyterlab-myst {installed}, pinned {version}"
    package = Path(sys.prefix) / "share/jupyter/labextensions/jupyterlab-myst/package.json"
    assert package.is_file(), f"no JupyterLab extension at {package}"
    assert json.loads(package.read_text(encoding="utf-8"))["version"] == version


def notebook_pages():
    return [entry for entry in toc_entries() if (ROOT / f"{entry}.ipynb").is_file()]


@pytest.mark.book
def test_every_notebook_page_has_binder_and_colab_buttons():
    from book_build import book_html

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    branch = config["repository"]["branch"]
    html = book_html()
    pages = notebook_pages()
    assert pages, "no notebook pages in _toc.yml"
    missing = []
    for page in pages:
        text = (html / f"{page}.html").read_text(encoding="utf-8")
        binder = f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/{page}.ipynb"
        colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{page}.ipynb"
        missing += [f"{page}: {url}" for url in (binder, colab) if url not in text]
    assert not missing, "launch buttons missing:\n" + "\n".join(missing)
