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


@pytest.fixture(scope="module")
def aba_steps():
    box = widgets.aba_step_explorer()
    return box, widgets.precomputed(box)


def test_one_frame_per_combination_of_the_views(aba_steps):
    box, static = aba_steps
    trees, steps = box.views["tree"], box.views["step"]
    pictures, readouts = leaves(static.pictures), leaves(static.readouts)
    assert len(pictures) == len(readouts) == len(trees) * len(steps)
    assert len(static.links) == 2 * (1 + len(trees))     # a link per Stack, two trees of them
    # each frame is the live widget's picture at that combination
    box.controls["tree"].value, box.controls["step"].value = trees[2], 3
    frame = pictures[2 * len(steps) + 3].value
    assert frame == widgets._small_png(box.children[0].value)
    assert readouts[2 * len(steps) + 3].value == box.html.value
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
    one by one, shows the same picture and read-out at that combination."""
    box = make()
    static = widgets.precomputed(box)
    pictures, readouts = leaves(static.pictures), leaves(static.readouts)
    names = list(box.views)
    for combo in picks:
        live = make()                    # fresh: no picture or run kept from other frames
        for name, k in zip(names, combo):
            live.controls[name].value = box.views[name][k]
        i = int(np.ravel_multi_index(combo, [len(box.views[n]) for n in names]))
        assert readouts[i].value == live.html.value
        assert pictures[i].value == widgets._small_png(live.children[0].value)
    # afterwards the live widget shows its own values again, drawn and encoded
    fresh = make()
    assert box.children[0].value == fresh.children[0].value
    assert box.html.value == fresh.html.value


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
