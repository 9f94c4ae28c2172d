"""Several point contacts with Coulomb friction, solved at the velocity level (chapter 2,
§6; seed 000 §2.8 for the inverse inertia between bodies).

A time step of length h first moves the velocities without contact forces,
``q̇* = q̇ + h H⁻¹(τ − C)`` (one ABA), then applies contact impulses P (world
coordinates, on body ``body`` at its point, and −P on ``other`` if it is a body):

    q̇⁺ = q̇* + H⁻¹ Jᵀ P,     v⁺ = v* + K P,     K = J H⁻¹ Jᵀ   (the Delassus operator)

with v the contact points' relative velocities (3 per contact, world axes). K is built
block by block from seed 000 §2.8: Λ_ab = J_a H⁻¹ J_bᵀ (``aba.inter_body_inertia``, the
Θ recursion) mapped to points by Φ = R [−p×  1], never by forming or inverting H.

Per contact k, with normal n, friction directions d_1 … d_d (a pyramid), gap φ ≥ 0:

    P = n P_n + Σ_j d_j β_j
    0 ≤ P_n  ⊥  n·v⁺ + φ/h ≥ 0            (no penetration at the end of the step)
    0 ≤ β_j  ⊥  d_j·v⁺ + λ ≥ 0            (friction opposes the sliding velocity)
    0 ≤ λ    ⊥  μ P_n − Σ_j β_j ≥ 0        (λ: the sliding speed; stick when λ = 0)

which is the linear complementarity problem (LCP) w = M z + b, z ≥ 0, w ≥ 0, zᵀw = 0 of
Stewart and Trinkle (1996) and Anitescu and Potra (1997), solved here by Lemke's
complementary pivoting (:func:`lemke`) or, contact by contact, by projected Gauss–Seidel
(:func:`pgs`, which also takes the circular cone).
"""

import math
import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np

from .aba import _impulse_response, aba, inter_body_inertia, theta_recursion
from .crb import crba
from .joints import Spherical, swing_twist_limit_violation
from .kinematics import body_pose, forward_kinematics, point_jacobian, point_velocity
from .model import check_state, integrate_q
from .spatial import inertia_params, quat_to_rot, skew

__all__ = ["ContactImpulse", "contact_impulse", "joint_limit_impulse", "Contact",
           "ContactError", "LCPRayTermination", "ContactWarning", "delassus",
           "delassus_dense", "contact_velocities", "friction_directions", "contact_lcp",
           "lemke", "pgs", "ContactSolution", "solve_contacts", "plane_contacts", "step",
           "ContactTrajectory", "simulate"]


class ContactError(ValueError):
    """A contact that the solvers cannot take; the message names the contact."""


class LCPRayTermination(ArithmeticError):
    """Lemke's algorithm left along an unbounded ray: it found no solution."""


class ContactWarning(RuntimeWarning):
    """An iterative contact solver stopped before its tolerance."""


@dataclass(frozen=True)
class Contact:
    """A point contact: ``point`` (coordinates of ``body``) touches the ground
    (``other = 0``) or the point ``other_point`` (coordinates of body ``other``).
    ``normal``: unit normal in world axes, pointing from ``other`` into ``body``;
    ``mu``: Coulomb friction coefficient; ``gap``: the distance φ ≥ 0 still open along
    the normal (the step lets it close: n·v⁺ ≥ −φ/h); ``name``: used in messages."""
    body: int
    point: tuple
    normal: tuple = (0.0, 0.0, 1.0)
    mu: float = 0.0
    other: int = 0
    other_point: tuple = (0.0, 0.0, 0.0)
    gap: float = 0.0
    name: str = ""


@dataclass
class _Checked:
    """A contact after :func:`_check_contacts`: its ``sides`` [(body, point, sign)],
    unit normal ``n``, tangent basis ``T`` (3x2), ``mu``, ``gap`` and ``label``."""
    sides: list
    n: np.ndarray
    T: np.ndarray
    mu: float
    gap: float
    label: str


def _vec3(x, what):
    a = np.asarray(x, dtype=float) if np.ndim(x) == 1 else None
    if a is None or a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ContactError(f"{what} must be a finite 3-vector, got {x!r}")
    return a


