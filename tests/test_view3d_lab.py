"""A 3-D scene live in JupyterLab, as a reader meets it: a notebook builds a Scene from
rbdlearn and displays it, a second cell changes a parameter, computes again and displays
the new scene. JupyterLab (this venv's, with the book's extensions) runs on a free port of
127.0.0.1 with a token, in a temporary folder holding that notebook; Chromium's headless
shell opens it and runs all cells from the Run menu; both outputs mount the viewer (the
bundle inline, from Scene._repr_html_), their canvases draw, and the second scene's
displayed poses are the kernel's second computation, not the first; no request leaves
127.0.0.1, and the viewer writes no console error.

Marked like the browser tests (pytest.mark.book and .browser, from BROWSER_MARKS), so it
runs in the browser phase of `make test`.
"""

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from urllib.parse import urlsplit

import nbformat
import numpy as np
import pytest

import view3d_scenes as v3
from test_browser import BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, LOCAL_HOSTS
from test_notebooks_clean import ROOT
from test_view3d_browser import SHOTS, pose_problems

pytestmark = BROWSER_MARKS

START_TIMEOUT_S = 40         # waits, not measurements: JupyterLab's start, a cell's run
TIMEOUT_MS = 40_000

CELL_1 = """\
import numpy as np
import rbdlearn
from rbdlearn.viz import scene3d as s3

model, _ = rbdlearn.models.planar_biped()
t = np.linspace(0.0, 0.75, 25)

def swing(amplitude):
    q = np.zeros((len(t), model.nq))
    q[:, 1] = 1.0
    q[:, 3] = amplitude * np.sin(2 * np.pi * t)
    q[:, 5] = -q[:, 3]
    shapes = {i: [s3.shape("capsule", radius=0.05, length=0.35,
                           origin=[0, 0, -0.225, 1, 0, 0, 0], color="#4c72b0")]
              for i in (4, 5, 6, 7)}
    shapes[3] = [s3.shape("box", size=(0.1, 0.2, 0.5), origin=[0, 0, 0.25, 1, 0, 0, 0])]
    scene = s3.Scene(f"biped, swing {amplitude} rad", ("t (s)", t))
    scene.add_model(model, q, shapes, name="biped",
                    source={"factory": "rbdlearn.models.planar_biped", "kwargs": {}})
    return scene

swing(0.3)"""

CELL_2 = """\
swing(0.9)      # a new computation: the scene again with another amplitude"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """JupyterLab serving ``tmp_path`` (holding scene.ipynb); yields (base URL, token)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(CELL_1), nbformat.v4.new_code_cell(CELL_2)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / "scene.ipynb")
    # the user settings of this JupyterLab: start the notebook's kernel without asking
    # which, and fetch no news (a request to another host)
    settings = tmp_path / "lab-settings" / "@jupyterlab"
    for name, value in {"notebook-extension/tracker": {"autoStartDefaultKernel": True},
                        "apputils-extension/notification": {"fetchNews": "false",
                                                            "checkForUpdates": False}}.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        JUPYTER_CONFIG_DIR=str(tmp_path / ".jupyter"), HOME=str(tmp_path),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "lab-workspaces"))
    env.pop("RBDLEARN_STATIC_WIDGETS", None)          # live, as a reader's JupyterLab
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
         f"--port={port}", "--ip=127.0.0.1", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={tmp_path}", "--ServerApp.port_retries=0"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "lab.log", "w"))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n"
                                + (tmp_path / "lab.log").read_text()[-3000:])
                time.sleep(0.3)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_scenes_live_in_jupyterlab(lab):
    from playwright.sync_api import sync_playwright
    base, token = lab
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        page.on("console", lambda m: m.type == "error" and "rbd3d" in m.text
                and problems.append(f"console error: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("request", lambda r: urlsplit(r.url).scheme in ("http", "https") and
                urlsplit(r.url).hostname not in LOCAL_HOSTS and
                problems.append(f"request to another host: {r.url}"))
        page.goto(f"{base}/lab/tree/scene.ipynb?token={token}")
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        # the notebook's kernel started (asked to the server) and idle
        deadline = time.monotonic() + START_TIMEOUT_S
        while not any(k["execution_state"] == "idle" for k in json.load(
                urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=5))):
            if time.monotonic() > deadline:
                pytest.fail("the notebook's kernel did not start")
            time.sleep(0.3)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function("""() => {
                const views = document.querySelectorAll('.jp-OutputArea div.rbd3d');
                return views.length === 2 && [...views].every(v => (v.rbd3d &&
                    v.rbd3d.rendered > 0) || v.querySelector('.rbd3d-error'));
            }""")
        except Exception:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=SHOTS / "jupyterlab-failed.png")
            pytest.fail("the two outputs did not both draw; the outputs hold: " + repr(
                page.evaluate("""() => [...document.querySelectorAll(
                    '.jp-OutputArea-output')].map(o => o.innerText.slice(0, 300))""")))
        views = page.locator(".jp-OutputArea div.rbd3d")
        scenes = [json.loads(views.nth(k).locator('script[type="application/json"]')
                             .text_content()) for k in range(2)]
        shown = []
        for k, scene in enumerate(scenes):
            view = views.nth(k)
            if view.locator(".rbd3d-error").count():
                problems.append(view.locator(".rbd3d-error").inner_text())
                continue
            view.scroll_into_view_if_needed()
            if view.evaluate(v3.CANVAS_PIXELS)["colours"] < 20:
                problems.append(f"output {k + 1}: the canvas is nearly uniform")
            view.locator("input.rbd3d-scrub").press("End")      # a frame where they differ
            page.wait_for_function("v => v.rbd3d.frame > 0", arg=view.element_handle())
            problems += pose_problems(view, scene, f"output {k + 1}")
            shown.append(np.array(view.evaluate("v => v.rbd3d.poses()")))
            SHOTS.mkdir(parents=True, exist_ok=True)
            view.screenshot(path=SHOTS / f"jupyterlab-{k + 1}.png")
        browser.close()
    assert not problems, "\n".join(problems)
    assert len(shown) == 2 and not np.allclose(shown[0], shown[1], atol=1e-3), \
        "the second output shows the first scene's poses"
    assert "swing 0.3" in scenes[0]["title"] and "swing 0.9" in scenes[1]["title"]
