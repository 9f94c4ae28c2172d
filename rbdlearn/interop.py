"""Interoperability with Pinocchio, the reference implementation the tests compare against.

Pinocchio orders spatial vectors [linear; angular] and stores quaternions as
(x, y, z, w); a URDF "continuous" joint has nq = 2 there, (cos θ, sin θ). The
functions below convert rbdlearn's q, v (and anything with v's layout:
accelerations, joint forces) and per-body forces both ways, matching joints by
name, so they also work with a Pinocchio model built from a URDF by Pinocchio.

Pinocchio has no fixed joint: :func:`to_pinocchio` merges a body on a fixed
joint into its nearest moving ancestor, and records every body as a Pinocchio
frame named after ``model.body_names[i]``.
"""

import numpy as np

from .joints import Fixed, Free, Prismatic, Revolute, Spherical, SphericalZYX
from .model import Model, check_forces
from .spatial import inertia_params, mcI, plux, plux_parts, to_angular_linear, to_linear_angular

__all__ = ["to_pinocchio", "from_pinocchio", "se3_from_X", "inertia_to_pin", "q_to_pin",
           "q_from_pin", "v_to_pin", "v_from_pin", "H_from_pin", "fext_to_pin"]


def _pin():
    import pinocchio
    return pinocchio


def se3_from_X(X):
    """The Pinocchio placement ``ᴬM_B`` of frame B in frame A, from ``ᴮX_A``."""
    E, r = plux_parts(np.asarray(X, dtype=float))
    return _pin().SE3(E.T.copy(), r.copy())


def inertia_to_pin(I):
    """A ``pinocchio.Inertia`` from a spatial inertia in [angular; linear] order.

    A massless body (a frame, a welded link) becomes Pinocchio's zero-mass inertia with
    its rotational part, if any. Ic = I_O − m c×c×ᵀ is symmetrised: for a point mass the
    subtraction leaves round-off that Pinocchio's symmetry check refuses."""
    m, c, Ic = inertia_params(np.asarray(I, dtype=float), allow_massless=True)
    return _pin().Inertia(m, c, (Ic + Ic.T) / 2)


def _joint_model(joint):
    pin = _pin()
    if isinstance(joint, Revolute):
        return pin.JointModelRevoluteUnaligned(joint.axis)
    if isinstance(joint, Prismatic):
        return pin.JointModelPrismaticUnaligned(joint.axis)
    if isinstance(joint, Spherical):
        return pin.JointModelSpherical()
    if isinstance(joint, SphericalZYX):                # same q = (z, y, x), v = q̇
        return pin.JointModelSphericalZYX()
    if isinstance(joint, Free):
        return pin.JointModelFreeFlyer()
    raise ValueError(f"no Pinocchio joint for {type(joint).__name__}")


def _depth_first(model):
    """Bodies 1..N in depth-first order (children in increasing number)."""
    children = [[] for _ in range(model.N + 1)]
    for i in range(1, model.N + 1):
        children[model.parent[i]].append(i)
    order, stack = [], children[0][::-1]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(children[i][::-1])
    return order


def to_pinocchio(model):
    """The equivalent ``pinocchio.Model`` (same joint names, same q/v order up to
    the conventions above, gravity copied)."""
    pin = _pin()
    pm = pin.Model()
    pm.gravity = pin.Motion(to_linear_angular(np.asarray(model.gravity, dtype=float)))
    # place[i] = (Pinocchio joint that carries body i, body i's placement in it)
    place = [(0, pin.SE3.Identity())] + [None] * model.N
    # Pinocchio's algorithms (crba, aba, ...) assume each subtree occupies a contiguous
    # range of joints, i.e. a depth-first numbering, which parent[i] < i does not imply.
    for i in _depth_first(model):
        jid, M_parent = place[model.parent[i]]
        M_tree = M_parent * se3_from_X(model.Xtree[i])
        joint = model.joints[i]
        if isinstance(joint, Fixed):
            place[i] = (jid, M_tree)
        else:
            jid = pm.addJoint(jid, _joint_model(joint), M_tree, model.names[i])
            place[i] = (jid, pin.SE3.Identity())
        pm.appendBodyToJoint(place[i][0], inertia_to_pin(model.I[i]), place[i][1])
        pm.addFrame(pin.Frame(model.body_names[i], place[i][0], place[i][1],
                              pin.FrameType.BODY))
    return pm


