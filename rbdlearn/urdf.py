"""Build a :class:`~rbdlearn.model.Model` from a URDF robot description.

Written from the URDF specification (http://wiki.ros.org/urdf/XML). What is read:

* ``<link name>`` and its ``<inertial>``: ``<origin xyz rpy>``, ``<mass value>``
  and ``<inertia ixx ixy ixz iyy iyz izz>`` — the rotational inertia about the
  centre of mass, in the inertial frame (the link frame moved by the origin).
  A link without ``<inertial>`` is massless.
* ``<joint name type>`` with ``<parent link>``, ``<child link>``, ``<origin xyz
  rpy>`` (the child frame in the parent link frame at q = 0; rpy are fixed-axis
  roll, pitch, yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``) and ``<axis xyz>``
  (default x, in the child frame).

Joint types: ``revolute`` and ``continuous`` become :class:`Revolute` (one
angle: a continuous joint has nq = 1 here, unlike Pinocchio's (cos, sin) pair),
``prismatic`` becomes :class:`Prismatic`, and a ``fixed`` joint welds its child
link onto its parent: the child's inertia is added to the parent body and the
child's own joints hang from the parent body through the fixed transform.
``floating`` and ``planar`` joints are rejected. Limits, dynamics, visual and
collision elements are ignored.

A ``<mimic joint multiplier offset>`` element makes a joint follow another one,
``q = multiplier · q_other + offset``: the gear coupling of chapter 2. With
``mimic=True`` the loader returns the model and these couplings as
:class:`~rbdlearn.joints.Gear` objects (``q̇ = G q̇_ind``, so the independent velocity
count is that of Pinocchio's ``buildModelFromUrdf(..., mimic=True)``); with
``mimic=False`` the joints are independent; by default they are independent and a
warning names them. A ``<mimic>`` on a fixed joint has nothing to move and is ignored;
one that names a joint the URDF does not have is an error with ``mimic=True``, and
otherwise a warning that names both joints (the joint is read as independent, as
Pinocchio's plain parser reads it).

Bodies are numbered depth-first from the root link, the children of a link in
the order of their joint names — the order Pinocchio's ``buildModelFromUrdf``
uses, so both packages list the joints of a robot the same way. A fixed joint is
visited in place, so the joints of a welded link come where the fixed joint
sorts among its siblings. ``model.names[i]`` is the URDF name of body i's joint
and ``model.body_names[i]`` the name of its link; entry 0 is ``"base"`` and the
root link's name (``"universe"`` for a floating base, whose body 1 is the root).

Inertias are checked per body, after welding: a negative mass, or a body (a link
with everything welded to it) whose rotational inertia is not positive
semi-definite or whose principal moments break the triangle inequality, is an
error naming its links. A welded link alone may be unphysical (published URDFs
give such placeholder values to sensor frames and flanges), as Pinocchio accepts;
the root link's inertia is ignored for a fixed base. ``physical=False`` loads
bodies whose summed inertia is not physically realisable all the same (a few
published models have them; Pinocchio loads them): the model is built with
``Model(..., physical=False)``.
"""

import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

import warnings

from .errors import RbdlearnError, RobotNotFound
from .joints import Fixed, Gear, Prismatic, Revolute
from .model import Model, check_flag, check_inertia
from .model import floating_base as _floating_base
from .spatial import mcI, plux, rotx, roty, rotz

__all__ = ["URDFError", "load", "loads", "rpy_to_rot", "example_robot_path"]

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


class URDFError(RbdlearnError):
    """A URDF that is malformed, or that describes something rbdlearn cannot model."""


def rpy_to_rot(rpy):
    """``R = Rz(yaw) Ry(pitch) Rx(roll)``: URDF's fixed-axis roll-pitch-yaw."""
    roll, pitch, yaw = rpy
    return rotz(yaw) @ roty(pitch) @ rotx(roll)


def _name(el, k):
    """The name of the k-th <link> or <joint> element (counting from 1)."""
    name = el.get("name")
    if not name:
        raise URDFError(f"<{el.tag}> number {k} has no 'name' attribute")
    return name


def _attr(el, key, where):
    value = el.get(key)
    if value is None:
        raise URDFError(f"{where}: <{el.tag}> has no '{key}' attribute")
    return value


def _numbers(el, key, n, where, default=None):
    """The attribute ``key`` of ``el`` as n finite floats (``default`` when absent)."""
    text = el.get(key) if el is not None else None
    if text is None:
        if default is None:
            raise URDFError(f"{where}: <{el.tag}> has no '{key}' attribute")
        return np.array(default, dtype=float)
    try:
        x = np.array([float(s) for s in text.split()])
    except ValueError:
        x = np.zeros(0)
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        plural = "s" if n > 1 else ""
        raise URDFError(f"{where}: <{el.tag} {key}='{text}'> needs {n} finite number{plural}")
    return x


