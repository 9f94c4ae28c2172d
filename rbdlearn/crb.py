"""The joint-space inertia matrix by the composite-rigid-body algorithm (Chapter 3, seed 003).

With only joint i accelerating (q̈ = e_i, no velocity, no gravity), everything
outboard of joint i moves as one rigid body, the composite body C_i, whose
inertia in body-i coordinates accumulates from the leaves:
    I^C_i = I_i + Σ_{c: λ(c)=i} ᶜX_iᵀ I^C_c ᶜX_i                       (CRB-1)
The force that joint i transmits is then F = I^C_i S_i, and joint j (an ancestor of
i, reached by carrying F down the path with ᵏX_λ(k)ᵀ) feels its projection:
    H_ii = S_iᵀ I^C_i S_i,   H_ji = S_jᵀ (ⁱX_jᵀ I^C_i S_i) = H_ijᵀ          (CRB-2)
Entries between joints on different branches are zero.
"""

import numpy as np

from .kinematics import joint_transforms
from .model import check_state
from .rnea import rnea

__all__ = ["crba", "forward_dynamics_crb"]


def crba(model, q):
    """The joint-space inertia matrix H(q) (nv x nv, symmetric positive definite)."""
    (q,) = check_state(model, q=q)
    N, parent = model.N, model.parent
    Xup = joint_transforms(model, q)
    S = [None] + [model.joints[i].S(q[model.q_slices[i]]) for i in range(1, N + 1)]
    IC = [None] + [model.I[i].copy() for i in range(1, N + 1)]
    for i in range(N, 0, -1):
        if parent[i] > 0:
            IC[parent[i]] = IC[parent[i]] + Xup[i].T @ IC[i] @ Xup[i]     # (CRB-1)
    H = np.zeros((model.nv, model.nv))
    for i in range(1, N + 1):
        vi = model.v_slices[i]
        F = IC[i] @ S[i]
        Hii = S[i].T @ F                                                  # (CRB-2)
        H[vi, vi] = (Hii + Hii.T) / 2           # symmetric to the last bit (multi-DOF joints)
        j = i
        while parent[j] > 0:
            F = Xup[j].T @ F
            j = parent[j]
            H[model.v_slices[j], vi] = S[j].T @ F
            H[vi, model.v_slices[j]] = H[model.v_slices[j], vi].T
    return H


def forward_dynamics_crb(model, q, qd, tau, f_ext=None):
    """q̈ from H q̈ = τ − b: b by RNEA with q̈ = 0, H by CRBA, solved by Cholesky."""
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    b = rnea(model, q, qd, np.zeros(model.nv), f_ext)
    L = np.linalg.cholesky(crba(model, q))                  # H = L Lᵀ
    return np.linalg.solve(L.T, np.linalg.solve(L, tau - b))
