"""rbdlearn's public API and where the book's API reference documents each name: the one
place that decides both, for test_api_reference.py (every name documented once, every
chapter links its first use) and test_book_build.py (those links land on an entry).

Public: what `import rbdlearn as rbd; dir(rbd)` shows without an underscore, and the
`__all__` of every public module (the modules `rbd.<name>` holds, and rbdlearn.interop).
rbdlearn.viz and rbdlearn.widgets draw the book's figures and explorers: they are not
imported by `import rbdlearn` and are not documented. A name is documented once, under
its shortest public path: `rbdlearn.rnea`, not `rbdlearn.inverse_dynamics.rnea`; a name
several modules export (`rbdlearn.contact.Contact` is rbdlearn.lcp's) under the module
that defines it; the names of rbdlearn.closed_chains' submodules as
`rbdlearn.closed_chains.<name>`, the path the book uses.
"""

import functools
import importlib
import re
import types

from test_notebooks_clean import BOOK

API_DIR = BOOK / "api"
NOT_API = ("rbdlearn.viz", "rbdlearn.widgets")   # the book's figures and explorers
EXTRA_MODULES = ("rbdlearn.interop",)            # public, not imported by `import rbdlearn`

# `.. autofunction:: rbdlearn.rnea` and the like, in the API pages' {eval-rst} blocks
AUTODOC = re.compile(r"^\.\. auto(function|class|exception|data):: +(\S+) *$", re.M)


def public_modules():
    """The public modules, by their dotted names, in the order their names are assigned."""
    import rbdlearn
    names = sorted(f"rbdlearn.{n}" for n, v in vars(rbdlearn).items()
                   if isinstance(v, types.ModuleType) and not n.startswith("_"))
    return [n for n in names if n not in NOT_API] + list(EXTRA_MODULES)


@functools.cache
def canonical_names():
    """{id(object): documented name} for every public function, class and constant, and
    {documented name: object} (the second for the tests' messages and docstrings)."""
    import rbdlearn
    by_id, objects = {}, {}

    def claim(name, obj):
        if id(obj) not in by_id:
            by_id[id(obj)] = name
            objects[name] = obj

    for n in sorted(dir(rbdlearn)):
        obj = getattr(rbdlearn, n)
        if not n.startswith("_") and not isinstance(obj, types.ModuleType):
            claim(f"rbdlearn.{n}", obj)
    modules = {m: importlib.import_module(m) for m in public_modules()}
    # first the names a module defines, then those it re-exports from another module
    for defining in (True, False):
        for m, module in modules.items():
            for n in module.__all__:
                obj = getattr(module, n)
                home = getattr(obj, "__module__", None) or m
                if defining == (home == m or home.startswith(m + ".")):
                    claim(f"{m}.{n}", obj)
    return by_id, objects


def documented_name(obj):
    """The name under which the API reference documents obj, or None (not public API)."""
    return canonical_names()[0].get(id(obj))


def api_pages():
    return sorted(API_DIR.glob("*.md"))


def autodoc_entries():
    """[(page, directive, name)] for every autodoc directive in the API pages."""
    return [(page, kind, name) for page in api_pages()
            for kind, name in AUTODOC.findall(page.read_text(encoding="utf-8"))]
