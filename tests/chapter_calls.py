"""Which rbdlearn functions and classes each chapter's code calls, and where the chapter
first calls each one and first links it to the API reference (book/api/): for
test_api_reference.py and test_book_build.py.

A chapter is a `file` entry of _toc.yml with its sections, read in the order of the toc;
its pages' cells are numbered in that order (a Markdown page counts as one cell). A call
is an `ast.Call`, in a code cell whose code the book shows (not tagged remove-cell
or remove-input), whose function resolves, through the cell's imports of rbdlearn (`import
rbdlearn as rbd`, `from rbdlearn import spatial as S`, `from rbdlearn.spatial import
plux`), to a public object (tests/api_names.py). A link is a Markdown link in a Markdown
cell to the object's entry, [`rbd.rnea`](#rbdlearn.rnea): MyST finds the target
`rbdlearn.rnea` anywhere in the book (a missing one is a build warning), and JupyterLab
shows it as an ordinary link.
"""

import ast
import functools
import importlib
import re

import nbformat
import yaml

from api_names import documented_name
from test_notebooks_clean import ROOT

LINK = re.compile(r"\[`[^`\]]+`\]\(#(rbdlearn(?:\.\w+)+)\)")


def chapters():
    """{chapter entry: [its pages, chapter first, then its sections]} from _toc.yml."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = {}
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            found[chapter["file"]] = ([chapter["file"]]
                                      + [s["file"] for s in chapter.get("sections", [])])
    return found


def page_cells(entry):
    """[(cell type, source, tags)] of one page (a Markdown page: one cell)."""
    path = ROOT / f"{entry}.ipynb"
    if path.is_file():
        nb = nbformat.read(path, as_version=4)
        return [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in nb.cells]
    return [("markdown", (ROOT / f"{entry}.md").read_text(encoding="utf-8"), [])]


def _python(source):
    """The Python of a code cell: IPython's `%magic` and `!shell` lines blanked."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def _imports(tree, names):
    """Add the rbdlearn objects the cell imports to names ({local name: object})."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "rbdlearn":
                    if alias.asname:
                        names[alias.asname] = importlib.import_module(alias.name)
                    else:
                        names["rbdlearn"] = importlib.import_module("rbdlearn")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rbdlearn":
            module = importlib.import_module(node.module)
            for alias in node.names:
                obj = getattr(module, alias.name, None)
                if obj is None:   # a submodule not imported by its package
                    obj = importlib.import_module(f"{node.module}.{alias.name}")
                names[alias.asname or alias.name] = obj


def _resolve(node, names):
    """The object an expression `a.b.c` names through the imported names, or None."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, names)
        if base is not None and getattr(base, "__name__", "").startswith("rbdlearn"):
            return getattr(base, node.attr, None)
    return None


def cell_calls(source, names):
    """The documented names a code cell calls (in the order they appear), updating names."""
    tree = ast.parse(_python(source))
    _imports(tree, names)
    calls = [_resolve(node.func, names) for node in ast.walk(tree)
             if isinstance(node, ast.Call)]
    found = []
    for obj in calls:
        name = documented_name(obj) if obj is not None else None
        if name and name not in found:
            found.append(name)
    return found


@functools.cache
def chapter_uses(chapter):
    """({documented name: (page, cell) of its first call}, {documented name: (page, cell)
    of its first link}) of one chapter; positions count pages in toc order."""
    calls, links = {}, {}
    for page_no, entry in enumerate(chapters()[chapter]):
        names = {}
        for cell_no, (kind, source, tags) in enumerate(page_cells(entry)):
            where = (page_no, cell_no)
            if kind == "code" and not {"remove-cell", "remove-input"} & set(tags):  # shown
                for name in cell_calls(source, names):
                    calls.setdefault(name, where)
            elif kind == "markdown":
                for name in LINK.findall(source):
                    links.setdefault(name, where)
    return calls, links
