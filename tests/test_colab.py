"""The Colab edition of the notebooks (_ext/colab.py, `make colab`, colab/): up to date with
book/, free of MyST, and each conversion rule on small examples."""

import re
import sys

import nbformat
import pytest
from markdown_it import MarkdownIt

from test_notebooks_clean import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
import colab  # noqa: E402

PAGE = "book/ch9_test/02_here"
URL = colab.BOOK_URL
REFS = f"{URL}book/appendix/references.html"

# what a Colab notebook must not contain: MyST roles, directive fences, (label)= targets,
# labelled display maths
LEFTOVER = re.compile(r"\{[A-Za-z][\w:-]*\}`|^\s*(`{3,}|~{3,}|:{3,})\s*\{|^\s*\(\S+\)=\s*$"
                      r"|\$\$[ \t]*\([^()\s]+\)[ \t]*$", re.M)


@pytest.fixture
def book():
    return colab.Book(
        titles={PAGE: "Here", "book/ch9_test/01_there": "There, a page",
                "book/appendix/glossary": "Glossary"},
        targets={"sec-there": ("book/ch9_test/01_there", "sec-there", "A section")},
        equations={"far": ("book/ch9_test/01_there", 4)},
        citations={"f08": ("Featherstone", "2008"), "c19": ("Carpentier *et al.*", "2019")},
        raw_url="https://raw.githubusercontent.com/o/r/main/")


def convert(book, text):
    return colab.convert_cells(book, PAGE, [text])[0]


# --- the rules -----------------------------------------------------------------------------

def test_citations_in_the_books_author_year_form(book):
    assert convert(book, "see {cite}`f08`.") == f"see [[Featherstone, 2008]({REFS})]."
    assert convert(book, "{cite:p}`f08, c19`") == \
        f"[[Featherstone, 2008]({REFS}); [Carpentier *et al.*, 2019]({REFS})]"
    assert convert(book, "{cite:t}`c19` wrote") == f"Carpentier *et al.* [[2019]({REFS})] wrote"
    with pytest.raises(colab.MystConversionError, match="no entry 'x99'.*references.bib"):
        convert(book, "{cite}`x99`")


def test_bibliography_labels():
    refs = colab.read_bibliography()
    assert refs["featherstone2008"] == ("Featherstone", "2008")
    assert refs["nekanat_rbda"] == ("neka-nat", "n.d.")
    assert refs["carpentier2019pinocchio"] == ("Carpentier *et al.*", "2019")


def test_labelled_equations_are_numbered_and_referenced(book):
    text = ("as {eq}`b` says\n\n$$\na = 1\n$$ (a)\n\n$$\nx\n$$\n\n$$ b = 2 $$ (b)\n\n"
            "and {eq}`far`, {eq}`the first <a>`")
    out = convert(book, text)
    assert "$$\na = 1\n\\tag{1}\n$$" in out
    assert "$$\nx\n$$" in out                         # unlabelled: no number
    assert "$$\nb = 2\n\\tag{2}\n$$" in out
    assert out.startswith("as (2) says")              # forward reference, same page
    assert f"[(4)]({URL}book/ch9_test/01_there.html#equation-far)" in out
    assert "the first" in out and "(a)" not in out
    with pytest.raises(colab.MystConversionError, match=r"no equation labelled \(nope\)"):
        convert(book, "{eq}`nope`")


def test_maths_in_a_list_item_and_inline_double_dollars(book):
    out = convert(book, "- item\n\n  $$\n  a\n  $$ (a)\n\n$$x$$ is inline here\nnext")
    assert out == "- item\n\n  $$\n  a\n  \\tag{1}\n  $$\n\n$$x$$ is inline here\nnext"


def test_equation_numbers_run_on_from_earlier_pages(book):
    book.offsets[PAGE] = 15
    out = convert(book, "{eq}`a`\n\n$$\na\n$$ (a)")
    assert out == "(16)\n\n$$\na\n\\tag{16}\n$$"
    assert book.equations["a"] == (PAGE, 16)


def test_links_to_the_published_book(book):
    assert convert(book, "{doc}`01_there`") == f"[There, a page]({URL}book/ch9_test/01_there.html)"
    assert convert(book, "{doc}`that <../appendix/glossary>`") == \
        f"[that]({URL}book/appendix/glossary.html)"
    assert convert(book, "{ref}`sec-there`") == \
        f"[A section]({URL}book/ch9_test/01_there.html#sec-there)"
    assert convert(book, "{term}`mass <Spatial inertia>`") == \
        f"[mass]({URL}book/appendix/glossary.html#term-Spatial-inertia)"
    with pytest.raises(colab.MystConversionError, match="no page book/ch9_test/03_x"):
        convert(book, "{doc}`03_x`")
    with pytest.raises(colab.MystConversionError, match=r"\{ref\}`nowhere`"):
        convert(book, "{ref}`nowhere`")


def test_index_math_targets_and_comments(book):
    out = convert(book, "(sec-here)=\n## A *{index}`spatial vector <vector; spatial>`*\n"
                        "% a comment\n{index}`Plücker` and {math}`x^2`")
    assert out == "## A *spatial vector*\n\nPlücker and $x^2$" or \
        out == "## A *spatial vector*\nPlücker and $x^2$"
    assert book.targets["sec-here"] == (PAGE, "sec-here", "A *spatial vector*")


def test_admonition_becomes_a_block_quote(book):
    out = convert(book, "```{admonition} On the *source*\n:class: note\nLine one\n\n"
                        "{cite:t}`f08`\n```\n\n:::{warning}\nCareful\n:::")
    assert out.startswith("> **On the *source***\n>\n> Line one\n>\n> Featherstone")
    assert out.endswith("> **Warning**\n>\n> Careful")


