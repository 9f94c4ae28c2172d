"""Explorer of Chapter 3 (§2): edit a tree's parent array and watch the inertia matrix H
fill body by body (:func:`crb_fill_explorer`)."""

import ipywidgets as W
import numpy as np

from .. import crba
from ..crb import fill_owner
from ..models import tree_from_parents
from ..errors import RbdlearnError
from ..viz import draw_fill
from .core import Picture, control_layout, explorer_box, readout

__all__ = ["crb_fill_explorer", "parse_parents"]


def crb_fill_explorer(parents="0 1 2 1 4 4 3"):
    """Edit a tree's parent array and step through the bodies, watching H fill."""
    pic = Picture((8.0, 3.6))
    html = W.HTML()
    c = {"parents": W.Text(value=parents, description="λ(1..N)", continuous_update=False,
                           layout=control_layout()),
         "step": W.IntSlider(value=0, min=0, max=len(parse_parents(parents)), description="body",
                             layout=control_layout())}
    state = {"text": None}
    # the axes are kept from tree to tree (new axes cost a third of a redraw): a new tree
    # replaces what they hold
    ax_tree, ax_H = pic.fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.1]})

    def update():
        if c["parents"].value != state["text"]:            # a new tree (or a typo): redraw
            try:
                model = tree_from_parents(parse_parents(c["parents"].value))
            except ValueError as err:
                html.value = readout(err, error=True)
                return
            q = np.random.default_rng(1).uniform(-np.pi, np.pi, model.nq)
            owner = fill_owner(model)
            for ax in (ax_tree, ax_H):
                for artist in [*ax.lines, *ax.texts, *ax.patches, *ax.images]:
                    artist.remove()
                ax.ignore_existing_data_limits = True      # limits from the new tree only
            state.update(text=c["parents"].value, model=model, owner=owner,
                         show=draw_fill(ax_tree, ax_H, model, crba(model, q), owner))
            c["step"].max = model.N
        model, owner = state["model"], state["owner"]
        k = min(c["step"].value, model.N)
        state["show"](k)
        zeros = int((owner == 0).sum())
        html.value = readout(f"N = {model.N}, nv = {model.nv}: {zeros} of {model.nv ** 2} entries\n"
                      "are zero whatever q (white)\n"
                      + (f"body {k} fills the entries (j, {k}) and ({k}, j)\n"
                         f"for j on its path {model.ancestors(k)}" if k else
                         "move the slider to process bodies 1, 2, …"))
        pic.refresh()

    return explorer_box(pic, c, html, update,
                views={"step": list(range(8))})


# -------------------------------------------------------------------------------------
# The parent array typed into the explorer's text box (tested in tests/test_widgets.py).


def parse_parents(text):
    """The parent array λ(1..N) from text such as ``"0 1 1 2"`` or ``"0, 1, 1, 2"``."""
    try:
        parents = [int(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise RbdlearnError(f"parent array: expected whole numbers, got {text!r}") from None
    if not parents:
        raise RbdlearnError("parent array: give at least one body (e.g. '0 1 1')")
    return parents
