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
"""

import math
from dataclasses import dataclass

import numpy as np

from .aba import aba
from .kinematics import body_pose, body_velocities, forward_kinematics
from .model import batch_shape, check_state, integrate_q
from .spatial import unskew

__all__ = ["Trajectory", "simulate", "time_grid", "rk4_step", "energy", "momentum"]

METHODS = ("rk4", "semi_implicit_euler")


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
            raise ValueError(f"Trajectory needs t (n,), q (n, nq), qd (n, nv) (or, for a "
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


def _joint_forces(model, tau):
    """τ(t, q, q̇) as a checked function; None means zero, an array is constant."""
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
            raise ValueError(f"tau(t, q, qd) at t = {t:.6g}: {e}") from None
    return checked


def _positive_time(x, name, allow_zero):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {x!r}") from None
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        need = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {need}, got {x!r}")
    return x


def simulate(model, q0, qd0, t_end, dt, tau=None, f_ext=None, method="rk4", forward=aba):
    """Integrate the motion of ``model`` from ``(q0, qd0)`` at time 0 to ``t_end``.

    ``tau``: joint forces — None (zero), a constant nv-array, or a function
    ``tau(t, q, qd)`` returning one. ``f_ext``: external body forces as in :func:`aba`,
    constant or a function ``f_ext(t, q, qd)``. ``method``: ``"rk4"`` (RK4-1..5 in the
    module docstring) or ``"semi_implicit_euler"`` (SIE). ``forward(model, q, qd, tau,
    f_ext=None)`` computes q̈. Steps have length ``dt``; the last one is shortened so the
    trajectory ends exactly at ``t_end``. Returns a :class:`Trajectory` that includes
    the initial state.

    A batch of initial states, ``q0`` (K, nq) and ``qd0`` (K, nv) (any leading axes that
    broadcast together), is integrated in lock step, each step computing every state's
    q̈ in one ``forward`` call; ``tau`` and ``f_ext`` (functions) then receive and
    return batches. The :class:`Trajectory` has the time axis first: q (n, K, nq).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not callable(forward):
        raise ValueError(f"forward must be a function (model, q, qd, tau), got {forward!r}")
    time_grid(t_end, dt)                                   # check the times first
    try:
        q, qd = check_state(model, batch=True, q=q0, qd=qd0)
    except ValueError as e:
        raise ValueError(f"initial state (q0, qd0): {e}") from None
    batch = batch_shape(q, qd)
    q, qd = np.broadcast_to(q, batch + q.shape[-1:]), np.broadcast_to(qd, batch + qd.shape[-1:])
    tau_of = _joint_forces(model, tau)
    f_ext_of = _as_function(f_ext)
    nv = model.nv

    def F(t, x):
        """The state derivative (q̇, q̈) as one 2nv-vector."""
        q, qd = x
        kwargs = {} if f_ext_of is None else {"f_ext": f_ext_of(t, q, qd)}
        qdd = np.asarray(forward(model, q, qd, tau_of(t, q, qd), **kwargs), dtype=float)
        if qdd.shape != batch + (nv,) or not np.all(np.isfinite(qdd)):
            raise ValueError(f"forward dynamics at t = {t:.6g} returned {qdd!r}, "
                             f"expected {nv} finite accelerations (at |q̇| = "
                             f"{np.linalg.norm(qd):.3g}; if the motion diverged, try a "
                             f"smaller dt)")
        return np.concatenate([qd, qdd], axis=-1)

    def semi_implicit_euler(t, x, h):
        qd_next = x[1] + h * F(t, x)[..., nv:]                             # (SIE)
        return integrate_q(model, x[0], h * qd_next), qd_next

    def rk4(t, x, h):
        return rk4_step(model, F, t, x, h)

    step = rk4 if method == "rk4" else semi_implicit_euler
    t = time_grid(t_end, dt)
    Q, QD = np.empty((len(t),) + batch + (model.nq,)), np.empty((len(t),) + batch + (nv,))
    x = (q, qd)
    Q[0], QD[0] = x
    for k in range(len(t) - 1):
        try:
            with np.errstate(over="raise"):       # an overflow is a diverged motion
                x = step(t[k], x, t[k + 1] - t[k])
        except FloatingPointError:
            raise ValueError(
                f"simulate diverged between t = {t[k]:.6g} and {t[k + 1]:.6g}: the state "
                f"overflowed (|q̇| = {np.linalg.norm(x[1]):.3g} before the step); try a "
                f"smaller dt, or check the torques and forces for energy fed in") from None
        Q[k + 1], QD[k + 1] = x
    return Trajectory(t, Q, QD)


def time_grid(t_end, dt):
    """Times 0, dt, 2 dt, … up to ``t_end``, the last step shortened to end exactly there
    (``t_end``/``dt`` up to round-off gives no sliver step). Checks both."""
    t_end = _positive_time(t_end, "t_end", allow_zero=True)
    dt = _positive_time(dt, "dt", allow_zero=False)
    n_steps = math.ceil(t_end / dt * (1 - 1e-12))
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
    ``−Σ m_i g·c_i`` with ``c_i`` the centre of mass of body i in base coordinates."""
    g = np.asarray(model.gravity, dtype=float)
    if np.any(g[:3] != 0):
        raise ValueError(f"energy needs a uniform gravity field: model.gravity {g} has a "
                         f"non-zero angular part")
    q, qd = check_state(model, q=q, qd=qd)             # one state (no batch)
    X0 = forward_kinematics(model, q)
    v = body_velocities(model, q, qd)
    kinetic = potential = 0.0
    for i in range(1, model.N + 1):
        I = model.I[i]
        kinetic += 0.5 * v[i] @ I @ v[i]
        R, p = body_pose(X0[i])
        m, mc = I[5, 5], unskew(I[:3, 3:])          # mass and first moment m·c (body coords)
        potential -= g[3:] @ (m * p + R @ mc)        # m c_i in base coordinates
    return float(kinetic + potential)


def momentum(model, q, qd):
    """Total spatial momentum of all bodies in base coordinates, [angular about the base
    origin; linear]: ``Σ (ⁱX₀)ᵀ I_i v_i`` (``(ⁱX₀)ᵀ`` carries a force, or momentum,
    from body-i to base coordinates)."""
    q, qd = check_state(model, q=q, qd=qd)             # one state (no batch)
    X0 = forward_kinematics(model, q)
    v = body_velocities(model, q, qd)
    h = np.zeros(6)
    for i in range(1, model.N + 1):
        h = h + X0[i].T @ (model.I[i] @ v[i])
    return h
