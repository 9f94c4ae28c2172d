"""A hand held on a surface: Newton–Euler dynamics with a contact constraint and
friction (Chapter 4, seed 002: Nishiguchi, Minami and Yano, 2014).

A serial arm's hand point r(q) must stay on a surface C(r) = 0 (eq. 1). The surface
pushes on the hand with a normal force f_n along n̂ = ∇C/|∇C| and a friction force
f_t = K f_n against the sliding direction t̂ = ṙ/|ṙ|; the joints have viscous damping
D. The equation of motion is (eq. 10)

    M q̈ + h + g + D q̇ − (j_c − K j_t) f_n = τ,     j_c = J_pᵀ n̂,  j_t = J_pᵀ t̂   (11)

and differentiating C(r(q)) = 0 twice gives  ∇Cᵀ J_p q̈ + γ = 0  with
γ = (d∇C/dt)ᵀ ṙ + ∇Cᵀ J̇_p q̇ (eqs. 12, 22). Eliminating q̈ leaves one scalar equation
for the normal force,  A f_n = a − dᵀ τ  (eqs. 13–21).

The paper's point is that every term can be read off the Newton–Euler inverse
dynamics with the contact force included, ``INV(q, q̇, q̈, g, f_n, K)`` (eqs. 2–9):
b from one call, M column by column, j_c and j_t from two calls with f_n = −1
(eqs. 30–35). :func:`forward_dynamics` does exactly that;
:func:`forward_dynamics_kkt` solves the same motion independently (CRBA, a point
Jacobian and a Lagrange multiplier) for the tests and the chapter.

Forces follow the paper: ``f_n`` is the force of the surface on the hand along n̂,
so the hand pushes on the surface with −(n̂ f_n − t̂ f_t) (eq. 6); the friction law
is the paper's f_t = K f_n, meant for f_n ≥ 0 (a surface that pushes).
"""

import json
import math
from dataclasses import dataclass
from importlib import resources

import numpy as np

from .errors import RbdlearnError
from . import integrate
from .crb import crba
from .joints import Revolute
from .kinematics import (_jacobian, _velocities, base_transforms, body_accelerations,
                         body_pose, body_velocities, forward_kinematics)
from .model import Model, check_state, planar_chain, without_gravity
from .inverse_dynamics import JointForces, rnea, rnea_forces
from .spatial import cross3, inertia_params, mv, skew

__all__ = ["Surface", "floor", "sphere", "ConstrainedArm", "PlanarArmOnFloor",
           "SingularContact", "ContactState", "contact_state", "inverse_dynamics",
           "inverse_dynamics_forces",
           "forward_dynamics", "forward_dynamics_kkt", "link_forces", "com_accelerations",
           "paper_jacobians", "ConstrainedTrajectory", "simulate", "floor_arm_posture",
           "floor_arm_run", "paper_values"]


class SingularContact(RbdlearnError):
    """The normal force is undefined: A = 0 in A f_n = a − dᵀτ (eq. 21)."""


# --------------------------------------------------------------------------- surfaces
@dataclass(frozen=True)
class Surface:
    """A surface C(r) = 0 in base coordinates: ``C(r)``, its gradient ``grad(r)`` (∂C/∂r)
    and the gradient's rate ``grad_dot(r, rd)`` = d/dt ∂C/∂r = (∂²C/∂r²) ṙ."""
    C: callable
    grad: callable
    grad_dot: callable
    name: str = "surface"


def floor(height=0.0):
    """The horizontal plane z = height: C(r) = r_z − height, ∇C = e_z."""
    e_z = np.array([0.0, 0.0, 1.0])
    return Surface(C=lambda r: r[2] - height, grad=lambda r: e_z,
                   grad_dot=lambda r, rd: np.zeros(3), name=f"floor z = {height:g}")


def sphere(center, radius):
    """The sphere ``|r − c| = ρ``, as ``C(r) = (|r − c|² − ρ²)/2``: ∇C = r − c, d∇C/dt = ṙ.
    (A cylinder or circle for a planar arm: the same C restricted to its plane.)"""
    c = np.asarray(center, dtype=float)
    if c.shape != (3,) or not radius > 0:
        raise RbdlearnError(f"sphere needs a 3-vector center and radius > 0, "
                            f"got {center!r}, {radius!r}")
    return Surface(C=lambda r: ((r - c) @ (r - c) - radius ** 2) / 2, grad=lambda r: r - c,
                   grad_dot=lambda r, rd: rd, name=f"sphere |r - {c}| = {radius:g}")


