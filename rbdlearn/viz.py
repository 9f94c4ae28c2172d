"""Matplotlib pictures for the book: planar arms, 3-D trees, and planar spatial vectors.

Planar pictures live in the y-z plane of the base frame (y to the right, z up, x out
of the page), the plane in which :func:`rbdlearn.planar_chain` moves. A planar motion
vector ``[ω, 0, 0, 0, v_y, v_z]`` is a rotation about a point (its instantaneous
centre) and a planar force ``[n, 0, 0, 0, f_y, f_z]`` is a force along a line (its
line of action); :func:`motion_centre_2d` and :func:`force_line_2d` find them.

For closed chains (Chapter 5), :func:`draw_pointers` draws the parent / child / brother /
real pointer graph of a mechanism and :func:`draw_linkage` a planar closed linkage.

Everything drawn is computed by rbdlearn (forward kinematics, Plücker transforms,
``rnea``); this module only turns the results into lines and arrows — and, with
:func:`table`, numbers into a table for the page; :func:`to_jshtml` turns a matplotlib
animation into the page's player.
"""

import base64
import io
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
from matplotlib.animation import HTMLWriter
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import FigureBase
from matplotlib.image import imsave
from matplotlib.patches import Circle, Rectangle
from matplotlib.text import Text

from .errors import RbdlearnError
from .kinematics import body_pose, forward_kinematics, point_velocity
from .model import check_body, pointers
from .inverse_dynamics import rnea, rnea_forces
from .spatial import inertia_params, plux, rotx

__all__ = ["chain_geometry", "draw_planar_chain", "ChainDrawing", "motion_centre_2d",
           "force_line_2d", "draw_velocity_field", "draw_force_line", "draw_frame_2d",
           "draw_tree_3d", "draw_tree_views", "socket_plug_frames", "draw_socket_plug",
           "torque_parts", "draw_torque_bars", "transmitted_forces", "PART_COLORS",
           "pointer_layout", "draw_pointers", "loop_geometry", "draw_linkage", "table",
           "to_jshtml"]

PART_COLORS = {"gravity": "#4C72B0", "velocity": "#DD8452", "inertial": "#55A868",
               "total": "#444444"}
"""Colours of the torque parts, shared by the widget and the static figures."""


# --------------------------------------------------------------------------- planar arm

def chain_geometry(model, q):
    """Where to draw a planar tree: y-z coordinates of body origins, COMs and link tips.

    Returns a dict of arrays: ``origins`` (N+1, 2), entry 0 the base origin;
    ``coms`` (N, 2); ``tips`` (N, 2), the end of each link — its first child's origin,
    or for a leaf body twice its COM offset (the far end of a uniform rod, as built
    by :func:`rbdlearn.planar_chain`).
    """
    X0 = forward_kinematics(model, q)
    origins, coms, tips = [np.zeros(3)], [], []
    for i in range(1, model.N + 1):
        R, p = body_pose(X0[i])
        _, c, _ = inertia_params(np.asarray(model.I[i], dtype=float))
        origins.append(p)
        coms.append(p + R @ c)
        tips.append(p + R @ (2 * c))
    for i in range(model.N, 0, -1):          # a link ends at its (first) child's origin
        if model.parent[i] > 0:
            tips[model.parent[i] - 1] = origins[i]
    yz = lambda pts: np.array(pts, dtype=float).reshape(-1, 3)[:, 1:]
    return {"origins": yz(origins), "coms": yz(coms), "tips": yz(tips)}


