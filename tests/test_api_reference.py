"""The API reference (book/api/) lists every public name of rbdlearn once, each with a
docstring, and every chapter links a package function or class to it no later than the
cell where the chapter first calls it.

Which names are public and where each is documented: tests/api_names.py; which names a
chapter calls and links: tests/chapter_calls.py. The links land on an entry of the built
API pages: test_book_build.py.
"""

import collections
import inspect
import sys

import pytest

from api_names import autodoc_entries, canonical_names, documented_name
from chapter_calls import LINK, cell_calls, chapter_uses, chapters

CHAPTERS = [c for c in chapters() if not c.startswith("book/api/")]


def test_every_public_name_is_documented_once():
    _, objects = canonical_names()
    names = [name for _, _, name in autodoc_entries()]
    twice = [n for n, k in collections.Counter(names).items() if k > 1]
    missing = sorted(set(objects) - set(names))
    unknown = sorted(set(names) - set(objects))
    assert not missing and not twice and not unknown, (
        f"public names without an autodoc entry in book/api/*.md: {missing}\n"
        f"documented twice: {twice}\n"
        f"entries that are not a public name's documented name (tests/api_names.py): "
        f"{unknown}")


def test_the_api_pages_cover_the_whole_package():
    # guards the test above against an empty reference or an empty list of names
    _, objects = canonical_names()
    assert len(objects) > 200 and "rbdlearn.rnea" in objects
    assert "rbdlearn.spatial.plux" in objects and "rbdlearn.closed_chains.four_bar" in objects
    assert not any(n.startswith(("rbdlearn.viz", "rbdlearn.widgets")) for n in objects)


def _constant_doc(obj, attr):
    """The doc comment of a constant (`#:` before the assignment, or a string after it), as
    autodoc reads it, from the rbdlearn module that assigns it."""
    from sphinx.pycode import ModuleAnalyzer
    for name, module in sorted(sys.modules.items()):
        if name.startswith("rbdlearn") and vars(module).get(attr) is obj:
            docs = ModuleAnalyzer.for_module(name).find_attr_docs()
            if ("", attr) in docs:
                return "".join(docs["", attr])
    return ""


def test_every_public_name_has_a_docstring():
    _, objects = canonical_names()
    undocumented = []
    for name, obj in objects.items():
        if inspect.isclass(obj) or callable(obj):
            doc = obj.__doc__ or ""   # its own: a class without one has None, not its base's
        else:
            doc = _constant_doc(obj, name.rsplit(".", 1)[1])
        if not doc.strip():
            undocumented.append(name)
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_calls_are_found_through_every_kind_of_import():
    # the checker below must see a call however the chapter imported the name ...
    names = {}
    source = ("import rbdlearn as rbd\nfrom rbdlearn import spatial as S, closed_chains as cc\n"
              "from rbdlearn.crb import support_mask\nimport rbdlearn.constrained as cn\n"
              "%matplotlib inline\n"
              "rbd.rnea(m, q)\nS.plux(E, r)\nsupport_mask(m)\ncn.floor(0.0)\n"
              "cc.four_bar()\nrbd.spatial.skew(w)\nrbd.Revolute('z')\n")
    assert sorted(cell_calls(source, names)) == sorted([
        "rbdlearn.rnea", "rbdlearn.spatial.plux", "rbdlearn.crb.support_mask",
        "rbdlearn.constrained.floor", "rbdlearn.closed_chains.four_bar",
        "rbdlearn.spatial.skew", "rbdlearn.Revolute"])
    # ... under its documented name (rbd.inverse_dynamics.rnea is rbd.rnea) ...
    assert cell_calls("rbd.inverse_dynamics.rnea(m, q)", names) == ["rbdlearn.rnea"]
    # ... and no figure or explorer, nor anything that is not a call
    names_viz = {}
    assert cell_calls("from rbdlearn import viz, widgets\nviz.table([])\n"
                      "widgets.rnea_explorer(2)\nf = rbd.rnea\n", names_viz) == []
    assert documented_name(len) is None


def test_a_link_names_its_target():
    text = "With [`rbd.rnea`](#rbdlearn.rnea) and [`S.plux`](#rbdlearn.spatial.plux), not `x`."
    assert LINK.findall(text) == ["rbdlearn.rnea", "rbdlearn.spatial.plux"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_links_each_function_before_its_first_use(chapter):
    calls, links = chapter_uses(chapter)
    pages = chapters()[chapter]
    late = [f"{name}: first called in {pages[page]} cell {cell}, "
            + (f"first linked in {pages[links[name][0]]} cell {links[name][1]}"
               if name in links else "never linked")
            for name, (page, cell) in sorted(calls.items(), key=lambda kv: kv[1])
            if not (name in links and links[name] < (page, cell))]
    assert not late, (
        f"{chapter}: link each rbdlearn function or class to its API entry, "
        "[`rbd.rnea`](#rbdlearn.rnea), in a Markdown cell no later than the chapter's first "
        "call:\n  " + "\n  ".join(late))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_link_targets_a_documented_name(chapter):
    _, objects = canonical_names()
    _, links = chapter_uses(chapter)
    wrong = sorted(set(links) - set(objects))
    assert not wrong, f"{chapter} links names that have no API entry: {wrong}"
