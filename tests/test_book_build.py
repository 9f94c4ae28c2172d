"""The whole book builds with no warnings, executes no notebook a second time, and its
pages load nothing from the internet.

The build goes into a fresh directory (book_build.py: `--path-output _build/test-book`,
emptied first); the notebooks' outputs come from the cache that the first step of
`make test` filled (_ext/nbexec.py: one execution per notebook, keyed by its code and the
package's sources). test_browser.py opens the same build in Chromium.

Marked `book`: `make test` runs it beside the unit tests, once the notebooks are all in
the cache (`_ext/nbexec.py --wait-until-cached`).
"""

import re
from html.parser import HTMLParser

import pytest
import yaml

from book_build import build_book
from test_notebooks_clean import ROOT, toc_entries

pytestmark = pytest.mark.book

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def build():
    return build_book()


def test_build_succeeds_without_warnings(build):
    proc, _ = build
    log = ANSI_ESCAPE.sub("", proc.stdout + proc.stderr)
    problems = [line for line in log.splitlines()
                if re.search(r"WARNING|ERROR|CRITICAL|Error:", line)
                and not line.startswith("[IPKernelApp]")]  # kernel chatter, not Sphinx
    tail = "\n".join(log.splitlines()[-15:])
    returncode = proc.returncode  # (asserting on proc would print the whole log twice)
    assert returncode == 0, (
        f"jupyter-book build exited with {returncode}.\n\nEnd of the log:\n{tail}\n\n"
        "Warnings and errors:\n" + ("\n".join(problems) or "(none found in the log)")
    )


def test_the_build_reuses_every_notebook_execution(build):
    """Every notebook ran once, in the first step of `make test` (or `make book`'s
    nbexec): the build finds each one in the cache of the current sources."""
    proc, _ = build
    log = ANSI_ESCAPE.sub("", proc.stdout + proc.stderr)
    executed = [line for line in log.splitlines() if "Executing notebook" in line]
    reused = [line for line in log.splitlines() if "Using cached notebook" in line]
    assert not executed, (
        "the build executed notebooks that the first step of `make test` should have "
        "cached (did they fail there?):\n" + "\n".join(executed))
    notebooks = [e for e in toc_entries() if (ROOT / f"{e}.ipynb").is_file()]
    assert len(reused) == len(notebooks), (len(reused), len(notebooks))


def test_every_page_is_built(build):
    _, html = build
    pages = ["index"] + toc_entries()
    missing = [page for page in pages if not (html / f"{page}.html").is_file()]
    assert not missing, f"pages missing from {html}: {missing}"


class _Resources(HTMLParser):
    """The scripts and stylesheets a page loads: <script src> and <link rel=stylesheet href>."""

    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.found.append(attrs["src"])
        elif tag == "link" and "stylesheet" in (attrs.get("rel") or "") and attrs.get("href"):
            self.found.append(attrs["href"])


def page_resources(path):
    parser = _Resources()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.found


