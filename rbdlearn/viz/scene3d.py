"""3-D scenes for the book's viewer (issue 29): the bodies' shapes and, per frame, their
poses as rbdlearn computes them, in the JSON the viewer (``rbdlearn/viz/rbd3d.js``)
reads; the robots' meshes as packs (``.rbdm``); a still image of the first frame.

- :func:`shape` makes a shape (a plain dict): a mesh of a pack, a box, sphere,
  cylinder, capsule or arrow; :func:`robot_shapes` the shapes of a URDF robot's links
  (their ``<visual>`` or ``<collision>`` elements), per body of the model.
- :class:`Scene`: models whose poses come from ``rbdlearn.forward_kinematics`` at each
  frame's configuration, markers posed frame by frame (:func:`arrow_poses`,
  :func:`segment_poses`, :func:`ellipsoid_poses`), runs over a parameter, plots and a
  read-out line beside the view; ``to_json()``, ``_repr_html_()``, ``still()``.
- :func:`pack_bytes`, :func:`write_pack`: a pack of a robot's meshes, read from its STL
  files, reduced by vertex clustering where asked and quantized to 16 bits.

The scene JSON (version 1) and the pack format are described in the book's design notes
for issue 29; in short, a pose is ``[x, y, z, qw, qx, qy, qz]``: the body's origin and
the unit quaternion of its orientation in the world frame (``w >= 0``), and a shape's
``origin`` is a pose in its body's frame.
"""

import base64
import hashlib
import io
import itertools
import json
import re
from html import escape
from pathlib import Path

import numpy as np

from ..errors import SceneError
from ..kinematics import body_pose, forward_kinematics
from ..spatial import plux_parts
from ..urdf import URDFError, _numbers, _origin
from .poses3d import (arrow_poses, b64, check_array, check_poses, ellipsoid_poses,
                      pose_of, segment_poses)
from .meshpack import (check_recipe, pack_bytes, pack_name, read_pack, robot_elements,
                       write_pack)
from .still3d import still_pixels

__all__ = ["Scene", "shape", "robot_shapes", "arrow_poses", "segment_poses",
           "ellipsoid_poses", "pack_bytes", "write_pack", "read_pack", "pack_name",
           "SHAPE_TYPES"]

SHAPE_TYPES = {"mesh": ("pack", "mesh"), "box": ("size",), "sphere": ("radius",),
               "cylinder": ("radius", "length"), "capsule": ("radius", "length"),
               "arrow": ("radius",)}
"""The shape types and the parameters each needs (besides ``origin``, ``scale``,
``color``, ``opacity``, which every shape has)."""

_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
DEFAULT_COLOR = "#9aa4b1"


# ---------------------------------------------------------------------------------------
# Shapes


