"""The built book in a real browser: Chromium's headless shell (Debian's package
chromium-headless-shell, /usr/bin/chromium-headless-shell) driven by Playwright, every
page of _toc.yml served from a local http.server.

Each page: no console errors, no failed request and no request to another host (all of
them are blocked: the book must work offline), math typeset by MathJax (every math
element holds an mjx-container with its MathML copy for screen readers; no raw TeX left
in the text), every image loaded, every stored widget state rendered by the HTML
manager, every to_jshtml animation present with its first frame, nothing (code, output,
equation, table, image, widget) wider than the content column or scrolling sideways in
it, and each explorer answering every one of its controls without a kernel, the sidebar
listing every page in the order of _toc.yml — at 1280 px; then on a 390 px phone (the
page's formulas broken again for that width by MathJax, as a load there breaks them) the
same layout checks. A screenshot of each
page's first screen goes to _build/screenshots/, and of each widget before and after its
controls move to _build/screenshots/widgets/. Then index.html and the search page, and
each page's weight on a first visit (gzip-compressed, within the guide's budgets and the
ranges DEVELOPING.md gives) and on the next page, written to _build/page-weights.json.

The HTML is the one book_build.py builds for the session (the build test_book_build.py
checks), or $RBDLEARN_BOOK_HTML, e.g. `RBDLEARN_BOOK_HTML=_build/html` after `make book`
to rerun only these tests: `.venv/bin/python -m pytest -m browser tests`.
Without it these tests are skipped (Debian: apt-get install chromium-headless-shell).

The headless shell is Chromium's engine without the browser's user interface (Chromium's
former "old" headless mode): the same Blink renders and lays out the pages, for a fifth
less CPU than the full browser's headless mode (these tests on three workers, idle
machine: 253 CPU-s against 319).
"""

import sys
from urllib.parse import urlsplit

import nbformat
import pytest

from book_build import book_html
from test_book_build import RAW_TEX       # $, \( \) \[ \] or a TeX command left in the text
from test_notebooks_clean import ROOT, toc_entries
from test_page_weights import documented_ranges, page_weights

sys.path.insert(0, str(ROOT / "_ext"))
import pdf as book_pdf  # noqa: E402  (_ext/pdf.py: its Site serves the built book)
import rbdlearn_html  # noqa: E402  (RBD3D_DIV: a 3-D view in a built page)

CHROMIUM = book_pdf.CHROMIUM
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# Every other host is made unresolvable by Chromium itself, so a request to one fails at
# once (and is reported below); the requests are watched through events, not routed through
# Python one by one, which made the page loads 1.7 times slower.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--host-resolver-rules=MAP * ~NOTFOUND, "
                 + ", ".join(f"EXCLUDE {h}" for h in sorted(LOCAL_HOSTS)),
                 # WebGL in software (the 3-D views, tests/test_view3d_browser.py): without
                 # a GPU the headless shell draws WebGL with SwiftShader only when told to
                 "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
SCREENSHOTS = ROOT / "_build" / "screenshots"
# Waits, not measurements: a page is checked once it has loaded and MathJax has typeset
# it (ch3 §1, 416 formulas: about 0.5 s idle, a few seconds on a loaded machine, and 20-35
# s before MathJax's semantic enrichment was switched off, _config.yml). The limits are
# far above that, so that a machine busy with other jobs fails nothing.
TIMEOUT_MS = 60_000
MATHJAX_TIMEOUT_MS = 120_000

# The marks of every browser test (test_exercises_browser.py takes them from here).
BROWSER_MARKS = [
    pytest.mark.book,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(),
                       reason=f"browser tests need {CHROMIUM} (Debian: apt-get install "
                              "chromium-headless-shell)"),
]
pytestmark = BROWSER_MARKS

PAGES = toc_entries()