def offline_scripts():
    """The local paths (under _static/) that _config.yml gives for MathJax and the widgets."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    return [config["mathjax_path"], *config["nb_ipywidgets_js"]]


def test_offline_scripts_are_in_the_build(build):
    _, html = build
    scripts = offline_scripts()
    assert all("://" not in s and not s.startswith("/") for s in scripts), (
        f"_config.yml: mathjax_path and nb_ipywidgets_js must be paths under _static/, got {scripts}")
    missing = [s for s in scripts if not (html / "_static" / s).is_file()]
    assert not missing, (
        f"not in {html / '_static'}: {missing} (`make book` / `make test` install them with "
        "_ext/web_assets.py and copy them to _build/static/offline/)")


def test_pages_load_nothing_from_the_internet(build):
    """No page takes a script or stylesheet from a CDN (or any other host), and the pages
    with math or widgets load MathJax and the HTML manager from _static/."""
    _, html = build
    pages = sorted(html.rglob("*.html"))
    assert len(pages) > len(toc_entries()), f"too few pages in {html}"
    remote, loaded = {}, set()
    for page in pages:
        for src in page_resources(page):
            if re.match(r"(https?:)?//", src):
                remote.setdefault(src, page.relative_to(html).as_posix())
            loaded.add(src.split("_static/", 1)[-1].split("?", 1)[0])
    assert not remote, "scripts/styles from other hosts (url: first page):\n" + "\n".join(
        f"{src}: {page}" for src, page in sorted(remote.items()))
    not_loaded = [s for s in offline_scripts() if s not in loaded]
    assert not not_loaded, f"no page loads {not_loaded}: is it still configured?"


# Raw TeX in a page's text: a $ or \( \) \[ \] that the Markdown parser left (a wrapped
# line inside $...$ that began with "- " becomes a list item and splits the formula), or a
# TeX command outside the math elements MathJax typesets.
RAW_TEX = re.compile(r"\$|\\[()\[\]]|\\[A-Za-z]{2,}")
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}


class _ProseText(HTMLParser):
    """The text of a page's <main> outside math (class "math"), code, scripts, styles,
    the widgets' stored state and the search form."""

    SKIP_TAGS = {"script", "style", "pre", "code", "textarea", "kbd", "samp", "svg"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.found = [], []

    def handle_starttag(self, tag, attrs):
        if tag in VOID_TAGS:
            return
        classes = (dict(attrs).get("class") or "").split()
        inside = self.stack[-1] if self.stack else (None, False, False)
        skip = tag in self.SKIP_TAGS or "math" in classes or inside[1]
        in_main = tag == "main" or inside[2]
        self.stack.append((tag, skip, in_main))

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                del self.stack[k:]
                return

    def handle_data(self, data):
        if self.stack and self.stack[-1][2] and not self.stack[-1][1]:
            self.found += [(m.group(), data.strip()[:80]) for m in RAW_TEX.finditer(data)]


def raw_tex(html_text):
    """[(the raw TeX, the text around it)] in a page's prose."""
    parser = _ProseText()
    parser.feed(html_text)
    return parser.found


def test_raw_tex_check_finds_a_formula_split_by_a_list_item():
    """Guards the check below: the HTML of a paragraph whose $...$ a list item split."""
    split = ('<main><p>Each sweep sets <span class="math notranslate nohighlight">\\(x\\)'
             '</span> to $P_t = \\operatorname{proj}_F(P_t</p><ul><li><p>K v)$.</p></li>'
             '</ul><pre>a $ in code \\alpha</pre></main>')
    assert [tex for tex, _ in raw_tex(split)] == ["$", "\\operatorname", "$"]
    assert raw_tex('<main><p>typeset: <span class="math">\\(\\alpha\\)</span></p></main>') == []


def test_no_raw_tex_in_the_prose(build):
    """Every formula reached MathJax: no page's text (outside math elements and code) holds
    a $, \\( \\) \\[ \\] or a TeX command."""
    _, html = build
    problems = {}
    for entry in toc_entries():
        found = raw_tex((html / f"{entry}.html").read_text(encoding="utf-8"))
        if found:
            problems[entry] = found[:5]
    assert not problems, "raw TeX in the text (first 5 per page):\n" + "\n".join(
        f"{page}: {found}" for page, found in problems.items())


class _Anchors(HTMLParser):
    """A page's element ids and the targets of its links (<a href>)."""

    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def _anchors(path):
    parser = _Anchors()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_api_links_land_on_an_entry_of_the_api_reference(build):
    """Each chapter's links to the API reference ([`rbd.rnea`](#rbdlearn.rnea), see
    test_api_reference.py) are links in the HTML to a page of book/api/ that has the entry:
    an element whose id is the documented name."""
    from chapter_calls import LINK, chapters, page_cells
    _, html = build
    checked, broken = 0, []
    for chapter, entries in chapters().items():
        if chapter.startswith("book/api/"):
            continue
        for entry in entries:
            names = {n for kind, source, _ in page_cells(entry) if kind == "markdown"
                     for n in LINK.findall(source)}
            if not names:
                continue
            page = html / f"{entry}.html"
            targets = {}
            for href in _anchors(page).hrefs:
                path, _, anchor = href.partition("#")
                if anchor.startswith("rbdlearn"):
                    targets.setdefault(anchor, set()).add((page.parent / path).resolve())
            for name in sorted(names):
                if name not in targets:
                    broken.append(f"{entry}: no link to {name} in the HTML")
                    continue
                for target in targets[name]:
                    checked += 1
                    if (target.parent != (html / "book" / "api").resolve()
                            or not target.is_file() or name not in _anchors(target).ids):
                        broken.append(f"{entry}: the link to {name} goes to {target}, "
                                      "which has no such entry")
    assert not broken, "\n".join(broken)
    assert checked > 300, f"only {checked} links to the API reference checked"
