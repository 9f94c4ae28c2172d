"""Dynamics of closed chains (Chapter 5, section 2 "Dynamics of closed chains"; seed
004 §2.1, §2.3–2.5).

Everything is computed on the virtual open chain with the tree's RNEA and mapped through
W (eq. 3, from :func:`~rbdlearn.closed_chains.loops.reduction`):

- inverse dynamics (§2.1): τ_O by RNEA with θ̈_J = W θ̈_G + (0; Ḣθ̇_G) (eq. 13),
  τ_G = Wᵀ τ_O (eq. 1), and the actuators' τ_A from Sᵀ τ_A = τ_G (eq. 2; S eq. 4):
  :func:`generalized_forces`, :func:`actuator_forces`, :func:`inverse_dynamics`;
- forward dynamics (§2.4): A θ̈_G + b = τ_G (eq. 17) built column by column by the
  unit-vector method (eq. 18), θ̈_G = A⁻¹(τ_G − b) (eq. 19), θ̈_S from eq. 13:
  :func:`forward_dynamics`; a floating base (§2.5) is one free joint of the tree. The
  reference :func:`forward_dynamics_kkt` (CRBA and Lagrange multipliers) is the book's;
- :func:`simulate`: RK4 on the manifold with the loops closed again after every step
  (the book's addition).
"""

import numpy as np

from ..crb import crba
from ..errors import RbdlearnError
from ..integrate import Trajectory, joint_forces, rk4_step, time_grid
from ..kinematics import forward_kinematics
from ..model import check_state
from ..inverse_dynamics import rnea
from ..spatial import plux_parts
from .loops import (LoopNotClosed, SingularClosure, _joint_of_velocity, _solve, assemble,
                    choose_split, loop_jacobian, loop_jdot_qdot, loop_residual, reduction)

__all__ = ["generalized_forces", "actuator_forces", "inverse_dynamics", "forward_dynamics",
           "forward_dynamics_kkt", "simulate"]


def _qdd_at_zero(r):
    """θ̈_J when θ̈_G = 0: θ̈_S = Ḣ θ̇_G (eq. 13), θ̈_G = 0."""
    qdd = np.zeros(r.W.shape[0])
    qdd[list(r.split.S)] = r.Hd_qd
    return qdd


def _null_joints(model, M, indices):
    """Names of the joint velocities ``indices`` that M's near-null vector moves."""
    v = np.linalg.svd(M)[2][-1]
    return [_joint_of_velocity(model, indices[k]) for k in np.flatnonzero(
        np.abs(v) > 0.1 * np.abs(v).max())]


# ------------------------------------------------------------ inverse dynamics (§2.1)

def generalized_forces(mech, q, qd, qdd_G, f_ext=None, split=None, loop_tol=1e-6):
    """τ_G = Wᵀ τ_O (eq. 1): τ_O by the open chain's RNEA with θ̈_J = W θ̈_G + (0; Ḣθ̇_G)
    (eq. 13). Raises :class:`.LoopNotClosed` if a loop's residual at q exceeds ``loop_tol``
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
    Raises :class:`.LoopNotClosed` if a loop's residual at q exceeds ``loop_tol`` (as
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
    Only θ̇_G = q̇[G] is read from q̇. Raises :class:`.LoopNotClosed` if a loop's residual
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

def simulate(mech, q0, qd0, t_end, dt, *, tau=None, independent=None, split=None,
             tol=1e-12, resplit=None, max_cond=10.0):
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
    :class:`.LoopNotClosed` — close it with :func:`assemble` first. (Assembling it here
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
    tau_of = joint_forces(model, tau)

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

