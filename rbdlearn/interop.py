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

from .errors import ArgumentTypeError, RbdlearnError
from .joints import UNIT_TOL, Fixed, Free, Prismatic, Revolute, Spherical, SphericalZYX
from .model import Model, _real_array, check_forces, check_state
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


def inertia_to_pin(I, where="spatial inertia"):
    """A ``pinocchio.Inertia`` from a spatial inertia in [angular; linear] order.

    A massless body (a frame, a welded link) becomes Pinocchio's zero-mass inertia with
    its rotational part, if any. For a point mass, Ic = I_O − m c×c×ᵀ is zero up to the
    round-off of that subtraction (and of the welds and transforms that built I_O), which
    can leave it unsymmetric or with principal moments of −1e-20, both of which Pinocchio
    refuses: Ic is symmetrised, and principal moments that are negative by no more than
    that round-off, ``_ROUNDOFF`` × ``|I_O|`` (I_O: the rotational inertia about the body
    frame's origin, whose entries the subtraction cancels), become zero. A rotational
    inertia with a negative diagonal entry beyond round-off, which Pinocchio refuses,
    raises ``ValueError`` naming ``where``; other unphysical ones (a model built with
    ``physical=False``) are passed on, as Pinocchio accepts them."""
    I = np.asarray(I, dtype=float)
    m, c, Ic = inertia_params(I, allow_massless=True)
    Ic = (Ic + Ic.T) / 2
    roundoff = _ROUNDOFF * np.abs(I[:3, :3]).max()
    lam, V = np.linalg.eigh(Ic)
    if lam[0] < 0 or np.diag(Ic).min() < 0:
        if lam[0] >= -roundoff:                   # round-off: the nearest PSD matrix,
            Ic = (V * np.maximum(lam, 0.0)) @ V.T     # whose diagonal Σ V² λ is ≥ 0 exactly
            Ic = (Ic + Ic.T) / 2
        elif np.diag(Ic).min() < 0:
            raise RbdlearnError(f"{where}: the rotational inertia about the centre of mass has "
                                f"principal moments {lam}, negative beyond round-off "
                                f"({roundoff:.2g}), and a negative diagonal entry "
                                f"({np.diag(Ic)}), which Pinocchio refuses")
    return _pin().Inertia(m, c, Ic)


_ROUNDOFF = 64 * np.finfo(float).eps
"""Relative round-off of a body's rotational inertia about its COM (see ``inertia_to_pin``):
building it (mcI, each weld's ᶜXᵀ I ᶜX: sums of 6 products, twice) and taking m c×c×ᵀ
off again each round by a few eps of |I_O|; 64 eps bounds a few such steps."""


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
    raise RbdlearnError(f"no Pinocchio joint for {type(joint).__name__}")


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


def _check_model(model):
    """ArgumentTypeError unless ``model`` is an rbdlearn Model (not a Pinocchio one)."""
    if not isinstance(model, Model):
        got = ("a pinocchio.Model; interop.from_pinocchio(pmodel) converts it"
               if isinstance(model, _pin().Model) else type(model).__name__)
        raise ArgumentTypeError(f"model must be an rbdlearn Model, got {got}")


def _check_pmodel(pmodel):
    """ArgumentTypeError unless ``pmodel`` is a pinocchio.Model (not an rbdlearn one)."""
    if not isinstance(pmodel, _pin().Model):
        got = ("an rbdlearn Model; interop.to_pinocchio(model) converts it"
               if isinstance(pmodel, Model) else type(pmodel).__name__)
        raise ArgumentTypeError(f"pmodel must be a pinocchio.Model, got {got}")


