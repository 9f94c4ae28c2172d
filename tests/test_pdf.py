"""The PDF of the whole book (_ext/pdf.py): rbdlearn.pdf beside the built HTML, linked from
the intro page with its size, an outline of every part, chapter and section of _toc.yml in
order, each section's title in its text and no raw TeX or traceback there, A4 pages, and a
page count in the range the book has.

`make test` prints the PDF from the test build (_build/test-book) after building it; run
alone, these tests print it from this session's build, or read the one beside
$RBDLEARN_BOOK_HTML (e.g. `make pdf`, then `RBDLEARN_BOOK_HTML=_build/html`).
"""

import html
import os
import re
import sys

import pytest

from book_build import book_html
from test_notebooks_clean import ROOT, toc_entries

sys.path.insert(0, str(ROOT / "_ext"))
import pdf as book_pdf  # noqa: E402  (_ext/pdf.py)

pytestmark = pytest.mark.book

A4_PT = (595.92, 842.88)        # 210 x 297 mm in PostScript points, as Chromium writes it
# 559 pages when this test was written (2026-11, 34 pages of the HTML book); far fewer
# means pages or chapters missing, far more a layout gone wrong (e.g. a column too narrow).
PAGE_RANGE = (400, 800)
RAW_TEX_IN_PDF = re.compile(r"\\begin\{|\\end\{|\$\$|\\frac\{|\\mathbf\{|\\hat\{")
# A page's title: the <h1> with a permalink (not the sidebar's book title).
H1 = re.compile(r"<h1>((?:(?!</h1>).)*?)<a class=\"headerlink\"", re.S)


@pytest.fixture(scope="module")
def html_dir():
    return book_html()


@pytest.fixture(scope="module")
def pdf_path(html_dir):
    path = html_dir / book_pdf.PDF_NAME
    if not path.is_file():
        if not book_pdf.CHROMIUM.exists():          # (`make test` prints it only with it)
            pytest.skip(f"printing the PDF needs {book_pdf.CHROMIUM}")
        if os.environ.get("RBDLEARN_BOOK_HTML"):
            pytest.fail(f"no {path}: print it with `python _ext/pdf.py {html_dir}` "
                        "(or `make pdf`)")
        book_pdf.build_pdf(html_dir)
    return path


@pytest.fixture(scope="module")
def reader(pdf_path):
    from pypdf import PdfReader
    return PdfReader(pdf_path)


def page_title(html_dir, doc):
    """A page's title, its <h1>, as the HTML shows it."""
    found = H1.search((html_dir / f"{doc}.html").read_text(encoding="utf-8"))
    assert found, f"no <h1> in {doc}.html"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def test_the_pdf_script_reads_the_toc_as_the_book_does():
    assert book_pdf.page_order(book_pdf.toc_tree()) == toc_entries()


def test_the_intro_links_to_the_pdf_with_its_size(html_dir, pdf_path):
    intro = (html_dir / f"{toc_entries()[0]}.html").read_text(encoding="utf-8")
    link = re.search(r'<a href="([^"]*rbdlearn\.pdf)">(.*?)</a>', intro, re.S)
    assert link, "the intro page has no link to rbdlearn.pdf"
    target = (html_dir / toc_entries()[0]).parent / link.group(1)
    assert target.resolve() == pdf_path.resolve(), (link.group(1), pdf_path)
    size = f"{pdf_path.stat().st_size / 1e6:.1f} MB"
    assert size in link.group(2), f"the link says {link.group(2)!r}, the PDF is {size}"


def outline_tree(reader, items=None):
    """The PDF's outline as [(title, page index, [children]), ...]."""
    tree = []
    for item in reader.outline if items is None else items:
        if isinstance(item, list):
            tree[-1][2].extend(outline_tree(reader, item))
        else:
            tree.append((item.title, reader.get_destination_page_number(item), []))
    return tree


