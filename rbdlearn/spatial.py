"""Spatial vector algebra in Featherstone's [angular; linear] order.

A motion vector is ``v = [w; v_O]`` (angular velocity, velocity of the point at the
origin O); a force vector is ``f = [n_O; f]`` (moment about O, resultant force).
Their scalar product ``v @ f`` is power (Chapter 1, "motion and force spaces").

Every function here accepts float arrays and numpy object arrays of sympy
expressions, so the book can derive equations symbolically with the same code.

Batches: the functions also take a batch of vectors or matrices, arrays of shape
(..., 6) or (..., 6, 6) whose leading axes index states, and apply the same formula to
every state at once (numpy broadcasting: a single operand pairs with every state). The
products of a matrix and a vector are written ``mv(A, x)`` = A x and ``mtv(A, x)`` = Aᵀ x,
because numpy's ``A @ x`` reads a batch of vectors (K, 6) as one K x 6 matrix; ``mm(A, B,
…)`` is the matrix product A B … for one state or a batch.

Speed trick (single states): for one 6 x 6 matrix these helpers call ``ndarray.dot``,
which computes the same product as ``@`` at a half to a third of its cost on arrays this
small (``@`` is a general ufunc whose dispatch outweighs 36 multiplications).
"""

import math
import numbers

import numpy as np
from .errors import RbdlearnError

__all__ = [
    "skew", "unskew", "cross3", "rotx", "roty", "rotz", "exp_so3", "log_so3",
    "quat_to_rot", "rot_to_quat", "quat_mul", "quat_exp",
    "plux", "plux_parts", "inv_X", "force_X", "crm", "crf",
    "cross_motion", "cross_force", "mcI", "inertia_params",
    "to_linear_angular", "to_angular_linear", "cos_sin", "mm_flops", "trig_zero",
    "mv", "mtv", "mm",
    "PLANE_S", "plate_body", "hinge_S", "slider_S", "applied_force", "motion_centre_2d",
    "force_line_2d",
]


def _is_numeric(x):
    return isinstance(x, numbers.Real)


def cos_sin(theta):
    """(cos θ, sin θ) for a float, a sympy expression or an array of angles."""
    if _is_numeric(theta):
        return math.cos(theta), math.sin(theta)
    if isinstance(theta, np.ndarray) and theta.dtype != object:
        return np.cos(theta), np.sin(theta)
    import sympy
    return sympy.cos(theta), sympy.sin(theta)


def _dtype(*arrays):
    """float, or object when any input holds sympy expressions."""
    for a in arrays:
        if (a.dtype if isinstance(a, np.ndarray) else np.asarray(a).dtype) == object:
            return object
    return float


def _scalars(a):
    """The entries of a small vector as Python scalars (or sympy expressions):
    scalar arithmetic on these is several times faster than on numpy scalars. For a
    batch of vectors (..., n), the n component arrays: the same formulas then act on
    every state at once."""
    if not isinstance(a, np.ndarray):
        return list(a)
    return a.tolist() if a.ndim == 1 else [a[..., k] for k in range(a.shape[-1])]


def _assemble(entries, sample, dtype=None):
    """``np.array(entries)`` for a small vector or matrix written out entry by entry.
    ``sample`` is an entry that depends on every input: when it is an array over a batch
    of states, the result has the batch axes first, (..., *layout), each entry broadcast
    over the batch."""
    if not isinstance(sample, np.ndarray) or sample.ndim == 0:
        return np.array(entries, dtype=dtype)
    nested = isinstance(entries[0], (list, tuple))
    layout = (len(entries), len(entries[0])) if nested else (len(entries),)
    out = np.empty(sample.shape + layout, dtype=float if dtype is None else dtype)
    for i, row in enumerate(entries):
        if nested:
            for j, x in enumerate(row):
                out[..., i, j] = x
        else:
            out[..., i] = row
    return out


