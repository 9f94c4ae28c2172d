"""What the 3-D viewer's tests share (tests/test_view3d_browser.py, tests/test_view3d_lab.py):
a scene JSON made here by hand from rbdlearn's numbers (the format of
rbdlearn/viz/scene3d.py, version 1: primitive shapes, a marker, a tiny mesh pack, two runs
over a parameter, a plot and a read-out), the poses a scene's JSON holds and those
rbdlearn's forward kinematics gives for its models, and the scripts that read a mounted
view in the browser.
"""

import base64
import importlib
import json
import struct

import numpy as np

import rbdlearn
from rbdlearn.kinematics import body_pose
from rbdlearn.spatial import rot_to_quat

ROOT_URL_PACK = "rbd3d-test-tetra"


def b64(array, dtype):
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).astype(
        np.dtype(dtype).newbyteorder("<")).tobytes()).decode()


def unb64(text, dtype, shape):
    return np.frombuffer(base64.b64decode(text), dtype=np.dtype(dtype).newbyteorder("<")) \
        .reshape(shape)


def tetra_pack():
    """A mesh pack (.rbdm) holding one tetrahedron "tetra" of edge about 0.2 (in the format
    of spec29: magic, header length, JSON header, padding, uint16 positions, u16 indices)."""
    vertices = np.array([[0, 0, 0], [0.2, 0, 0], [0, 0.2, 0], [0, 0, 0.2]])
    triangles = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype="<u2")
    lo, step = vertices.min(0), (vertices.max(0) - vertices.min(0)) / 65535
    quantized = np.round((vertices - lo) / step).astype("<u2").tobytes()
    quantized += b"\0" * (-len(quantized) % 4)
    header = json.dumps({"meshes": [{"name": "tetra", "vertices": 4, "triangles": 4,
                                     "offset": 0, "min": lo.tolist(), "step": step.tolist(),
                                     "index": "u16"}]}).encode()
    head = b"RBDM1\0\0\0" + struct.pack("<I", len(header)) + header
    return head + b"\0" * (-len(head) % 4) + quantized + triangles.tobytes()


def pose7(X0_i):
    R, p = body_pose(X0_i)
    return np.concatenate([p, rot_to_quat(R)])


def sample_scene(frames=40, inline=True):
    """The planar biped of rbdlearn.models swinging its legs, two runs (swing amplitude),
    with a force arrow at the torso, a plot, a read-out and a tetrahedron mesh on the torso.
    ``inline``: the mesh pack inside the JSON (live mode) rather than fetched by URL."""
    model, _ = rbdlearn.models.planar_biped()
    t = np.linspace(0.0, 1.5, frames)      # the last frame differs from the first
    amplitudes = [0.4, 0.9]
    bodies = [(3, "torso", [{"type": "box", "size": [0.12, 0.2, 0.5],
                             "origin": [0, 0, 0.25, 1, 0, 0, 0], "color": "#4c72b0"},
                            {"type": "mesh", "pack": ROOT_URL_PACK, "mesh": "tetra",
                             "origin": [0, 0, 0.5, 1, 0, 0, 0], "color": "#dd8452"}]),
              (4, "thigh_L", [{"type": "capsule", "radius": 0.05, "length": 0.35,
                               "origin": [0, 0, -0.225, 1, 0, 0, 0], "color": "#55a868"}]),
              (5, "shin_L", [{"type": "cylinder", "radius": 0.04, "length": 0.45,
                              "origin": [0, 0, -0.225, 1, 0, 0, 0], "color": "#55a868"}]),
              (6, "thigh_R", [{"type": "capsule", "radius": 0.05, "length": 0.35,
                               "origin": [0, 0, -0.225, 1, 0, 0, 0], "color": "#c44e52"}]),
              (7, "shin_R", [{"type": "sphere", "radius": 0.06,
                              "origin": [0, 0, -0.45, 1, 0, 0, 0], "color": "#c44e52"}])]
    runs = []
    for a in amplitudes:
        q = np.zeros((frames, model.nq))
        q[:, 1] = 1.0
        q[:, 3] = a * np.sin(2 * np.pi * t / 2)
        q[:, 4] = 0.3 + 0.3 * np.sin(2 * np.pi * t / 2)
        q[:, 5] = -q[:, 3]
        X0 = rbdlearn.forward_kinematics(model, q)
        poses = np.array([[pose7(X0[i][k]) for i, _, _ in bodies] for k in range(frames)])
        length = 0.2 + 0.2 * (1 + np.sin(2 * np.pi * t))
        arrow = np.tile([0.0, 0.0, 1.5, 1.0, 0.0, 0.0, 0.0], (frames, 1))
        poses = np.concatenate([poses, arrow[:, None, :]], axis=1)
        scales = np.ones((frames, len(bodies) + 1, 3))
        scales[:, -1, 2] = length
        runs.append({"poses": b64(poses, "f4"), "scales": b64(scales, "f4"),
                     "q": [b64(q, "f8")],
                     "plots": [{"title": "hip angles (rad)",
                                "series": [{"name": "hip L", "values": q[:, 3].tolist()},
                                           {"name": "hip R", "values": q[:, 5].tolist()}]}],
                     "readout": [f"t = {x:.2f} s, hip L = {h:+.3f} rad"
                                 for x, h in zip(t, q[:, 3])]})
    scene = {"rbd3d": 1, "title": "Planar biped swinging its legs (test scene)", "up": "z",
             "scrub": {"label": "t (s)", "values": t.tolist()},
             "param": {"label": "swing (rad)", "values": amplitudes, "index": 0},
             "packs": {ROOT_URL_PACK: {"test": True}},
             "bodies": [{"name": name, "model": 0, "body": i, "shapes": shapes}
                        for i, name, shapes in bodies]
             + [{"name": "push", "shapes": [{"type": "arrow", "radius": 0.015,
                                             "color": "#d62728"}], "scaled": True}],
             "models": [{"name": "planar biped",
                         "source": {"factory": "rbdlearn.models.planar_biped",
                                    "kwargs": {}}}],
             "runs": runs}
    if inline:
        scene["inline_packs"] = {ROOT_URL_PACK: base64.b64encode(tetra_pack()).decode()}
    return scene


