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
(:func:`pgs`, which also takes the circular cone). The problems a simulation produces are
degenerate (redundant contacts, ties decided by round-off), so :func:`lemke` guards its
walk and checks its answer, and :func:`solve_contacts` checks every answer against the
contact conditions themselves (:func:`contact_residuals`) before returning it.
"""

import math
import numbers
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from .errors import RbdlearnError
from .aba import _impulse_response, aba, inter_body_inertia, theta_recursion
from .crb import crba
from .integrate import check_run_size, step_guard
from .joints import Spherical, swing_twist_limit_violation
from .kinematics import (_point_velocity, _velocities, base_transforms, body_pose,
                         forward_kinematics, point_jacobian, point_velocity)
from .model import check_state, integrate_q, is_body
from .spatial import cross3, quat_to_rot, skew

__all__ = ["ContactImpulse", "contact_impulse", "joint_limit_impulse", "Contact",
           "ContactError", "LCPError", "LCPRayTermination", "ContactWarning", "delassus",
           "delassus_dense", "contact_velocities", "friction_directions", "contact_lcp",
           "LCPSolution", "lemke", "pgs", "ContactResiduals", "contact_residuals",
           "ContactSolution", "solve_contacts", "MU_LCP", "plane_contacts", "step",
           "ContactTrajectory", "simulate"]

_EYE3 = np.eye(3)


class ContactError(RbdlearnError):
    """A contact that the solvers cannot take; the message names the contact."""


class LCPError(ContactError):
    """An LCP that the solver could not solve to its tolerance: the message names the
    problem and the residual."""


class LCPRayTermination(LCPError):
    """Lemke's algorithm left along an unbounded ray (or ran out of pivots): it found no
    solution."""


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


def _count(x, what, lo=1):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < lo:
        raise ContactError(f"{what} must be an integer ≥ {lo}, got {x!r}")
    return int(x)


def _step_length(h):
    """A time step: a finite number > 0 (s)."""
    if isinstance(h, bool) or not isinstance(h, numbers.Real) or not math.isfinite(h) \
            or h <= 0:
        raise ContactError(f"time step h must be a finite number > 0, got {h!r}")
    return float(h)


def _tangents(n):
    """Unit tangents (t1, t2) with (t1, t2, n) right-handed; t1 = x, t2 = y for n = z."""
    a = _EYE3[0] if abs(n[0]) < 0.9 else _EYE3[1]
    t1 = a - (a @ n) * n
    t1 /= np.linalg.norm(t1)
    return np.column_stack([t1, cross3(n, t1)])


def _moves(model, i):
    """True when some joint between body i and the base has a degree of freedom."""
    return any(model.joints[k].nv > 0 for k in model.ancestors(i))


def _contact_list(contacts):
    """``contacts`` as a list: a list, tuple or other iterable of :class:`Contact` (a
    generator is read once), or a single Contact."""
    if isinstance(contacts, (Contact, _Checked)):
        return [contacts]
    if isinstance(contacts, (str, bytes, dict)) or not hasattr(contacts, "__iter__"):
        raise ContactError(f"contacts must be a Contact or a list of them, got "
                           f"{type(contacts).__name__}")
    return list(contacts)


def _check_contacts(model, contacts):
    """The checked contacts; ``model=None`` checks only what needs no model (normal, μ,
    gap), for the solvers that take K and v directly (``sides`` is then empty)."""
    contacts = _contact_list(contacts)
    if contacts and all(isinstance(c, _Checked) for c in contacts):
        return contacts
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
            if role == "other" and body == c.body:
                raise ContactError(f"{where} touches itself: body and other must differ")
            if model.I[body][5, 5] <= 0.0:                         # the body's mass
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
    return R @ np.hstack([-skew(p), _EYE3])


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


def _delassus(model, q, sides):
    """:func:`delassus` from the contacts' ``sides`` (:func:`_sides_Phi`)."""
    T_Theta = theta_recursion(model, q)
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
    cross-check of :func:`delassus`, O(nv³)."""
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
    asym = np.abs(K - K.T).max()
    if asym > 1e-9 * np.abs(K).max():
        raise ContactError(f"K must be symmetric (a Delassus matrix J H⁻¹ Jᵀ), got "
                           f"max |K − Kᵀ| = {asym:.3g} against max |K| = "
                           f"{np.abs(K).max():.3g}")
    lowest = np.linalg.eigvalsh(K)[0]
    if lowest < -1e-9 * np.abs(K).max():
        raise ContactError(f"K must be positive semi-definite (a Delassus matrix J H⁻¹ "
                           f"Jᵀ), got an eigenvalue {lowest:.3g}")
    return K, v.reshape(m, 3)


def _check_mobility(K, cs):
    """A point that cannot move along its normal (nᵀKn = 0) cannot be held by an impulse."""
    for k, c in enumerate(cs):
        if c.n @ K[3 * k:3 * k + 3, 3 * k:3 * k + 3] @ c.n <= 1e-12 * max(np.trace(K), 1e-300):
            raise ContactError(f"{c.label}: the point cannot move along its normal "
                               f"(nᵀKn = 0), so no impulse can hold it")


def _bias(cs, v, h):
    """n·v* + φ/h per contact (φ/h omitted for a pure impulse, h = None)."""
    if h is not None:
        _step_length(h)
    out = np.array([c.n @ v[k] + (c.gap / h if h else 0.0) for k, c in enumerate(cs)])
    for c, b in zip(cs, out):
        if not math.isfinite(b):
            raise ContactError(f"{c.label}: n·v + gap/h = {b} is not finite (gap "
                               f"{c.gap:g} m over the step h = {h:g} s)")
    return out


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


@dataclass(frozen=True)
class LCPSolution:
    """A solution of w = M z + b, z ≥ 0, w ≥ 0, zᵀw = 0 found by :func:`lemke`, with its
    check: ``residual`` = max_i |min(z_i, w_i)| in the equilibrated variables, relative
    to their scale (0 exactly at a solution); ``pivots`` of the accepted walk; the
    ``covering`` vector's number (0: e = 1) and the ``regularization`` ε it used."""
    z: np.ndarray
    w: np.ndarray
    residual: float
    pivots: int
    covering: int = 0
    regularization: float = 0.0