def mv(A, x):
    """``A x``: matrix times vector, for one of each or a batch (A (..., m, n), x (..., n)
    → (..., m), the batch axes broadcast). A single matrix is applied as x Aᵀ: one
    product for the whole batch."""
    if A.ndim == 2:
        return A.dot(x) if x.ndim == 1 else x @ A.T
    return np.einsum("...ij,...j->...i", A, x)


def mtv(A, x):
    """``Aᵀ x`` for one matrix or a batch, as :func:`mv` (e.g. a force carried back by
    a Plücker transform, ``Xᵀ f``)."""
    if A.ndim == 2:
        return A.T.dot(x) if x.ndim == 1 else x @ A
    return np.einsum("...ji,...j->...i", A, x)


def mm(*factors):
    """The matrix product ``A B …`` of its arguments, for one state (``ndarray.dot``) or a
    batch of matrices (..., m, n) (``@``, the batch axes broadcast)."""
    out = factors[0]
    if len(factors) == 2 and out.ndim == 2 == factors[1].ndim:   # the common case, quickly
        return out.dot(factors[1])
    for B in factors[1:]:
        if B.ndim > 2:
            out = out @ B
        elif out.ndim == 2:
            out = out.dot(B)
        else:                # a batch times one matrix: one product of (K·m) x n by n x p
            out = (out.reshape(-1, out.shape[-1]) @ B).reshape(out.shape[:-1] + B.shape[-1:])
    return out


def skew(p):
    """The 3x3 matrix ``p×`` with ``skew(p) @ u == cross(p, u)``."""
    x, y, z = _scalars(p)
    return _assemble([[0, -z, y], [z, 0, -x], [-y, x, 0]], z, _dtype(p))


def cross3(a, b):
    """``a × b`` for 3-vectors (np.cross costs ~10x more on vectors this small)."""
    a1, a2, a3 = _scalars(a)
    b1, b2, b3 = _scalars(b)
    return _assemble([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1],
                     a2 * b3, _dtype(a, b))


def unskew(S):
    """The 3-vector of a skew-symmetric matrix (inverse of :func:`skew`)."""
    S = np.asarray(S)
    if S.ndim == 2:
        return np.array([S[2, 1], S[0, 2], S[1, 0]])
    return _assemble([S[..., 2, 1], S[..., 0, 2], S[..., 1, 0]], S[..., 2, 1])


def rotx(theta):
    """Rotation matrix of a frame turned by ``theta`` about x (active rotation)."""
    c, s = cos_sin(theta)
    return _assemble([[1, 0, 0], [0, c, -s], [0, s, c]], c, _dtype([c]))


def roty(theta):
    """Rotation matrix of a frame turned by ``theta`` about y (active rotation)."""
    c, s = cos_sin(theta)
    return _assemble([[c, 0, s], [0, 1, 0], [-s, 0, c]], c, _dtype([c]))


def rotz(theta):
    """Rotation matrix of a frame turned by ``theta`` about z (active rotation)."""
    c, s = cos_sin(theta)
    return _assemble([[c, -s, 0], [s, c, 0], [0, 0, 1]], c, _dtype([c]))


def exp_so3(w):
    """Rodrigues' formula: the rotation by angle ``|w|`` about ``w/|w|``.

    ``R = 1 + sin θ/θ (w×) + (1 − cos θ)/θ² (w×)²``; a Taylor series is used
    for small θ so the result is exact to round-off near the identity.
    """
    w = np.asarray(w, dtype=float)
    if w.shape != (3,):
        raise RbdlearnError(f"exp_so3 expects a 3-vector, got shape {w.shape}")
    th2 = float(w @ w)
    th = math.sqrt(th2)
    if th < 1e-6:
        a = 1.0 - th2 / 6.0
        b = 0.5 - th2 / 24.0
    else:
        a = math.sin(th) / th
        b = (1.0 - math.cos(th)) / th2
    W = skew(w)
    return np.eye(3) + a * W + b * (W @ W)


