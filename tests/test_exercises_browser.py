"""The exercises in the built pages, in headless Chromium (the fixtures of test_browser.py):

- the page's checker (_ext/static/scripts/exercises.js) and the kernel's
  (rbdlearn/widgets/exercises.py, an Exercise rebuilt from the JSON the page carries) give
  the same verdict and the same line for each exercise of each page, on its right answer,
  every known mistake's value, the right answer moved just inside and just outside its
  tolerance, and nonsense;
- every exercise of a converted chapter has a form on its page, and typing the right
  answer there and pressing Enter says "right";
- a reader types a known mistake, then the right answer, into ch1 §1's first exercise and
  sees the diagnosis, then "right" (screenshots at 1280 and 390 px, and in dark mode, in
  _build/screenshots/exercises/).
"""

import json
import math

import nbformat
import numpy as np
import pytest

from book_build import book_html
from rbdlearn import spatial as S
from rbdlearn.widgets.exercises import Exercise
from test_browser import (BROWSER_MARKS, PAGES, SCREENSHOTS, browser,  # noqa: F401
                          context, page_url, site, wait_until_typeset, watched)
from test_notebooks_clean import ROOT

pytestmark = BROWSER_MARKS   # pytest.mark.book and .browser

# The chapters whose exercises use rbdlearn.widgets.exercises (issue 28): every exercise
# there must have a form: now every chapter, so the whole book's 44.
CONVERTED = ("book/ch1_spatial/", "book/ch2_aba/", "book/ch3_crb/", "book/ch4_constrained/",
             "book/ch5_closed/")
CONVERTED_EXERCISES = 44            # ch1 8, ch2 14, ch3 5, ch4 8, ch5 9
ALL_EXERCISES = 44

FORMS = """() => Array.from(document.querySelectorAll('div.rbd-exercise')).map(
    box => JSON.parse(box.querySelector('script.rbd-ex-data').textContent))"""
EVALUATE = """([data, texts]) => texts.map(t => {
    const v = window.rbdExercises.evaluate(data, t);
    return [v.right, v.line];
})"""


def exercise_count(entry):
    """The exercises of a page: answer cells shown on it (``check_exN(`` after ``= None``)."""
    path = ROOT / f"{entry}.ipynb"
    if not path.is_file():
        return 0
    return sum(c.cell_type == "code" and "check_ex" in c.source and "= None" in c.source
               and "remove-cell" not in c.metadata.get("tags", [])
               for c in nbformat.read(path, as_version=4).cells)


EXERCISE_PAGES = [e for e in PAGES if exercise_count(e)]


def text(value):
    """A value as the page's grammar reads it back exactly (repr: the shortest exact
    decimal)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(text(v) for v in value) + "]"
    return repr(float(value))


def set_text(items):
    return "[" + ", ".join("(" + ", ".join(str(x) for x in i) + ")" if isinstance(i, list)
                           else repr(i) for i in items) + "]"


def rule_answer(data, rule):
    """An answer for which ``rule``'s tests hold (as far as its tests say: a later rule
    may be what an earlier one also takes), as text; None if none is built."""
    if data["kind"] == "set":
        for t in rule["tests"]:
            if t["test"] == "same_set":
                return set_text(t["items"])
            if t["test"] == "has_extra":
                return set_text(t["items"] + [[997, 998]] if data["items"] == "pair"
                                else t["items"] + ["zz"])
            if t["test"] == "has_missing":
                return set_text(t["items"][1:])
        return None
    size = int(np.prod(data["shape"])) if data["shape"] else 1
    a = np.zeros(size)
    for t in rule["tests"]:
        part = t.get("part") or list(range(size))
        if t["test"] == "close":
            a[part] = t["value"]
        elif t["test"] == "norm":
            a[part] = t["value"] / math.sqrt(len(part))
        elif t["test"] == "between":
            a[part] = t["lo"] + 1 if t["lo"] is not None else t["hi"] - 1
        elif t["test"] == "not_symmetric":
            a[1] += 1.0
    if not rule["tests"]:
        return None
    return text(a.reshape(data["shape"]).tolist() if data["shape"] else a[0])


def right_rule(data):
    """The exercise's right answer (its first rule, as the design puts it)."""
    assert data["rules"][0]["right"], data["name"]
    return data["rules"][0]


# moved by these fractions of its tolerance, the right answer's largest entry stays right
# (≤ 1) or not (> 1): so close to the boundary that a change of the comparison on either
# side (rtol |a| for rtol |v|, a doubled tolerance) changes a verdict
TOLERANCE_STEPS = (0.5, 1 - 1e-6, 1 + 1e-6, 2.0)


