"""The Colab edition of the book's notebooks, and the Colab launch button that opens it.

Colab renders a notebook's Markdown as CommonMark with maths and takes no extension, so the
MyST of the book's notebooks (roles, directives, labelled equations) would show raw there.
`python _ext/colab.py` (`make colab`) writes, for each notebook of `_toc.yml`, a copy to
`colab/<its path under book/>` in which the MyST is already turned into what the book shows:

- ``{cite}`` / ``{cite:p}`` -> "[Featherstone, 2008]", ``{cite:t}`` -> "Featherstone [2008]"
  (sphinxcontrib-bibtex's author_year style as the built book shows it), linked to the
  book's references page;
- ``{eq}`label``` -> "(n)", the number the book shows (Sphinx numbers the labelled
  equations 1, 2, ... through the whole book, in _toc.yml order), and the equation itself
  gets ``\\tag{n}``;
- ``{doc}``, ``{ref}``, ``{numref}``, ``{term}`` -> links to the published book;
  ``{index}``, ``{math}`` -> their text; ``(label)=`` targets and ``%`` comments dropped;
- admonitions -> block quotes with a bold title; dropdowns -> ``<details>`` blocks;
  figures and images -> Markdown images from the repository on GitHub.

Code cells are copied unchanged (without outputs). Any other role or directive is an error
naming the notebook and the markup, so nothing MyST reaches Colab unconverted.
The copies are committed (Colab opens notebooks from a GitHub path);
tests/test_colab.py checks they are what this script makes of the current `book/`.

As a Sphinx extension (`_config.yml`), this module points the theme's Colab launch button
at the Colab edition; the Binder button keeps opening `book/` (JupyterLab renders MyST).
"""

from __future__ import annotations

import argparse
import posixpath
import re
import sys
import textwrap
from dataclasses import dataclass, field

import nbformat
import yaml

from nbexec import ROOT, toc_entries
BOOK_DIR = "book"
COLAB_DIR = "colab"
BOOK_URL = "https://rbdlearn.github.io/rbdlearn/"
BIB = ROOT / "book" / "references.bib"
REFERENCES_PAGE = "book/appendix/references"
GLOSSARY_PAGE = "book/appendix/glossary"
ADMONITIONS = {"note", "tip", "hint", "important", "warning", "caution", "attention",
               "danger", "error", "seealso"}
REGENERATE = "python _ext/colab.py   (or: make colab)"


class MystConversionError(ValueError):
    """MyST markup the Colab converter does not know or cannot resolve."""


def colab_path(page: str) -> str:
    """The repository path of the Colab edition of a book page ("book/ch1/01" -> ...)."""
    if not page.startswith(BOOK_DIR + "/"):
        raise MystConversionError(f"{page!r} is not a page under {BOOK_DIR}/")
    return f"{COLAB_DIR}/{page[len(BOOK_DIR) + 1:]}.ipynb"


