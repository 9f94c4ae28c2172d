"""Robot meshes for the 3-D views (issue 29): the mesh files a URDF of example-robot-data
names, read from STL (binary or ASCII), reduced by vertex clustering where asked, and
packed, quantized to 16 bits, into one file per robot and kind (a ``.rbdm`` pack) that
the viewer loads once for the whole book.

A pack is described by its recipe ``{"urdf": path in example-robot-data, "kind":
"visual"|"collision", "cell": metres}`` and named ``<urdf stem>-<kind>``
(:func:`pack_name`). Its bytes (little-endian): the magic ``RBDM1\\0\\0\\0``, a uint32
header length H, H bytes of JSON ``{"meshes": [{"name", "vertices", "triangles",
"offset", "min", "step", "index"}, …]}`` padded with zeros to a multiple of 4, then per
mesh at its offset (from the data's start): n·3 uint16 positions (``min + step·u``, in
the mesh file's units), zero padding to 4, m·3 indices (uint16, or uint32 for more than
65535 vertices), zero padding to 4.
"""

import functools
import gzip
import json
import os
import re
import struct
from pathlib import Path

import numpy as np

from ..errors import SceneError
from ..urdf import example_robot_path, link_frames

__all__ = ["pack_bytes", "write_pack", "read_pack", "read_stl", "cluster_vertices",
           "pack_name", "gzip_size", "PACK_MAGIC"]

PACK_MAGIC = b"RBDM1\0\0\0"
"""The first 8 bytes of a mesh pack."""

_PACKAGE = "package://example-robot-data/robots/"


def mesh_elements(frames, kind):
    """Per link element of ``kind`` (``visual``/``collision``): (link, element, file of
    its mesh or None)."""
    out = []
    for link, (el, _, _) in frames.items():
        for k, item in enumerate(el.findall(kind)):
            geometry = item.find("geometry")
            if geometry is None or len(geometry) == 0:
                raise SceneError(f"link '{link}' <{kind}> number {k + 1} has no geometry")
            g = geometry[0]
            path = None
            if g.tag == "mesh":
                name = g.get("filename", "")
                if not name.startswith(_PACKAGE):
                    raise SceneError(f"link '{link}' <{kind}>: mesh '{name}' is not a file "
                                     f"of example-robot-data ({_PACKAGE}…)")
                path = name[len(_PACKAGE):]
            out.append((link, item, g, path))
    return out


def _mesh_names(paths):
    """A short unique name per mesh file: its path below the folder all of them share,
    without the extension (``shoulder``; ``gripper/base_link`` where two folders hold a
    file of the same name)."""
    paths = sorted(set(paths))
    if not paths:
        return {}
    parts = [p.split("/") for p in paths]
    common = 0
    while (all(len(p) > common + 1 for p in parts)
           and len({p[common] for p in parts}) == 1):
        common += 1
    return {p: os.path.splitext("/".join(q[common:]))[0] for p, q in zip(paths, parts)}


def robot_elements(urdf, kind):
    """``(frames, items, names)`` of a URDF of example-robot-data: ``urdf.link_frames``,
    (link, element, geometry, mesh path) per element of ``kind``, {mesh path: name}."""
    if kind not in ("visual", "collision"):
        raise SceneError(f"kind must be 'visual' or 'collision', got {kind!r}")
    xml = Path(example_robot_path(urdf)).read_bytes()
    frames = link_frames(xml)
    items = mesh_elements(frames, kind)
    return frames, items, _mesh_names(p for _, _, _, p in items if p)


def check_recipe(recipe):
    if not isinstance(recipe, dict) or set(recipe) != {"urdf", "kind", "cell"}:
        raise SceneError(f"a pack recipe is a dict with keys urdf, kind, cell; "
                         f"got {recipe!r}")
    cell = recipe["cell"]
    if (not isinstance(recipe["urdf"], str) or recipe["kind"] not in ("visual", "collision")
            or not isinstance(cell, (int, float)) or not np.isfinite(cell) or cell < 0):
        raise SceneError(f"pack recipe {recipe!r}: urdf must be a path in "
                         f"example-robot-data, kind 'visual' or 'collision', cell >= 0 "
                         f"(metres)")
    return {"urdf": recipe["urdf"], "kind": recipe["kind"], "cell": float(cell)}


def pack_name(recipe):
    """The name of a pack: ``<urdf stem>-<kind>`` (``ur5_robot-collision``)."""
    recipe = check_recipe(recipe)
    return f"{Path(recipe['urdf']).stem}-{recipe['kind']}"


def read_stl(path):
    """``(vertices (n, 3) float32, triangles (m, 3) int)`` of an STL file, binary or
    ASCII, with equal vertices merged (their order: sorted, so deterministic)."""
    data = Path(path).read_bytes()
    binary = len(data) >= 84 and len(data) == 84 + 50 * struct.unpack_from("<I", data, 80)[0]
    if binary:
        m = struct.unpack_from("<I", data, 80)[0]
        rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)),
                                                  ("a", "<u2")]), count=m, offset=84)
        corners = rec["v"].reshape(-1, 3)
    elif data.lstrip()[:5].lower() == b"solid":
        words = re.findall(rb"vertex\s+(\S+)\s+(\S+)\s+(\S+)", data)
        try:
            corners = np.array(words, dtype=np.float32).reshape(-1, 3)
        except ValueError:
            raise SceneError(f"STL file {path}: a vertex is not three numbers") from None
        if len(corners) % 3:
            raise SceneError(f"STL file {path}: {len(corners)} vertices, not a multiple "
                             f"of 3")
    else:
        raise SceneError(f"{path} is not an STL file (binary size or 'solid' header)")
    if not np.all(np.isfinite(corners)):
        raise SceneError(f"STL file {path}: a vertex is not finite")
    vertices, inverse = np.unique(corners, axis=0, return_inverse=True)
    return vertices, inverse.reshape(-1, 3)