class ChainDrawing:
    """A planar arm drawn on ``ax``; :meth:`update` moves it without redrawing the axes."""

    def __init__(self, ax, model, q, qd=None, color="C0", alpha=1.0, coms=True,
                 velocity_scale=0.15, label=None):
        self.ax, self.model = ax, model
        self.velocity_scale = velocity_scale
        self.links = [ax.plot([], [], "-", lw=5, color=color, alpha=alpha,
                              solid_capstyle="round", label=label if i == 0 else None)[0]
                      for i in range(model.N)]
        self.joints = ax.plot([], [], "o", ms=7, mfc="white", mec="k", alpha=alpha,
                              zorder=3)[0]
        self.coms = ax.plot([], [], "P", ls="none", ms=8, color="k", alpha=alpha,
                            zorder=4, visible=coms)[0]
        self.arrows = None
        if qd is not None:
            self.arrows = ax.quiver(np.zeros(model.N), np.zeros(model.N),
                                    np.zeros(model.N), np.zeros(model.N), color="C3",
                                    angles="xy", scale_units="xy", scale=1, width=0.006,
                                    zorder=5)
        self.update(q, qd)

    def update(self, q, qd=None, model=None):
        """Redraw at configuration q (and COM velocity arrows when qd is given)."""
        if model is not None:
            self.model = model
        g = chain_geometry(self.model, q)
        for i, line in enumerate(self.links):
            start = g["origins"][self.model.parent[i + 1]]
            line.set_data([start[0], g["origins"][i + 1][0], g["tips"][i][0]],
                          [start[1], g["origins"][i + 1][1], g["tips"][i][1]])
        self.joints.set_data(g["origins"][:, 0], g["origins"][:, 1])
        self.coms.set_data(g["coms"][:, 0], g["coms"][:, 1])
        if self.arrows is not None and qd is not None:
            uv = []
            for i in range(1, self.model.N + 1):   # velocity of the COM, base coordinates
                _, c, _ = inertia_params(np.asarray(self.model.I[i], dtype=float))
                uv.append(point_velocity(self.model, q, qd, i, c, frame="world")[1:])
            uv = self.velocity_scale * np.array(uv)
            self.arrows.set_offsets(g["coms"])
            self.arrows.set_UVC(uv[:, 0], uv[:, 1])
        return g


def draw_planar_chain(ax, model, q, qd=None, **kwargs):
    """Draw a planar arm (links, joints ○, COMs ✚; COM velocities if qd is given).

    Sets equal axis scaling and labels the axes y and z. Returns a :class:`ChainDrawing`.
    """
    drawing = ChainDrawing(ax, model, q, qd, **kwargs)
    ax.set_aspect("equal")
    ax.set_xlabel("y [m]")
    ax.set_ylabel("z [m]")
    return drawing


# ------------------------------------------------------- planar motion and force vectors

def _planar(a, what):
    a = np.asarray(a, dtype=float)
    if a.shape != (6,):
        raise RbdlearnError(f"{what} must be a spatial 6-vector, got shape {a.shape}")
    return a[0], a[4], a[5]


def motion_centre_2d(v, tol=1e-9):
    """Instantaneous centre (y, z) of a planar motion ``v = [ω, ·, ·, ·, v_y, v_z]``.

    The body point P with zero velocity, ``v_O + ω×OP = 0``:
    ``P = (−v_z/ω, v_y/ω)``. ``None`` for a pure translation (ω = 0).
    """
    w, vy, vz = _planar(v, "motion vector")
    if abs(w) < tol:
        return None
    return np.array([-vz / w, vy / w])


def force_line_2d(f, tol=1e-9):
    """Line of action of a planar force ``f = [n, ·, ·, ·, f_y, f_z]``.

    Returns ``(P0, u)``: the point of the line nearest to O, ``P0 = f × n_O / |f|²``,
    and the unit direction of the force. ``None`` for a pure couple (f = 0).
    """
    n, fy, fz = _planar(f, "force vector")
    f2 = fy * fy + fz * fz
    if f2 < tol * tol:
        return None
    # (f × n e_x) has y-component f_z n and z-component −f_y n
    return np.array([fz * n, -fy * n]) / f2, np.array([fy, fz]) / np.sqrt(f2)


