"""The whole book as one PDF: ``python _ext/pdf.py [HTML_DIR]`` writes HTML_DIR/rbdlearn.pdf
(default _build/html, so the published site serves it beside index.html).

Each page of _toc.yml, in its order, is opened from the built HTML (served on 127.0.0.1)
in Chromium's headless shell (Debian's chromium-headless-shell, driven by Playwright, as in
the browser tests), printed with the theme's print style and the book's own
(_ext/css/rbdlearn.css: no navigation or launch buttons; an explorer or an animation as its
first view, with a note that it moves online) once MathJax has typeset it, its fonts
(the Japanese slices too) and images have loaded and its widgets are drawn. pypdf joins
the pages behind a title page and a table of contents with page numbers, numbers every
page after the title, gives the PDF an outline (part, chapter, section, and each
section's headings) and turns the links between pages into links inside the PDF.

Paper: A4. The page is printed at the column width the HTML book has on a narrow screen,
so code, tables and formulas are laid out (and broken, by MathJax) for that width.
After the build, the intro page's link to the PDF gets the file's size.
"""

import argparse
import datetime
import functools
import html
import io
import re
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, NameObject

from nbexec import ROOT, toc_tree   # the one reader of _toc.yml (and of the root)

CHROMIUM = Path("/usr/bin/chromium-headless-shell")
PDF_NAME = "rbdlearn.pdf"
PAPER = {"format": "A4", "margin": {"top": "15mm", "bottom": "17mm",
                                    "left": "15mm", "right": "15mm"}}
# A4's width less the side margins, in CSS px (96 per inch): the window the pages are laid
# out in before printing, so that MathJax breaks long formulas for the printed column.
PRINT_WIDTH_PX = round((210 - 2 * 15) / 25.4 * 96)
TIMEOUT_MS = 180_000       # a wait, not a measurement: generous for a loaded machine
# The intro page's link to the PDF: its size is filled in after the PDF is written.
SIZE_SPAN = re.compile(r'(<span class="rbd-pdf-size">)[^<]*(</span>)')

# Every other host is unresolvable: the book loads nothing from elsewhere.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]

# Ready to print: MathJax (if the page has math) has typeset it, every stored widget is
# drawn by the HTML manager.
READY = """() => (!document.querySelector('.math') ||
        (window.MathJax && MathJax.startup && MathJax.startup.promise))
    && Array.from(document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]')).every(s => {
        const area = s.previousElementSibling;
        return area && area.querySelector('.jupyter-widgets') !== null; })"""

# Then: MathJax's promise, every image loaded (lazy ones too), every animation stopped at
# its first frame, the fonts (the Japanese slices the text uses) loaded.
SETTLE = """async () => {
    if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
    document.querySelectorAll('img[loading="lazy"]').forEach(img => img.loading = 'eager');
    await Promise.all(Array.from(document.images).map(img => img.complete ? null :
        new Promise(done => { img.addEventListener('load', done);
                              img.addEventListener('error', done); })));
    document.querySelectorAll('.animation button[title="Pause"], '
        + '.animation button[title="First frame"]').forEach(b => b.click());
    await document.fonts.ready;
    return document.querySelector('article h1, main h1').innerText.replace(/#$/, '').trim();
}"""

NUMBERS_FOOTER = ('<div style="width:100%; text-align:center; font-size:9px; '
                  'font-family:sans-serif; color:#444"><span class="pageNumber"></span></div>')


def page_order(tree):
    return [doc for _, chapters in tree for ch, sections in chapters
            for doc in [ch, *sections]]


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Site:
    """The built HTML served on 127.0.0.1 while the pages are printed."""

    def __init__(self, html_dir):
        self.server = ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(html_dir)))
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def print_page(page, url):
    """Open ``url``, wait until it is ready, print it: (its title, the PDF bytes)."""
    page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
    page.wait_for_function(READY, timeout=TIMEOUT_MS)
    title = page.evaluate(SETTLE)
    return title, page.pdf(**PAPER, print_background=True, outline=True)


