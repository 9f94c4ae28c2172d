"""Gears (Chapter 2 §5, seed 000 §2.6–2.8; the book's equations gc-*): joints coupled by
:class:`~rbdlearn.joints.Gear` objects, q̇ = G q̇_ind (``gear_matrix``, ``geared_q``), the
ABA with parallel coupling (``aba_geared``, eqs. 32–40), and seed 000 §2.8's Θ recursion
and inverse inertia between bodies on a geared tree (``theta_recursion_geared``,
``inter_body_inertia_geared``). Both run on one positions-only sweep,
``_geared_inertias`` (eqs. 32, 39), the geared form of ``articulated._articulated_sweep``.
"""

from dataclasses import dataclass

import numpy as np

from .articulated import _inv_D, _paths_to_common
from .errors import RbdlearnError
from .joints import Gear
from .kinematics import joint_transforms
from .model import _real_array, body_index, check_forces, check_state, is_body, neutral_q
from .spatial import cross_force, cross_motion

__all__ = ["gear_matrix", "geared_q", "aba_geared", "GearedTheta", "theta_recursion_geared",
           "inter_body_inertia_geared"]


# A gear couples two 1-DOF joints: q̇_j = γ q̇_i (seed 000 §2.6–2.7). The coupled joints
# of one independent coordinate form a *group*: its driver (a joint no gear drives) and
# every joint driven by it, directly or through a chain of gears. Each member m moves
# with the total ratio g_m (the product of the ratios along its chain; g = 1 for the
# driver). Because every gear joins a parent and its child or two siblings, a group
# hangs from one body P: each member's parent is P or another member. Serial coupling
# (§2.6) then reduces to parallel coupling (§2.7): every member is treated as a child
# of P moved by the common coordinate, with (eqs. 32, 35, in body-m coordinates)
#
#     X_mP = ᵐX_n X_nP,   Ĵ_m = ᵐX_n Ĵ_n + S_m g_m,   Ĉ_m = ᵐX_n Ĉ_n + c_m    (n = λ(m))
#
# and X_mP = ᵐX_P, Ĵ_m = S_m g_m, Ĉ_m = c_m when λ(m) = P. A joint that is neither
# driven nor a driver is a group of one, for which these reduce to Featherstone's ABA.
# A member's own Î_m gathers only the children outside its group (its geared child
# hangs from P, not from it). Two misprints of the seed are corrected: eq. 36 reads
# A_c = X_cp A_p + Ĉ_pc + Ĵ_c q̈ (Ĉ_pc is not multiplied by q̈, cf. eq. 35), and in
# eq. 40 the common τ enters once, τ − Σ_c Ĵ_cᵀ(Î_c Ĉ_pc + Ẑ_c), as in eq. 38.


@dataclass
class _Gearing:
    """The groups of a gear set: ``groups`` lists (members in increasing order, P);
    ``root[m]`` is the driver of m's group, ``g[m]`` its total ratio and ``b[m]`` its
    total offset; ``ind_q`` and ``ind_v`` map each independent (root) joint to its
    slices of q_ind and q̇_ind. ``far`` is the first (driven, driver) pair that are
    not parent/child or siblings, if any: then ``groups`` is None, and only the
    reduced equations apply."""
    groups: list
    far: tuple
    root: list
    g: list
    b: list
    ind_q: dict
    ind_v: dict
    nq: int
    nv: int


def _gear_body(model, ref):
    if isinstance(ref, str):
        if ref in model.names[1:]:
            return model.names.index(ref)
        raise RbdlearnError(f"gear names joint {ref!r}, which is not in the model")
    if is_body(model, ref):
        return int(ref)
    raise RbdlearnError(f"gear joint must be a joint name or a body index in 1..{model.N}, "
                        f"got {ref!r}")


