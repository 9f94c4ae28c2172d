"""Forward dynamics by the articulated-body algorithm (Chapter 2, seed 000 §2.3–2.4).

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
"""

import numpy as np

from .kinematics import joint_transforms
from .model import check_forces, check_state
from .spatial import cross_force, cross_motion

__all__ = ["aba", "SingularArticulatedInertia"]


class SingularArticulatedInertia(ValueError):
    """D_i = S_iᵀ I^A_i S_i is singular: the subtree of that joint cannot resist its motion."""


def _inv_D(D, model, i):
    try:
        return np.linalg.inv(D)
    except np.linalg.LinAlgError:
        raise SingularArticulatedInertia(
            f"body {i} (joint '{model.names[i]}'): D = SᵀI^A S is singular — the subtree "
            f"moved by this joint has no inertia along its free directions") from None


def aba(model, q, qd, tau, f_ext=None):
    """Joint accelerations q̈ produced by joint forces ``tau`` at state ``(q, qd)``.

    ``f_ext``: optional external spatial forces on the bodies, as in :func:`rnea`
    (a list of N + 1 6-vectors or a dict {body: force}, in body coordinates).
    """
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    f_ext = check_forces(model, f_ext)
    N, parent = model.N, model.parent
    Xup = joint_transforms(model, q)
    S, v, c = [None] * (N + 1), [np.zeros(6)] + [None] * N, [None] * (N + 1)
    IA, pA = [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        j, p = model.joints[i], parent[i]
        qi, qdi = q[model.q_slices[i]], qd[model.v_slices[i]]
        S[i] = j.S(qi)
        vJ = S[i] @ qdi
        v[i] = Xup[i] @ v[p] + vJ                                          # (ABA-1)
        c[i] = j.cJ(qi, qdi) + cross_motion(v[i], vJ)
        IA[i] = model.I[i].copy()                                          # (ABA-2)
        pA[i] = cross_force(v[i], model.I[i] @ v[i])
        if f_ext is not None:
            pA[i] = pA[i] - f_ext[i]
    U, Dinv, u = [None] * (N + 1), [None] * (N + 1), [None] * (N + 1)
    for i in range(N, 0, -1):
        U[i] = IA[i] @ S[i]                                                # (ABA-3)
        Dinv[i] = _inv_D(S[i].T @ U[i], model, i)
        u[i] = tau[model.v_slices[i]] - S[i].T @ pA[i]
        p = parent[i]
        if p > 0:
            Ia = IA[i] - U[i] @ Dinv[i] @ U[i].T                           # (ABA-4)
            pa = pA[i] + Ia @ c[i] + U[i] @ (Dinv[i] @ u[i])
            IA[p] = IA[p] + Xup[i].T @ Ia @ Xup[i]                         # (ABA-5)
            pA[p] = pA[p] + Xup[i].T @ pa
    a = [-model.gravity] + [None] * N
    qdd = np.empty(model.nv)
    for i in range(1, N + 1):
        a_i = Xup[i] @ a[parent[i]] + c[i]                                 # (ABA-6)
        qdd_i = Dinv[i] @ (u[i] - U[i].T @ a_i)
        qdd[model.v_slices[i]] = qdd_i
        a[i] = a_i + S[i] @ qdd_i
    return qdd