def _real(x, what, lo=0.0):
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x) \
            or x < lo:
        raise ContactError(f"{what} must be a finite number ≥ {lo:g}, got {x!r}")
    return float(x)


def _step_length(h):
    if _real(h, "time step h") == 0.0:
        raise ContactError("time step h must be > 0, got 0")
    return float(h)


def _tangents(n):
    """Unit tangents (t1, t2) with (t1, t2, n) right-handed; t1 = x, t2 = y for n = z."""
    a = np.eye(3)[0] if abs(n[0]) < 0.9 else np.eye(3)[1]
    t1 = a - (a @ n) * n
    t1 /= np.linalg.norm(t1)
    return np.column_stack([t1, np.cross(n, t1)])


def _moves(model, i):
    """True when some joint between body i and the base has a degree of freedom."""
    return any(model.joints[k].nv > 0 for k in model.ancestors(i))


def _check_contacts(model, contacts):
    """The checked contacts; ``model=None`` checks only what needs no model (normal, μ,
    gap), for the solvers that take K and v directly (``sides`` is then empty)."""
    if contacts and all(isinstance(c, _Checked) for c in contacts):
        return list(contacts)
    out = []
    for k, c in enumerate(contacts):
        if not isinstance(c, Contact):
            raise ContactError(f"contact {k}: expected a Contact, got {type(c).__name__}")
        label = f"contact {k}" + (f" ('{c.name}')" if c.name else "")
        sides = []
        for body, point, sign, role in ((c.body, c.point, 1.0, "body"),
                                        (c.other, c.other_point, -1.0, "other")):
            if model is None:
                break
            ok = isinstance(body, (int, np.integer)) and not isinstance(body, bool)
            if not ok or not (1 if role == "body" else 0) <= body <= model.N:
                raise ContactError(f"{label}: {role} must be a body index in "
                                   f"{'1' if role == 'body' else '0'}..{model.N} "
                                   f"(0: the ground), got {body!r}")
            p = _vec3(point, f"{label}: {role} point")
            if body == 0:
                continue
            where = f"{label}: body {body} ('{model.body_names[body]}')"
            if inertia_params(model.I[body], allow_massless=True)[0] <= 0.0:
                raise ContactError(f"{where} is massless: a contact needs a body with mass")
            if not _moves(model, body):
                raise ContactError(f"{where} cannot move (every joint to the base is "
                                   f"fixed): the point is inside a fixed body")
            sides.append((int(body), p, sign))
        n = _vec3(c.normal, f"{label}: normal")
        if np.linalg.norm(n) < 1e-12:
            raise ContactError(f"{label}: normal must be non-zero")
        n = n / np.linalg.norm(n)
        out.append(_Checked(sides, n, _tangents(n), _real(c.mu, f"{label}: friction mu"),
                            _real(c.gap, f"{label}: gap"), label))
    if not out:
        raise ContactError("no contacts given")
    return out


def _Phi(X0, body, p):
    """Φ = R [−p×  1] (3x6): body ``body``'s spatial velocity change → the point's
    velocity change in world axes; Φᵀ maps a point impulse to a spatial impulse."""
    R, _ = body_pose(X0[body])
    return R @ np.hstack([-skew(p), np.eye(3)])


def delassus(model, q, contacts):
    """The Delassus operator K = J H⁻¹ Jᵀ (3m x 3m, world axes, contact by contact)
    built from seed 000 §2.8: block (k, l) = Σ s_a s_b Φ_a Λ_ab Φ_bᵀ over the bodies a of
    contact k and b of contact l (sign s = +1 for ``body``, −1 for ``other``), with
    Λ_ab = ``inter_body_inertia(model, q, b, a)`` from one Θ recursion."""
    (q,) = check_state(model, q=q)
    cs = _check_contacts(model, contacts)
    T_Theta = theta_recursion(model, q)
    X0 = forward_kinematics(model, q)
    Lam = {}                                         # Λ_ab, once per pair of bodies
    K = np.zeros((3 * len(cs), 3 * len(cs)))
    for k, ck in enumerate(cs):
        for l, cl in enumerate(cs[:k + 1]):
            block = np.zeros((3, 3))
            for a, pa, sa in ck.sides:
                for b, pb, sb in cl.sides:
                    if (a, b) not in Lam:
                        Lam[a, b] = inter_body_inertia(model, q, b, a, T_Theta)
                    block += sa * sb * _Phi(X0, a, pa) @ Lam[a, b] @ _Phi(X0, b, pb).T
            K[3 * k:3 * k + 3, 3 * l:3 * l + 3] = block
            K[3 * l:3 * l + 3, 3 * k:3 * k + 3] = block.T           # K is symmetric
    return K


