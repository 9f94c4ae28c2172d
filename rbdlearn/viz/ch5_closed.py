"""Pictures of Chapter 5 (closed chains): the parent / child / brother / real pointer
graph of a mechanism (§1, Figs. 4–6), a planar closed linkage (§1–2) and a human figure
under a bar seen from the front and the side (§3)."""

import numpy as np
from matplotlib.patches import Circle, Rectangle

from .. import body_pose, forward_kinematics, pointers

__all__ = ["draw_pointers", "draw_linkage", "draw_figure_views", "pointer_layout",
           "loop_geometry"]

# ------------------------------------------------------ pointer graphs and linkages

_POINTER_STYLE = {"child": dict(color="C0", lw=1.6, ls="-"),
                  "brother": dict(color="C2", lw=1.6, ls=":"),
                  "parent": dict(color="0.6", lw=0.9, ls="-"),
                  "real": dict(color="C3", lw=1.6, ls="--")}


def draw_pointers(ax, mech, parent_arrows=True):
    """The pointer graph of a mechanism (§3, Figs. 4–6), drawn from its data structure:
    a node per body (■ the base, ● real links, dashed ○ virtual links), the child
    pointer (solid, to the first child), the brother pointers (dotted, along the list of
    siblings), optionally the parent pointers (thin grey) and, for each virtual link,
    its real pointer (red dashed). ``mech`` is a ``closed_chains.Mechanism`` or a bare
    ``Model``. Returns a dict: kind → list of (from, to) body pairs drawn."""
    model = getattr(mech, "model", mech)
    real = getattr(mech, "real", [-1] * (model.N + 1))
    P = pointers(model)
    x, depth = pointer_layout(mech)
    xy = np.column_stack([1.5 * x, -1.5 * depth])
    nodes = []
    for i in range(model.N + 1):
        virtual = real[i] >= 0
        shape = (Rectangle(xy[i] - 0.4, 0.8, 0.8) if i == 0 else Circle(xy[i], 0.4))
        shape.set(fc="white" if virtual else "#dce6f2", ec="C3" if virtual else "k",
                  ls="--" if virtual else "-", lw=1.5, zorder=2)
        nodes.append(ax.add_patch(shape))
        ax.text(*xy[i], str(i), ha="center", va="center", fontsize=9, zorder=3)
    drawn = {"child": [], "brother": [], "parent": [], "real": []}
    for i in range(model.N + 1):
        if P.child[i] >= 0:
            drawn["child"].append((i, P.child[i]))
        if i > 0 and P.brother[i] >= 0:
            drawn["brother"].append((i, P.brother[i]))
        if i > 0 and parent_arrows:
            drawn["parent"].append((i, P.parent[i]))
        if real[i] >= 0:
            drawn["real"].append((i, real[i]))
    bend = {"child": 0.0, "brother": -0.3, "parent": 0.3, "real": -0.3}
    for kind, pairs in drawn.items():
        for a, b in pairs:
            ax.annotate("", xy=xy[b], xytext=xy[a], zorder=1, arrowprops=dict(
                arrowstyle="-|>", patchA=nodes[a], patchB=nodes[b], mutation_scale=12,
                connectionstyle=f"arc3,rad={bend[kind]}", **_POINTER_STYLE[kind]))
    for kind, style in _POINTER_STYLE.items():      # legend proxies
        if drawn[kind]:
            ax.plot([], [], label=f"{kind} pointer", **style)
    ax.set_xlim(xy[:, 0].min() - 0.8, xy[:, 0].max() + 0.8)
    ax.set_ylim(xy[:, 1].min() - 0.8, 0.8)
    ax.set_aspect("equal")
    ax.axis("off")
    return drawn