def front_matter(config, tree, titles, first_page, base):
    """The title page and the table of contents, as HTML; ``first_page`` maps a document
    to the number of its first page."""
    def entry(doc, level):
        return (f'<li class="l{level}"><a href="{base}{doc}.html">'
                f'<span>{html.escape(titles[doc])}</span></a>'
                f'<span class="n">{first_page[doc]}</span></li>')
    rows = []
    for caption, chapters in tree:
        if caption:
            rows.append(f'<li class="part">{html.escape(caption)}</li>')
        for chapter, sections in chapters:
            rows.append(entry(chapter, 1))
            rows += [entry(s, 2) for s in sections]
    title, _, subtitle = config["title"].partition(" — ")
    built = datetime.date.today().isoformat()
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<link rel="stylesheet" href="{base}_static/offline/fonts/noto-sans-jp.css"><style>
body {{ font-family: "DejaVu Serif", "rbdlearn Noto Sans JP", serif; color: #111; margin: 0; }}
.title {{ height: 250mm; display: flex; flex-direction: column; justify-content: center;
          text-align: center; break-after: page; }}
.title h1 {{ font-size: 40pt; margin: 0 0 8mm; }}
.title .sub {{ font-size: 18pt; }}
.title .by {{ margin-top: 30mm; font-size: 12pt; }}
.title .note {{ margin-top: 8mm; font-size: 9pt; color: #444; }}
h2 {{ font-size: 20pt; }}
ul {{ list-style: none; padding: 0; font-size: 11pt; }}
li {{ display: flex; gap: 1em; margin: 0.15em 0; }}
li a {{ flex: 1; color: inherit; text-decoration: none; display: flex; }}
li a span {{ background: #fff; padding-right: 0.3em; }}
li a::after {{ content: ""; flex: 1; border-bottom: 1px dotted #888; margin-bottom: 0.3em; }}
li.part {{ font-weight: bold; margin-top: 0.8em; }}
li.l2 {{ padding-left: 1.5em; }}
</style></head><body>
<div class="title"><h1>{html.escape(title)}</h1>
<div class="sub">{html.escape(subtitle)}</div>
<div class="by">{html.escape(config.get("author", ""))}</div>
<div class="note">Printed from the HTML book on {built}. Its explorers and animations
appear as their first view; they move in the online book.</div></div>
<h2>Contents</h2><ul>{"".join(rows)}</ul></body></html>"""


def number_pages(page, count):
    """A PDF of ``count`` empty A4 pages, each with its number at the foot."""
    page.set_content('<div style="break-after: page">&nbsp;</div>' * (count - 1)
                     + "<div>&nbsp;</div>")
    reader = PdfReader(io.BytesIO(page.pdf(
        **PAPER, display_header_footer=True, header_template="<span></span>",
        footer_template=NUMBERS_FOOTER)))
    if len(reader.pages) != count:
        raise RuntimeError(f"the page numbers came out on {len(reader.pages)} pages, not {count}")
    return reader


def _headings(reader):
    """A printed page's headings below its title, from Chromium's outline of it:
    [(title, page index)]."""
    top = [item for item in reader.outline if not isinstance(item, list)]
    nested = reader.outline[1] if len(reader.outline) > 1 and len(top) == 1 else []
    return [(item.title, reader.get_destination_page_number(item))
            for item in nested if not isinstance(item, list)]


def link_inside(writer, base, first_index):
    """Links to the book's pages go to that page in the PDF; links to the site's other
    files (sources, index, search) are dropped; links elsewhere stay."""
    for page in writer.pages:
        annots = page.get("/Annots")
        if annots is None:
            continue
        kept = ArrayObject()
        for ref in annots.get_object():
            annot = ref.get_object()
            uri = annot.get("/A", {}).get("/URI")
            if uri is None or not str(uri).startswith(base):
                kept.append(ref)
                continue
            doc = urlsplit(str(uri)).path.removeprefix(urlsplit(base).path)
            doc = doc.removesuffix(".html")
            if doc in first_index:
                target = writer.pages[first_index[doc]].indirect_reference
                del annot["/A"]
                annot[NameObject("/Dest")] = ArrayObject([target, NameObject("/Fit")])
                kept.append(ref)
        page[NameObject("/Annots")] = kept


def build_pdf(html_dir, out=None, log=print):
    from playwright.sync_api import sync_playwright

    html_dir = Path(html_dir)
    out = Path(out) if out else html_dir / PDF_NAME
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    tree = toc_tree()
    docs = page_order(tree)
    t0 = time.monotonic()
    with sync_playwright() as p, Site(html_dir) as site:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                    headless=True)
        context = browser.new_context(viewport={"width": PRINT_WIDTH_PX, "height": 1000},
                                      color_scheme="light")
        page = context.new_page()
        titles, parts = {}, {}
        for doc in docs:
            t = time.monotonic()
            titles[doc], data = print_page(page, f"{site.base}{doc}.html")
            parts[doc] = PdfReader(io.BytesIO(data))
            log(f"  {doc}: {len(parts[doc].pages)} pages, {time.monotonic() - t:.1f} s")
        # The front matter's length decides the page numbers it lists: print it until the
        # numbers it was printed with hold.
        front_pages = 2
        while True:
            first_page, n = {}, front_pages + 1
            for doc in docs:
                first_page[doc], n = n, n + len(parts[doc].pages)
            page.set_content(front_matter(config, tree, titles, first_page, site.base))
            page.evaluate("document.fonts.ready.then(() => true)")
            front = PdfReader(io.BytesIO(page.pdf(**PAPER, print_background=True)))
            if len(front.pages) == front_pages:
                break
            front_pages = len(front.pages)
        total = n - 1
        numbers = number_pages(page, total)
        browser.close()

        writer = PdfWriter()
        writer.append(front, import_outline=False)
        for doc in docs:
            writer.append(parts[doc], import_outline=False)
        for k in range(1, total):                       # no number on the title page
            writer.pages[k].merge_page(numbers.pages[k])
            writer.pages[k].compress_content_streams()   # merging left them uncompressed
        first_index = {doc: first_page[doc] - 1 for doc in docs}
        link_inside(writer, site.base, first_index)

    outline = writer.add_outline_item
    outline(title="Contents", page_number=1)
    for caption, chapters in tree:
        part = (outline(title=caption, page_number=first_index[chapters[0][0]])
                if caption else None)
        for chapter, sections in chapters:
            item = outline(title=titles[chapter], page_number=first_index[chapter],
                           parent=part)
            for doc in [chapter, *sections]:
                below = item
                if doc != chapter:
                    below = outline(title=titles[doc], page_number=first_index[doc],
                                    parent=item)
                for heading, k in _headings(parts[doc]):
                    outline(title=heading, page_number=first_index[doc] + k, parent=below)
    writer.add_metadata({"/Title": config["title"], "/Author": config.get("author", "")})
    writer.page_mode = "/UseOutlines"
    writer.compress_identical_objects(remove_duplicates=True, remove_unreferenced=True)
    with open(out, "wb") as f:
        writer.write(f)
    size_mb = out.stat().st_size / 1e6
    print(f"{out}: {total} pages, {size_mb:.1f} MB, {time.monotonic() - t0:.0f} s")
    link_size(html_dir, size_mb)
    return out


def link_size(html_dir, size_mb):
    """Writes the PDF's size into the intro page's link to it."""
    intro = html_dir / f"{toc_tree()[0][1][0][0]}.html"
    text = intro.read_text(encoding="utf-8")
    new, found = SIZE_SPAN.subn(rf"\g<1>{size_mb:.1f} MB\g<2>", text)
    if not found:
        raise SystemExit(f"{intro} has no <span class=\"rbd-pdf-size\"> (book/intro.md's "
                         "link to the PDF)")
    intro.write_text(new, encoding="utf-8")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", default=ROOT / "_build" / "html",
                        help="the built HTML book (default: _build/html)")
    parser.add_argument("--quiet", action="store_true",
                        help="report only the finished PDF, not each page")
    args = parser.parse_args(argv)
    if not (Path(args.html) / "index.html").is_file():
        raise SystemExit(f"no built book in {args.html}: run `make book` first")
    if not CHROMIUM.exists():
        raise SystemExit(f"the PDF is printed by {CHROMIUM} "
                         "(Debian: apt-get install chromium-headless-shell)")
    build_pdf(args.html, log=print if not args.quiet else lambda line: None)


if __name__ == "__main__":
    sys.exit(main())