def _jacobian(model, q, cs):
    """J (3m x nv): v = J q̇, the points' relative velocities in world axes."""
    return np.vstack([sum(s * point_jacobian(model, q, b, p, frame="world")
                          for b, p, s in c.sides) for c in cs])


def delassus_dense(model, q, contacts):
    """J H⁻¹ Jᵀ from the point Jacobians and the inertia matrix (CRBA): the
    cross-check of :func:`delassus`, O(nv³)."""
    (q,) = check_state(model, q=q)
    J = _jacobian(model, q, _check_contacts(model, contacts))
    return J @ np.linalg.solve(crba(model, q), J.T)


def contact_velocities(model, q, qd, contacts):
    """The contacts' relative point velocities (m x 3, world axes)."""
    q, qd = check_state(model, q=q, qd=qd)
    return np.array([sum(s * point_velocity(model, q, qd, b, p, frame="world")
                         for b, p, s in c.sides)
                     for c in _check_contacts(model, contacts)])


def friction_directions(d):
    """The d unit directions of the friction pyramid in the tangent basis (d x 2):
    angles 2πj/d, so d = 4 gives ±t1, ±t2."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 3:
        raise ContactError(f"friction pyramid needs an integer d ≥ 3 directions, got {d!r}")
    a = 2 * np.pi * np.arange(d) / d
    return np.column_stack([np.cos(a), np.sin(a)])


def _check_Kv(K, v, m):
    K, v = np.asarray(K, dtype=float), np.asarray(v, dtype=float)
    if K.shape != (3 * m, 3 * m) or v.size != 3 * m:
        raise ContactError(f"{m} contacts need K of shape ({3 * m}, {3 * m}) and 3 "
                           f"velocities each, got K {K.shape} and v {v.shape}")
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(v))):
        raise ContactError("K and v must be finite")
    return K, v.reshape(m, 3)


def _check_mobility(K, cs):
    """A point that cannot move along its normal (nᵀKn = 0) cannot be held by an impulse."""
    for k, c in enumerate(cs):
        if c.n @ K[3 * k:3 * k + 3, 3 * k:3 * k + 3] @ c.n <= 1e-12 * max(np.trace(K), 1e-300):
            raise ContactError(f"{c.label}: the point cannot move along its normal "
                               f"(nᵀKn = 0), so no impulse can hold it")


def _bias(cs, v, h):
    """b_n = n·v* + φ/h per contact (φ/h omitted for a pure impulse, h = None)."""
    return np.array([c.n @ v[k] + (c.gap / h if h else 0.0) for k, c in enumerate(cs)])


def contact_lcp(K, v, contacts, h=None, d=4):
    """``(M, b, G)`` of the LCP w = M z + b with z = [P_n (m); β (m d); λ (m)] for the
    ``contacts`` (a list of :class:`Contact`), their Delassus matrix K
    (:func:`delassus`) and free velocities v (m x 3, :func:`contact_velocities`):

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