def _gearing(model, gears):
    """Check ``gears`` against ``model`` and group the coupled joints."""
    N, parent, names = model.N, model.parent, model.names
    driver = {}                                          # driven body -> (driver, ratio)
    for gear in gears:
        if not isinstance(gear, Gear):
            raise RbdlearnError(f"gears must be Gear objects, got {gear!r}")
        j, i = _gear_body(model, gear.driven), _gear_body(model, gear.driver)
        what = f"gear between joint '{names[i]}' and '{names[j]}'"
        if i == j:
            raise RbdlearnError(f"{what}: a joint cannot drive itself")
        for k in (i, j):
            if model.joints[k].nv != 1 or model.joints[k].nq != 1:
                raise RbdlearnError(f"{what}: joint '{names[k]}' is a "
                                    f"{type(model.joints[k]).__name__} joint; gears couple "
                                    f"1-DOF (revolute or prismatic) joints only")
        if j in driver:
            raise RbdlearnError(f"joint '{names[j]}' is driven by two gears (by "
                                f"'{names[driver[j][0]]}' and '{names[i]}')")
        driver[j] = (i, float(gear.ratio), float(gear.offset))
    far = next(((j, i) for j, (i, _, _) in driver.items()
                if not (parent[j] == i or parent[i] == j or parent[i] == parent[j])), None)
    root, g, b = list(range(N + 1)), [1.0] * (N + 1), [0.0] * (N + 1)
    for j in driver:          # q_j − q0_j = g_j (q_root − q0_root) + b_j along the chain
        chain, k, ratio, offset = [j], j, 1.0, 0.0
        while k in driver:
            k, r, o = driver[k]
            ratio, offset = ratio * r, offset + ratio * o
            if k in chain:
                loop = " -> ".join(f"'{names[m]}'" for m in chain + [k])
                raise RbdlearnError(f"gears drive each other in a loop: {loop}")
            chain.append(k)
        root[j], g[j], b[j] = k, ratio, offset
    members = {r: [m for m in range(1, N + 1) if root[m] == r]
               for r in range(1, N + 1) if r not in driver}
    groups = None
    if not far:
        groups = []
        for r in sorted(members, key=lambda r: members[r][0]):
            ms = members[r]
            P = {parent[m] for m in ms if root[parent[m]] != r}
            assert len(P) == 1, "a gear group hangs from one body"       # see the comment above
            groups.append((ms, P.pop()))
    ind_q, ind_v, nq, nv = {}, {}, 0, 0
    for r in sorted(members):
        jr = model.joints[r]
        ind_q[r], ind_v[r] = slice(nq, nq + jr.nq), slice(nv, nv + jr.nv)
        nq, nv = nq + jr.nq, nv + jr.nv
    return _Gearing(groups, far, root, g, b, ind_q, ind_v, nq, nv)


def gear_matrix(model, gears):
    """``G`` (nv x nv_ind) with ``q̇ = G q̇_ind``: q̇_ind holds the velocities of the joints
    no gear drives, in body order; a driven joint's row is its total ratio in the
    column of its group's driver. Joint forces τ reduce to ``τ_ind = Gᵀ τ``."""
    return _gear_matrix(model, _gearing(model, gears))


def _gear_matrix(model, gr):
    G = np.zeros((model.nv, gr.nv))
    for i in range(1, model.N + 1):
        G[model.v_slices[i], gr.ind_v[gr.root[i]]] = gr.g[i] * np.eye(model.joints[i].nv)
    return G


def geared_q(model, gears, q_ind, q0=None):
    """The full configuration q from the independent one ``q_ind`` (the q of the joints
    no gear drives, in body order): a driven joint j of driver r with total ratio g_j
    and offset b_j has ``q_j = q0_j + g_j (q_r − q0_r) + b_j``, where ``q0`` (default:
    the neutral configuration) is a configuration at which the gears mesh."""
    return _geared_q(model, _gearing(model, gears), q_ind, q0)