def _equilibrate(M, sweeps=8):
    """s > 0 such that every row and column of S M S (S = diag s) has largest entry ≈ 1
    (Ruiz's symmetric scaling). LCP(M, b) and LCP(SMS, Sb) have the same solutions,
    z = S z′, w = S⁻¹ w′, and on the second the contact LCP's mixed units (impulses,
    speeds) become numbers of one size, so one tolerance serves every row."""
    s, A = np.ones(len(M)), np.abs(M)
    for _ in range(sweeps):
        S = s[:, None] * A * s
        r = np.maximum(S.max(axis=0), S.max(axis=1))
        s /= np.sqrt(np.where(r > 0.0, r, 1.0))
    return s


def _natural_residual(M, b, z):
    """max_i |min(z_i, w_i)| / scale, w = M z + b, scale = max(|b|, |z|): zero exactly at
    a solution; it measures a negative w_i and a pair with both z_i, w_i > 0 alike."""
    return float(np.abs(np.minimum(z, M @ z + b)).max()
                 / max(np.abs(b).max(), np.abs(z).max(), np.finfo(float).tiny))


def _lex_min_ratio(x, Binv, col, rows, is_z0):
    """The row that leaves: the smallest ratio x_i / col_i over ``rows`` (col_i > 0; an
    x_i below zero by round-off counts as 0). Ratios within 1e-12 of the smallest tie;
    if z0's row is among them it leaves (the walk ends on a solution); otherwise the tie
    goes to the lexicographically smallest row of B⁻¹ / col, column by column — the rule
    that keeps a degenerate walk from cycling (Cottle, Pang and Stone, §4.9)."""
    keys = [np.maximum(x, 0.0)] + list(Binv.T)
    for k, key in enumerate(keys):
        ratio = key[rows] / col[rows]
        rows = rows[ratio <= ratio.min() + 1e-12 * max(1.0, np.abs(key).max())]
        if k == 0 and is_z0[rows].any():
            return rows[is_z0[rows]][0]
        if rows.size == 1:
            break
    return rows[0]


