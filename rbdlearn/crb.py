"""The joint-space inertia matrix by the composite-rigid-body algorithm (Chapter 3, seed 003).

Chapter 3, "The joint-space inertia matrix" and "Methods, sparsity and cost". With only
joint i accelerating (q̈ = e_i, no velocity, no gravity), everything outboard of joint i
moves as one rigid body, the composite body C_i, whose inertia in body-i coordinates
accumulates from the leaves (eq. crb-spatial):
    I^C_i = I_i + Σ_{c: λ(c)=i} ᶜX_iᵀ I^C_c ᶜX_i                       (CRB-1)
In base coordinates, ⁰I^C_i = ⁱX₀ᵀ I^C_i ⁱX₀, the same recursion is a plain sum
(ᶜX_i ⁱX₀ = ᶜX₀, eq. crb-base): ⁰I^C_i = ⁰I_i + Σ_{c: λ(c)=i} ⁰I^C_c, which ``crba``
computes. Joint i must then transmit the force F_i = I^C_i S_i (eq. crb-force), and every
joint j on the path from i to the root transmits the same force and feels its
projection on its own motion subspace (eq. crb-hji):
    H_ij = H_jiᵀ = F_iᵀ ⁱX_j S_j = (⁰F_i)ᵀ (⁰S_j)                        (CRB-2)
where ⁰S_j = ⁰X_j S_j and ⁰F_i = ⁱX₀ᵀ F_i are the same vectors in base coordinates, so
the walk from i to the root needs no transform: ``crba`` takes the joints of i's path
(its parent's path and i) all at once. Entries between joints on different branches are
zero (neither is on the other's path) and are never computed.

Forward dynamics through H (section "Forward dynamics with H"): H q̈ = τ − b, solved by
Featherstone's LᵀL factorisation, which keeps H's zeros (§6.5 of his book), then two
triangular solves (``forward_dynamics_crb``).

The same matrix three more ways, for the chapter's comparison: the source's 3-vector form
(``composite_3vector``, ``crba_3vector``; eqs. crb-3vector), the unit-vector method (n RNEA
calls) and the Jacobian form (eq. crb-jacobian-form); ``operation_counts`` gives their
flop counts.
"""

import math
from dataclasses import dataclass

import numpy as np

from .articulated import SingularArticulatedInertia
from .kinematics import (base_subspaces, base_transforms, body_pose, forward_kinematics,
                         jacobian, joint_transforms, point_jacobian, stacked_inertias)
from .model import check_state, without_gravity
from .inverse_dynamics import rnea, rnea_flops
from .spatial import inertia_params, mm, mm_flops

__all__ = ["crba", "forward_dynamics_crb", "ltl", "SingularMassMatrix", "support_mask",
           "fill_owner", "Composite", "composite_3vector", "crba_3vector", "unit_vector_method",
           "jacobian_method", "operation_counts"]


class SingularMassMatrix(SingularArticulatedInertia):
    """H(q) is not positive definite: some joint moves no mass that the joints before it
    do not already move (a :class:`~rbdlearn.articulated.SingularArticulatedInertia` too: the
    ABA finds the same joint's D singular)."""


def support_mask(model):
    """M[k, l] = True when joint-velocity k belongs to a joint on the path from the joint
    of velocity l to the root (its own joint included): where H_kl comes from (CRB-2).
    Each body's path is its parent's path and itself."""
    on_path = np.zeros((model.N + 1, model.N + 1), dtype=bool)    # [i, j]: j on i's path
    for i in range(1, model.N + 1):
        on_path[i] = on_path[model.parent[i]]
        on_path[i, i] = True
    body = model.velocity_body
    return on_path[np.ix_(body, body)].T


