"""Closed and structure-varying kinematic chains (Chapter 5, seed 004: Nakamura, Yamane and
Nagashima).

A closed chain is cut, one joint per loop, into a *virtual open chain*: a tree that the
open-chain algorithms (RNEA, CRBA) handle. Each cut joint becomes the joint of a
*virtual link* — a massless end link hung from one side of the cut — whose *real*
pointer names the body on the other side (§3.2). The loop is closed when the virtual
link moves with its real link:

    J_Li θ̇_J = 0,    J_Li = ᵛX₀ (J⁰_real − J⁰_virtual)                        (5)

(6 rows, over all N_J joint velocities, the cut joint's included). Stacked, J_C
(6 N_L x N_J, eq. 6) has m independent rows J_Cm (eq. 7); m independent columns of J_Cm
form J_S and the rest J_G (eq. 9); N_F = N_J − m (eq. 8), and with
    θ̇_S = H θ̇_G,    H = −J_S⁻¹ J_G                                           (11), (12)
every joint velocity follows from θ̇_G: θ̇_J = W θ̇_G, where W stacks the rows of H and of
the identity (eq. 3, Fig. 2). Inverse dynamics maps the open chain's τ_O by τ_G = Wᵀ τ_O
(eq. 1); the actuators give τ_G = Sᵀ τ_A (eq. 2), S = rows of W of the actuated joints
(eq. 4). Forward dynamics (§2.4) builds A θ̈_G + b = τ_G (eq. 17) column by column with
the unit-vector method, θ̈_S following from eq. 13 with Ḣ θ̇_G from eq. 16.

Position level (the book's addition; the paper works with velocities): the loop residual
``loop_residual`` is the pose of the real frame in the virtual link's frame, and
``assemble`` drives it to zero by Newton steps on θ_S.

Structure changes (§4): ``connect`` creates a virtual link and applies the velocity jump
(eqs. 29–33); ``cut`` removes a virtual link; ``cut_joint`` re-attaches the outboard part
of a real joint to the base with a free joint.
"""

from dataclasses import dataclass, field, replace

import numpy as np

from .errors import RbdlearnError
from .crb import crba
from .integrate import Trajectory, rk4_step, time_grid
from .joints import Fixed, Free, Prismatic, Revolute, Spherical, zyx_angles
from .kinematics import (base_subspaces, body_accelerations, body_velocities,
                         forward_kinematics)
from .model import (GRAVITY, Model, check_state, integrate_q, is_body, planar_chain,
                    pointers)
from .models import segment_inertia
from .inverse_dynamics import rnea
from .spatial import (cross_motion, inv_X, log_so3, mcI, plux, plux_parts, quat_to_rot,
                      rot_to_quat, rotx)

__all__ = ["outward", "inward", "rnea_pointers", "SingularClosure", "LoopNotClosed", "Loop",
           "Mechanism", "add_loop", "four_bar",
           "loop_residual", "loop_jacobian", "loop_jdot_qdot", "Split", "choose_split",
           "Reduction", "reduction", "assemble", "generalized_forces", "actuator_forces",
           "inverse_dynamics", "forward_dynamics", "forward_dynamics_kkt", "simulate",
           "Connection", "add_loop_at", "connect", "velocity_jump", "cut", "cut_joint",
           "HumanFigure", "human_figure", "figure_q", "figure_skeleton", "figure_springs",
           "Swing", "swing"]


class SingularClosure(RbdlearnError):
    """J_S is singular: the dependent joints θ_S cannot follow θ_G at this configuration."""


class LoopNotClosed(RbdlearnError):
    """The loops are not closed: Newton's method could not close them (``assemble``), or
    a configuration given to the dynamics leaves a loop open."""


# ------------------------------------------------- walking the pointers (§3.1, Fig. 4)

def outward(P, i=None):
    """The outward recursion of §3.1 over the pointers ``P`` (``rbd.pointers``): body i
    (default: the base's child), then the same recursion from its brother and from its
    child. Yields each body once, after its parent; no body searches for its children."""
    i = P.child[0] if i is None else i
    if i < 0:
        return
    yield i                                   # the body's own step: its parent is done
    yield from outward(P, P.brother[i])
    yield from outward(P, P.child[i])


def inward(P, i=None):
    """The inward recursion of §3.1: first the recursion from body i's brother and from
    its child, then body i itself. Yields each body once, after all its children."""
    i = P.child[0] if i is None else i
    if i < 0:
        return
    yield from inward(P, P.brother[i])
    yield from inward(P, P.child[i])
    yield i                                   # the body's own step: its children are done


def rnea_pointers(model, q, qd, qdd, f_ext=None, P=None):
    """``rnea`` with its two passes driven by the recursions of §3.1 over the pointers
    ``P`` (default ``rbd.pointers(model)``): the same per-body equations (RNEA-1..4),
    visited in the order the pointers give."""
    P = pointers(model) if P is None else P
    return rnea(model, q, qd, qdd, f_ext, order=(outward(P), inward(P)))


# ------------------------------------------------------------------ the mechanism (§3)