def lemke(M, b, max_pivots=None, what="LCP"):
    """z ≥ 0 with w = M z + b ≥ 0 and zᵀw = 0, by Lemke's complementary pivoting.

    An artificial variable z0 with covering vector e = 1 makes w = M z + b + e z0
    feasible at z = 0; each pivot brings in the complement of the variable that just
    left, until z0 leaves. Ties in the ratio test are broken lexicographically (rows
    of B⁻¹), so degenerate problems — redundant contacts — cannot cycle. Raises
    :class:`LCPRayTermination` (naming ``what``) if the entering column has no
    positive entry, and after ``max_pivots`` pivots (default 50 n)."""
    M, b = np.asarray(M, dtype=float), np.asarray(b, dtype=float)
    n = b.shape[0] if b.ndim == 1 else -1
    if n < 1 or M.shape != (n, n) or not (np.all(np.isfinite(M)) and np.all(np.isfinite(b))):
        raise ValueError(f"{what}: lemke needs a finite n x n M and n-vector b, got "
                         f"shapes {M.shape}, {b.shape}")
    if np.all(b >= 0):
        return np.zeros(n)
    # tableau [I | −M | −e | b]: columns 0..n−1 are w, n..2n−1 z, 2n z0
    tab = np.hstack([np.eye(n), -M, -np.ones((n, 1)), b[:, None]])
    basis = list(range(n))
    tol = 1e-12 * max(1.0, np.abs(M).max())
    ties = b <= b.min() + 1e-9 * max(1.0, abs(b.min()))
    r = int(np.flatnonzero(ties)[-1])                 # lexicographic: last of the ties
    entering = 2 * n
    for _ in range(max_pivots or 50 * n):
        tab[r] /= tab[r, entering]                    # pivot
        for i in range(n):
            if i != r:
                tab[i] -= tab[i, entering] * tab[r]
        leaving, basis[r] = basis[r], entering
        if leaving == 2 * n:                          # z0 left: a solution
            z = np.zeros(2 * n + 1)
            z[basis] = tab[:, -1]
            return np.maximum(z[n:2 * n], 0.0)
        entering = leaving + n if leaving < n else leaving - n   # the complement
        col = tab[:, entering]
        rows = np.flatnonzero(col > tol)
        if rows.size == 0:
            var = f"w[{entering}]" if entering < n else f"z[{entering - n}]"
            raise LCPRayTermination(f"{what}: Lemke's algorithm ended on a ray ({var} can "
                                    f"grow without bound): no solution found")
        # ratio test on [b | B⁻¹] / col, lexicographically: ratios within round-off of
        # the smallest are ties, decided by the next column
        for key in [-1] + list(range(n)):
            ratio = tab[rows, key] / col[rows]
            rows = rows[ratio <= ratio.min() + 1e-9 * max(1.0, abs(ratio.min()))]
            if rows.size == 1:
                break
        r = int(rows[0])
    raise LCPRayTermination(f"{what}: Lemke's algorithm stopped after {max_pivots or 50 * n} "
                            f"pivots without a solution")


def _unit_polygon(d):
    """The friction pyramid's polygon of radius 1: its vertices (``friction_directions``),
    its edges and their outward normals (d x 2 each), built once per solve."""
    dirs = friction_directions(d)
    edges = np.roll(dirs, -1, axis=0) - dirs
    return dirs, edges, np.column_stack([edges[:, 1], -edges[:, 0]])  # anticlockwise


def _project(x, radius, polygon):
    """The Euclidean projection of x (2-vector) onto the friction set of the given
    radius: the disc (``polygon is None``, the cone) or ``radius`` times the unit polygon
    (vertices, edges, outward normals) of ``_unit_polygon`` (the pyramid)."""
    if radius <= 1e-100:                 # zero (or so small that its square underflows)
        return np.zeros(2)
    if polygon is None:
        r = np.linalg.norm(x)
        return x if r <= radius else x * (radius / r)
    V, edges, outward = radius * polygon[0], radius * polygon[1], polygon[2]
    if np.all(np.einsum("ij,ij->i", outward, x - V) <= 0.0):
        return x
    s = np.clip(np.einsum("ij,ij->i", x - V, edges) / np.einsum("ij,ij->i", edges, edges),
                0.0, 1.0)
    foot = V + s[:, None] * edges                              # nearest point per edge
    return foot[np.argmin(np.linalg.norm(foot - x, axis=1))]


