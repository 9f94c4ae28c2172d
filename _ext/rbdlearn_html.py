"""Sphinx fix-ups for the book's HTML, loaded through `sphinx: local_extensions` in _config.yml.
Each one removes an error that tests/test_browser.py sees in Chromium.

1. sphinx-thebe registers its inline configuration script (``const THEBE_JS_URL = …``)
   in a way that Sphinx 7.4 lists twice on every page (once as added, once when the HTML
   builder re-reads the registry with ``''`` for the missing file name); the browser
   then fails on the second ``const``. Any script a page would load twice is dropped.
2. ipywidgets 8's HTML manager (``embed.js``, see nb_ipywidgets_js in _config.yml)
   fetches its icon fonts from ``window.__jupyter_widgets_assets_path__`` when set (else
   from the folder it guesses for its own script), and typesets widget labels with
   MathJax 2's ``MathJax.Hub.Queue``, which MathJax 3 and 4 do not have. A small script
   on every page sets that path to embed.js's own folder (where `make` copies the fonts)
   and gives MathJax that one call, as a typeset chained on ``MathJax.startup.promise``.
3. Matplotlib's ``to_jshtml`` animations link Font Awesome 4 from a CDN for the icons of
   their buttons (``<i class="fa fa-play">`` …). The link is removed: the theme's own
   Font Awesome (served from _static/) draws those icons.
4. A table wider than the content column of a phone would scroll sideways. A script on
   every page marks such a table (in a window under 700 px, once MathJax has typeset its
   titles) "rbd-stacked" and puts a copy of its column's title before each value; the
   book's stylesheet (_ext/css/rbdlearn.css) then shows one card per row.
5. Not an error but weight: pydata-sphinx-theme's scripts/fontawesome.js (1.5 MB) turns
   every icon into an inline SVG, while the theme's stylesheet already draws them from
   Font Awesome's web fonts; _ext/static/scripts/fontawesome.js replaces it with a stub.
6. Also weight: pydata-sphinx-theme's layout loads Sphinx's search scripts and the search
   index (searchindex.js, 0.18 MB, 48 kB gzip-compressed) on every page, for its "search
   as you type", which the book does not switch on: the search box sends the reader to
   search.html, which loads them itself. Once the pages are written, those three script
   tags are removed from every page but search.html.
7. The exercises' page script (_ext/static/scripts/exercises.js, see
   rbdlearn/widgets/exercises.py) is added to the pages that have an exercise form.
"""

import posixpath
import re

MPL_FONT_AWESOME_LINK = re.compile(
    r'<link rel="stylesheet"\s+href="https://maxcdn\.bootstrapcdn\.com/font-awesome/[^"]*">\s*')

WIDGETS_WITH_MATHJAX = """\
window.__jupyter_widgets_assets_path__ = new URL(
  (document.documentElement.getAttribute("data-content_root") || "") + "_static/%s/",
  document.baseURI).href;
document.addEventListener("DOMContentLoaded", function () {
  var mj = window.MathJax;            /* MathJax itself by now (its script is deferred) */
  if (!mj || !mj.startup || mj.Hub) return;
  mj.Hub = {Queue: function (cmd) {
    if (cmd && cmd[0] === "Typeset") {
      mj.startup.promise = mj.startup.promise.then(function () {
        return mj.typesetPromise([cmd[2]]);
      });
    }
  }};
});"""

STACKED_TABLES = """\
(function () {
  function stack() {
    var narrow = window.innerWidth < 700;
    document.querySelectorAll("article table").forEach(function (table) {
      var titles = table.querySelectorAll("thead th");
      if (!titles.length) return;
      if (!narrow) { table.classList.remove("rbd-stacked"); return; }
      var box = table.parentElement;
      if (table.classList.contains("rbd-stacked")
          || (table.getBoundingClientRect().width <= box.clientWidth + 1
              && box.scrollWidth <= box.clientWidth + 1)) return;
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, k) {
          if (!titles[k] || cell.querySelector(":scope > .rbd-label")) return;
          // the card's two flex items: the column's title, and the cell's content in one
          // box (several code spans and formulas side by side would each be an item)
          var value = document.createElement("div");
          value.className = "rbd-value";
          while (cell.firstChild) value.appendChild(cell.firstChild);
          var label = document.createElement("span");
          label.className = "rbd-label";
          titles[k].childNodes.forEach(function (n) { label.appendChild(n.cloneNode(true)); });
          cell.appendChild(label);
          cell.appendChild(value);
        });
      });
      table.classList.add("rbd-stacked");
    });
  }
  function whenTypeset() {
    var mj = window.MathJax;
    // after the formulas are typeset and the web fonts (the Japanese slices) have loaded:
    // both change the tables' widths
    Promise.all([mj && mj.startup && mj.startup.promise ? mj.startup.promise : null,
                 document.fonts ? document.fonts.ready : null]).then(stack);
  }
  function watch() {
    // a table can still widen after that (MathJax loads font pieces on demand): check
    // again whenever one changes size
    if (!window.ResizeObserver) return;
    var observer = new ResizeObserver(stack);
    document.querySelectorAll("article table").forEach(function (t) { observer.observe(t); });
  }
  window.addEventListener("load", function () { whenTypeset(); watch(); });
  window.addEventListener("resize", whenTypeset);
})();"""


# fix 6: the tags pydata-sphinx-theme's layout.html writes (src relative to the page)
SEARCH_SCRIPTS = re.compile(r'[ \t]*<script src="(?:\.\./)*(?:_static/searchtools\.js|'
                            r'_static/language_data\.js|searchindex\.js)"></script>\n?')


def drop_search_scripts(app, exception):
    """Fix 6, on every page of the output but the search page."""
    if exception is not None or app.builder.format != "html":
        return
    out = app.builder.outdir
    for page in out.rglob("*.html"):
        if page == out / "search.html":
            continue
        text = page.read_text(encoding="utf-8")
        kept = SEARCH_SCRIPTS.sub("", text)
        if kept != text:
            page.write_text(kept, encoding="utf-8")


def drop_mpl_font_awesome_link(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = MPL_FONT_AWESOME_LINK.sub("", context["body"])


def drop_repeated_scripts(app, pagename, templatename, context, doctree):
    seen, kept = set(), []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", script) or "",
               tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


def add_exercise_script(app, pagename, templatename, context, doctree):
    """Fix 7: exercises.js on a page with an exercise form (``class="rbd-exercise"``)."""
    if 'class="rbd-exercise"' in context.get("body", ""):
        app.add_js_file("scripts/exercises.js", defer="defer")


def add_widget_fixes(app, config):
    """The script of fix 2, for the folder of the embed.js that _config.yml names."""
    folders = [posixpath.dirname(path) for path in config.nb_ipywidgets_js
               if path.endswith("/embed.js") and "://" not in path]
    if folders:
        # priority 400: before the widget manager's scripts (myst-nb adds them at 500)
        app.add_js_file(None, body=WIDGETS_WITH_MATHJAX % folders[0], priority=400)


def add_stacked_tables(app, config):
    """The script of fix 4."""
    app.add_js_file(None, body=STACKED_TABLES)


def setup(app):
    app.connect("config-inited", add_widget_fixes)
    app.connect("config-inited", add_stacked_tables)
    # late (900): after myst-nb and the themes have added their per-page scripts
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    app.connect("html-page-context", drop_mpl_font_awesome_link)
    app.connect("build-finished", drop_search_scripts)
    app.connect("html-page-context", add_exercise_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
