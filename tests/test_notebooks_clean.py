"""The committed notebooks carry no outputs, and _toc.yml and book/ agree.

Notebooks are committed without outputs: the book build and nbval execute them
(`make strip` clears outputs before a commit). With `only_build_toc_files: true`
a notebook missing from _toc.yml would silently drop out of the book, and an entry
without a file would break the build.
"""

from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PAGE_SUFFIXES = (".ipynb", ".md")


def book_notebooks():
    return sorted(p for p in BOOK.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def toc_entries():
    """Every `root` / `file` entry of _toc.yml, as written (paths without suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    return found


def rel(path):
    return path.relative_to(ROOT).as_posix()


def test_the_book_has_notebooks():
    # Guards the tests below against passing vacuously on an empty or misplaced book/.
    assert book_notebooks(), f"no notebooks found under {BOOK}"


@pytest.mark.parametrize("path", book_notebooks(), ids=rel)
def test_notebook_has_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        first_line = cell.source.splitlines()[0] if cell.source else ""
        where = f"cell {index} ({first_line[:50]!r})"
        if cell.get("outputs"):
            problems.append(f"{where} has {len(cell.outputs)} output(s)")
        if cell.get("execution_count") is not None:
            problems.append(f"{where} has execution_count {cell.execution_count}")
    if "widgets" in nb.metadata:
        problems.append("notebook metadata holds saved widget state ('widgets')")
    assert not problems, (
        f"{rel(path)} is committed with outputs (run `make strip`):\n  " + "\n  ".join(problems)
    )


def test_every_toc_entry_exists():
    missing = [
        entry for entry in toc_entries()
        if not any((ROOT / (entry + suffix)).is_file() for suffix in PAGE_SUFFIXES)
        and not (ROOT / entry).is_file()
    ]
    assert not missing, f"_toc.yml lists pages that do not exist: {missing}"


def test_every_notebook_is_in_the_toc():
    listed = {str(Path(entry).with_suffix("")) if Path(entry).suffix in PAGE_SUFFIXES else entry
              for entry in toc_entries()}
    orphans = [rel(p) for p in book_notebooks() if rel(p.with_suffix("")) not in listed]
    assert not orphans, (
        f"notebooks missing from _toc.yml (they would not be built): {orphans}"
    )
