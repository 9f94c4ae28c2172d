"""Simulation: integrating forward dynamics in time (Chapter 2), and the conserved
quantities used to check a simulation — total energy and total spatial momentum.

The state is ``(q, q̇)``. The velocity ``q̇`` lives in a vector space, but ``q`` lives on
the configuration manifold: a spherical or free joint carries a unit quaternion, and
its velocity is the body's angular velocity (or spatial velocity) in its own
coordinates, not ``d/dt`` of the quaternion. A step therefore never adds to ``q``: it
moves along the manifold with ``q ⊕ δ = integrate_q(model, q, δ)``, the
configuration reached by moving with the constant velocity ``δ`` for unit time, so
quaternions stay unit. ``(q, q̇) ⊕ (δ, ε) = (q ⊕ δ, q̇ + ε)`` moves the whole state.

Each integrator works with the state derivative ``F(t, x) = (q̇, q̈)``, where
``q̈ = forward(model, q, q̇, τ(t, q, q̇))`` (the articulated-body algorithm by default).

Semi-implicit Euler, first order:
    q̇⁺ = q̇ + h q̈(t, q, q̇),   q⁺ = q ⊕ h q̇⁺                                    (SIE)
It is symplectic only while the mass matrix is constant (a single pendulum, a point
mass): it updates the velocity q̇, not the momentum H(q) q̇, so on a chain its energy
error grows with time (chapter 2, §3, measures both cases).

Fourth-order Runge–Kutta on the manifold. Classical RK4 with stage points ``x ⊕ h k``
and the increment ``h (k1 + 2 k2 + 2 k3 + k4)/6`` applied at once is only second
order when rotations are involved: the stage velocities are body velocities at
different points of the manifold, and adding them as if they lived in one tangent
space ignores that rotations do not commute (Munthe-Kaas' dexp⁻¹ correction). We use
instead the commutator-free fourth-order Lie-group method of Celledoni, Marthinsen and
Owren (2003), which needs nothing but ``⊕``. With ``F_k = h F(t_k, x_k)``:
    x1 = x,                 t1 = t                                              (RK4-1)
    x2 = x  ⊕ ½ F1,         t2 = t + h/2                                        (RK4-2)
    x3 = x  ⊕ ½ F2,         t3 = t + h/2                                        (RK4-3)
    x4 = x2 ⊕ (F3 − ½ F1),  t4 = t + h                                          (RK4-4)
    x⁺ = (x ⊕ (¼F1 + ⅙F2 + ⅙F3 − 1/12 F4)) ⊕ (−1/12 F1 + ⅙F2 + ⅙F3 + ¼F4)       (RK4-5)
On joints whose configuration is a plain vector (revolute, prismatic) ``⊕`` is ``+``
and these lines are exactly classical RK4: x4 = x + F3 and
x⁺ = x + (F1 + 2F2 + 2F3 + F4)/6. The velocity half of the state is a plain vector, so
q̇⁺ is always the classical RK4 combination.

The variational integrator: second order, and symplectic (without joint torques or
external forces; up to the tolerance of its solver) on every tree of revolute,
prismatic, spherical and free joints (Marsden & West 2001; on Lie groups, Bou-Rabee &
Marsden 2009). It discretizes the action, not the equations of motion. With
L(q, v) = ½ vᵀ H(q) v − V(q), one step moves with a constant body velocity ξ:
    q_{k+1} = q_k ⊕ h ξ                                                       (VI-1)
    L_d(q_k, q_{k+1}) = (h/2) [L(q_k, ξ) + L(q_{k+1}, ξ)]                      (VI-2)
Varying q_k → q_k ⊕ ε η_k varies ξ joint by joint through the Jacobians of each
joint's group (J_r = 1 on R; SO(3)'s or SE(3)'s right Jacobian, J_l(φ) = J_r(−φ)):
    δ(h ξ) = J_r⁻¹(h ξ) η_{k+1} − J_l⁻¹(h ξ) η_k                              (VI-3)
D_qL = ∂T/∂η − g(q) is the derivative of L along q ⊕ ε η at fixed v, g = rnea(q, 0, 0):
    ∂T/∂η_j = −S_jᵀ (v_λ(j) ×* h^C_j),   (H v)_j = S_jᵀ h^C_j                 (VI-4)
v_λ(j) the parent's velocity and h^C_j the subtree's momentum, in body-j coordinates
(:func:`kinetic_terms`). Stationary discrete action with the forces τ_k at the nodes
(discrete Lagrange–d'Alembert, trapezoidal: (h/2) τ at each end of a step, evaluated
there) gives the
discrete Legendre transforms (H_k = H(q_k); p is the momentum conjugate to the joint
velocities, which on a ball or free joint are body velocities):
    p_k     = ½ J_l⁻ᵀ(hξ) [H_k + H_{k+1}] ξ − (h/2) D_qL(q_k, ξ) − (h/2) τ_k          (VI-5)
    p_{k+1} = ½ J_r⁻ᵀ(hξ) [H_k + H_{k+1}] ξ + (h/2) D_qL(q_{k+1}, ξ) + (h/2) τ_{k+1}  (VI-6)
A step solves (VI-5) for ξ (quasi-Newton), then (VI-1) and (VI-6). p_0 = H(q_0) q̇_0 and
the trajectory reports q̇_k = H(q_k)⁻¹ p_k. The forces of the node k+1 are evaluated once,
at q_{k+1} and the velocity predicted with τ_k, and serve both steps that meet there
(with τ_k in (VI-6) instead the method would be first order for a time-varying τ).
"""

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .errors import RbdlearnError
from .articulated import SingularArticulatedInertia, aba
from .crb import _singular_H, crba
from .joints import Fixed, Free, Prismatic, Revolute, Spherical
from .kinematics import body_pose, body_velocities, forward_kinematics, joint_transforms
from .model import batch_shape, check_state, integrate_q
from .inverse_dynamics import rnea
from .spatial import cross_force, mtv, mv, skew, unskew

