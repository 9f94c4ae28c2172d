"""Several point contacts with Coulomb friction, solved at the velocity level (Chapter 2
§6, equations ct-step, ct-K, ct-K-theta, ct-lcp; seed 000 §2.8 for the inverse inertia
between bodies): the contact model on a tree — the points' maps Φ, the Delassus operator,
the contact velocities, the LCP formulation ``contact_lcp``, ``solve_contacts``,
``plane_contacts``, and the time stepping ``step`` and ``simulate``. The problem without
the tree (:class:`.Contact`, its checks) and its solvers (``lemke``, ``pgs``,
``contact_residuals``) are in ``rbdlearn.lcp``.

A time step of length h first moves the velocities without contact forces,
``q̇* = q̇ + h H⁻¹(τ − C)`` (one ABA), then applies contact impulses P (world
coordinates, on body ``body`` at its point, and −P on ``other`` if it is a body):

    q̇⁺ = q̇* + H⁻¹ Jᵀ P,     v⁺ = v* + K P,     K = J H⁻¹ Jᵀ   (the Delassus operator)

with v the contact points' relative velocities (3 per contact, world axes). K is built
block by block from seed 000 §2.8: Λ_ab = J_a H⁻¹ J_bᵀ (``articulated.inter_body_inertia``,
the Θ recursion) mapped to points by Φ = R [−p×  1], never by forming or inverting H.

Per contact k, with normal n, friction directions d_1 … d_d (a pyramid), gap φ ≥ 0:

    P = n P_n + Σ_j d_j β_j
    0 ≤ P_n  ⊥  n·v⁺ + φ/h ≥ 0            (no penetration at the end of the step)
    0 ≤ β_j  ⊥  d_j·v⁺ + λ ≥ 0            (friction opposes the sliding velocity)
    0 ≤ λ    ⊥  μ P_n − Σ_j β_j ≥ 0        (λ: the sliding speed; stick when λ = 0)

which is the linear complementarity problem (LCP) w = M z + b, z ≥ 0, w ≥ 0, zᵀw = 0 of
Stewart and Trinkle (1996) and Anitescu and Potra (1997), solved here by Lemke's
complementary pivoting (``lcp.lemke``) or, contact by contact, by projected Gauss–Seidel
(``lcp.pgs``, which also takes the circular cone). The problems a simulation produces are
degenerate (redundant contacts, ties decided by round-off), so ``lemke`` guards its
walk and checks its answer, and :func:`.solve_contacts` checks every answer against the
contact conditions themselves (``lcp.contact_residuals``) before returning it.
"""

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from .articulated import (_articulated_sweep, _impulse_response, _theta, aba,
                          inter_body_inertia, theta_recursion)
from .crb import crba
from .impulses import _Phi
from .integrate import Trajectory, joint_forces, step_guard, time_grid
from .kinematics import (_point_velocity, _velocities, base_transforms, body_pose,
                         forward_kinematics, point_jacobian)
from .lcp import (Contact, ContactError, ContactWarning, LCPError, _bias, _check_contacts,
                  _check_Kv, _check_mobility, _contact_list, _real, _step_length, _vec3,
                  ContactResiduals, contact_residuals, friction_directions, lemke, pgs)
from .model import check_state, integrate_q

__all__ = ["Contact", "ContactError", "delassus", "delassus_dense", "contact_velocities",
           "contact_lcp", "ContactSolution", "solve_contacts", "MU_LCP", "plane_contacts",
           "step", "ContactTrajectory", "simulate"]


def _sides_Phi(X0, cs):
    """Per contact, its sides as (body, Φ, sign): Φ of each point once, at ``X0``."""
    return [[(b, _Phi(X0, b, p), s) for b, p, s in c.sides] for c in cs]


