"""rbdlearn.viz.scene3d: the 3-D scenes' JSON (poses from forward_kinematics), the shapes
read from URDFs (placed as Pinocchio places them), the mesh packs, the still image and
the notebook HTML, live and static. The viewer itself is tested in the browser
(tests/test_browser.py)."""

import base64
import gzip
import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest

import rbdlearn as rbd
from rbdlearn import spatial, urdf
from rbdlearn.errors import SceneError
from rbdlearn.viz import meshpack, poses3d
from rbdlearn.viz import scene3d as s3
from test_view3d_browser import browser, browser_test, check_views, live_file, \
    watched3d  # noqa: F401

UR5 = "ur_description/urdf/ur5_robot.urdf"
PANDA = "panda_description/urdf/panda.urdf"
TALOS = "talos_data/robots/talos_reduced.urdf"
# the packs the book uses, and the cell of Talos's reduction
BOOK_PACKS = [{"urdf": UR5, "kind": "collision", "cell": 0.0},
              {"urdf": PANDA, "kind": "collision", "cell": 0.0},
              {"urdf": TALOS, "kind": "visual", "cell": 0.01}]      # ch. 2 uses 0.01


def _load(path, floating=False):
    return urdf.load(urdf.example_robot_path(path), floating_base=floating, mimic=False)


def _decode(text, dtype, shape):
    return np.frombuffer(base64.b64decode(text), dtype=np.dtype(dtype).newbyteorder("<")
                         ).reshape(shape)


def _quat_rot(q):
    return spatial.quat_to_rot(np.asarray(q, dtype=float))


def _ur5_scene(F=12, runs=None):
    model = _load(UR5)
    t = np.linspace(0, 1.1, F)
    q = np.stack([0.4 * np.sin(2 * t + k) for k in range(model.nq)], axis=1)
    scene = s3.Scene("UR5 test", ("t (s)", t))
    scene.add_model(model, q if runs is None else [q * (1 + r) for r in range(runs)],
                    s3.robot_shapes(model, UR5), name="UR5",
                    source={"urdf": UR5, "floating_base": False})
    return scene, model, t, q


# --------------------------------------------------------------------------------------
# JSON


def test_poses_in_the_json_are_forward_kinematics_at_every_frame():
    scene, model, t, q = _ur5_scene()
    data = json.loads(json.dumps(scene.to_json()))
    assert data["rbd3d"] == 1 and data["up"] == "z" and data["title"] == "UR5 test"
    assert data["scrub"] == {"label": "t (s)", "values": list(t)}
    bodies = data["bodies"]
    assert [b["body"] for b in bodies] == list(range(model.N + 1))
    assert [b["name"] for b in bodies] == list(model.body_names)
    assert data["packs"] == {"ur5_robot-collision": BOOK_PACKS[0]}
    assert data["models"] == [{"name": "UR5", "source": {"urdf": UR5, "floating_base": False}}]
    (run,) = data["runs"]
    F, B = len(t), len(bodies)
    poses = _decode(run["poses"], "f4", (F, B, 7))
    assert np.array_equal(_decode(run["q"][0], "f8", (F, model.nq)), q)
    assert run["scales"] is None and run["readout"] is None
    for k in range(F):
        X0 = rbd.forward_kinematics(model, q[k])
        for b, body in enumerate(bodies):
            R, p = rbd.body_pose(X0[body["body"]])
            assert np.allclose(poses[k, b, :3], p, atol=2e-7)
            quat = poses[k, b, 3:].astype(float)
            assert quat[0] >= 0 and abs(np.linalg.norm(quat) - 1) < 1e-6
            assert np.allclose(_quat_rot(quat / np.linalg.norm(quat)), R, atol=1e-6)
    # a body that moves does move: the poses are not all the same
    assert np.ptp(poses[:, -1, :3], axis=0).max() > 0.05