def draw_velocity_field(ax, v, extent=(-2, 2, -2, 2), n=9, scale=0.25, color="0.45"):
    """Quiver of point velocities ``v_P`` of the planar motion ``v`` on an n x n grid.

    ``v_P`` is the linear part of ``plux(1, P) @ v`` (the motion seen from a frame at
    P, axes parallel to the base's). The instantaneous centre is marked ✕.
    Returns ``update(v)``, which moves the arrows and the centre in place.
    """
    y, z = np.meshgrid(np.linspace(extent[0], extent[1], n),
                       np.linspace(extent[2], extent[3], n))
    P = np.column_stack([y.ravel(), z.ravel()])
    XP = np.array([plux(np.eye(3), [0.0, py, pz]) for py, pz in P])   # ᴾX_O per point
    quiv = ax.quiver(P[:, 0], P[:, 1], np.zeros(len(P)), np.zeros(len(P)), color=color,
                     angles="xy", scale_units="xy", scale=1, width=0.004)
    centre = ax.plot([], [], "x", ms=12, mew=3, color="C3", zorder=6,
                     label="instantaneous centre")[0]

    def update(v):
        vP = XP @ np.asarray(v, dtype=float)
        quiv.set_UVC(scale * vP[:, 4], scale * vP[:, 5])
        c = motion_centre_2d(v)
        centre.set_data(*(([c[0]], [c[1]]) if c is not None else ([], [])))

    update(v)
    return update


def draw_force_line(ax, f, scale=0.3, color="C2", label="line of action", length=20.0,
                    anchor=None):
    """A planar force drawn as an arrow on its (dashed) line of action.

    The arrow (length ``scale·|f|``) is centred on the point of the line nearest to
    ``anchor`` (default: the base origin). Returns ``update(f, anchor=None)``; a pure
    couple (f = 0) draws nothing.
    """
    line = ax.plot([], [], "--", color=color, lw=1.2, label=label)[0]
    arrow = ax.quiver([0.0], [0.0], [0.0], [0.0], color=color, angles="xy",
                      scale_units="xy", scale=1, width=0.008, zorder=5)

    def update(f, anchor=anchor):
        res = force_line_2d(f)
        if res is None:
            line.set_data([], [])
            arrow.set_UVC([0.0], [0.0])
            return
        P0, u = res
        if anchor is not None:
            P0 = P0 + ((np.asarray(anchor, dtype=float) - P0) @ u) * u
        ends = P0 + np.outer([-length, length], u)
        line.set_data(ends[:, 0], ends[:, 1])
        mag = np.hypot(f[4], f[5])
        arrow.set_offsets([P0 - 0.5 * scale * mag * u])
        arrow.set_UVC([scale * f[4]], [scale * f[5]])

    update(f)
    return update


def draw_frame_2d(ax, origin=(0.0, 0.0), angle=0.0, label="O", size=0.4, color="k"):
    """Axes y (→) and z (↑) of a frame at ``origin`` turned by ``angle`` about x.

    Returns ``update(origin, angle)``.
    """
    quiv = ax.quiver([0, 0], [0, 0], [0, 0], [0, 0], color=color, angles="xy",
                     scale_units="xy", scale=1, width=0.006, zorder=4)
    text = ax.text(0, 0, label, color=color, fontsize=11, ha="right", va="top")

    def update(origin, angle):
        R = rotx(angle)[1:, 1:]                  # columns: the frame's y and z axes
        quiv.set_offsets([origin, origin])
        quiv.set_UVC(size * R[0], size * R[1])
        text.set_position((origin[0] - 0.05, origin[1] - 0.05))

    update(origin, angle)
    return update


# ------------------------------------------------------------------------------ 3-D tree

_JOINT_MARKERS = {"Revolute": "o", "Prismatic": "s", "Spherical": "D", "Free": "*",
                  "Fixed": "x"}


def draw_tree_3d(ax, model, q, color="C0"):
    """A kinematic tree in 3-D: a segment from each body's parent origin to its origin,
    a marker per body by joint type (○ revolute, □ prismatic, ◇ spherical, ★ free,
    × fixed). ``ax`` is a 3-D axes (``projection="3d"``)."""
    X0 = forward_kinematics(model, q)
    p = np.array([body_pose(X)[1] for X in X0], dtype=float)
    for i in range(1, model.N + 1):
        a, b = p[model.parent[i]], p[i]
        ax.plot([a[0], b[0]], [a[1], b[1]], [a[2], b[2]], "-", color=color, lw=2)
    for kind, marker in _JOINT_MARKERS.items():
        idx = [i for i in range(1, model.N + 1) if type(model.joints[i]).__name__ == kind]
        if idx:
            ax.plot(p[idx, 0], p[idx, 1], p[idx, 2], marker, color="k", ms=6,
                    mfc="white" if kind != "Free" else "k", ls="", label=kind.lower())
    ax.plot([0], [0], [0], "^", color="k", ms=10, ls="", label="base")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    return p