def shape(type, *, origin=None, scale=None, color=DEFAULT_COLOR, opacity=1.0, **params):
    """A shape for a body or marker of a :class:`Scene`, as a dict.

    ``type`` is one of :data:`SHAPE_TYPES` with its parameters: ``"box"`` (``size=(a, b,
    c)``, centred), ``"sphere"`` (``radius``), ``"cylinder"`` and ``"capsule"``
    (``radius``, ``length`` — of the straight part for a capsule; axis z, centred),
    ``"arrow"`` (``radius`` of the shaft; from the origin along +z, length 1 before a
    marker's per-frame scale), ``"mesh"`` (``pack``, ``mesh``: a mesh of a pack, in the
    mesh file's units; ``recipe``: how to build the pack, see :func:`pack_bytes`; made by
    :func:`robot_shapes`). ``origin``: the shape's pose in its body's frame, seven numbers
    ``[x, y, z, qw, qx, qy, qz]`` or a pair ``(R, p)`` (default: the body's frame);
    ``scale``: three factors applied in the shape's frame before ``origin`` (a negative
    one mirrors it); ``color``: CSS ``#rgb`` or ``#rrggbb``; ``opacity`` in (0, 1]."""
    if type not in SHAPE_TYPES:
        raise SceneError(f"unknown shape type {type!r}; the types are "
                         f"{', '.join(SHAPE_TYPES)}")
    recipe = params.pop("recipe", None)
    need = set(SHAPE_TYPES[type])
    if set(params) != need:
        extra, missing = sorted(set(params) - need), sorted(need - set(params))
        raise SceneError(f"shape {type!r} takes {', '.join(sorted(need))}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(extra)}" if extra else ""))
    out = {"type": type}
    for key in SHAPE_TYPES[type]:
        value = params[key]
        if key in ("pack", "mesh"):
            if not isinstance(value, str) or not value:
                raise SceneError(f"shape 'mesh': {key} must be a non-empty string, "
                                 f"got {value!r}")
            out[key] = value
        elif key == "size":
            size = check_array(value, (3,), f"shape {type!r} size")
            if np.any(size <= 0):
                raise SceneError(f"shape {type!r}: size must be positive, got {list(size)}")
            out[key] = [float(x) for x in size]
        else:
            x = check_array(value, (), f"shape {type!r} {key}")
            if x <= 0 and not (type == "capsule" and key == "length" and x == 0):
                raise SceneError(f"shape {type!r}: {key} must be positive, got {float(x)}")
            out[key] = float(x)
    if origin is not None:
        if isinstance(origin, tuple) and len(origin) == 2:
            R = check_array(origin[0], (3, 3), f"shape {type!r} origin R")
            if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
                raise SceneError(f"shape {type!r}: origin R is not a rotation matrix")
            origin = pose_of(R, check_array(origin[1], (3,), f"shape {type!r} origin p"))
        o = check_poses([origin], f"shape {type!r} origin")[0]
        if not np.allclose(o, [0, 0, 0, 1, 0, 0, 0], atol=0, rtol=0):
            out["origin"] = [float(x) for x in o]
    if scale is not None:
        s = check_array(scale, (3,), f"shape {type!r} scale")
        if np.any(s == 0):
            raise SceneError(f"shape {type!r}: a scale factor is zero: {list(s)}")
        if not np.all(s == 1):
            out["scale"] = [float(x) for x in s]
    if not isinstance(color, str) or not _COLOR.match(color):
        raise SceneError(f"shape {type!r}: color must be '#rgb' or '#rrggbb', got {color!r}")
    out["color"] = color
    if not (isinstance(opacity, (int, float)) and 0 < opacity <= 1):
        raise SceneError(f"shape {type!r}: opacity must be in (0, 1], got {opacity!r}")
    if opacity != 1:
        out["opacity"] = float(opacity)
    if type == "mesh":
        if recipe is None:
            raise SceneError("shape 'mesh' needs recipe= (how to build its pack: "
                             "{'urdf': …, 'kind': …, 'cell': …}, see pack_bytes)")
        out["recipe"] = check_recipe(recipe)
    elif recipe is not None:
        raise SceneError(f"shape {type!r} takes no recipe (only a mesh does)")
    return out


def _check_shapes(shapes, what):
    """A list of shape dicts as :func:`shape` makes them."""
    if isinstance(shapes, dict) or not isinstance(shapes, (list, tuple)) or not shapes:
        raise SceneError(f"{what}: shapes must be a non-empty list of shape dicts "
                         f"(made by shape()), got {type(shapes).__name__}")
    for s in shapes:
        if not isinstance(s, dict) or s.get("type") not in SHAPE_TYPES:
            raise SceneError(f"{what}: {s!r} is not a shape made by shape()")
    return [dict(s) for s in shapes]


