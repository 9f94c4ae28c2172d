"""Loops and cuts (Chapter 5, section 1 "Closed chains by virtual cuts"; seed 004
§2.2–2.3, §3.2).

A closed chain is cut, one joint per loop, into a *virtual open chain*: a tree that the
open-chain algorithms handle. Each cut joint becomes the joint of a *virtual link* — a
massless end link hung from one side of the cut — whose *real* pointer names the body on
the other side (§3.2: :class:`Loop`, :class:`Mechanism`, :func:`add_loop`,
:func:`four_bar`). The loop is closed when the virtual link moves with its real link:

    J_Li θ̇_J = 0,    J_Li = ᵛX₀ (J⁰_real − J⁰_virtual)                        (5)

(6 rows, over all N_J joint velocities, the cut joint's included). Stacked, J_C
(6 N_L x N_J, eq. 6) has m independent rows J_Cm (eq. 7); m independent columns of J_Cm
form J_S and the rest J_G (eq. 9, :func:`choose_split`); N_F = N_J − m (eq. 8), and with

    θ̇_S = H θ̇_G,    H = −J_S⁻¹ J_G                                           (11), (12)

every joint velocity follows from θ̇_G: θ̇_J = W θ̇_G, W the rows of H and of the
identity (eq. 3, Fig. 2); S = ∂θ_A/∂θ_G, the rows of W of the actuated joints (eq. 4).
:func:`reduction` gathers them, with Ḣ θ̇_G (eq. 16, §2.3) from J̇_C q̇
(:func:`loop_jdot_qdot`).

Position level (the book's addition; the paper works with velocities): the loop residual
:func:`loop_residual` is the pose of the real frame in the virtual link's frame, and
:func:`assemble` drives it to zero by Newton steps on θ_S.

The private helpers ``_world_jacobian``, ``_joint_of_velocity`` and ``_solve`` serve the
package's other modules too.
"""

from dataclasses import dataclass, field

import numpy as np

from ..errors import RbdlearnError
from ..joints import Fixed, Revolute
from ..kinematics import (base_subspaces, body_accelerations, body_velocities,
                          forward_kinematics)
from ..model import GRAVITY, Model, check_state, integrate_q, is_body, planar_chain
from ..spatial import cross_motion, inv_X, log_so3, plux, plux_parts

__all__ = ["SingularClosure", "LoopNotClosed", "Loop", "Mechanism", "add_loop", "four_bar",
           "loop_residual", "loop_jacobian", "loop_jdot_qdot", "Split", "choose_split",
           "Reduction", "reduction", "assemble", "FOUR_BAR_JOINTS", "four_bar_sweep"]


class SingularClosure(RbdlearnError):
    """J_S is singular: the dependent joints θ_S cannot follow θ_G at this configuration."""


class LoopNotClosed(RbdlearnError):
    """The loops are not closed: Newton's method could not close them (``assemble``), or
    a configuration given to the dynamics leaves a loop open."""


# ---------------------------------------------------------------- the mechanism (§3.2)

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
    """M⁻¹ b; a singular M raises :class:`.SingularClosure` saying ``what`` it is (not
    numpy's bare LinAlgError; ``what``: a string, or a function that makes it)."""
    try:
        return np.linalg.solve(M, b)
    except np.linalg.LinAlgError:
        what = what() if callable(what) else what
        raise SingularClosure(f"{what} is singular at this configuration") from None


def choose_split(mech, q, independent=None, tol=1e-9):
    """The :class:`Split` at configuration q. m = rank of J_C (singular values above
    ``tol`` σ_max); the m rows of J_Cm and, unless ``independent`` (velocity indices of
    θ_G) is given, the m columns of J_S are chosen by column pivoting, so J_S is as far
    from singular as the greedy choice can make it. Raises :class:`.SingularClosure`
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


# ------------------------------------------------ position closure (the book's addition)

def assemble(mech, q, split=None, independent=None, tol=1e-12, max_iter=50):
    """Close the loops: Newton steps on θ_S with θ_G held, q ← q ⊕ δ with
    δ_S = −J_C,S⁺ e (e = ``loop_residual``, J_C,S its columns θ_S; least squares, so
    rows that depend on others do no harm). Returns the closed q; raises
    :class:`.LoopNotClosed` after ``max_iter`` steps."""
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


# -------------------------------------------- the four-bar over a turn of its crank (§2.2)

FOUR_BAR_JOINTS = ("crank", "coupler", "rocker", "cut")
"""The four-bar's joint velocities θ̇_J in order: three real joints and the cut joint."""


def four_bar_sweep(mech, angles, guess=(0.8, -2.6, 1.8)):
    """The four-bar assembled at each crank angle (crank = θ_G while assembling; each
    assembly starts from the previous one, so the linkage stays on one branch) and
    cond(J_S) for every choice of the single independent joint θ_G, and for the
    pivoted choice of ``choose_split``. Returns a dict of arrays: ``q`` (n, 4),
    ``cond`` (n, 4: column k for θ_G = joint k), ``cond_pivoted`` (n), ``G_pivoted`` (n)."""
    crank_split = choose_split(mech, assemble(mech, [angles[0], *guess], independent=[0]),
                               independent=[0])
    qs, conds, cond_p, G_p = [], [], [], []
    q = np.array([angles[0], *guess])
    for a in angles:
        q = assemble(mech, np.r_[a, q[1:]], crank_split)
        JCm = loop_jacobian(mech, q)[list(crank_split.rows)]
        conds.append([np.linalg.cond(np.delete(JCm, k, axis=1)) for k in range(4)])
        split = choose_split(mech, q)
        cond_p.append(np.linalg.cond(JCm[:, list(split.S)]))
        G_p.append(split.G[0])
        qs.append(q)
    return {"q": np.array(qs), "cond": np.array(conds), "cond_pivoted": np.array(cond_p),
            "G_pivoted": np.array(G_p)}