def draw_linkage(ax, mech, q, color="C0", alpha=1.0):
    """A planar closed chain: each link from its joint to the next joint along the tree
    (the last link of a loop ends at its virtual link's joint ◇), the real frame each
    virtual link must meet (▲ on the real link, the ground for a four-bar) and a grey
    line for the ground between the pivots. Returns ``update(q)``."""
    model = mech.model
    virtual = {lp.virtual for lp in mech.loops}
    links = [ax.plot([], [], "-", lw=5, color=color, alpha=alpha, solid_capstyle="round")[0]
             for i in range(1, model.N + 1) if i not in virtual and model.parent[i] >= 0]
    joints = ax.plot([], [], "o", ms=7, mfc="white", mec="k", alpha=alpha, zorder=3)[0]
    cuts = ax.plot([], [], "D", ms=8, mfc="white", mec="C3", alpha=alpha, zorder=4)[0]
    ground = ax.plot([], [], "-", lw=2, color="0.5", zorder=0)[0]
    pivots = ax.plot([], [], "^", ms=10, color="0.3", alpha=alpha, zorder=2)[0]

    def update(q):
        origins, targets = loop_geometry(mech, q)
        ends = {}                                   # each link ends at its first child
        for i in range(model.N, 0, -1):
            ends[model.parent[i]] = i
        k = 0
        for i in range(1, model.N + 1):
            if i in virtual:
                continue
            end = origins[ends[i]] if i in ends else origins[i]
            links[k].set_data([origins[i][0], end[0]], [origins[i][1], end[1]])
            k += 1
        real = [i for i in range(1, model.N + 1) if i not in virtual]
        joints.set_data(origins[real, 0], origins[real, 1])
        cuts.set_data(origins[sorted(virtual), 0], origins[sorted(virtual), 1])
        on_ground = [t for t, lp in zip(targets, mech.loops) if lp.real == 0]
        base = np.vstack([origins[[i for i in range(1, model.N + 1)
                                   if model.parent[i] == 0]]] + on_ground)
        ground.set_data(base[:, 0], base[:, 1])
        pivots.set_data(targets[:, 0], targets[:, 1])

    update(q)
    ax.set_aspect("equal")
    return update

# ------------------------------------------------------ the human figure under the bar (§3)


def draw_figure_views(axes, bar_height, bar_y=0.0, half_width=0.6):
    """Front (x-z) and side (y-z) views of a stick figure under a bar on two axes.
    Returns ``update(skeleton)`` taking the polylines of
    :func:`rbdlearn.closed_chains.figure_skeleton`."""
    lines = []
    for ax, (a, b), label in zip(axes, ((0, 2), (1, 2)), ("front: x–z", "side: y–z")):
        if a == 0:
            ax.plot([-half_width, half_width], [bar_height, bar_height], color="0.3", lw=3)
        else:
            ax.plot([bar_y], [bar_height], "o", color="0.3", ms=8)
        ax.set(aspect="equal", xlim=(-1.2, 1.2), ylim=(bar_height - 2.3, bar_height + 0.3),
               xlabel=f"{'xy'[a]} [m]", ylabel="z [m]", title=label)
        lines.append([ax.plot([], [], "-o", color="C0", lw=2, ms=2)[0] for _ in range(7)])

    def update(skeleton):
        for view, (a, b) in zip(lines, ((0, 2), (1, 2))):
            for line, pts in zip(view, skeleton):
                line.set_data(pts[:, a], pts[:, b])
        return [line for view in lines for line in view]

    return update


# -------------------------------------------------------------------------------------
# Chapter 5: where the pictures put things (coordinates from the kinematics, no
# drawing), each tested in tests/test_viz.py.


def pointer_layout(mech):
    """Where to draw each body of a pointer graph: (x, depth). The walk follows the
    pointers as the recursive passes of §3.1 do — a body, then its child, then its
    brother — so leaves get x = 0, 1, 2, … in that order and a body sits above the
    middle of its children."""
    model = getattr(mech, "model", mech)
    P = pointers(model)
    x, depth, leaves = [0.0] * (model.N + 1), [0] * (model.N + 1), [0]

    def visit(i, d):
        depth[i] = d
        k = P.child[i]
        if k < 0:
            x[i], leaves[0] = float(leaves[0]), leaves[0] + 1
        while k >= 0:                              # the child, then its brothers
            visit(k, d + 1)
            k = P.brother[k]
        if P.child[i] >= 0:
            kids = [k for k in range(1, model.N + 1) if model.parent[k] == i]
            x[i] = float(np.mean([x[k] for k in kids]))

    visit(0, 0)
    return np.array(x), np.array(depth)


def loop_geometry(mech, q):
    """Where to draw a planar mechanism (y-z plane): the origins of all bodies (N+1, 2),
    and for each loop the point its virtual link must meet — the real frame's origin."""
    model = mech.model
    X0 = forward_kinematics(model, q)
    origins = np.array([body_pose(X)[1][1:] for X in X0])
    targets = np.array([body_pose(lp.Xreal @ X0[lp.real])[1][1:] for lp in mech.loops])
    return origins, targets.reshape(-1, 2)