__all__ = ["Trajectory", "simulate", "time_grid", "joint_forces", "rk4_step", "energy", "momentum",
           "kinetic_terms", "right_jacobian", "MAX_TRAJECTORY_BYTES", "check_run_size",
           "step_guard"]

METHODS = ("rk4", "semi_implicit_euler", "variational")

MAX_TRAJECTORY_BYTES = 4 * 2**30
"""The most memory (4 GiB) the stored states of one simulation may take: every
``simulate`` of the package refuses, before it starts, a run that would need more (see
:func:`check_run_size`). Raise it to run longer."""


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A simulated motion: times ``t`` (n,), configurations ``q`` (n, nq) and velocities
    ``qd`` (n, nv); row k is the state at time ``t[k]``. The arrays are read-only.

    The motions of a batch of initial states share the times: ``q`` (n, K, nq) and
    ``qd`` (n, K, nv) (time first, then the batch axes, then the vector), so ``q[k]`` is
    still every state at time ``t[k]`` and ``q[:, j]`` is the motion from state j."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray

    def __post_init__(self):
        arrays = {k: np.array(getattr(self, k), dtype=float) for k in ("t", "q", "qd")}
        n = arrays["t"].shape[0] if arrays["t"].ndim == 1 else -1
        q, qd = arrays["q"], arrays["qd"]
        if n < 0 or q.ndim < 2 or q.ndim != qd.ndim or q.shape[0] != n or \
                qd.shape[0] != n or q.shape[1:-1] != qd.shape[1:-1]:
            raise RbdlearnError(f"Trajectory needs t (n,), q (n, nq), qd (n, nv) (or, for a "
                                f"batch, q (n, ..., nq), qd (n, ..., nv)); got shapes "
                                f"{arrays['t'].shape}, {arrays['q'].shape}, {arrays['qd'].shape}")
        for k, a in arrays.items():
            a.setflags(write=False)
            object.__setattr__(self, k, a)


def _as_function(value):
    """``value`` as a function of (t, q, qd): None → None, a callable as is, else a constant."""
    if value is None or callable(value):
        return value
    return lambda t, q, qd: value