# ------------------------------------------------------------------------ the system
@dataclass(frozen=True, eq=False)
class ConstrainedArm:
    """An rbdlearn ``Model`` whose point ``point`` (coordinates of body ``body``) stays on
    ``surface``; ``damping``: the viscous joint damping D (a scalar or one per velocity);
    ``friction``: K in f_t = K f_n. ``baumgarte = (α, β)`` replaces C̈ = 0 by
    C̈ + 2α Ċ + β² C = 0 to pull a drifting hand back onto the surface (the paper: 0, 0).
    ``slip_speed``: below this hand speed [m/s] the sliding direction ``ṙ/|ṙ|`` is taken
    as undefined and there is no friction (see :func:`contact_state`)."""
    model: Model
    body: int
    point: np.ndarray
    surface: Surface
    damping: object = 0.0
    friction: float = 0.0
    baumgarte: tuple = (0.0, 0.0)
    slip_speed: float = 1e-9

    def __post_init__(self):
        m = self.model
        if not isinstance(m, Model):
            raise RbdlearnError(f"model must be an rbdlearn Model, got {type(m).__name__}")
        if not (isinstance(self.body, (int, np.integer)) and 1 <= self.body <= m.N):
            raise RbdlearnError(f"body must be an integer in 1..{m.N}, got {self.body!r}")
        point = np.asarray(self.point, dtype=float)
        if point.shape != (3,) or not np.all(np.isfinite(point)):
            raise RbdlearnError(f"point must be a finite 3-vector in body {self.body}'s "
                                f"coordinates, got {self.point!r}")
        D = np.broadcast_to(np.asarray(self.damping, dtype=float), (m.nv,)).copy()
        if not np.all(np.isfinite(D)) or np.any(D < 0):
            raise RbdlearnError(f"damping must be finite and >= 0, got {self.damping!r}")
        K = float(self.friction)
        if not (np.isfinite(K) and K >= 0):
            raise RbdlearnError(f"friction coefficient K must be finite and >= 0, got {K!r}")
        alpha, beta = (float(x) for x in self.baumgarte)
        if not (alpha >= 0 and beta >= 0):
            raise RbdlearnError(f"baumgarte gains (α, β) must be >= 0, got {self.baumgarte!r}")
        for name, value in [("point", point), ("damping", D), ("friction", K),
                            ("baumgarte", (alpha, beta)),
                            ("_no_gravity", without_gravity(m))]:
            object.__setattr__(self, name, value)

    @property
    def n(self):
        return self.model.nv

    def hand(self, q):
        """The hand position r(q) in base coordinates."""
        R, p = body_pose(forward_kinematics(self.model, q)[self.body])
        return p + R @ self.point


def PlanarArmOnFloor(n_links, mass=1.0, length=0.5, inertia=None, damping=3.0,
                     friction=0.01, gravity=9.8, baumgarte=(0.0, 0.0)):
    """The paper's arm (Figs. 1–2): n links in the y-z plane, joints about x at the ends
    of the links, the base joint at the origin and the hand (the tip of link n) on the
    floor z = 0 through the base.

    Joint angles are the paper's: q_1 is measured from the upward vertical (+z), q_i
    (i > 1) relative to link i−1, positive about +x (from +y towards +z). Each link is
    a rod with its centre of mass at its middle; ``inertia`` is its moment of inertia
    about the centre of mass and the joint axis (default m l²/12, the uniform rod).
    Scalars or one value per link; ``gravity`` is g in m/s² along −z.
    """
    model = planar_chain(n_links, length=length, mass=mass, inertia=inertia,
                         gravity=[0, 0, 0, 0, 0, -float(gravity)])
    # planar_chain puts link 1 along +y at q = 0; turning the first joint frame by
    # +90° about x makes q = 0 point the link up, as in the paper.
    up = Revolute([1.0, 0.0, 0.0]).XJ(np.array([np.pi / 2]))
    model = model.replace(Xtree=[None, up @ model.Xtree[1], *model.Xtree[2:]])
    L = np.broadcast_to(np.asarray(length, dtype=float), (n_links,))
    return ConstrainedArm(model, body=n_links, point=np.array([0.0, L[-1], 0.0]),
                          surface=floor(0.0), damping=damping, friction=friction,
                          baumgarte=baumgarte)