def robot_shapes(model, urdf, kind="collision", cell=0.0, color=None):
    """The shapes of a robot of example-robot-data, per body of ``model``:
    ``{body index: [shape, …]}`` (bodies without any left out).

    ``urdf`` is the URDF's path in example-robot-data (``"ur_description/urdf/
    ur5_robot.urdf"``) and ``model`` the model ``rbdlearn.urdf.load`` builds from it
    (fixed or floating base). Each ``<visual>`` (``kind="visual"``) or ``<collision>``
    element of a link becomes a shape of the body that carries the link: its ``origin``
    is the element's ``<origin>`` composed with the fixed joints' transforms that weld
    the link to the body. A ``<mesh>`` becomes a ``"mesh"`` shape of the pack
    ``<urdf stem>-<kind>`` (its ``scale`` kept), built from the STL files with vertex
    clustering at ``cell`` metres (0: none; :func:`pack_bytes`); ``<box>``,
    ``<cylinder>`` and ``<sphere>`` the same primitives. ``color``: one CSS colour for
    every shape (default a light grey-blue)."""
    recipe = check_recipe({"urdf": urdf, "kind": kind, "cell": cell})
    frames, items, names = robot_elements(urdf, kind)
    floating = model.body_names[0] == "universe" and model.N >= 1 and \
        model.names[1] == "root_joint"
    shift = 1 if floating else 0
    bodies = {}
    for link, (_, b, _) in frames.items():
        bodies.setdefault(b + shift, link)
    expect = [bodies.get(i) for i in range(shift, model.N + 1)]
    if floating:
        ok = model.body_names[1:] == expect
    else:
        ok = list(model.body_names) == expect
    if not ok or len(bodies) != model.N + 1 - shift:
        raise SceneError(f"the model's bodies {list(model.body_names)} are not those "
                         f"rbdlearn.urdf.load builds from '{urdf}' ({expect})")
    pack = pack_name(recipe)
    out = {}
    for link, item, g, path in items:
        _, b, X = frames[link]
        where = f"link '{link}' <{kind}>"
        E, r = plux_parts(X)                 # the link frame in the body frame: R = Eᵀ, r
        try:
            R_o, p_o = _origin(item, where)
            number = lambda key, n, default=None: _numbers(g, key, n, where, default)
            if g.tag == "mesh":
                scale = number("scale", 3, (1, 1, 1))
            elif g.tag == "box":
                size = number("size", 3)
            elif g.tag in ("sphere", "cylinder"):
                radius = number("radius", 1)[0]
                length = number("length", 1)[0] if g.tag == "cylinder" else None
            else:
                raise SceneError(f"{where}: geometry <{g.tag}> is not supported (mesh, "
                                 f"box, sphere, cylinder)")
        except URDFError as e:
            raise SceneError(str(e)) from None
        origin = (E.T @ R_o, r + E.T @ p_o)
        extra = {} if color is None else {"color": color}
        if g.tag == "mesh":
            s = shape("mesh", pack=pack, mesh=names[path], recipe=recipe, origin=origin,
                      scale=scale, **extra)
        elif g.tag == "box":
            s = shape("box", size=size, origin=origin, **extra)
        elif g.tag == "sphere":
            s = shape("sphere", radius=radius, origin=origin, **extra)
        else:
            s = shape("cylinder", radius=radius, length=length, origin=origin, **extra)
        out.setdefault(b + shift, []).append(s)
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------------
# Scene


def _per_run(x, ndim):
    """``x`` as (list of per-run values, True) when it is a list/tuple of R entries of
    ``ndim`` dimensions, else ([x], False): one value for every run."""
    if isinstance(x, (list, tuple)) and x and all(
            not isinstance(e, str) and np.ndim(e) == ndim for e in x) and (
            ndim > 0 or not all(isinstance(e, str) for e in x)):
        return list(x), True
    return [x], False