def joint_forces(model, tau):
    """The ``tau`` argument of every ``simulate`` of the package as a checked function
    τ(t, q, q̇): None means zero, an array is constant, a function is checked at each call."""
    if tau is None:
        zero = np.zeros(model.nv)
        return lambda t, q, qd: zero
    if not callable(tau):
        (tau,) = check_state(model, batch=True, tau=tau)
        return lambda t, q, qd: tau

    def checked(t, q, qd):
        try:
            return check_state(model, batch=np.ndim(q) > 1, tau=tau(t, q, qd))[0]
        except ValueError as e:
            raise RbdlearnError(f"tau(t, q, qd) at t = {t:.6g}: {e}") from None
    return checked


def _positive_time(x, name, allow_zero):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise RbdlearnError(f"{name} must be a real number, got {x!r}") from None
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        need = ">= 0" if allow_zero else "> 0"
        raise RbdlearnError(f"{name} must be finite and {need}, got {x!r}")
    return x


def simulate(model, q0, qd0, t_end, dt, *, tau=None, f_ext=None, method="rk4", forward=aba):
    """Integrate the motion of ``model`` from ``(q0, qd0)`` at time 0 to ``t_end``.

    ``tau``: joint forces — None (zero), a constant nv-array, or a function
    ``tau(t, q, qd)`` returning one. ``f_ext``: external body forces as in :func:`aba`,
    constant or a function ``f_ext(t, q, qd)``. ``method``: ``"rk4"`` (RK4-1..5 in the
    module docstring), ``"semi_implicit_euler"`` (SIE) or ``"variational"`` (VI-1..6;
    not for :class:`.SphericalZYX` joints). ``forward(model, q, qd, tau, f_ext=None)``
    computes q̈ (the variational integrator does not use it). Steps have length ``dt``;
    the last one is shortened so the trajectory ends exactly at ``t_end``. Returns a
    :class:`Trajectory` that includes the initial state.

    A batch of initial states, ``q0`` (K, nq) and ``qd0`` (K, nv) (any leading axes that
    broadcast together), is integrated in lock step by RK4 or semi-implicit Euler, each
    step computing every state's q̈ in one ``forward`` call; ``tau`` and ``f_ext``
    (functions) then receive and return batches. The :class:`Trajectory` has the time
    axis first: q (n, K, nq). The variational method takes one initial state.

    A run whose stored states would take more than :data:`.MAX_TRAJECTORY_BYTES` is refused
    before it starts; a motion that overflows, or a singular mass matrix, ends the run with
    an error that says in which step (:func:`.step_guard`).
    """
    if method not in METHODS:
        raise RbdlearnError(f"method must be one of {METHODS}, got {method!r}")
    if not callable(forward):
        raise RbdlearnError(f"forward must be a function (model, q, qd, tau), got {forward!r}")
    _steps(t_end, dt)                                      # check the times first
    try:
        q, qd = check_state(model, batch=True, q=q0, qd=qd0)
    except ValueError as e:
        raise RbdlearnError(f"initial state (q0, qd0): {e}") from None
    batch = batch_shape(q, qd)
    q, qd = np.broadcast_to(q, batch + q.shape[-1:]), np.broadcast_to(qd, batch + qd.shape[-1:])
    tau_of = joint_forces(model, tau)
    f_ext_of = _as_function(f_ext)
    nv = model.nv

    def F(t, x):
        """The state derivative (q̇, q̈) as one 2nv-vector."""
        q, qd = x
        kwargs = {} if f_ext_of is None else {"f_ext": f_ext_of(t, q, qd)}
        qdd = np.asarray(forward(model, q, qd, tau_of(t, q, qd), **kwargs), dtype=float)
        if qdd.shape != batch + (nv,) or not np.isfinite(qdd).all():
            raise RbdlearnError(f"forward dynamics at t = {t:.6g} returned {qdd!r}, "
                                f"expected {nv} finite accelerations (at |q̇| = "
                                f"{np.linalg.norm(qd):.3g}; if the motion diverged, try a "
                                f"smaller dt)")
        return np.concatenate([qd, qdd], axis=-1)

    def semi_implicit_euler(t, x, h):
        qd_next = x[1] + h * F(t, x)[..., nv:]                             # (SIE)
        return integrate_q(model, x[0], h * qd_next), qd_next

    def rk4(t, x, h):
        return rk4_step(model, F, t, x, h)

    t = time_grid(t_end, dt, 1 + math.prod(batch) * (model.nq + nv), "simulate")
    if method == "variational":
        if forward is not aba:
            raise RbdlearnError("method='variational' does not use forward dynamics: it "
                                "steps the discrete Euler–Lagrange equations (VI-5, VI-6); "
                                "leave forward at its default")
        if batch:
            raise RbdlearnError(f"method='variational' takes one initial state, got a batch "
                                f"of shape {batch}: simulate each state on its own, or use "
                                f"method='rk4' for the batch")
        return _simulate_variational(model, q, qd, t, tau_of, f_ext_of)
    step = rk4 if method == "rk4" else semi_implicit_euler
    Q, QD = np.empty((len(t),) + batch + (model.nq,)), np.empty((len(t),) + batch + (nv,))
    x = (q, qd)
    Q[0], QD[0] = x
    for k in range(len(t) - 1):
        with step_guard(model, t[k], t[k + 1], x[1]):
            x = step(t[k], x, t[k + 1] - t[k])
        Q[k + 1], QD[k + 1] = x
    return Trajectory(t, Q, QD)