def _origin(el, where):
    """``(R, xyz)`` of the ``<origin>`` child of ``el`` (identity when absent)."""
    o = el.find("origin")
    if o is None:
        return np.eye(3), np.zeros(3)
    return (rpy_to_rot(_numbers(o, "rpy", 3, where, (0, 0, 0))),
            _numbers(o, "xyz", 3, where, (0, 0, 0)))


def _inertia(link, name):
    """The link's spatial inertia in its own frame. Not checked here: a link welded to
    others is checked as part of their sum (see :func:`loads`)."""
    where = f"link '{name}' <inertial>"
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros((6, 6))
    R, c = _origin(inertial, where)
    mass, inertia = inertial.find("mass"), inertial.find("inertia")
    if mass is None or inertia is None:
        raise URDFError(f"{where}: needs a <mass> and an <inertia> element")
    m = _numbers(mass, "value", 1, where)[0]
    ixx, ixy, ixz, iyy, iyz, izz = (_numbers(inertia, k, 1, where)[0]
                                    for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    Ic = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if m < 0:
        raise URDFError(f"{where}: negative mass {m:g}")
    with np.errstate(over="ignore"):
        I = mcI(m, c, R @ Ic @ R.T)          # Ic rotated from the inertial into the link frame
    if not np.all(np.isfinite(I)):           # m c×c×ᵀ beyond the largest float
        raise URDFError(f"{where}: the spatial inertia overflows: mass {m:g} with its centre "
                        f"of mass at {np.linalg.norm(c):g} from the link origin and "
                        f"<inertia> up to {np.abs(Ic).max():g} gives entries beyond "
                        f"{np.finfo(float).max:.3g}")
    return I


def _joint(el, k):
    """The k-th joint element as a dict of its name, type, links, origin transform, axis."""
    name = _name(el, k)
    where = f"joint '{name}'"
    kind = _attr(el, "type", where)
    if kind not in _JOINT_TYPES:
        raise URDFError(f"{where}: unknown type '{kind}' (URDF types are "
                        f"{', '.join(_JOINT_TYPES)})")
    if kind in ("floating", "planar"):
        raise URDFError(f"{where}: type '{kind}' is not supported")
    links = {}
    for role in ("parent", "child"):
        tag = el.find(role)
        if tag is None:
            raise URDFError(f"{where}: has no <{role}> element")
        links[role] = _attr(tag, "link", where)
    R, xyz = _origin(el, where)
    joint = {"name": name, "type": kind, **links, "X": plux(R.T, xyz)}
    if kind != "fixed":
        a = el.find("axis")
        axis = np.array([1.0, 0.0, 0.0]) if a is None else _numbers(a, "xyz", 3, where, (1, 0, 0))
        if np.linalg.norm(axis) < 1e-12:
            raise URDFError(f"{where}: <axis xyz='{a.get('xyz')}'> is zero")
        joint["joint"] = Prismatic(axis) if kind == "prismatic" else Revolute(axis)
    m = el.find("mimic")
    if m is not None:
        joint["mimic"] = (_attr(m, "joint", where),                   # driver, ratio, offset
                          float(_numbers(m, "multiplier", 1, where, (1.0,))[0]),
                          float(_numbers(m, "offset", 1, where, (0.0,))[0]))
    return joint


def _parse(xml):
    """Links (name → element) and joints (list of dicts) of a URDF document."""
    try:
        robot = ET.fromstring(xml)
    except ET.ParseError as e:
        raise URDFError(f"URDF is not well-formed XML: {e}") from None
    if robot.tag != "robot":
        raise URDFError(f"URDF root element must be <robot>, got <{robot.tag}>")
    links = {}
    for k, el in enumerate(robot.findall("link"), 1):
        name = _name(el, k)
        if name in links:
            raise URDFError(f"link '{name}' is defined twice")
        links[name] = el
    joints, seen = [], set()
    for k, el in enumerate(robot.findall("joint"), 1):
        j = _joint(el, k)
        if j["name"] in seen:
            raise URDFError(f"joint '{j['name']}' is defined twice")
        seen.add(j["name"])
        joints.append(j)
    return links, joints


def _root_and_children(links, joints):
    """The root link, and for each link its child joints sorted by name."""
    if not links:
        raise URDFError("URDF has no <link>")
    parent_joint, children = {}, {name: [] for name in links}
    for j in joints:
        for role in ("parent", "child"):
            if j[role] not in links:
                raise URDFError(f"joint '{j['name']}': {role} link '{j[role]}' is not defined")
        if j["child"] in parent_joint:
            raise URDFError(f"link '{j['child']}' has two parent joints, "
                            f"'{parent_joint[j['child']]['name']}' and '{j['name']}'")
        parent_joint[j["child"]] = j
        children[j["parent"]].append(j)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) > 1:
        raise URDFError(f"URDF has several root links (links that are no joint's child): "
                        f"{', '.join(repr(r) for r in roots)}; it must describe one tree")
    # Every link has at most one parent joint, so a link that cannot be reached
    # from the root lies below a cycle; walk up its parents to find it.
    reached, stack = set(roots), list(roots)
    while stack:
        for j in children[stack.pop()]:
            reached.add(j["child"])
            stack.append(j["child"])
    if len(reached) < len(links):
        link = next(name for name in links if name not in reached)
        path = []
        while link not in path:
            path.append(link)
            link = parent_joint[link]["parent"]
        cycle = path[path.index(link):]
        names = [parent_joint[lk]["name"] for lk in cycle]
        raise URDFError(f"{'' if roots else 'URDF has no root link: '}joints "
                        f"{', '.join(repr(n) for n in names)} form a cycle through links "
                        f"{', '.join(repr(lk) for lk in cycle)}; a URDF must be a tree")
    for js in children.values():
        js.sort(key=lambda j: j["name"])
    return roots[0], children