def widget_pages():
    """The pages that show an explorer: a code cell, not removed from the page, that
    calls one of rbdlearn.widgets' *_explorer functions."""
    pages = []
    for entry in PAGES:
        path = ROOT / f"{entry}.ipynb"
        if path.is_file() and any(
                cell.cell_type == "code" and "_explorer(" in cell.source
                and "remove-cell" not in cell.metadata.get("tags", [])
                for cell in nbformat.read(path, as_version=4).cells):
            pages.append(entry)
    return pages


WIDGET_PAGES = widget_pages()

# Every visible widget part must lie inside the page's content column (and the window):
# nothing cut off, nothing that makes the reader scroll sideways.
WIDGETS_OUTSIDE_THE_COLUMN = """() => {
    const out = [];
    document.querySelectorAll('.widget-subarea').forEach((area, k) => {
        const column = (area.closest('article') || document.body).getBoundingClientRect();
        const right = Math.min(column.right, document.documentElement.clientWidth);
        area.querySelectorAll('.jupyter-widgets, img, .widget-html-content').forEach(el => {
            if (el.offsetParent === null) return;              // hidden (another view)
            const r = el.getBoundingClientRect();
            if (r.width > 0 && (r.right > right + 1 || r.left < column.left - 1))
                out.push(`widget ${k + 1}: <${el.tagName.toLowerCase()} class="`
                         + `${el.className}"> spans x = ${Math.round(r.left)}..`
                         + `${Math.round(r.right)}, the column ${Math.round(column.left)}..`
                         + `${Math.round(right)}`);
        });
    });
    return out;
}"""

# Everything in the content column at the window's width: the page does not scroll sideways,
# no element (code, output, equation, table, image, widget) reaches past the column, and no
# box inside it scrolls sideways or cuts its content off. Each problem names the kind of
# element, its tag and class, its section and the start of its text. Also: a formula that
# MathJax broke into lines uses its box (its widest line at least a third of its width):
# narrower lines mean MathJax measured the wrong box, as it did beside a floated equation
# number.
OVERFLOWS = """() => {
    // Everything the reader sees in the page's content column: nothing wider than the
    // column (or the window), and nothing that scrolls sideways or is cut off inside it.
    const article = document.querySelector('article') || document.body;
    const col = article.getBoundingClientRect();
    const right = Math.min(col.right, document.documentElement.clientWidth);
    const left = Math.max(col.left, 0);
    const where = el => {
        const s = el.closest('section[id]');
        return s ? `#${s.id}` : '';
    };
    const name = el => {
        const m = el.closest('.math, mjx-container');
        const what = m ? 'equation' : el.closest('.cell_output') ? 'output'
            : el.closest('.cell_input') ? 'code' : el.closest('table') ? 'table'
            : el.closest('.widget-subarea') ? 'widget' : `<${el.tagName.toLowerCase()}>`;
        const text = Array.from((el.textContent || el.getAttribute('src') || '').trim()
            .replace(/\\s+/g, ' ')).slice(0, 50).join('');
        return `${what} <${el.tagName.toLowerCase()} class="${el.className}"> in `
            + `${where(el) || 'the page'}: "${text}"`;
    };
    const out = [];
    if (document.documentElement.scrollWidth > document.documentElement.clientWidth + 1)
        out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px `
                 + `wide in a ${document.documentElement.clientWidth} px window`);
    // clipped: boxes that clip or scroll their content (what lies past their edges is
    // theirs to report, not the column's); reported: boxes already named, whose
    // children are not named again. (A displayed formula scrolls inside its div.math,
    // itself a scrolling box: each is checked.)
    const clipped = new Set(), reported = new Set();
    const under = (el, set) => {
        for (let a = el.parentElement; a && a !== article; a = a.parentElement)
            if (set.has(a)) return true;
        return false;
    };
    for (const el of article.querySelectorAll('*')) {
        if (el.closest('.headerlink, .visually-hidden, .sr-only, mjx-assistive-mml')) continue;
        const style = getComputedStyle(el);
        if (style.display === 'none' || style.visibility === 'hidden') continue;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) continue;
        if (!under(el, clipped) && (r.right > right + 1 || r.left < left - 1)) {
            out.push(`${name(el)} spans x = ${Math.round(r.left)}..${Math.round(r.right)}, `
                     + `the column ${Math.round(left)}..${Math.round(right)}`);
            clipped.add(el);
            reported.add(el);   // reported once, not again for each of its children
            continue;
        }
        // (MathJax clips parts of its own rendering, such as an accent's box, by a pixel
        // or two: inside a formula only the displayed formula's own box is checked)
        if (style.overflowX !== 'visible' && (!el.closest('mjx-container')
                || el.matches('mjx-container[display="true"]'))) {
            clipped.add(el);
            if (el.scrollWidth > el.clientWidth + 1 && !under(el, reported)) {
                out.push(`${name(el)} ${style.overflowX === 'hidden' ? 'is cut off'
                         : 'scrolls sideways'}: ${el.scrollWidth} px of content in `
                         + `${el.clientWidth} px`);
                reported.add(el);
            }
        }
    }
    document.querySelectorAll('article mjx-container[display="true"]').forEach(m => {
        const lines = Array.from(m.querySelectorAll('mjx-linebox'));
        const widest = Math.max(0, ...lines.map(l => l.getBoundingClientRect().width));
        if (lines.length > 1 && widest < m.clientWidth / 3)
            out.push(`${name(m)} is broken into ${lines.length} lines of at most `
                     + `${Math.round(widest)} px in a ${m.clientWidth} px box`);
    });
    return out;
}"""

