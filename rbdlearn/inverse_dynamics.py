"""Inverse dynamics by the recursive Newton–Euler algorithm (Chapter 1 §3, seed 001; the
book's equations rn-v, rn-a, rn-f, rn-tau): ``rnea`` (τ), ``rnea_forces`` (τ and the forces
the joints transmit), ``rnea_flops`` (its cost), and the traversal orders of the two passes
(any order that meets a parent before its children, Chapter 5's pointer walks).

Outward pass (body velocities and accelerations, seed 001 "inverse dynamics"):
    v_i = ⁱX_λ v_λ + S_i q̇_i                                   (RNEA-1)
    a_i = ⁱX_λ a_λ + S_i q̈_i + c_J + v_i × S_i q̇_i            (RNEA-2)
    f_i = I_i a_i + v_i ×* I_i v_i − f_i^ext                    (RNEA-3)
Inward pass (joint forces):
    τ_i = S_iᵀ f_i,      f_λ += ⁱX_λᵀ f_i                        (RNEA-4)
Gravity enters as a fictitious acceleration of the base, a_0 = −g.

A batch of states, q (..., nq) and qd, qdd (..., nv), runs through the same lines: each
body's quantities then hold one entry per state, (..., 6), and ``mv(X, v)`` = X v,
``mtv(X, f)`` = Xᵀ f multiply matrix and vector state by state (see ``spatial``).
"""

from dataclasses import dataclass

import numpy as np

from .errors import RbdlearnError
from .kinematics import forward_kinematics, joint_transforms
from .model import batch_shape, check_forces, check_state
from .spatial import cross_force, cross_motion, mm_flops, mtv, mv

__all__ = ["rnea", "rnea_forces", "JointForces", "rnea_flops", "torque_parts",
           "transmitted_forces"]


def rnea(model, q, qd, qdd, f_ext=None, order=None):
    """Joint forces τ that produce accelerations ``qdd`` at state ``(q, qd)``: the τ of
    :func:`.rnea_forces`, which also gives the spatial forces the joints transmit.

    ``f_ext``: optional external spatial forces, a list of N + 1 6-vectors (or a
    dict {body: force}, a body by index or by name), each acting on body i and
    expressed in body i's coordinates. Works on floats and on object arrays of sympy
    expressions. A batch of states, ``q`` (..., nq), ``qd`` and ``qdd`` (..., nv)
    broadcast together, gives τ of shape (..., nv); each external force is then a
    6-vector, the same in every state, or one per state, (..., 6). ``order``: see
    :func:`.rnea_forces`.
    """
    return rnea_forces(model, q, qd, qdd, f_ext, order).tau


@dataclass(frozen=True)
class JointForces:
    """The result of :func:`.rnea_forces`: the joint forces ``tau`` (nv, or (..., nv) for a
    batch) and the list ``f`` of the whole spatial forces the joints transmit (``f[i]``:
    from body λ(i) to body i, in body i's coordinates, (6,) or (..., 6); ``f[0]`` None),
    of which ``τ_i = S_iᵀ f[i]`` is the part along joint i's freedoms (rn-f, rn-tau)."""
    tau: np.ndarray
    f: list


def rnea_forces(model, q, qd, qdd, f_ext=None, order=None):
    """The recursive Newton–Euler algorithm: :class:`JointForces` ``(tau, f)``, the joint
    forces τ that produce accelerations ``qdd`` at state ``(q, qd)`` and the spatial forces
    f the joints transmit, which the inward pass computes on the way.

    ``f_ext``: optional external spatial forces, a list of N + 1 6-vectors (or a
    dict {body: force}, a body by index or by name), each acting on body i and
    expressed in body i's coordinates. Works on floats and on object arrays of sympy expressions.
    A batch of states, ``q`` (..., nq), ``qd`` and ``qdd`` (..., nv) broadcast together,
    gives τ of shape (..., nv) and forces (..., 6); each external force is then a
    6-vector, the same in every state, or one per state, (..., 6).
    ``order``: ``(outward, inward)``, the bodies in the order the two passes visit them
    (default 1..N and N..1); any outward order that reaches a body after its parent and
    any inward order that reaches it after its children give the same τ (Chapter 5 walks
    the parent/child/brother pointers, ``closed_chains.rnea_pointers``).
    """
    q, qd, qdd = check_state(model, batch=True, q=q, qd=qd, qdd=qdd)
    batch = batch_shape(q, qd, qdd)
    f_ext = check_forces(model, f_ext, batch)
    N, parent = model.N, model.parent
    outward, inward = _passes(model, order)
    Xup = joint_transforms(model, q)
    v = [np.zeros(6)] + [None] * N
    a = [-model.gravity] + [None] * N
    f = [None] * (N + 1)
    S = [None] * (N + 1)
    for i in outward:
        j, p = model.joints[i], parent[i]
        qi, qdi = q[..., model.q_slices[i]], qd[..., model.v_slices[i]]
        S[i] = j.S(qi)
        vJ = mv(S[i], qdi)
        v[i] = mv(Xup[i], v[p]) + vJ                                       # (RNEA-1)
        a[i] = (mv(Xup[i], a[p]) + mv(S[i], qdd[..., model.v_slices[i]]) + j.cJ(qi, qdi)
                + cross_motion(v[i], vJ))                                  # (RNEA-2)
        f[i] = mv(model.I[i], a[i]) + cross_force(v[i], mv(model.I[i], v[i]))   # (RNEA-3)
        if f_ext is not None:
            f[i] = f[i] - f_ext[i]
    tau = [None] * (N + 1)
    for i in inward:
        tau[i] = mtv(S[i], f[i])                                           # (RNEA-4)
        if parent[i] > 0:
            f[parent[i]] = f[parent[i]] + mtv(Xup[i], f[i])
    if batch:                        # in a batch, a τ_i that is the same for all is spread
        tau[1:] = [np.broadcast_to(t, batch + t.shape[-1:]) for t in tau[1:]]
    tau = np.concatenate(tau[1:], axis=-1) if N else np.zeros(batch + (0,))
    return JointForces(tau, f)


