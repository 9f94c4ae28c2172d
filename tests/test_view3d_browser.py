"""The 3-D viewer (viewer/rbd3d.js, bundled as rbdlearn/viz/rbd3d.js) in headless Chromium,
WebGL drawn in software (SwiftShader).

Every page of the built book that shows a 3-D scene (a div.rbd3d, found in the HTML, so a
new chapter's scenes are tested without editing this file), a page made here in the book's
static form (the bundle and a mesh pack served as fix 8 of _ext/rbdlearn_html.py serves
them), and a bare HTML file holding a scene in the live form of a notebook output (the
bundle and the packs inline): each view draws (its pixels are not uniform, and change when
the scrubber moves); the scrubber, play and the parameter slider change the displayed frame,
run and poses; the displayed poses (read back from three.js's world matrices) equal the
scene JSON's poses and rbdlearn.forward_kinematics of the models the JSON names at the
JSON's q; the keyboard on the canvas plays and resets the camera; the view fits its column
at 1280 and 390 px; no request leaves the page's host; no console error. Screenshots of
each view at both widths go to _build/screenshots/view3d/.
Without Chromium's headless shell these tests are skipped (as tests/test_browser.py's).
"""

import json
import os
import shutil
import sys
import types

import numpy as np
import pytest

import view3d_scenes as v3
from book_build import BUILD_DIR
from test_browser import BROWSER_MARKS, SCREENSHOTS, TIMEOUT_MS, Watched, \
    browser  # noqa: F401  (the fixture: Chromium as the other browser tests launch it)
from test_notebooks_clean import ROOT, toc_entries

sys.path.insert(0, str(ROOT / "_ext"))
import pdf as book_pdf  # noqa: E402  (its Site serves a folder on 127.0.0.1)
import rbdlearn_html  # noqa: E402  (fix 8: the viewer's module and packs)

WIDTHS = (1280, 390)
SHOTS = SCREENSHOTS / "view3d"
# The pages with 3-D scenes (issue 29: at least one in every chapter): a page that loses
# its scene, or gains one, fails test_the_3d_pages_are_the_expected_ones.
EXPECTED_PAGES = ("book/ch1_spatial/03_rnea", "book/ch2_aba/03_algorithm",
                  "book/ch2_aba/06_contact", "book/ch3_crb/01_inertia_matrix",
                  "book/ch4_constrained/04_beyond_the_paper",
                  "book/ch5_closed/04_spherical_joints", "book/ch5_closed/05_swing")


def browser_test(f):
    """BROWSER_MARKS (pytest.mark.book and .browser) on a test."""
    for mark in BROWSER_MARKS:
        f = mark(f)
    return f


def built_html():
    """The built book's HTML folder, without building it (the browser phase of make test
    sets RBDLEARN_BOOK_HTML; else the session build's folder, if there is one)."""
    if os.environ.get("RBDLEARN_BOOK_HTML"):
        return (ROOT / os.environ["RBDLEARN_BOOK_HTML"]).resolve()
    return BUILD_DIR / "_build" / "html"


def view3d_pages():
    """The pages of _toc.yml whose built HTML has a 3-D scene."""
    html = built_html()
    return [e for e in toc_entries() if (html / f"{e}.html").is_file() and
            rbdlearn_html.RBD3D_DIV in (html / f"{e}.html").read_text(encoding="utf-8")]


VIEW3D_PAGES = view3d_pages()


@pytest.fixture
def watched3d(browser):
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    w = Watched(context)
    yield w
    w.close()
    context.close()


def static_site(folder, html):
    """A page in the book's static form in ``folder``: the scenes' divs ``html`` (no packs
    inline), the viewer's module tag, the bundle and the mesh packs where fix 8 puts
    them (the packs written by fix 8's own function)."""
    static = folder / "_static" / rbdlearn_html.RBD3D_DIR
    static.mkdir(parents=True)
    shutil.copyfile(rbdlearn_html.RBD3D_BUNDLE, static / "rbd3d.js")
    (folder / "page.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'><meta name='viewport' "
        "content='width=device-width, initial-scale=1'><script type='module' "
        f"src='_static/{rbdlearn_html.RBD3D_DIR}/rbd3d.js'></script></head><body>"
        "<article style='max-width: 760px; margin: auto; padding: 0 8px'>"
        f"<h1>3-D</h1>{html}</article></body></html>", encoding="utf-8")
    rbdlearn_html.write_packs(folder)
    return folder / "page.html"