def _lemke_walk(M, b, e, max_pivots, what):
    """One walk of complementary pivoting on I w − M z − e z0 = b from w = b: z0 enters,
    and each pivot brings in the complement of the variable that just left, until z0
    leaves. The basic solution and the entering column are computed from M and b at
    every pivot (B⁻¹ from the columns of the current basis), never by updating a
    tableau, so round-off cannot accumulate along the walk. Returns (z, pivots)."""
    n = len(b)
    A = np.hstack([np.eye(n), -M, -e[:, None]])       # columns: w 0..n−1, z n..2n−1, z0 2n
    basis = np.arange(n)
    start = b / e                                     # z0 = −min(b/e) makes every w ≥ 0
    # z0 enters; of the rows tied for the smallest b/e the last leaves (lexicographic)
    r = np.flatnonzero(start <= start.min() + 1e-12 * max(1.0, -start.min()))[-1]
    entering = 2 * n
    for pivots in range(1, max_pivots + 1):
        leaving, basis[r] = basis[r], entering
        Binv = np.linalg.inv(A[:, basis])
        x = Binv @ b                                  # the basic variables
        if leaving == 2 * n:                          # z0 left: a solution
            z = np.zeros(2 * n + 1)
            z[basis] = x
            return np.maximum(z[n:2 * n], 0.0), pivots
        entering = leaving + n if leaving < n else leaving - n       # the complement
        col = Binv @ A[:, entering]                   # how the basic variables respond
        # a pivot must stand clear of the round-off in B⁻¹a: a smaller one is a zero
        rows = np.flatnonzero(col > 1e-9 * np.abs(Binv).sum(axis=1).max()
                              * np.abs(A[:, entering]).max())
        if rows.size == 0:
            var = f"w[{entering}]" if entering < n else f"z[{entering - n}]"
            raise LCPRayTermination(f"{what}: Lemke's algorithm ended on a ray ({var} can "
                                    f"grow without bound)")
        r = _lex_min_ratio(x, Binv, col, rows, basis == 2 * n)
    raise LCPRayTermination(f"{what}: Lemke's algorithm stopped after {max_pivots} pivots")


def lemke(M, b, max_pivots=None, what="LCP", tol=1e-9):
    """z ≥ 0 with w = M z + b ≥ 0 and zᵀw = 0, by Lemke's complementary pivoting
    (:func:`_lemke_walk`), returned as an :class:`LCPSolution` only after the check
    ``residual ≤ tol``. Four guards, besides that check, make it hold on the degenerate
    problems that simulations produce (redundant contacts, ties at the round-off level):

    1. the problem is equilibrated first (:func:`_equilibrate`), so tolerances mean the
       same in every row;
    2. every pivot recomputes the basic solution from M and b (no tableau drift), and
       a pivot must stand clear of the round-off of B⁻¹;
    3. ties in the ratio test are broken lexicographically, and z0 leaves when it can;
    4. if a walk ends on a ray or its answer fails the check, the walk is repeated with
       two other covering vectors e (any e > 0 is valid; each takes its own path), then
       on M + εI with ε = 1e-12, 1e-11, 1e-10 (relative; a strictly copositive matrix,
       on which Lemke cannot end on a ray). A regularized answer is accepted only if it
       passes the check on the original problem.

    Raises :class:`LCPRayTermination` (naming ``what``) when every walk ended on a ray or
    at ``max_pivots`` (default 50 n), :class:`LCPError` when walks ended but no answer
    passed the check."""
    M, b = np.asarray(M, dtype=float), np.asarray(b, dtype=float)
    n = b.shape[0] if b.ndim == 1 else -1
    if (n < 1 or M.shape != (n, n)
            or not (np.all(np.isfinite(M)) and np.all(np.isfinite(b)))):
        raise LCPError(f"{what}: lemke needs a finite n x n M and n-vector b, got "
                       f"shapes {M.shape}, {b.shape}")
    cap = 50 * n if max_pivots is None else _count(max_pivots, "max_pivots")
    tol = _real(tol, "tol")
    s = _equilibrate(M)
    Ms, bs = s[:, None] * M * s, s * b
    if np.all(bs >= 0.0):
        return LCPSolution(np.zeros(n), b.copy(), 0.0, 0)
    ramp = np.arange(n) / n
    attempts = ([(k, e, 0.0) for k, e in enumerate((np.ones(n), 1.0 + ramp, 2.0 - ramp))]
                + [(0, np.ones(n), eps) for eps in (1e-12, 1e-11, 1e-10)])
    failures = []
    for k, e, eps in attempts:
        try:
            zs, pivots = _lemke_walk(Ms + eps * np.eye(n), bs, e, cap, what)
        except (LCPRayTermination, np.linalg.LinAlgError) as err:
            failures.append(err)
            continue
        residual = _natural_residual(Ms, bs, zs)
        if residual <= tol:
            z = s * zs
            return LCPSolution(z, M @ z + b, residual, pivots, k, eps)
        failures.append(LCPError(f"{what}: residual {residual:.2g} > tol {tol:g}"))
    tries = f"on all {len(attempts)} tries (3 covering vectors, 3 regularizations)"
    if all(isinstance(f, LCPRayTermination) for f in failures):
        raise LCPRayTermination(f"{failures[0]}, {tries}: no solution found")
    raise LCPError(f"{failures[0]}; no answer passed the check {tries}")