def delassus(model, q, contacts):
    """The Delassus operator K = J H⁻¹ Jᵀ (3m x 3m, world axes, contact by contact)
    built from seed 000 §2.8: block (k, l) = Σ s_a s_b Φ_a Λ_ab Φ_bᵀ over the bodies a of
    contact k and b of contact l (sign s = +1 for ``body``, −1 for ``other``), with
    Λ_ab = ``inter_body_inertia(model, q, b, a)`` from one Θ recursion."""
    (q,) = check_state(model, q=q)
    cs = _check_contacts(model, contacts)
    return _delassus(model, q, _sides_Phi(forward_kinematics(model, q), cs))


def _delassus(model, q, sides, T_Theta=None):
    """:func:`.delassus` from the contacts' ``sides`` (:func:`_sides_Phi`) and, if given,
    ``T_Theta = theta_recursion(model, q)``."""
    T_Theta = theta_recursion(model, q) if T_Theta is None else T_Theta
    Lam = {}                                         # Λ_ab, once per pair of bodies
    K = np.zeros((3 * len(sides), 3 * len(sides)))
    for k, sides_k in enumerate(sides):
        for l, sides_l in enumerate(sides[:k + 1]):
            block = np.zeros((3, 3))
            for a, Phi_a, sa in sides_k:
                for b, Phi_b, sb in sides_l:
                    if (a, b) not in Lam:
                        Lam[a, b] = inter_body_inertia(model, q, b, a, T_Theta)
                    block += sa * sb * Phi_a @ Lam[a, b] @ Phi_b.T
            K[3 * k:3 * k + 3, 3 * l:3 * l + 3] = block
            K[3 * l:3 * l + 3, 3 * k:3 * k + 3] = block.T           # K is symmetric
    return K


def _jacobian(model, q, cs):
    """J (3m x nv): v = J q̇, the points' relative velocities in world axes."""
    return np.vstack([sum(s * point_jacobian(model, q, b, p, frame="world")
                          for b, p, s in c.sides) for c in cs])


def delassus_dense(model, q, contacts):
    """J H⁻¹ Jᵀ from the point Jacobians and the inertia matrix (CRBA): the
    cross-check of :func:`.delassus`, O(nv³)."""
    (q,) = check_state(model, q=q)
    J = _jacobian(model, q, _check_contacts(model, contacts))
    return J @ np.linalg.solve(crba(model, q), J.T)


def contact_velocities(model, q, qd, contacts):
    """The contacts' relative point velocities (m x 3, world axes)."""
    q, qd = check_state(model, q=q, qd=qd)
    Xup, v, _ = _velocities(model, q, qd)
    return _contact_velocities(base_transforms(model, Xup), v,
                               _check_contacts(model, contacts))


def _contact_velocities(X0, v, cs):
    """:func:`contact_velocities` from the base transforms and body velocities at the state."""
    return np.array([sum(s * _point_velocity(X0, v, b, p, "world") for b, p, s in c.sides)
                     for c in cs])


def contact_lcp(K, v, contacts, h=None, d=4):
    """``(M, b, G)`` of the LCP w = M z + b with z = [P_n (m); β (m d); λ (m)] for the
    ``contacts`` (a list of :class:`.Contact`), their Delassus matrix K
    (:func:`.delassus`) and free velocities v (m x 3, :func:`contact_velocities`):

        M = [[NᵀKN, NᵀKD, 0], [DᵀKN, DᵀKD, E], [diag μ, −Eᵀ, 0]],
        b = [Nᵀv* + φ/h; Dᵀv*; 0],

    N, D: the normals and pyramid directions (world axes), E: one 1 per direction;
    G = [N D] maps [P_n; β] to the impulses (3 per contact)."""
    cs = _check_contacts(None, contacts)
    K, v = _check_Kv(K, v, len(cs))
    m, dirs = len(cs), friction_directions(d)
    N, D, E = np.zeros((3 * m, m)), np.zeros((3 * m, m * d)), np.zeros((m * d, m))
    for k, c in enumerate(cs):
        N[3 * k:3 * k + 3, k] = c.n
        D[3 * k:3 * k + 3, k * d:(k + 1) * d] = c.T @ dirs.T
        E[k * d:(k + 1) * d, k] = 1.0
    G = np.hstack([N, D])
    M = np.zeros((m * (d + 2), m * (d + 2)))
    M[:m * (d + 1), :m * (d + 1)] = G.T @ K @ G
    M[m:m * (d + 1), m * (d + 1):] = E
    M[m * (d + 1):, :m] = np.diag([c.mu for c in cs])
    M[m * (d + 1):, m:m * (d + 1)] = -E.T
    b = np.concatenate([_bias(cs, v, h), D.T @ np.ravel(v), np.zeros(m)])
    return M, b, G