def perturbed(data):
    """[(text, right?)]: the right answer with its largest entry moved by each step."""
    rule = right_rule(data)
    closes = [t for t in rule["tests"] if t["test"] == "close"]
    if data["kind"] != "float" or not closes:
        return []
    size = int(np.prod(data["shape"])) if data["shape"] else 1
    a = np.zeros(size)
    for t in closes:
        a[t.get("part") or list(range(size))] = t["value"]
    t = closes[0]
    part = t.get("part") or list(range(size))
    k = int(np.argmax(np.abs(t["value"])))
    out = []
    for f in TOLERANCE_STEPS:
        b = a.copy()
        b[part[k]] += f * (t["atol"] + t["rtol"] * abs(t["value"][k]))
        out.append((text(b.reshape(data["shape"]).tolist() if data["shape"] else b[0]),
                    f <= 1))
    return out


NONSENSE = ["", "abc", "[1, 2", "nan", "[1, 2]", "[[1, 2], [3]]", "1e999", "2*pi",
            "(1, 2) (2, 1)", "x y", "1/0", "[1 -2 3]"]


def inputs(data):
    out = ([rule_answer(data, r) for r in data["rules"]] + [t for t, _ in perturbed(data)]
           + NONSENSE)
    return [t for t in out if t is not None]


def open_page(watched, site, entry, width=1280):
    page = watched.page
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(page_url(site, entry))
    page.wait_for_function("() => window.rbdExercises !== undefined "
                           "|| !document.querySelector('div.rbd-exercise')")
    return page


@pytest.mark.parametrize("entry", EXERCISE_PAGES)
def test_the_page_and_the_kernel_agree(site, watched, entry):
    page = open_page(watched, site, entry)
    forms = page.evaluate(FORMS)
    if entry.startswith(CONVERTED):
        assert forms, f"{entry}: no exercise form"
    disagree, rights = [], 0
    for data in forms:
        texts = inputs(data)
        kernel = [list(Exercise.from_json(data).verdict(t)) for t in texts]
        browser_side = page.evaluate(EVALUATE, [data, texts])
        rights += kernel[0][0]
        for t, k, b in zip(texts, kernel, browser_side):
            if k != b:
                disagree.append(f"{data['name']} {t!r}: kernel {k}, page {b}")
        # each rule's own answer gets that rule's line (or an earlier rule's, which the
        # order puts first): the rules are reachable as the kernel orders them
        assert kernel[0] == [True, "✓ right: " + right_rule(data)["message"]], kernel[0]
        for t, ok in perturbed(data):        # the kernel keeps the JSON's tolerance
            assert Exercise.from_json(data).verdict(t)[0] == ok, (data["name"], t)
    assert not disagree, "\n".join(disagree)
    assert rights == len(forms)
    assert not watched.problems, watched.problems


@pytest.mark.parametrize("entry", EXERCISE_PAGES)
def test_every_exercise_has_a_working_form(site, watched, entry):
    page = open_page(watched, site, entry)
    boxes = page.locator("div.rbd-exercise")
    n, expected = boxes.count(), exercise_count(entry)
    if entry.startswith(CONVERTED):
        assert n == expected, f"{entry}: {n} forms for {expected} exercises"
    else:
        assert n <= expected
    for k in range(n):
        box = boxes.nth(k)
        data = json.loads(box.locator("script.rbd-ex-data").text_content())
        result = box.locator(".rbd-ex-result")
        assert result.text_content() == "not answered yet"
        assert result.get_attribute("aria-live") == "polite"
        box.locator("input").fill(rule_answer(data, right_rule(data)))
        box.locator("input").press("Enter")
        assert result.text_content().startswith("✓ right: "), (data["name"],
                                                               result.text_content())
    assert not watched.problems, watched.problems


def test_the_number_of_exercise_forms():
    """All the converted chapters' exercises have forms in the built pages (and, once
    ALL_EXERCISES is set, the whole book's); that each one works is checked above."""
    html = book_html()
    forms = {e: (html / f"{e}.html").read_text(encoding="utf-8").count(
        '<div class="rbd-exercise"') for e in EXERCISE_PAGES}
    converted = sum(n for e, n in forms.items() if e.startswith(CONVERTED))
    expected = sum(exercise_count(e) for e in EXERCISE_PAGES if e.startswith(CONVERTED))
    assert converted == expected == CONVERTED_EXERCISES, forms
    if ALL_EXERCISES is not None:
        assert sum(forms.values()) == ALL_EXERCISES, forms


def plux_text(E, r):
    return "[" + ",\n".join("[" + ", ".join(f"{x:g}" for x in row) + "]"
                            for row in np.round(S.plux(E, r), 12) + 0.0) + "]"