def loads(xml, floating_base=False, mimic=None, physical=True):
    """The :class:`.Model` of a URDF document given as a string (or bytes).

    With ``floating_base=True`` the root link becomes body 1 on a free joint
    named ``"root_joint"`` and body 0, the world, is named ``"universe"`` (as in
    Pinocchio); otherwise the root link is the fixed base, body 0, and its inertia
    is dropped. ``mimic=True`` returns ``(model, gears)``: the model and a list of
    :class:`~rbdlearn.joints.Gear`, one per mimic joint (``Gear(driven, driver,
    multiplier, offset)`` by joint name), for :func:`~rbdlearn.gear_matrix`,
    :func:`~rbdlearn.geared_q` and :func:`~rbdlearn.aba_geared`.
    ``mimic=False`` reads mimic joints as independent ones; the default does too,
    with a warning naming them. ``physical=False``: see the module docstring.
    ``floating_base`` and ``physical`` must be True or False (a TypeError otherwise).
    Raises :class:`URDFError` naming the element on malformed input.
    """
    return _with_mimic(*_build(xml, floating_base, physical), mimic)


def load(path, floating_base=False, mimic=None, physical=True):
    """The :class:`.Model` of the URDF file at ``path``; see :func:`loads`."""
    return _with_mimic(*_build(Path(path).read_bytes(), floating_base, physical), mimic)


def _with_mimic(model, mimics, kinds, mimic):
    """``model``, or ``(model, gears)`` for mimic=True; ``mimics`` lists (joint, joint
    it mimics, multiplier, offset) per moving joint with a <mimic> element, ``kinds``
    maps every URDF joint's name to its type."""
    if mimic not in (None, True, False):
        raise RbdlearnError(f"mimic must be None, True or False, got {mimic!r}")
    broken = [f"joint '{name}': <mimic joint='{driver}'>" for name, driver, _, _ in mimics
              if driver not in kinds]          # a coupling to nothing: an error if kept
    if broken and mimic:
        raise URDFError(f"{broken[0]} names no joint of the URDF")
    if broken:
        warnings.warn(f"{'; '.join(broken)}: the <mimic> names no joint of the URDF, so "
                      f"{'this joint is' if len(broken) == 1 else 'these joints are'} read "
                      f"as independent", stacklevel=3)   # the caller of load or loads
    mimics = [m for m in mimics if m[1] in kinds]
    if mimic is None and mimics:
        warnings.warn(f"URDF joints {', '.join(repr(m[0]) for m in mimics)} mimic other "
                      f"joints; they are read as independent joints (nv = {model.nv}). "
                      f"Pass mimic=True to get the couplings as gears (q̇ = G q̇_ind), or "
                      f"mimic=False to read them as independent without this warning.",
                      stacklevel=3)                     # the caller of load or loads
    if not mimic:
        return model
    for name, driver, _, _ in mimics:
        if kinds[driver] == "fixed":
            raise URDFError(f"joint '{name}' mimics '{driver}', a fixed joint; make "
                            f"'{name}' fixed too, or read it with mimic=False")
    return model, [Gear(*m) for m in mimics]