def pgs(K, v, contacts, h=None, d=4, friction="pyramid", tol=1e-9, max_iter=5000):
    """Projected Gauss–Seidel on the contact problem of the ``contacts`` (a list of
    :class:`Contact`) with Delassus matrix K (3m x 3m) and free velocities v (m x 3):
    each contact in turn updates its
    normal impulse, P_n ← max(0, P_n − (n·v⁺ + φ/h)/K_nn), then its tangential impulse,
    P_t ← proj(P_t − v_t⁺/r) onto the friction set {pyramid, cone} of radius μ P_n,
    with r the largest eigenvalue of its 2x2 block K_tt (a fixed point is exactly a
    solution: the friction impulse then maximizes dissipation over the set).
    Returns ``(P (m x 3), residual, iterations)``; the residual is the largest natural-map
    error, in m/s. If it is still above ``tol`` after ``max_iter`` sweeps, a
    :class:`ContactWarning` names the worst contact and the residual."""
    if friction not in ("pyramid", "cone"):
        raise ContactError(f"friction must be 'pyramid' or 'cone', got {friction!r}")
    polygon = _unit_polygon(d) if friction == "pyramid" else None
    cs = _check_contacts(None, contacts)
    K, v = _check_Kv(K, v, len(cs))
    m = len(cs)
    P = np.zeros((m, 3))
    vel = v.copy()                                       # v⁺ = v* + K P, with P = 0
    Knn = [c.n @ K[3 * k:3 * k + 3, 3 * k:3 * k + 3] @ c.n for k, c in enumerate(cs)]
    _check_mobility(K, cs)
    rt = [max(np.linalg.eigvalsh(c.T.T @ K[3 * k:3 * k + 3, 3 * k:3 * k + 3] @ c.T)[-1],
              1e-12 * Knn[k]) for k, c in enumerate(cs)]    # K_tt = 0: a long step
    phi = [c.gap / h if h else 0.0 for c in cs]

    def update(k, dP):                                  # v⁺ = v* + K P, kept current
        P[k] += dP
        vel[:] += (K[:, 3 * k:3 * k + 3] @ dP).reshape(m, 3)

    errors = np.zeros(m)
    for it in range(1, max_iter + 1):
        for k, c in enumerate(cs):
            Pn = c.n @ P[k]
            new = max(0.0, Pn - (c.n @ vel[k] + phi[k]) / Knn[k])
            update(k, (new - Pn) * c.n)
            Pt = c.T.T @ P[k]
            new_t = _project(Pt - c.T.T @ vel[k] / rt[k], c.mu * new, polygon)
            update(k, c.T @ (new_t - Pt))
        for k, c in enumerate(cs):                       # natural-map residual, m/s
            Pn, wn = c.n @ P[k], c.n @ vel[k] + phi[k]
            Pt = c.T.T @ P[k]
            err_t = rt[k] * np.linalg.norm(Pt - _project(Pt - c.T.T @ vel[k] / rt[k],
                                                         c.mu * Pn, polygon))
            errors[k] = max(abs(min(Knn[k] * Pn, wn)), err_t)
        if errors.max() <= tol:
            return P, float(errors.max()), it
    worst = int(np.argmax(errors))
    warnings.warn(f"PGS did not converge in {max_iter} sweeps: residual {errors.max():.3g} "
                  f"m/s > tol {tol:g}, largest at {cs[worst].label}", ContactWarning,
                  stacklevel=2)
    return P, float(errors.max()), max_iter


# ------------------------------------------------------------- one point, one impulse
#
# Chapter 2's single impacts (§5): one point against the ground, and a ball joint at its
# limit, each solved on its own; the LCP above generalizes both to many contacts.

@dataclass
class ContactImpulse:
    """Result of :func:`contact_impulse`: the impulse ``P`` on the body at the point
    (world coordinates), the joint velocity change ``dqd``, the point's velocity
    before and after (world), the 3x3 point inverse inertia ``K`` and ``mode``:
    "none" (separating), "normal" (frictionless), "stick" or "slide"."""
    P: np.ndarray
    dqd: np.ndarray
    v_before: np.ndarray
    v_after: np.ndarray
    K: np.ndarray
    mode: str