@pytest.mark.parametrize("width", [1280, 390])
def test_a_reader_types_a_mistake_then_the_right_answer(site, watched, width):
    page = open_page(watched, site, "book/ch1_spatial/01_spatial_vectors", width)
    wait_until_typeset(page)
    box = page.locator("div.rbd-exercise").first
    field, result = box.locator("input"), box.locator(".rbd-ex-result")
    R, r = S.rotz(np.pi / 2), np.array([0.0, 1.0, 0.0])
    shots = SCREENSHOTS / "exercises"
    shots.mkdir(parents=True, exist_ok=True)
    field.fill(plux_text(R, r).replace("\n", " "))       # E = R: the usual mistake
    field.press("Enter")
    assert result.text_content() == ("✗ not yet: you used E = R; E turns A-coordinates "
                                     "into B-coordinates, so E = Rᵀ.")
    assert "rbd-ex-wrong" in result.get_attribute("class")
    box.scroll_into_view_if_needed()
    page.screenshot(path=shots / f"ch1-1-ex1-mistake-{width}.png")
    field.fill(plux_text(R.T, r).replace("\n", " "))
    box.locator("button").click()
    assert result.text_content() == "✓ right: ᴮX_A = plux(Rᵀ, r) with R = rotz(90°)."
    assert "rbd-ex-right" in result.get_attribute("class")
    page.screenshot(path=shots / f"ch1-1-ex1-right-{width}.png")
    # the form fits its column at this width
    fits = page.evaluate("""() => {
        const box = document.querySelector('div.rbd-exercise');
        const col = box.closest('article').getBoundingClientRect();
        const r = box.getBoundingClientRect(), b = box.querySelector('button')
            .getBoundingClientRect();
        return r.left >= col.left - 1 && r.right <= col.right + 1 && b.right <= r.right;
    }""")
    assert fits
    if width == 390:            # dark mode: the theme's colours
        page.evaluate("() => document.documentElement.dataset.theme = 'dark'")
        field.fill("[1, 2")
        field.press("Enter")
        assert result.text_content().startswith("✗ not yet: could not read the answer")
        page.screenshot(path=shots / "ch1-1-ex1-dark-390.png")
    assert not watched.problems, watched.problems


def test_a_reader_answers_with_pairs(site, watched):
    """ch3 §2's first exercise (a set of pairs): a pair left out, a pair written (k, j),
    then the seven pairs, each with the page's line (screenshots in
    _build/screenshots/exercises/)."""
    page = open_page(watched, site, "book/ch3_crb/02_methods_and_cost")
    wait_until_typeset(page)
    box = page.locator("div.rbd-exercise").first
    field, result = box.locator("input"), box.locator(".rbd-ex-result")
    shots = SCREENSHOTS / "exercises"
    shots.mkdir(parents=True, exist_ok=True)
    six = "(2, 3), (2, 6), (3, 4), (3, 5), (4, 6), (5, 6)"
    for typed, line, shot in [
            (six, "✗ not yet: you missed (4, 5): neither body is an ancestor of the other.",
             "missing"),
            (six.replace("(2, 3)", "(3, 2)") + ", (4, 5)",
             "✗ not yet: (3, 2): give each pair as (j, k) with 1 ≤ j < k ≤ 6.", None),
            ("[" + six + ", (4, 5)]",
             "✓ right: 7 pairs: every pair of bodies on different branches.", "right")]:
        field.fill(typed)
        field.press("Enter")
        assert result.text_content() == line
        if shot:
            box.scroll_into_view_if_needed()
            page.screenshot(path=shots / f"ch3-2-ex1-{shot}-1280.png")
    assert not watched.problems, watched.problems


def test_a_reader_builds_M_from_the_table(site, watched):
    """ch4 §2's first exercise, a function exercise's page question: the page shows
    INV's columns; a reader takes them as M (gravity left in), then subtracts
    INV(q, 0, 0, g, 0) and is right (screenshots in _build/screenshots/exercises/)."""
    from rbdlearn import constrained as C
    page = open_page(watched, site, "book/ch4_constrained/02_forward_dynamics")
    wait_until_typeset(page)
    arm = C.PlanarArmOnFloor(2, inertia=0.5**2 / 3, friction=0.2)
    q, rest = np.array([-np.pi / 6, -2 * np.pi / 3]), np.zeros(2)
    inv = np.round([C.inverse_dynamics(arm, q, rest, qdd, 0.0)
                    for qdd in (*np.eye(2), rest)], 4)
    shown = page.locator("article").inner_text()
    assert all(f"{x:.4f}" in shown for x in inv.ravel()), inv   # the numbers it needs
    box = page.locator("div.rbd-exercise").first
    field, result = box.locator("input"), box.locator(".rbd-ex-result")
    shots = SCREENSHOTS / "exercises"
    shots.mkdir(parents=True, exist_ok=True)

    def matrix(A):
        return "[" + ", ".join("[" + ", ".join(f"{x:.4f}" for x in row) + "]"
                               for row in A) + "]"
    for typed, start, shot in [
            (matrix(inv[:2].T),
             "✗ not yet: every column carries the gravity torques g(q)", "mistake"),
            (matrix((inv[:2] - inv[2]).T), "✓ right: M(q) at Fig. 2(a)", "right")]:
        field.fill(typed)
        field.press("Enter")
        assert result.text_content().startswith(start), result.text_content()
        box.scroll_into_view_if_needed()
        page.screenshot(path=shots / f"ch4-2-ex1-{shot}-1280.png")
    assert not watched.problems, watched.problems