# ------------------------------------------------------------- socket and plug (Chapter 2)

def socket_plug_frames(model, q, i):
    """The four frames of seed 000's Fig. 2 for the joint of body ``i``, as world poses
    ``(R, o)`` (R: the frame's axes as columns, o: its origin, base coordinates):
    ``"p"`` the parent's centre-of-mass frame (for the base: its origin), ``"j"`` the
    socket (the joint's predecessor frame, placed by ``Xtree[i]``), ``"j'"`` the plug
    (body i's own frame, moved by the joint) and ``"c"`` the child's centre-of-mass
    frame. A centre-of-mass frame has its body's axes."""
    check_body(model, i)
    X0 = forward_kinematics(model, q)
    lam = model.parent[i]

    def com(b):
        return np.zeros(3) if b == 0 else inertia_params(model.I[b], allow_massless=True)[1]
    R_p, o_p = body_pose(X0[lam])
    R_c, o_c = body_pose(X0[i])
    return {"p": (R_p, o_p + R_p @ com(lam)),
            "j": body_pose(model.Xtree[i] @ X0[lam]),
            "j'": (R_c, o_c),
            "c": (R_c, o_c + R_c @ com(i))}


def draw_socket_plug(ax, frames, size=0.15, fontsize=11):
    """Seed 000's Fig. 2 on a 3-D axes: the frames of :func:`socket_plug_frames` (axes
    x, y, z in red, green, blue; labelled p, j, j′, c) and the offsets r_pj (p → j),
    r_jj′ (j → j′) and r_cj′ (c → j′) as black arrows, each labelled with its symbol.
    Returns what was drawn: ``{"origins": {name: o}, "offsets": {name: (start, end)}}``
    in base coordinates."""
    names = {"p": "$p$", "j": "$j$", "j'": "$j'$", "c": "$c$"}
    origins = {}
    for name, (R, o) in frames.items():
        for k, color in enumerate(("C3", "C2", "C0")):
            ax.quiver(*o, *(size * R[:, k]), color=color, lw=1.6, arrow_length_ratio=0.25)
        ax.text(*(o - 0.35 * size * (R[:, 0] + R[:, 1])), names[name], fontsize=fontsize,
                ha="center", va="center")
        origins[name] = o
    offsets = {"$\\mathbf{r}_{pj}$": ("p", "j"), "$\\mathbf{r}_{jj'}$": ("j", "j'"),
               "$\\mathbf{r}_{cj'}$": ("c", "j'")}
    drawn = {}
    for label, (a, b) in offsets.items():
        start, end = origins[a], origins[b]
        ax.quiver(*start, *(end - start), color="k", lw=1.0, arrow_length_ratio=0.12)
        ax.text(*(0.5 * (start + end)), label, fontsize=fontsize, color="0.15")
        drawn[label] = (start, end)
    pts = np.array(list(origins.values()))
    centre, half = pts.mean(axis=0), (np.ptp(pts, axis=0).max() / 2 + size)
    ax.set(xlim=centre[0] + [-half, half], ylim=centre[1] + [-half, half],
           zlim=centre[2] + [-half, half], xlabel="x", ylabel="y", zlabel="z")
    ax.set_box_aspect((1, 1, 1))                      # equal scales: angles look right
    return {"origins": origins, "offsets": drawn}