def log_so3(R):
    """The rotation vector ``w`` with ``exp_so3(w) == R`` and ``|w| <= π``."""
    R = np.asarray(R, dtype=float)
    if R.shape != (3, 3):
        raise RbdlearnError(f"log_so3 expects a 3x3 matrix, got shape {R.shape}")
    cos_th = min(1.0, max(-1.0, (np.trace(R) - 1.0) / 2.0))
    axial = unskew(R - R.T) / 2.0          # = sin θ · axis
    # atan2, not acos: acos(cos θ) loses half the digits of θ near 0 and π
    th = math.atan2(float(np.linalg.norm(axial)), cos_th)
    if th < 1e-6:
        return axial * (1.0 + th * th / 6.0)
    if math.pi - th > 1e-4:
        return axial * (th / math.sin(th))
    # Near θ = π, sin θ → 0: the symmetric part is cos θ·1 + (1 − cos θ) a aᵀ.
    aaT = ((R + R.T) / 2.0 - cos_th * np.eye(3)) / (1.0 - cos_th)
    k = int(np.argmax(np.diag(aaT)))
    a = aaT[:, k] / math.sqrt(aaT[k, k])
    if a @ axial < 0:
        a = -a
    return a * th


def quat_to_rot(quat):
    """Rotation matrix of the unit quaternion ``(w, x, y, z)``."""
    w, x, y, z = _scalars(quat)
    return _assemble([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]],
        w * x, _dtype(quat))


def rot_to_quat(R):
    """The unit quaternion ``(w, x, y, z)`` with ``w >= 0`` of a rotation matrix."""
    w = log_so3(R)
    q = quat_exp(w)
    return q if q[0] >= 0 else -q


def quat_mul(p, q):
    """Hamilton product ``p ⊗ q`` of quaternions in (w, x, y, z) order."""
    pw, px, py, pz = _scalars(p)
    qw, qx, qy, qz = _scalars(q)
    return _assemble([
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw], pw * qw)


def quat_exp(w):
    """The unit quaternion of the rotation vector ``w``: ``(cos(θ/2), sin(θ/2) w/θ)``."""
    w = np.asarray(w, dtype=float)
    if w.ndim > 1:                               # a batch (..., 3): the same, per state
        th = np.sqrt(np.sum(w * w, axis=-1))
        small = th < 1e-6
        k = np.where(small, 0.5 - th * th / 48.0,
                     np.sin(th / 2.0) / np.where(small, 1.0, th))
        return np.concatenate([np.cos(th / 2.0)[..., None], k[..., None] * w], axis=-1)
    th = math.sqrt(float(w @ w))
    # sin(θ/2)/θ, by its Taylor series near θ = 0
    k = 0.5 - th * th / 48.0 if th < 1e-6 else math.sin(th / 2.0) / th
    return np.array([math.cos(th / 2.0), k * w[0], k * w[1], k * w[2]])


def plux(E, r=None):
    """Plücker transform ``ᴮX_A = [E 0; −E r× E]`` (seed 001, "coordinate transform").

    ``E`` rotates A-coordinates into B-coordinates and ``r`` is B's origin in
    A-coordinates. For a frame B with orientation ``R`` in A, ``E = R.T``.
    ``r=None`` means a pure rotation (B's origin is A's).
    """
    E = np.asarray(E)
    if r is None or (E.ndim == 2 and np.ndim(r) == 1):     # (broadcast_shapes is slow)
        batch = E.shape[:-2]
    else:
        batch = np.broadcast_shapes(E.shape[:-2], np.shape(r)[:-1])
    X = np.zeros(batch + (6, 6), dtype=_dtype(E) if r is None else _dtype(E, r))
    X[..., :3, :3] = E
    X[..., 3:, 3:] = E
    if r is not None:
        X[..., 3:, :3] = -E @ skew(r)
    return X


def plux_parts(X):
    """``(E, r)`` with ``plux(E, r) == X``."""
    E = X[..., :3, :3]
    r = unskew(-E.mT @ X[..., 3:, :3])
    return E, r