def _geared_q(model, gr, q_ind, q0):
    q_ind = np.asarray(q_ind, dtype=float)
    if q_ind.shape != (gr.nq,):
        raise RbdlearnError(f"q_ind has shape {q_ind.shape}, expected ({gr.nq},) (the q of "
                            f"the joints no gear drives)")
    q0 = neutral_q(model) if q0 is None else check_state(model, q=q0)[0]
    q = np.empty(model.nq)
    for i in range(1, model.N + 1):
        r = gr.root[i]
        q[model.q_slices[i]] = (q_ind[gr.ind_q[i]] if r == i else
                                q0[model.q_slices[i]]
                                + gr.g[i] * (q_ind[gr.ind_q[r]] - q0[model.q_slices[r]])
                                + gr.b[i])
    return check_state(model, q=q)[0]


def _near_gearing(model, gears, who):
    """``_gearing``, refusing gears that the O(N) algorithms cannot take."""
    gr = _gearing(model, gears)
    if gr.far:
        j, i = gr.far
        raise RbdlearnError(f"{who}: joint '{model.names[j]}' is geared to "
                            f"'{model.names[i]}', which is not its parent, child or sibling "
                            f"(seed 000 §2.6–2.7); solve the reduced equations "
                            f"Gᵀ H G q̈_ind = Gᵀ (τ − C q̇ − g) with "
                            f"G = gear_matrix(model, gears)")
    return gr