@dataclass(frozen=True)
class Loop:
    """One loop closure: body ``virtual`` is the virtual link (a massless end link whose
    joint is the cut joint), ``real`` its real link (0: the ground), and ``Xreal`` the
    Plücker transform from the real link's coordinates to the frame on it that the
    virtual link's frame must coincide with."""
    name: str
    virtual: int
    real: int
    Xreal: np.ndarray = field(default_factory=lambda: np.eye(6), compare=False)


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A closed (or open) mechanism: ``model`` is the virtual open chain, virtual links
    included; ``loops`` its loop closures, one per virtual link (§3.2)."""
    model: Model
    loops: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "loops", tuple(self.loops))
        model, names = self.model, [loop.name for loop in self.loops]
        if len(set(names)) != len(names):
            raise RbdlearnError(f"loop names must be distinct, got {names}")
        virtuals = [loop.virtual for loop in self.loops]
        for loop in self.loops:
            k, what = loop.virtual, f"loop '{loop.name}'"
            if not is_body(model, k):
                raise RbdlearnError(f"{what}: virtual link {k!r} is not a body in 1..{model.N}")
            if not (isinstance(loop.real, (int, np.integer)) and 0 <= loop.real <= model.N):
                raise RbdlearnError(f"{what}: real link {loop.real!r} is not a body in "
                                    f"0..{model.N}")
            if loop.real in virtuals or loop.real == k:
                raise RbdlearnError(f"{what}: the real link must be a real body, got body "
                                    f"{loop.real}")
            if k in model.parent[1:]:
                raise RbdlearnError(f"{what}: virtual link '{model.body_names[k]}' has children; "
                                    f"a virtual link must be an end link")
            if np.any(np.asarray(model.I[k]) != 0):
                raise RbdlearnError(f"{what}: virtual link '{model.body_names[k]}' has mass or "
                                    f"inertia; a virtual link carries kinematic parameters only")
            if np.shape(loop.Xreal) != (6, 6):
                raise RbdlearnError(f"{what}: Xreal must be a 6x6 Plücker transform")

    @property
    def real(self):
        """The real pointer of every body (§3.2): the real link of a virtual link, −1 for
        the other bodies."""
        real = [-1] * (self.model.N + 1)
        for loop in self.loops:
            real[loop.virtual] = loop.real
        return real

    def loop(self, name):
        for loop in self.loops:
            if loop.name == name:
                return loop
        raise RbdlearnError(f"no loop named {name!r}; loops: {[lp.name for lp in self.loops]}")


def _append_body(model, parent, joint, Xtree, name, joint_name):
    return model.replace(parent=model.parent + [parent], joints=model.joints + [joint],
                         Xtree=model.Xtree + [np.asarray(Xtree, dtype=float)],
                         I=model.I + [np.zeros((6, 6))], names=model.names + [joint_name],
                         body_names=model.body_names + [name])


def add_loop(mech, a, b, joint=None, Xa=None, Xb=None, name=None):
    """Close a loop between body ``a`` and body ``b`` (0: the ground): a new virtual link,
    child of ``a`` through the cut joint ``joint`` (default ``Fixed()``, a weld) and tree
    transform ``Xa``, with real pointer ``b`` and the frame ``Xb`` on b (§3.2, §4.2).
    Returns a new :class:`Mechanism`; the cut joint's q and q̇ come last."""
    if not isinstance(mech, Mechanism):
        mech = Mechanism(mech)
    N = mech.model.N
    for body, what in ((a, "a"), (b, "b")):
        if not (isinstance(body, (int, np.integer)) and 0 <= body <= N):
            raise RbdlearnError(f"body {what} = {body!r} is not a body in 0..{N}")
    name = name or f"loop{len(mech.loops) + 1}"
    joint = Fixed() if joint is None else joint
    Xa = np.eye(6) if Xa is None else Xa
    Xb = np.eye(6) if Xb is None else np.asarray(Xb, dtype=float)
    model = _append_body(mech.model, a, joint, Xa, f"{name}:{mech.model.body_names[b]}v",
                         f"{name}:cut")             # the virtual link "Link4v" of Fig. 8
    return Mechanism(model, mech.loops + (Loop(name, model.N, int(b), Xb),))


def four_bar(ground=2.0, crank=1.0, coupler=2.0, rocker=1.5, mass=1.0, gravity=GRAVITY):
    """A planar four-bar linkage in the y-z plane: ``planar_chain`` of crank, coupler and
    rocker (revolute joints about x, links along y at q = 0), the rocker's tip joined to
    the ground pivot at y = ``ground`` by a revolute cut joint (the virtual link of loop
    "four-bar"). ``mass``: a scalar or one per link (uniform rods). Not assembled: pass
    a guess through :func:`assemble`."""
    chain = planar_chain(3, [crank, coupler, rocker], mass, gravity=gravity)
    return add_loop(chain, 3, 0, Revolute([1.0, 0.0, 0.0]), Xa=plux(np.eye(3), [0, rocker, 0]),
                    Xb=plux(np.eye(3), [0, ground, 0]), name="four-bar")


# ------------------------------------------------------------- loop kinematics (§2.2)

def _X0(mech, X0, loop):
    """(ᵛX₀, ʳX₀): base-to-virtual-link and base-to-real-frame transforms."""
    return X0[loop.virtual], loop.Xreal @ X0[loop.real]


def loop_residual(mech, q):
    """The pose of each real frame in its virtual link's frame, [log R; p] (6 N_L): zero
    when every loop is closed."""
    (q,) = check_state(mech.model, q=q)
    X0 = forward_kinematics(mech.model, q)
    e = []
    for loop in mech.loops:
        Xv, Xr = _X0(mech, X0, loop)
        E, p = plux_parts(Xr @ inv_X(Xv))              # ʳX_v: E rotates v- into r-coordinates
        e.append(np.concatenate([log_so3(E.T), p]))
    return np.concatenate(e) if e else np.zeros(0)


def _world_jacobian(model, S0, i):
    """Body i's world Jacobian from ``S0``, every joint's column ⁰S_k side by side
    (``kinematics.base_subspaces``): it keeps the columns of the joints on i's path."""
    on_path = np.zeros(model.nv, dtype=bool)
    for k in model.ancestors(i):
        on_path[model.v_slices[k]] = True
    return S0 * on_path


def loop_jacobian(mech, q):
    """J_C (6 N_L x N_J): the loop-closure Jacobians J_Li stacked (eqs. 5, 6), each the
    velocity of the real frame relative to the virtual link, in the virtual link's
    coordinates."""
    model = mech.model
    (q,) = check_state(model, q=q)
    X0 = forward_kinematics(model, q)
    S0 = base_subspaces(model, q, X0).T            # 6 x nv: one forward kinematics for all
    rows = [X0[lp.virtual] @ (_world_jacobian(model, S0, lp.real)
                              - _world_jacobian(model, S0, lp.virtual))            # (5)
            for lp in mech.loops]
    return np.vstack(rows) if rows else np.zeros((0, model.nv))                     # (6)