def inv_X(X):
    """Inverse of a Plücker motion transform: ``[Eᵀ 0; (r×)Eᵀ Eᵀ]``, no matrix inversion.
    (``.mT`` transposes the last two axes: each matrix of a batch.)"""
    Xi = np.zeros_like(X)
    Xi[..., :3, :3] = X[..., :3, :3].mT
    Xi[..., 3:, 3:] = X[..., :3, :3].mT
    Xi[..., 3:, :3] = X[..., 3:, :3].mT
    return Xi


def force_X(X):
    """The force transform ``X⁻ᵀ = [E −E r×; 0 E]`` that goes with motion transform X."""
    Xf = np.zeros_like(X)
    Xf[..., :3, :3] = X[..., :3, :3]
    Xf[..., 3:, 3:] = X[..., :3, :3]
    Xf[..., :3, 3:] = X[..., 3:, :3]
    return Xf


def crm(v):
    """Motion cross-product matrix ``v×`` (seed 001, "cross products")."""
    w1, w2, w3, v1, v2, v3 = _scalars(v)
    return _assemble([
        [0, -w3, w2, 0, 0, 0],
        [w3, 0, -w1, 0, 0, 0],
        [-w2, w1, 0, 0, 0, 0],
        [0, -v3, v2, 0, -w3, w2],
        [v3, 0, -v1, w3, 0, -w1],
        [-v2, v1, 0, -w2, w1, 0]], w1, _dtype(v))


def crf(v):
    """Force cross-product matrix ``v×* = −(v×)ᵀ``."""
    return -crm(v).mT


def cross_motion(v, m):
    """``v × m`` for motion vectors, without forming the 6x6 matrix."""
    w1, w2, w3, v1, v2, v3 = _scalars(v)
    a1, a2, a3, b1, b2, b3 = _scalars(m)
    return _assemble([
        w2 * a3 - w3 * a2, w3 * a1 - w1 * a3, w1 * a2 - w2 * a1,
        w2 * b3 - w3 * b2 + v2 * a3 - v3 * a2,
        w3 * b1 - w1 * b3 + v3 * a1 - v1 * a3,
        w1 * b2 - w2 * b1 + v1 * a2 - v2 * a1], w1 * a1)


def cross_force(v, f):
    """``v ×* f`` for a motion vector v and force f, without forming the matrix."""
    w1, w2, w3, v1, v2, v3 = _scalars(v)
    n1, n2, n3, f1, f2, f3 = _scalars(f)
    return _assemble([
        w2 * n3 - w3 * n2 + v2 * f3 - v3 * f2,
        w3 * n1 - w1 * n3 + v3 * f1 - v1 * f3,
        w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1,
        w2 * f3 - w3 * f2, w3 * f1 - w1 * f3, w1 * f2 - w2 * f1], w1 * n1)


def mcI(m, c, Ic):
    """Spatial inertia at the body origin from mass, COM ``c`` and inertia ``Ic`` about the COM.

    ``I_O = [Ic + m c× c×ᵀ, m c×; m c×ᵀ, m 1]`` (seed 001, "inertia of a rigid body").
    """
    C = skew(c)
    Ic = np.asarray(Ic)
    I = np.zeros((6, 6), dtype=_dtype(Ic, c, [m]))
    I[:3, :3] = Ic + m * C @ C.T
    I[:3, 3:] = m * C
    I[3:, :3] = m * C.T
    I[3:, 3:] = m * np.eye(3, dtype=int)
    return I


def inertia_params(I, allow_massless=False):
    """``(m, c, Ic)`` with ``mcI(m, c, Ic) == I`` (inverse of :func:`mcI`).

    A massless body has no centre of mass: with ``allow_massless=True`` it gets
    ``(0, 0, I[:3, :3])``, otherwise it is an error."""
    m = I[5, 5]
    if allow_massless and m == 0:
        return 0.0, np.zeros(3), I[:3, :3]
    if _is_numeric(m) and m <= 0:
        raise RbdlearnError(f"spatial inertia has non-positive mass {m}")
    C = I[:3, 3:] / m
    c = unskew(C)
    return m, c, I[:3, :3] - m * C @ C.T