def live_file(folder, html):
    """A bare HTML file holding notebook outputs ``html``, in a column as wide as the
    book's."""
    path = folder / "live.html"
    path.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body>"
                    f"<article style='max-width: 760px; margin: auto'>{html}</article>"
                    "</body></html>", encoding="utf-8")
    return path


def live_page(folder, scene):
    """A bare HTML file with a hand-made scene as a live output shows it: the div, and an
    inline module carrying the bundle (the packs in scene["inline_packs"])."""
    bundle = rbdlearn_html.RBD3D_BUNDLE.read_text(encoding="utf-8")
    return live_file(folder, f"{v3.scene_html(scene)}<script type='module'>{bundle}</script>")


def scenes_of(page):
    return [json.loads(t) for t in page.eval_on_selector_all(
        'div.rbd3d script[type="application/json"]', "ss => ss.map(s => s.textContent)")]


def wait_drawn(page, view, after=0):
    page.wait_for_function("([v, n]) => v.rbd3d && v.rbd3d.rendered > n",
                           arg=[view.element_handle(), after], timeout=TIMEOUT_MS)


def pose_problems(view, scene, where):
    """The displayed poses against the JSON's and forward kinematics', at the view's
    current run and frame."""
    hook = view.evaluate("v => ({run: v.rbd3d.run, frame: v.rbd3d.frame, "
                         "poses: v.rbd3d.poses()})")
    run, frame, shown = hook["run"], hook["frame"], hook["poses"]
    problems = []
    stored = v3.json_poses(scene, run, frame)
    if len(shown) != len(stored):
        return [f"{where}: {len(shown)} bodies shown, {len(stored)} in the JSON"]
    for b, (s, j) in enumerate(zip(shown, stored)):
        if not v3.same_pose(s, j):
            problems.append(f"{where}: run {run} frame {frame} body {b} "
                            f"({scene['bodies'][b]['name']}) shown at {np.round(s, 5)}, "
                            f"the JSON has {np.round(j, 5)}")
    for b, pose in v3.kinematics_poses(scene, run, frame).items():
        if not v3.same_pose(shown[b], pose):
            problems.append(f"{where}: run {run} frame {frame} body {b} shown at "
                            f"{np.round(shown[b], 5)}, forward kinematics gives "
                            f"{np.round(pose, 5)}")
    return problems


def fit_problems(page, view, where):
    out = page.evaluate("""v => {
        const out = [], d = document.documentElement;
        if (d.scrollWidth > d.clientWidth + 1)
            out.push(`the page scrolls sideways (${d.scrollWidth} px in ${d.clientWidth})`);
        const col = (v.closest('article') || document.body).getBoundingClientRect();
        const right = Math.min(col.right, d.clientWidth);
        for (const el of v.querySelectorAll('canvas, .rbd3d-controls > *, svg')) {
            const r = el.getBoundingClientRect();
            if (r.width && (r.right > right + 1 || r.left < col.left - 1))
                out.push(`<${el.tagName.toLowerCase()} class="${el.getAttribute('class')}">`
                         + ` spans ${Math.round(r.left)}..${Math.round(r.right)}, the column `
                         + `${Math.round(col.left)}..${Math.round(right)}`);
        }
        return out;
    }""", view.element_handle())
    return [f"{where}: {o}" for o in out]


