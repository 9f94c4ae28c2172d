"""Pictures of Chapter 1 (spatial vectors §1, a body's dynamics §2, the RNEA §3): planar
arms, planar spatial vectors, kinematic trees in 3-D, and the RNEA's torques and forces.

Planar pictures live in the y-z plane of the base frame (y to the right, z up, x out
of the page), the plane in which :func:`rbdlearn.planar_chain` moves. A planar motion
vector ``[ω, 0, 0, 0, v_y, v_z]`` is a rotation about a point (its instantaneous
centre) and a planar force ``[n, 0, 0, 0, f_y, f_z]`` is a force along a line (its
line of action); :func:`rbdlearn.spatial.motion_centre_2d` and
:func:`rbdlearn.spatial.force_line_2d` find them.
"""

import numpy as np

from .. import body_pose, forward_kinematics, point_velocity
from ..spatial import force_line_2d, inertia_params, motion_centre_2d, plux, rotx

__all__ = ["chain_geometry", "draw_planar_chain", "ChainDrawing", "draw_velocity_field", "draw_force_line", "draw_frame_2d",
           "draw_tree_3d", "draw_tree_views", "draw_torque_bars", "PART_COLORS"]

PART_COLORS = {"gravity": "#4C72B0", "velocity": "#DD8452", "inertial": "#55A868",
               "total": "#444444"}
"""Colours of the torque parts, shared by the widget and the static figures."""

# --------------------------------------------------------------------------- planar arm


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


# -------------------------------------------------------------------------------------
# Chapter 1: where the pictures put things (coordinates from the kinematics, no
# drawing), each tested in tests/test_viz.py.


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