_SWAP = [3, 4, 5, 0, 1, 2]


def _swap(a, operator):
    a = np.asarray(a)
    if a.shape[:1] != (6,) or a.ndim > 2 or (operator and a.shape != (6, 6)):
        want = "a 6x6 matrix" if operator else "a 6-vector or a 6xn matrix"
        raise RbdlearnError(f"expected {want}, got shape {a.shape}")
    return a[np.ix_(_SWAP, _SWAP)] if operator else a[_SWAP]


def to_linear_angular(a, operator=False):
    """[angular; linear] → [linear; angular] (seed 000 and Pinocchio order).

    ``a`` is a 6-vector or a 6xn stack of vectors (e.g. a Jacobian): its rows are
    swapped. With ``operator=True``, ``a`` is a 6x6 operator (an inertia, a
    Plücker transform) and both its rows and columns are swapped.
    """
    return _swap(a, operator)


def to_angular_linear(a, operator=False):
    """[linear; angular] → [angular; linear] (this package's order); see :func:`to_linear_angular`."""
    return _swap(a, operator)


# ---------------------------------------------------------------- symbolic identities

def trig_zero(M, angles):
    """True iff every entry of the sympy expression or matrix ``M`` is identically zero,
    where sin and cos of each of ``angles`` are tied only by sin² + cos² = 1.

    A decision procedure, where ``sympy.simplify`` is a heuristic (and slow on 6×6
    transforms): sin θ and cos θ become independent symbols s, c, every derivative and
    every undefined function of time a symbol, and the polynomial is reduced modulo the
    ideal of the s² + c² − 1; the remainder is zero exactly when the identity holds for
    all values of the symbols. (Those generators are a Gröbner basis in lex order with
    every s first: their leading terms s² share no variable.) The arithmetic is done in
    sympy's sparse polynomial ring, not by ``expand`` on expression trees, which is slow
    on products of 6×6 transforms; each distinct subexpression is converted once (the
    entries of such a product share most of theirs)."""
    import functools
    import operator

    import sympy as sp

    M = sp.Matrix(M) if not isinstance(M, sp.Expr) else sp.Matrix([M])
    sc = [f(a) for a in angles for f in (sp.sin, sp.cos)]   # s_1, c_1, s_2, c_2, ...
    others = sorted(M.atoms(sp.Symbol, sp.Derivative, sp.core.function.AppliedUndef)
                    - set(sc), key=str)
    ring, *gens = sp.ring(sp.symbols(f"x:{len(sc) + len(others)}"), sp.QQ, sp.lex)
    ideal = [gens[k] ** 2 + gens[k + 1] ** 2 - 1 for k in range(0, len(sc), 2)]
    polys = dict(zip(sc + others, gens))     # every subexpression met, as a polynomial

    def poly(e):
        if e not in polys:
            if e.is_Add or e.is_Mul:
                combine = operator.add if e.is_Add else operator.mul
                polys[e] = functools.reduce(combine, [poly(a) for a in e.args])
            elif e.is_Pow and e.exp.is_Integer and e.exp > 0:
                polys[e] = poly(e.base) ** int(e.exp)
            else:                            # a number; anything else is not polynomial
                polys[e] = ring.ground_new(ring.domain.convert(e))
        return polys[e]

    for x in M:
        try:
            p = poly(x)
        except sp.polys.polyerrors.CoercionFailed:
            raise RbdlearnError(f"trig_zero: not a polynomial in sin, cos of {list(angles)} "
                                f"and the other symbols: {x}") from None
        if p.rem(ideal) != 0:
            return False
    return True


# ---------------------------------------------------------------- operation counts