def _walk(root, children):
    """The joints below the root link, depth first in the order bodies are numbered: per
    joint ``(j, b, X, body)``, with ``b`` the body the joint hangs from, ``X = ᶜX_b`` the
    transform from b's frame to the joint's child frame at q = 0, and ``body`` the body
    that carries the child link (``b`` for a fixed joint, which welds it; otherwise the
    next body index, counting the root link as body 0)."""
    stack = [(j, 0, j["X"]) for j in reversed(children[root])]
    n = 0
    while stack:
        j, b, X = stack.pop()
        if j["type"] == "fixed":
            body, Xlink = b, X                     # the link frame, seen from body b
        else:
            n += 1
            body, Xlink = n, np.eye(6)
        yield j, b, X, body
        stack.extend((c, body, c["X"] @ Xlink) for c in reversed(children[j["child"]]))


def link_frames(xml, floating_base=False):
    """Where each link of a URDF document sits in the bodies of the model that
    :func:`loads` builds from it: ``{link name: (element, body index, ᶜX_b)}``, with the
    link's ``<link>`` element and ``ᶜX_b`` the transform from the body's frame to the
    link's frame (the identity for the link the body is named after, the fixed joints'
    transforms composed for a link welded to it). Used to place a link's ``<visual>`` and
    ``<collision>`` elements (``rbdlearn.viz.scene3d``)."""
    check_flag(floating_base, "floating_base")
    links, joints = _parse(xml)
    root, children = _root_and_children(links, joints)
    shift = 1 if floating_base else 0        # the floating root is body 1
    frames = {root: (links[root], shift, np.eye(6))}
    for j, _, X, body in _walk(root, children):
        frames[j["child"]] = (links[j["child"]], body + shift,
                              X if j["type"] == "fixed" else np.eye(6))
    return frames


def _build(xml, floating_base, physical):
    """The model of a URDF document, its mimic joints and the type of each joint (by name)."""
    check_flag(floating_base, "floating_base")
    check_flag(physical, "physical")
    links, joints = _parse(xml)
    root, children = _root_and_children(links, joints)
    reserved = {"base", "root_joint"} if floating_base else {"base"}
    for j in joints:
        if j["name"] in reserved:
            raise URDFError(f"joint '{j['name']}': the name is reserved for rbdlearn's "
                            f"{'free root joint' if j['name'] == 'root_joint' else 'base'}")
    if floating_base and "universe" in links:
        raise URDFError("link 'universe': the name is reserved for the world body of a "
                        "floating-base model")

    parent, jts, Xtree, I = [-1], [None], [None], [_inertia(links[root], root)]
    names, body_names = ["base"], ["universe" if floating_base else root]
    welded = [[root]]                  # per body: its links (its own first, then welded ones)
    for j, b, X, _ in _walk(root, children):
        link = j["child"]
        Ilink = _inertia(links[link], link)
        if j["type"] == "fixed":
            with np.errstate(over="ignore"):       # an overflow is named by the check below
                I[b] = I[b] + X.T @ Ilink @ X      # weld: ᵇI += ᶜXᵦᵀ ᶜI ᶜXᵦ
            welded[b].append(link)
        else:
            welded.append([link])
            parent.append(b)
            jts.append(j["joint"])
            Xtree.append(X)
            I.append(Ilink)
            names.append(j["name"])
            body_names.append(link)

    # A body is checked as the rigid sum of its links: published URDFs give placeholder
    # inertias to links welded into a larger body (sensor frames, flanges), which are not
    # physical alone; the sum is what moves. The fixed base's inertia is never used.
    for b in range(0 if floating_base else 1, len(I)):
        where = (f"link '{welded[b][0]}'" if len(welded[b]) == 1 else
                 f"link '{welded[b][0]}' with the links welded to it "
                 f"({', '.join(repr(lk) for lk in welded[b][1:])})")
        try:
            check_inertia(I[b], f"{where}, <inertial> summed", physical=physical)
        except ValueError as e:
            raise URDFError(str(e)) from None
    base_inertia = I[0]
    I[0] = None
    model = Model(parent=parent, joints=jts, Xtree=Xtree, I=I, names=names,
                  body_names=body_names, physical=physical)
    if floating_base:
        model = _floating_base(model, base_inertia, "root_joint", root)
    mimics = [(j["name"], *j["mimic"]) for j in joints if "mimic" in j and j["type"] != "fixed"]
    return model, mimics, {j["name"]: j["type"] for j in joints}


def example_robot_path(relative):
    """Absolute path of a robot file shipped by the ``example-robot-data`` package,
    e.g. ``example_robot_path("ur_description/urdf/ur5_robot.urdf")``."""
    robots = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share"
              / "example-robot-data" / "robots")
    if not robots.is_dir():
        raise RobotNotFound(f"example-robot-data is not installed (no folder {robots}); "
                            f"install it with `pip install example-robot-data`")
    path = robots / relative
    if not path.is_file():
        raise RobotNotFound(f"example-robot-data has no file '{relative}' in {robots}")
    return str(path)