def test_the_outline_lists_every_part_chapter_and_section_in_order(reader, html_dir):
    """Contents, the intro, then each part of _toc.yml with its chapters, each chapter
    with its sections (after the chapter page's own headings) in order."""
    outline = outline_tree(reader)
    tree = book_pdf.toc_tree()
    expected = ["Contents"] + [caption or page_title(html_dir, chapters[0][0])
                               for caption, chapters in tree]
    assert [title for title, _, _ in outline] == expected
    for (caption, chapters), (_, _, chapter_items) in zip(tree, outline[1:]):
        if caption is None:
            continue
        assert [t for t, _, _ in chapter_items] == [page_title(html_dir, ch)
                                                    for ch, _ in chapters], caption
        for (chapter, sections), (_, _, below) in zip(chapters, chapter_items):
            wanted = [page_title(html_dir, s) for s in sections]
            assert [t for t, _, _ in below if t in wanted] == wanted, chapter


def test_the_text(reader, html_dir):
    """pypdf's text of every page (one test: extracting it takes a minute):
    - each page of _toc.yml has its title on the page its outline entry points to, and the
      entries point forward through the book;
    - no raw TeX and no traceback;
    - under each widget, animation and 3-D view of the HTML, the print style's note that
      it moves online (_ext/css/rbdlearn.css): as many notes as the pages have of them;
    - each page after the title ends with its number (the footer, extracted last)."""
    texts = [" ".join((page.extract_text() or "").split()) for page in reader.pages]
    problems = []

    # the outline's entries in reading order; each page's title is looked for after the
    # previous page's (a heading of an earlier page may have the same words as a title:
    # "Inverse dynamics" is a section of chapter 1 and a page of the API reference)
    entries, stack = [], outline_tree(reader)
    while stack:
        title, page, children = stack.pop(0)
        entries.append((title, page))
        stack[:0] = children
    pages, after = [], 0
    for doc in toc_entries():
        title = page_title(html_dir, doc)
        found = [k for k in range(after, len(entries)) if entries[k][0] == title]
        if not found:
            problems.append(f"{doc}: {title!r} is not in the outline after the page before")
            continue
        after = found[0] + 1
        pages.append(entries[found[0]][1])
        # (compared without spaces: the extracted text breaks a title at a dash, and
        # spaces Japanese characters)
        if re.sub(r"\s", "", title) not in re.sub(r"\s", "", texts[pages[-1]]):
            problems.append(f"{doc}: {title!r} is not on page {pages[-1] + 1}")
    if pages != sorted(set(pages)):
        problems.append(f"the pages' first pages do not go forward: {pages}")

    problems += [f"page {k + 1}: {m.group()!r}" for k, text in enumerate(texts)
                 for m in RAW_TEX_IN_PDF.finditer(text)]
    problems += [f"page {k + 1}: a traceback" for k, text in enumerate(texts)
                 if "Traceback (most recent call last)" in text]

    shown = 0
    for doc in toc_entries():
        page_html = (html_dir / f"{doc}.html").read_text(encoding="utf-8")
        shown += page_html.count('<div class="animation">')
        shown += page_html.count('type="application/vnd.jupyter.widget-view+json"')
        shown += page_html.count('<div class="rbd3d"')     # a 3-D view (its still image)
    notes = sum(text.count("Interactive in the online book") for text in texts)
    if not shown or notes != shown:
        problems.append(f"{notes} notes 'Interactive in the online book' under {shown} "
                        "widgets and animations")

    problems += [f"page {k + 1} does not end with its number"
                 for k, text in enumerate(texts) if k and not text.endswith(str(k + 1))]
    assert not problems, "\n".join(problems[:30])


def test_pages_are_a4_and_their_count_in_range(reader):
    sizes = {(round(float(p.mediabox.width), 1), round(float(p.mediabox.height), 1))
             for p in reader.pages}
    assert all(abs(w - A4_PT[0]) < 1 and abs(h - A4_PT[1]) < 1 for w, h in sizes), sizes
    assert PAGE_RANGE[0] <= len(reader.pages) <= PAGE_RANGE[1], len(reader.pages)


