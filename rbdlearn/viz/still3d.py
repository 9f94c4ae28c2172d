"""The still image of a 3-D scene (``rbdlearn.viz.scene3d``): its shapes' triangles at
one frame drawn with matplotlib (mplot3d), flat-shaded, from the scene's camera; shown
where WebGL is missing and in print."""

import itertools

import numpy as np

from ..errors import SceneError
from ..spatial import quat_to_rot as quats_to_rot
from .meshpack import _pack_meshes

__all__ = ["still_pixels"]


def still_pixels(bodies, poses, scales, camera=None, width=640, height=400):
    """An RGB array (height, width, 3) of the scene's ``bodies`` (the JSON's list, with
    each mesh shape's ``recipe``) at ``poses`` (B, 7) and ``scales`` (B, 3), seen from
    ``camera`` (``{"position", "target"}``; None: from the front right, above), the
    scene's bounding box filling the picture."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    tris, colors = [], []
    for body, pose, scale in zip(bodies, poses, scales):
        Rb = quats_to_rot(pose[3:])
        for s in body["shapes"]:
            t = _shape_triangles(s)
            if t is None or len(t) == 0:
                continue
            t = t * np.asarray(s.get("scale", (1, 1, 1)))
            o = np.asarray(s.get("origin", (0, 0, 0, 1, 0, 0, 0)))
            t = t @ quats_to_rot(o[3:]).T + o[:3]
            t = (t * scale) @ Rb.T + pose[:3]
            tris.append(t)
            colors.append(np.broadcast_to(_rgb(s["color"]), (len(t), 3)))
    fig = Figure(figsize=(width / 100, height / 100), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1), projection="3d")
    ax.set_axis_off()
    if tris:
        T, C = np.concatenate(tris), np.concatenate(colors)
        lo, hi = T.reshape(-1, 3).min(0), T.reshape(-1, 3).max(0)
        if camera:
            view = np.subtract(camera["position"], camera["target"])
        else:
            view = np.array([1.0, -1.4, 0.8])
        view = view / np.linalg.norm(view)
        n = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
        light = view + np.array([0.2, 0.1, 0.6])
        light /= np.linalg.norm(light)
        shade = 0.45 + 0.55 * np.abs(n @ light)       # two-sided: STL windings vary
        ax.add_collection3d(Poly3DCollection(T, facecolors=C * shade[:, None],
                                             edgecolors="none", linewidths=0))
        centre, half = (lo + hi) / 2, max((hi - lo).max() / 2, 1e-6)
        for setter, c in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), centre):
            setter(c - half, c + half)
        ax.set_box_aspect((1, 1, 1), zoom=1.25)
        ax.view_init(elev=np.degrees(np.arcsin(view[2])),
                     azim=np.degrees(np.arctan2(view[1], view[0])))
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def _rgb(color):
    c = color.lstrip("#")
    if len(c) == 3:
        c = "".join(ch * 2 for ch in c)
    return np.array([int(c[k:k + 2], 16) for k in (0, 2, 4)]) / 255


def _circle(n):
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def _lathe(profile, n=16):
    """Triangles (m, 3, 3) of a surface of revolution about z: profile (k, 2) of
    (radius, z) points."""
    c = _circle(n)
    ring = lambda r, z: np.column_stack([r * c, np.full(n, z)])
    tris = []
    for (r0, z0), (r1, z1) in zip(profile[:-1], profile[1:]):
        a, b = ring(r0, z0), ring(r1, z1)
        a2, b2 = np.roll(a, -1, 0), np.roll(b, -1, 0)
        if r0 > 0:
            tris.append(np.stack([a, a2, b], 1))
        if r1 > 0:
            tris.append(np.stack([a2, b2, b], 1))
    return np.concatenate(tris)


def _shape_triangles(s):
    """The triangles (m, 3, 3) of a shape in its own frame (before scale and origin)."""
    t = s["type"]
    if t == "box":
        a = np.asarray(s["size"]) / 2
        corners = np.array(list(itertools.product((-1, 1), repeat=3))) * a
        faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
                 (1, 5, 7, 3)]
        return np.array([[corners[f[0]], corners[f[k]], corners[f[k + 1]]]
                         for f in faces for k in (1, 2)])
    if t == "sphere":
        r = s["radius"]
        a = np.linspace(-np.pi / 2, np.pi / 2, 9)
        return _lathe(np.column_stack([r * np.cos(a), r * np.sin(a)]))
    if t == "cylinder":
        r, h = s["radius"], s["length"] / 2
        return _lathe(np.array([[0, -h], [r, -h], [r, h], [0, h]]))
    if t == "capsule":
        r, h = s["radius"], s["length"] / 2
        a = np.linspace(0, np.pi / 2, 5)
        lower = np.column_stack([r * np.sin(a), -h - r * np.cos(a)])
        upper = np.column_stack([r * np.cos(a), h + r * np.sin(a)])
        return _lathe(np.concatenate([lower, upper]))
    if t == "arrow":
        r = s["radius"]
        head = min(4 * r, 0.3)
        return _lathe(np.array([[0, 0], [r, 0], [r, 1 - head], [2.2 * r, 1 - head],
                                [0, 1]]))
    if t == "mesh":
        meshes = _pack_meshes(**s["recipe"])
        if s["mesh"] not in meshes:
            raise SceneError(f"pack '{s['pack']}' has no mesh '{s['mesh']}'")
        v, f = meshes[s["mesh"]]
        return v[f]
    return None