# What a widget shows: its visible pictures and read-outs
WIDGET_VIEW = """area => Array.from(area.querySelectorAll('img, .widget-html-content'))
    .filter(el => el.offsetParent !== null)
    .map(el => el.tagName === 'IMG' ? 'img:' + el.src.slice(-40) : el.textContent)
    .join(' | ')"""


@pytest.fixture(scope="module")
def site():
    """The built HTML served on 127.0.0.1 (as _ext/pdf.py serves it to print the book);
    yields its base URL."""
    html = book_html()
    if not (html / "index.html").is_file():
        pytest.fail(f"no built book in {html} (see test_book_build.py for the build log)")
    with book_pdf.Site(html) as served:
        yield served.base


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                     headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def context(browser):
    """One browser context for the pages a worker opens, as one reader's browser: pages
    after the first load the scripts they share (MathJax, the widget manager: 4 MB) from
    its cache, compiled, instead of fetching and compiling them again for each page."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    yield context
    context.close()


class Watched:
    """A new page (tab) that records what went wrong while it loaded."""

    def __init__(self, context):
        self.problems = []
        self.page = context.new_page()
        self.page.on("request", self._only_local)
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(
            f"console error: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(
            f"request failed: {r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(
            f"HTTP {r.status}: {r.url}"))

    def _only_local(self, request):
        url = urlsplit(request.url)
        if url.scheme in ("http", "https") and url.hostname not in LOCAL_HOSTS:
            self.problems.append(f"request to another host (blocked): {request.url}")

    def close(self):
        self.page.close()


@pytest.fixture
def watched(context):
    w = Watched(context)
    yield w
    w.close()


def page_url(site, entry):
    return f"{site}{entry}.html"


def expected_animations(entry):
    """How many to_jshtml animations the page should show: at least one per code cell
    of its notebook that makes one (calls to_jshtml: an import of it makes none)."""
    path = ROOT / f"{entry}.ipynb"
    if not path.is_file():
        return 0
    nb = nbformat.read(path, as_version=4)
    return sum("to_jshtml(" in cell.source for cell in nb.cells if cell.cell_type == "code")


WAIT_FOR_MATHJAX = """() => !document.querySelector('.math') ||
    (window.MathJax && MathJax.startup && MathJax.startup.promise)"""


def wait_until_typeset(page):
    """Until MathJax has started on ``page`` (if it has math) and typeset it."""
    page.wait_for_function(WAIT_FOR_MATHJAX, timeout=MATHJAX_TIMEOUT_MS)
    page.evaluate("() => window.MathJax && MathJax.startup ? "
                  "MathJax.startup.promise.then(() => true) : false")

WIDGETS_RENDERED = """() => Array.from(document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]')).every(s => {
    const area = s.previousElementSibling;
    return area && area.classList.contains('widget-subarea')
        && area.querySelector('.jupyter-widgets') !== null;
})"""

IMAGES_SETTLED = """async () => {
    window.scrollTo(0, document.body.scrollHeight);
    await Promise.all(Array.from(document.images).map(img => img.complete ? null :
        new Promise(done => { img.addEventListener('load', done);
                              img.addEventListener('error', done); })));
    window.scrollTo(0, 0);
}"""

INSPECT = """() => {
    const text = node => {
        const copy = node.cloneNode(true);
        copy.querySelectorAll('pre, code, script, style, mjx-container, .widget-subarea, '
                              + 'textarea').forEach(e => e.remove());
        return copy.textContent;
    };
    const main = document.querySelector('main') || document.body;
    const maths = Array.from(document.querySelectorAll('.math'));
    return {
        math: maths.length,
        untypeset: maths.filter(m => !m.querySelector('mjx-container'))
                        .map(m => m.textContent.trim().slice(0, 60)),
        mjx: document.querySelectorAll('mjx-container').length,
        no_mathml: Array.from(document.querySelectorAll('mjx-container'))
            .filter(m => !m.querySelector('mjx-assistive-mml')).length,
        text: text(main),
        broken_images: Array.from(document.images)
            .filter(i => !(i.complete && i.naturalWidth > 0))
            .map(i => (i.currentSrc || i.src || i.id || '(no src)').slice(0, 80)),
        animations: Array.from(document.querySelectorAll('div.animation')).map(a => {
            const img = a.querySelector('img');
            return !!img && img.naturalWidth > 0;
        }),
        widget_views: document.querySelectorAll(
            'script[type="application/vnd.jupyter.widget-view+json"]').length,
        widget_controls: document.querySelectorAll(
            '.widget-subarea .widget-slider, .widget-subarea .widget-dropdown, '
            + '.widget-subarea .widget-text').length,
    };
}"""


@pytest.mark.parametrize("entry", PAGES)
def test_page(site, watched, entry):
    page, problems = watched.page, watched.problems
    page.goto(page_url(site, entry), wait_until="load")
    try:
        wait_until_typeset(page)
    except Exception as err:  # playwright's TimeoutError; say what was being waited for
        problems.append(f"MathJax did not start: {str(err).splitlines()[0]}")
    try:
        page.wait_for_function(WIDGETS_RENDERED)
    except Exception as err:
        problems.append(f"widgets not rendered from their stored state: "
                        f"{str(err).splitlines()[0]}")
    page.evaluate(IMAGES_SETTLED)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{entry.removeprefix('book/').replace('/', '-')}.png")

    found = page.evaluate(INSPECT)
    if found["untypeset"]:
        problems.append(f"{len(found['untypeset'])} of {found['math']} math elements not "
                        f"typeset by MathJax, e.g. {found['untypeset'][:3]}")
    if found["no_mathml"]:
        problems.append(f"{found['no_mathml']} of {found['mjx']} formulas without their "
                        "MathML copy for screen readers (assistive MathML, _config.yml)")
    raw = sorted({m.group() for m in RAW_TEX.finditer(found["text"])})
    if raw:
        problems.append(f"raw TeX in the text: {raw}")
    if found["broken_images"]:
        problems.append(f"images not loaded: {found['broken_images']}")
    want = expected_animations(entry)
    if len(found["animations"]) < want or not all(found["animations"]):
        problems.append(f"animations: {len(found['animations'])} shown "
                        f"({sum(found['animations'])} with a frame), expected {want}")
    if found["widget_views"] and not found["widget_controls"]:
        problems.append(f"{found['widget_views']} widgets on the page but no controls shown")
    problems += sidebar_problems(site, entry, page.evaluate(SIDEBAR))
    problems += [f"at 1280 px: {o}" for o in page.evaluate(OVERFLOWS)]
    if entry in WIDGET_PAGES:
        problems += check_widgets(page, entry, 1280)
    # The same page in a 390 px window (a phone): MathJax breaks the formulas again for
    # the narrower column, as it does when a page loads there, and the page's own script
    # shows the tables too wide for it as cards (on the window's resize, once MathJax and
    # the fonts are done); then nothing may reach past the column or scroll sideways, and
    # no part of an explorer either (its controls answer at any width: the views they
    # switch between are the same, so they are moved at 1280 px only).
    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate(AT_THE_NEW_WIDTH)
    problems += [f"at 390 px: {o}" for o in page.evaluate(OVERFLOWS)]
    if entry in WIDGET_PAGES:
        problems += check_widgets(page, entry, 390, move=False)
    assert not problems, f"{entry}:\n  " + "\n  ".join(problems)


SIDEBAR = """() => ({
    links: Array.from(document.querySelectorAll('nav.bd-docs-nav a.reference.internal'))
        .map(a => [a.href.split('#')[0], a.textContent.trim()]),
    heading: (document.querySelector('main h1') || {textContent: ''}).textContent.trim(),
})"""


def sidebar_problems(site, entry, nav):
    """The sidebar of every page links to each page of _toc.yml after the root (whose link
    is the logo), once each and in the order of _toc.yml, and names the page shown with
    the words of its heading. As every page is checked, every link leads to a page that
    its title names: what clicking through the table of contents would show, without
    loading each page a second time."""
    order = [page_url(site, e) for e in PAGES[1:]]
    listed = [href for href, _ in nav["links"] if href in order]
    problems = []
    if listed != order:
        missing = [e for e in PAGES[1:] if page_url(site, e) not in listed]
        problems.append(f"the sidebar does not list the pages of _toc.yml once each and in "
                        f"order: missing {missing}, {len(listed)} links for {len(order)} pages")
    if entry != PAGES[0]:
        title = dict(nav["links"]).get(page_url(site, entry))
        if not title or title not in nav["heading"]:
            problems.append(f"the sidebar names this page {title!r}, its heading is "
                            f"{nav['heading']!r}")
    return problems


AT_THE_NEW_WIDTH = """() => {
    const frame = () => new Promise(requestAnimationFrame);
    const mj = window.MathJax && MathJax.startup && MathJax.startup.document;
    // from the measuring of the surrounding text's width on: the line breaks follow it
    return (mj ? mj.rerenderPromise(MathJax._.core.MathItem.STATE.METRICS)
            : Promise.resolve())
        .then(() => document.fonts.ready).then(frame).then(frame);
}"""


def check_widgets(page, entry, width, move=True):
    """Each explorer on the loaded page: every visible part inside the content column, and
    (with ``move``) each of its controls, moved by the keyboard (a slider) or a new choice
    (a drop-down), changes the picture or read-out shown, with no kernel: the page has
    only the widget state stored by the book build. Screenshots of each widget before and
    after the moves go to _build/screenshots/widgets/. Returns the problems found."""
    problems = [f"at {width} px: {o}" for o in page.evaluate(WIDGETS_OUTSIDE_THE_COLUMN)]
    shots = SCREENSHOTS / "widgets"
    shots.mkdir(parents=True, exist_ok=True)
    name = f"{entry.removeprefix('book/').replace('/', '-')}-{width}"
    areas = page.locator(".widget-subarea")
    if not areas.count():
        return problems + ["no widget shown"]
    for k in range(areas.count()):
        area = areas.nth(k)
        area.scroll_into_view_if_needed()
        area.screenshot(path=shots / f"{name}-{k + 1}-before.png")
        if not move:
            continue
        moved = 0
        for handle in area.locator(".noUi-handle").all():
            if not handle.is_visible():
                continue
            label = handle.evaluate("h => h.closest('.widget-slider')"
                                    ".querySelector('.widget-label').textContent")
            before = area.evaluate(WIDGET_VIEW)
            handle.focus()
            at_end = handle.get_attribute("aria-valuenow") == handle.get_attribute(
                "aria-valuemax")
            page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
            if area.evaluate(WIDGET_VIEW) == before:
                problems.append(f"at {width} px: widget {k + 1}: moving slider '{label}' "
                                f"changed nothing shown")
            moved += 1
        for select in area.locator("select").all():
            if not select.is_visible():
                continue
            before = area.evaluate(WIDGET_VIEW)
            options = select.locator("option").all_inner_texts()
            select.select_option(index=(select.evaluate("s => s.selectedIndex") + 1)
                                 % len(options))
            if area.evaluate(WIDGET_VIEW) == before:
                problems.append(f"at {width} px: widget {k + 1}: a new choice in the "
                                f"drop-down {options} changed nothing shown")
            moved += 1
        area.screenshot(path=shots / f"{name}-{k + 1}-after.png")
        if not moved:
            problems.append(f"widget {k + 1} has no control to move")
    return problems


def test_overflow_check_finds_what_is_too_wide(site, watched):
    """Guards OVERFLOWS against passing vacuously: on a real page, a block wider than the
    column, a box that scrolls sideways and one that scrolls inside another are all
    reported, with their section."""
    page = watched.page
    page.goto(page_url(site, PAGES[1]), wait_until="load")
    assert page.evaluate(OVERFLOWS) == [], "the page must fit before the check is tested"
    page.evaluate("""() => {
        const p = document.querySelector('article section[id] p');
        p.insertAdjacentHTML('afterend', '<div id="too-wide" style="width: 3000px">x</div>'
            + '<div id="scrolls" style="overflow-x: auto"><div style="width: 3000px">y'
            + '</div></div><div style="overflow-x: auto"><div style="overflow-x: auto">'
            + '<div style="width: 3000px">z</div></div></div>');
    }""")
    found = page.evaluate(OVERFLOWS)
    assert len(found) == 4, found      # the page now scrolls sideways, and the three boxes
    assert any(f.startswith('<div> <div class=""> in #') and '"x" spans' in f
               for f in found), found
    assert any('"y" scrolls sideways: 3000 px of content' in f for f in found), found
    # a scrolling box inside another (a displayed formula in its div.math)
    assert any('"z" scrolls sideways: 3000 px of content' in f for f in found), found


def test_requests_to_other_hosts_are_blocked_and_reported(site, watched):
    """Guards the offline check: a page's request to another host fails in the browser
    and is among the problems test_page reports."""
    watched.page.goto(page_url(site, PAGES[0]), wait_until="load")
    outcome = watched.page.evaluate("""() => fetch('https://cdn.jsdelivr.net/npm/x.js')
        .then(() => 'loaded', err => 'failed')""")
    assert outcome == "failed"
    assert any(p.startswith("request to another host") and "cdn.jsdelivr.net" in p
               for p in watched.problems), watched.problems


def test_math_and_widgets_are_checked_somewhere(site, watched):
    """Guards test_page against passing vacuously: some page has typeset math and some
    page shows the controls of a stored widget (the explorers' pages, the lightest first:
    usually one page is enough)."""
    math = widgets = 0
    html = book_html()
    for entry in sorted(WIDGET_PAGES, key=lambda e: (html / f"{e}.html").stat().st_size):
        watched.page.goto(page_url(site, entry), wait_until="load")
        watched.page.wait_for_function(WAIT_FOR_MATHJAX, timeout=MATHJAX_TIMEOUT_MS)
        watched.page.wait_for_function(WIDGETS_RENDERED)
        math += watched.page.locator("mjx-container").count()
        widgets += watched.page.locator(".widget-subarea .widget-slider").count()
        if math and widgets:
            break
    assert math and widgets, f"typeset formulas: {math}, widget sliders shown: {widgets}"


def test_sidebar_check_finds_a_missing_a_misplaced_and_a_misnamed_page():
    """Guards sidebar_problems against passing vacuously, on a sidebar made up here."""
    site = "http://127.0.0.1:1/"
    links = [[page_url(site, e), f"title {k}"] for k, e in enumerate(PAGES[1:])]
    here = PAGES[3]                                         # its link is links[2]
    assert sidebar_problems(site, here, {"links": links, "heading": "title 2"}) == []
    missing = sidebar_problems(site, here, {"links": links[:5] + links[6:],
                                            "heading": "title 2"})
    assert len(missing) == 1 and repr(PAGES[6]) in missing[0], missing
    swapped = links[:4] + [links[5], links[4]] + links[6:]
    assert len(sidebar_problems(site, here, {"links": swapped, "heading": "title 2"})) == 1
    misnamed = sidebar_problems(site, here, {"links": links, "heading": "Another page"})
    assert misnamed == ["the sidebar names this page 'title 2', its heading is "
                        "'Another page'"], misnamed


def test_index_leads_to_the_root_page(site, watched):
    """index.html sends the reader to the root page of _toc.yml (a meta refresh: no script).
    The sidebar's links to every other page are test_page's (sidebar_problems)."""
    page, problems = watched.page, watched.problems
    page.goto(site + "index.html", wait_until="domcontentloaded")
    page.wait_for_url(page_url(site, PAGES[0]), wait_until="domcontentloaded")
    # what the page itself does is test_page's; here: every request stays on this host
    # and finds its file (index.html has no icon: Chromium's request for /favicon.ico
    # fails, and says so in the console, which is not the book's)
    problems = [p for p in problems if p.startswith(("request to another host", "HTTP"))
                or p.startswith("request failed") and not p.endswith("(net::ERR_ABORTED)")]
    assert not problems, "\n".join(problems)


def test_search_finds_pages(site, watched):
    page, problems = watched.page, watched.problems
    page.goto(site + "search.html?q=inertia")
    summary = page.locator("#search-results p.search-summary")
    summary.wait_for()
    page.wait_for_function("() => /found|match/.test(document.querySelector("
                           "'#search-results p.search-summary').textContent)")
    found = page.locator("#search-results ul.search li a").evaluate_all(
        "as => as.map(a => a.href.split('#')[0].split('?')[0])")
    assert found, f"no search results for 'inertia': {summary.inner_text()!r}"
    assert page_url(site, "book/ch3_crb/01_inertia_matrix") in found, found
    assert not problems, "\n".join(problems)


def test_search_box_of_a_page_finds_japanese_words(site, watched):
    """A book page loads no search index (_ext/rbdlearn_html.py, fix 6: 48 kB less on
    every page); its search box (Ctrl+K, Enter) opens search.html, which loads the index
    and finds a Japanese term of the glossary and of ch1 §3."""
    page, problems = watched.page, watched.problems
    requested = []
    page.on("request", lambda r: requested.append(urlsplit(r.url).path))
    page.goto(page_url(site, "book/ch3_crb/01_inertia_matrix"))
    assert not [u for u in requested if u.endswith(("searchindex.js", "searchtools.js"))], \
        "a book page loads the search index"
    page.keyboard.press("Control+k")
    box = page.locator("input[name=q]:visible").first
    box.fill("逆動力学")
    # the typed characters fetch a slice of the Japanese font: let it arrive before the
    # page is left (leaving would abort it, a failed request)
    page.evaluate("new Promise(r => requestAnimationFrame(r)).then(() => document.fonts.ready)"
                  ".then(() => true)")
    box.press("Enter")
    page.wait_for_url("**/search.html?q=*")
    page.wait_for_function("() => /found|match/.test((document.querySelector("
                           "'#search-results p.search-summary') || {}).textContent || '')")
    found = page.locator("#search-results ul.search li a").evaluate_all(
        "as => as.map(a => a.href.split('#')[0].split('?')[0])")
    assert {page_url(site, "book/appendix/glossary"),
            page_url(site, "book/ch1_spatial/03_rnea")} <= set(found), found
    assert any(u.endswith("/searchindex.js") for u in requested)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------
# Page weight. What a reader downloads when a page is opened with an empty cache and read
# to its end (the images below the first screen load lazily), each
# file counted gzip-compressed (level 6, as a static host such as GitHub Pages sends it),
# and what the next page of the book adds once the first one's files are cached. Budgets
# (the book guide): a page of text at most 1.5 MB, a page with an explorer or an animation
# at most 3 MB. The figures go to _build/page-weights.json.
# --------------------------------------------------------------------------------------

# {interactive: budget in bytes}; the file _ext/page_weights.py makes DEVELOPING.md's table from
BUDGETS = {interactive: mb * 1e6 for interactive, _, mb in page_weights.KINDS}
WEIGHTS = page_weights.WEIGHTS


def load_and_weigh(context, url):
    """Open ``url`` in ``context``; the bytes it fetched over the network (a file the
    browser took from its cache does not count), raw and gzip-compressed, and the number
    of files."""
    import gzip

    got, network = {}, set()

    def weigh(response):
        try:
            body = response.body()
        except Exception:          # a redirect or an aborted request has no body
            return
        got[response.url] = (len(body), len(gzip.compress(body, 6)))

    page = context.new_page()
    cdp = context.new_cdp_session(page)          # Chromium says which came from its cache
    cdp.send("Network.enable")
    cdp.on("Network.responseReceived", lambda e: e["response"].get("fromDiskCache") or
           e["response"].get("fromMemoryCache") or network.add(e["response"]["url"]))
    page.on("response", weigh)
    page.goto(url, wait_until="load")
    # and what MathJax fetches while it typesets (its fonts); not "network idle", which a
    # page typesetting hundreds of formulas on a loaded machine did not reach in 2 minutes
    wait_until_typeset(page)
    page.evaluate(IMAGES_SETTLED)        # the images below the first screen, loaded lazily
    page.wait_for_timeout(500)
    page.close()
    fetched = [g for u, g in got.items() if u in network]
    return sum(g for _, g in fetched), sum(r for r, _ in fetched), len(fetched)


@pytest.mark.parametrize("entry", PAGES)
def test_page_weight_within_budget(site, browser, entry):
    """Within its budget, and within the ranges DEVELOPING.md gives for its kind of page
    (tests/test_page_weights.py; _ext/page_weights.py --write makes them again)."""
    import json

    interactive = entry in WIDGET_PAGES or expected_animations(entry) > 0 or \
        rbdlearn_html.RBD3D_DIV in (book_html() / f"{entry}.html").read_text(encoding="utf-8")
    cold = browser.new_context(viewport={"width": 1280, "height": 800})
    cold.set_default_timeout(TIMEOUT_MS)
    try:
        gz, raw, n = load_and_weigh(cold, page_url(site, entry))
        # then the next page (the root page, or the first after it), from the same cache
        after = PAGES[1] if entry == PAGES[0] else PAGES[0]
        next_gz, _, next_n = load_and_weigh(cold, page_url(site, after))
    finally:
        cold.close()
    WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    with open(WEIGHTS, "a", encoding="utf-8") as fh:       # one line per page and run
        fh.write(json.dumps({"page": entry, "interactive": interactive, "gzip": gz,
                             "raw": raw, "files": n, "next_page": after,
                             "next_page_gzip": next_gz, "next_page_files": next_n}) + "\n")
    budget = BUDGETS[interactive]
    assert gz <= budget, (f"{entry}: {gz / 1e6:.2f} MB gzip-compressed on a first visit "
                          f"({raw / 1e6:.2f} MB raw, {n} files), over its budget of "
                          f"{budget / 1e6:.1f} MB")
    (lo, hi), (next_lo, next_hi) = documented_ranges()[interactive]
    slack = page_weights.TOLERANCE_MB * 1e6
    assert lo - slack <= gz <= hi + slack and next_lo - slack <= next_gz <= next_hi + slack, (
        f"{entry}: {gz / 1e6:.2f} MB on a first visit, {next_gz / 1e6:.2f} MB for the next "
        f"page; DEVELOPING.md says {lo / 1e6:.2f}–{hi / 1e6:.2f} and "
        f"{next_lo / 1e6:.2f}–{next_hi / 1e6:.2f} for such a page: run "
        f"`python _ext/page_weights.py --write` after the weight tests")
