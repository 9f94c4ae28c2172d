"""Run it yourself: the Binder environment, and the Binder / Colab launch buttons.

Binder (repo2docker) reads binder/ instead of the repository root: binder/requirements.txt
must install exactly the pinned root requirements.txt, binder/postBuild must install
rbdlearn itself, and binder/runtime.txt must ask for the Python the pins were made with.
The static checks read those files; test_binder_environment_runs_a_chapter builds the
environment from them as repo2docker would and runs a chapter in it. The launch buttons
come from _config.yml (`repository`, `launch_buttons`); the test marked `book` checks that
every notebook page of the built book has both, pointing at its notebook.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml

from test_notebooks_clean import ROOT, pinned, toc_entries

sys.path.insert(0, str(ROOT / "_ext"))
import colab  # noqa: E402

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


# The chapter run in the Binder environment, and the cell appended to it that reports which
# interpreter ran the kernel and where it found rbdlearn.
BINDER_CHAPTER = ROOT / "book" / "ch1_spatial" / "01_spatial_vectors.ipynb"
RUN_CHAPTER = textwrap.dedent("""\
    import os, sys
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    notebook, cwd, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import sys, rbdlearn\\nprint(sys.prefix)\\nprint(rbdlearn.__file__)"))
    config = Config()
    config.KernelManager.transport = "ipc"          # no unencrypted-TCP warning at start
    config.KernelManager.ip = os.path.join(cwd, ".kernel")
    NotebookClient(nb, timeout=timeout, config=config,
                   kernel_name=nb.metadata.kernelspec.name).execute(cwd=cwd)
    print("KERNEL", *nb.cells[-1].outputs[0].text.split("\\n")[:2], sep="\\n")
    """)


def _step(what, command, hint="", **kwargs):
    """Run ``command``; on failure, fail the test naming the step, quoting its output, and
    adding ``hint``."""
    proc = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        output = re.sub(r"\x1b\[[0-9;]*m", "", f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
        pytest.fail(f"{what} failed (exit {proc.returncode}): {' '.join(map(str, command))}\n"
                    f"{output}{hint}", pytrace=False)
    return proc.stdout


def test_binder_environment_runs_a_chapter():
    """Build the Binder environment as repo2docker does from binder/, then run a chapter in it.

    repo2docker, for binder/runtime.txt = python-3.11, makes an environment of that Python
    with pip and setuptools, runs `pip install -r binder/requirements.txt` in it, then
    binder/postBuild from the repository root. Here:

    1. a fresh venv of the Python runtime.txt names, made by uv (offline, `--no-python-downloads`);
    2. its pip and setuptools ("seed"): pip from the wheel that this Python itself ships
       (ensurepip's, what `python -m venv` would install), setuptools>=64 (pyproject's
       build requirement) from uv's cache;
    3. binder/requirements.txt, the file itself (so its `-r ../requirements.txt` is
       followed), installed by uv offline from its cache: pip would take minutes to fetch
       ~170 pinned wheels from PyPI; uv links the wheels that `make venv` cached (on one
       file system, hard links: under a second). Nothing is downloaded: a wheel missing
       from the cache fails the test, and says to run `make venv`;
    4. binder/postBuild, executed as written, from the repository root, with the new venv
       first on PATH (its `pip` is the venv's) and pip isolated from this machine's
       configuration (PIP_CONFIG_FILE=/dev/null, no PIP_* variables inherited), offline
       (PIP_NO_INDEX). With build isolation pip would download setuptools for the editable
       build; instead it builds with the venv's setuptools (PIP_NO_BUILD_ISOLATION=0, pip's
       spelling of --no-build-isolation), and PIP_CHECK_BUILD_DEPENDENCIES makes it check
       pyproject's build requirements against them, as isolation would have satisfied them;
    5. the chapter executed by the new venv's nbclient, in the python3 kernel of the new
       venv's ipykernel, from a temporary directory outside the repository, without
       PYTHONPATH: it imports the rbdlearn that postBuild installed, and whatever else it
       imports must come from binder/requirements.txt. A cell appended to it prints the
       kernel's sys.prefix (must be the new venv) and rbdlearn's file (must be this
       checkout's, through the editable install).

    The venv (1.4 GB of hard links into uv's cache) is deleted afterwards.
    """
    uv = Path(sys.executable).with_name("uv")
    if not uv.is_file():
        uv = Path(shutil.which("uv") or "uv-not-found")
    assert uv.is_file(), (f"uv not found beside {sys.executable} nor on PATH: "
                          "`make venv` installs it into .venv")
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    python = runtime.removeprefix("python-")
    timeout = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))[
        "execute"]["timeout"]                # seconds per cell, as for the book's own runs
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("PIP_") and key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    offline_hint = ("\n(uv installs offline, from its cache: run `make venv` first, "
                    "which fills the cache with every pinned wheel)")
    with tempfile.TemporaryDirectory(prefix="rbdlearn-binder-") as tmp:
        venv = Path(tmp) / "venv"
        vpython = venv / "bin" / "python"
        _step(f"uv venv (Python {python}, from binder/runtime.txt)",
              [uv, "venv", "-q", "--offline", "--no-python-downloads", "--python", python, venv],
              env=env, timeout=120)
        pip_wheels = list((Path(_step("locating ensurepip", [vpython, "-c",
                           "import ensurepip; print(ensurepip.__file__)"], env=env).strip())
                           .parent / "_bundled").glob("pip-*.whl"))
        assert pip_wheels, (f"Python {python} ships no pip wheel (ensurepip/_bundled): "
                            "Debian: apt-get install python3-venv")
        install = [uv, "pip", "install", "-q", "--offline", "--python", vpython]
        _step("seeding pip and setuptools", [*install, pip_wheels[0], "setuptools>=64"],
              offline_hint, env=env, timeout=300)
        _step("installing binder/requirements.txt", [*install, "-r", BINDER / "requirements.txt"],
              offline_hint, env=env, timeout=600)
        env_venv = dict(env, PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                        VIRTUAL_ENV=str(venv), PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1",
                        PIP_NO_BUILD_ISOLATION="0", PIP_CHECK_BUILD_DEPENDENCIES="1",
                        PIP_DISABLE_PIP_VERSION_CHECK="1")
        assert shutil.which("pip", path=env_venv["PATH"]) == str(venv / "bin" / "pip")
        _step("binder/postBuild", [BINDER / "postBuild"], cwd=ROOT, env=env_venv, timeout=300)
        script = Path(tmp) / "run_chapter.py"
        script.write_text(RUN_CHAPTER, encoding="utf-8")
        cwd = Path(tmp) / "run"
        cwd.mkdir()
        out = _step(f"running {BINDER_CHAPTER.relative_to(ROOT)} in the Binder environment",
                    [vpython, script, BINDER_CHAPTER, cwd, str(timeout)],
                    cwd=cwd, env=env_venv, timeout=900)
        prefix, module = out.split("KERNEL\n", 1)[1].splitlines()[:2]
        assert Path(prefix).resolve() == venv.resolve(), f"the kernel ran in {prefix}, not {venv}"
        assert Path(module).resolve() == (ROOT / "rbdlearn" / "__init__.py").resolve(), module


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
        # Colab opens the Colab edition (_ext/colab.py), Binder the notebook itself
        edition = colab.colab_path(page)
        colab_url = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{edition}"
        missing += [f"{page}: {url}" for url in (binder, colab_url) if url not in text]
        assert (ROOT / edition).is_file(), f"{edition}: no Colab edition (run make colab)"
        assert f"colab.research.google.com/github/{repo}/blob/{branch}/{page}.ipynb" \
            not in text, f"{page}: Colab opens the notebook in book/, not the Colab edition"
    assert not missing, "launch buttons missing:\n" + "\n".join(missing)