def test_runs_plots_readout_and_markers():
    scene, model, t, q = _ur5_scene(F=5, runs=3)
    scene.set_param("speed ×", [1, 2, 3], index=1)
    scene.add_plot("τ (N·m)", {"τ1": [t, 2 * t, 3 * t], "τ2": np.cos(t)})
    scene.set_readout([[f"run {r} frame {k}" for k in range(5)] for r in range(3)])
    origins, vectors = np.zeros((5, 3)), np.tile([0.0, 0.0, 0.5], (5, 1))
    scene.add_marker("force", [s3.shape("arrow", radius=0.01, color="#d62728")],
                     *s3.arrow_poses(origins, vectors))
    data = scene.to_json()
    assert data["param"] == {"label": "speed ×", "values": [1.0, 2.0, 3.0], "index": 1}
    assert len(data["runs"]) == 3
    B = len(data["bodies"])
    assert data["bodies"][-1] == {"name": "force", "scaled": True, "shapes": [
        {"type": "arrow", "radius": 0.01, "color": "#d62728"}]}
    for r, run in enumerate(data["runs"]):
        qr = _decode(run["q"][0], "f8", (5, model.nq))
        assert np.array_equal(qr, q * (1 + r))
        poses = _decode(run["poses"], "f4", (5, B, 7))
        last = rbd.body_pose(rbd.forward_kinematics(model, qr[4])[model.N])[1]
        assert np.allclose(poses[4, model.N, :3], last, atol=2e-7)
        assert run["plots"][0]["series"][0]["values"] == list((1 + r) * t)
        assert run["plots"][0]["series"][1]["values"] == list(np.cos(t))   # shared
        assert run["readout"][2] == f"run {r} frame 2"
        scales = _decode(run["scales"], "f4", (5, B, 3))
        assert np.allclose(scales[:, :-1], 1) and np.allclose(scales[:, -1], [1, 1, 0.5])


def test_json_text_is_safe_inside_a_script_element():
    scene = s3.Scene("a </script><script>alert(1)</script> <!-- title",
                     ("k", [0.0, 1.0]))
    scene.add_marker("ball", [s3.shape("sphere", radius=0.1)],
                     [[0, 0, 0, 1, 0, 0, 0]] * 2)
    text = scene.json_text()
    assert "</" not in text and "<!--" not in text
    assert json.loads(text)["title"] == scene.title


# --------------------------------------------------------------------------------------
# marker poses


def _transform(poses, scales, points):
    """World positions of ``points`` (in a unit shape's frame) under each pose and scale."""
    return np.stack([(points * s) @ _quat_rot(p[3:]).T + p[:3]
                     for p, s in zip(poses, scales)])


def test_arrow_and_segment_poses_reach_their_end_points():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    b[1] = a[1] + [0, 0, -2.0]                 # straight down: the half turn
    b[2] = a[2] + [0, 0, 3.0]                  # straight up: the identity
    poses, scales = s3.arrow_poses(a, (b - a) / 2, scale=2.0)
    ends = _transform(poses, scales, np.array([[0, 0, 0], [0, 0, 1.0]]))
    assert np.allclose(ends[:, 0], a) and np.allclose(ends[:, 1], b)
    poses, scales = s3.segment_poses(a, b)
    ends = _transform(poses, scales, np.array([[0, 0, -0.5], [0, 0, 0.5]]))
    assert np.allclose(ends[:, 0], a) and np.allclose(ends[:, 1], b)
    poses, scales = s3.arrow_poses(a[:1], np.zeros((1, 3)))
    assert np.allclose(scales, [[1, 1, 0]]) and np.allclose(poses[0, 3:], [1, 0, 0, 0])