def mm_flops(a, b, c):
    """Flops of an (a x b) @ (b x c) product: a·b·c multiplications and a·(b−1)·c
    additions (6x6 @ 6x6: 216 + 180).

    The convention of every operation count in rbdlearn (``rnea_flops``, ``aba_flops``,
    ``crb.operation_counts``), which count the multiplications and additions the code
    performs: every product is a dense one, priced by this function; a 6-D cross product
    (cross_motion / cross_force) costs 18 + 12; a sum of two 6-vectors 6, of two 6x6
    matrices 36; building XJ(q), transposes, inv_X and copies cost nothing. A line that
    acts on every body at once also computes the base's entry (body 0: zeros, or the
    gravity term), which is not counted: a constant, not a cost per body."""
    return a * c * (2 * b - 1) if b > 0 else 0


# --------------------------------------- planar motions and forces (Chapter 1, §1–2)
# Vectors of the y-z plane: a motion [ω, 0, 0, 0, v_y, v_z] about x, a force
# [n, 0, 0, 0, f_y, f_z]; the book's planar pictures and its plate example use them.

PLANE_S = np.eye(6)[:, [0, 4, 5]]
"""Motion subspace of a body free to move in the y-z plane: ω_x, v_y, v_z."""


def plate_body(m=2.0, width=1.2, height=0.5, com=(0.6, 0.2)):
    """A uniform rectangular plate in the y-z plane, at rest with its frame at O.

    Returns ``(I, corners)``: its spatial inertia at O and its corners (y, z).
    """
    Ixx = m * (width ** 2 + height ** 2) / 12
    Ic = np.diag([Ixx, m * height ** 2 / 12, m * width ** 2 / 12])
    c = np.array([0.0, com[0], com[1]])
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [width / 2, height / 2] + com
    return mcI(m, c, Ic), corners


def hinge_S(P):
    """Motion subspace (6x1, O coordinates) of a rotation about the x-axis through P=(y, z).

    A unit rotation at P is ``[1, 0, 0, 0, 0, 0]`` in a frame at P; ᴼX_P moves it to O.
    """
    X_PO = plux(np.eye(3), [0.0, P[0], P[1]])
    return inv_X(X_PO) @ np.eye(6)[:, :1]


def slider_S(angle):
    """Motion subspace (6x1) of a translation in the y-z plane at ``angle`` from +y."""
    return np.array([[0, 0, 0, 0, math.cos(angle), math.sin(angle)]]).T


def applied_force(A, F):
    """The spatial force (O coordinates) of a force ``F=(F_y, F_z)`` applied at A=(y, z).

    In a frame at A it is ``[0; F]``; ``ᴼf = ᴬX_Oᵀ ᴬf``.
    """
    X_AO = plux(np.eye(3), [0.0, A[0], A[1]])
    return X_AO.T @ np.array([0, 0, 0, 0, F[0], F[1]])


def _planar(a, what):
    a = np.asarray(a, dtype=float)
    if a.shape != (6,):
        raise RbdlearnError(f"{what} must be a spatial 6-vector, got shape {a.shape}")
    return a[0], a[4], a[5]


def motion_centre_2d(v, tol=1e-9):
    """Instantaneous centre (y, z) of a planar motion ``v = [ω, ·, ·, ·, v_y, v_z]``.

    The body point P with zero velocity, ``v_O + ω×OP = 0``:
    ``P = (−v_z/ω, v_y/ω)``. ``None`` for a pure translation (ω = 0).
    """
    w, vy, vz = _planar(v, "motion vector")
    if abs(w) < tol:
        return None
    return np.array([-vz / w, vy / w])


def force_line_2d(f, tol=1e-9):
    """Line of action of a planar force ``f = [n, ·, ·, ·, f_y, f_z]``.

    Returns ``(P0, u)``: the point of the line nearest to O, ``P0 = f × n_O / |f|²``,
    and the unit direction of the force. ``None`` for a pure couple (f = 0).
    """
    n, fy, fz = _planar(f, "force vector")
    f2 = fy * fy + fz * fz
    if f2 < tol * tol:
        return None
    # (f × n e_x) has y-component f_z n and z-component −f_y n
    return np.array([fz * n, -fy * n]) / f2, np.array([fy, fz]) / np.sqrt(f2)