def _passes(model, order):
    """The bodies in the order of the outward and the inward pass: 1..N and N..1, or
    ``order`` = (outward, inward), checked body by body as it is consumed."""
    if order is None:
        return range(1, model.N + 1), range(model.N, 0, -1)
    if len(order) != 2:
        raise RbdlearnError("order must be a pair (outward, inward) of body sequences")
    return _checked(model, order[0], True), _checked(model, order[1], False)


def _checked(model, bodies, outward):
    """Yield ``bodies``, raising ValueError as soon as one is not a body, comes twice, comes
    before its parent (outward) or before one of its children (inward), or is missing."""
    N, parent, which = model.N, model.parent, "outward" if outward else "inward"
    done = [True] + [False] * N
    waiting = [0] * (N + 1)                       # children not yet visited
    for i in range(1, N + 1):
        waiting[parent[i]] += 1
    for i in bodies:
        if not (isinstance(i, (int, np.integer)) and 1 <= i <= N) or done[i]:
            raise RbdlearnError(f"{which} order: {i!r} is not a body in 1..{N} not yet visited")
        if outward and not done[parent[i]]:
            raise RbdlearnError(f"outward order reaches body {i} before its parent {parent[i]}")
        if not outward and waiting[i]:
            raise RbdlearnError(f"inward order reaches body {i} before its children")
        done[i] = True
        waiting[parent[i]] -= 1
        yield i
    if not all(done):
        missing = [i for i in range(N + 1) if not done[i]]
        raise RbdlearnError(f"{which} order misses bodies {missing}")


def rnea_flops(model):
    """Flops of one ``rnea`` call on ``model`` (without f_ext), line by line, with the
    convention of ``spatial.mm_flops``: a fixed amount per body for each joint type, so
    O(N). Velocity products are counted even when q̇ = 0, as the code computes them."""
    total = 0
    for i in range(1, model.N + 1):
        n = model.joints[i].nv
        total += mm_flops(6, 6, 6)                                # Xup = XJ Xtree
        total += mm_flops(6, 6, 1) + mm_flops(6, n, 1) + 6        # v = Xup v_λ + S q̇ (RNEA-1)
        total += mm_flops(6, 6, 1) + mm_flops(6, n, 1) + 30 + 18  # a: 2 products, v × vJ, 3 sums
        total += 2 * mm_flops(6, 6, 1) + 30 + 6                   # f = I a + v ×* I v (RNEA-3)
        total += mm_flops(n, 6, 1)                                # τ = Sᵀ f (RNEA-4)
        if model.parent[i] > 0:
            total += mm_flops(6, 6, 1) + 6                        # f_λ += Xupᵀ f
    return total


# ------------------------------------------------ what the torques are made of (§3)

def torque_parts(model, q, qd, qdd):
    """The joint forces of ``rnea`` split into three parts, each one rnea call:

    ``gravity = rnea(q, 0, 0)``, ``velocity = rnea(q, qd, 0) − gravity`` (Coriolis and
    centripetal), ``inertial = rnea(q, 0, qdd) − gravity`` (= H(q) qdd); their sum is
    ``total = rnea(q, qd, qdd)`` because the velocity terms do not depend on qdd.
    """
    zero = np.zeros(model.nv)
    gravity = rnea(model, q, zero, zero)
    return {"gravity": gravity,
            "velocity": rnea(model, q, qd, zero) - gravity,
            "inertial": rnea(model, q, zero, qdd) - gravity,
            "total": rnea(model, q, qd, qdd)}


def transmitted_forces(model, q, qd, qdd, f_ext=None):
    """The whole spatial force each joint transmits (:func:`.rnea_forces`),
    moved to base coordinates (moment about the base origin), gravity included.
    Returns a list ``f[i]`` (entry 0 unused): the force exerted by body λ(i) on body i."""
    f = rnea_forces(model, q, qd, qdd, f_ext=f_ext).f
    X0 = forward_kinematics(model, q)
    return [None] + [X0[i].T @ f[i] for i in range(1, model.N + 1)]     # ⁰X_i⁻ᵀ = ⁱX₀ᵀ
