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

``aba`` takes a batch of states as ``rnea`` does: the same lines, one entry per state
(vectors (..., 6), matrices (..., 6, 6); ``mv``, ``mtv``, ``mm`` and ``.mT`` act state
by state).
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .errors import RbdlearnError
from .kinematics import joint_transforms
from .model import (_real_array, batch_shape, check_body, check_forces, check_state, is_body,
                    neutral_q, without_gravity)
from .spatial import (cross3, cross_force, cross_motion, inertia_params, mm, mm_flops, mtv,
                      mv, plux, plux_parts, to_linear_angular)

__all__ = ["aba", "aba_flops", "aba_local_frame", "local_X", "local_C",
           "SingularArticulatedInertia", "Gear", "gear_matrix", "geared_q", "aba_geared",
           "theta_recursion", "inter_body_inertia", "GearedTheta",
           "theta_recursion_geared", "inter_body_inertia_geared"]


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


def aba_local_frame(model, q, qd, tau, f_ext=None, return_articulated=False):
    """Joint accelerations q̈ by seed 000's local-frame form of the ABA (eqs. 10–26).

    Same arguments and result as :func:`aba`. With ``return_articulated=True`` also
    returns the lists ``I_hat``, ``Z_hat`` of articulated inertias Î_i and bias forces
    Ẑ_i (eq. 17: F_i = Î_i A_i + Ẑ_i), in the seed's [linear; angular] order and in
    the frame at body i's centre of mass (gravity enters as A_0 = −g).
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
    return (qdd, I_hat, Z_hat) if return_articulated else qdd


# ------------------------------------------------------------------------------ gears
#
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


@dataclass(frozen=True)
class Gear:
    """``q̇_driven = ratio · q̇_driver`` for two 1-DOF joints (revolute or prismatic),
    given by body index or joint name: the driver is the driven joint's parent or its
    child (serial coupling, seed 000 §2.6) or its sibling (parallel coupling, §2.7). A
    driver may itself be driven (a chain of gears). Positions follow
    ``q_driven − q0_driven = ratio · (q_driver − q0_driver) + offset``, see
    :func:`geared_q`; with the neutral q0 this is a URDF mimic joint,
    ``q_driven = multiplier · q_driver + offset``. :func:`gear_matrix` and
    :func:`geared_q` accept a gear between any two 1-DOF joints (as URDF mimic joints
    are); :func:`aba_geared` needs the driver to be a parent, child or sibling."""
    driven: object
    driver: object
    ratio: float
    offset: float = 0.0

    def __post_init__(self):
        for what, r in (("ratio", self.ratio), ("offset", self.offset)):
            if isinstance(r, bool) or not isinstance(r, numbers.Real) or not math.isfinite(r):
                raise RbdlearnError(f"gear {what} must be a finite real number, got {r!r}")


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


def _articulated_inertias(model, q):
    """``(Xup, S, IA)``: the ABA's inward sweep of articulated inertias (ABA-3–5),
    which depends on q only."""
    N, parent = model.N, model.parent
    Xup = joint_transforms(model, q)
    S = [None] + [model.joints[i].S(q[model.q_slices[i]]) for i in range(1, N + 1)]
    IA = [None] + [model.I[i].copy() for i in range(1, N + 1)]
    for i in range(N, 0, -1):
        U = IA[i] @ S[i]
        Ia = IA[i] - U @ _inv_D(S[i].T @ U, model, i) @ U.T
        if parent[i] > 0:
            IA[parent[i]] = IA[parent[i]] + Xup[i].T @ Ia @ Xup[i]
    return Xup, S, IA


def theta_recursion(model, q):
    """``(T, Theta)``: per body c, ``T[c] = T_cp`` and ``Theta[c] = Θ_c`` of seed 000
    §2.8 (entry 0: the base, Θ_0 = 0). ``δA_c = Θ_c δẐ_c`` is the acceleration
    response of body c to a change δẐ_c = −δf of its own bias force."""
    (q,) = check_state(model, q=q)
    Xup, S, IA = _articulated_inertias(model, q)
    T, Theta = [None] * (model.N + 1), [np.zeros((6, 6))] + [None] * model.N
    for c in range(1, model.N + 1):
        U = IA[c] @ S[c]
        Dinv = _inv_D(S[c].T @ U, model, c)
        T[c] = (np.eye(6) - S[c] @ Dinv @ U.T) @ Xup[c]                    # T_cp
        Scp = S[c] @ Dinv @ S[c].T                                         # S_cp
        Theta[c] = T[c] @ Theta[model.parent[c]] @ T[c].T - Scp            # Θ_c
    return T, Theta


def inter_body_inertia(model, q, i, j, T_Theta=None):
    """``Λ_ji`` (6x6): the change ``δA_j = Λ_ji δf`` of body j's spatial acceleration
    (body-j coordinates) caused by an extra spatial force δf on body i (body-i
    coordinates), by seed 000 §2.8 — equal to ``J_j H⁻¹ J_iᵀ`` with local Jacobians.
    ``Λ_ii`` is the inverse operational-space inertia of body i. Pass
    ``T_Theta = theta_recursion(model, q)`` to reuse it for several pairs."""
    check_body(model, i)
    check_body(model, j)
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
    """Seed 000 §2.8 on a tree with gears (:func:`theta_recursion_geared`). Per body m:
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
    check_body(model, i)
    check_body(model, j)
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


# --------------------------------------------------------------------- impulses
#
# An impulse Δf (a force integrated over an instant) changes velocities as a force
# changes accelerations: Δq̇ = H⁻¹ Jᵀ Δf. Velocity products and gravity give no
# impulse, so Δq̇ is the ABA's response to Δf alone: the ABA at rest without gravity.


def _impulse_response(model, q, tau=None, f_ext=None):
    """``H⁻¹ (tau + Σ J_kᵀ f_k)``: the velocity change caused by the generalized impulse
    ``tau`` and the spatial impulses ``f_ext``: one ABA at rest without gravity."""
    zero = np.zeros(model.nv)
    return aba(without_gravity(model), q, zero, zero if tau is None else tau, f_ext)