def test_ellipsoid_poses_give_the_ellipsoid_of_the_matrix():
    rng = np.random.default_rng(2)
    L = rng.normal(size=(4, 3, 3))
    A = L @ L.transpose(0, 2, 1) + 0.1 * np.eye(3)
    c = rng.normal(size=(4, 3))
    poses, scales = s3.ellipsoid_poses(c, A)
    u = rng.normal(size=(50, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)          # points of the unit sphere
    x = _transform(poses, scales, u)
    for k in range(4):
        d = x[k] - c[k]
        assert np.allclose(np.einsum("ni,ij,nj->n", d, np.linalg.inv(A[k]), d), 1)
    with pytest.raises(SceneError, match="positive definite"):
        s3.ellipsoid_poses(c[:1], -A[:1])


def test_rotation_quaternions_match_rbdlearns_on_hard_cases():
    rng = np.random.default_rng(3)
    Rs = [spatial.exp_so3(w) for w in rng.normal(size=(20, 3))]
    Rs += [spatial.exp_so3(np.pi * a / np.linalg.norm(a)) for a in rng.normal(size=(5, 3))]
    Rs += [np.eye(3), np.diag([1.0, -1, -1]), np.diag([-1.0, 1, -1]), np.diag([-1.0, -1, 1])]
    q = poses3d.rot_to_quats(np.array(Rs))
    for R, qk in zip(Rs, q):
        assert qk[0] >= 0 and np.allclose(spatial.quat_to_rot(qk), R, atol=1e-12)


# --------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("change, match", [
    (lambda s, m, q: s.add_model(m, q[:, :3], {1: [s3.shape("sphere", radius=1)]}),
     r"shape \(6, 6\), got \(6, 3\)"),
    (lambda s, m, q: s.add_model(m, q[:4], {1: [s3.shape("sphere", radius=1)]}),
     r"shape \(6, 6\), got \(4, 6\)"),
    (lambda s, m, q: s.add_model(m, np.where(q > 0.3, np.nan, q),
                                 {1: [s3.shape("sphere", radius=1)]}), "not finite"),
    (lambda s, m, q: s.add_model(m, q, {9: [s3.shape("sphere", radius=1)]}),
     "body index 9"),
    (lambda s, m, q: s.add_marker("m", [s3.shape("sphere", radius=1)],
                                  [[0, 0, 0, 1, 0, 0, 0.1]] * 6), "not unit"),
    (lambda s, m, q: s.add_marker("m", [s3.shape("sphere", radius=1)],
                                  [[0, 0, 0, 1, 0, 0, 0]] * 6, scales=np.ones((6, 2))),
     r"scales must have shape \(6, 3\)"),
    (lambda s, m, q: s.add_marker("m", [{"type": "cone"}], [[0, 0, 0, 1, 0, 0, 0]] * 6),
     "not a shape"),
    (lambda s, m, q: (s.add_plot("p", {"a": [np.zeros(6)] * 2}), s.set_param("x", [1, 2, 3])),
     "2 runs given, but the scene has 3"),
    (lambda s, m, q: (s.set_param("x", [1, 2, 3]), s.add_plot("p", {"a": [np.zeros(6)] * 2})),
     "2 runs given, but the parameter 'x' has 3"),
    (lambda s, m, q: s.set_readout(["a"] * 5), "6 strings"),
    (lambda s, m, q: s.set_param("x", [1, 2], index=2), "index 2"),
])
def test_bad_input_is_named(change, match):
    model = _load(UR5)
    scene = s3.Scene("s", ("t", np.arange(6.0)))
    q = np.random.default_rng(0).uniform(-1, 1, (6, model.nq))
    with pytest.raises(SceneError, match=match):
        change(scene, model, q)


@pytest.mark.parametrize("kwargs, match", [
    (dict(type="cone", radius=1), "unknown shape type 'cone'"),
    (dict(type="box", radius=1), "missing size; unknown radius"),
    (dict(type="box", size=(1, -1, 1)), "positive"),
    (dict(type="sphere", radius=1, color="red"), "color"),
    (dict(type="sphere", radius=1, opacity=0), "opacity"),
    (dict(type="sphere", radius=1, origin=[0, 0, 0, 2, 0, 0, 0]), "not unit"),
    (dict(type="sphere", radius=1, scale=(1, 0, 1)), "zero"),
    (dict(type="mesh", pack="p", mesh="m"), "recipe"),
])
def test_bad_shapes_are_named(kwargs, match):
    with pytest.raises(SceneError, match=match):
        s3.shape(kwargs.pop("type"), **kwargs)