# ------------------------------------------------------------- contact kinematics
@dataclass(frozen=True)
class ContactState:
    """The geometric terms of the contact at one state: hand position ``r`` and velocity
    ``rd``, the hand Jacobian ``J`` (3 × n, base coordinates, J_p = ∂r/∂qᵀ), ``grad``
    = ∂C/∂r, the unit normal ``n_hat``, the sliding direction ``t_hat`` (zero when the
    hand does not slide), ``gamma`` = (d∇C/dt)ᵀṙ + ∇Cᵀ J̇_p q̇ (eq. 22, plus the
    Baumgarte terms), and the residuals ``C`` and ``Cd`` = ∇Cᵀṙ."""
    r: np.ndarray
    rd: np.ndarray
    J: np.ndarray
    grad: np.ndarray
    n_hat: np.ndarray
    t_hat: np.ndarray
    gamma: float
    C: float
    Cd: float
    R: np.ndarray


def contact_state(arm, q, qd):
    """Evaluate :class:`ContactState` at ``(q, q̇)``.

    The friction direction is ``ṙ/|ṙ|`` (eq. 6) — taken in the tangent plane, so that a
    drifting hand's normal velocity does not tilt it — undefined at rest; below
    ``arm.slip_speed`` the hand counts as not sliding and ``t_hat`` is zero — the paper's
    law f_t = K f_n says nothing about static friction, and this is the choice under
    which its published forces at t = 0.10 s come out (Chapter 4).
    """
    model, i, p = arm.model, arm.body, arm.point
    q, qd = check_state(model, q=q, qd=qd)
    # one kinematic pass: the body velocities, and the accelerations at q̈ = 0 (J̇q̇)
    Xup, v, a = _velocities(model, q, qd, np.zeros(model.nv))
    X0 = base_transforms(model, Xup)
    R, o = body_pose(X0[i])
    r = o + R @ p
    J_i = _jacobian(model, q, X0, i, "local")                # body i's Jacobian, its coordinates
    J = R @ (J_i[3:] - skew(p) @ J_i[:3])               # J_p (23), base coordinates
    rd = J @ qd
    grad = np.asarray(arm.surface.grad(r), dtype=float)
    norm = np.linalg.norm(grad)
    if not norm > 0:
        raise SingularContact(f"{arm.surface.name}: ∂C/∂r = 0 at the hand r = {r}; the "
                              f"surface normal is undefined")
    n_hat = grad / norm
    slide = rd - n_hat * (n_hat @ rd)        # ṙ in the tangent plane: drift moves along n̂ too
    speed = np.linalg.norm(slide)
    t_hat = slide / speed if speed > arm.slip_speed else np.zeros(3)
    C, Cd = float(arm.surface.C(r)), float(grad @ rd)
    # J̇_p q̇: the hand's acceleration at q̈ = 0, R (a_O + ω̇ × p + ω × v_p) from body i's
    # velocity v_i = [ω; v_O] and acceleration a_i = [ω̇; a_O] at q̈ = 0
    w, vp = v[i][:3], v[i][3:] + cross3(v[i][:3], p)
    Jd_qd = R @ (a[i][3:] + cross3(a[i][:3], p) + cross3(w, vp))
    gamma = arm.surface.grad_dot(r, rd) @ rd + grad @ Jd_qd                       # (22)
    alpha, beta = arm.baumgarte
    gamma += 2 * alpha * Cd + beta ** 2 * C          # C̈ + 2αĊ + β²C = 0 (Baumgarte)
    return ContactState(r, rd, J, grad, n_hat, t_hat, float(gamma), C, Cd, R)


def _hand_force(arm, c, f_n, K):
    """The surface's force on the hand, n̂ f_n − t̂ K f_n (minus eq. 6), as a spatial force
    on the hand's body in its own coordinates (applied at the hand point)."""
    F = c.R.T @ (c.n_hat * f_n - c.t_hat * (K * f_n))
    return np.concatenate([cross3(arm.point, F), F])


