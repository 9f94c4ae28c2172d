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
8. The 3-D viewer on the pages that show a 3-D scene (a ``<div class="rbd3d">`` holding
   its scene JSON, written by rbdlearn.viz.scene3d's Scene in the book's kernel-free mode,
   RBDLEARN_STATIC_WIDGETS=1): such a page loads the viewer's bundle as a module,
   ``<script type="module" src="_static/offline/rbd3d/rbd3d.js">``, which mounts every
   scene of the page when it runs. The bundle (rbdlearn/viz/rbd3d.js, `make viewer`) is
   copied there before the first such page is written (so Sphinx stamps its URL with the
   bundle's checksum), and once the pages are written, every mesh pack that the scenes of
   the output's pages name is written beside it, as
   ``_static/offline/rbd3d/meshes/<pack>.rbdm``, by ``rbdlearn.viz.scene3d.write_pack``
   from the recipe in the scene JSON: one URL per pack for the whole book, which the
   browser caches. A pack whose recipe has not changed since the last build is kept.
"""

import json
import posixpath
import re
import shutil
from pathlib import Path

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


# fix 8
RBD3D_BUNDLE = Path(__file__).resolve().parents[1] / "rbdlearn" / "viz" / "rbd3d.js"
RBD3D_DIR = "offline/rbd3d"           # under _static/
RBD3D_DIV = 'class="rbd3d"'
JSON_SCRIPT = re.compile(r'<script type="application/json"[^>]*>(.*?)</script>', re.S)


def rbd3d_scenes(html):
    """The 3-D scenes (parsed JSON, "rbd3d": 1) held in a page's HTML."""
    scenes = []
    for text in JSON_SCRIPT.findall(html):
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("rbd3d") == 1:
            scenes.append(data)
    return scenes


def add_rbd3d_script(app, pagename, templatename, context, doctree):
    """Fix 8: the viewer's module on a page with a 3-D scene (its bundle copied first)."""
    if RBD3D_DIV not in context.get("body", ""):
        return
    target = Path(app.builder.outdir) / "_static" / RBD3D_DIR / "rbd3d.js"
    if not getattr(app, "rbd3d_copied", False):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RBD3D_BUNDLE, target)
        app.rbd3d_copied = True
    app.add_js_file(f"{RBD3D_DIR}/rbd3d.js", type="module")


def write_rbd3d_packs(app, exception):
    """Fix 8, at the end: every mesh pack the output's 3-D scenes name."""
    if exception is not None or app.builder.format != "html":
        return
    write_packs(Path(app.builder.outdir))


def write_packs(outdir):
    """The packs named by the scenes of every page in ``outdir``, written to
    _static/offline/rbd3d/meshes/ (each kept when its recipe is the one it was made
    from); returns {pack name: recipe}."""
    packs = {}
    for page in sorted(outdir.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if RBD3D_DIV in text:
            for scene in rbd3d_scenes(text):
                packs.update(scene.get("packs") or {})
    folder = outdir / "_static" / RBD3D_DIR / "meshes"
    for name, recipe in sorted(packs.items()):
        path = folder / f"{name}.rbdm"
        made_from = folder / f"{name}.recipe.json"
        recipe_text = json.dumps(recipe, sort_keys=True)
        if path.is_file() and made_from.is_file() and \
                made_from.read_text(encoding="utf-8") == recipe_text:
            continue
        from rbdlearn.viz import scene3d     # (imported only where the book has packs)
        folder.mkdir(parents=True, exist_ok=True)
        scene3d.write_pack(name, recipe, path)
        made_from.write_text(recipe_text, encoding="utf-8")
    return packs


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
    app.connect("html-page-context", add_rbd3d_script)
    app.connect("build-finished", write_rbd3d_packs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
