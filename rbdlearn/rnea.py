"""Inverse dynamics by the recursive Newton–Euler algorithm (Chapter 1, seed 001).

Outward pass (body velocities and accelerations, seed 001 "inverse dynamics"):
    v_i = ⁱX_λ v_λ + S_i q̇_i                                   (RNEA-1)
    a_i = ⁱX_λ a_λ + S_i q̈_i + c_J + v_i × S_i q̇_i            (RNEA-2)
    f_i = I_i a_i + v_i ×* I_i v_i − f_i^ext                    (RNEA-3)
Inward pass (joint forces):
    τ_i = S_iᵀ f_i,      f_λ += ⁱX_λᵀ f_i                        (RNEA-4)
Gravity enters as a fictitious acceleration of the base, a_0 = −g.

Every per-body quantity is one array whose first axis is the body, 0..N: ``v[i]`` is body
i's velocity. Only the recursions — each body's value from its parent's (RNEA-1, -2) or
its children's (RNEA-4) — loop over the bodies; the terms each body computes on its own
(S_i q̇_i, v_i × S_i q̇_i, RNEA-3, S_iᵀ f_i) are computed for every body in one line
(speed: numpy's fixed cost per operation is then paid once, not once per body).

A batch of states, q (..., nq) and qd, qdd (..., nv), runs through the same lines: each
body's quantities then hold one entry per state, (..., 6), and ``mv(X, v)`` = X v,
``mtv(X, f)`` = Xᵀ f multiply matrix and vector state by state (see ``spatial``).
"""

import numpy as np

from .kinematics import (joint_biases, joint_forces, joint_motions, joint_transforms,
                         motion_subspaces, propagate, stacked_forces, stacked_inertias)
from .model import batch_shape, check_forces, check_state
from .spatial import cross_force, cross_motion, mm_flops, mtv, mv

__all__ = ["rnea", "rnea_flops"]


def rnea(model, q, qd, qdd, f_ext=None, return_forces=False, order=None):
    """Joint forces τ that produce accelerations ``qdd`` at state ``(q, qd)``.

    ``f_ext``: optional external spatial forces, a list of N + 1 6-vectors (or a
    dict {body: force}, a body by index or by name), each acting on body i and
    expressed in body i's coordinates. Works on floats and on object arrays of sympy expressions.
    A batch of states, ``q`` (..., nq), ``qd`` and ``qdd`` (..., nv) broadcast together,
    gives τ of shape (..., nv) (and forces (..., 6)).
    With ``return_forces=True`` also returns the array ``f`` (N+1, ..., 6) of the whole
    spatial forces that the joints transmit (``f[i]``: from body λ(i) to body i, in body
    i's coordinates; ``τ_i = S_iᵀ f[i]`` is its part along the joint's freedoms; f[0] = 0).
    ``order``: ``(outward, inward)``, the bodies in the order the two passes visit them
    (default 1..N and N..1); any outward order that reaches a body after its parent and
    any inward order that reaches it after its children give the same τ (Chapter 5 walks
    the parent/child/brother pointers, ``closed_chains.rnea_pointers``).
    """
    q, qd, qdd = check_state(model, batch=True, q=q, qd=qd, qdd=qdd)
    f_ext = check_forces(model, f_ext, batch=True)
    outward, inward = _passes(model, order)
    batch = batch_shape(q, qd, qdd, *(f_ext or []))
    Xup, S = joint_transforms(model, q), motion_subspaces(model, q)
    vJ = joint_motions(model, S, qd, batch)                           # S_i q̇_i
    v = propagate(model, Xup, vJ, 0.0, outward)                        # (RNEA-1)
    aJ = joint_motions(model, S, qdd, batch) + joint_biases(model, q, qd, batch)
    a = propagate(model, Xup, aJ + cross_motion(v, vJ), -model.gravity, outward)  # (RNEA-2)
    I = stacked_inertias(model, batch)
    f = mv(I, a) + cross_force(v, mv(I, v))                            # (RNEA-3)
    if f_ext is not None:
        f = f - stacked_forces(f_ext, batch)
    parent = model.parent
    for i in inward:
        if parent[i] > 0:
            f[parent[i]] += mtv(Xup[i], f[i])                          # (RNEA-4)
    tau = joint_forces(model, S, f)                                    # (RNEA-4)
    return (tau, f) if return_forces else tau


def _passes(model, order):
    """The bodies in the order of the outward and the inward pass: 1..N and N..1, or
    ``order`` = (outward, inward), each checked body by body."""
    if order is None:
        return range(1, model.N + 1), range(model.N, 0, -1)
    if len(order) != 2:
        raise ValueError("order must be a pair (outward, inward) of body sequences")
    return list(_checked(model, order[0], True)), list(_checked(model, order[1], False))


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
            raise ValueError(f"{which} order: {i!r} is not a body in 1..{N} not yet visited")
        if outward and not done[parent[i]]:
            raise ValueError(f"outward order reaches body {i} before its parent {parent[i]}")
        if not outward and waiting[i]:
            raise ValueError(f"inward order reaches body {i} before its children")
        done[i] = True
        waiting[parent[i]] -= 1
        yield i
    if not all(done):
        raise ValueError(f"{which} order misses bodies {[i for i in range(N + 1) if not done[i]]}")


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
