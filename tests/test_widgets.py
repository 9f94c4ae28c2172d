"""The explorers' kernel-free form (rbdlearn.widgets.precomputed): what the book's HTML
pages show where no kernel runs. tests/test_browser.py moves its controls in Chromium."""

import hashlib

import ipywidgets as W
import numpy as np
import pytest

from rbdlearn import widgets


def leaves(stack):
    """The frames of nested Stacks, in the order of the combinations of the views."""
    if isinstance(stack, W.Stack):
        return [leaf for child in stack.children for leaf in leaves(child)]
    return [stack]


def keep_views(box, kept):
    """Narrow the grid of ``box`` to the values at the indices ``kept`` {name: indices}
    (precomputed draws every combination; the book's full grids are drawn when its
    notebooks run, which _ext/nbexec.py does with RBDLEARN_STATIC_WIDGETS=1). Returns
    the full grid."""
    full = {n: list(v) for n, v in box.views.items()}
    box.views = {n: [v[k] for k in kept[n]] if n in kept else v for n, v in full.items()}
    return full


@pytest.fixture(scope="module")
def aba_steps():
    box = widgets.aba_step_explorer()
    keep_views(box, {"tree": [0, 2]})                   # every step of two of the trees
    return box, widgets.precomputed(box)


def test_one_frame_per_combination_of_the_views(aba_steps):
    box, static = aba_steps
    trees, steps = box.views["tree"], box.views["step"]
    pictures, readouts = leaves(static.pictures), leaves(static.readouts)
    assert len(pictures) == len(readouts) == len(trees) * len(steps)
    assert len(static.links) == 2 * (1 + len(trees))     # a link per Stack, two trees of them
    # each frame is the live widget's picture at that combination
    box.controls["tree"].value, box.controls["step"].value = trees[1], 3
    frame = pictures[1 * len(steps) + 3].value
    assert frame == widgets.core.small_png(box.children[0].value)
    assert readouts[1 * len(steps) + 3].value == box.html.value
    # the steps of one tree differ until the last; a short tree repeats its last step
    first = [hashlib.md5(p.value).hexdigest() for p in pictures[:len(steps)]]
    n = len(box.views["step"]) - 1
    model_n = 3                                          # the 3-link chain: 3 steps
    assert len(set(first[:model_n + 1])) == model_n + 1 and set(first[model_n:]) == {first[n]}


@pytest.mark.parametrize("make, picks", [
    (lambda: widgets.rnea_explorer(2), [(0, 0), (4, 2), (10, 3)]),
    (widgets.four_bar_explorer, [(0,), (9,), (25,)]),             # blits its picture
    (widgets.floor_arm_explorer, [(0, 2), (6, 0), (12, 1)]),      # keeps its runs
], ids=["rnea", "four_bar", "floor_arm"])
def test_each_frame_is_what_the_live_widget_shows_there(make, picks):
    """precomputed sets a frame's controls with the picture held (drawn once per frame, not
    once per control) and quantizes the canvas pixels; a fresh live widget, its controls set
    one by one, shows the same picture and read-out at that combination. (The grid is
    narrowed to the picked values of each control, three or so each: every frame is still
    drawn after others, in the order of the combinations.)"""
    box = make()
    names = list(box.views)
    kept = {n: sorted({combo[d] for combo in picks}) for d, n in enumerate(names)}
    full = keep_views(box, kept)
    static = widgets.precomputed(box)
    pictures, readouts = leaves(static.pictures), leaves(static.readouts)
    assert len(pictures) == int(np.prod([len(kept[n]) for n in names]))
    # afterwards the live widget shows its own values again, drawn and encoded
    fresh = make()
    assert box.children[0].value == fresh.children[0].value
    assert box.html.value == fresh.html.value
    for combo in picks:
        live = fresh if combo == picks[0] else make()    # fresh: nothing kept from other frames
        for name, k in zip(names, combo):
            live.controls[name].value = full[name][k]
        i = int(np.ravel_multi_index([kept[n].index(k) for n, k in zip(names, combo)],
                                     [len(kept[n]) for n in names]))
        assert readouts[i].value == live.html.value
        assert pictures[i].value == widgets.core.small_png(live.children[0].value)


def test_the_selectors_start_where_the_live_widget_does(aba_steps):
    box = widgets.crb_fill_explorer()
    box.controls["step"].value = 3
    static = widgets.precomputed(box)
    assert box.controls["step"].value == 3                # the live widget is put back
    assert static.controls["step"].index == 3 == static.pictures.selected_index
    assert isinstance(static.controls["step"], W.SelectionSlider)
    _, steps = aba_steps
    assert isinstance(steps.controls["tree"], W.Dropdown)
    assert list(steps.controls["tree"].options) == list(aba_steps[0].views["tree"])


def test_a_view_between_grid_values_starts_at_the_nearest():
    box = widgets.four_bar_explorer()
    box.controls["crank"].value = 1.13
    static = widgets.precomputed(box)
    assert box.views["crank"][static.controls["crank"].index] == 1.25


def test_display_shows_the_kernel_free_form_only_when_asked(monkeypatch):
    box = widgets.crb_fill_explorer()
    view = "application/vnd.jupyter.widget-view+json"
    monkeypatch.delenv("RBDLEARN_STATIC_WIDGETS", raising=False)
    assert box._repr_mimebundle_()[view]["model_id"] == box.model_id
    monkeypatch.setenv("RBDLEARN_STATIC_WIDGETS", "1")
    shown = box._repr_mimebundle_()[view]["model_id"]
    assert shown == box.static.model_id != box.model_id