def contact_impulse(model, q, qd, i, p, n=(0.0, 0.0, 1.0), e=0.0, mu=0.0):
    """One point contact of body i with the ground, resolved as a single impulse.

    ``p``: the contact point in body-i coordinates; ``n``: the ground normal (world,
    pointing from the ground into body i); ``e``: coefficient of restitution; ``mu``:
    Coulomb friction coefficient. The point's inverse inertia comes from seed 000 §2.8:
    ``K = Φ Λ_ii Φᵀ`` (3x3), where ``Φ = R [−p×  1]`` maps body i's spatial acceleration
    to the point's linear acceleration in world coordinates (and ``Φᵀ`` a point force
    to a spatial force on the body), so ``Δv = K P``.
    If the point approaches the ground (``v_n = n·v < 0``) the impulse makes
    ``v_n⁺ = −e v_n``: with ``mu = 0`` along n only; with friction it first tries
    sticking (tangential ``v⁺ = 0``), accepted when ``|P_t| ≤ mu P_n``, otherwise
    slides: ``P = λ (n − mu d)`` with d the pre-impact slip direction (the usual
    one-shot approximation of an impact with slip). ``dqd = H⁻¹ J_iᵀ Φᵀ P``.
    """
    (q, qd) = check_state(model, q=q, qd=qd)
    n = np.asarray(n, dtype=float)
    if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) < 1e-12:
        raise ValueError(f"contact normal must be a finite non-zero 3-vector, got {n!r}")
    n = n / np.linalg.norm(n)
    for val, name, hi in ((e, "restitution e", 1.0), (mu, "friction mu", np.inf)):
        if not (isinstance(val, numbers.Real) and 0.0 <= val <= hi):
            raise ValueError(f"{name} must be a number in [0, {hi}], got {val!r}")
    v = point_velocity(model, q, qd, i, p, frame="world")
    Phi = _Phi(forward_kinematics(model, q), i, np.asarray(p, dtype=float))
    K = Phi @ inter_body_inertia(model, q, i, i) @ Phi.T
    vn = float(n @ v)
    if vn >= 0.0:
        return ContactImpulse(np.zeros(3), np.zeros(model.nv), v, v.copy(), K, "none")
    if n @ K @ n < 1e-12 * np.trace(K):
        raise ValueError(f"body {i} (joint '{model.names[i]}'): the contact point cannot "
                         f"move along the normal, so no impulse can stop it")
    mode = "normal"
    if mu > 0.0:
        P = np.linalg.lstsq(K, -e * vn * n - v, rcond=None)[0]           # stick
        Pn = P @ n
        mode = "stick"
        if (np.linalg.norm(K @ P + v + e * vn * n) > 1e-9 * max(1.0, np.abs(v).max())
                or np.linalg.norm(P - Pn * n) > mu * Pn):
            vt = v - vn * n
            d = vt if np.linalg.norm(vt) > 1e-12 else -(P - Pn * n)
            d = d / np.linalg.norm(d) if np.linalg.norm(d) > 0 else d
            dirn = n - mu * d
            if n @ K @ dirn <= 0.0:
                raise ValueError("sliding impact: the friction impulse would drive the "
                                 "point into the ground (a Painlevé-type case)")
            P, mode = -(1.0 + e) * vn / (n @ K @ dirn) * dirn, "slide"
    if mode == "normal":
        P = -(1.0 + e) * vn / (n @ K @ n) * n
    dqd = _impulse_response(model, q, f_ext={i: Phi.T @ P})
    return ContactImpulse(P, dqd, v, v + K @ P, K, mode)