def test_scene_errors_are_rbdlearn_errors():
    assert issubclass(SceneError, rbd.RbdlearnError) and rbd.SceneError is SceneError
    with pytest.raises(SceneError, match="bodies"):
        s3.robot_shapes(_load(PANDA), UR5)              # another robot's URDF
    with pytest.raises(SceneError, match="kind"):
        s3.robot_shapes(_load(UR5), UR5, kind="inertial")
    with pytest.raises(SceneError, match="STL"):
        s3.pack_bytes({"urdf": UR5, "kind": "visual", "cell": 0})     # Collada files


# --------------------------------------------------------------------------------------
# URDF shapes against Pinocchio


@pytest.mark.parametrize("path, floating, kind", [
    (UR5, False, "collision"), (PANDA, False, "collision"), (TALOS, True, "visual"),
    (TALOS, False, "collision")])
def test_shapes_are_placed_as_pinocchio_places_the_urdf_geometry(path, floating, kind):
    import pinocchio as pin

    from rbdlearn import interop
    full = urdf.example_robot_path(path)
    model = _load(path, floating)
    pm = (pin.buildModelFromUrdf(full, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromUrdf(full))
    kinds = {"visual": pin.GeometryType.VISUAL, "collision": pin.GeometryType.COLLISION}
    gm = pin.buildGeomFromUrdf(pm, full, kinds[kind], package_dirs=[str(
        Path(full).parents[len(Path(path).parts) + 1])])   # holds example-robot-data
    shapes = s3.robot_shapes(model, path, kind=kind)
    assert sum(map(len, shapes.values())) == gm.ngeoms
    rng = np.random.default_rng(5)
    for _ in range(2):
        q = rbd.random_q(model, rng)
        pd, gd = pm.createData(), gm.createData()
        pin.updateGeometryPlacements(pm, pd, gm, gd, interop.q_to_pin(model, pm, q))
        X0 = rbd.forward_kinematics(model, q)
        ours = []               # (shape, world R, world p)
        for i, body_shapes in shapes.items():
            Rb, pb = rbd.body_pose(X0[i])
            for s in body_shapes:
                o = s.get("origin", [0, 0, 0, 1, 0, 0, 0])
                ours.append((s, Rb @ _quat_rot(o[3:]), pb + Rb @ np.array(o[:3])))
        unmatched = list(range(len(ours)))
        for g, placement in zip(gm.geometryObjects, gd.oMg):
            kind_g = type(g.geometry).__name__
            for n in unmatched:
                s, R, p = ours[n]
                if s["type"] == "mesh":
                    same = (kind_g.startswith("BVH")
                            and Path(g.meshPath).with_suffix("").as_posix().endswith(
                                "/" + s["mesh"])
                            and np.allclose(g.meshScale, s.get("scale", (1, 1, 1))))
                elif s["type"] == "box":
                    same = kind_g == "Box" and np.allclose(2 * g.geometry.halfSide, s["size"])
                elif s["type"] == "cylinder":
                    same = (kind_g == "Cylinder" and np.isclose(g.geometry.radius, s["radius"])
                            and np.isclose(2 * g.geometry.halfLength, s["length"]))
                else:
                    same = kind_g == "Sphere" and np.isclose(g.geometry.radius, s["radius"])
                if (same and np.allclose(R, placement.rotation, atol=1e-9)
                        and np.allclose(p, placement.translation, atol=1e-9)):
                    unmatched.remove(n)
                    break
            else:
                raise AssertionError(f"{path}: Pinocchio's {g.name} ({g.meshPath}) at "
                                     f"{placement.translation} has no shape placed there")
        assert not unmatched


def test_mesh_names_are_unique_within_a_pack():
    talos = s3.robot_shapes(_load(TALOS, True), TALOS, kind="visual")
    names = {s["mesh"] for ss in talos.values() for s in ss if s["type"] == "mesh"}
    assert "gripper/base_link" in names and "torso/base_link" in names
    ur5 = s3.robot_shapes(_load(UR5), UR5)
    assert [s.get("mesh") for s in ur5[6]] == ["wrist3", None]        # + the ee_link box


# --------------------------------------------------------------------------------------
# mesh packs


def _stl_triangles(path):
    """The triangles (m, 3, 3) of a binary STL file, read here without scene3d."""
    data = Path(path).read_bytes()
    (m,) = struct.unpack_from("<I", data, 80)
    return np.array([struct.unpack_from("<9f", data, 84 + 50 * k + 12) for k in range(m)]
                    ).reshape(m, 3, 3)


def test_a_pack_round_trips_to_the_stl_files():
    data = s3.pack_bytes(BOOK_PACKS[0])
    meshes = s3.read_pack(data)
    (h,) = struct.unpack_from("<I", data, 8)
    header = json.loads(data[12:12 + h])                     # H bytes: the JSON exactly
    start = 12 + h + (-(12 + h) % 4)
    assert data[:8] == b"RBDM1\0\0\0" and set(data[12 + h:start]) <= {0}
    folder = Path(urdf.example_robot_path(UR5)).parents[1] / "meshes/ur5/collision"
    assert sorted(meshes) == sorted(p.stem for p in folder.glob("*.stl"))
    for m in header["meshes"]:
        assert m["offset"] % 4 == 0 and m["index"] == "u16" and start % 4 == 0
        source = _stl_triangles(folder / f"{m['name']}.stl")
        v, t = meshes[m["name"]]
        # every decoded vertex within half a step (per axis) of a vertex of the file
        step = np.asarray(m["step"])
        assert np.all(step < 1e-5)                     # 16 bits over a link of < 0.6 m
        verts, corner = np.unique(source.reshape(-1, 3), axis=0, return_inverse=True)
        nearest = np.abs(v[:, None, :] - verts[None, :, :]).max(axis=2).argmin(axis=1)
        assert np.all(np.abs(v - verts[nearest]) <= step / 2 + 1e-9)
        assert len(set(nearest)) == len(v)             # distinct vertices stay distinct
        # the triangles are the file's, less the degenerate and repeated ones
        kept = {tuple(sorted(c)) for c in corner.reshape(-1, 3) if len(set(c)) == 3}
        assert {tuple(sorted(c)) for c in nearest[t]} == kept, m["name"]
        assert len(t) == len(kept) and len(t) > 0.9 * len(source), m["name"]


def test_packs_are_deterministic_and_light():
    for recipe in BOOK_PACKS:
        a = s3.pack_bytes(recipe)
        meshpack._pack_meshes.cache_clear()
        assert s3.pack_bytes(recipe) == a
        assert len(gzip.compress(a)) <= 1_000_000, recipe


def test_vertex_clustering_merges_cells_and_drops_collapsed_triangles():
    v = np.array([[0, 0, 0], [0.001, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]])
    t = np.array([[0, 1, 2], [0, 2, 3], [1, 2, 3], [2, 4, 3]])
    v2, t2 = meshpack.cluster_vertices(v, t, cell=0.01)
    assert len(v2) == 4 and np.allclose(v2[0], [0.0005, 0, 0])
    assert len(t2) == 2                          # (0, 1, 2) collapsed, (1, 2, 3) repeated
    assert np.allclose(v2[t2], [[v2[0], v[2], v[3]], [v[2], v[4], v[3]]])
    v3, t3 = meshpack.cluster_vertices(v, t, cell=0)
    assert len(v3) == 5 and len(t3) == 4


def test_ascii_and_binary_stl_read_alike(tmp_path):
    tri = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 1, 0], [0, 0, 1.5]]],
                   dtype=np.float32)
    text = "solid t\n" + "".join(
        "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in f)
        + "endloop\nendfacet\n" for f in tri) + "endsolid t\n"
    (tmp_path / "a.stl").write_text(text)
    binary = b"x" * 80 + struct.pack("<I", 2) + b"".join(
        struct.pack("<3f", 0, 0, 0) + f.astype("<f4").tobytes() + b"\0\0" for f in tri)
    (tmp_path / "b.stl").write_bytes(binary)
    va, ta = meshpack.read_stl(tmp_path / "a.stl")
    vb, tb = meshpack.read_stl(tmp_path / "b.stl")
    assert np.array_equal(va, vb) and np.array_equal(ta, tb) and len(va) == 4
    assert np.array_equal(va[ta], tri)
    (tmp_path / "c.stl").write_bytes(b"not an stl")
    with pytest.raises(SceneError, match="not an STL"):
        meshpack.read_stl(tmp_path / "c.stl")