def _clean(vertices, triangles):
    """Drop triangles with a repeated vertex and repeated triangles (same three
    vertices), then vertices no triangle uses; the order of what stays is kept."""
    t = triangles[(triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2])
                  & (triangles[:, 0] != triangles[:, 2])]
    _, first = np.unique(np.sort(t, axis=1), axis=0, return_index=True)
    t = t[np.sort(first)]
    used, t = np.unique(t, return_inverse=True)
    return vertices[used], t.reshape(-1, 3)


def cluster_vertices(vertices, triangles, cell):
    """Vertex clustering: the vertices in one cubic cell of side ``cell`` (a grid with a
    corner at the smallest coordinates) become their mean; triangles that collapse (two
    corners in one cell) are dropped, and so are repeated ones. Deterministic."""
    v = np.asarray(vertices, dtype=float)
    if cell <= 0:
        return _clean(v, triangles)
    keys = np.floor((v - v.min(axis=0)) / cell).astype(np.int64)
    _, cluster = np.unique(keys, axis=0, return_inverse=True)
    cluster = cluster.ravel()
    count = np.bincount(cluster)
    mean = np.stack([np.bincount(cluster, v[:, k]) for k in range(3)], axis=1) / count[:, None]
    return _clean(mean, cluster[triangles])


@functools.lru_cache(maxsize=16)
def _pack_meshes(urdf, kind, cell):
    """{mesh name: (vertices float, triangles)} of a pack, reduced, sorted by name."""
    _, _, names = robot_elements(urdf, kind)
    out = {}
    for path, name in sorted(names.items(), key=lambda x: x[1]):
        file = Path(example_robot_path(path))
        if file.suffix.lower() != ".stl":
            raise SceneError(f"mesh '{path}' is not an STL file; the packs read STL only "
                             f"(use kind='collision' for this robot)")
        v, t = read_stl(file)
        out[name] = cluster_vertices(v, t, cell)
    return out


def _quantize(v):
    lo, hi = v.min(axis=0), v.max(axis=0)
    step = np.where(hi > lo, (hi - lo) / 65535, 0.0)
    u = np.rint((v - lo) / np.where(step > 0, step, 1)).clip(0, 65535).astype("<u2")
    return lo, step, u


def pack_bytes(recipe):
    """The mesh pack of ``recipe`` ``{"urdf": path in example-robot-data, "kind":
    "visual"|"collision", "cell": metres}``, as bytes (the ``.rbdm`` format): every mesh
    file the URDF's elements of that kind name, read from STL, reduced by vertex
    clustering at ``cell`` (0: only equal vertices merged), positions quantized to
    uint16 per axis over the mesh's bounding box (``position = min + step·u``), indices
    uint16 or uint32. The same recipe gives the same bytes."""
    r = check_recipe(recipe)
    meshes = _pack_meshes(r["urdf"], r["kind"], r["cell"])
    header, blobs, offset = [], [], 0
    for name, (v, t) in meshes.items():
        lo, step, u = _quantize(v)
        wide = len(v) > 65535
        index = t.astype("<u4" if wide else "<u2")
        data = u.tobytes()
        data += b"\0" * (-len(data) % 4)
        data += index.tobytes()
        data += b"\0" * (-len(data) % 4)
        header.append({"name": name, "vertices": len(v), "triangles": len(t),
                       "offset": offset, "min": [float(x) for x in lo],
                       "step": [float(x) for x in step], "index": "u32" if wide else "u16"})
        blobs.append(data)
        offset += len(data)
    text = json.dumps({"meshes": header}, separators=(",", ":")).encode()
    text += b"\0" * (-len(text) % 4)
    return PACK_MAGIC + struct.pack("<I", len(text)) + text + b"".join(blobs)


def read_pack(data):
    """``{name: (positions (n, 3) float, triangles (m, 3))}`` of a pack's bytes: what the
    viewer decodes."""
    if data[:8] != PACK_MAGIC:
        raise SceneError("not a mesh pack (magic RBDM1)")
    (h,) = struct.unpack_from("<I", data, 8)
    header = json.loads(data[12:12 + h].rstrip(b"\0"))
    start = 12 + h
    out = {}
    for m in header["meshes"]:
        at = start + m["offset"]
        u = np.frombuffer(data, "<u2", m["vertices"] * 3, at).reshape(-1, 3)
        at += u.nbytes + (-u.nbytes % 4)
        t = np.frombuffer(data, "<u4" if m["index"] == "u32" else "<u2",
                          m["triangles"] * 3, at).reshape(-1, 3)
        out[m["name"]] = (np.asarray(m["min"]) + np.asarray(m["step"]) * u, t.astype(int))
    return out


def write_pack(name, recipe, path):
    """Write the pack of ``recipe`` (:func:`pack_bytes`) to ``path`` (a file, or a
    folder: then ``<folder>/<name>.rbdm``), checking that ``name`` is the recipe's pack
    name. Returns the file's path."""
    if name != pack_name(recipe):
        raise SceneError(f"pack name {name!r} does not match its recipe "
                         f"({pack_name(recipe)!r})")
    path = Path(path)
    if path.is_dir():
        path = path / f"{name}.rbdm"
    data = pack_bytes(recipe)
    if not (path.is_file() and path.read_bytes() == data):
        path.write_bytes(data)
    return str(path)


def gzip_size(data):
    """The size of ``data`` gzip-compressed (level 9, as a web server might serve it)."""
    return len(gzip.compress(data, compresslevel=9, mtime=0))