def draw_tree_views(axes, model, q, tips=None, color="C0"):
    """A kinematic tree as a stick figure seen from the front (x–z, ``axes[0]``) and the
    side (y–z, ``axes[1]``): a segment from each body's joint to its parent's (none to
    the base from a free joint) and to each tip (``tips`` {body: point in body
    coordinates}), and a marker at each joint by type (as in :func:`draw_tree_3d`).
    Returns {joint type name: number of joints marked}."""
    X0 = forward_kinematics(model, q)
    pose = [body_pose(X) for X in X0]
    p = np.array([o for _, o in pose], dtype=float)
    segments = [(p[model.parent[i]], p[i]) for i in range(1, model.N + 1)
                if not (model.parent[i] == 0 and type(model.joints[i]).__name__ == "Free")]
    segments += [(p[i], p[i] + pose[i][0] @ t) for i, t in (tips or {}).items()]
    marked = {}
    for ax, (h, v) in zip(axes, ((0, 2), (1, 2))):
        for a, b in segments:
            ax.plot([a[h], b[h]], [a[v], b[v]], "-", color=color, lw=2, solid_capstyle="round")
        for kind, marker in _JOINT_MARKERS.items():
            idx = [i for i in range(1, model.N + 1) if type(model.joints[i]).__name__ == kind]
            if idx:
                ax.plot(p[idx, h], p[idx, v], marker, color="k", ms=6, ls="",
                        mfc="white" if kind != "Free" else "k", label=kind.lower())
                marked[kind] = len(idx)
        ax.set_aspect("equal")
        ax.set_xlabel("xyz"[h] + " [m]")
        ax.set_ylabel("z [m]")
    return marked


# ------------------------------------------------------------- what the RNEA pictures show

def torque_parts(model, q, qd, qdd):
    """The joint forces of ``rnea`` split into three parts, each one rnea call:

    ``gravity = rnea(q, 0, 0)``, ``velocity = rnea(q, qd, 0) − gravity`` (Coriolis and
    centripetal), ``inertial = rnea(q, 0, qdd) − gravity`` (= H(q) qdd); their sum is
    ``total = rnea(q, qd, qdd)`` because the velocity terms do not depend on qdd.
    """
    zero = np.zeros(model.nv)
    gravity = rnea(model, q, zero, zero)
    return {"gravity": gravity,
            "velocity": rnea(model, q, qd, zero) - gravity,
            "inertial": rnea(model, q, zero, qdd) - gravity,
            "total": rnea(model, q, qd, qdd)}


def draw_torque_bars(ax, parts, labels=None, ylim=None):
    """Grouped bars: per joint, the gravity, velocity, inertial parts and the total.

    Returns ``update(parts)``, which resizes the bars in place.
    """
    names = list(PART_COLORS)
    n = len(parts["total"])
    width = 0.8 / len(names)
    bars = {}
    for k, name in enumerate(names):
        x = np.arange(n) + (k - (len(names) - 1) / 2) * width
        bars[name] = ax.bar(x, np.zeros(n), width, color=PART_COLORS[name], label=name)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(np.arange(n))
    ax.set_xticklabels(labels or [f"joint {i + 1}" for i in range(n)])
    ax.set_ylabel("τ [N m]")
    if ylim is not None:
        ax.set_ylim(*ylim)

    def update(parts):
        for name in names:
            for bar, value in zip(bars[name], parts[name]):
                bar.set_height(value)

    update(parts)
    return update


def transmitted_forces(model, q, qd, qdd, f_ext=None):
    """The whole spatial force each joint transmits (``rnea(..., return_forces=True)``),
    moved to base coordinates (moment about the base origin), gravity included.
    Returns a list ``f[i]`` (entry 0 unused): the force exerted by body λ(i) on body i."""
    f = rnea_forces(model, q, qd, qdd, f_ext=f_ext).f
    X0 = forward_kinematics(model, q)
    return [None] + [X0[i].T @ f[i] for i in range(1, model.N + 1)]     # ⁰X_i⁻ᵀ = ⁱX₀ᵀ


# ------------------------------------------------------ closed chains (Chapter 5, §3)

_POINTER_STYLE = {"child": dict(color="C0", lw=1.6, ls="-"),
                  "brother": dict(color="C2", lw=1.6, ls=":"),
                  "parent": dict(color="0.6", lw=0.9, ls="-"),
                  "real": dict(color="C3", lw=1.6, ls="--")}


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