def scene_html(scene):
    """The div the book's pages hold for a scene (as Scene._repr_html_ writes it in the
    static mode): the JSON in a script element of type application/json."""
    text = json.dumps(scene).replace("</", "<\\/")
    return f'<div class="rbd3d"><script type="application/json">{text}</script></div>'


def json_poses(scene, run, frame):
    """(B, 7) poses of the JSON for ``run`` at ``frame``."""
    F, B = len(scene["scrub"]["values"]), len(scene["bodies"])
    return unb64(scene["runs"][run]["poses"], "f4", (F, B, 7))[frame].astype(float)


def rebuilt_model(source):
    """The model a scene's models[].source names (an URDF of example-robot-data or a
    factory of rbdlearn); factories that return (model, extras) give their model."""
    if "urdf" in source:
        from rbdlearn import urdf
        return urdf.load(rbdlearn.example_robot_path(source["urdf"]),
                         floating_base=source.get("floating_base", False))
    module, _, name = source["factory"].rpartition(".")
    made = getattr(importlib.import_module(module), name)(**source.get("kwargs", {}))
    return made[0] if isinstance(made, tuple) else made


def kinematics_poses(scene, run, frame):
    """{body index in the JSON: 7-vector} for every body of a rebuildable model, from
    rbdlearn.forward_kinematics at the JSON's q of that run and frame."""
    F = len(scene["scrub"]["values"])
    out = {}
    for k, m in enumerate(scene["models"]):
        if m.get("source") is None:
            continue
        model = rebuilt_model(m["source"])
        q = unb64(scene["runs"][run]["q"][k], "f8", (F, -1))[frame]
        X0 = rbdlearn.forward_kinematics(model, q)
        for b, body in enumerate(scene["bodies"]):
            if body.get("model") == k:
                out[b] = pose7(X0[body["body"]])
    return out


def same_pose(a, b, tol=2e-5):
    """Two poses [x,y,z,qw,qx,qy,qz] agree (a quaternion and its negative are one
    rotation)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    q = min(np.abs(a[3:] - b[3:]).max(), np.abs(a[3:] + b[3:]).max())
    return np.abs(a[:3] - b[:3]).max() <= tol * max(1, np.abs(b[:3]).max()) and q <= tol


# In the browser: wait for every view of the page to have drawn, then read it
ALL_DRAWN = """() => {
    const views = [...document.querySelectorAll('div.rbd3d')];
    return views.length > 0 && views.every(v => (v.rbd3d && v.rbd3d.rendered > 0)
                                               || v.querySelector('.rbd3d-error'));
}"""

# the canvas's pixels: how many distinct colours, and a hash of them (to see a change)
CANVAS_PIXELS = """el => {
    const c = el.querySelector('canvas.rbd3d-canvas');
    const gl = c.getContext('webgl2') || c.getContext('webgl');
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const px = new Uint8Array(4 * w * h);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    const colours = new Set();
    let hash = 0;
    for (let k = 0; k < px.length; k += 4) {
        const v = (px[k] << 16) | (px[k + 1] << 8) | px[k + 2];
        colours.add(v);
        hash = (Math.imul(hash, 31) + v + k) | 0;
    }
    return {colours: colours.size, hash, width: w, height: h};
}"""