def check_views(page, name):
    """Every 3-D view of the loaded page, its controls worked as a reader works them;
    returns the problems found."""
    page.wait_for_function(v3.ALL_DRAWN, timeout=TIMEOUT_MS)
    scenes = scenes_of(page)
    views = page.locator("div.rbd3d")
    problems = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    for k, scene in enumerate(scenes):
        view, where = views.nth(k), f"{name} view {k + 1}"
        if view.locator(".rbd3d-error").count():
            problems.append(f"{where}: {view.locator('.rbd3d-error').inner_text()}")
            continue
        view.scroll_into_view_if_needed()
        F = len(scene["scrub"]["values"])
        first = view.evaluate(v3.CANVAS_PIXELS)
        if first["colours"] < 20:
            problems.append(f"{where}: the canvas is nearly uniform ({first['colours']} "
                            "colours)")
        problems += pose_problems(view, scene, f"{where} (as loaded)")
        view.screenshot(path=SHOTS / f"{name}-{k + 1}-{WIDTHS[0]}.png")

        # the scrubber, moved by the keyboard to its end
        drawn = view.evaluate("v => v.rbd3d.rendered")
        view.locator("input.rbd3d-scrub").press("End")
        wait_drawn(page, view, drawn)
        if view.evaluate("v => v.rbd3d.frame") != F - 1:
            problems.append(f"{where}: the scrubber's End key did not show the last frame")
        if F > 1 and view.evaluate(v3.CANVAS_PIXELS)["hash"] == first["hash"]:
            problems.append(f"{where}: the canvas did not change with the scrubber")
        problems += pose_problems(view, scene, f"{where} (scrubbed to the end)")

        # the parameter slider: another precomputed run
        R = len(scene["runs"])
        if "param" in scene:
            slider = view.locator("input.rbd3d-param")
            before = view.evaluate("v => v.rbd3d.poses()")
            slider.press("Home" if view.evaluate("v => v.rbd3d.run") else "End")
            run = view.evaluate("v => v.rbd3d.run")
            if run not in (0, R - 1) or R > 1 and run == scene["param"].get("index", 0):
                problems.append(f"{where}: the parameter slider did not change the run")
            if R > 1 and np.allclose(before, view.evaluate("v => v.rbd3d.poses()")):
                problems.append(f"{where}: the parameter slider moved no body")
            problems += pose_problems(view, scene, f"{where} (parameter moved)")

        # play at a quarter of the speed from the first frame until the frame moves, then
        # pause: the frame stays. The clicks are the button's own, from one script: a
        # heavy scene drawn in software (Talos: a few frames a second) on a loaded machine
        # could otherwise play to its end between two steps of the test.
        view.locator("select.rbd3d-speed").select_option("0.25")
        view.locator("input.rbd3d-scrub").press("Home")
        played = view.evaluate("""v => new Promise(done => {
            const button = v.querySelector("button.rbd3d-play"), f0 = v.rbd3d.frame;
            button.click();
            const playing = v.rbd3d.playing;
            const wait = () => {
                if (v.rbd3d.frame === f0 && v.rbd3d.playing)
                    return requestAnimationFrame(wait);
                const moved = v.rbd3d.frame !== f0;
                button.click();
                done({playing, moved, paused: !v.rbd3d.playing, at: v.rbd3d.frame});
            };
            requestAnimationFrame(wait);
        })""")
        page.wait_for_timeout(300)
        if not (played["playing"] and (played["moved"] or F == 1) and played["paused"]) or \
                view.evaluate("v => v.rbd3d.frame") != played["at"]:
            problems.append(f"{where}: the play button did not play and pause ({played})")
        problems += pose_problems(view, scene, f"{where} (played)")

        # the keyboard on the canvas: space plays and pauses, an arrow orbits, Home resets
        canvas = view.locator("canvas.rbd3d-canvas")
        home = view.evaluate("v => v.rbd3d.camera()")
        view.locator("input.rbd3d-scrub").press("Home")     # (a whole run to play)
        canvas.focus()
        canvas.press(" ")
        if not view.evaluate("v => v.rbd3d.playing"):
            problems.append(f"{where}: space on the canvas did not play (at frame "
                            f"{view.evaluate('v => v.rbd3d.frame')} of {F})")
        canvas.press(" ")
        if view.evaluate("v => v.rbd3d.playing"):
            problems.append(f"{where}: space on the canvas did not pause")
        canvas.press("ArrowLeft")
        canvas.press("+")
        moved = view.evaluate("v => v.rbd3d.camera()")
        canvas.press("Home")
        if np.allclose(moved, home) or not np.allclose(
                view.evaluate("v => v.rbd3d.camera()"), home, atol=1e-9):
            problems.append(f"{where}: the arrow and + keys did not move the camera, or "
                            "Home did not bring it back")
        canvas.press("ArrowUp")
        view.locator("button.rbd3d-reset").click()
        if not np.allclose(view.evaluate("v => v.rbd3d.camera()"), home, atol=1e-9):
            problems.append(f"{where}: the reset button did not bring the camera back")

        problems += fit_problems(page, view, f"{where} at {WIDTHS[0]} px")
    # the phone's width: every view fits (and is drawn at that width)
    page.set_viewport_size({"width": WIDTHS[1], "height": 800})
    for k in range(len(scenes)):
        view = views.nth(k)
        drawn = view.evaluate("v => v.rbd3d ? v.rbd3d.rendered : 0")
        view.evaluate("v => v.rbd3d && v.rbd3d.setFrame(0)")
        if view.evaluate("v => !!v.rbd3d"):
            wait_drawn(page, view, drawn)
            view.scroll_into_view_if_needed()
            view.screenshot(path=SHOTS / f"{name}-{k + 1}-{WIDTHS[1]}.png")
        problems += fit_problems(page, view, f"{name} view {k + 1} at {WIDTHS[1]} px")
    page.set_viewport_size({"width": WIDTHS[0], "height": 800})
    return problems