def repository():
    """(org/name, branch) of the repository, from _config.yml."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"].rstrip("/")
    return url.removeprefix("https://github.com/"), config["repository"]["branch"]


# --- citations ---------------------------------------------------------------------------

def _plain(text):
    return re.sub(r"[{}]", "", str(text)).strip()


def read_bibliography(path=BIB):
    """{key: (names as the book writes them, year)} from a .bib file (author_year style)."""
    from pybtex.database import parse_file

    entries = {}
    for key, entry in parse_file(str(path)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = [_plain(" ".join(p.prelast_names + p.last_names)) for p in people]
        if not last:
            names = _plain(entry.fields.get("title", key))
        elif len(last) == 1:
            names = last[0]
        elif len(last) == 2:
            names = f"{last[0]} and {last[1]}"
        else:
            names = f"{last[0]} *et al.*"
        entries[key] = (names, _plain(entry.fields.get("year", "n.d.")))
    return entries


# --- the book: titles, targets, equation numbers ----------------------------------------

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
TARGET = re.compile(r"^\s*\(([^()\s]+)\)=\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([^}\s]+)\})?\s*(.*?)\s*$")
MATH_CLOSE = re.compile(r"^(.*?)\$\$\s*(?:\(([^()\s]+)\))?\s*$")
ROLE = re.compile(r"\{([a-zA-Z][\w:-]*)\}(`+)(.+?)\2", re.S)
TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)


def make_id(text):
    """The HTML id docutils gives a name (lower case, other characters -> '-')."""
    from docutils.nodes import make_id as docutils_make_id

    return docutils_make_id(text)


@dataclass
class Book:
    """What the conversion of one page needs to know about all of them."""

    titles: dict = field(default_factory=dict)       # page -> title
    targets: dict = field(default_factory=dict)      # label -> (page, anchor, title)
    equations: dict = field(default_factory=dict)    # label -> (page, number)
    offsets: dict = field(default_factory=dict)      # page -> equations on earlier pages
    citations: dict = field(default_factory=dict)    # key -> (names, year)
    raw_url: str = ""                                # repository files, for images

    def url(self, page, anchor=""):
        return BOOK_URL + page + ".html" + (f"#{anchor}" if anchor else "")


def page_sources(page):
    """The Markdown of a page: the Markdown cells of its notebook, or its .md file."""
    notebook = ROOT / f"{page}.ipynb"
    if notebook.is_file():
        nb = nbformat.read(notebook, as_version=4)
        return [cell.source for cell in nb.cells if cell.cell_type == "markdown"]
    return [(ROOT / f"{page}.md").read_text(encoding="utf-8")]


def load_book(pages=None):
    pages = toc_entries() if pages is None else pages
    org, branch = repository()
    book = Book(citations=read_bibliography(),
                raw_url=f"https://raw.githubusercontent.com/{org}/{branch}/")
    total = 0
    for page in pages:   # Sphinx numbers the equations through the book, in _toc.yml order
        book.offsets[page] = total
        scan = Converter(book, page, strict=False)
        for source in page_sources(page):
            scan.markdown(source)
        book.titles[page] = scan.title or posixpath.basename(page)
        total = scan.number
    for page in pages:   # the targets' titles, now that every page's are known
        scan = Converter(book, page, strict=False)
        for source in page_sources(page):
            scan.markdown(source)
        notebook = ROOT / f"{page}.ipynb"
        for cell in nbformat.read(notebook, as_version=4).cells if notebook.is_file() else []:
            # a figure made by a code cell, named in its metadata (myst-nb)
            figure = cell.metadata.get("mystnb", {}).get("figure", {})
            if cell.cell_type == "code" and figure.get("name"):
                book.targets[figure["name"]] = (page, make_id(figure["name"]),
                                                scan.inline(figure.get("caption", "")))
    return book


# --- the converter -----------------------------------------------------------------------

class Converter:
    """Converts the Markdown cells of one page, in order (equations numbered as they come)."""

    def __init__(self, book: Book, page: str, strict: bool = True):
        self.book, self.page, self.strict = book, page, strict
        self.number = book.offsets.get(page, 0)   # labelled equations so far, in the book
        self.title = None
        self.pending = []        # (label)= targets waiting for their heading

    # errors name the page; in the first (scanning) pass nothing is resolved yet
    def fail(self, message):
        if self.strict:
            raise MystConversionError(f"{self.page}: {message}")
        return ""

    def markdown(self, source: str) -> str:
        lines = source.split("\n")
        out, run, i = [], [], 0

        def flush():
            if run:
                out.append(self.inline("\n".join(run)))
                run.clear()

        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            fence = FENCE.match(line)
            target = TARGET.match(line)
            if target:
                self.pending.append(target.group(1))
                i += 1
                continue
            if stripped.startswith("%"):     # a MyST comment
                i += 1
                continue
            heading = HEADING.match(line)
            if heading:
                flush()
                self.heading(heading.group(2))
                out.append(line[: heading.end(1)] + " " + self.inline(heading.group(2)))
                i += 1
                continue
            if fence and fence.group(2)[0] in "`~:" and (fence.group(3) or
                                                         fence.group(2)[0] != ":"):
                flush()
                end = self._close(lines, i, fence.group(2))
                body = lines[i + 1:end]
                if fence.group(3):
                    out.append(self.directive(fence.group(4), fence.group(5), body,
                                              fence.group(1)))
                else:   # an ordinary code block, verbatim, with blank lines around it
                    out.append("\n" + "\n".join(lines[i:end + 1]) + "\n")
                i = end + 1
                continue
            rest = stripped[2:]
            if stripped.startswith("$$") and ("$$" not in rest or MATH_CLOSE.match(rest)):
                flush()   # display maths (not a line that starts with inline $$x$$ text)
                end, label, maths = self._maths(lines, i)
                indent = line[: len(line) - len(line.lstrip())]
                out.append("\n".join(indent + row if row else row for row in
                                     self.equation(textwrap.dedent(maths), label)
                                     .split("\n")))
                i = end + 1
                continue
            run.append(line)
            i += 1
        flush()
        return "\n".join(out)

    def _close(self, lines, start, opener):
        char, n = opener[0], len(opener)
        for j in range(start + 1, len(lines)):
            s = lines[j].strip()
            if len(s) >= n and set(s) == {char}:
                return j
        self.fail(f"the fence {opener!r} opened at line {start + 1} is not closed")
        return len(lines) - 1

    def _maths(self, lines, start):
        first = lines[start].strip()[2:]
        close = MATH_CLOSE.match(first)
        if close and "$$" in first:
            return start, close.group(2), close.group(1).strip()
        body = [first] if first.strip() else []
        for j in range(start + 1, len(lines)):
            close = MATH_CLOSE.match(lines[j])
            if close and "$$" in lines[j]:
                if close.group(1).strip():
                    body.append(close.group(1))
                return j, close.group(2), "\n".join(body)
            body.append(lines[j])
        self.fail(f"the display maths opened at line {start + 1} is not closed")
        return len(lines) - 1, None, "\n".join(body)

    def heading(self, text):
        plain = self.inline(text)
        if self.title is None:
            self.title = plain
        for label in self.pending:
            anchor = make_id(label)
            self.book.targets[label] = (self.page, anchor, plain)
        self.pending.clear()

    def equation(self, maths, label):
        maths = maths.strip("\n")
        if label is None:
            return f"$$\n{maths}\n$$"
        self.number += 1
        self.book.equations[label] = (self.page, self.number)
        return f"$$\n{maths}\n\\tag{{{self.number}}}\n$$"

    # --- directives ----------------------------------------------------------------------

    def directive(self, name, argument, body, indent=""):
        options, body = self._options(body)
        if name == "math":
            return self.equation("\n".join(body), options.get("label"))
        if name == "index":
            return ""
        if name in ("figure", "image"):
            return self.figure(name, argument, options, body)
        if name == "admonition" or name in ADMONITIONS or name == "dropdown":
            title = argument or ("" if name == "dropdown" else
                                 {"seealso": "See also"}.get(name, name.capitalize()))
            title = self.inline(title)
            text = self.markdown("\n".join(body)).strip("\n")
            if name == "dropdown" or "dropdown" in options.get("class", "").split():
                return (f"{indent}<details>\n{indent}<summary>{title or 'Details'}</summary>"
                        f"\n\n{text}\n\n{indent}</details>")
            quoted = "\n".join(indent + (f"> {line}" if line.strip() else ">")
                               for line in text.split("\n"))
            return f"{indent}> **{title}**\n{indent}>\n{quoted}"
        return self.fail(f"the directive {{{name}}} has no Colab form "
                         f"(add one to _ext/colab.py)")

    def _options(self, body):
        options, i = {}, 0
        if body and body[0].strip() == "---":          # a YAML block of options
            end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
            if end is not None:
                options = yaml.safe_load("\n".join(body[1:end])) or {}
                return {k: str(v) for k, v in options.items()}, body[end + 1:]
        while i < len(body):
            option = re.match(r"^\s*:([\w-]+):\s*(.*?)\s*$", body[i])
            if not option:
                break
            options[option.group(1)] = option.group(2)
            i += 1
        return options, body[i:]

    def figure(self, name, path, options, body):
        alt = options.get("alt", "")
        image = f"![{alt}]({self.image_url(path)})"
        if options.get("name"):
            self.book.targets.setdefault(options["name"],
                                         (self.page, make_id(options["name"]), alt))
        caption = self.inline("\n".join(body).strip()) if name == "figure" else ""
        return image + (f"\n\n*{caption}*" if caption else "")

    def image_url(self, path):
        if re.match(r"^[a-z]+:", path):
            return path
        if path.startswith("/"):
            resolved = path.lstrip("/")
        else:
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(self.page), path))
        return self.book.raw_url + resolved

    # --- roles ---------------------------------------------------------------------------

    def inline(self, text):
        text = ROLE.sub(lambda m: self.role(m.group(1), m.group(3)), text)
        # images and raw <img> tags with paths relative to the page
        text = re.sub(r"(!\[[^\]]*\]\()([^)\s]+)", lambda m: m.group(1) +
                      self.image_url(m.group(2)), text)
        return re.sub(r'(<img\b[^>]*\bsrc=")([^"]+)', lambda m: m.group(1) +
                      self.image_url(m.group(2)), text)

    def role(self, name, content):
        titled = TITLED.match(content)
        text, target = (titled.group(1), titled.group(2)) if titled else (None, content)
        if name == "index":
            return text if text is not None else target
        if name == "math":
            return f"${content}$"
        if name in ("cite", "cite:p", "cite:t"):
            return self.cite(name, content)
        if name == "eq":
            return self.eq(target, text)
        if name == "doc":
            page = self.resolve_page(target)
            return f"[{text or self.book.titles.get(page, target)}]({self.book.url(page)})"
        if name in ("ref", "numref"):
            if target not in self.book.targets:
                return self.fail(f"{{{name}}}`{content}`: no target ({target})= "
                                 f"or figure :name: in the book")
            page, anchor, title = self.book.targets[target]
            label = text or title or target
            return f"[{label.replace('%s', '').strip()}]({self.book.url(page, anchor)})"
        if name == "term":
            term = text if text is not None else target
            # the id Sphinx gives a glossary term (capitals kept, unlike docutils' make_id)
            from sphinx.util.nodes import _make_id

            return f"[{term}]({self.book.url(GLOSSARY_PAGE, _make_id('term-' + target))})"
        return self.fail(f"the role {{{name}}} has no Colab form (add one to _ext/colab.py)")

    def cite(self, name, keys):
        found = []
        for key in (k.strip() for k in keys.split(",")):
            if key not in self.book.citations:
                return self.fail(f"{{{name}}}`{keys}`: no entry {key!r} in {BIB.name}")
            found.append(self.book.citations[key])
        url = self.book.url(REFERENCES_PAGE)
        if name == "cite:t":
            return "; ".join(f"{names} [[{year}]({url})]" for names, year in found)
        return "[" + "; ".join(f"[{names}, {year}]({url})" for names, year in found) + "]"

    def eq(self, label, text):
        if label not in self.book.equations:
            return self.fail(f"{{eq}}`{label}`: no equation labelled ({label}) in the book")
        page, number = self.book.equations[label]
        shown = text or f"({number})"
        if page == self.page:
            return shown
        return f"[{shown}]({self.book.url(page, 'equation-' + make_id(label))})"

    def resolve_page(self, target):
        page = (target.lstrip("/") if target.startswith("/")
                else posixpath.normpath(posixpath.join(posixpath.dirname(self.page), target)))
        page = re.sub(r"\.(md|ipynb)$", "", page)
        if page not in self.book.titles:
            return self.fail(f"{{doc}}`{target}`: no page {page} in _toc.yml") or page
        return page


# --- notebooks ---------------------------------------------------------------------------

def convert_cells(book: Book, page: str, sources):
    """The Markdown sources of one page, converted (after a first pass that numbers the
    page's equations, so a reference may come before its equation)."""
    scan = Converter(book, page, strict=False)
    for source in sources:
        scan.markdown(source)
    converter = Converter(book, page)
    return [converter.markdown(source) for source in sources]


def colab_notebook(book: Book, page: str):
    """The Colab edition of one notebook page, as a notebook node."""
    nb = nbformat.read(ROOT / f"{page}.ipynb", as_version=4)
    markdown = [cell for cell in nb.cells if cell.cell_type == "markdown"]
    for cell, source in zip(markdown, convert_cells(book, page, [c.source for c in markdown])):
        cell.source = source
    first = True
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if first:   # say what this copy is, under the title
                first = False
                title, _, rest = cell.source.partition("\n")
                note = (f"*The Colab edition of [this page of the book]({book.url(page)}), "
                        f"made from `{page}.ipynb` by `_ext/colab.py`.*")
                cell.source = f"{title}\n\n{note}\n{rest}"
                if not title.startswith("# "):
                    cell.source = f"{note}\n\n{cell.source}"

        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def render(nb) -> str:
    return nbformat.writes(nb) + "\n"


def expected_files():
    """{repository path: text} of every Colab notebook, from the current book/."""
    book = load_book()
    return {colab_path(page): render(colab_notebook(book, page))
            for page in toc_entries() if (ROOT / f"{page}.ipynb").is_file()}


def outdated(files):
    """(paths whose committed text differs from `files`, Colab notebooks not in `files`)."""
    stale = [path for path, text in files.items()
             if not (ROOT / path).is_file()
             or (ROOT / path).read_text(encoding="utf-8") != text]
    extra = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / COLAB_DIR).rglob("*.ipynb")
                   if p.relative_to(ROOT).as_posix() not in files)
    return stale, extra


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a Colab notebook is out of date")
    args = parser.parse_args(argv)
    try:
        files = expected_files()
    except MystConversionError as error:
        sys.exit(f"colab: {error}")
    stale, extra = outdated(files)
    if args.check:
        if stale or extra:
            sys.exit("colab: out of date: " + ", ".join(stale + extra) +
                     f"\nrun: {REGENERATE}")
        return
    for path in stale:
        (ROOT / path).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / path).write_text(files[path], encoding="utf-8")
    for path in extra:
        (ROOT / path).unlink()
    print(f"colab: {len(files)} notebooks, {len(stale)} written, {len(extra)} removed")


# --- the Sphinx extension: the Colab launch button ----------------------------------------

def point_colab_button(app, pagename, templatename, context, doctree):
    """Make the theme's Colab launch button open the Colab edition of the page."""
    if not (ROOT / f"{pagename}.ipynb").is_file() or not pagename.startswith(BOOK_DIR):
        return
    book_path, edition = f"/{pagename}.ipynb", "/" + colab_path(pagename)
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") == "Colab" and button.get("url", "").endswith(book_path):
                button["url"] = button["url"][: -len(book_path)] + edition


def setup(app):
    # after sphinx-book-theme's add_launch_buttons (priority 501)
    app.connect("html-page-context", point_colab_button, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    main()