@contextmanager
def step_guard(model, t0, t1, qd, invalid=False, step="dt"):
    """Around one step of a simulation of ``model`` from time ``t0`` to ``t1`` (``qd``: the
    velocity before it), for every ``simulate`` of the package: an overflow (and, with
    ``invalid``, a NaN) is a diverged motion, a ValueError that says when; a singular
    mass matrix (:class:`~rbdlearn.articulated.SingularArticulatedInertia`, from the ABA or from
    ``_regular()``) is reported with the step's time and the model."""
    try:
        with np.errstate(over="raise", invalid="raise" if invalid else None):
            yield
    except (FloatingPointError, OverflowError):
        raise RbdlearnError(
            f"simulate diverged between t = {t0:.6g} and {t1:.6g}: the state overflowed "
            f"(|q̇| = {np.linalg.norm(qd):.3g} before the step); try a smaller {step}, or "
            f"check the torques and forces for energy fed in") from None
    except SingularArticulatedInertia as err:
        raise SingularArticulatedInertia(
            f"simulate: in the step from t = {t0:.6g} to {t1:.6g}, the mass matrix H(q) of "
            f"{model!r} is singular: {err}") from None


def _regular(model, H):
    """``H``, or :class:`~rbdlearn.articulated.SingularArticulatedInertia` naming the joint when
    Cholesky refuses it (numpy's inverse and solve would raise a bare LinAlgError, or
    return garbage for an H singular to round-off)."""
    try:
        np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        raise _singular_H(model, H) from None
    return H


def check_run_size(n_steps, numbers_per_state, what, how=""):
    """Refuse, before it starts, a run of ``n_steps`` steps (``how``: "from t = 0 to … by
    dt = …") whose n_steps + 1 stored states of ``numbers_per_state`` floats would take
    more than :data:`.MAX_TRAJECTORY_BYTES`: a ValueError stating the steps and the memory."""
    need = (n_steps + 1) * numbers_per_state * 8
    if need > MAX_TRAJECTORY_BYTES:
        raise RbdlearnError(
            f"{what}: {n_steps:.4g} steps{how} would store {n_steps + 1:.4g} states of "
            f"{numbers_per_state} numbers, {need / 2**30:.4g} GiB, more than the "
            f"{MAX_TRAJECTORY_BYTES / 2**30:g} GiB of integrate.MAX_TRAJECTORY_BYTES; take "
            f"longer steps or a shorter time (or raise the limit)")