def loop_jdot_qdot(mech, q, qd):
    """J̇_C q̇ (6 N_L): d/dt (J_C q̇) at q̈ = 0, for eq. 16. With v_v, v_r the spatial
    velocities of the virtual link and the real link in base coordinates (a_v, a_r their
    accelerations at q̈ = 0): d/dt ᵛX₀ (v_r − v_v) = ᵛX₀ (a_r − a_v) − v_v × ᵛX₀ (v_r − v_v),
    v_v here in virtual-link coordinates."""
    model = mech.model
    q, qd = check_state(model, q=q, qd=qd)
    X0 = forward_kinematics(model, q)
    v = body_velocities(model, q, qd)
    a = body_accelerations(model, q, qd, np.zeros(model.nv))
    v0 = [inv_X(X0[i]) @ v[i] for i in range(model.N + 1)]      # base coordinates
    a0 = [inv_X(X0[i]) @ a[i] for i in range(model.N + 1)]
    out = []
    for lp in mech.loops:
        Xv = X0[lp.virtual]
        rel = Xv @ (v0[lp.real] - v0[lp.virtual])
        out.append(Xv @ (a0[lp.real] - a0[lp.virtual]) - cross_motion(v[lp.virtual], rel))
    return np.concatenate(out) if out else np.zeros(0)


# ------------------------------------------------- independent rows and columns (§2.2)

@dataclass(frozen=True)
class Split:
    """Which rows of J_C are independent (``rows``, m of them, eq. 7) and which joint
    velocities are dependent (``S``, θ_S, m) or independent (``G``, θ_G, N_F = N_J − m)."""
    rows: tuple
    S: tuple
    G: tuple

    @property
    def m(self):
        return len(self.S)

    @property
    def NF(self):
        return len(self.G)


def _pivots(M, k):
    """k column indices of M by column-pivoted Gram–Schmidt (Businger–Golub): each step
    takes the column with the largest component outside the span of those taken. Columns
    within round-off of the largest (1e-10 of M's largest column) tie, and the first of
    them is taken: a symmetric mechanism has equal columns, which argmax would tell
    apart by their last bits, differently on another machine."""
    R = np.array(M, dtype=float)
    scale = np.linalg.norm(R, axis=0).max(initial=0.0)
    chosen = []
    for _ in range(k):
        norms = np.linalg.norm(R, axis=0)
        norms[chosen] = -1.0
        j = int(np.flatnonzero(norms >= norms.max() - 1e-10 * scale)[0])
        chosen.append(j)
        if norms[j] > 0:
            u = R[:, j] / norms[j]
            R -= np.outer(u, u @ R)
    return sorted(chosen)


def _joint_of_velocity(model, k):
    i = max(i for i in range(1, model.N + 1) if model.v_index[i] <= k
            and model.joints[i].nv > 0)
    return model.names[i] + (f"[{k - model.v_index[i]}]" if model.joints[i].nv > 1 else "")


