"""Pictures of Chapter 3 (the composite-rigid-body algorithm, §2): a tree and its inertia
matrix H filling body by body, as CRB-2 fills it."""

import numpy as np
from matplotlib import colormaps
from matplotlib.patches import Rectangle

__all__ = ["draw_fill"]


def draw_fill(ax_tree, ax_H, model, H, owner, fontsize=10):
    """Draw a tree and its H; returns ``show(k)``, which shows step k of the filling
    (bodies 1..k done): the tree with the composite body C_k shaded (red: body k,
    orange: the rest of C_k, blue: bodies done), and H with the entries filled so far
    (grey: not yet, white "0": always zero, black frames: the entries of body k)."""
    x, y = _tree_layout(model)
    for i in range(1, model.N + 1):
        ax_tree.plot([x[model.parent[i]], x[i]], [y[model.parent[i]], y[i]], "-", color="0.6", lw=1.5)
    nodes = [ax_tree.plot(x[i], y[i], "o", ms=13, color="k")[0] for i in range(model.N + 1)]
    for i in range(model.N + 1):
        ax_tree.text(x[i], y[i], str(i), ha="center", va="center", color="w", fontsize=fontsize)
    ax_tree.set_xlim(min(x.values()) - 0.6, max(x.values()) + 0.6)
    ax_tree.set_ylim(min(y.values()) - 0.6, 0.6)
    ax_tree.axis("off")

    colors = colormaps["RdBu_r"](np.clip(H / max(1e-9, np.abs(H).max()) / 2 + 0.5, 0, 1))
    colors[owner == 0] = (1.0, 1.0, 1.0, 1.0)                   # zero: different branches
    image = ax_H.imshow(colors, interpolation="nearest")
    for r, c in zip(*np.nonzero(owner == 0)):
        ax_H.text(c, r, "0", ha="center", va="center", fontsize=fontsize - 1, color="0.5")
    labels = [str(b) for b in _velocity_body_labels(model)]
    ax_H.set_xticks(range(len(labels)), labels, fontsize=fontsize - 1)
    ax_H.set_yticks(range(len(labels)), labels, fontsize=fontsize - 1)
    # add_artist, not add_patch: the frames lie on the image, whose extent sets the limits
    # already (add_patch would work them out again for every frame)
    frames = [ax_H.add_artist(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, ec="k", lw=1.5))
              for r, c in zip(*np.nonzero(owner > 0))]
    where = list(zip(*np.nonzero(owner > 0)))

    def show(k):
        inside = set(model.subtree(k)) if k > 0 else set()
        for i, node in enumerate(nodes):
            node.set_color("k" if i == 0 else "C3" if i == k else "C1" if i in inside
                           else "C0" if i < k else "0.75")
        rgba = colors.copy()
        rgba[owner > k] = (0.82, 0.82, 0.82, 1.0)               # not filled yet
        image.set_data(rgba)
        for frame, (r, c) in zip(frames, where):
            frame.set_visible(owner[r, c] == k)
        ax_tree.set_title(f"composite body $C_{{{k}}}$" if k else "tree (0 = base)",
                          fontsize=fontsize + 1)
        ax_H.set_title(f"H after bodies 1..{k}" if k else "H: nothing filled", fontsize=fontsize + 1)

    return show


def _tree_layout(model):
    """(x, y) of every body for a drawing: leaves spread along x, depth downwards."""
    children = [[c for c in range(1, model.N + 1) if model.parent[c] == i]
                for i in range(model.N + 1)]
    x, y, next_x = {}, {}, [0.0]

    def place(i, depth):
        y[i] = -depth
        for c in children[i]:
            place(c, depth + 1)
        if children[i]:
            x[i] = sum(x[c] for c in children[i]) / len(children[i])
        else:
            x[i], next_x[0] = next_x[0], next_x[0] + 1.0

    place(0, 0)
    return x, y


def _velocity_body_labels(model):
    return [i for i in range(1, model.N + 1) for _ in range(model.joints[i].nv)]