def _simulate_variational(model, q, qd, t, tau_of, f_ext_of):
    """The variational integrator (VI-1…6) on the time grid ``t``. At each node k the
    generalized force τ_k = τ(t_k, q_k, q̇_k) (plus ``f_ext`` mapped to the joints) is
    evaluated once and used by both steps that meet there; at the new node q̇ is first
    predicted with τ_{k−1}, one fixed-point step of ``p = P + (h/2) τ(q̇ = H⁻¹p)``."""
    _check_variational(model)
    zero = np.zeros(model.nv)

    def force(tk, qk, qdk, g):
        """τ_k plus the joint forces of f_ext: g(q) − rnea(q, 0, 0, f_ext) = Σ Jᵀ f."""
        tau = tau_of(tk, qk, qdk)
        if f_ext_of is None:
            return tau
        return tau + g - rnea(model, qk, zero, zero, f_ext_of(tk, qk, qdk))

    Q, QD = np.empty((len(t), model.nq)), np.empty((len(t), model.nv))
    Q[0], QD[0] = q, qd
    H, g = crba(model, q), rnea(model, q, zero, zero)
    p, tau = H @ qd, force(t[0], q, qd, g)                            # p_0 = H(q_0) q̇_0
    xi = qd                                      # first guess of ξ_0 ≈ q̇(h/2)
    for k in range(len(t) - 1):
        h = t[k + 1] - t[k]
        with step_guard(model, t[k], t[k + 1], QD[k], invalid=True):
            if k == 0:
                _regular(model, H)                                    # H(q_0), inverted next
            q, xi, P, g = _variational_step(model, q, p, h, tau, H, g, t[k], xi)
            H = _regular(model, crba(model, q))
            qd_predicted = np.linalg.solve(H, P + h / 2 * tau)                # with τ_k
            tau = force(t[k + 1], q, qd_predicted, g)
            p = P + h / 2 * tau                                                   # (VI-6)
            qd, qd_last = np.linalg.solve(H, p), qd             # q̇_{k+1} = H⁻¹ p_{k+1}
            xi = xi + (qd - qd_last)             # next guess: ξ_{k+1} ≈ ξ_k + h q̈
        Q[k + 1], QD[k + 1] = q, qd
    return Trajectory(t, Q, QD)


def _steps(t_end, dt):
    """``(t_end, dt, number of steps)``, the times checked; the count is inf when
    t_end / dt overflows."""
    t_end = _positive_time(t_end, "t_end", allow_zero=True)
    dt = _positive_time(dt, "dt", allow_zero=False)
    ratio = t_end / dt
    return t_end, dt, math.ceil(ratio * (1 - 1e-12)) if math.isfinite(ratio) else math.inf


def time_grid(t_end, dt, numbers_per_state=1, what="time_grid"):
    """Times 0, dt, 2 dt, … up to ``t_end``, the last step shortened to end exactly there
    (``t_end``/``dt`` up to round-off gives no sliver step). Checks both, and refuses a
    grid for a run whose states (``numbers_per_state`` floats each, the time included)
    would exceed :data:`.MAX_TRAJECTORY_BYTES` (:func:`check_run_size`)."""
    t_end, dt, n_steps = _steps(t_end, dt)
    check_run_size(n_steps, numbers_per_state, what, f" from t = 0 to {t_end:g} by dt = {dt:g}")
    t = np.minimum(dt * np.arange(n_steps + 1), t_end)
    t[-1] = t_end
    return t


def _move(model, x, d):
    """x ⊕ d: q moves along the manifold, q̇ by plain addition."""
    return integrate_q(model, x[0], d[..., :model.nv]), x[1] + d[..., model.nv:]


def rk4_step(model, F, t, x, h):
    """One step (RK4-1…5) of length ``h`` from the state ``x = (q, q̇)`` at time ``t``;
    ``F(t, x)`` is the state derivative (q̇, q̈) as one 2nv-vector."""
    F1 = h * F(t, x)                                                       # (RK4-1)
    x2 = _move(model, x, F1 / 2)                                           # (RK4-2)
    F2 = h * F(t + h / 2, x2)
    x3 = _move(model, x, F2 / 2)                                           # (RK4-3)
    F3 = h * F(t + h / 2, x3)
    x4 = _move(model, x2, F3 - F1 / 2)                                     # (RK4-4)
    F4 = h * F(t + h, x4)
    return _move(model, _move(model, x, F1 / 4 + (F2 + F3) / 6 - F4 / 12),    # (RK4-5)
                 -F1 / 12 + (F2 + F3) / 6 + F4 / 4)