_AXES = {"X": [1.0, 0.0, 0.0], "Y": [0.0, 1.0, 0.0], "Z": [0.0, 0.0, 1.0]}


def _joint_from_pin(jm, name):
    """The rbdlearn joint of a Pinocchio ``JointModel`` (by its short name)."""
    kind = jm.shortname().removeprefix("JointModel")
    if kind in ("RX", "RY", "RZ", "RUBX", "RUBY", "RUBZ"):       # RUB: unbounded, nq = 2
        return Revolute(_AXES[kind[-1]])
    if kind in ("RevoluteUnaligned", "RevoluteUnboundedUnaligned"):
        return Revolute(jm.extract().axis)
    if kind in ("PX", "PY", "PZ"):
        return Prismatic(_AXES[kind[-1]])
    if kind == "PrismaticUnaligned":
        return Prismatic(jm.extract().axis)
    simple = {"Spherical": Spherical, "SphericalZYX": SphericalZYX, "FreeFlyer": Free}
    if kind in simple:
        return simple[kind]()
    raise ValueError(f"from_pinocchio: joint '{name}' is a Pinocchio {jm.shortname()}, which "
                     f"rbdlearn has no joint for (it has revolute, prismatic, spherical, "
                     f"spherical ZYX and free joints)")


def from_pinocchio(pmodel, physical=True):
    """The rbdlearn :class:`~rbdlearn.model.Model` of a ``pinocchio.Model``: one body per
    Pinocchio joint (Pinocchio already numbers them so that parent < child), joint i's
    placement in its parent as ``Xtree[i]``, its inertia as ``I[i]``, the joint names,
    and the first BODY frame on each joint as its body name. Raises ``ValueError``
    naming the first joint of a type rbdlearn does not have. q and v convert with
    :func:`q_from_pin` / :func:`v_from_pin`, as for any model with the same joint names.
    ``physical=False`` accepts inertias that are not physically realisable, which
    Pinocchio allows (see :class:`~rbdlearn.model.Model`)."""
    N = pmodel.njoints - 1
    joints, Xtree, I = [None], [None], [None]
    for j in range(1, N + 1):
        joints.append(_joint_from_pin(pmodel.joints[j], pmodel.names[j]))
        M = pmodel.jointPlacements[j]                      # joint j in its parent joint
        Xtree.append(plux(M.rotation.T, M.translation))   # ʲX_λ from ˡM_j (se3_from_X⁻¹)
        Y = pmodel.inertias[j]
        I.append(mcI(Y.mass, np.array(Y.lever), np.array(Y.inertia)))
    body_names = ["universe"] + [None] * N
    for f in pmodel.frames:                     # the first BODY frame on a joint names it
        j = f.parentJoint
        if f.type == _pin().FrameType.BODY and j > 0 and body_names[j] is None \
                and f.name not in body_names:
            body_names[j] = f.name
    body_names = [b or f"body_{pmodel.names[j]}" for j, b in enumerate(body_names)]
    return Model(parent=[-1] + [int(pmodel.parents[j]) for j in range(1, N + 1)],
                 joints=joints, Xtree=Xtree, I=I, names=list(pmodel.names),
                 gravity=to_angular_linear(np.array(pmodel.gravity.vector)),
                 body_names=body_names, physical=physical)


def _blocks(model, pmodel):
    """For each moving body: (our q slice, our v slice, Pinocchio's idx_q, idx_v, nq)."""
    out = []
    for i in range(1, model.N + 1):
        j = model.joints[i]
        if j.nv == 0:
            continue
        if not pmodel.existJointName(model.names[i]):
            raise ValueError(f"Pinocchio model has no joint named '{model.names[i]}'")
        pj = pmodel.joints[pmodel.getJointId(model.names[i])]
        if pj.nv != j.nv:
            raise ValueError(f"joint '{model.names[i]}': nv {j.nv} here, {pj.nv} in Pinocchio")
        out.append((j, model.q_slices[i], model.v_slices[i], pj.idx_q, pj.idx_v, pj.nq))
    return out