@dataclass
class ContactSolution:
    """The contact impulses of one step: ``P`` (m x 3, world axes, on ``body``; −P on
    ``other``), their normal parts ``P_n`` (m), ``v_before`` / ``v_after`` the contact
    velocities (m x 3) without and with the impulses, ``dqd`` = H⁻¹ Jᵀ P, ``solver``,
    ``residuals`` (:class:`.ContactResiduals`, the check the answer passed), and the
    solver's own record: ``residual`` (Lemke: of its LCP, PGS: of its natural map, both
    relative) and ``iterations`` (pivots or sweeps); for Lemke also the LCP's ``z``,
    ``w`` (z = [P_n; β; λ]; λ is the sliding speed)."""
    P: np.ndarray
    P_n: np.ndarray
    v_before: np.ndarray
    v_after: np.ndarray
    dqd: np.ndarray
    solver: str
    residuals: ContactResiduals
    residual: float
    iterations: int
    z: np.ndarray = None
    w: np.ndarray = None


#: The largest friction coefficient μ that :func:`.solve_contacts` hands to Lemke (see there).
MU_LCP = 1e3


def solve_contacts(model, q, qd, contacts, h=None, solver="lemke", d=4,
                   friction="pyramid", tol=1e-9, max_iter=5000, accept=1e-6):
    """The impulses P that the ``contacts`` (a list of :class:`.Contact`, one Contact, or a
    function of q giving them) apply to a system moving with ``qd`` (for a time step:
    the free velocity q̇*) at ``q``: the LCP of the module docstring with the Delassus
    operator of :func:`.delassus`, by ``solver`` "lemke" (the pyramid with ``d``
    directions, to the relative tolerance ``tol``) or "pgs" (``friction`` "pyramid" or
    "cone", to ``tol``, at most ``max_iter`` sweeps). ``h``: the step, for the gaps
    (None: a pure impulse, gaps ignored).

    Lemke's LCP takes μ at most ``MU_LCP`` (1e3): a larger μ lets it apply friction
    μ P_n on a normal impulse P_n that is only round-off (with μ = 1e12, 1e-17 N s
    carries 1e-5 N s of friction). The answer is checked against the true μ: it is one
    of the true problem unless a pressed contact needs friction beyond 1e3 P_n.

    Every answer is checked against the contact conditions (:func:`.contact_residuals`)
    before it is returned: beyond ``accept`` (relative), Lemke's answer raises
    :class:`LCPError` and PGS's warns (:class:`ContactWarning`, as when it stops before
    ``tol``). Returns a :class:`.ContactSolution`; ``dqd`` comes from the ABA at rest
    without gravity, on the articulated inertias that K was built from."""
    q, qd = check_state(model, q=q, qd=qd)
    cs = _check_contacts(model, _contacts_at(contacts, q))
    if h is not None:
        _step_length(h)
    if solver not in ("lemke", "pgs"):
        raise ContactError(f"solver must be 'lemke' or 'pgs', got {solver!r}")
    if solver == "lemke" and friction != "pyramid":
        raise ContactError(f"Lemke solves the friction pyramid's LCP, not friction="
                           f"{friction!r}: use solver='pgs' for the cone")
    accept = _real(accept, "accept")
    Xup, body_v, _ = _velocities(model, q, qd)       # one kinematic pass for K, v and Φᵀ P
    X0 = base_transforms(model, Xup)
    sides = _sides_Phi(X0, cs)
    sweep = _articulated_sweep(model, q)             # I^A, U, D⁻¹: for K and for Δq̇
    K = _delassus(model, q, sides, _theta(model, sweep))
    v = _contact_velocities(X0, body_v, cs)
    labels = ", ".join(c.label for c in cs)
    if solver == "lemke":
        _check_mobility(K, cs)                  # (pgs checks it itself)
        # μ above MU_LCP enters the LCP as MU_LCP; the check below uses the true μ
        capped = [replace(c, mu=min(c.mu, MU_LCP)) for c in cs]
        M, b, G = contact_lcp(K, v, capped, h, d)
        found = lemke(M, b, what=f"contact LCP of {labels}", tol=tol)
        P = (G @ found.z[:G.shape[1]]).reshape(-1, 3)
        out = dict(z=found.z, w=found.w, residual=found.residual, iterations=found.pivots)
    else:
        P, res, its = pgs(K, v, cs, h, d, friction, tol, max_iter)    # warns if res > tol
        out = dict(residual=res, iterations=its)
    residuals = contact_residuals(K, v, cs, P, h, d, friction)
    if residuals.worst > accept:
        message = (f"{solver} returned impulses that miss the contact conditions of "
                   f"{labels} by {residuals.worst:.3g} > {accept:g} (relative; worst at "
                   f"{residuals.where}): {residuals}")
        if solver == "lemke":
            if max(c.mu for c in cs) > MU_LCP:
                message += (f"; the LCP takes μ ≤ {MU_LCP:g} (beyond, a round-off P_n "
                            f"carries friction) and a contact here needs more friction "
                            f"than {MU_LCP:g} P_n to stick")
            raise LCPError(message)
        if out["residual"] <= tol:              # (PGS has warned already otherwise)
            warnings.warn(message, ContactWarning, stacklevel=2)
    f_ext = {}
    for sides_k, Pk in zip(sides, P):
        for b_, Phi, s in sides_k:
            f_ext[b_] = f_ext.get(b_, 0.0) + s * Phi.T @ Pk                # Φᵀ P
    dqd = _impulse_response(model, sweep, f_ext=f_ext)
    P_n = np.array([c.n @ Pk for c, Pk in zip(cs, P)])
    return ContactSolution(P, P_n, v, v + (K @ P.ravel()).reshape(-1, 3), dqd, solver,
                           residuals, **out)