def _check_JS(mech, split, JS, tol):
    """SingularClosure naming the loops (and joints θ_S) when J_S is singular."""
    if split.m == 0:
        return
    s = np.linalg.svd(JS, compute_uv=False)
    if s[-1] > tol * s[0]:
        return
    U, s, _ = np.linalg.svd(JS)                    # which loops: the near-null direction
    weight = np.zeros(len(mech.loops))
    np.add.at(weight, np.array(split.rows) // 6, np.abs(U[:, -1]))
    loops = [mech.loops[k].name for k in np.flatnonzero(weight > 0.1 * weight.max())]
    joints = [_joint_of_velocity(mech.model, k) for k in split.S]
    raise SingularClosure(
        f"loop(s) {loops}: J_S is singular (σ_min/σ_max = {s[-1] / s[0]:.2e}) — the "
        f"dependent joints {joints} cannot follow the independent ones at this "
        f"configuration; choose other independent joints or move away from it")


def _solve(M, b, what):
    """M⁻¹ b; a singular M raises :class:`SingularClosure` saying ``what`` it is (not
    numpy's bare LinAlgError; ``what``: a string, or a function that makes it)."""
    try:
        return np.linalg.solve(M, b)
    except np.linalg.LinAlgError:
        what = what() if callable(what) else what
        raise SingularClosure(f"{what} is singular at this configuration") from None


def _null_joints(model, M, indices):
    """Names of the joint velocities ``indices`` that M's near-null vector moves."""
    v = np.linalg.svd(M)[2][-1]
    return [_joint_of_velocity(model, indices[k]) for k in np.flatnonzero(
        np.abs(v) > 0.1 * np.abs(v).max())]


def choose_split(mech, q, independent=None, tol=1e-9):
    """The :class:`Split` at configuration q. m = rank of J_C (singular values above
    ``tol`` σ_max); the m rows of J_Cm and, unless ``independent`` (velocity indices of
    θ_G) is given, the m columns of J_S are chosen by column pivoting, so J_S is as far
    from singular as the greedy choice can make it. Raises :class:`SingularClosure`
    when the chosen J_S is singular."""
    model = mech.model
    JC = loop_jacobian(mech, q)
    if independent is None:
        s = np.linalg.svd(JC, compute_uv=False) if JC.size else np.zeros(0)
        m = int(np.sum(s > tol * s[0])) if s.size and s[0] > 0 else 0
        rows = _pivots(JC.T, m)                                                    # (7)
        S = _pivots(JC[rows], m)
        G = [k for k in range(model.nv) if k not in S]
    else:
        G = sorted(int(k) for k in independent)
        if len(set(G)) != len(G) or not all(0 <= k < model.nv for k in G):
            raise RbdlearnError(f"independent must be distinct velocity indices in "
                                f"0..{model.nv - 1}, got {independent!r}")
        m = model.nv - len(G)                                                      # (8)
        if m > JC.shape[0] or (m and np.linalg.matrix_rank(JC) > m):
            raise RbdlearnError(f"{len(G)} independent joint velocities given, but the "
                                f"loops leave only N_F = N_J − m = {model.nv} − "
                                f"{np.linalg.matrix_rank(JC)} degrees of freedom")
        rows = _pivots(JC.T, m)                                                    # (7)
        S = [k for k in range(model.nv) if k not in G]
    split = Split(tuple(rows), tuple(S), tuple(G))
    _check_JS(mech, split, JC[np.ix_(rows, S)], tol)
    return split


# ------------------------------------------------------------ H, W and Ḣθ̇_G (§2.2–2.3)

@dataclass(frozen=True, eq=False)
class Reduction:
    """The closed chain at one state, step by step: J_C (eq. 6), the :class:`Split`,
    J_S and J_G (eq. 9), H (eq. 12), W (eq. 3, Fig. 2) and, given q̇, the velocity
    θ̇_J = W θ̇_G (eq. 11) and Ḣ θ̇_G (eq. 16)."""
    JC: np.ndarray
    split: Split
    JS: np.ndarray
    JG: np.ndarray
    H: np.ndarray
    W: np.ndarray
    qd: np.ndarray = None
    Hd_qd: np.ndarray = None

    def S(self, actuated):
        """S = ∂θ_A/∂θ_G (eq. 4): the rows of W of the actuated joint velocities."""
        return self.W[list(actuated)]


def reduction(mech, q, qd=None, split=None, tol=1e-9):
    """The :class:`Reduction` at (q, q̇). ``split`` defaults to :func:`choose_split` at q.
    Only θ̇_G = q̇[G] is read from q̇; θ̇_S follows from eq. 11."""
    model = mech.model
    split = choose_split(mech, q, tol=tol) if split is None else split
    JC = loop_jacobian(mech, q)                                                 # (5), (6)
    JCm = JC[list(split.rows)]                                                  # (7)
    JS, JG = JCm[:, list(split.S)], JCm[:, list(split.G)]                       # (9)
    _check_JS(mech, split, JS, tol)
    what = lambda: (f"J_S of loop(s) {[lp.name for lp in mech.loops]} (θ_S = "  # noqa: E731
                    f"{[_joint_of_velocity(model, k) for k in split.S]})")
    H = -_solve(JS, JG, what) if split.m else np.zeros((0, split.NF))            # (12)
    W = np.zeros((model.nv, split.NF))                                          # Fig. 2
    W[list(split.S)] = H
    W[list(split.G)] = np.eye(split.NF)
    if qd is None:
        return Reduction(JC, split, JS, JG, H, W)
    (qd,) = check_state(model, qd=qd)
    qd = W @ qd[list(split.G)]                                                  # (11)
    JdCm_qd = loop_jdot_qdot(mech, q, qd)[list(split.rows)]
    Hd_qd = -_solve(JS, JdCm_qd, what) if split.m else np.zeros(0)               # (16)
    return Reduction(JC, split, JS, JG, H, W, qd, Hd_qd)


def _qdd_at_zero(r):
    """θ̈_J when θ̈_G = 0: θ̈_S = Ḣ θ̇_G (eq. 13), θ̈_G = 0."""
    qdd = np.zeros(r.W.shape[0])
    qdd[list(r.split.S)] = r.Hd_qd
    return qdd


# ----------------------------------------------------------------- position closure

def assemble(mech, q, split=None, independent=None, tol=1e-12, max_iter=50):
    """Close the loops: Newton steps on θ_S with θ_G held, q ← q ⊕ δ with
    δ_S = −J_C,S⁺ e (e = ``loop_residual``, J_C,S its columns θ_S; least squares, so
    rows that depend on others do no harm). Returns the closed q; raises
    :class:`LoopNotClosed` after ``max_iter`` steps."""
    model = mech.model
    (q,) = check_state(model, q=q)
    if split is None:
        split = choose_split(mech, q, independent)
    S = list(split.S)
    closest = 1.0                        # the least σ_m/σ_1 of J_C's columns θ_S met
    for _ in range(max_iter):
        e = loop_residual(mech, q)
        if np.abs(e).max(initial=0.0) < tol:
            return q
        delta = np.zeros(model.nv)
        delta[S], _, _, s = np.linalg.lstsq(loop_jacobian(mech, q)[:, S], e, rcond=None)
        delta[S] *= -1
        if split.m:
            closest = min(closest, s[split.m - 1] / s[0] if s[0] > 0 else 0.0)
        q = integrate_q(model, q, delta)
    worst = int(np.argmax(np.abs(e))) // 6
    where = (f"loop '{mech.loops[worst].name}' did not close in {max_iter} Newton steps "
             f"(residual {np.abs(e).max():.3g})")
    if closest < 1e-2:
        raise LoopNotClosed(
            f"{where}: the closure is singular here — J_C's columns of the dependent "
            f"joints θ_S {[_joint_of_velocity(model, k) for k in S]} lose rank (σ_min/σ_max "
            f"down to {closest:.1e}; rank < m = {split.m}), so θ_S cannot close the loops "
            f"with θ_G held: θ_G is past a dead point. Choose other independent joints "
            f"(choose_split at a nearby assembled q) or move θ_G back")
    raise LoopNotClosed(f"{where}; start nearer to an assembled configuration or choose "
                        f"other independent joints")


# ------------------------------------------------------------ inverse dynamics (§2.1)

def generalized_forces(mech, q, qd, qdd_G, f_ext=None, split=None, loop_tol=1e-6):
    """τ_G = Wᵀ τ_O (eq. 1): τ_O by the open chain's RNEA with θ̈_J = W θ̈_G + (0; Ḣθ̇_G)
    (eq. 13). Raises :class:`LoopNotClosed` if a loop's residual at q exceeds ``loop_tol``
    (as :func:`forward_dynamics`)."""
    _check_closed(mech, q, loop_tol)
    r = reduction(mech, q, qd, split)
    qdd_G = np.asarray(qdd_G, dtype=float)
    if qdd_G.shape != (r.split.NF,):
        raise RbdlearnError(f"qdd_G has shape {qdd_G.shape}, expected ({r.split.NF},) = (N_F,)")
    qdd = r.W @ qdd_G + _qdd_at_zero(r)                                        # (13)
    tau_O = rnea(mech.model, q, r.qd, qdd, f_ext)
    return r.W.T @ tau_O                                                        # (1)


def actuator_forces(S, tau_G, weights=None):
    """τ_A with Sᵀ τ_A = τ_G (eq. 2) and the least τ_Aᵀ Q τ_A, Q = diag(weights):
    τ_A = Q⁻¹ S (Sᵀ Q⁻¹ S)⁻¹ τ_G — for redundant actuation the minimum-norm choice."""
    S = np.asarray(S, dtype=float)
    w = np.ones(S.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (S.shape[0],) or np.any(w <= 0):
        raise RbdlearnError(f"weights must be {S.shape[0]} positive numbers, got {weights!r}")
    QiS = S / w[:, None]
    rank = np.linalg.matrix_rank(S.T @ QiS) if S.size else 0
    if rank < S.shape[1]:
        raise RbdlearnError(f"the actuated joints span only {rank} of the N_F = {S.shape[1]} "
                            f"generalized forces: the mechanism is under-actuated")
    return QiS @ np.linalg.solve(S.T @ QiS, tau_G)


def inverse_dynamics(mech, q, qd, qdd_G, actuated, weights=None, f_ext=None, split=None,
                     loop_tol=1e-6):
    """Actuator forces τ_A (one per velocity index in ``actuated``) that make the closed
    chain move with θ̈_G at (q, q̇): τ_O by RNEA, τ_G = Wᵀ τ_O, Sᵀ τ_A = τ_G (§2.1).
    Raises :class:`LoopNotClosed` if a loop's residual at q exceeds ``loop_tol`` (as
    :func:`forward_dynamics`): at an open q, J_C and so W describe another mechanism."""
    _check_closed(mech, q, loop_tol)
    r = reduction(mech, q, qd, split)
    tau_G = generalized_forces(mech, q, r.qd, qdd_G, f_ext, r.split, loop_tol)
    return actuator_forces(r.S(actuated), tau_G, weights)


# ------------------------------------------------------------ forward dynamics (§2.4)

def _check_closed(mech, q, loop_tol, what="q", tol_name="loop_tol"):
    """Raise LoopNotClosed naming the first loop whose residual exceeds ``loop_tol``."""
    e = loop_residual(mech, q).reshape(-1, 6)
    for loop, e_k in zip(mech.loops, e):
        if np.abs(e_k).max() > loop_tol:
            raise LoopNotClosed(
                f"loop '{loop.name}' is open at this {what}: its residual [log R; p] is "
                f"{np.array2string(e_k, precision=3)}, max {np.abs(e_k).max():.3g} (more "
                f"than {tol_name} = {loop_tol:.3g}); the dynamics of a closed chain need a "
                f"closed configuration: {what} = assemble(mech, {what}) first")


def _closure_roundoff(mech, q):
    """The loop residual that round-off alone can leave at a closed q: forward kinematics
    composes up to N transforms, each rounding a rotation by a few eps and a position by
    a few eps × the distances involved — every one of which (a body's position, a lever
    arm between two of them) is at most 2 P, P the farthest body or loop frame from the
    base at q. So |residual| ≲ c N eps (1 + P), c = 16 for the few roundings per
    transform (a 3 x 3 product, its translation, the inverse and the log of the loop)."""
    X0 = forward_kinematics(mech.model, q)
    frames = list(X0[1:]) + [lp.Xreal @ X0[lp.real] for lp in mech.loops]
    P = max((np.linalg.norm(plux_parts(X)[1]) for X in frames), default=0.0)
    return 16 * (mech.model.N + 1) * np.finfo(float).eps * (1.0 + P)


def forward_dynamics(mech, q, qd, tau, f_ext=None, split=None, loop_tol=1e-6):
    """θ̈_J of the closed chain under joint forces ``tau`` (an N_J-vector; τ_A placed at
    the actuated joints, zeros elsewhere), by the unit-vector steps (1)–(5) of §2.4.
    Only θ̇_G = q̇[G] is read from q̇. Raises :class:`LoopNotClosed` if a loop's residual
    at q exceeds ``loop_tol`` (metres and radians)."""
    _check_closed(mech, q, loop_tol)
    return _forward_dynamics(mech, q, qd, tau, f_ext, split)


def _forward_dynamics(mech, q, qd, tau, f_ext=None, split=None, r=None):
    """:func:`forward_dynamics` without the closure check: RK4's inner stages lie off the
    loops by O(dt²), and :func:`simulate` closes them again after every step. ``r``: the
    :class:`Reduction` at (q, q̇) with ``split``, when the caller has it."""
    r = reduction(mech, q, qd, split) if r is None else r
    model, W, qd = mech.model, r.W, r.qd
    (tau,) = check_state(model, tau=tau)
    tau_G = W.T @ tau                                                     # step (1), (2)
    qdd0 = _qdd_at_zero(r)
    # steps (2) and (3) as one batch of inverse dynamics: θ̈_J of the probes θ̈_G = 0
    # (row 0) and θ̈_G = e_i (row i, i = 1..N_F)
    probes = qdd0 + np.vstack([np.zeros(model.nv), W.T])
    f = rnea(model, q, qd, probes, f_ext) @ W                # row k: Wᵀ τ_O of probe k
    b = f[0]                                                              # step (2)
    A = (f[1:] - b).T                              # step (3), (18): column i is f_i − b
    try:
        qdd_G = np.linalg.solve(A, tau_G - b) if r.split.NF else np.zeros(0)  # (4), (19)
    except np.linalg.LinAlgError:
        raise SingularClosure(
            f"loop(s) {[lp.name for lp in mech.loops]}: the inertia A = WᵀHW of the "
            f"independent joints θ_G is singular — {_null_joints(model, A, r.split.G)} "
            f"can move without moving any mass (massless links?)") from None
    return W @ qdd_G + qdd0                                               # step (5), (13)


def forward_dynamics_kkt(mech, q, qd, tau, f_ext=None, split=None, loop_tol=1e-6):
    """An independent reference: the open chain's H q̈ + b = τ + J_Cmᵀ λ with the
    constraint J_Cm q̈ = −J̇_Cm q̇, solved as one KKT system (CRBA + Lagrange multipliers).
    Checks the loops are closed as :func:`forward_dynamics` does."""
    model = mech.model
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    _check_closed(mech, q, loop_tol)
    rows = list((choose_split(mech, q) if split is None else split).rows)
    J = loop_jacobian(mech, q)[rows]
    gamma = -loop_jdot_qdot(mech, q, qd)[rows]
    b = rnea(model, q, qd, np.zeros(model.nv), f_ext)
    K = np.block([[crba(model, q), J.T], [J, np.zeros((len(rows), len(rows)))]])
    what = (f"the KKT matrix [H Jᵀ; J 0] of loop(s) {[lp.name for lp in mech.loops]} "
            f"(H singular on the loops' motions, or dependent rows of J_C)")
    return _solve(K, np.concatenate([tau - b, gamma]), what)[:model.nv]


# ------------------------------------------------------------------------ simulation

def simulate(mech, q0, qd0, t_end, dt, tau=None, independent=None, split=None, tol=1e-12,
             resplit=None, max_cond=10.0):
    """Integrate the closed chain from (q0, q̇0): fourth-order Runge–Kutta on the manifold
    (as ``rbdlearn.simulate``) with θ̇_J = W θ̇_G and θ̈_J from :func:`forward_dynamics`,
    then after every step the drift is removed: ``assemble`` moves θ_S back onto the loops
    (θ_G held) and q̇ ← W θ̇_G. ``tau``: None, a constant N_J-vector or ``tau(t, q, qd)``.
    Returns a ``Trajectory`` of (q, q̇).

    The split is chosen at q0 (``independent`` as in :func:`choose_split`, or a given
    ``split``). No fixed choice of θ_G serves every configuration of most mechanisms (a
    four-bar's crank cannot drive it through the coupler's dead points), so with
    ``resplit`` (default: on unless ``independent`` or ``split`` fixes the choice) the
    split is chosen again, at the current state, whenever cond(J_S) exceeds ``max_cond``
    — or the loops cannot be closed with θ_G held. The state θ̇_J does not change; only
    which joints are independent does, and the next RK4 step integrates the new θ_G.

    ``q0`` must be closed: a loop residual above ``tol`` (the closure every step keeps) or
    the round-off of the model's kinematics at q0, whichever is larger, raises
    :class:`LoopNotClosed` — close it with :func:`assemble` first. (Assembling it here
    would start the motion from a configuration the caller never saw, on whichever branch
    Newton's method reaches.)"""
    model = mech.model
    q, qd = check_state(model, q=q0, qd=qd0)
    t = time_grid(t_end, dt, 1 + model.nq + model.nv, "closed_chains.simulate")
    _check_closed(mech, q, max(tol, _closure_roundoff(mech, q)), "q0", "max(tol, round-off)")
    resplit = independent is None and split is None if resplit is None else resplit
    split = choose_split(mech, q, independent) if split is None else split
    q = assemble(mech, q, split, tol=tol)
    r = reduction(mech, q, qd, split)
    qd = r.qd
    tau_const = np.zeros(model.nv) if tau is None else tau
    tau_of = tau if callable(tau) else (lambda t, q, qd: tau_const)

    def F(t, x):
        # RK4's first stage is the assembled state itself, whose reduction r is at hand
        here = r if x[0] is q and x[1] is qd else None
        qdd = _forward_dynamics(mech, x[0], x[1], tau_of(t, x[0], x[1]), split=split, r=here)
        return np.concatenate([x[1], qdd])

    def close(q_step, qd_step):
        """Assembled (q, Reduction) after a step; a new split if θ_S cannot close the loops."""
        nonlocal split
        try:
            q_closed = assemble(mech, q_step, split, tol=tol)            # position correction
        except LoopNotClosed:
            if not resplit:
                raise
            split = choose_split(mech, q_step)
            q_closed = assemble(mech, q_step, split, tol=tol)
        return q_closed, reduction(mech, q_closed, qd_step, split)       # θ̇_S = H θ̇_G  (11)

    Q, QD = [q], [qd]
    for k in range(len(t) - 1):
        if resplit and split.m and np.linalg.cond(r.JS) > max_cond:
            split = choose_split(mech, q)                 # same θ̇_J, other θ_G
            r = reduction(mech, q, qd, split)
        q, qd = rk4_step(model, F, t[k], (q, qd), t[k + 1] - t[k])    # (RK4-1..5)
        q, r = close(q, qd)
        qd = r.qd
        Q.append(q)
        QD.append(qd)
    return Trajectory(t, np.array(Q), np.array(QD))


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


# ------------------------------------------------------- the human figure of §5 (Fig. 14)

# Segment parameters after Winter (2009), Table 4.1 and Fig. 4.1 (Drillis–Contini), rounded:
# mass as a fraction of body mass, length as a fraction of height, COM and radius of
# gyration about the COM as fractions of the segment length from its proximal joint.
# Upper arm; forearm + hand (length: elbow to wrist, the hand adds 0.108 H); thigh;
# shank + foot (length: knee to ankle).
_LIMBS = {"upper_arm": (0.028, 0.186, 0.436, 0.322), "forearm": (0.022, 0.146, 0.682, 0.468),
          "thigh": (0.100, 0.245, 0.433, 0.323), "shank": (0.061, 0.246, 0.606, 0.416)}
_TRUNK_MASS, _TRUNK, _SHOULDERS, _HIPS, _HAND = 0.578, 0.288, 0.259, 0.191, 0.108


@dataclass(frozen=True, eq=False)
class HumanFigure:
    """A 16-DOF human figure on a floating torso (§5.1): ``model`` (body 1 the torso,
    free joint at the hip centre), ``hands`` {"left"/"right": (body, point in body
    coordinates)}, ``limbs`` {name: (proximal body, distal body)} and the ``height`` and
    ``mass`` it was scaled to."""
    model: Model
    hands: dict
    limbs: dict
    height: float
    mass: float


def human_figure(height=1.75, mass=70.0, spherical=True, gravity=GRAVITY):
    """The human figure of §5.1: a floating torso (free joint) and four limbs of 4 DOF
    each — shoulder and hip a ball joint (``Spherical``; or, with ``spherical=False``,
    three revolute joints about z, y, x through two massless links), elbow and knee a
    revolute joint about the lateral axis. 22 velocities either way; 9 bodies with ball
    joints, 17 with revolute triples (§4.5).

    Torso frame: origin at the hip centre, x to the figure's left, y forward, z up;
    each limb hangs along −z at q = neutral. Masses, lengths, COMs and radii of
    gyration of the limbs from Winter (2009), Table 4.1; the trunk (with head and neck,
    57.8 % of the mass) is a uniform box 0.259 H wide, 0.1 H deep and 0.45 H high from
    the hips (chosen). The hands are points at the middle of the hand, 0.054 H beyond
    the wrist, where loops to a bar attach."""
    H, M = float(height), float(mass)
    if not (H > 0 and M > 0):
        raise RbdlearnError(f"human_figure needs a positive height and mass, got {height!r}, "
                            f"{mass!r}")
    w, d, h = _SHOULDERS * H, 0.1 * H, 0.45 * H
    m_t = _TRUNK_MASS * M
    trunk = mcI(m_t, np.array([0.0, 0.0, h / 2]),
                m_t / 12 * np.diag([d**2 + h**2, w**2 + h**2, w**2 + d**2]))
    parent, joints, Xtree, I = [-1, 0], [None, Free()], [None, np.eye(6)], [None, trunk]
    names, bodies = ["base", "torso_free"], ["ground", "torso"]
    limbs, hands, x_axis = {}, {}, [1.0, 0.0, 0.0]

    def add(p, joint, X, inertia, joint_name, body_name):
        parent.append(p)
        joints.append(joint)
        Xtree.append(X)
        I.append(inertia)
        names.append(joint_name)
        bodies.append(body_name)
        return len(parent) - 1

    for side, sign in (("left", 1.0), ("right", -1.0)):
        for limb, root, upper, lower in (("arm", [sign * w / 2, 0, _TRUNK * H], "upper_arm",
                                          "forearm"),
                                         ("leg", [sign * _HIPS * H / 2, 0, 0], "thigh",
                                          "shank")):
            s, joint = side[0], "shoulder" if limb == "arm" else "hip"
            m1, L1, c1, k1 = _LIMBS[upper]
            m2, L2, c2, k2 = _LIMBS[lower]
            X, p = plux(np.eye(3), root), 1
            if spherical:
                p = add(p, Spherical(), X, segment_inertia(m1 * M, [0.0, 0.0, -L1 * H], c1, k1),
                        f"{s}_{joint}", f"{s}_{upper}")
            else:
                for axis in "zy":
                    p = add(p, Revolute(np.eye(3)["xyz".index(axis)]), X, np.zeros((6, 6)),
                            f"{s}_{joint}_{axis}", f"{s}_{joint}_{axis}_link")
                    X = np.eye(6)
                p = add(p, Revolute(x_axis), X, segment_inertia(m1 * M, [0.0, 0.0, -L1 * H], c1, k1),
                        f"{s}_{joint}_x", f"{s}_{upper}")
            end = add(p, Revolute(x_axis), plux(np.eye(3), [0, 0, -L1 * H]),
                      segment_inertia(m2 * M, [0.0, 0.0, -L2 * H], c2, k2),
                      f"{s}_{'elbow' if limb == 'arm' else 'knee'}", f"{s}_{lower}")
            limbs[f"{s}_{limb}"] = (p, end)
            if limb == "arm":
                hands[side] = (end, np.array([0.0, 0.0, -(L2 + _HAND / 2) * H]))
    model = Model(parent=parent, joints=joints, Xtree=Xtree, I=I, names=names,
                  body_names=bodies, gravity=np.array(gravity))
    return HumanFigure(model, hands, limbs, H, M)


def figure_q(fig, position, R_torso, shoulders_hips=None, bends=None):
    """A configuration of :func:`human_figure` ``fig``: the torso's hip centre at
    ``position`` with orientation ``R_torso`` (torso → world), ``shoulders_hips``
    {limb name ("l_arm", "r_leg", …): rotation matrix of the upper segment relative to
    the torso}, ``bends`` {limb name: elbow / knee angle}; missing entries neutral."""
    model, shoulders_hips, bends = fig.model, shoulders_hips or {}, bends or {}
    for what in (shoulders_hips, bends):
        unknown = set(what) - set(fig.limbs)
        if unknown:
            raise RbdlearnError(f"unknown limb(s) {sorted(unknown)}; limbs: {sorted(fig.limbs)}")
    q = [np.asarray(position, dtype=float), rot_to_quat(np.asarray(R_torso, dtype=float))]
    for limb, (upper, lower) in fig.limbs.items():
        R = np.asarray(shoulders_hips.get(limb, np.eye(3)), dtype=float)
        if isinstance(model.joints[upper], Spherical):
            q.append(rot_to_quat(R))
        else:                                         # R = Rz(a) Ry(b) Rx(c)
            q.append(zyx_angles(R))
        q.append([bends.get(limb, 0.0)])
    return np.concatenate(q)


def figure_skeleton(fig, q):
    """World coordinates of the figure's stick drawing at q (q of the figure's own bodies
    first, as in every mechanism built on it): polylines (k x 3 arrays) — the shoulder
    line, the hip line, the spine with the head, and each limb from its root through the
    elbow / knee to the hand / ankle."""
    model, H = fig.model, fig.height
    X0 = forward_kinematics(model, np.asarray(q, dtype=float)[:model.nq])

    def world(i, p=(0.0, 0.0, 0.0)):
        E, o = plux_parts(X0[i])                      # E rotates world into body coords
        return o + E.T @ np.asarray(p, dtype=float)

    top = world(1, [0, 0, _TRUNK * H])
    lines = [np.array([world(fig.limbs["l_arm"][0]), top, world(fig.limbs["r_arm"][0])]),
             np.array([world(fig.limbs["l_leg"][0]), world(1), world(fig.limbs["r_leg"][0])]),
             np.array([world(1), top, world(1, [0, 0, 0.45 * H])])]
    for limb, (upper, lower) in fig.limbs.items():
        end = (fig.hands["left" if limb[0] == "l" else "right"][1] if limb.endswith("arm")
               else [0.0, 0.0, -_LIMBS["shank"][1] * H])
        lines.append(np.array([world(upper), world(lower), world(lower, end)]))
    return lines


def figure_springs(fig, q_ref, k_arm=120.0, k_leg=80.0):
    """Passive joints collapse; these springs stand in for the muscles that hold a posture.
    Each limb joint is pulled towards its value in ``q_ref``: a ball joint by the couple
    −k φ, φ = log(R_refᵀ R) (the exact gradient of ½ k |φ|², so the springs conserve
    energy), a revolute joint by −k (θ − θ_ref); ``k_arm`` for shoulders and elbows,
    ``k_leg`` for hips and knees [N m/rad]. Returns (tau(t, q, q̇), potential(q)); both
    read only the figure's own coordinates, so they serve every mechanism built on it."""
    model = fig.model
    (q_ref,) = check_state(model, q=np.asarray(q_ref, dtype=float)[:model.nq])
    springs = []                                      # (body, stiffness) of every limb joint
    for limb, (upper, lower) in fig.limbs.items():
        k = k_arm if limb.endswith("arm") else k_leg
        first = upper if isinstance(model.joints[upper], Spherical) else upper - 2
        springs += [(i, k) for i in range(first, lower + 1)]

    def error(i, q):
        qs = q[model.q_slices[i]]
        if isinstance(model.joints[i], Spherical):
            return log_so3(quat_to_rot(q_ref[model.q_slices[i]]).T @ quat_to_rot(qs))
        return qs - q_ref[model.q_slices[i]]

    def tau(t, q, qd):
        out = np.zeros(len(qd))
        for i, k in springs:
            out[model.v_slices[i]] = -k * error(i, q)
        return out

    def potential(q):
        return sum(0.5 * k * float(error(i, q) @ error(i, q)) for i, k in springs)

    return tau, potential


# ---------------------------------------------------------- the swing of §5.2 (Fig. 15)

@dataclass(frozen=True, eq=False)
class Swing:
    """The swing of §5.2 with :func:`human_figure` ``fig`` on it: ``mech`` (loops "board-left",
    "left hand", "right hand", "l thigh", "r thigh") at the assembled configuration ``q``,
    ``bodies`` {"right rod", "board", "left rod": body index}, the board's half-length
    ``half`` and ``start`` {thigh loop: the x of its contact point on the board at q = 0 of
    the slide}."""
    mech: Mechanism
    q: np.ndarray
    bodies: dict
    half: float
    start: dict

    def thigh_x(self, mech, q, name):
        """Where the thigh of loop ``name`` touches the board, along the board [m]."""
        return self.start[name] + q[mech.model.q_slices[mech.loop(name).virtual]][0]


def swing(fig, top=2.0, rod_mass=2.0, board=(3.0, 0.6, 0.25, 0.03), angle=0.6):
    """The swing of §5.2, Fig. 15, with the figure ``fig`` (:func:`human_figure`) seated on it:
    two rods hung from the ground by ball joints at height ``top`` in front of the figure's
    shoulders, a board (mass, length, depth, thickness) welded to the bottom of both rods,
    each hand holding a rod by a ball joint and each thigh on the board by a prismatic
    joint along the board. The figure sits upright (thighs forward, knees bent 90°, forearms
    forward); the board lies along x under the thighs, the rods through the hands. The
    whole swing is turned by ``angle`` about the line through the pivots, at rest.

    The virtual open chain: the figure's tree, then the right rod (ball joint to the
    ground), the board (welded to it) and the left rod (ball joint); the board's weld to
    the left rod, the hands and the thighs are loops — a pseudo-closed chain whose loops
    contain the figure's free joint (§4.2)."""
    mb, length, depth, thick = (float(b) for b in board)
    if not (rod_mass > 0 and min(mb, length, depth, thick) > 0):
        raise RbdlearnError(f"swing needs a positive rod mass and board (mass, length, depth, "
                            f"thickness), got {rod_mass!r}, {board!r}")
    fm, H = fig.model, fig.height
    sit = {"l_leg": rotx(np.pi / 2), "r_leg": rotx(np.pi / 2)}
    bends = {"l_arm": np.pi / 2, "r_arm": np.pi / 2, "l_leg": -np.pi / 2, "r_leg": -np.pi / 2}
    q = figure_q(fig, np.zeros(3), np.eye(3), sit, bends)
    X0 = forward_kinematics(fm, q)

    def world(i, p):                                  # a point of body i, world coordinates
        E, o = plux_parts(X0[i])
        return o + E.T @ p

    hand = {s: world(*fig.hands[s]) for s in ("left", "right")}
    y, seat = hand["left"][1], -0.04 * H              # the rods' plane; the board's top
    if not top > seat + 0.1:
        raise RbdlearnError(f"swing: the pivots (top = {top!r}) must be above the "
                            f"seat ({seat:.2f})")
    L = top - seat
    rod = segment_inertia(rod_mass, [0.0, 0.0, -L], 0.5, 12 ** -0.5, axial=0.01)
    slab = mcI(mb, np.array([0.0, 0.0, -thick / 2]),
               mb / 12 * np.diag([depth**2 + thick**2, length**2 + thick**2,
                                  length**2 + depth**2]))
    xr, xl = hand["right"][0], hand["left"][0]
    extra = [(0, Spherical(), [xr, y, top], rod, "right_pivot", "right_rod"),
             (fm.N + 1, Fixed(), [(xl + xr) / 2 - xr, 0.0, -L], slab, "board_weld", "board"),
             (0, Spherical(), [xl, y, top], rod, "left_pivot", "left_rod")]
    model = fm.replace(parent=fm.parent + [e[0] for e in extra],
                       joints=fm.joints + [e[1] for e in extra],
                       Xtree=fm.Xtree + [plux(np.eye(3), e[2]) for e in extra],
                       I=fm.I + [e[3] for e in extra], names=fm.names + [e[4] for e in extra],
                       body_names=fm.body_names + [e[5] for e in extra])
    right_rod, board_body, left_rod = fm.N + 1, fm.N + 2, fm.N + 3
    q = np.concatenate([q, np.tile(Spherical().neutral(), 2)])
    X0 = forward_kinematics(model, q)

    def at(i, p_world):                               # a world point as a frame on body i
        E, o = plux_parts(X0[i])
        return plux(np.eye(3), E @ (np.asarray(p_world) - o))

    board_centre = np.array([(xl + xr) / 2, y, seat])
    mech, q = add_loop_at(Mechanism(model), q, left_rod, board_body, Fixed(),
                          at(board_body, [xl, y, seat]), "board-left")
    for side, r in (("left", left_rod), ("right", right_rod)):
        mech, q = add_loop_at(mech, q, fig.hands[side][0], r, Spherical(), at(r, hand[side]),
                              f"{side} hand")
    start = {}
    for s in ("l", "r"):
        thigh = fig.limbs[f"{s}_leg"][0]
        contact = np.array([world(thigh, np.zeros(3))[0], y, seat])   # under the thigh
        mech, q = add_loop_at(mech, q, board_body, thigh, Prismatic([1.0, 0.0, 0.0]),
                              at(thigh, contact), f"{s} thigh")
        start[f"{s} thigh"] = contact[0] - board_centre[0]
    # turn everything rigidly about the pivots' axis (x through (0, y, top)): the rods'
    # ball joints and the torso's free joint move, every other joint keeps its value
    m = mech.model
    v = np.zeros(m.nv)
    for r in (left_rod, right_rod):
        v[m.v_slices[r]] = [1.0, 0.0, 0.0]
    v[m.v_slices[1]] = forward_kinematics(m, q)[1] @ np.r_[1.0, 0.0, 0.0,
                                                            np.cross([0.0, y, top], [1, 0, 0])]
    q = integrate_q(m, q, angle * v)
    return Swing(mech, q, {"right rod": right_rod, "board": board_body, "left rod": left_rod},
                 length / 2, start)