# ------------------------------------------------------ the extended Newton–Euler
def inverse_dynamics_forces(arm, q, qd, qdd, f_n, K=None, gravity=True, contact=None):
    """``INV(q, q̇, q̈, g, f_n, K)`` (eqs. 2–9) with the forces between the links: a
    :class:`~rbdlearn.inverse_dynamics.JointForces` of the joint torques τ of the damped
    arm when the surface pushes on the hand with f_n (friction K f_n against ṙ), and the
    spatial joint forces f (f[i] on link i from link i−1, link coordinates).

    The Newton–Euler recursion is :func:`rbdlearn.rnea_forces` with the contact force as
    an external force on the hand's body (the paper's ⁿ⁺¹f_{n+1} of eq. 6, with the
    opposite sign because it is the force *on* the hand), plus D q̇ (eq. 9).
    ``gravity=False`` drops g; ``K`` defaults to ``arm.friction``. The contact
    directions (n̂, t̂) come from ``contact`` — the state's own by default; the forward
    dynamics passes the actual state's directions into calls made with q̇ = 0, as
    the paper's eqs. 32–33 require.
    """
    K = arm.friction if K is None else K
    c = contact_state(arm, q, qd) if contact is None else contact
    model = arm.model if gravity else arm._no_gravity
    f_ext = {arm.body: _hand_force(arm, c, f_n, K)}                    # (6)
    forces = rnea_forces(model, q, qd, qdd, f_ext)                     # (2)–(8)
    tau = forces.tau + arm.damping * np.asarray(qd, dtype=float)       # (9)
    return JointForces(tau, forces.f)


def inverse_dynamics(arm, q, qd, qdd, f_n, K=None, gravity=True, contact=None):
    """The joint torques τ of :func:`inverse_dynamics_forces` (the paper's INV)."""
    return inverse_dynamics_forces(arm, q, qd, qdd, f_n, K, gravity, contact).tau


@dataclass(frozen=True)
class ContactDynamics:
    """The result of the forward dynamics at one state: ``qdd``, the normal force ``f_n``,
    the terms of A f_n = a − dᵀτ (``A``, ``a``, ``d``), and ``M``, ``b``, ``j_c``, ``j_t``,
    ``contact``."""
    qdd: np.ndarray
    f_n: float
    A: float
    a: float
    d: np.ndarray
    M: np.ndarray
    b: np.ndarray
    j_c: np.ndarray
    j_t: np.ndarray
    contact: ContactState


def _check_A(arm, q, A, m_c, j_c):
    """A = m_c − K dᵀj_t must be far from 0 (eq. 21). m_c → 0 means j_c = J_pᵀn̂ → 0: a
    singular posture in which no joint motion moves the hand along the normal."""
    scale = np.linalg.norm(j_c) ** 2 + 1.0
    if not np.isfinite(A) or abs(A) <= 1e-9 * scale * max(abs(m_c), 1.0):
        why = ("the hand cannot move along the surface normal (j_c = J_pᵀn̂ = "
               f"{np.array2string(j_c, precision=3)}): a singular posture"
               if abs(m_c) <= 1e-9 * scale else
               f"friction K = {arm.friction:g} cancels the normal response m_c = {m_c:.3g}")
        raise SingularContact(f"A = {A:.3g} in A f_n = a − dᵀτ (eq. 21) at q = "
                              f"{np.array2string(np.asarray(q, float), precision=4)}: "
                              f"{why}; the normal force is undefined")


def _normal_response(arm, q, c, M, j_c, j_t):
    """``d`` (eq. 16) and ``A`` (eq. 20) of A f_n = a − dᵀτ, after :func:`_check_A`."""
    dC_dq = c.grad @ c.J                                              # ∂C/∂qᵀ = ∇Cᵀ J_p
    Minv_dC = np.linalg.solve(M, dC_dq)
    m_c = dC_dq @ Minv_dC                                                     # (14)
    d = np.linalg.norm(c.grad) * Minv_dC          # dᵀ = |∇C| ∂C/∂qᵀ M⁻¹ (16), M = Mᵀ
    A = m_c - arm.friction * (d @ j_t)                                        # (20)
    _check_A(arm, q, A, m_c, j_c)
    return d, A