def crba(model, q):
    """The joint-space inertia matrix H(q) (nv x nv, symmetric positive definite); for a
    batch of configurations q (..., nq), one per state, (..., nv, nv). Works on sympy
    expressions too (symbolic q or model parameters).

    A large batch is taken in blocks of states whose arrays (each body's transform and
    composite inertia, and H) take about 8 MB, so that they stay in a processor's cache:
    the same lines, run once per block, instead of one pass over arrays of hundreds of MB
    (10⁴ states of talos_reduced; ``benchmarks/bench_batch.py`` times it)."""
    (q,) = check_state(model, batch=True, q=q)
    if q.ndim == 1:
        return _crba(model, q)
    states = q.reshape(-1, model.nq)
    block = max(1, 2**23 // (8 * (3 * 36 * (model.N + 1) + model.nv ** 2)))   # ~8 MB
    H = np.empty((len(states), model.nv, model.nv))
    for s in range(0, len(states), block):
        H[s:s + block] = _crba(model, states[s:s + block])
    return H.reshape(q.shape[:-1] + H.shape[-2:])


def _crba(model, q):
    """:func:`crba` for one q (nq,) or one block of states (K, nq), checked."""
    N, parent, vs, batch = model.N, model.parent, model.v_slices, q.shape[:-1]
    X0 = base_transforms(model, joint_transforms(model, q))            # ⁱX₀
    # (CRB-1) in base coordinates (eq. crb-base): every body's inertia moved to the base
    # at once, ⁰I_i = ⁱX₀ᵀ I_i ⁱX₀; there the composites are plain sums
    IC = mm(X0.mT, stacked_inertias(model, batch), X0)
    for i in range(N, 0, -1):                                          # children first
        if parent[i] > 0:
            IC[parent[i]] += IC[i]                                     # (CRB-1)
    # ⁰S_j = ⁰X_j S_j, one row per joint velocity, (..., nv, 6) per state
    S0 = np.ascontiguousarray(np.moveaxis(base_subspaces(model, q, X0), 0, -2))
    H = np.zeros(batch + (model.nv, model.nv), dtype=S0.dtype)
    path = [[]] + [None] * N                 # the velocities of the joints on i's path:
    for i in range(1, N + 1):                # its parent's path and its own, to the root
        path[i] = path[parent[i]] + list(range(vs[i].start, vs[i].stop))
        j = np.array(path[i], dtype=int)
        F = mm(S0[..., vs[i], :], IC[i])          # ⁰F_iᵀ = (⁰I^C_i ⁰S_i)ᵀ (eq. crb-force)
        H[..., vs[i], j] = mm(F, np.take(S0, j, axis=-2).mT)           # (CRB-2) H_ij
    above = ~np.tri(model.nv, dtype=bool)       # j before i: H_ij is below the diagonal;
    np.copyto(H, H.mT, where=above)                                    # H_ji = H_ijᵀ
    return H


def forward_dynamics_crb(model, q, qd, tau, f_ext=None):
    """q̈ from H q̈ = τ − b: b by RNEA with q̈ = 0, H by CRBA, H = Lᵀ L by :func:`.ltl`, then
    the two triangular solves of ``ltl_solve()``. A singular H raises
    :class:`SingularMassMatrix`, naming the joint."""
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    b = rnea(model, q, qd, np.zeros(model.nv), f_ext)
    return ltl_solve(model, ltl(model, crba(model, q)), tau - b)


def coordinate_paths(model):
    """For each velocity coordinate k, the coordinates before it on its path to the root,
    in increasing order: its joint's earlier coordinates and every coordinate of the joints
    on the path (Featherstone's expanded parent array λ(k), λ(λ(k)), …, §6.5). Row k of H
    has its non-zero entries left of the diagonal there only."""
    paths = []
    for i in range(1, model.N + 1):
        root_first = reversed(model.ancestors(i)[1:])
        before = [c for j in root_first for c in range(model.v_slices[j].start,
                                                          model.v_slices[j].stop)]
        for k in range(model.v_slices[i].start, model.v_slices[i].stop):
            paths.append(np.array(before + list(range(model.v_slices[i].start, k)), dtype=int))
    return paths


def ltl(model, H):
    """H = Lᵀ L with L lower triangular (Featherstone's LᵀL factorisation, §6.5): from the
    last coordinate to the first, each row k of L is row k of what is left of H, divided
    by the square root of its diagonal entry, and row k's outer product is taken off the
    rows before it. Only entries on k's path (``coordinate_paths``) are touched, so L has
    every zero of H (H's branches stay uncoupled: no fill-in). Raises
    :class:`SingularMassMatrix` when a pivot is not positive."""
    L, paths = np.tril(H), coordinate_paths(model)
    for k in reversed(range(model.nv)):
        a = paths[k]
        if not L[k, k] > 0:
            raise _singular_H(model, H)
        L[k, k] = math.sqrt(L[k, k])                                   # L_kk = √H_kk
        L[k, a] = L[k, a] / L[k, k]                                    # L_ki = H_ki / L_kk
        for m, i in enumerate(a):                   # a[:m + 1]: i's own path, i included
            L[i, a[:m + 1]] -= L[k, i] * L[k, a[:m + 1]]               # H_ij −= L_ki L_kj
    return L


def ltl_solve(model, L, x):
    """The solution of Lᵀ L y = x (L from :func:`.ltl`): Lᵀ z = x from the last coordinate
    to the first, then L y = z from the first to the last, each row along its path."""
    x, paths = np.array(x, dtype=np.result_type(L, x)), coordinate_paths(model)
    for k in reversed(range(model.nv)):                                # Lᵀ z = x
        x[k] = x[k] / L[k, k]
        x[paths[k]] -= L[k, paths[k]] * x[k]
    for k in range(model.nv):                                          # L y = z
        x[k] = (x[k] - L[k, paths[k]] @ x[paths[k]]) / L[k, k]
    return x


def _singular_H(model, H):
    """The error for an H that is not positive definite, naming the first velocity
    coordinate whose leading block of H is not positive definite, and its joint (a
    :class:`SingularMassMatrix`)."""
    H = np.asarray(H, dtype=float)
    k = next((k for k in range(model.nv) if np.linalg.eigvalsh(H[:k + 1, :k + 1])[0] <= 0),
             model.nv - 1)
    i = model.velocity_body[k]
    return SingularMassMatrix(
        f"H is not positive definite: at v[{k}], a coordinate of joint '{model.names[i]}' "
        f"(body {i}), it adds no inertia to the coordinates before it — the joint moves only "
        f"massless bodies, or moves them as other joints already do; q̈ is not determined")


# ------------------------------------------------------------------ the source's 3-vector form

@dataclass
class Composite:
    """Composite bodies C_i (body i and everything outboard of it) in base coordinates:
    mass ``m[i]``, centre of mass ``c[i]``, rotational inertia ``Ic[i]`` about ``c[i]``.
    Entry 0 (the base) is unused."""
    m: list
    c: list
    Ic: list


def _steiner(m, r):
    """Parallel-axis term −m (r×)²: inertia about a point at −r from the COM, minus Ic."""
    return m * (r @ r * np.eye(3) - np.outer(r, r))


def _composites(model, X0):
    N, parent = model.N, model.parent
    children = [[] for _ in range(N + 1)]
    for i in range(1, N + 1):
        children[parent[i]].append(i)
    m, c, Ic = [None] * (N + 1), [None] * (N + 1), [None] * (N + 1)
    for i in range(N, 0, -1):                  # children (k > i) are complete before i
        mi, ci, Ii = inertia_params(model.I[i], allow_massless=True)
        R, p = body_pose(X0[i])
        ci, Ii = p + R @ ci, R @ Ii @ R.T                       # body i in base coordinates
        m[i] = mi + sum(m[k] for k in children[i])                                  # (C-1)
        first = mi * ci + sum(m[k] * c[k] for k in children[i])
        c[i] = first / m[i] if m[i] > 0 else p                                      # (C-2)
        Ic[i] = Ii + _steiner(mi, ci - c[i]) + sum(
            Ic[k] + _steiner(m[k], c[k] - c[i]) for k in children[i])               # (C-3)
    return Composite(m, c, Ic)


def composite_3vector(model, q):
    """Mass, centre of mass and rotational inertia of every composite body, from the leaves::

        m_C[i]  = m_i + Σ_k m_C[k]                                   (C-1)
        c_C[i]  = (m_i c_i + Σ_k m_C[k] c_C[k]) / m_C[i]             (C-2)
        Ic_C[i] = Ī_i − m_i (c_i − c_C[i])×² + Σ_k (Ic_C[k] − m_C[k] (c_C[k] − c_C[i])×²)  (C-3)

    over the children k of i (the source, in base instead of link coordinates, so no
    rotation ⁱR_k of the children's inertias is needed). Returns a :class:`Composite`."""
    (q,) = check_state(model, q=q)
    return _composites(model, forward_kinematics(model, q))


def crba_3vector(model, q):
    """H by the source's 3-vector composite-body method, every joint type.

    Each column of a joint's S, turned into base coordinates, is a pair (Z_A, Z_L): the
    angular acceleration of body i and the acceleration of its origin p_i when that one
    joint velocity accelerates at unit rate (free and spherical joints: rotations about
    axes through p_i, translations along axes). With nothing moving, the composite body C_i
    needs the force and the moment about p_i::

        f̂ = m_C (Z_L + Z_A × (c_C − p_i)),    n̂ = Ic_C Z_A + (c_C − p_i) × f̂      (C-4)

    and joint j on the path to the root, whose origin is p_j, carries its projection::

        H_ji = Z_Ajᵀ (n̂ + (p_i − p_j) × f̂) + Z_Ljᵀ f̂,    H_ij = H_jiᵀ              (C-5)
    """
    (q,) = check_state(model, q=q)
    X0 = forward_kinematics(model, q)
    C = _composites(model, X0)
    N, vs = model.N, model.v_slices
    ZA, ZL, p = [None] * (N + 1), [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        R, p[i] = body_pose(X0[i])
        S = model.joints[i].S(q[model.q_slices[i]])
        ZA[i], ZL[i] = R @ S[:3], R @ S[3:]                     # 3 x n_i, base coordinates
    H = np.zeros((model.nv, model.nv))
    for i in range(1, N + 1):
        r = C.c[i] - p[i]
        f = C.m[i] * (ZL[i] + np.cross(ZA[i], r, axis=0))                          # (C-4)
        n = C.Ic[i] @ ZA[i] + np.cross(r, f, axis=0)
        for j in model.ancestors(i):                             # i itself first
            Hji = ZA[j].T @ (n + np.cross(p[i] - p[j], f, axis=0)) + ZL[j].T @ f   # (C-5)
            H[vs[j], vs[i]] = Hji
            H[vs[i], vs[j]] = Hji.T
    return H


# -------------------------------------------------------------------- the other two methods

def unit_vector_method(model, q):
    """H column by column: τ = rnea(q, q̇ = 0, q̈ = e_k) with gravity off is H e_k.
    Like ``rnea``, works on sympy expressions (symbolic q or model parameters)."""
    (q,) = check_state(model, q=q)
    still, zero = without_gravity(model), np.zeros(model.nv)
    return np.array([rnea(still, q, zero, e) for e in np.eye(model.nv)]).T   # H e_k as columns


def jacobian_method(model, q):
    """H = Σ_i (m_i J_Giᵀ J_Gi + J_Aiᵀ Ī_i J_Ai): J_Gi is the Jacobian of body i's centre
    of mass, J_Ai of its angular velocity, Ī_i its rotational inertia about the COM, all in
    base coordinates (the kinetic energy ½ q̇ᵀ H q̇ summed body by body)."""
    (q,) = check_state(model, q=q)
    X0 = forward_kinematics(model, q)
    H = np.zeros((model.nv, model.nv))
    for i in range(1, model.N + 1):
        m, c, Ic = inertia_params(model.I[i], allow_massless=True)
        R, _ = body_pose(X0[i])
        JG = point_jacobian(model, q, i, c, frame="world")
        JA = jacobian(model, q, i, frame="world")[:3]
        H += (m * JG.T) @ JG + JA.T @ ((R @ Ic @ R.T) @ JA)
    return H


# ------------------------------------------------------------------------ operation counts

def operation_counts(model):
    """Flops (multiplications, additions, divisions, square roots) of crba,
    forward_dynamics_crb (and its two parts ``ltl`` and ``ltl_solve``), unit_vector_method
    and jacobian_method on ``model``'s topology, counted from the operations those
    functions perform, with the convention of ``spatial.mm_flops`` (dense products, 30 per
    6-D cross product, XJ(q), transposes, inv_X and copies free). One forward-kinematics
    pass costs 2 N (6x6 @ 6x6) (XJ Xtree, then Xup ⁱ⁻X₀).
    crba: forward kinematics, ⁰I_i = ⁱX₀ᵀ I_i ⁱX₀ per body, one 6x6 sum per non-root body
    (CRB-1 in base coordinates), ⁰S_i = Π ⁱX₀ᵀ Π S_i (one product; Π only reorders) and
    ⁰F_i = ⁰I^C_i ⁰S_i, then for each body i the entries H_ji of the joints j on its path
    only, a 6-term dot product each, (CRB-2): Σ_i n_i Σ_{j∈path(i)} n_j · 11, O(N·depth),
    smaller on a branched tree. ``tests/test_crb.py`` counts the operations of a run of
    ``crba`` and checks this count against them.
    ltl: per coordinate k, with a = the coordinates before k on its path
    (``coordinate_paths``): one square root, ``|a|`` divisions and, for the m-th entry of a,
    m + 1 products and m + 1 subtractions: ``O(Σ_k |a_k|²)``, at most nv³/3 (a chain).
    ltl_solve: per coordinate, 1 division and ``|a|`` products and subtractions (Lᵀ z = x),
    then a dot product of length ``|a|``, a subtraction and a division (L y = z).
    forward_dynamics_crb: one RNEA (``rnea_flops``), crba, τ − b, ltl and ltl_solve.
    unit_vector_method: nv RNEA passes (each counted as in ``rnea``, velocity products
    included although they are zero): O(nv·N).
    jacobian_method: as coded, each of the N bodies builds its two Jacobians through
    ``point_jacobian`` and ``jacobian``, which run forward kinematics three times and use
    dense nv-wide Jacobians, then two dense nv x 3 x nv products: O(N²) + O(N·nv²).
    """
    N, parent, mm = model.N, model.parent, mm_flops
    n = [0] + [j.nv for j in model.joints[1:]]
    nv, fk = model.nv, 2 * N * mm(6, 6, 6)
    crba_ = fk + N * 2 * mm(6, 6, 6) + sum(36 for i in range(1, N + 1) if parent[i] > 0)
    crba_ += sum(2 * mm(6, 6, n[i]) for i in range(1, N + 1))          # ⁰S_i, ⁰F_i
    crba_ += sum(mm(sum(n[j] for j in model.ancestors(i)), 6, n[i])    # H_ji, (CRB-2)
                 for i in range(1, N + 1))
    path = [len(a) for a in coordinate_paths(model)]
    ltl_ = sum(1 + a + a * (a + 1) for a in path)                        # √, L_ki, H_ij −=
    solve = sum(1 + 2 * a + mm(1, a, 1) + 2 for a in path)               # Lᵀ z = x, L y = z
    fd = rnea_flops(model) + crba_ + nv + ltl_ + solve                   # b, H, τ − b, L, y
    jac = fk
    for i in range(1, N + 1):
        path = model.ancestors(i)
        jac += 3 * fk                                                    # inside the Jacobians
        jac += sum(mm(6, 6, 6) + 2 * mm(6, 6, n[k]) for k in path)      # local and world columns
        jac += 2 * mm(3, 3, nv) + 3 * nv                                 # v_O − c× ω, then R @
        jac += 2 * mm(3, 3, 3) + 3 * nv + mm(3, 3, nv)                   # Ī, m J_Gᵀ, Ī J_A
        jac += 2 * mm(nv, 3, nv) + 2 * nv * nv                           # the two products, H +=
    return {"crba": crba_, "forward_dynamics_crb": fd, "ltl": ltl_, "ltl_solve": solve,
            "unit_vector_method": nv * rnea_flops(model), "jacobian_method": jac}


# ----------------------------------------------------------- how H fills (§2)

def fill_owner(model):
    """owner[k, l]: the body whose composite force fills entry H_kl (the deeper of the two
    bodies of velocities k and l when one is on the other's path to the root), 0 where the
    two are on different branches and H_kl is always zero."""
    body = np.asarray(model.velocity_body)
    M = support_mask(model)           # the joint of velocity k is on velocity l's path
    return np.where(M, body[None, :], np.where(M.T, body[:, None], 0))
