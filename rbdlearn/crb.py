"""The joint-space inertia matrix by the composite-rigid-body algorithm (Chapter 3, seed 003).

With only joint i accelerating (q̈ = e_i, no velocity, no gravity), everything
outboard of joint i moves as one rigid body, the composite body C_i, whose
inertia in body-i coordinates accumulates from the leaves:
    I^C_i = I_i + Σ_{c: λ(c)=i} ᶜX_iᵀ I^C_c ᶜX_i                       (CRB-1)
Joint i must then transmit the force F_i = I^C_i S_i, and every joint j on the path
from i to the root feels its projection onto j's own motion subspace:
    H_ji = S_jᵀ ⁱX_jᵀ F_i = (⁰S_j)ᵀ (⁰F_i),   H_ij = H_jiᵀ               (CRB-2)
where ⁰S_j = ⁰X_j S_j and ⁰F_i = ⁱX₀ᵀ F_i are the same vectors in base coordinates.
Entries between joints on different branches are zero (neither is on the other's path).
"""

import numpy as np

from .kinematics import forward_kinematics
from .model import check_state
from .rnea import rnea
from .spatial import inv_X

__all__ = ["crba", "forward_dynamics_crb", "support_mask"]


def _velocity_bodies(model):
    """The body each joint velocity belongs to (an int array of length nv)."""
    return np.array([i for i in range(1, model.N + 1) for _ in range(model.joints[i].nv)],
                    dtype=int)


def support_mask(model):
    """M[k, l] = True when joint-velocity k belongs to a joint on the path from the joint
    of velocity l to the root (its own joint included): where H_kl comes from (CRB-2)."""
    on_path = np.zeros((model.N + 1, model.N + 1), dtype=bool)   # on_path[i, j]: j on i's path
    for i in range(1, model.N + 1):
        on_path[i] = on_path[model.parent[i]]
        on_path[i, i] = True
    body = _velocity_bodies(model)
    return on_path[np.ix_(body, body)].T


def crba(model, q):
    """The joint-space inertia matrix H(q) (nv x nv, symmetric positive definite)."""
    (q,) = check_state(model, q=q)
    N, parent = model.N, model.parent
    X0 = forward_kinematics(model, q)
    S = [None] + [model.joints[i].S(q[model.q_slices[i]]) for i in range(1, N + 1)]
    IC = [None] + [model.I[i].copy() for i in range(1, N + 1)]
    for i in range(N, 0, -1):
        if parent[i] > 0:
            Xup = X0[i] @ inv_X(X0[parent[i]])                         # ⁱX_λ(i)
            IC[parent[i]] = IC[parent[i]] + Xup.T @ IC[i] @ Xup        # (CRB-1)
    S0 = np.zeros((6, model.nv))                                       # ⁰S_j, column by column
    F0 = np.zeros((6, model.nv))                                       # ⁰F_i, column by column
    for i in range(1, N + 1):
        S0[:, model.v_slices[i]] = inv_X(X0[i]) @ S[i]
        F0[:, model.v_slices[i]] = X0[i].T @ (IC[i] @ S[i])
    H = np.where(support_mask(model), S0.T @ F0, 0.0)                  # (CRB-2), j on i's path
    H = H + H.T                                  # the other triangle by symmetry, H_ij = H_jiᵀ
    body = _velocity_bodies(model)
    H[body[:, None] == body[None, :]] *= 0.5     # a joint's own block was counted twice
    return H


def forward_dynamics_crb(model, q, qd, tau, f_ext=None):
    """q̈ from H q̈ = τ − b: b by RNEA with q̈ = 0, H by CRBA, solved by Cholesky."""
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    b = rnea(model, q, qd, np.zeros(model.nv), f_ext)
    L = np.linalg.cholesky(crba(model, q))                  # H = L Lᵀ
    return np.linalg.solve(L.T, np.linalg.solve(L, tau - b))