def forward_dynamics(arm, q, qd, tau):
    """q̈ and f_n by repeated Newton–Euler calls (eqs. 30–35). Raises
    :class:`SingularContact` when A = 0 (eq. 21)."""
    q, qd, tau = check_state(arm.model, q=q, qd=qd, tau=tau)
    c = contact_state(arm, q, qd)
    K, n, zero = arm.friction, arm.n, np.zeros(arm.n)

    def INV(qd_, qdd_, gravity, f_n, K_):
        return inverse_dynamics(arm, q, qd_, qdd_, f_n, K_, gravity, contact=c)

    b = INV(qd, zero, True, 0.0, K)                                  # b = h + g + Dq̇ (31)
    M = np.column_stack([INV(zero, e, False, 0.0, K) for e in np.eye(n)])   # M e_i
    j_c = INV(zero, zero, False, -1.0, 0.0)                                   # (32)
    j_t = j_c - INV(zero, zero, False, -1.0, 1.0)                             # (33)–(34)
    d, A = _normal_response(arm, q, c, M, j_c, j_t)
    a = d @ b - np.linalg.norm(c.grad) * c.gamma                              # (18)
    f_n = (a - d @ tau) / A                                                   # (21)
    b_n = INV(qd, zero, True, f_n, K)                          # b_n = b − (j_c − K j_t) f_n
    qdd = np.linalg.solve(M, tau - b_n)                                       # (35)
    return ContactDynamics(qdd, float(f_n), float(A), float(a), d, M, b, j_c, j_t, c)


def forward_dynamics_kkt(arm, q, qd, tau, contact=None):
    """The same motion solved independently: M from the composite-rigid-body algorithm,
    the bias from RNEA at q̈ = 0, the hand Jacobian and J̇q̇ from the kinematics, and
    the normal force as a Lagrange multiplier of the bordered system

        [ M          −(j_c − K j_t) ] [ q̈  ]   [ τ − b ]
        [ ∇Cᵀ J_p     0             ] [ f_n ] = [ −γ    ]

    Returns ``(qdd, f_n)``. ``contact``: the state's :class:`ContactState`, if at hand.
    Raises :class:`SingularContact` where :func:`forward_dynamics` does (A = 0, eq. 21):
    there the bordered matrix is singular too, and a solver would return round-off."""
    q, qd, tau = check_state(arm.model, q=q, qd=qd, tau=tau)
    c = contact_state(arm, q, qd) if contact is None else contact
    n = arm.n
    M = crba(arm.model, q)
    b = rnea(arm.model, q, qd, np.zeros(n)) + arm.damping * qd
    _normal_response(arm, q, c, M, c.J.T @ c.n_hat, c.J.T @ c.t_hat)   # raises where (21) does
    G = np.zeros((n + 1, n + 1))
    G[:n, :n] = M
    G[:n, n] = -(c.J.T @ c.n_hat - arm.friction * (c.J.T @ c.t_hat))
    G[n, :n] = c.grad @ c.J
    x = np.linalg.solve(G, np.concatenate([tau - b, [-c.gamma]]))
    return x[:n], float(x[n])


def paper_jacobians(model, q, qd, body, point):
    """The hand Jacobian J_p and its rate J̇_p the paper's way (eqs. 23–29), for a chain
    of revolute joints: column k is ⁰z_k × (r − ⁰p_k) and its derivative
    (⁰ω_k × ⁰z_k) × (r − ⁰p_k) + ⁰z_k × (ṙ − ṗ_k). Returns ``(J_p, J̇_p)`` (3 × n)."""
    q, qd = check_state(model, q=q, qd=qd)
    X0 = forward_kinematics(model, q)
    v = body_velocities(model, q, qd)
    R_h, p_h = body_pose(X0[body])
    r = p_h + R_h @ point                                             # ⁰p_{n+1}
    rd = R_h @ (v[body][3:] + cross3(v[body][:3], point))          # J_p(n+1) q̇
    J, Jd = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    for k in model.ancestors(body):
        if not isinstance(model.joints[k], Revolute):
            raise RbdlearnError(f"paper_jacobians handles revolute joints only; joint {k} "
                                f"({model.names[k]}) is {type(model.joints[k]).__name__}")
        R_k, p_k = body_pose(X0[k])
        z = R_k @ model.joints[k].axis                                # ⁰z_k (24)
        w = R_k @ v[k][:3]                                            # ⁰ω_k
        pd = R_k @ v[k][3:]                                   # ṗ_k: joint k's origin is on body k
        col = model.v_index[k]
        J[:, col] = cross3(z, r - p_k)                                       # (23), (25)
        Jd[:, col] = cross3(cross3(w, z), r - p_k) + cross3(z, rd - pd)  # (26)–(29)
    return J, Jd