class Scene:
    """A 3-D scene: bodies with shapes, posed at each of F frames, in R runs.

    ``title``: the scene's name (the viewer's label); ``scrub = (label, values)``: the
    scrubber's axis, F values (times, or indices of postures); ``camera``: ``{"position":
    [x, y, z], "target": [x, y, z]}`` or None (the viewer frames the scene). Add models
    (:meth:`add_model`) and markers (:meth:`add_marker`); :meth:`set_param` makes R runs,
    one per value of a parameter; every per-run argument is then either one value for
    every run or a list of R values. :meth:`to_json` is the JSON the viewer reads;
    displaying the scene in a notebook shows it (:meth:`_repr_html_`)."""

    def __init__(self, title, scrub, camera=None):
        if not isinstance(title, str) or not title:
            raise SceneError(f"title must be a non-empty string, got {title!r}")
        if not (isinstance(scrub, tuple) and len(scrub) == 2 and isinstance(scrub[0], str)):
            raise SceneError("scrub must be a pair (label, values)")
        self.title = title
        self.scrub_label = scrub[0]
        self.scrub = check_array(scrub[1], (None,), "scrub values")
        if len(self.scrub) == 0:
            raise SceneError("scrub values: a scene needs at least one frame")
        self.F = len(self.scrub)
        if camera is not None:
            if not isinstance(camera, dict) or set(camera) != {"position", "target"}:
                raise SceneError("camera must be {'position': [x, y, z], 'target': "
                                 "[x, y, z]} or None")
            camera = {k: [float(x) for x in check_array(v, (3,), f"camera {k}")]
                      for k, v in camera.items()}
            if camera["position"] == camera["target"]:
                raise SceneError("camera position and target are the same point")
        self.camera = camera
        self.bodies = []         # {"name", "shapes", "model"/"body" or "scaled"}
        self.models = []         # {"name", "source", "model", "q": [runs]}
        self._poses = []         # per body: ([runs of (F, 7)], per_run)
        self._scales = []        # per body: ([runs of (F, 3)], per_run) or None
        self.param = None
        self.plots = []          # (title, {name: ([runs], per_run)})
        self.readout = None      # ([runs of F strings], per_run)

    # -- building

    def _runs(self, x, ndim, what, check):
        """Per-run values of ``x`` checked by ``check(value, what)``."""
        runs, per_run = _per_run(x, ndim)
        if per_run and self.param is not None and len(runs) != len(self.param[1]):
            raise SceneError(f"{what}: {len(runs)} runs given, but the parameter "
                             f"'{self.param[0]}' has {len(self.param[1])} values")
        return [check(r, what if not per_run else f"{what} (run {k})")
                for k, r in enumerate(runs)], per_run

    def add_model(self, model, q, shapes, name="model", source=None):
        """Add a model: ``shapes`` {body index: [shape, …]} (e.g. :func:`robot_shapes`),
        ``q`` its configurations, (F, nq), or a list of R of them; the bodies' poses are
        ``rbdlearn.forward_kinematics(model, q)`` at every frame. ``source``: how to
        build the model again (``{"urdf": path, "floating_base": bool}`` or
        ``{"factory": "rbdlearn.models.…", "kwargs": {…}}``), or None. Returns the
        model's index."""
        from ..model import Model
        if not isinstance(model, Model):
            raise SceneError(f"model must be an rbdlearn Model, got {type(model).__name__}")
        if not isinstance(shapes, dict) or not shapes:
            raise SceneError("shapes must be a non-empty dict {body index: [shape, …]}")
        for i in shapes:
            if not isinstance(i, (int, np.integer)) or not 0 <= i <= model.N:
                raise SceneError(f"shapes: body index {i!r} is not a body of the model "
                                 f"(0 to {model.N})")
        if source is not None and not isinstance(source, dict):
            raise SceneError(f"source must be a dict or None, got {type(source).__name__}")

        def check_q(qr, what):
            return check_array(qr, (self.F, model.nq), what)
        qs, per_run = self._runs(q, 2, f"model '{name}' q", check_q)
        bodies = sorted(int(i) for i in shapes)
        poses = []
        for qr in qs:
            X0 = forward_kinematics(model, qr)
            rows = []
            for i in bodies:
                R, p = body_pose(X0[i])
                R, p = np.broadcast_to(R, (self.F, 3, 3)), np.broadcast_to(p, (self.F, 3))
                rows.append(pose_of(R, p))
            poses.append(rows)
        k = len(self.models)
        self.models.append({"name": name, "source": source, "model": model,
                            "q": (qs, per_run)})
        for n, i in enumerate(bodies):
            self.bodies.append({"name": model.body_names[i], "model": k, "body": i,
                                "shapes": _check_shapes(shapes[i], f"body {i}")})
            self._poses.append(([rows[n] for rows in poses], per_run))
            self._scales.append(None)
        return k

    def add_marker(self, name, shapes, poses, scales=None):
        """Add a marker, a body that is not a model's: ``shapes`` a list of shapes,
        ``poses`` (F, 7) ``[x, y, z, qw, qx, qy, qz]`` per frame (or a list of R), and
        ``scales`` (F, 3) per frame (or a list of R), or None. See :func:`arrow_poses`,
        :func:`segment_poses`, :func:`ellipsoid_poses`. Returns its body index."""
        if not isinstance(name, str) or not name:
            raise SceneError(f"a marker's name must be a non-empty string, got {name!r}")
        shapes = _check_shapes(shapes, f"marker '{name}'")
        p = self._runs(poses, 2, f"marker '{name}' poses",
                       lambda x, w: check_poses(x, w, self.F))
        s = None
        if scales is not None:
            s = self._runs(scales, 2, f"marker '{name}' scales",
                           lambda x, w: check_array(x, (self.F, 3), w))
        self.bodies.append({"name": name, "shapes": shapes, **({"scaled": True} if s else {})})
        self._poses.append(p)
        self._scales.append(s)
        return len(self.bodies) - 1

    def set_param(self, label, values, index=0):
        """Make the scene R runs, one per parameter value (a slider in the viewer):
        ``values`` R numbers, ``index`` the run shown first."""
        if not isinstance(label, str) or not label:
            raise SceneError(f"param label must be a non-empty string, got {label!r}")
        v = check_array(values, (None,), f"param '{label}' values")
        if len(v) < 1:
            raise SceneError(f"param '{label}' needs at least one value")
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(v):
            raise SceneError(f"param index {index!r} is not in 0 to {len(v) - 1}")
        self.param = (label, v, int(index))
        self._check_runs()

    def add_plot(self, title, series):
        """A plot beside the view with a cursor at the current frame: ``series``
        {name: F values, or a list of R of them}."""
        if not isinstance(title, str) or not title:
            raise SceneError(f"plot title must be a non-empty string, got {title!r}")
        if not isinstance(series, dict) or not series:
            raise SceneError(f"plot '{title}': series must be a non-empty dict "
                             f"{{name: values}}")
        checked = {str(n): self._runs(v, 1, f"plot '{title}' series '{n}'",
                                      lambda x, w: check_array(x, (self.F,), w))
                   for n, v in series.items()}
        self.plots.append((title, checked))

    def set_readout(self, lines):
        """A line of text per frame under the view: F strings, or a list of R lists."""
        def check(x, what):
            if (not isinstance(x, (list, tuple)) or len(x) != self.F
                    or not all(isinstance(s, str) for s in x)):
                raise SceneError(f"{what} must be {self.F} strings (one per frame)")
            return list(x)
        if isinstance(lines, (list, tuple)) and lines and all(
                isinstance(e, (list, tuple)) for e in lines):
            if self.param is not None and len(lines) != len(self.param[1]):
                raise SceneError(f"readout: {len(lines)} runs given, but the parameter "
                                 f"'{self.param[0]}' has {len(self.param[1])} values")
            self.readout = ([check(x, f"readout (run {k})") for k, x in enumerate(lines)],
                            True)
        else:
            self.readout = ([check(lines, "readout")], False)

    # -- output

    @property
    def R(self):
        return 1 if self.param is None else len(self.param[1])

    def _check_runs(self):
        R = self.R
        items = ([(f"model '{m['name']}' q", m["q"]) for m in self.models]
                 + [(f"body '{b['name']}' poses", p) for b, p in zip(self.bodies, self._poses)]
                 + [(f"body '{b['name']}' scales", s)
                    for b, s in zip(self.bodies, self._scales) if s]
                 + [(f"plot '{t}' series '{n}'", v) for t, ser in self.plots
                    for n, v in ser.items()]
                 + ([("readout", self.readout)] if self.readout else []))
        for what, (runs, per_run) in items:
            if per_run and len(runs) != R:
                raise SceneError(f"{what}: {len(runs)} runs given, but the scene has {R} "
                                 f"(the parameter's values)")

    @staticmethod
    def _run(item, r):
        runs, per_run = item
        return runs[r] if per_run else runs[0]

    def poses(self, r=0):
        """The poses of run r, (F, B, 7)."""
        return np.stack([self._run(p, r) for p in self._poses], axis=1)

    def scales(self, r=0):
        """The scales of run r, (F, B, 3) (ones for bodies that are not scaled)."""
        out = np.ones((self.F, len(self.bodies), 3))
        for b, s in enumerate(self._scales):
            if s:
                out[:, b] = self._run(s, r)
        return out

    def packs(self):
        """{pack name: recipe} of every mesh shape."""
        packs = {}
        for b in self.bodies:
            for s in b["shapes"]:
                if s["type"] == "mesh":
                    if packs.setdefault(s["pack"], s["recipe"]) != s["recipe"]:
                        raise SceneError(f"pack '{s['pack']}' is named with two recipes: "
                                         f"{packs[s['pack']]} and {s['recipe']}")
        return packs

    def to_json(self):
        """The scene as the viewer reads it (version 1): a dict for ``json.dumps``."""
        if not self.bodies:
            raise SceneError("the scene has no bodies: add a model or a marker")
        self._check_runs()
        packs = self.packs()
        scaled = any(s for s in self._scales)
        runs = []
        for r in range(self.R):
            run = {"poses": b64(self.poses(r), "f4"),
                   "scales": b64(self.scales(r), "f4") if scaled else None,
                   "q": [b64(self._run(m["q"], r), "f8") for m in self.models]}
            if self.plots:
                run["plots"] = [{"title": t, "series": [
                    {"name": n, "values": [float(x) for x in self._run(v, r)]}
                    for n, v in ser.items()]} for t, ser in self.plots]
            run["readout"] = None if self.readout is None else self._run(self.readout, r)
            runs.append(run)
        out = {"rbd3d": 1, "title": self.title, "up": "z"}
        if self.camera:
            out["camera"] = self.camera
        out["scrub"] = {"label": self.scrub_label, "values": [float(x) for x in self.scrub]}
        if self.param:
            out["param"] = {"label": self.param[0],
                            "values": [float(x) for x in self.param[1]],
                            "index": self.param[2]}
        out["packs"] = packs
        out["bodies"] = [{**{k: v for k, v in b.items() if k != "shapes"},
                          "shapes": [{k: v for k, v in s.items() if k != "recipe"}
                                     for s in b["shapes"]]} for b in self.bodies]
        out["models"] = [{"name": m["name"], "source": m["source"]} for m in self.models]
        out["runs"] = runs
        return out

    def json_text(self, inline_packs=False):
        """``to_json()`` as text safe inside a ``<script>`` element (``</`` escaped);
        with ``inline_packs`` the packs' bytes are added (base64, key
        ``"inline_packs"``) for a live view that fetches nothing."""
        data = self.to_json()
        if inline_packs:
            data["inline_packs"] = {n: base64.b64encode(pack_bytes(r)).decode("ascii")
                                    for n, r in data["packs"].items()}
        return (json.dumps(data, ensure_ascii=False, separators=(",", ":"))
                .replace("</", "<\\/").replace("<!--", "<\\u0021--"))

    def _repr_html_(self):
        """The scene for a notebook's output: a ``div.rbd3d`` holding the JSON, a still
        image of the first frame and, outside the book's build (the environment variable
        ``RBDLEARN_STATIC_WIDGETS`` not "1"), a script carrying the viewer and the packs
        that shows the scene live."""
        from ..widgets.core import static_build
        from .core import SMALL_IMAGE_FORMAT
        static = static_build()
        still = base64.b64encode(self.still_bytes()).decode("ascii")
        body = self.json_text(inline_packs=not static)
        ident = "rbd3d-" + hashlib.sha1(body.encode()).hexdigest()[:12] + f"-{next(_COUNTER)}"
        title = escape(self.title)
        html = (f'<div class="rbd3d" id="{ident}" role="figure" aria-label="{title}">'
                f'<script type="application/json" class="rbd3d-data">{body}</script>'
                f'<img class="rbd3d-still" alt="{title}: the first frame" '
                f'src="data:image/{SMALL_IMAGE_FORMAT};base64,{still}">'
                f'<p class="rbd3d-note">{_NOTE}</p>')
        if not static:
            bundle = _bundle()
            if bundle is None:
                html += (f'<p class="rbd3d-missing" style="color:#b00">{_MISSING}</p>')
            else:
                html += ('<script type="module">' + _LOADER.replace(
                    "@BUNDLE@", json.dumps(bundle).replace("</", "<\\/")).replace(
                    "@ID@", ident) + "</script>")
        return html + "</div>"

    # -- the still image

    def still_bytes(self, width=640, height=400):
        """The still image (:meth:`still`) as WebP bytes."""
        from .core import small_image
        r = self.param[2] if self.param else 0
        bodies = [b for b in self.bodies]
        return small_image(still_pixels(bodies, self.poses(r)[0], self.scales(r)[0],
                                        self.camera, width, height))

    def still(self, width=640, height=400):
        """The first frame (run ``param`` index) drawn with matplotlib, a PIL image."""
        import PIL.Image
        return PIL.Image.open(io.BytesIO(self.still_bytes(width, height)))


_COUNTER = itertools.count()
_NOTE = "A still of the first frame: online, this 3-D view moves, with its controls."
_MISSING = ("The 3-D viewer's script (rbdlearn/viz/rbd3d.js) is not installed with "
            "rbdlearn: showing a still of the first frame.")
# The live view: the bundle (an ES module) is imported from a Blob URL once per page, and
# mounts the div with the scene's JSON (which holds the packs).
_LOADER = """
const el = document.getElementById("@ID@");
const text = @BUNDLE@;
window.__rbd3dModule = window.__rbd3dModule || import(
  URL.createObjectURL(new Blob([text], {type: "text/javascript"})));
window.__rbd3dModule.then((m) => {
  m.mount(el, JSON.parse(el.querySelector("script.rbd3d-data").textContent));
}).catch((e) => {
  const p = document.createElement("p");
  p.style.color = "#b00";
  p.textContent = "The 3-D viewer failed: " + e;
  el.appendChild(p);
});
"""


def _bundle():
    """The viewer's bundled script (``rbdlearn/viz/rbd3d.js``), or None if absent."""
    path = Path(__file__).with_name("rbd3d.js")
    return path.read_text(encoding="utf-8") if path.is_file() else None