def _unit_polygon(d):
    """The friction pyramid's polygon of radius 1: its vertices (``friction_directions``),
    its edges and their outward normals (d x 2 each), and each edge's line o·x = reach
    (o its outward normal), built once per solve."""
    dirs = friction_directions(d)
    edges = np.roll(dirs, -1, axis=0) - dirs
    outward = np.column_stack([edges[:, 1], -edges[:, 0]])            # anticlockwise
    return dirs, edges, outward, np.einsum("ij,ij->i", outward, dirs)


def _project(x, radius, polygon):
    """The Euclidean projection of x (2-vector) onto the friction set of the given
    radius: the disc (``polygon is None``, the cone) or ``radius`` times the unit polygon
    (vertices, edges, outward normals) of ``_unit_polygon`` (the pyramid)."""
    if radius <= 1e-100:                 # zero (or so small that its square underflows)
        return np.zeros(2)
    if polygon is None:
        r = np.linalg.norm(x)
        return x if r <= radius else x * (radius / r)
    dirs, edges, outward, reach = polygon
    if (outward @ x - radius * reach).max() <= 0.0:      # inside every edge's line
        return x
    V, edges = radius * dirs, radius * edges
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
    error relative to the problem's speed V (the largest of |v*| and φ/h): it stops when
    it is ≤ ``tol``. If it is still above after ``max_iter`` sweeps, a
    :class:`ContactWarning` names the worst contact and the residual."""
    if friction not in ("pyramid", "cone"):
        raise ContactError(f"friction must be 'pyramid' or 'cone', got {friction!r}")
    polygon = _unit_polygon(d) if friction == "pyramid" else None
    tol, max_iter = _real(tol, "tol"), _count(max_iter, "max_iter")
    cs = _check_contacts(None, contacts)
    K, v = _check_Kv(K, v, len(cs))
    m = len(cs)
    P = np.zeros((m, 3))
    vel = v.copy()                                       # v⁺ = v* + K P, with P = 0
    Knn = [c.n @ K[3 * k:3 * k + 3, 3 * k:3 * k + 3] @ c.n for k, c in enumerate(cs)]
    _check_mobility(K, cs)
    rt = [max(np.linalg.eigvalsh(c.T.T @ K[3 * k:3 * k + 3, 3 * k:3 * k + 3] @ c.T)[-1],
              1e-12 * Knn[k]) for k, c in enumerate(cs)]    # K_tt = 0: a long step
    phi = _bias(cs, np.zeros((m, 3)), h)                 # φ/h (0 without h)
    V = max(np.abs(v).max(), phi.max(), np.finfo(float).tiny)   # the problem's speed

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
        for k, c in enumerate(cs):                       # natural-map residual / V
            Pn, wn = c.n @ P[k], c.n @ vel[k] + phi[k]
            Pt = c.T.T @ P[k]
            err_t = rt[k] * math.hypot(*(Pt - _project(Pt - c.T.T @ vel[k] / rt[k],
                                                       c.mu * Pn, polygon)))
            errors[k] = max(abs(min(Knn[k] * Pn, wn)), err_t) / V
        if errors.max() <= tol:
            return P, float(errors.max()), it
    worst = int(np.argmax(errors))
    warnings.warn(f"PGS did not converge in {max_iter} sweeps: residual {errors.max():.3g} "
                  f"> tol {tol:g} (relative to the speed {V:.3g} m/s), largest at "
                  f"{cs[worst].label}", ContactWarning, stacklevel=2)
    return P, float(errors.max()), max_iter


@dataclass(frozen=True)
class ContactResiduals:
    """How far impulses P are from solving the contact problem, each relative to the
    problem's scale and 0 exactly at a solution, and the contact ``where`` the worst is:

    - ``normal``: |min(P_n / P_s, (n·v⁺ + φ/h) / V)|, which is > 0 when the ground pulls,
      when the point ends inside, or when both the impulse and the gap are open;
    - ``friction``: how far P_t lies outside the friction set F of radius μ P_n, / P_s;
    - ``dissipation``: |P_t − proj_F(P_t − v_t⁺ P_s/V)| / P_s, zero exactly when friction
      takes the most energy F allows (P_t inside F and the point sticks, or P_t on the
      edge of F where −v_t⁺ points out of it).

    V: the largest of |v*|, |v⁺| and φ/h; P_s: the larger of |P| and V / max Kᵢᵢ. A P_n
    within the round-off of P counts as 0 (with μ = 1e12 a round-off P_n would carry
    friction). Written from the contact conditions, not from any solver's variables."""
    normal: float
    friction: float
    dissipation: float
    where: str

    @property
    def worst(self):
        return max(self.normal, self.friction, self.dissipation)