def test_write_pack_checks_the_name(tmp_path):
    path = s3.write_pack("panda-collision", BOOK_PACKS[1], tmp_path)
    assert Path(path).read_bytes() == s3.pack_bytes(BOOK_PACKS[1])
    assert Path(path).name == "panda-collision.rbdm"
    with pytest.raises(SceneError, match="does not match"):
        s3.write_pack("panda-visual", BOOK_PACKS[1], tmp_path)


# --------------------------------------------------------------------------------------
# HTML and the still image


def test_static_html_has_no_script_and_no_packs(monkeypatch):
    scene, *_ = _ur5_scene(F=3)
    monkeypatch.setenv("RBDLEARN_STATIC_WIDGETS", "1")
    html = scene._repr_html_()
    assert html.startswith('<div class="rbd3d"') and html.endswith("</div>")
    assert '<script type="module"' not in html and "inline_packs" not in html
    data = re.search(r'<script type="application/json" class="rbd3d-data">(.*?)</script>',
                     html, re.S)[1]
    assert json.loads(data) == json.loads(json.dumps(scene.to_json()))
    assert re.search(r'<img class="rbd3d-still" [^>]*src="data:image/webp;base64,', html)


def test_live_html_carries_the_viewer_and_the_packs(monkeypatch):
    scene, *_ = _ur5_scene(F=3)
    monkeypatch.delenv("RBDLEARN_STATIC_WIDGETS", raising=False)
    monkeypatch.setattr(s3, "_bundle", lambda: 'export{a as mount};/* </script> */')
    html = scene._repr_html_()
    data = json.loads(re.search(r'class="rbd3d-data">(.*?)</script>', html, re.S)[1])
    packed = base64.b64decode(data["inline_packs"]["ur5_robot-collision"])
    assert packed == s3.pack_bytes(BOOK_PACKS[0])
    module = re.search(r'<script type="module">(.*?)</script>', html, re.S)[1]
    ident = re.search(r'<div class="rbd3d" id="([^"]+)"', html)[1]
    assert f'getElementById("{ident}")' in module and "export{a as mount}" in module
    assert "</script> */" not in module            # the bundle's text cannot end it
    monkeypatch.setattr(s3, "_bundle", lambda: None)
    html = scene._repr_html_()
    assert '<script type="module"' not in html and 'class="rbd3d-missing"' in html


