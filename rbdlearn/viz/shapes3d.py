"""Shapes of the book's own models in 3-D (chapters 4 and 5): a kinematic tree's bodies
as capsules along their segments or the uniform boxes of their inertias, with markers at
the joints (:func:`tree_shapes`, :func:`box_of_inertia`), for
:meth:`rbdlearn.viz.scene3d.Scene.add_model`."""

import numpy as np

from ..errors import RbdlearnError
from ..joints import Revolute, Spherical
from ..spatial import inertia_params, plux_parts
from . import scene3d as s3

__all__ = ["FIGURE", "box_of_inertia", "tree_shapes"]

WATER = 1000.0      # kg/m³: a segment is drawn as a cylinder of water of its mass and length
FIGURE = "#4a78b5"  # the colour of the book's own models in 3-D


def box_of_inertia(I):
    """``(size, centre)`` of the uniform box with the spatial inertia ``I`` (its axes the
    body's: the rotational inertia about the centre of mass must be diagonal)."""
    m, c, Ic = inertia_params(np.asarray(I, dtype=float))
    if np.abs(Ic - np.diag(np.diag(Ic))).max() > 1e-12 * np.abs(Ic).max():
        raise RbdlearnError("box_of_inertia: the inertia about the centre of mass is not "
                            "diagonal in the body's axes")
    J = np.diag(Ic)
    size = np.sqrt(np.maximum(6.0 / m * (J.sum() - 2 * J), 0.0))   # a² = 6(J_y+J_z−J_x)/m
    return size, c


def tree_shapes(model, tips=None, boxes=(), color=FIGURE, joints=False, tip_only=()):
    """The 3-D shapes of a kinematic tree's bodies, {body: [shape dicts]} for
    :meth:`rbdlearn.viz.scene3d.Scene.add_model`: each body named in ``boxes`` is the
    uniform box of its inertia (:func:`box_of_inertia`); every other body with mass a
    capsule from its joint to each child's joint and to its tip (``tips`` {body: point
    in body coordinates}; the bodies in ``tip_only`` only to their tip), its rounded
    ends on those points, as thick as a cylinder of water of the body's mass and the
    segments' length. Massless bodies get no shape. ``joints=True`` adds a marker at
    each joint, sized from the segment it moves (for a massless link, the next one; at
    most 5 cm across the axis): a white sphere for a ball joint, a dark cylinder along
    the axis for a revolute joint."""
    tips = tips or {}
    ends, radius = {}, {}
    for i in range(model.N, 0, -1):                    # children first: see the radii
        m = inertia_params(model.I[i], allow_massless=True)[0]
        ends[i] = [plux_parts(model.Xtree[k])[1] for k in range(1, model.N + 1)
                   if model.parent[k] == i and i not in tip_only]
        ends[i] += [np.asarray(tips[i], dtype=float)] if i in tips else []
        total = sum(np.linalg.norm(e) for e in ends[i])
        if m > 0 and model.body_names[i] in boxes:
            radius[i] = float(min(box_of_inertia(model.I[i])[0])) / 2
        elif m > 0 and total > 0:
            radius[i] = float(np.sqrt(m / (WATER * np.pi * total)))
        else:                                          # the radius of a child's segment
            radius[i] = max((radius[k] for k in range(i + 1, model.N + 1)
                             if model.parent[k] == i), default=0.03)
    shapes = {}
    for i in range(1, model.N + 1):
        m, r = inertia_params(model.I[i], allow_massless=True)[0], radius[i]
        rj = min(r, 0.05)                              # a joint marker's size
        parts = []
        if model.body_names[i] in boxes:
            size, c = box_of_inertia(model.I[i])
            parts.append(s3.shape("box", size=tuple(size), origin=[*c, 1, 0, 0, 0],
                                  color=color))
        elif m > 0:
            for e in ends[i]:              # a capsule from the joint (the origin) to e
                origin, scale = s3.segment_poses(np.zeros((1, 3)), e[None])
                parts.append(s3.shape("capsule", radius=r,
                                      length=max(scale[0, 2] - 2 * r, 0.0),
                                      origin=origin[0], color=color))
        if joints and isinstance(model.joints[i], Spherical):
            parts.append(s3.shape("sphere", radius=1.3 * rj, color="#ffffff"))
        elif joints and isinstance(model.joints[i], Revolute):
            axis = np.asarray(model.joints[i].axis, dtype=float)[None]
            origin, _ = s3.segment_poses(-axis, axis)            # centred, along the axis
            parts.append(s3.shape("cylinder", radius=0.8 * rj, length=3.2 * rj,
                                  color="#333333", origin=origin[0]))
        if parts:
            shapes[i] = parts
    return shapes
