"""The structure of a mechanism and changes to it (Chapter 5, sections 1 "Closed chains
by virtual cuts" and 3 "Changing the structure"; seed 004 §3.1, §4.2–4.4).

§3.1, Fig. 4: the tree stored as parent / child / brother pointers (``rbd.pointers``),
walked by the outward and inward recursions of the source (:func:`outward`,
:func:`inward`) — here with an explicit stack in place of Python's call stack, which a
chain of a thousand bodies would exhaust — and the RNEA driven by them
(:func:`rnea_pointers`).

§4.2–4.4: a structure change while the mechanism moves. :func:`connect` hangs a new
virtual link where the two links meet (:func:`add_loop_at`, steps (1)–(2)) and applies
the velocity jump of eqs. 29–33 (:func:`velocity_jump`, :class:`Connection`);
:func:`cut` removes a virtual link; :func:`cut_joint` re-attaches the outboard part of a
real joint to the base by a free joint (Fig. 12). Cuts make no jump.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..crb import crba
from ..errors import RbdlearnError
from ..joints import Fixed, Free
from ..kinematics import base_subspaces, body_velocities, forward_kinematics
from ..model import check_state, is_body, pointers
from ..inverse_dynamics import rnea
from ..spatial import inv_X, plux_parts, rot_to_quat
from .loops import Mechanism, _solve, _world_jacobian, add_loop, reduction

__all__ = ["outward", "inward", "rnea_pointers", "Connection", "velocity_jump",
           "add_loop_at", "connect", "cut", "cut_joint"]


# ------------------------------------------------- walking the pointers (§3.1, Fig. 4)

def outward(P, i=None):
    """The outward recursion of §3.1 over the pointers ``P`` (``rbd.pointers``): body i
    (default: the base's child), then the same recursion from its brother and from its
    child. Yields each body once, after its parent; no body searches for its children.
    The recursions still to run wait on a stack, the next one on top."""
    stack = [P.child[0] if i is None else i]
    while stack:
        i = stack.pop()
        if i < 0:                                 # no such body: nothing to do
            continue
        yield i                                   # the body's own step: parent done
        stack += [P.child[i], P.brother[i]]       # recurse: brother first, then child


def inward(P, i=None):
    """The inward recursion of §3.1: first the recursion from body i's brother and from
    its child, then body i itself. Yields each body once, after all its children. A body
    goes on the stack to recurse from it, then again, under its brother's and its
    child's recursions, for its own step."""
    stack = [(P.child[0] if i is None else i, "recurse")]
    while stack:
        i, what = stack.pop()
        if i < 0:
            continue
        if what == "step":
            yield i                               # the body's own step: children done
        else:                                     # brother first, then child, then i
            stack += [(i, "step"), (P.child[i], "recurse"), (P.brother[i], "recurse")]


def rnea_pointers(model, q, qd, qdd, f_ext=None, P=None):
    """``rnea`` with its two passes driven by the recursions of §3.1 over the pointers
    ``P`` (default ``rbd.pointers(model)``): the same per-body equations (RNEA-1..4),
    visited in the order the pointers give."""
    P = pointers(model) if P is None else P
    return rnea(model, q, qd, qdd, f_ext, order=(outward(P), inward(P)))


# -------------------------------------------------------- structure changes (§4.2–4.4)

@dataclass(frozen=True, eq=False)
class Connection:
    """Result of :func:`connect`: the new mechanism, its state after the velocity jump,
    the jump Δθ̇_G of the old generalized velocities and the impulse F₁ of seed 004
    eq. (29), in virtual-link coordinates: A Δθ̇ = −(J₁ − J₂)ᵀ F₁, so the connection
    applied −F₁ to link a and +F₁ to link b."""
    mech: Mechanism
    q: np.ndarray
    qd: np.ndarray
    dqd_G: np.ndarray
    F: np.ndarray


def velocity_jump(A, J1, J2, Jn, qd_G, tol=1e-10):
    """Δθ̇ and F₁ of a connection inside one mechanism (eqs. 29–33; A Δθ̇ = −(J1 − J2)ᵀ F₁,
    see :class:`Connection` for the sign): A its inertia in the
    generalized coordinates θ, J1 / J2 the Jacobians of the two links' frames, Jn (6 x p)
    the new joint's motion subspace (p = 0: a weld, C̃ = 0).

    Eqs. (30)–(32) need B̃⁻¹, which does not exist when the two links cannot move relative
    to each other in every direction (a planar mechanism: J1 − J2 has rank 3). The same
    impulse is computed here in a form that needs no inverse of B̃: the impulse has no
    component along the new joint (23), so F₁ = N λ with N an orthonormal basis of the
    complement of range(Jn); the rows K = Nᵀ(J1 − J2) are what the connection constrains,
    and λ = (K A⁻¹ Kᵀ)⁺ K θ̇ with the pseudo-inverse on the range of K (singular values
    below ``tol`` σ_max dropped: the rows of K that depend on others). When B̃ is
    invertible, N (Nᵀ B̃ N)⁻¹ Nᵀ = B̃⁻¹ (E₆ − C̃), and this is eq. (30) exactly."""
    J = J1 - J2
    p = Jn.shape[1]
    U = np.linalg.svd(Jn)[0] if p else np.eye(6)
    N = U[:, p:]                                       # Nᵀ Jn = 0: allowed impulses (23)
    K = N.T @ J
    Ainv_KT = _solve(A, K.T, "the inertia A of the connecting mechanism")
    B = K @ Ainv_KT                                    # Nᵀ B̃ N                    (31)
    lam = np.linalg.pinv(B, rcond=tol, hermitian=True) @ (K @ qd_G)            # (33)
    return -Ainv_KT @ lam, N @ lam                                             # (30), (29)


def add_loop_at(mech, q, a, b, joint=None, Xb=None, name=None):
    """§4.2 steps (1)–(2): a virtual link of b, hung from a exactly where b's frame ``Xb``
    is at configuration q, so the loop is closed with the cut ``joint`` at its neutral
    configuration. Returns (mechanism, q with the cut joint's neutral q appended)."""
    mech = mech if isinstance(mech, Mechanism) else Mechanism(mech)
    joint = Fixed() if joint is None else joint
    Xb = np.eye(6) if Xb is None else np.asarray(Xb, dtype=float)
    (q,) = check_state(mech.model, q=q)
    for body, what in ((a, "a"), (b, "b")):
        if not (isinstance(body, (int, np.integer)) and 0 <= body <= mech.model.N):
            raise RbdlearnError(f"body {what} = {body!r} is not a body in 0..{mech.model.N}")
    X0 = forward_kinematics(mech.model, q)
    Xa = Xb @ X0[b] @ inv_X(X0[a])                       # b's frame seen from a: ᶠX_a
    return add_loop(mech, a, b, joint, Xa, Xb, name), np.concatenate([q, joint.neutral()])


def connect(mech, q, qd, a, b, joint=None, Xb=None, name=None):
    """Connect link ``a`` to link ``b`` (0: the ground) by a new ``joint`` (default a weld)
    while the mechanism moves (§4.2, §4.3): a virtual link is hung from a exactly where b's
    frame ``Xb`` is now (so the loop is closed with the new joint at its neutral
    configuration), and the velocities jump by eqs. 29–33 so the new loop holds. Returns
    a :class:`Connection`."""
    mech = mech if isinstance(mech, Mechanism) else Mechanism(mech)
    model = mech.model
    joint = Fixed() if joint is None else joint
    new, q_new = add_loop_at(mech, q, a, b, joint, Xb, name)
    Xb = new.loops[-1].Xreal
    (qd,) = check_state(model, qd=qd)
    X0 = forward_kinematics(model, q)
    r = reduction(mech, q, qd)
    A = r.W.T @ crba(model, q) @ r.W                      # the old mechanism's inertia
    Xf = Xb @ X0[b]                                       # ᶠX₀, the new frame
    S0 = base_subspaces(model, q, X0).T
    J1 = Xf @ _world_jacobian(model, S0, a) @ r.W         # link a at the new frame
    J2 = Xf @ _world_jacobian(model, S0, b) @ r.W
    Jn = joint.S(joint.neutral())
    qd_G = qd[list(r.split.G)]
    dqd_G, F = velocity_jump(A, J1, J2, Jn, qd_G)
    qd_n = np.linalg.lstsq(Jn, (J2 - J1) @ (qd_G + dqd_G), rcond=None)[0] if Jn.size \
        else np.zeros(0)                                  # the new joint's velocity, (22)
    return Connection(new, q_new, np.concatenate([r.W @ (qd_G + dqd_G), qd_n]), dqd_G, F)


def _drop_body(model, k):
    """``model`` without body k (a leaf), later bodies renumbered."""
    keep = [i for i in range(model.N + 1) if i != k]
    renum = {old: new for new, old in enumerate(keep)}
    return model.replace(parent=[-1] + [renum[model.parent[i]] for i in keep[1:]],
                         **{attr: [getattr(model, attr)[i] for i in keep]
                            for attr in ("joints", "Xtree", "I", "names", "body_names")})


def cut(mech, q, qd, name):
    """Cut the loop ``name`` at its virtual link (§4.4): the virtual link and its joint
    are removed (the reverse of :func:`connect`'s structure change). Returns
    (mechanism, q, q̇)."""
    loop, model = mech.loop(name), mech.model
    q, qd = check_state(model, q=q, qd=qd)
    k = loop.virtual
    loops = tuple(replace(lp, virtual=lp.virtual - (lp.virtual > k),
                          real=lp.real - (lp.real > k))
                  for lp in mech.loops if lp.name != name)
    qs, vs = model.q_slices[k], model.v_slices[k]
    return (Mechanism(_drop_body(model, k), loops), np.delete(q, np.r_[qs]),
            np.delete(qd, np.r_[vs]))


def cut_joint(mech, q, qd, i):
    """Cut the real joint of body i (§4.4, Fig. 12): body i and its subtree are
    re-attached to the base by a free joint placed where body i is, moving as it moves,
    so nothing jumps; loops through the cut part stay closed by their virtual links.
    Returns (mechanism, q, q̇)."""
    model = mech.model
    q, qd = check_state(model, q=q, qd=qd)
    if not is_body(model, i) or i in [lp.virtual for lp in mech.loops]:
        raise RbdlearnError(f"cut_joint needs a real body in 1..{model.N}, got {i!r}")
    E, p = plux_parts(forward_kinematics(model, q)[i])
    v_i = body_velocities(model, q, qd)[i]
    joints, Xtree, parent = list(model.joints), list(model.Xtree), list(model.parent)
    joints[i], Xtree[i], parent[i] = Free(), np.eye(6), 0
    new = model.replace(parent=parent, joints=joints, Xtree=Xtree)
    qs = [q[model.q_slices[k]] for k in range(1, model.N + 1)]
    vs = [qd[model.v_slices[k]] for k in range(1, model.N + 1)]
    qs[i - 1] = np.concatenate([p, rot_to_quat(E.T)])     # origin and orientation in base
    vs[i - 1] = v_i                                       # its spatial velocity, body frame
    return Mechanism(new, mech.loops), np.concatenate(qs), np.concatenate(vs)

