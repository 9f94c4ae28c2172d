"""The notebook runner behind `make test` and `make book` (_ext/nbexec.py): every cell
runs, a failure names its notebook and cell, the kernel works outside the repository
with only the installed package, and only clean runs are cached, under a key that
follows the notebook's code and the package's files."""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import nbformat
import pytest

from test_notebooks_clean import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
import nbexec  # noqa: E402


def write_notebook(path, *sources, tags=None):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# A test notebook")]
    for k, source in enumerate(sources):
        cell = nbformat.v4.new_code_cell(source)
        if tags and k in tags:
            cell.metadata["tags"] = tags[k]
        nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory):
    path = write_notebook(
        tmp_path_factory.mktemp("nb") / "failing.ipynb",
        "x = 1",
        "assert x == 2, 'x is not 2'",
        "raise ValueError('expected')",                         # tagged raises-exception
        "import os, importlib.util, rbdlearn\nprint(os.getcwd())\nprint(rbdlearn.__file__)\n"
        "print([m for m in ('benchmarks', 'conftest', 'nbexec') if importlib.util.find_spec(m)])",
        "undefined_name",
        tags={2: ["raises-exception"]})
    return nbexec.execute(path)


def test_every_failing_cell_is_named(failing_run):
    assert [f.index for f in failing_run.failures] == [2, 5]
    report = failing_run.report()
    assert "failing.ipynb: 2 failing cell(s)" in report
    assert "cell 2:" in report and "AssertionError: x is not 2" in report
    assert "cell 5:" in report and "NameError" in report
    assert "expected" not in report          # the raises-exception cell may raise


def test_cells_after_a_failure_still_run_outside_the_repository(failing_run):
    printed = failing_run.notebook.cells[4].outputs[0]["text"].splitlines()
    cwd, package = Path(printed[0]), Path(printed[1])
    assert not cwd.is_relative_to(ROOT), f"the kernel ran in {cwd}, inside the repository"
    assert package == ROOT / "rbdlearn" / "__init__.py"     # the installed (editable) package
    assert printed[2] == "[]", f"the repository is importable from the notebook: {printed[2]}"


def test_only_clean_runs_are_cached(tmp_path, failing_run):
    folder = tmp_path / "cache"
    clean = write_notebook(tmp_path / "clean.ipynb", "print(6 * 7)")
    assert not nbexec.is_cached(clean, folder)
    run = nbexec.run_and_cache(clean, folder)
    assert not run.failures and run.notebook.cells[1].outputs[0]["text"] == "42\n"
    assert nbexec.is_cached(clean, folder)
    nbexec.run_and_cache(failing_run.path, folder)
    assert not nbexec.is_cached(failing_run.path, folder)
    # the key follows the code cells: a changed cell misses the cache
    write_notebook(clean, "print(6 * 9)")
    assert not nbexec.is_cached(clean, folder)


def test_waiting_for_the_cache_ends_when_every_notebook_is_in_it_or_at_the_stop(tmp_path):
    """`make test` starts the book build when nbexec's waiter returns: at once when every
    notebook of _toc.yml is cached, or when told to stop, naming the ones still missing
    (a notebook whose code changed after it ran counts as missing)."""
    import threading
    (tmp_path / "rbdlearn").mkdir()
    (tmp_path / "rbdlearn" / "x.py").write_text("x = 1\n")
    for name in ("requirements.txt", "pyproject.toml"):
        (tmp_path / name).write_text("")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/a\n"
                                       "chapters:\n  - file: book/b\n")
    (tmp_path / "book").mkdir()
    a = write_notebook(tmp_path / "book" / "a.ipynb", "print(1)")
    b = write_notebook(tmp_path / "book" / "b.ipynb", "print(2)")
    folder, stop = nbexec.cache_dir(tmp_path), tmp_path / "stop"

    def cache(path):             # as a clean run stores it (no kernel needed here)
        nb = nbformat.read(path, as_version=4)
        nbexec.store(nbexec.Execution(path, nb, [], 0.0, ""), folder)

    stop.touch()
    assert nbexec.wait_until_cached(stop, root=tmp_path) == [a, b]
    cache(a)
    write_notebook(b, "print(3)")
    cache(b)
    write_notebook(b, "print(2)")                        # changed after it was cached
    assert nbexec.wait_until_cached(stop, root=tmp_path) == [b]
    stop.unlink()
    later = threading.Timer(0.3, cache, [b])
    later.start()
    assert nbexec.wait_until_cached(stop, poll=0.05, root=tmp_path) == []
    later.join()


def test_the_fingerprint_follows_the_package_files(tmp_path):
    for name in ("requirements.txt", "pyproject.toml"):
        (tmp_path / name).write_text("x")
    (tmp_path / "rbdlearn" / "data").mkdir(parents=True)
    (tmp_path / "rbdlearn" / "aba.py").write_text("a = 1\n")
    (tmp_path / "rbdlearn" / "data" / "values.json").write_text("{}")
    first = nbexec.fingerprint(tmp_path)
    (tmp_path / "rbdlearn" / "__pycache__").mkdir()
    (tmp_path / "rbdlearn" / "__pycache__" / "aba.cpython-311.pyc").write_bytes(b"\0")
    assert nbexec.fingerprint(tmp_path) == first            # compiled files do not count
    for changed in ("rbdlearn/aba.py", "rbdlearn/data/values.json", "requirements.txt"):
        before = nbexec.fingerprint(tmp_path)
        (tmp_path / changed).write_text((tmp_path / changed).read_text() + " ")
        assert nbexec.fingerprint(tmp_path) != before, changed


def test_the_package_ships_its_data(tmp_path):
    """Notebooks load data through the package (e.g. constrained.paper_values), so a
    plain `pip install` (Colab) must carry every file of rbdlearn/."""
    source = tmp_path / "src"
    wanted = [p.relative_to(ROOT).as_posix() for p in (ROOT / "rbdlearn").rglob("*")
              if p.is_file() and "__pycache__" not in p.parts]
    for name in ["pyproject.toml", "README.md", *wanted]:      # a copy: builds write build/
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes((ROOT / name).read_bytes())
    # the project's PEP 517 build hook, which `pip wheel --no-build-isolation` (or a plain
    # `pip install`) calls, here without pip around it (its own start costs twice the build)
    backend = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["build-backend"]
    subprocess.run([sys.executable, "-c", f"import {backend} as backend\n"
                    f"backend.build_wheel({str(tmp_path / 'dist')!r})"],
                   check=True, capture_output=True, cwd=source)
    wheel, = (tmp_path / "dist").glob("rbdlearn-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    assert any(name.endswith(".json") for name in wanted)
    assert [name for name in wanted if name not in shipped] == []
