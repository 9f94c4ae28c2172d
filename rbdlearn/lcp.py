"""The contact problem and its solvers (Chapter 2 §6): the problem that ``rbdlearn.contact``
builds on a tree, stated without the tree, and solved.

A problem is the Delassus matrix K (3m x 3m), the free velocities v* (m x 3) and, per
contact, a :class:`Contact`'s normal n, friction coefficient μ and gap φ (its bodies and
points matter only to ``rbdlearn.contact``, which builds K and v* from them). The impulses
P must satisfy, with v⁺ = v* + K P (the chapter's ct-lcp, ct-lcp-matrix):

    0 ≤ P_n ⊥ n·v⁺ + φ/h ≥ 0,   P_t in the friction set of radius μ P_n, opposing slip.

With the friction pyramid this is the linear complementarity problem (LCP) w = M z + b,
z ≥ 0, w ≥ 0, zᵀw = 0 (``rbdlearn.contact.contact_lcp``), solved by Lemke's complementary
pivoting (:func:`.lemke`: its walk, the lexicographic ratio test, the equilibration and the
guards of the chapter's "Degenerate problems and round-off"); :func:`pgs`, projected Gauss–Seidel, solves
the problem contact by contact with the pyramid or the circular cone (the friction-set
projection ``_project``). :func:`contact_residuals` checks any answer against the
conditions themselves. Errors: :class:`ContactError` and its :class:`LCPError`,
:class:`LCPRayTermination`; an iterative solver stopping early warns with
:class:`ContactWarning`.
"""

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from .errors import RbdlearnError
from .spatial import cross3

__all__ = ["Contact", "ContactError", "LCPError", "LCPRayTermination", "ContactWarning",
           "friction_directions", "LCPSolution", "lemke", "pgs", "ContactResiduals",
           "contact_residuals"]

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


@dataclass(frozen=True)
class LCPSolution:
    """A solution of w = M z + b, z ≥ 0, w ≥ 0, zᵀw = 0 found by :func:`.lemke`, with its
    check: ``residual`` = ``max_i |min(z_i, w_i)|`` in the equilibrated variables, relative
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
    (``_lemke_walk()``), returned as an :class:`.LCPSolution` only after the check
    ``residual ≤ tol``. Four guards, besides that check, make it hold on the degenerate
    problems that simulations produce (redundant contacts, ties at the round-off level):

    1. the problem is equilibrated first (``_equilibrate()``), so tolerances mean the
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
    error relative to the problem's speed V (the largest of ``|v*|`` and φ/h): it stops when
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

    - ``normal``: ``|min(P_n / P_s, (n·v⁺ + φ/h) / V)|``, which is > 0 when the ground pulls,
      when the point ends inside, or when both the impulse and the gap are open;
    - ``friction``: how far P_t lies outside the friction set F of radius μ P_n, / P_s;
    - ``dissipation``: ``|P_t − proj_F(P_t − v_t⁺ P_s/V)| / P_s``, zero exactly when friction
      takes the most energy F allows (P_t inside F and the point sticks, or P_t on the
      edge of F where −v_t⁺ points out of it).

    V: the largest of ``|v*|``, ``|v⁺|`` and φ/h; P_s: the larger of ``|P|`` and V / max Kᵢᵢ. A P_n
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
    solution of :func:`.solve_contacts` passes. ``friction``: the set, the pyramid of
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