# On paper (print media): each view shows its still image and the book's note, not its
# canvas or controls
PRINTED = """() => [...document.querySelectorAll('div.rbd3d')].map((v, k) => {
    const shown = sel => [...v.querySelectorAll(sel)].some(e => e.offsetParent !== null);
    const out = [];
    if (!shown('img.rbd3d-still')) out.push('no still image');
    if (shown('canvas, .rbd3d-controls')) out.push('the canvas or the controls');
    if (!getComputedStyle(v, '::after').content.includes('Interactive in the online book'))
        out.push('no note that it moves online');
    return out.length ? `view ${k + 1} printed with ${out.join(', ')}` : '';
}).filter(x => x)"""


@browser_test
@pytest.mark.parametrize("entry", VIEW3D_PAGES)
def test_book_page_3d_views(watched3d, entry):
    """Each 3-D view of a page of the book, worked (check_views), then printed."""
    with book_pdf.Site(built_html()) as site:
        watched3d.page.goto(f"{site.base}{entry}.html", wait_until="load")
        problems = check_views(watched3d.page, entry.removeprefix("book/").replace("/", "-"))
        watched3d.page.emulate_media(media="print")
        problems += watched3d.page.evaluate(PRINTED)
    assert not problems + watched3d.problems, "\n".join(problems + watched3d.problems)


@browser_test
def test_the_3d_pages_are_the_expected_ones():
    assert VIEW3D_PAGES == [e for e in toc_entries() if e in EXPECTED_PAGES], VIEW3D_PAGES
    assert {e.split("/")[1][:3] for e in EXPECTED_PAGES} == {f"ch{k}" for k in range(1, 6)}


@browser_test
def test_static_page(tmp_path, watched3d, monkeypatch):
    """The book's form of a real scene (scene3d in the build's static mode): the module
    tag, the UR5's pack written by fix 8 and fetched from _static/offline/rbd3d/meshes/."""
    monkeypatch.setenv("RBDLEARN_STATIC_WIDGETS", "1")
    html = v3.ur5_scene()._repr_html_()
    assert "<script type=\"module\"" not in html and "inline_packs" not in html
    page = static_site(tmp_path, html)
    assert (tmp_path / "_static/offline/rbd3d/meshes/ur5_robot-collision.rbdm").is_file()
    with book_pdf.Site(page.parent) as site:
        watched3d.page.goto(f"{site.base}page.html", wait_until="load")
        problems = check_views(watched3d.page, "static-ur5")
    assert not problems + watched3d.problems, "\n".join(problems + watched3d.problems)


@browser_test
def test_hand_made_scene(tmp_path, watched3d):
    """A scene written here by hand from the format (primitives, a mesh pack of its own,
    a scaled arrow), with the bundle inline."""
    page = live_page(tmp_path, v3.sample_scene(inline=True))
    watched3d.page.goto(page.as_uri(), wait_until="load")
    problems = check_views(watched3d.page, "hand-made")
    assert not problems + watched3d.problems, "\n".join(problems + watched3d.problems)