def to_pinocchio(model):
    """The equivalent ``pinocchio.Model`` (same joint names, same q/v order up to
    the conventions above, gravity copied)."""
    _check_model(model)
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
        where = f"body {i} ('{model.body_names[i]}')"
        pm.appendBodyToJoint(place[i][0], inertia_to_pin(model.I[i], where), place[i][1])
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
    raise RbdlearnError(f"from_pinocchio: joint '{name}' is a Pinocchio {jm.shortname()}, which "
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
    _check_pmodel(pmodel)
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
    """For each moving body: (joint, our q slice, our v slice, Pinocchio's idx_q, idx_v,
    nq, joint name)."""
    _check_model(model)
    _check_pmodel(pmodel)
    out = []
    for i in range(1, model.N + 1):
        j = model.joints[i]
        if j.nv == 0:
            continue
        if not pmodel.existJointName(model.names[i]):
            raise RbdlearnError(f"Pinocchio model has no joint named '{model.names[i]}'")
        pj = pmodel.joints[pmodel.getJointId(model.names[i])]
        if pj.nv != j.nv:
            raise RbdlearnError(f"joint '{model.names[i]}': nv {j.nv} here, {pj.nv} in Pinocchio")
        out.append((j, model.q_slices[i], model.v_slices[i], pj.idx_q, pj.idx_v, pj.nq,
                    model.names[i]))
    return out


def _pin_vector(x, n, name, what):
    """``x`` (Pinocchio's layout) as n finite floats; ValueError naming ``name`` otherwise."""
    a = _real_array(x, name)
    if a.shape != (n,):
        raise RbdlearnError(f"{name} has shape {a.shape}, expected ({n},) = ({what},)")
    if not np.all(np.isfinite(a)):
        k = int(np.argmax(~np.isfinite(a)))
        raise RbdlearnError(f"{name}[{k}] is {a[k]}")
    return a


def _q_block(j, qi, pnq, to_pin, name=None):
    if isinstance(j, (Revolute, Prismatic)):
        if pnq == 2:                                  # Pinocchio's unbounded revolute
            if to_pin:
                return np.array([np.cos(qi[0]), np.sin(qi[0])])
            n = np.hypot(qi[0], qi[1])
            if abs(n - 1.0) > UNIT_TOL:
                raise RbdlearnError(f"qp of joint '{name}' (Pinocchio's unbounded revolute, "
                                    f"(cos θ, sin θ)) is not a unit vector: norm {n:.9g}")
            return np.array([np.arctan2(qi[1], qi[0])])
        return qi
    if isinstance(j, SphericalZYX):
        return qi
    if isinstance(j, Spherical):
        return np.roll(qi, -1 if to_pin else 1)      # (w,x,y,z) <-> (x,y,z,w)
    return np.concatenate([qi[:3], np.roll(qi[3:], -1 if to_pin else 1)])   # Free


def q_to_pin(model, pmodel, q):
    """rbdlearn configuration → Pinocchio configuration. ``q`` is checked as the
    algorithms check it: nq finite numbers, each quaternion unit (to ``joints.UNIT_TOL``,
    as everywhere in rbdlearn; it is refused, not normalised)."""
    blocks = _blocks(model, pmodel)
    (q,) = check_state(model, q=q)
    qp = _pin().neutral(pmodel)
    for j, qs, _, iq, _, pnq, _ in blocks:
        qp[iq:iq + pnq] = _q_block(j, q[qs], pnq, True)
    return qp


def q_from_pin(model, pmodel, qp):
    """Pinocchio configuration → rbdlearn configuration. ``qp`` must be pmodel.nq finite
    numbers with unit quaternions (as :func:`q_to_pin` checks q)."""
    blocks = _blocks(model, pmodel)
    qp = _pin_vector(qp, pmodel.nq, "qp", "pmodel.nq")
    q = np.zeros(model.nq)
    for j, qs, _, iq, _, pnq, name in blocks:
        q[qs] = _q_block(j, qp[iq:iq + pnq], pnq, False, name)
    try:
        return check_state(model, q=q)[0]
    except ValueError as e:
        raise RbdlearnError(f"qp, Pinocchio's configuration: {e}") from None


def _v_convert(model, pmodel, v, to_pin):
    out = np.zeros(pmodel.nv if to_pin else model.nv)
    for j, _, vs, _, iv, _, _ in _blocks(model, pmodel):
        src = slice(vs.start, vs.stop) if to_pin else slice(iv, iv + j.nv)
        dst = slice(iv, iv + j.nv) if to_pin else vs
        # a free joint's block is a spatial vector: swap its halves
        out[dst] = to_linear_angular(v[src]) if isinstance(j, Free) else v[src]
    return out


def v_to_pin(model, pmodel, v):
    """rbdlearn velocity (or acceleration, or joint force) → Pinocchio's layout."""
    _check_model(model)
    return _v_convert(model, pmodel, check_state(model, v=v)[0], True)


def v_from_pin(model, pmodel, vp):
    """Pinocchio velocity (or acceleration, or joint force) → rbdlearn's layout."""
    _check_pmodel(pmodel)
    return _v_convert(model, pmodel, _pin_vector(vp, pmodel.nv, "vp", "pmodel.nv"), False)


def H_from_pin(model, pmodel, Hp):
    """Pinocchio's joint-space inertia matrix (``pinocchio.crba``; only its upper triangle
    is read, the part Pinocchio fills) → rbdlearn's full symmetric H, in rbdlearn's velocity
    layout. With P mapping Pinocchio's velocities to ours (v = P v_p, a permutation),
    ½ vᵀ H v = ½ v_pᵀ H_p v_p gives H = P H_p Pᵀ."""
    _check_pmodel(pmodel)
    Hp = _real_array(Hp, "Hp")
    if Hp.shape != (pmodel.nv, pmodel.nv) or not np.all(np.isfinite(Hp)):
        raise RbdlearnError(f"Hp must be pmodel.nv x pmodel.nv = {pmodel.nv} x {pmodel.nv} "
                            f"finite numbers, got shape {Hp.shape}"
                            + ("" if Hp.shape != (pmodel.nv, pmodel.nv) else " with NaN or inf"))
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
    _check_model(model)
    _check_pmodel(pmodel)
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