# --------------------------------------------------------- forces and accelerations
def link_forces(arm, q, f):
    """⁰f_i: the force on link i from link i−1 in base coordinates, (N, 3), from the
    spatial joint forces ``f`` of :func:`inverse_dynamics_forces`; for a
    batch of states, q (..., nq) and f[i] (..., 6), (..., N, 3)."""
    X0 = forward_kinematics(arm.model, q)
    return np.stack([mv(body_pose(X0[i])[0], f[i][..., 3:])
                     for i in range(1, arm.model.N + 1)], axis=-2)


def com_accelerations(model, q, qd, qdd):
    """⁰s̈_i: the classical acceleration of each body's centre of mass in base
    coordinates, (N, 3) — what m_i ⁰s̈_i = (sum of forces on link i) checks (eqs. 37–40)."""
    X0 = forward_kinematics(model, q)
    v = body_velocities(model, q, qd)
    a = body_accelerations(model, q, qd, qdd)
    out = np.zeros((model.N, 3))
    for i in range(1, model.N + 1):
        s = inertia_params(model.I[i], allow_massless=True)[1]     # COM, body coordinates
        w, wd = v[i][:3], a[i][:3]
        vs = v[i][3:] + cross3(w, s)
        out[i - 1] = body_pose(X0[i])[0] @ (a[i][3:] + cross3(wd, s) + cross3(w, vs))
    return out


# ------------------------------------------------------------------- simulation
@dataclass(frozen=True, eq=False)
class ConstrainedTrajectory(integrate.Trajectory):
    """A simulated constrained motion: a :class:`~rbdlearn.integrate.Trajectory` (times
    ``t`` (steps,), ``q``, ``qd``) with, per row, ``qdd``; the normal force ``f_n``
    (steps,); the friction force on the hand ``f_t`` (steps, 3, base coordinates; the
    paper plots its y component); ``link_forces`` (steps, N, 3): ⁰f_i, the force on link i
    from link i−1; the hand position ``r`` (steps, 3) and the constraint residual ``C``
    (steps,)."""
    qdd: np.ndarray
    f_n: np.ndarray
    f_t: np.ndarray
    link_forces: np.ndarray
    r: np.ndarray
    C: np.ndarray

    def at(self, time):
        """Index of the row nearest to ``time``."""
        return int(np.argmin(np.abs(self.t - time)))