def joint_limit_impulse(model, q, qd, i, swing_max, twist_max=math.pi, e=0.0):
    """The impulse that stops ball joint i at its cone-and-twist limit.

    ``g, G = swing_twist_limit_violation(R_i, swing_max, twist_max)`` gives the
    limit functions (g ≤ 0 allowed) and their rates ``ġ = G S_i q̇_i``. The limit
    acts between parent and child: a couple ``−G[:, :3]ᵀ λ`` on the child and its
    reaction on the parent, i.e. the generalized impulse ``−Jᵀ λ`` with the rows
    ``J = G S_i`` placed in joint i's columns — a joint-space impulse. For the rows at
    or beyond their limit (g ≥ 0) it solves the small LCP
    ``w = A λ − (1 + e) ġ ≥ 0, λ ≥ 0, λ·w = 0`` with ``A = J H⁻¹ Jᵀ`` (so an
    approaching row leaves with ``ġ⁺ = −e ġ``), by trying the active sets.
    Returns ``(lam, dqd)``, ``lam`` of length 2 (swing, twist) and
    ``dqd = −H⁻¹ Jᵀ λ`` (by ABA sweeps, not by forming H).
    """
    (q, qd) = check_state(model, q=q, qd=qd)
    if not (isinstance(i, (int, np.integer)) and 1 <= i <= model.N
            and isinstance(model.joints[i], Spherical)):
        raise ValueError(f"joint_limit_impulse needs the body index of a spherical joint, "
                         f"got {i!r}")
    if not (isinstance(e, numbers.Real) and 0.0 <= e <= 1.0):
        raise ValueError(f"restitution e must be a number in [0, 1], got {e!r}")
    qi = q[model.q_slices[i]]
    g, G = swing_twist_limit_violation(quat_to_rot(qi), swing_max, twist_max)
    J = np.zeros((2, model.nv))
    J[:, model.v_slices[i]] = G @ model.joints[i].S(qi)
    gd = J @ qd
    Y = np.column_stack([_impulse_response(model, q, tau=row) for row in J])   # H⁻¹ Jᵀ
    A, b = J @ Y, -(1.0 + e) * gd
    rows = [k for k in range(2) if g[k] >= 0.0]
    tol = 1e-12 * max(1.0, np.abs(b).max())
    lam = None
    for s in ([], [0], [1], [0, 1]):           # the small LCP by its active sets
        if not set(s) <= set(rows):
            continue
        lam_s = np.zeros(2)
        if s:
            try:
                lam_s[s] = np.linalg.solve(A[np.ix_(s, s)], -b[s])
            except np.linalg.LinAlgError:
                continue
        w = A @ lam_s + b
        if np.all(lam_s >= -tol) and all(w[k] >= -tol for k in rows):
            lam = lam_s
            break
    if lam is None:
        raise ValueError(f"joint '{model.names[i]}': the limit LCP has no solution")
    return lam, -Y @ lam


@dataclass
class ContactSolution:
    """The contact impulses of one step: ``P`` (m x 3, world axes, on ``body``; −P on
    ``other``), their normal parts ``P_n`` (m), ``v_before`` / ``v_after`` the contact
    velocities (m x 3) without and with the impulses, ``dqd`` = H⁻¹ Jᵀ P, ``solver``,
    and for Lemke the LCP ``z``, ``w`` (z = [P_n; β; λ]; λ is the sliding speed);
    for PGS ``residual`` and ``iterations``."""
    P: np.ndarray
    P_n: np.ndarray
    v_before: np.ndarray
    v_after: np.ndarray
    dqd: np.ndarray
    solver: str
    z: np.ndarray = None
    w: np.ndarray = None
    residual: float = 0.0
    iterations: int = 0


def solve_contacts(model, q, qd, contacts, h=None, solver="lemke", d=4,
                   friction="pyramid", tol=1e-9, max_iter=5000):
    """The impulses P that the ``contacts`` apply to a system moving with ``qd``
    (for a time step: the free velocity q̇*) at ``q``: the LCP of the module docstring
    with the Delassus operator of :func:`delassus`, by ``solver`` "lemke" (the pyramid
    with ``d`` directions) or "pgs" (``friction`` "pyramid" or "cone"). ``h``: the step,
    for the gaps (None: a pure impulse, gaps ignored). Returns a :class:`ContactSolution`;
    ``dqd`` comes from one ABA at rest without gravity."""
    q, qd = check_state(model, q=q, qd=qd)
    cs = _check_contacts(model, contacts)
    if h is not None:
        _step_length(h)
    K = delassus(model, q, cs)                  # cs: checked once, not again inside
    v = contact_velocities(model, q, qd, cs)
    if solver == "lemke":
        _check_mobility(K, cs)                  # (pgs checks it itself)
        M, b, G = contact_lcp(K, v, cs, h, d)
        labels = ", ".join(c.label for c in cs)
        z = lemke(M, b, what=f"contact LCP of {labels}")
        P = (G @ z[:G.shape[1]]).reshape(-1, 3)
        out = dict(z=z, w=M @ z + b)
    elif solver == "pgs":
        P, res, its = pgs(K, v, cs, h, d, friction, tol, max_iter)
        out = dict(residual=res, iterations=its)
    else:
        raise ContactError(f"solver must be 'lemke' or 'pgs', got {solver!r}")
    f_ext, X0 = {}, forward_kinematics(model, q)
    for c, Pk in zip(cs, P):
        for b_, p, s in c.sides:
            f_ext[b_] = f_ext.get(b_, 0.0) + s * _Phi(X0, b_, p).T @ Pk    # Φᵀ P
    dqd = _impulse_response(model, q, f_ext=f_ext)
    P_n = np.array([c.n @ Pk for c, Pk in zip(cs, P)])
    return ContactSolution(P, P_n, v, v + (K @ P.ravel()).reshape(-1, 3), dqd, solver, **out)