def _geared_inertias(model, gr, q):
    """The part of the geared ABA that depends on q only: ``Xup``, ``S``; per member m
    of a group its transform ``XP[m]`` = ᵐX_P from the group's body P and its axis
    ``Jh[m]`` = Ĵ_m (eq. 32); the articulated inertias ``IA`` (eq. 39); and per group
    (keyed by its driver r) ``U[r]`` = Σ X_mPᵀ Î_m Ĵ_m and ``Dinv[r]`` = D⁻¹."""
    N, parent = model.N, model.parent
    Xup = joint_transforms(model, q)
    S = [None] + [model.joints[i].S(q[model.q_slices[i]]) for i in range(1, N + 1)]
    XP, Jh = [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        p = parent[i]
        if gr.root[p] == gr.root[i]:                 # p is in i's group: ride on it
            XP[i], Jh[i] = Xup[i] @ XP[p], Xup[i] @ Jh[p] + S[i] * gr.g[i]   # (32)
        else:                                        # i hangs from its group's P
            XP[i], Jh[i] = Xup[i], S[i] * gr.g[i]
    IA = [None] + [model.I[i].copy() for i in range(1, N + 1)]
    U, Dinv = {}, {}
    for ms, P in reversed(gr.groups):
        r = gr.root[ms[0]]
        U[r] = sum(XP[m].T @ IA[m] @ Jh[m] for m in ms)           # Σ X_cpᵀ Î_c Ĵ_c
        Dinv[r] = _inv_D(sum(Jh[m].T @ IA[m] @ Jh[m] for m in ms), model, r)
        if P > 0:
            IA[P] = (IA[P] + sum(XP[m].T @ IA[m] @ XP[m] for m in ms)
                     - U[r] @ Dinv[r] @ U[r].T)                            # (39)
    return Xup, S, XP, Jh, IA, U, Dinv


def aba_geared(model, gears, q_ind, qd_ind, tau_ind, f_ext=None, q0=None):
    """Independent accelerations q̈_ind of a tree whose joints are coupled by ``gears``
    (seed 000 §2.6–2.7), by the ABA with parallel coupling (eqs. 36–40).

    ``q_ind``, ``qd_ind``: the independent coordinates and velocities (see
    :func:`geared_q`, :func:`gear_matrix`); ``tau_ind``: the generalized force of each
    independent coordinate — the driver's includes what the gears transmit: for joint
    forces τ it is ``Gᵀ τ``. ``f_ext`` as in :func:`aba`. The result solves the reduced
    equations ``Gᵀ H G q̈_ind = τ_ind − Gᵀ (C q̇ + g − Jᵀ f_ext)`` in O(N).
    Pinocchio's ABA has no such support: geared joints there need a constrained solver.
    """
    gr = _near_gearing(model, gears, "aba_geared")
    qd_ind, tau_ind = (_real_array(x, name) for x, name in ((qd_ind, "qd_ind"),
                                                            (tau_ind, "tau_ind")))
    for x, name in ((qd_ind, "qd_ind"), (tau_ind, "tau_ind")):
        if x.shape != (gr.nv,) or not np.all(np.isfinite(x)):
            raise RbdlearnError(f"{name} must be {gr.nv} finite numbers (one per independent "
                                f"velocity), got shape {x.shape}")
    q, qd = _geared_q(model, gr, q_ind, q0), _gear_matrix(model, gr) @ qd_ind
    f_ext = check_forces(model, f_ext)
    N, parent = model.N, model.parent
    Xup, S, XP, Jh, IA, U, Dinv = _geared_inertias(model, gr, q)        # (32), (39)
    v, c = [np.zeros(6)] + [None] * N, [None] * (N + 1)
    pA, Ch = [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        j, p = model.joints[i], parent[i]
        qi, qdi = q[model.q_slices[i]], qd[model.v_slices[i]]
        vJ = S[i] @ qdi
        v[i] = Xup[i] @ v[p] + vJ                                          # (ABA-1)
        c[i] = j.cJ(qi, qdi) + cross_motion(v[i], vJ)
        pA[i] = cross_force(v[i], model.I[i] @ v[i])                       # (ABA-2)
        if f_ext is not None:
            pA[i] = pA[i] - f_ext[i]
        # (35): ride on a parent of the same group, else hang from the group's P
        Ch[i] = Xup[i] @ Ch[p] + c[i] if gr.root[p] == gr.root[i] else c[i]
    u = {}
    for ms, P in reversed(gr.groups):
        r = gr.root[ms[0]]
        IC = [IA[m] @ Ch[m] + pA[m] for m in ms]                  # Î_c Ĉ_pc + Ẑ_c
        u[r] = tau_ind[gr.ind_v[r]] - sum(Jh[m].T @ z for m, z in zip(ms, IC))   # (38)
        if P > 0:
            pA[P] = (pA[P] + sum(XP[m].T @ z for m, z in zip(ms, IC))
                     + U[r] @ (Dinv[r] @ u[r]))                            # (40)
    a = [-model.gravity] + [None] * N
    qdd_ind = np.empty(gr.nv)
    for ms, P in gr.groups:
        r = gr.root[ms[0]]
        qdd_r = Dinv[r] @ (u[r] - U[r].T @ a[P])                           # (38)
        qdd_ind[gr.ind_v[r]] = qdd_r
        for m in ms:
            a[m] = XP[m] @ a[P] + Ch[m] + Jh[m] @ qdd_r                    # (36)
    return qdd_ind


# Seed 000 §2.8 closes with "with gears it is basically the same". On the geared tree a
# group hangs from its body P (see "gears" above), so a test force travels from a member
# m to P by eq. (40) and back by eqs. (38), (36) (δ of each, τ and q̇ fixed):
#
#     δẐ_P = Σ_m T_mᵀ δẐ_m,                    T_m = X_mP − Ĵ_m D⁻¹ Uᵀ,
#     δA_m = T_m δA_P − Ĵ_m D⁻¹ Σ_k Ĵ_kᵀ δẐ_k,   (k: the members of m's group)
#
# which for a group of one are T_cp and S_cp above. So Θ_m = T_m Θ_P T_mᵀ − Ĵ_m D⁻¹ Ĵ_mᵀ
# on the *reduced* tree, whose parent of m is its group's P, and Λ_ji follows from the
# same paths — with one new term: when the paths from P to i and to j start at two
# members c ≠ c' of one group, the common coordinate carries the push from one to the
# other, δA_c = (T_c Θ_P T_c'ᵀ − Ĵ_c D⁻¹ Ĵ_c'ᵀ) δẐ_c'. It does not vanish even at a fixed
# base (Θ_0 = 0): two geared siblings on the base feel each other.


@dataclass
class GearedTheta:
    """Seed 000 §2.8 on a tree with gears (:func:`.theta_recursion_geared`). Per body m:
    ``parent[m]`` is the body P its group hangs from (the tree parent when no gear
    involves m), ``T[m]`` = T_m, ``Theta[m]`` = Θ_m (entry 0: the base, Θ_0 = 0),
    ``group[m]`` the driver of m's group, ``Jh[m]`` = Ĵ_m; ``Dinv[r]`` = D⁻¹ of the group
    of driver r."""
    parent: list
    T: list
    Theta: list
    group: list
    Jh: list
    Dinv: dict


def theta_recursion_geared(model, q, gears):
    """Θ of seed 000 §2.8 for a tree whose joints are coupled by ``gears`` (as in
    :func:`aba_geared`: each driver is the driven joint's parent, child or sibling), at
    the full configuration ``q``. With ``gears = []`` it is :func:`theta_recursion`."""
    (q,) = check_state(model, q=q)
    gr = _near_gearing(model, gears, "theta_recursion_geared")
    Xup, S, XP, Jh, IA, U, Dinv = _geared_inertias(model, gr, q)
    N = model.N
    parent = [-1] + [None] * N
    for ms, P in gr.groups:
        for m in ms:
            parent[m] = P
    T, Theta = [None] * (N + 1), [np.zeros((6, 6))] + [None] * N
    for m in range(1, N + 1):                         # parent[m] < m: root outwards
        r = gr.root[m]
        T[m] = XP[m] - Jh[m] @ Dinv[r] @ U[r].T                            # T_m
        Theta[m] = T[m] @ Theta[parent[m]] @ T[m].T - Jh[m] @ Dinv[r] @ Jh[m].T   # Θ_m
    return GearedTheta(parent, T, Theta, list(gr.root), Jh, Dinv)


def inter_body_inertia_geared(model, q, gears, i, j, theta=None):
    """``Λ_ji`` (6x6) of a geared tree: ``δA_j = Λ_ji δf`` for an extra spatial force δf
    on body i (body-i coordinates; δA_j in body-j coordinates), by seed 000 §2.8 with
    gears — equal to ``J_j G (Gᵀ H G)⁻¹ Gᵀ J_iᵀ`` with local Jacobians and
    ``G = gear_matrix(model, gears)``. Pass ``theta = theta_recursion_geared(model, q,
    gears)`` to reuse it for several pairs."""
    i = body_index(model, i, "i")
    j = body_index(model, j, "j")
    th = theta_recursion_geared(model, q, gears) if theta is None else theta
    if not isinstance(th, GearedTheta) or len(th.T) != model.N + 1:
        raise RbdlearnError("theta must be theta_recursion_geared(model, q, gears) of this model")

    def path(b):                                      # b, its reduced parent, …, 0 excluded
        out = []
        while b > 0:
            out.append(b)
            b = th.parent[b]
        return out
    below_i, below_j, p = _paths_to_common(path(i), path(j))   # i … c (c: p's child)
    right, left = np.eye(6), np.eye(6)
    for k in below_i[:-1]:
        right = th.T[k].T @ right                     # δẐ_λ'(k) = T_kᵀ δẐ_k
    for k in below_j[:-1]:
        left = left @ th.T[k]                         # δA_k = T_k δA_λ'(k)
    middle = th.Theta[p]
    if below_i:
        middle = middle @ th.T[below_i[-1]].T
    if below_j:
        middle = th.T[below_j[-1]] @ middle
    if below_i and below_j and th.group[below_i[-1]] == th.group[below_j[-1]]:
        c, c2 = below_j[-1], below_i[-1]              # two members of one group
        middle = middle - th.Jh[c] @ th.Dinv[th.group[c]] @ th.Jh[c2].T
    return -left @ middle @ right                     # δẐ_i = −δf