def loop_geometry(mech, q):
    """Where to draw a planar mechanism (y-z plane): the origins of all bodies (N+1, 2),
    and for each loop the point its virtual link must meet — the real frame's origin."""
    model = mech.model
    X0 = forward_kinematics(model, q)
    origins = np.array([body_pose(X)[1][1:] for X in X0])
    targets = np.array([body_pose(lp.Xreal @ X0[lp.real])[1][1:] for lp in mech.loops])
    return origins, targets.reshape(-1, 2)


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


# ------------------------------------------------------------------------------ tables

def table(columns, rows, caption=""):
    """A table for the page: Markdown, which the book (MyST) and JupyterLab show as HTML.

    ``columns``: (title, format) pairs; a number in a column with a format such as
    ``".3f"`` is shown with it and right-aligned (a value that rounds to zero as 0.000,
    not −0.000); text, and every cell of a column whose format is ``""``, is shown as
    it is. Titles and text may hold ``$math$``."""
    from IPython.display import Markdown

    def cell(x, spec=""):
        if not spec or isinstance(x, str):
            return str(x).replace("|", "\\|")
        text = format(x, spec)
        return text.lstrip("+-") if float(text) == 0 else text
    lines = ["| " + " | ".join(cell(title) for title, _ in columns) + " |",
             "|" + "|".join("---:" if spec else ":---" for _, spec in columns) + "|"]
    lines += ["| " + " | ".join(cell(x, spec) for x, (_, spec) in zip(row, columns))
              + " |" for row in rows]
    return Markdown((caption + "\n\n" if caption else "") + "\n".join(lines))


def to_jshtml(animation, fps=None, default_mode=None):
    """The HTML player of a matplotlib ``animation`` with its frames embedded, as
    ``animation.to_jshtml(fps, default_mode=…)`` makes it, in a fraction of the time.

    Matplotlib draws the whole figure for every frame (axes, ticks, labels, legend), and
    draws it twice: once when the frame is updated (``canvas.draw_idle``, meant for a
    window on screen), once to save it. Here the first is skipped, and most frames are
    drawn by blitting (:class:`_BlittedFrames`): only the artists the animation changes
    are drawn again, over a saved picture of the rest."""
    fig = animation._fig
    if fps is None and hasattr(animation, "_interval"):
        fps = 1000 / animation._interval
    if default_mode is None:
        default_mode = "loop" if getattr(animation, "_repeat", False) else "once"
    fig.canvas.draw_idle = lambda *args, **kw: None    # shadows the method, for this call
    try:
        with TemporaryDirectory() as folder:
            path = Path(folder, "animation.html")
            animation.save(path, writer=_BlittedFrames(fps=fps, embed_frames=True,
                                                          default_mode=default_mode))
            return path.read_text()
    finally:
        del fig.canvas.draw_idle


def _changed_artists(fig):
    """The artists of ``fig`` that changed since they were last drawn, each drawn on its
    own by ``draw_artist`` (matplotlib marks an artist *stale* when one of its
    properties is set, and every artist that holds it too); or None when the figure or
    an axes changed itself and none of its parts did (e.g. a part was removed). An
    artist made of parts (an axis, a legend) counts as one."""
    if not fig.stale:
        return []
    changed, todo = [], [fig]
    while todo:
        artist = todo.pop()
        children = artist.get_children()
        stale = [child for child in children if child.stale]
        if not isinstance(artist, (FigureBase, Axes)):
            changed.append(artist)
        elif not stale:
            return None                              # the container itself changed
        else:
            todo += stale
    return changed


def _drawn_over(fig, moving):
    """The ``moving`` artists and every artist that the figure or an axes draws after one
    of them (they draw their parts by zorder, in the order of ``get_children``), in the
    order they are drawn: what a blitted frame draws over the still picture."""
    order = []
    for holder in fig.axes + [fig]:                     # the axes first (zorder 0)
        parts = [a for a in holder.get_children() if a is not holder.patch
                 and not isinstance(a, Axes) and a.get_visible()]
        if isinstance(holder, Axes) and not (holder.axison and holder.get_frame_on()):
            parts = [a for a in parts if a not in holder.spines.values()]
        if isinstance(holder, Axes) and not holder.axison:
            parts = [a for a in parts if a not in (holder.xaxis, holder.yaxis)]
        parts.sort(key=lambda a: a.get_zorder())               # stable, as draw sorts
        first = min((k for k, a in enumerate(parts) if a in moving), default=len(parts))
        order += parts[first:]
    return order


