"""Forward dynamics by the articulated-body algorithm (Chapter 2 §1–3, seed 000 §1–2.4,
and §2.8 for the inertia between bodies; the book's equations ab-*, and gc-T, gc-Theta of
§5): ``aba`` and its cost ``aba_flops``; the seed's local-frame form ``aba_local_frame``
with its transforms ``local_X`` (eq. 6) and Coriolis terms ``local_C`` (eq. 9); the
articulated-inertia sweep (ABA-3–5) that the Θ recursion ``theta_recursion``, the inverse
inertia between bodies ``inter_body_inertia`` and the impulse response share. Gears
(§5) are in ``rbdlearn.gears``.

Three sweeps over the tree (Featherstone's form, [angular; linear] order):

Outward — velocities and velocity-product accelerations:
    v_i = ⁱX_λ v_λ + S_i q̇_i,   c_i = c_J + v_i × S_i q̇_i                 (ABA-1)
    I^A_i = I_i,   p^A_i = v_i ×* I_i v_i − f_i^ext                        (ABA-2)
Inward — articulated inertias and bias forces (the ABA theorem, seed 000 eqs. 17–26):
    U_i = I^A_i S_i,   D_i = S_iᵀ U_i,   u_i = τ_i − S_iᵀ p^A_i              (ABA-3)
    I^a = I^A_i − U_i D_i⁻¹ U_iᵀ,   p^a = p^A_i + I^a c_i + U_i D_i⁻¹ u_i     (ABA-4)
    I^A_λ += ⁱX_λᵀ I^a ⁱX_λ,   p^A_λ += ⁱX_λᵀ p^a                          (ABA-5)
Outward — accelerations, starting from a_0 = −g:
    a'_i = ⁱX_λ a_λ + c_i,   q̈_i = D_i⁻¹ (u_i − U_iᵀ a'_i),   a_i = a'_i + S_i q̈_i   (ABA-6)

``aba`` takes a batch of states as ``rnea`` does: the same lines, one entry per state
(vectors (..., 6), matrices (..., 6, 6); ``mv``, ``mtv``, ``mm`` and ``.mT`` act state
by state).
"""

from dataclasses import dataclass

import numpy as np

from .errors import RbdlearnError
from .kinematics import joint_transforms
from .joints import Fixed
from .model import Model, batch_shape, body_index, check_forces, check_state, planar_chain
from .spatial import (cross3, cross_force, cross_motion, inertia_params, mm, mm_flops, mtv,
                      mv, plux, plux_parts, to_linear_angular)

__all__ = ["aba", "aba_flops", "aba_local_frame", "LocalFrameABA", "local_X", "local_C",
           "SingularArticulatedInertia", "theta_recursion", "inter_body_inertia",
           "felt_inertias", "felt_masses", "inward_pass_steps"]


class SingularArticulatedInertia(RbdlearnError):
    """D_i = S_iᵀ I^A_i S_i is singular: the subtree of that joint cannot resist its motion."""


def _inv_D(D, model, i):
    """D⁻¹, or SingularArticulatedInertia naming body i when D is singular (to round-off)."""
    if D.shape[-2:] == (1, 1):               # one-DOF joints: a scalar, the common case
        regular = D[0, 0] != 0 if D.ndim == 2 else np.all(D != 0)
        Dinv = 1.0 / D if regular else None
    else:
        try:
            Dinv = np.linalg.inv(D)
        except np.linalg.LinAlgError:
            Dinv = None
        # singular to round-off (an Euler-angle joint at gimbal lock): inv() may succeed
        # with ~1e16 entries; ‖D‖·‖D⁻¹‖, a cheap condition estimate, exposes it
        if Dinv is not None and np.any(np.abs(D).max(axis=(-2, -1), initial=0.0)
                                       * np.abs(Dinv).max(axis=(-2, -1), initial=0.0) > 1e12):
            Dinv = None
    if Dinv is None:
        where = "" if D.ndim == 2 else " (in at least one state of the batch)"
        raise SingularArticulatedInertia(
            f"body {i} (joint '{model.names[i]}'): D = SᵀI^A S is singular{where} — the "
            f"subtree moved by this joint has no inertia along its free directions")
    return Dinv