def energy(model, q, qd):
    """Total mechanical energy: kinetic ``½ Σ v_iᵀ I_i v_i`` plus the potential of the
    uniform gravity field ``g`` (the linear part of ``model.gravity``),
    ``−Σ m_i g·c_i`` with ``c_i`` the centre of mass of body i in base coordinates.
    A float for one state; for a batch of states, ``q`` (..., nq) and ``qd`` (..., nv)
    (a stored trajectory, say), one call gives the energies (...)."""
    g = np.asarray(model.gravity, dtype=float)
    if np.any(g[:3] != 0):
        raise RbdlearnError(f"energy needs a uniform gravity field: model.gravity {g} has a "
                            f"non-zero angular part")
    q, qd = check_state(model, batch=True, q=q, qd=qd)
    X0 = forward_kinematics(model, q)                  # stacked (N+1, ..., 6, 6)
    v = body_velocities(model, q, qd)                  # stacked (N+1, ..., 6)
    kinetic = potential = 0.0
    for i in range(1, model.N + 1):
        I = model.I[i]
        kinetic += 0.5 * np.sum(v[i] * mv(I, v[i]), axis=-1)
        R, p = body_pose(X0[i])
        m, mc = I[5, 5], unskew(I[:3, 3:])          # mass and first moment m·c (body coords)
        potential -= (m * p + mv(R, mc)) @ g[3:]     # m c_i in base coordinates
    total = kinetic + potential
    return float(total) if np.ndim(total) == 0 else total


def momentum(model, q, qd):
    """Total spatial momentum of all bodies in base coordinates, [angular about the base
    origin; linear]: ``Σ (ⁱX₀)ᵀ I_i v_i`` (``(ⁱX₀)ᵀ`` carries a force, or momentum,
    from body-i to base coordinates). A 6-vector for one state; (..., 6) for a batch
    of states, ``q`` (..., nq) and ``qd`` (..., nv)."""
    q, qd = check_state(model, batch=True, q=q, qd=qd)
    X0 = forward_kinematics(model, q)
    v = body_velocities(model, q, qd)
    h = np.zeros(6)
    for i in range(1, model.N + 1):
        h = h + mtv(X0[i], mv(model.I[i], v[i]))
    return h


# ------------------------------------------------------------------ variational integrator

def _coefficient(th, series, closed):
    """A coefficient of θ: its Taylor ``series`` (coefficients of θ⁰, θ², θ⁴, θ⁶) below
    θ = 0.1, where the closed form loses digits to cancellation, else ``closed(θ)``."""
    if th < 0.1:
        t2 = th * th
        return series[0] + t2 * (series[1] + t2 * (series[2] + t2 * series[3]))
    return closed(th)


_I3 = np.eye(3)
_A = ((1 / 2, -1 / 24, 1 / 720, -1 / 40320), lambda t: (1 - math.cos(t)) / t**2)
_B = ((1 / 6, -1 / 120, 1 / 5040, -1 / 362880), lambda t: (t - math.sin(t)) / t**3)
_B_INV = ((1 / 12, 1 / 720, 1 / 30240, 1 / 1209600),
          lambda t: 1 / t**2 - 1 / (2 * t * math.tan(t / 2)))
_C2 = ((1 / 24, -1 / 720, 1 / 40320, -1 / 3628800),
       lambda t: (t**2 + 2 * math.cos(t) - 2) / (2 * t**4))
_C3 = ((1 / 120, -1 / 2520, 1 / 120960, -1 / 9979200),
       lambda t: (2 * t - 3 * math.sin(t) + t * math.cos(t)) / (2 * t**5))


def _so3_right_jacobian(w, inverse=False):
    """SO(3): ``J_r(w) = 1 − (1 − cos θ)/θ² w× + (θ − sin θ)/θ³ (w×)²`` and its inverse
    ``J_r⁻¹(w) = 1 + ½ w× + (1/θ² − cot(θ/2)/(2θ)) (w×)²`` (θ = |w| < 2π)."""
    th, W = math.sqrt(float(w @ w)), skew(w)
    if inverse:
        return _I3 + W / 2 + _coefficient(th, *_B_INV) * (W @ W)
    return _I3 - _coefficient(th, *_A) * W + _coefficient(th, *_B) * (W @ W)