def _q_block(j, qi, pnq, to_pin):
    if isinstance(j, (Revolute, Prismatic)):
        if pnq == 2:                                  # Pinocchio's unbounded revolute
            return np.array([np.cos(qi[0]), np.sin(qi[0])]) if to_pin else \
                np.array([np.arctan2(qi[1], qi[0])])
        return qi
    if isinstance(j, SphericalZYX):
        return qi
    if isinstance(j, Spherical):
        return np.roll(qi, -1 if to_pin else 1)      # (w,x,y,z) <-> (x,y,z,w)
    return np.concatenate([qi[:3], np.roll(qi[3:], -1 if to_pin else 1)])   # Free


def q_to_pin(model, pmodel, q):
    """rbdlearn configuration → Pinocchio configuration."""
    qp = _pin().neutral(pmodel)
    for j, qs, _, iq, _, pnq in _blocks(model, pmodel):
        qp[iq:iq + pnq] = _q_block(j, np.asarray(q, dtype=float)[qs], pnq, True)
    return qp


def q_from_pin(model, pmodel, qp):
    """Pinocchio configuration → rbdlearn configuration."""
    q = np.zeros(model.nq)
    for j, qs, _, iq, _, pnq in _blocks(model, pmodel):
        q[qs] = _q_block(j, np.asarray(qp, dtype=float)[iq:iq + pnq], pnq, False)
    return q


def _v_convert(model, pmodel, v, to_pin):
    v = np.asarray(v, dtype=float)
    out = np.zeros(pmodel.nv if to_pin else model.nv)
    for j, _, vs, _, iv, _ in _blocks(model, pmodel):
        src = slice(vs.start, vs.stop) if to_pin else slice(iv, iv + j.nv)
        dst = slice(iv, iv + j.nv) if to_pin else vs
        # a free joint's block is a spatial vector: swap its halves
        out[dst] = to_linear_angular(v[src]) if isinstance(j, Free) else v[src]
    return out


def v_to_pin(model, pmodel, v):
    """rbdlearn velocity (or acceleration, or joint force) → Pinocchio's layout."""
    return _v_convert(model, pmodel, v, True)


def v_from_pin(model, pmodel, vp):
    """Pinocchio velocity (or acceleration, or joint force) → rbdlearn's layout."""
    return _v_convert(model, pmodel, vp, False)


def H_from_pin(model, pmodel, Hp):
    """Pinocchio's joint-space inertia matrix (``pinocchio.crba``; only its upper triangle
    is read, the part Pinocchio fills) → rbdlearn's full symmetric H, in rbdlearn's velocity
    layout. With P mapping Pinocchio's velocities to ours (v = P v_p, a permutation),
    ½ vᵀ H v = ½ v_pᵀ H_p v_p gives H = P H_p Pᵀ."""
    Hp = np.triu(Hp) + np.triu(Hp, 1).T
    P = np.zeros((model.nv, pmodel.nv))
    for k, e in enumerate(np.eye(pmodel.nv)):
        P[:, k] = v_from_pin(model, pmodel, e)
    return P @ Hp @ P.T


def fext_to_pin(model, pmodel, f_ext):
    """Per-body external forces (body coordinates, [n; f]) → Pinocchio's per-joint
    ``fext`` (joint coordinates, [f; n]), moving each force to the joint that
    carries the body (through the body's frame placement)."""
    pin = _pin()
    f_ext = check_forces(model, f_ext)      # a list or a {body: force} dict, as in rnea
    fp = [pin.Force.Zero() for _ in range(pmodel.njoints)]
    if f_ext is None:
        return fp
    for i in range(1, model.N + 1):
        frame = pmodel.frames[pmodel.getFrameId(model.body_names[i])]
        f = pin.Force(to_linear_angular(np.asarray(f_ext[i], dtype=float)))
        fp[frame.parentJoint] += frame.placement.act(f)
    return fp


def force_from_pin(f):
    """A ``pinocchio.Force`` (or [f; n] 6-vector) → [n; f] 6-vector."""
    return to_angular_linear(np.asarray(getattr(f, "vector", f), dtype=float))