def test_dropdown_becomes_details_with_markdown_inside(book):
    src = ("````{admonition} Solution\n:class: dropdown\nUse $x$ ({eq}`far`):\n"
           "```python\nf({cite}`not a role in code`)\n```\n"
           "```{note}\ninner\n```\n````")
    out = convert(book, src)
    assert out.startswith("<details>\n<summary>Solution</summary>\n\nUse $x$ ([(4)](")
    assert "\n\n```python\nf({cite}`not a role in code`)\n```\n\n" in out   # verbatim
    assert "> **Note**\n>\n> inner" in out
    assert out.endswith("\n\n</details>")
    html = MarkdownIt("commonmark").render(out)
    assert "<summary>Solution</summary>" in html and '<code class="language-python">' in html
    assert "<blockquote>" in html and "</details>" in html


def test_figures_and_images_from_the_repository(book):
    out = convert(book, "```{figure} ../images/arm.svg\n:alt: A two-link arm\n:name: fig-arm\n"
                        "The arm.\n```\n\n![x](../images/b.png) <img src=\"c.png\" width=3>")
    raw = "https://raw.githubusercontent.com/o/r/main/book/"
    assert out.startswith(f"![A two-link arm]({raw}images/arm.svg)\n\n*The arm.*")
    assert f"![x]({raw}images/b.png)" in out and f'<img src="{raw}ch9_test/c.png"' in out
    assert book.targets["fig-arm"][:2] == (PAGE, "fig-arm")


def test_unknown_or_broken_markup_is_an_error_naming_it(book):
    with pytest.raises(colab.MystConversionError, match=r"book/ch9_test/02_here: .*\{abbr\}"):
        convert(book, "{abbr}`LCP (linear complementarity problem)`")
    with pytest.raises(colab.MystConversionError, match=r"directive \{tab-set\}"):
        convert(book, "```{tab-set}\nx\n```")
    with pytest.raises(colab.MystConversionError, match="not closed"):
        convert(book, "````{admonition} Solution\n:class: dropdown\ntext\n```")


def test_colab_paths():
    assert colab.colab_path("book/ch2_aba/03_algorithm") == "colab/ch2_aba/03_algorithm.ipynb"
    with pytest.raises(colab.MystConversionError, match="not a page under book/"):
        colab.colab_path("intro")


# --- the committed Colab edition -----------------------------------------------------------

@pytest.fixture(scope="module")
def expected():
    return colab.expected_files()


def test_colab_edition_is_up_to_date(expected):
    assert expected, "no notebooks in _toc.yml"
    stale, extra = colab.outdated(expected)
    assert not stale and not extra, (
        f"colab/ is not what _ext/colab.py makes of book/: stale {stale}, extra {extra}; "
        f"run: {colab.REGENERATE}")


def test_colab_notebooks_have_no_myst_and_the_books_code(expected):
    md = MarkdownIt("commonmark")
    dropdowns = details = 0
    for path, text in expected.items():
        nb = nbformat.reads(text, as_version=4)
        original = nbformat.read(ROOT / "book" / path.removeprefix("colab/"), as_version=4)
        assert [c.cell_type for c in nb.cells] == [c.cell_type for c in original.cells], path
        for cell, source in zip(nb.cells, original.cells):
            if cell.cell_type == "code":
                assert cell.source == source.source and not cell.outputs, path
                continue
            left = LEFTOVER.search(cell.source)
            assert not left, f"{path}: MyST left: {left.group(0)!r}"
            html = md.render(cell.source)
            assert not re.search(r"\{[\w:-]+\}<code>|<p>\(\S+\)=", html), path
            dropdowns += len(re.findall(r"^:class:.*\bdropdown\b", source.source, re.M))
            details += html.count("<details>")
    assert dropdowns and details == dropdowns


@pytest.mark.book
def test_colab_numbers_and_anchors_match_the_built_book():
    """Equation numbers as Sphinx gives them, citations as the book prints them, and every
    link into the book to a page and anchor that exist (built HTML)."""
    from book_build import book_html

    html = book_html()
    book = colab.load_book()
    for label, (page, number) in book.equations.items():
        text = (html / f"{page}.html").read_text(encoding="utf-8")
        shown = re.search(rf'<span class="eqno">\(([0-9]+)\)<a class="headerlink" '
                          rf'href="#equation-{re.escape(colab.make_id(label))}"', text)
        assert shown and int(shown.group(1)) == number, (label, page, number)
    refs = colab.read_bibliography()
    for page in colab.toc_entries():
        shown = " ".join(re.sub(r"<[^>]+>", " ", (html / f"{page}.html").read_text(
            encoding="utf-8")).split())
        shown = re.sub(r"\[ ", "[", re.sub(r" ([,\]])", r"\1", shown))
        for role, keys in re.findall(r"\{(cite(?::[pt])?)\}`([^`]+)`",
                                     "\n".join(colab.page_sources(page))):
            for key in keys.split(","):
                names, year = refs[key.strip()]
                names = " ".join(names.replace("*", " ").split())
                text = f"{names} [{year}]" if role == "cite:t" else f"{names}, {year}"
                assert text in shown, f"{page}: the book does not show {text!r} for {key}"
    missing = []
    for path in colab.expected_files():
        for cell in nbformat.read(ROOT / path, as_version=4).cells:
            for page, anchor in re.findall(re.escape(URL) + r"([\w/.-]+)\.html(?:#([\w-]+))?",
                                           cell.source):
                target = html / f"{page}.html"
                if not target.is_file() or (anchor and f'id="{anchor}"' not in
                                            target.read_text(encoding="utf-8")):
                    missing.append(f"{path}: {page}#{anchor}")
    assert not missing, "links to no page or anchor of the book:\n" + "\n".join(missing)