def _se3_Q_left(w, u):
    """The lower-left block ``Q_l(w, u)`` of SE(3)'s left Jacobian in [angular; linear]
    order, ``Σ_{n,m} (w×)ⁿ (u×) (w×)ᵐ / (n + m + 2)!`` in closed form."""
    th, W, U = math.sqrt(float(w @ w)), skew(w), skew(u)
    c1, c2, c3 = (_coefficient(th, *c) for c in (_B, _C2, _C3))
    WU, UW, WUW = W @ U, U @ W, W @ U @ W
    return (U / 2 + c1 * (WU + UW + WUW) + c2 * (W @ WU + UW @ W - 3 * WUW)
            + c3 * (WUW @ W + W @ WUW))


def right_jacobian(joint, phi, inverse=False):
    """The right Jacobian ``J_r(φ)`` of a joint's configuration group (or its inverse):
    ``(q ⊕ φ) ⊕ ε η = q ⊕ (φ + ε J_r⁻¹(φ) η) + O(ε²)`` for the joint's ``integrate``
    (VI-3). It is ``Σₙ (−ad_φ)ⁿ/(n + 1)!`` with ``ad_φ`` the motion cross product
    ``(Sφ)×`` restricted to the joint's subspace: 1 on a revolute or prismatic joint
    (ad = 0), SO(3)'s J_r on a :class:`.Spherical` joint, and on a :class:`.Free` joint
    ``[[J_r(w), 0], [Q_r(w, u), J_r(w)]]`` with ``Q_r(w, u) = Q_l(−w, −u)``. The left
    Jacobian is ``J_l(φ) = J_r(−φ)``."""
    phi = np.asarray(phi, dtype=float)
    if isinstance(joint, Spherical):
        return _so3_right_jacobian(phi, inverse)
    if isinstance(joint, Free):
        w, u = phi[:3], phi[3:]
        J = _so3_right_jacobian(w, inverse)
        Q = _se3_Q_left(-w, -u)
        return np.block([[J, np.zeros((3, 3))], [-J @ Q @ J if inverse else Q, J]])
    if isinstance(joint, (Revolute, Prismatic, Fixed)):
        return np.eye(joint.nv)
    raise RbdlearnError(f"right_jacobian: no Lie-group Jacobian for a "
                        f"{type(joint).__name__} joint (its S depends on q)")


def _jacobian_inv_T(model, phi, x, left):
    """``J⁻ᵀ(φ) x`` joint by joint (block diagonal): ``J_l⁻ᵀ`` if ``left`` else ``J_r⁻ᵀ``."""
    y = x.copy()
    for i in model.manifold_bodies:
        s = model.v_slices[i]
        y[s] = right_jacobian(model.joints[i], -phi[s] if left else phi[s], True).T @ x[s]
    return y


def _check_variational(model):
    """The variational step needs joints whose S is constant (the Lie-group joints)."""
    for i in range(1, model.N + 1):
        if not isinstance(model.joints[i], (Revolute, Prismatic, Spherical, Free, Fixed)):
            raise RbdlearnError(
                f"method='variational' does not support joint '{model.names[i]}' "
                f"({type(model.joints[i]).__name__}): its motion subspace S depends on q, "
                f"which (VI-4) leaves out; use Spherical (a quaternion) instead")


def kinetic_terms(model, q, qd):
    """``(H(q) q̇, ∂T/∂η)``: the momentum conjugate to the joint velocities and the
    derivative of the kinetic energy ``T = ½ q̇ᵀ H(q) q̇`` when joint j moves by
    ``q ⊕ ε η`` at fixed q̇ (VI-4), in one outward and one inward pass:

        v_λ(j) = ʲX_λ v_λ,  v_j = v_λ(j) + S_j q̇_j,  h_j = I_j v_j       (outward)
        h_λ += ʲX_λᵀ h_j  (h_j becomes the subtree's momentum h^C_j)     (inward)
        (H q̇)_j = S_jᵀ h^C_j,   ∂T/∂η_j = −S_jᵀ (v_λ(j) ×* h^C_j)

    Only for joints whose S is constant (not :class:`.SphericalZYX`)."""
    _check_variational(model)
    q, qd = check_state(model, q=q, qd=qd)
    return _kinetic_terms(model, _joint_frames(model, q), qd)