def plane_contacts(model, points, mu=0.0, normal=(0.0, 0.0, 1.0), offset=0.0, margin=0.05,
                   names=None):
    """A function ``q → [Contact]`` for candidate ``points`` [(body, point in body
    coordinates)] against the plane n·x = ``offset`` (world), the bodies on the side
    n·x ≥ offset: each point closer than ``margin`` becomes a contact with the ground,
    with gap φ = n·x − offset (0 once the point has sunk below the plane: the step does
    not push it out, which would add energy)."""
    n = _vec3(normal, "plane normal")
    n = n / np.linalg.norm(n)
    names = names or [f"point {k}" for k in range(len(points))]

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
    return list(contacts(q) if callable(contacts) else contacts)


def step(model, q, qd, tau, h, contacts, **solver_options):
    """One time step through contact (semi-implicit, velocity level):
    q̇* = q̇ + h H⁻¹(τ − C) (ABA), q̇⁺ = q̇* + H⁻¹ Jᵀ P (:func:`solve_contacts`; the
    impulse response by an ABA at rest without gravity), q⁺ = q ⊕ h q̇⁺ on the
    configuration's Lie group (:func:`rbdlearn.integrate_q`). ``contacts``: a list of
    :class:`Contact` or a function of q giving it (empty: no contact this step).
    Returns ``(q⁺, q̇⁺, solution)``, ``solution`` None without contacts."""
    q, qd, tau = check_state(model, q=q, qd=qd, tau=tau)
    h = _step_length(h)
    qd_free = qd + h * aba(model, q, qd, tau)
    active = _contacts_at(contacts, q)
    sol = solve_contacts(model, q, qd_free, active, h, **solver_options) if active else None
    qd_new = qd_free if sol is None else qd_free + sol.dqd
    return integrate_q(model, q, h * qd_new), qd_new, sol


@dataclass
class ContactTrajectory:
    """A run of :func:`simulate`: times ``t`` (n+1), ``q``, ``qd`` (rows), and per step
    the list ``solutions`` (a :class:`ContactSolution` or None) and ``contacts`` used."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    solutions: list = field(default_factory=list)
    contacts: list = field(default_factory=list)


def simulate(model, q0, qd0, h, n_steps, contacts, tau=None, **solver_options):
    """``n_steps`` steps of :func:`step` from (q0, qd0); ``tau``: joint forces, a vector
    or a function of (t, q, qd) (default zero); ``contacts`` as in :func:`step`."""
    q, qd = check_state(model, q=q0, qd=qd0)
    t, Q, QD, sols, used = [0.0], [q], [qd], [], []
    for k in range(int(n_steps)):
        u = np.zeros(model.nv) if tau is None else (tau(t[-1], q, qd) if callable(tau)
                                                   else tau)
        active = _contacts_at(contacts, q)
        q, qd, sol = step(model, q, qd, u, h, active, **solver_options)
        t.append((k + 1) * h), Q.append(q), QD.append(qd), sols.append(sol), used.append(active)
    return ContactTrajectory(np.array(t), np.array(Q), np.array(QD), sols, used)