def plane_contacts(model, points, mu=0.0, normal=(0.0, 0.0, 1.0), offset=0.0, margin=0.05,
                   names=None):
    """A function ``q → [Contact]`` for candidate ``points`` [(body, point in body
    coordinates)] against the plane n·x = ``offset`` (world), the bodies on the side
    n·x ≥ offset: each point closer than ``margin`` (≥ 0) becomes a contact with the
    ground, with gap φ = n·x − offset (0 once the point has sunk below the plane: the
    step does not push it out, which would add energy)."""
    n = _vec3(normal, "plane normal")
    if np.linalg.norm(n) < 1e-12:
        raise ContactError("plane normal must be non-zero")
    n = n / np.linalg.norm(n)
    mu, margin = _real(mu, "friction mu"), _real(margin, "margin")
    offset = _real(offset, "offset", lo=-math.inf)
    points = list(points)
    names = [f"point {k}" for k in range(len(points))] if names is None else list(names)
    if len(names) != len(points):
        raise ContactError(f"{len(points)} points need as many names, got {len(names)}")
    _check_contacts(model, [Contact(body, p, n, mu, name=name)     # now, not at the
                            for (body, p), name in zip(points, names)])    # first touch

    def contacts(q):
        X0 = forward_kinematics(model, q)
        out = []
        for (b, p), name in zip(points, names):
            R, o = body_pose(X0[b])
            gap = n @ (o + R @ np.asarray(p, dtype=float)) - offset
            if gap < margin:
                out.append(Contact(b, p, n, mu, gap=max(gap, 0.0), name=name))
        return out

    return contacts