@browser_test
def test_pose_check_finds_a_wrong_pose(tmp_path, watched3d):
    """Guards the pose comparison against passing vacuously: a JSON whose stored poses of
    one body are moved by 1 mm is shown as stored, and differs from forward kinematics."""
    scene = v3.sample_scene(inline=True)
    F, B = len(scene["scrub"]["values"]), len(scene["bodies"])
    poses = v3.unb64(scene["runs"][0]["poses"], "f4", (F, B, 7)).copy()
    poses[:, 1, 0] += 1e-3
    scene["runs"][0]["poses"] = v3.b64(poses, "f4")
    watched3d.page.goto(live_page(tmp_path, scene).as_uri(), wait_until="load")
    watched3d.page.wait_for_function(v3.ALL_DRAWN, timeout=TIMEOUT_MS)
    problems = pose_problems(watched3d.page.locator("div.rbd3d"), scene, "moved")
    assert len(problems) == 1 and "body 1 " in problems[0] and "forward kinematics" in \
        problems[0], problems


@browser_test
def test_a_bad_scene_shows_its_error(tmp_path, watched3d):
    scene = v3.sample_scene(inline=True)
    scene["bodies"][0]["shapes"][0]["type"] = "torus"
    watched3d.page.goto(live_page(tmp_path, scene).as_uri(), wait_until="load")
    watched3d.page.wait_for_selector("div.rbd3d .rbd3d-error")
    text = watched3d.page.inner_text("div.rbd3d .rbd3d-error")
    assert 'unknown shape type "torus"' in text and "bodies[0] (torso)" in text, text
    assert any("console error" in p and "torus" in p for p in watched3d.problems), \
        watched3d.problems


@browser_test
def test_without_webgl_the_still_image_shows(tmp_path, watched3d):
    scene = v3.sample_scene(inline=True)
    path = live_page(tmp_path, scene)
    still = ('<img class="rbd3d-still" alt="still" src="data:image/gif;base64,R0lGODlhAQAB'
             'AIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" width="40" height="30">')
    path.write_text(path.read_text().replace('<div class="rbd3d">',
                                             f'<div class="rbd3d">{still}'))
    page = watched3d.page
    page.add_init_script("HTMLCanvasElement.prototype.getContext = () => null;")
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_selector("div.rbd3d .rbd3d-nowebgl")
    assert page.is_visible("div.rbd3d img.rbd3d-still")
    assert page.locator("div.rbd3d canvas").count() == 0
    assert "no WebGL" in page.inner_text("div.rbd3d .rbd3d-nowebgl")
    assert not watched3d.problems, watched3d.problems


def test_fix8_finds_the_scenes_and_writes_each_pack_once(tmp_path, monkeypatch):
    """_ext/rbdlearn_html.py's fix 8: the packs named by the scenes of the output's pages,
    each written by scene3d.write_pack from its recipe, and kept while the recipe stays."""
    calls = []
    fake = types.ModuleType("rbdlearn.viz.scene3d")
    fake.write_pack = lambda name, recipe, path: (calls.append((name, recipe, path)),
                                                  path.write_bytes(b"pack"))
    monkeypatch.setitem(sys.modules, "rbdlearn.viz.scene3d", fake)
    import rbdlearn.viz
    monkeypatch.setattr(rbdlearn.viz, "scene3d", fake, raising=False)
    scene = v3.sample_scene(inline=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "p.html").write_text("<p>x</p>" + v3.scene_html(scene))
    (tmp_path / "q.html").write_text('<script type="application/json">{"a": 1}</script>')
    assert rbdlearn_html.write_packs(tmp_path) == scene["packs"]
    pack = tmp_path / "_static/offline/rbd3d/meshes" / f"{v3.ROOT_URL_PACK}.rbdm"
    assert calls == [(v3.ROOT_URL_PACK, {"test": True}, pack)]
    rbdlearn_html.write_packs(tmp_path)
    assert len(calls) == 1                                    # kept: same recipe
    scene["packs"][v3.ROOT_URL_PACK] = {"test": 2}
    (tmp_path / "a" / "p.html").write_text(v3.scene_html(scene))
    rbdlearn_html.write_packs(tmp_path)
    assert calls[-1][1] == {"test": 2} and len(calls) == 2    # made again: new recipe