def _joint_frames(model, q):
    """``(Xup, S)`` at q, the part of (VI-4) that does not depend on q̇."""
    return joint_transforms(model, q), [None] + [model.joints[i].S(q[model.q_slices[i]])
                                                 for i in range(1, model.N + 1)]


def _kinetic_terms(model, frames, qd):
    """:func:`kinetic_terms` with ``frames = _joint_frames(model, q)`` given."""
    (Xup, S), N, parent = frames, model.N, model.parent
    v, v_parent, h = [np.zeros(6)] + [None] * N, [None] * (N + 1), [None] * (N + 1)
    for i in range(1, N + 1):
        v_parent[i] = mv(Xup[i], v[parent[i]])               # v_λ(i) in body-i coordinates
        v[i] = v_parent[i] + mv(S[i], qd[model.v_slices[i]])
        h[i] = mv(model.I[i], v[i])
    Hqd, dT = np.zeros(model.nv), np.zeros(model.nv)
    for i in range(N, 0, -1):
        Hqd[model.v_slices[i]] = mtv(S[i], h[i])
        dT[model.v_slices[i]] = -mtv(S[i], cross_force(v_parent[i], h[i]))      # (VI-4)
        if parent[i] > 0:
            h[parent[i]] = h[parent[i]] + mtv(Xup[i], h[i])
    return Hqd, dT


def _variational_step(model, q, p, h, force, H, g, t, xi, max_iter=50, tol=1e-13):
    """One step (VI-5, VI-6) of length ``h`` from the node ``(q_k, p_k)`` at time ``t``,
    given there the generalized force ``force`` (τ_k, gravity excluded), ``H = H(q_k)``,
    the gravity torques ``g = g(q_k)`` and a first guess ``xi`` of ξ. Solves (VI-5)
    for ξ by a quasi-Newton iteration (Broyden's, from the Jacobian H(q_k), which is
    exact up to O(h)) to a correction below ``tol·|ξ|``. Returns ``q_{k+1}``, ξ, ``P``
    (``p_{k+1} = P + (h/2) τ_{k+1}``) and ``g(q_{k+1})``."""
    B = np.linalg.inv(H)                         # inverse Jacobian, updated by Broyden
    target = p + h / 2 * (force - g)             # p_k + (h/2)(τ_k − g(q_k)): fixed in ξ
    frames = _joint_frames(model, q)
    r_old = None
    for _ in range(max_iter):
        q_next = integrate_q(model, q, h * xi)                                  # (VI-1)
        Hxi, dT = _kinetic_terms(model, frames, xi)
        Hxi_next, dT_next = _kinetic_terms(model, _joint_frames(model, q_next), xi)
        M = (Hxi + Hxi_next) / 2                 # ½ [H(q_k) + H(q_{k+1})] ξ
        r = _jacobian_inv_T(model, h * xi, M, left=True) - h / 2 * dT - target  # (VI-5)
        if r_old is not None:                    # Broyden: B y = s for the last step s
            y = r - r_old
            By = B @ y
            B = B + np.outer(step - By, step @ B) / (step @ By)
        step, r_old = -(B @ r), r
        if not np.isfinite(step).all():
            break
        if np.abs(step).max(initial=0) <= tol * np.abs(xi).max(initial=0):
            g_next = rnea(model, q_next, np.zeros(model.nv), np.zeros(model.nv))
            P = _jacobian_inv_T(model, h * xi, M, left=False) + h / 2 * (dT_next - g_next)
            return q_next, xi, P, g_next                                        # (VI-6)
        xi = xi + step
    raise RbdlearnError(f"the variational step at t = {t:.6g} did not converge in {max_iter} "
                        f"quasi-Newton iterations (last correction {np.abs(step).max():.3g} "
                        f"for |ξ| = {np.abs(xi).max():.3g}); try a smaller dt")