def contact_residuals(K, v, contacts, P, h=None, d=4, friction="pyramid"):
    """The :class:`ContactResiduals` of impulses P (m x 3, world axes) for the
    ``contacts`` with Delassus matrix K and free velocities v (m x 3): the check every
    solution of :func:`solve_contacts` passes. ``friction``: the set, the pyramid of
    ``d`` directions or the cone."""
    if friction not in ("pyramid", "cone"):
        raise ContactError(f"friction must be 'pyramid' or 'cone', got {friction!r}")
    polygon = _unit_polygon(d) if friction == "pyramid" else None
    cs = _check_contacts(None, contacts)
    K, v = _check_Kv(K, v, len(cs))
    P = np.asarray(P, dtype=float)
    if P.shape != v.shape or not np.all(np.isfinite(P)):
        raise ContactError(f"P must be finite, one 3-vector per contact {v.shape}, got "
                           f"{P.shape}")
    v_after = v + (K @ P.ravel()).reshape(v.shape)
    phi = _bias(cs, np.zeros(v.shape), h)
    V = max(np.abs(v).max(), np.abs(v_after).max(), phi.max(), np.finfo(float).tiny)
    P_s = max(np.abs(P).max(), V / np.diag(K).max())
    rows = []
    for c, Pk, vk, phik in zip(cs, P, v_after, phi):
        Pn, x, u = c.n @ Pk, c.T.T @ Pk, c.T.T @ vk
        radius = c.mu * Pn if Pn > 64 * np.finfo(float).eps * np.abs(P).max() else 0.0
        outside = np.linalg.norm(x - _project(x, radius, polygon))
        slip = np.linalg.norm(x - _project(x - u * (P_s / V), radius, polygon))
        rows.append((abs(min(Pn / P_s, (c.n @ vk + phik) / V)), outside / P_s, slip / P_s))
    rows = np.array(rows)
    worst = cs[int(np.argmax(rows.max(axis=1)))].label
    return ContactResiduals(*(float(r) for r in rows.max(axis=0)), worst)


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
        raise RbdlearnError(f"contact normal must be a finite non-zero 3-vector, got {n!r}")
    n = n / np.linalg.norm(n)
    for val, name, hi in ((e, "restitution e", 1.0), (mu, "friction mu", np.inf)):
        if not (isinstance(val, numbers.Real) and 0.0 <= val <= hi):
            raise RbdlearnError(f"{name} must be a number in [0, {hi}], got {val!r}")
    v = point_velocity(model, q, qd, i, p, frame="world")
    Phi = _Phi(forward_kinematics(model, q), i, np.asarray(p, dtype=float))
    K = Phi @ inter_body_inertia(model, q, i, i) @ Phi.T
    vn = float(n @ v)
    if vn >= 0.0:
        return ContactImpulse(np.zeros(3), np.zeros(model.nv), v, v.copy(), K, "none")
    if n @ K @ n < 1e-12 * np.trace(K):
        raise RbdlearnError(f"body {i} (joint '{model.names[i]}'): the contact point cannot "
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
                raise RbdlearnError("sliding impact: the friction impulse would drive the "
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
    if not (is_body(model, i) and isinstance(model.joints[i], Spherical)):
        raise RbdlearnError(f"joint_limit_impulse needs the body index of a spherical joint, "
                            f"got {i!r}")
    if not (isinstance(e, numbers.Real) and 0.0 <= e <= 1.0):
        raise RbdlearnError(f"restitution e must be a number in [0, 1], got {e!r}")
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
        raise RbdlearnError(f"joint '{model.names[i]}': the limit LCP has no solution")
    return lam, -Y @ lam


@dataclass
class ContactSolution:
    """The contact impulses of one step: ``P`` (m x 3, world axes, on ``body``; −P on
    ``other``), their normal parts ``P_n`` (m), ``v_before`` / ``v_after`` the contact
    velocities (m x 3) without and with the impulses, ``dqd`` = H⁻¹ Jᵀ P, ``solver``,
    ``residuals`` (:class:`ContactResiduals`, the check the answer passed), and the
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


MU_LCP = 1e3     # the largest μ that solve_contacts hands to Lemke (see there)


def solve_contacts(model, q, qd, contacts, h=None, solver="lemke", d=4,
                   friction="pyramid", tol=1e-9, max_iter=5000, accept=1e-6):
    """The impulses P that the ``contacts`` (a list of :class:`Contact`, one Contact, or a
    function of q giving them) apply to a system moving with ``qd`` (for a time step:
    the free velocity q̇*) at ``q``: the LCP of the module docstring with the Delassus
    operator of :func:`delassus`, by ``solver`` "lemke" (the pyramid with ``d``
    directions, to the relative tolerance ``tol``) or "pgs" (``friction`` "pyramid" or
    "cone", to ``tol``, at most ``max_iter`` sweeps). ``h``: the step, for the gaps
    (None: a pure impulse, gaps ignored).

    Lemke's LCP takes μ at most ``MU_LCP`` (1e3): a larger μ lets it apply friction
    μ P_n on a normal impulse P_n that is only round-off (with μ = 1e12, 1e-17 N s
    carries 1e-5 N s of friction). The answer is checked against the true μ: it is one
    of the true problem unless a pressed contact needs friction beyond 1e3 P_n.

    Every answer is checked against the contact conditions (:func:`contact_residuals`)
    before it is returned: beyond ``accept`` (relative), Lemke's answer raises
    :class:`LCPError` and PGS's warns (:class:`ContactWarning`, as when it stops before
    ``tol``). Returns a :class:`ContactSolution`; ``dqd`` comes from one ABA at rest
    without gravity."""
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
    K = _delassus(model, q, sides)
    v = _contact_velocities(X0, body_v, cs)
    labels = ", ".join(c.label for c in cs)
    if solver == "lemke":
        _check_mobility(K, cs)                  # (pgs checks it itself)
        # μ above MU_LCP enters the LCP as MU_LCP; the check below uses the true μ
        capped = [replace(c, mu=min(c.mu, MU_LCP)) for c in cs]
        M, b, G = contact_lcp(K, v, capped, h, d)
        lcp = lemke(M, b, what=f"contact LCP of {labels}", tol=tol)
        P = (G @ lcp.z[:G.shape[1]]).reshape(-1, 3)
        out = dict(z=lcp.z, w=lcp.w, residual=lcp.residual, iterations=lcp.pivots)
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
    dqd = _impulse_response(model, q, f_ext=f_ext)
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
    q̇* = q̇ + h H⁻¹(τ − C) (ABA), q̇⁺ = q̇* + H⁻¹ Jᵀ P (:func:`solve_contacts`; the
    impulse response by an ABA at rest without gravity), q⁺ = q ⊕ h q̇⁺ on the
    configuration's Lie group (:func:`rbdlearn.integrate_q`). ``contacts``: a list of
    :class:`Contact`, one Contact, or a function of q giving them (empty or None: no
    contact this step). Returns ``(q⁺, q̇⁺, solution)``, ``solution`` None without
    contacts."""
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
    """``n_steps`` (≥ 1) steps of :func:`step` of length ``h`` from (q0, qd0); ``tau``:
    joint forces, a vector or a function of (t, q, qd) (default zero); ``contacts`` as
    in :func:`step`. A state that overflows, or a singular mass matrix, ends the run with
    a ValueError that says when; a run whose states would not fit in
    ``integrate.MAX_TRAJECTORY_BYTES`` is refused before it starts."""
    q, qd = check_state(model, q=q0, qd=qd0)
    h, n_steps = _step_length(h), _count(n_steps, "n_steps")
    # t, q and q̇ of every step (the solutions kept with them come on top)
    check_run_size(n_steps, 1 + model.nq + model.nv, "contact.simulate", f" of h = {h:g}")
    t, Q, QD, sols, used = [0.0], [q], [qd], [], []
    for k in range(n_steps):
        u = np.zeros(model.nv) if tau is None else (tau(t[-1], q, qd) if callable(tau)
                                                   else tau)
        active = _contacts_at(contacts, q)
        with step_guard(model, t[-1], t[-1] + h, qd, invalid=True, step="h"):
            q, qd, sol = step(model, q, qd, u, h, active, **solver_options)
        t.append((k + 1) * h), Q.append(q), QD.append(qd), sols.append(sol), used.append(active)
    return ContactTrajectory(np.array(t), np.array(Q), np.array(QD), sols, used)