def _clear_stale(artist):
    """Mark ``artist`` and its stale parts drawn (as :func:`_changed_artists`, only the
    stale branches are visited: a change marks every artist that holds it)."""
    artist.stale = False          # (setting False is not passed on to the parents)
    for child in artist.get_children():
        if child.stale:
            _clear_stale(child)


class _BlittedFrames(HTMLWriter):
    """matplotlib's HTMLWriter (frames embedded as PNG), whose frames are drawn by
    blitting: the figure is drawn once without the artists the animation moves, and
    each frame pastes that picture and draws those artists over it
    (``canvas.restore_region``, ``figure.draw_artist``), with every artist drawn after
    one of them (:func:`_drawn_over`), so that the frame is the whole drawing's, pixel
    for pixel. The artists that move are found from frame to frame
    (:func:`_changed_artists`); when the set changes (a new one moves, one is added or
    removed) the still picture is drawn again. The first frame, and one where an axes
    or the figure changed itself, are drawn whole, as matplotlib draws every frame."""

    def setup(self, fig, outfile, dpi=None, frame_dir=None):
        super().setup(fig, outfile, dpi, frame_dir)
        self._changed, self._moving, self._background = set(), [], None

    def _draw_whole(self, **savefig_kwargs):
        png = io.BytesIO()
        self.fig.savefig(png, format=self.frame_format, dpi=self.dpi, **savefig_kwargs)
        return png.getvalue()

    def _draw_blitted(self, changed):
        fig, canvas = self.fig, self.fig.canvas
        self._changed = {a for a in self._changed | set(changed)
                         if a.get_figure(root=True) is fig}       # (not removed since)
        moving = _drawn_over(fig, self._changed)
        if self._background is None or moving != self._moving:
            self._moving = moving
            # the picture without them: a text is emptied rather than hidden, as an
            # axes places its title from the title's extent, which hiding empties
            texts = [(a, a.get_text()) for a in moving if isinstance(a, Text)]
            shown = [a for a in moving if a.get_visible() and not isinstance(a, Text)]
            for artist, _ in texts:
                artist.set_text("")
            for artist in shown:
                artist.set_visible(False)
            canvas.draw()
            self._background = canvas.copy_from_bbox(fig.bbox)
            for artist, text in texts:
                artist.set_text(text)
            for artist in shown:
                artist.set_visible(True)
        canvas.restore_region(self._background)
        for artist in self._moving:
            fig.draw_artist(artist)
        png = io.BytesIO()
        imsave(png, np.asarray(canvas.buffer_rgba()), format="png", dpi=fig.dpi)
        return png.getvalue()

    def grab_frame(self, **savefig_kwargs):
        fig = self.fig
        changed = _changed_artists(fig) if self._saved_frames else None
        # (Animation.save asks for the figure's own background colour, opaque)
        extra = dict(savefig_kwargs)
        as_drawn = (to_rgba(extra.pop("facecolor", fig.get_facecolor()))
                    == to_rgba(fig.get_facecolor())
                    and not extra.pop("transparent", False) and not extra)
        if (changed is None or not as_drawn or self.dpi != fig.dpi
                or self.frame_format != "png" or not hasattr(fig.canvas, "copy_from_bbox")):
            self._changed, self._moving, self._background = set(), [], None
            png = self._draw_whole(**savefig_kwargs)
        else:
            png = self._draw_blitted(changed)
        _clear_stale(self.fig)
        frame = base64.encodebytes(png).decode("ascii")
        self._total_bytes += len(frame)
        if self._total_bytes >= self._bytes_limit:
            raise RbdlearnError(f"the animation's frames exceed matplotlib's "
                                f"animation.embed_limit ({self._bytes_limit / 2**20:g} MB): "
                                f"fewer frames, a smaller figure or a larger limit")
        self._saved_frames.append(frame)