def _contacts_at(contacts, q):
    """The contacts at q: ``contacts`` itself (a Contact or a list of them) or what a
    function of q returns (None: none)."""
    if callable(contacts):
        contacts = contacts(q)
    return [] if contacts is None else _contact_list(contacts)


def step(model, q, qd, tau, h, contacts, **solver_options):
    """One time step through contact (semi-implicit, velocity level):
    q̇* = q̇ + h H⁻¹(τ − C) (ABA), q̇⁺ = q̇* + H⁻¹ Jᵀ P (:func:`.solve_contacts`; the
    impulse response by an ABA at rest without gravity), q⁺ = q ⊕ h q̇⁺ on the
    configuration's Lie group (:func:`rbdlearn.integrate_q`). ``contacts``: a list of
    :class:`.Contact`, one Contact, or a function of q giving them (empty or None: no
    contact this step). Returns ``(q⁺, q̇⁺, solution)``, ``solution`` None without
    contacts."""
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    h = _step_length(h)
    qd_free = qd + h * aba(model, q, qd, tau)
    active = _contacts_at(contacts, q)
    sol = solve_contacts(model, q, qd_free, active, h, **solver_options) if active else None
    qd_new = qd_free if sol is None else qd_free + sol.dqd
    return integrate_q(model, q, h * qd_new), qd_new, sol


@dataclass(frozen=True, eq=False)
class ContactTrajectory(Trajectory):
    """A run of :func:`simulate`: the :class:`~rbdlearn.integrate.Trajectory` ``t`` (n+1),
    ``q``, ``qd`` (rows), and per step the list ``solutions`` (a :class:`.ContactSolution`
    or None) and the ``contacts`` used."""
    solutions: list = field(default_factory=list)
    contacts: list = field(default_factory=list)


def simulate(model, q0, qd0, t_end, dt, *, contacts, tau=None, **solver_options):
    """Steps of :func:`step` from (q0, qd0) at t = 0 to ``t_end``, of length ``dt`` (the
    last one shortened to end at ``t_end``, :func:`~rbdlearn.integrate.time_grid`);
    ``contacts`` as in :func:`step`; ``tau``: joint forces, a vector or a function of
    (t, q, qd) (default zero); ``solver_options`` go to :func:`.solve_contacts`. A state
    that overflows, or a singular mass matrix, ends the run with a ValueError that says
    when; a run whose states would not fit in ``integrate.MAX_TRAJECTORY_BYTES`` is
    refused before it starts. Returns a :class:`ContactTrajectory`."""
    q, qd = check_state(model, q=q0, qd=qd0)
    # t, q and q̇ of every step (the solutions kept with them come on top)
    t = time_grid(t_end, dt, 1 + model.nq + model.nv, "contact.simulate")
    tau_of = joint_forces(model, tau)
    Q, QD, sols, used = [q], [qd], [], []
    for k in range(len(t) - 1):
        h = t[k + 1] - t[k] if t[k + 1] < t[k] + dt * (1 - 1e-9) else dt   # whole or last
        u = tau_of(t[k], q, qd)
        active = _contacts_at(contacts, q)
        with step_guard(model, t[k], t[k + 1], qd, invalid=True, step="dt"):
            q, qd, sol = step(model, q, qd, u, h, active, **solver_options)
        Q.append(q), QD.append(qd), sols.append(sol), used.append(active)
    return ContactTrajectory(t, np.array(Q), np.array(QD), sols, used)