def test_the_still_image_draws_the_robot():
    scene, model, t, q = _ur5_scene(F=3)
    image = np.asarray(scene.still().convert("RGB")).astype(int)
    assert image.shape == (400, 640, 3)
    drawn = np.abs(image - 255).sum(axis=2) > 30         # not white
    assert 0.02 < drawn.mean() < 0.6
    # another posture draws another picture
    other = s3.Scene("other", ("t", [0.0]))
    other.add_model(model, q[:1] + 1.0, s3.robot_shapes(model, UR5))
    assert np.abs(np.asarray(other.still().convert("RGB")).astype(int) - image).mean() > 1


# --------------------------------------------------------------------------------------
# the live form in Chromium: the notebook output as _repr_html_ writes it, viewer inline


@browser_test
def test_live_output_shows_the_scene_in_chromium(tmp_path, monkeypatch, watched3d):
    """Two live outputs on one page (the bundle imported once), the chapter 1 scene with
    its payload runs: drawn, controls working, poses equal rbdlearn's."""
    from rbdlearn import widgets
    monkeypatch.delenv("RBDLEARN_STATIC_WIDGETS", raising=False)
    scenes = [widgets.ur5_trajectory_scene(frames=9), _ur5_scene(F=4)[0]]
    page = live_file(tmp_path, "".join(s._repr_html_() for s in scenes))
    watched3d.page.goto(page.as_uri(), wait_until="load")
    problems = check_views(watched3d.page, "scene3d-live")
    assert watched3d.page.evaluate(
        "() => [...document.querySelectorAll('div.rbd3d')].every(v => v.rbd3d)")
    assert not problems + watched3d.problems, "\n".join(problems + watched3d.problems)