def simulate(arm, q0, qd0, t_end, dt, *, tau=None, method="ne"):
    """Integrate the constrained arm ``arm`` from ``(q0, qd0)`` at time 0 to ``t_end`` with
    fourth-order Runge–Kutta in steps of ``dt`` (the paper: dt = 0.01 s); ``tau``: joint
    forces, None (zero), an array or a function ``tau(t, q, qd)``. ``method``: ``"ne"``
    integrates :func:`forward_dynamics` (the paper's repeated Newton–Euler calls),
    ``"kkt"`` the equal but cheaper :func:`forward_dynamics_kkt`. Forces and accelerations
    are evaluated at every saved state. The initial state must satisfy C = 0 and Ċ = 0.
    Returns a :class:`ConstrainedTrajectory`."""
    if not isinstance(arm, ConstrainedArm):
        raise RbdlearnError(f"arm must be a ConstrainedArm, got {type(arm).__name__}")
    if method not in ("ne", "kkt"):
        raise RbdlearnError(f"method must be 'ne' or 'kkt', got {method!r}")
    model = arm.model
    # the stored rows: t, q, q̇, q̈, f_n, f_t (3), the link forces (N x 3), r (3), C
    integrate.time_grid(t_end, dt, 1 + model.nq + 2 * model.nv + 1 + 3 + 3 * model.N + 3 + 1,
                        "constrained.simulate")
    try:
        q0, qd0 = check_state(model, q=q0, qd=qd0)
    except ValueError as e:
        raise RbdlearnError(f"initial state (q0, qd0): {e}") from None
    c0 = contact_state(arm, q0, qd0)
    scale = np.linalg.norm(c0.grad)
    if abs(c0.C) > 1e-6 * scale or abs(c0.Cd) > 1e-6 * scale * (1 + np.linalg.norm(c0.rd)):
        raise RbdlearnError(f"the initial state is not on the surface: C = {c0.C:.3g}, "
                            f"Ċ = {c0.Cd:.3g} at the hand r = {c0.r} ({arm.surface.name}); "
                            f"the constraint is kept at the acceleration level only")
    tau_of = integrate.joint_forces(model, tau)
    solved = {}        # RK4's first stage at a saved state is that state's solve: kept

    def solve(q, qd, tau):
        """(q̈, f_n, contact state) at one state."""
        key = (q.tobytes(), qd.tobytes(), np.asarray(tau, dtype=float).tobytes())
        if key not in solved:
            solved[key] = _solve(q, qd, tau)
        return solved[key]

    def _solve(q, qd, tau):
        with np.errstate(all="ignore"):           # a diverging run is reported below
            if method == "kkt":
                c = contact_state(arm, q, qd)
                qdd, f_n = forward_dynamics_kkt(arm, q, qd, tau, contact=c)
            else:
                fd = forward_dynamics(arm, q, qd, tau)
                qdd, f_n, c = fd.qdd, fd.f_n, fd.contact
        if not (np.isfinite(qdd).all() and np.isfinite(f_n)):
            raise RbdlearnError(f"constrained.simulate diverged at q = {q}: the accelerations "
                                f"are no longer finite (a step dt = {dt} too large for the "
                                f"damping, or friction K f_n with f_n < 0 pushing the hand "
                                f"along its sliding direction)")
        return qdd, f_n, c

    traj = integrate.simulate(model, q0, qd0, t_end, dt, tau=tau,
                              forward=lambda m, q, qd, tau: solve(q, qd, tau)[0])
    rows = []
    for t, q, qd in zip(traj.t, traj.q, traj.qd):
        qdd, f_n, c = solve(q, qd, tau_of(t, q, qd))
        rows.append((qdd, f_n, -c.t_hat * arm.friction * f_n, c.r, c.C,
                     _hand_force(arm, c, f_n, arm.friction)))
    qdd, f_n, f_t, r, C, F_hand = (np.array(x) for x in zip(*rows))
    # the joint forces of INV (eqs. 2–8) at every saved state, in one batch
    f = rnea_forces(model, traj.q, traj.qd, qdd, {arm.body: F_hand}).f
    lf = link_forces(arm, traj.q, f)
    return ConstrainedTrajectory(traj.t, traj.q, traj.qd, qdd, f_n, f_t, lf, r, C)


# ----------------------------------------------- the 2-link arm on the floor (§4 of the chapter)

def floor_arm_posture(y, length=0.5):
    """The posture of the 2-link :func:`PlanarArmOnFloor` (two links
    of ``length``) with the hand on the floor at distance ``y`` from the base and both
    links below it, the paper's V: q = [−π/2 − φ, 2φ] with cos φ = y / (2 l)."""
    if not 0 < y < 2 * length:
        raise RbdlearnError(f"the hand must be on the floor within reach, "
                            f"0 < y < {2 * length:g} m; got y = {y!r}")
    phi = math.acos(y / (2 * length))
    return np.array([-math.pi / 2 - phi, 2 * phi])


def floor_arm_run(tau, K, y0, t_end=1.2, dt=0.05, inertia=0.5 ** 2 / 3):
    """The 2-link arm of the paper's §5.2 (I = m l²/3) started at rest with the hand at
    ``y0``, driven by constant ``tau``, friction ``K``: ``(arm, trajectory)`` from
    :func:`simulate` with the KKT solution (cheap enough for a
    slider: about 2 ms per RK4 step, forces included)."""
    arm = PlanarArmOnFloor(2, inertia=inertia, friction=K)
    return arm, simulate(arm, floor_arm_posture(y0), np.zeros(2), t_end, dt,
                         tau=np.asarray(tau, dtype=float), method="kkt")


def paper_values():
    """The numbers printed in seed 002's section 5.2 (Tables 1–4), as a dict: the two- and
    three-link arms' parameters, torques, initial angles (sympy strings such as "pi/6") and,
    per time, the link forces, f_n, f_t and the centre-of-mass accelerations ("_source"
    says where each comes from). Read from the package's data, so it works wherever
    rbdlearn is installed."""
    text = resources.files("rbdlearn").joinpath("data/seed002_values.json").read_text("utf-8")
    return json.loads(text)