def aba(model, q, qd, tau, f_ext=None):
    """Joint accelerations q̈ produced by joint forces ``tau`` at state ``(q, qd)``.

    ``f_ext``: optional external spatial forces on the bodies, as in :func:`rnea`
    (a list of N + 1 6-vectors or a dict {body: force}, in body coordinates).
    """
    q, qd, tau = check_state(model, batch=True, q=q, qd=qd, tau=tau)
    batch = batch_shape(q, qd, tau)
    f_ext = check_forces(model, f_ext, batch)
    N, parent = model.N, model.parent
    Xup = joint_transforms(model, q)
    S, v, c = [None] * (N + 1), [np.zeros(6)] + [None] * N, [None] * (N + 1)
    IA, pA = [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        j, p = model.joints[i], parent[i]
        qi, qdi = q[..., model.q_slices[i]], qd[..., model.v_slices[i]]
        S[i] = j.S(qi)
        vJ = mv(S[i], qdi)
        v[i] = mv(Xup[i], v[p]) + vJ                                       # (ABA-1)
        c[i] = j.cJ(qi, qdi) + cross_motion(v[i], vJ)
        IA[i] = model.I[i].copy()                                          # (ABA-2)
        pA[i] = cross_force(v[i], mv(model.I[i], v[i]))
        if f_ext is not None:
            pA[i] = pA[i] - f_ext[i]
    U, Dinv, u = [None] * (N + 1), [None] * (N + 1), [None] * (N + 1)
    for i in range(N, 0, -1):
        U[i] = mm(IA[i], S[i])                                             # (ABA-3)
        Dinv[i] = _inv_D(mm(S[i].mT, U[i]), model, i)
        u[i] = tau[..., model.v_slices[i]] - mtv(S[i], pA[i])
        p = parent[i]
        if p > 0:
            Ia = IA[i] - mm(U[i], Dinv[i], U[i].mT)                        # (ABA-4)
            pa = pA[i] + mv(Ia, c[i]) + mv(U[i], mv(Dinv[i], u[i]))
            IA[p] = IA[p] + mm(Xup[i].mT, Ia, Xup[i])                      # (ABA-5)
            pA[p] = pA[p] + mtv(Xup[i], pa)
    a = [-model.gravity] + [None] * N
    qdd = np.empty(batch + (model.nv,))
    for i in range(1, N + 1):
        a_i = mv(Xup[i], a[parent[i]]) + c[i]                              # (ABA-6)
        qdd_i = mv(Dinv[i], u[i] - mtv(U[i], a_i))
        qdd[..., model.v_slices[i]] = qdd_i
        a[i] = a_i + mv(S[i], qdd_i)
    return qdd


def aba_flops(model):
    """Flops of one ``aba`` call on ``model`` (without f_ext), line by line, with the
    convention of ``spatial.mm_flops``; inverting an n x n D counts n³ (one division for a
    1-DOF joint). A fixed amount per body for each joint type, whatever the tree's shape:
    O(N)."""
    total = 0
    for i in range(1, model.N + 1):
        n = model.joints[i].nv
        total += mm_flops(6, 6, 6)                                    # Xup = XJ Xtree
        total += mm_flops(6, n, 1) + mm_flops(6, 6, 1) + 6 + 30 + 6   # vJ, v, c (ABA-1)
        total += mm_flops(6, 6, 1) + 30                               # pA = v ×* I v (ABA-2)
        total += mm_flops(6, 6, n) + mm_flops(n, 6, n) + n**3         # U, D, D⁻¹ (ABA-3)
        total += mm_flops(n, 6, 1) + n                                # u = τ − Sᵀ pA
        if model.parent[i] > 0:
            total += mm_flops(6, n, n) + mm_flops(6, n, 6) + 36       # Ia (ABA-4)
            total += mm_flops(6, 6, 1) + mm_flops(n, n, 1) + mm_flops(6, n, 1) + 12   # pa
            total += 2 * mm_flops(6, 6, 6) + 36 + mm_flops(6, 6, 1) + 6   # IA_λ, pA_λ (ABA-5)
        total += mm_flops(6, 6, 1) + 6                                # a' = Xup a_λ + c (ABA-6)
        total += mm_flops(n, 6, 1) + n + mm_flops(n, n, 1)            # q̈ = D⁻¹(u − Uᵀ a')
        total += mm_flops(6, n, 1) + 6                                # a = a' + S q̈
    return total


# ------------------------------------------------------------------------------------
# The seed's own formulation (seed 000 §1–2.4), shown equal to `aba` in the book:
# [linear; angular] order, a frame c at each body's centre of mass (axes parallel to
# the body frame), *classical* accelerations A = [r̈; ω̇] in local coordinates, and
# each joint between a socket frame j (fixed in the parent p) and a plug frame j'
# (fixed in the child c; here the child's body frame).

def local_X(R, r):
    """Seed 000's X(R, r) = [Rᵀ  −Rᵀr×; O  Rᵀ] ([linear; angular]) for a frame b at
    position r and orientation R in frame a: V_b = X V_a. It is the book's ᵇX_a =
    plux(Rᵀ, r) in the seed's order (``r=None``: a pure rotation)."""
    return to_linear_angular(plux(np.asarray(R).T, r), operator=True)


def local_C(w_a, r_ab, v_ab, w_ab):
    """Coriolis/centripetal term C_ab of eq. (9), in frame a's coordinates."""
    return np.concatenate([(w_a @ r_ab) * w_a - (w_a @ w_a) * r_ab + 2 * cross3(w_a, v_ab),
                           cross3(w_a, w_ab)])


@dataclass(frozen=True)
class LocalFrameABA:
    """The result of :func:`aba_local_frame`: the joint accelerations ``qdd`` (those of
    :func:`aba`) and the lists ``I_hat``, ``Z_hat`` of articulated inertias Î_i and bias
    forces Ẑ_i (eq. 17: F_i = Î_i A_i + Ẑ_i), in the seed's [linear; angular] order and
    in the frame at body i's centre of mass (gravity enters as A_0 = −g; entry 0 None)."""
    qdd: np.ndarray
    I_hat: list
    Z_hat: list


def aba_local_frame(model, q, qd, tau, f_ext=None):
    """Joint accelerations q̈ by seed 000's local-frame form of the ABA (eqs. 10–26),
    with the articulated inertias and bias forces it computes on the way: a
    :class:`LocalFrameABA` ``(qdd, I_hat, Z_hat)``. Same arguments as :func:`aba`, and
    the same q̈.
    """
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    f_ext = check_forces(model, f_ext)
    N, parent, P = model.N, model.parent, to_linear_angular
    m, com, J_rot = [0.0] * (N + 1), [np.zeros(3)] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        m[i], com[i], J_rot[i] = inertia_params(model.I[i], allow_massless=True)
    V, A = [np.zeros(6)] + [None] * N, [-P(model.gravity)] + [None] * N
    X_cp, J_hat, C_hat = [None] * (N + 1), [None] * (N + 1), [None] * (N + 1)
    I_hat, Z_hat = [None] * (N + 1), [None] * (N + 1)
    for c in range(1, N + 1):
        p, joint = parent[c], model.joints[c]
        q_c, qd_c = q[model.q_slices[c]], qd[model.v_slices[c]]
        E, r = plux_parts(model.Xtree[c])
        R_pj, r_pj = E.T, r - com[p]                 # socket j in p's centre-of-mass frame
        E, r_jj = plux_parts(joint.XJ(q_c))
        R_jj = E.T                                   # plug j' in socket j
        R_cj, r_cj = np.eye(3), -com[c]              # plug j' (the body frame) in c
        X_cj_inv = local_X(R_cj.T, -R_cj.T @ r_cj)                                # (6)
        X_cp[c] = X_cj_inv @ local_X(R_jj, r_jj) @ local_X(R_pj, r_pj)             # (12)
        X_cj = X_cj_inv @ local_X(R_jj, None)
        J_c = local_X(R_jj.T, None) @ P(joint.S(q_c))     # V_jj' = J_c q̇_c in socket axes
        J_hat[c] = X_cj @ J_c                                                      # (12)
        V_jj = J_c @ qd_c                                                          # (11)
        V[c] = X_cp[c] @ V[p] + J_hat[c] @ qd_c                                    # (12)
        w_p, w_j, w_c = V[p][3:], (local_X(R_pj, r_pj) @ V[p])[3:], V[c][3:]
        u = local_X(R_jj, None) @ V_jj               # joint velocity in plug axes
        Jdot_qd = local_X(R_jj.T, None) @ (
            np.concatenate([cross3(u[3:], u[:3]), np.zeros(3)]) + P(joint.cJ(q_c, qd_c)))
        zero = np.zeros(3)
        C_hat[c] = X_cj_inv @ (local_X(R_jj, r_jj) @ local_X(R_pj, None) @ local_C(w_p, r_pj, zero, zero)
                               + local_X(R_jj, None) @ local_C(w_j, r_jj, V_jj[:3], V_jj[3:])
                               - local_X(R_cj, None) @ local_C(w_c, r_cj, zero, zero)) \
            + X_cj @ Jdot_qd                                                       # (16)
        I_hat[c] = np.zeros((6, 6))                                                # (18)
        I_hat[c][:3, :3], I_hat[c][3:, 3:] = m[c] * np.eye(3), J_rot[c]
        F_c = np.concatenate([zero, -cross3(w_c, J_rot[c] @ w_c)])
        F_ext = 0 if f_ext is None else local_X(np.eye(3), -com[c]).T @ P(f_ext[c])
        Z_hat[c] = -(F_c + F_ext)                                                  # (19)
    D_inv, u_c = [None] * (N + 1), [None] * (N + 1)
    for c in range(N, 0, -1):
        p, IJ = parent[c], I_hat[c] @ J_hat[c]
        D_inv[c] = _inv_D(J_hat[c].T @ IJ, model, c)
        u_c[c] = tau[model.v_slices[c]] - J_hat[c].T @ (I_hat[c] @ C_hat[c] + Z_hat[c])
        if p > 0:
            I_hat[p] = I_hat[p] + X_cp[c].T @ (I_hat[c] - IJ @ D_inv[c] @ IJ.T) @ X_cp[c]  # (25)
            Z_hat[p] = Z_hat[p] + X_cp[c].T @ (I_hat[c] @ C_hat[c] + Z_hat[c]
                                               + IJ @ (D_inv[c] @ u_c[c]))                # (26)
    qdd = np.empty(model.nv)
    for c in range(1, N + 1):
        XA = X_cp[c] @ A[parent[c]]
        qdd_c = D_inv[c] @ (u_c[c] - (I_hat[c] @ J_hat[c]).T @ XA)                  # (22)
        qdd[model.v_slices[c]] = qdd_c
        A[c] = XA + C_hat[c] + J_hat[c] @ qdd_c                                    # (15)
    return LocalFrameABA(qdd, I_hat, Z_hat)


# ------------------------------------------------------------------ inertia between bodies
#
# Seed 000 §2.8, in Featherstone's notation (Ĵ_c = S_c, Î_c = I^A_c, X_cp = ᶜX_p):
# a test force δf on body i changes its bias force by δẐ_i = −δf (eq. 19); the change
# travels inward, δẐ_p = T_cpᵀ δẐ_c, and the acceleration change outward,
# δA_c = T_cp δA_p − S_cp δẐ_c (δẐ_c ≠ 0 only on the path from i to the root), with
#
#     T_cp = (1 − S_c D_c⁻¹ U_cᵀ) ᶜX_p,   S_cp = S_c D_c⁻¹ S_cᵀ,   D_c = S_cᵀ U_c, U_c = I^A_c S_c.
#
# (The seed's S_cp carries a stray factor δẐ_c: S_cp is the matrix alone.) For a body
# p whose δẐ_p comes from its own subtree, δA_p = Θ_p δẐ_p with
#
#     Θ_c = T_cp Θ_p T_cpᵀ − S_cp,   Θ_0 = 0 (the fixed base does not accelerate).
#
# A floating root is the child of the base by a free joint (S = 1), so T = 0 and
# Θ_root = −(I^A_root)⁻¹: the seed's Θ_0 = −Î_0⁻¹. Then, with p the nearest common
# ancestor of i and j (0 if none),
#
#     δA_j = Λ_ji δf,   Λ_ji = −(T_j … T_c) Θ_p (T_c' … T_i)ᵀ,
#
# where T_j … T_c is the product of T along the path p → j (empty: 1) and likewise
# for i; Λ_ji = J_j H⁻¹ J_iᵀ (local Jacobians), since δf changes no velocity.


@dataclass(frozen=True)
class _Sweep:
    """The part of the ABA that depends on q only (:func:`_articulated_sweep`): per body
    ``Xup`` = ⁱX_λ, ``S``, the articulated inertias ``IA`` = I^A_i, ``U`` = I^A_i S_i and
    ``Dinv`` = D_i⁻¹ (entry 0 unused)."""
    Xup: list
    S: list
    IA: list
    U: list
    Dinv: list


def _articulated_sweep(model, q):
    """The ABA's inward sweep of articulated inertias (ABA-3–5) at one configuration q,
    written once for what reuses it: the Θ recursion and the impulse response."""
    N, parent = model.N, model.parent
    Xup = joint_transforms(model, q)
    S = [None] + [model.joints[i].S(q[model.q_slices[i]]) for i in range(1, N + 1)]
    IA = [None] + [model.I[i].copy() for i in range(1, N + 1)]
    U, Dinv = [None] * (N + 1), [None] * (N + 1)
    for i in range(N, 0, -1):
        U[i] = IA[i] @ S[i]                                                # (ABA-3)
        Dinv[i] = _inv_D(S[i].T @ U[i], model, i)
        if parent[i] > 0:
            Ia = IA[i] - U[i] @ Dinv[i] @ U[i].T                           # (ABA-4)
            IA[parent[i]] = IA[parent[i]] + Xup[i].T @ Ia @ Xup[i]         # (ABA-5)
    return _Sweep(Xup, S, IA, U, Dinv)


def theta_recursion(model, q):
    """``(T, Theta)``: per body c, ``T[c] = T_cp`` and ``Theta[c] = Θ_c`` of seed 000
    §2.8 (entry 0: the base, Θ_0 = 0). ``δA_c = Θ_c δẐ_c`` is the acceleration
    response of body c to a change δẐ_c = −δf of its own bias force."""
    (q,) = check_state(model, q=q)
    return _theta(model, _articulated_sweep(model, q))


def _theta(model, sw):
    """:func:`theta_recursion` from the articulated-inertia sweep ``sw``."""
    T, Theta = [None] * (model.N + 1), [np.zeros((6, 6))] + [None] * model.N
    for c in range(1, model.N + 1):
        S, Dinv = sw.S[c], sw.Dinv[c]
        T[c] = (np.eye(6) - S @ Dinv @ sw.U[c].T) @ sw.Xup[c]              # T_cp
        Scp = S @ Dinv @ S.T                                               # S_cp
        Theta[c] = T[c] @ Theta[model.parent[c]] @ T[c].T - Scp            # Θ_c
    return T, Theta


def inter_body_inertia(model, q, i, j, T_Theta=None):
    """``Λ_ji`` (6x6): the change ``δA_j = Λ_ji δf`` of body j's spatial acceleration
    (body-j coordinates) caused by an extra spatial force δf on body i (body-i
    coordinates), by seed 000 §2.8 — equal to ``J_j H⁻¹ J_iᵀ`` with local Jacobians.
    ``Λ_ii`` is the inverse operational-space inertia of body i. Pass
    ``T_Theta = theta_recursion(model, q)`` to reuse it for several pairs."""
    i = body_index(model, i, "i")
    j = body_index(model, j, "j")
    T, Theta = theta_recursion(model, q) if T_Theta is None else T_Theta
    below_i, below_j, p = _paths_to_common(model.ancestors(i), model.ancestors(j))
    right, left = np.eye(6), np.eye(6)
    for k in below_i:                                     # from i up to p (p excluded)
        right = T[k].T @ right                            # δẐ_λ(k) = T_kᵀ δẐ_k
    for k in below_j:                                     # from j up to p (p excluded)
        left = left @ T[k]                                # δA_k = T_k δA_λ(k)
    return -left @ Theta[p] @ right                       # δẐ_i = −δf


def _paths_to_common(up_i, up_j):
    """``(below_i, below_j, p)``: the paths ``up_i``, ``up_j`` (a body, its parent, …,
    the base excluded) cut at the nearest common ancestor p (0: the base), p excluded."""
    p = next((k for k in up_i if k in up_j), 0)
    return ((up_i[:up_i.index(p)] if p else up_i), (up_j[:up_j.index(p)] if p else up_j), p)


# --------------------------------------------------------------------- impulses
#
# An impulse Δf (a force integrated over an instant) changes velocities as a force
# changes accelerations: Δq̇ = H⁻¹ Jᵀ Δf (Chapter 2 §5–6). Velocity products and gravity
# give no impulse, so Δq̇ is the ABA's response to Δf alone: the ABA at rest without
# gravity, whose articulated inertias are those of the sweep above.


def _impulse_response(model, sw, tau=None, f_ext=None):
    """``H⁻¹ (tau + Σ J_kᵀ f_k)``: the velocity change caused by the generalized impulse
    ``tau`` and the spatial impulses ``f_ext`` (a dict {body: impulse}, body
    coordinates): the ABA at rest without gravity, on the articulated-inertia sweep ``sw``
    of :func:`_articulated_sweep` (at rest c_i = 0, and a_0 = 0 without gravity)."""
    N, parent = model.N, model.parent
    pA = [np.zeros(6)] * (N + 1)
    for i, f in (f_ext or {}).items():
        pA[i] = -f                                                         # (ABA-2)
    u = [None] * (N + 1)
    for i in range(N, 0, -1):
        u[i] = (0.0 if tau is None else tau[model.v_slices[i]]) - sw.S[i].T @ pA[i]  # (ABA-3)
        if parent[i] > 0:
            pa = pA[i] + sw.U[i] @ (sw.Dinv[i] @ u[i])                     # (ABA-4)
            pA[parent[i]] = pA[parent[i]] + sw.Xup[i].T @ pa               # (ABA-5)
    a, dqd = [np.zeros(6)] + [None] * N, np.empty(model.nv)
    for i in range(1, N + 1):
        a_i = sw.Xup[i] @ a[parent[i]]                                     # (ABA-6)
        dqd[model.v_slices[i]] = sw.Dinv[i] @ (u[i] - sw.U[i].T @ a_i)
        a[i] = a_i + sw.S[i] @ dqd[model.v_slices[i]]
    return dqd


# ------------------------------------------- the articulated inertia shown (§2 and §3)
# Worked examples of the chapter's figures and explorers, built from aba_local_frame.

def felt_inertias(q2, m2, lengths=(1.0, 1.0), m1=1.0):
    """Body 1 of a planar 2-link arm, in seed 000's centre-of-mass frame, [linear; angular]:
    its own inertia I_1, its articulated inertia Î_1 (joint 2 free) and the composite
    rigid inertia (joint 2 locked) — the last as Î_1 of the arm with link 2 welded on."""
    arm = planar_chain(2, length=list(lengths), mass=[m1, m2])
    q, zero = np.array([0.0, q2]), np.zeros(2)
    I_hat = aba_local_frame(arm, q, zero, zero).I_hat
    locked = Model(parent=arm.parent, joints=[None, arm.joints[1], Fixed()],
                   Xtree=[None, arm.Xtree[1], arm.joints[2].XJ([q2]) @ arm.Xtree[2]],
                   I=arm.I, gravity=arm.gravity)
    I_rigid = aba_local_frame(locked, [0.0], [0.0], [0.0]).I_hat
    own = np.diag([m1] * 3 + [m1 * lengths[0] ** 2 / 12, 0.0, m1 * lengths[0] ** 2 / 12])
    return {"own": own, "articulated": I_hat[1], "rigid": I_rigid[1]}


def felt_masses(M):
    """Mass felt by a push at body 1's centre of mass along its y and z axes, for the
    planar motions (y, z, rotation about x): 1 / (e_kᵀ M_plane⁻¹ e_k)."""
    plane = [1, 2, 3]
    Minv = np.linalg.inv(np.asarray(M, dtype=float)[np.ix_(plane, plane)])
    return 1 / Minv[0, 0], 1 / Minv[1, 1]


def inward_pass_steps(model, q):
    """Î of every body after each step of the ABA's inward pass (seed 000's frames).

    ``steps[s][i]`` is body i's accumulated articulated inertia once bodies N, …, N−s+1
    have been processed: its own inertia plus the contributions (eq. 25) of its
    children processed so far. Each is computed as Î_i of the subtree of i without the
    children not yet processed (at rest, τ = 0; Î depends on q only).
    """
    N = model.N
    children = [[c for c in range(1, N + 1) if model.parent[c] == i] for i in range(N + 1)]
    steps = []
    for s in range(N + 1):
        done = set(range(N - s + 1, N + 1))
        mats = [None]
        for i in range(1, N + 1):
            drop = {b for c in children[i] if c not in done for b in model.subtree(c)}
            keep = [b for b in model.subtree(i) if b not in drop]
            new = {b: k for k, b in enumerate(keep, start=1)}
            sub = Model(parent=[-1] + [0 if b == i else new[model.parent[b]] for b in keep],
                        joints=[None] + [model.joints[b] for b in keep],
                        Xtree=[None] + [model.Xtree[b] for b in keep],
                        I=[None] + [model.I[b] for b in keep])
            q_sub = np.concatenate([np.zeros(0)] + [q[model.q_slices[b]] for b in keep])
            zero = np.zeros(sub.nv)
            mats.append(aba_local_frame(sub, q_sub, zero, zero).I_hat[1])
        steps.append(mats)
    return steps
