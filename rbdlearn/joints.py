"""Joint models: the joint transform, motion subspace and velocity-product term.

A joint connects a predecessor frame (the parent body's frame moved by the tree
transform ``Xtree``) to the successor frame (the child body's frame). Each joint
model gives, for its slice ``q`` of the configuration and ``qd`` of the velocity:

* ``XJ(q)``   — the Plücker transform from predecessor to successor coordinates,
* ``S(q)``    — the motion subspace (6 x nv): the joint velocity is ``vJ = S qd``
  in successor coordinates,
* ``cJ(q, qd)`` — the velocity-product term ``Ṡ qd`` (zero for every joint whose
  ``S`` is constant in successor coordinates; not zero for :class:`SphericalZYX`,
  the Euler-angle ball joint of Chapter 2),
* ``integrate(q, v)`` — the configuration reached from ``q`` by moving with the
  velocity ``v`` for unit time (``v`` is ``qd·dt``),
* ``neutral()``, ``random_q(rng)``, ``check_q(q)``.

Quaternions are ``(w, x, y, z)``; see the conventions appendix of the book.

Every method also takes a batch of states, ``q`` of shape (..., nq) and ``qd`` (..., nv),
and answers for each state, (..., 6, 6), (..., 6, nv), (..., 6), (..., nq); a constant
``S`` or ``c_J`` is returned once, as it holds for every state (numpy broadcasts it).

The swing–twist functions at the end (seed 000 §2.5.3, eqs. 27–29) describe a ball
joint's orientation by the tilt of the plug's z axis (swing) and the turn about it
(twist), the angles in which a ball joint's range of motion is naturally limited.
"""

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from .errors import RbdlearnError
from .spatial import (_assemble, _scalars, cos_sin, exp_so3, mv, plux, quat_exp,
                      quat_mul, quat_to_rot, rotx, roty, rotz, skew)

__all__ = ["Revolute", "Prismatic", "Spherical", "SphericalZYX", "zyx_angles", "Free", "Fixed",
           "UNIT_TOL",
           "swing_twist", "swing_twist_factors", "from_swing_twist",
           "swing_twist_limit_violation", "Gear"]

UNIT_TOL = 1e-6
"""How far from 1 the norm of a numeric quaternion may be before it is rejected."""

def _frozen(a):
    """``a``, made read-only: the arrays a joint (or a Model) keeps and hands out — its axis,
    S, c_J, the pieces of XJ — are shared by every call, so a caller's ``S *= 2`` must
    raise, not change the joint for everyone after it."""
    a.flags.writeable = False
    return a


_ZERO6 = _frozen(np.zeros(6))


def _unit_axis(axis, kind):
    a = np.asarray(axis, dtype=float)
    n = np.linalg.norm(a) if a.shape == (3,) else 0.0
    if not np.isfinite(n) or n < 1e-12:
        raise RbdlearnError(f"{kind} joint axis must be a finite non-zero 3-vector, got {axis!r}")
    return _frozen(a / n)


def _check_unit_quat(quat, what):
    if quat.dtype == object:   # symbolic: the caller is responsible
        return
    if quat.ndim == 1:
        n = math.sqrt(float(quat.dot(quat)))
        if abs(n - 1.0) > UNIT_TOL:
            raise RbdlearnError(f"{what} is not a unit quaternion (w, x, y, z): norm {n:.9g}")
        return
    n = np.sqrt(np.sum(quat * quat, axis=-1))                   # a batch: every state
    bad = np.argwhere(np.abs(n - 1.0) > UNIT_TOL)
    if len(bad):
        k = tuple(int(b) for b in bad[0])
        raise RbdlearnError(f"{what} of state {k} is not a unit quaternion (w, x, y, z): "
                            f"norm {n[k]:.9g}")


def _exact(*arrays):
    """Float arrays as sympy rationals, so symbolic results read 'sin(q)', not '1.0*sin(q)'."""
    import sympy
    return [np.vectorize(sympy.nsimplify, otypes=[object])(a) for a in arrays]


class _Joint:
    """Shared behaviour: a constant motion subspace and a zero velocity-product term."""
    S_depends_on_q = False

    def S(self, q):
        if np.asarray(q).dtype == object:
            return _exact(self._S)[0]
        return self._S

    def cJ(self, q, qd):
        return _ZERO6

    def check_q(self, q, what="q"):
        """Raise ``ValueError`` when ``q`` is not a valid configuration of this joint."""

    def random_q(self, rng):
        return rng.uniform(-np.pi, np.pi, self.nq)

    def _numeric(self, q):
        return np.asarray(q).dtype != object

    def neutral(self):
        return np.zeros(self.nq)

    def integrate(self, q, v):
        return q + v


@dataclass(frozen=True, eq=False)
class Revolute(_Joint):
    """Rotation by ``q`` about ``axis`` (a unit 3-vector in the successor frame)."""
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    nq = 1
    nv = 1

    def __post_init__(self):
        a = _unit_axis(self.axis, "revolute")
        object.__setattr__(self, "axis", a)
        object.__setattr__(self, "_K", _frozen(skew(a)))
        object.__setattr__(self, "_K2", _frozen(skew(a) @ skew(a)))
        # XJ(q) = B0 + sin q · B1 + cos q · B2, the Bk flattened as the rows of a 3 x 36
        # array (see XJ)
        B = [plux(np.eye(3) + self._K2), plux(-self._K), plux(-self._K2)]
        object.__setattr__(self, "_B", _frozen(np.stack(B).reshape(3, 36)))
        object.__setattr__(self, "_S", _frozen(np.concatenate([a, np.zeros(3)])[:, None]))

    def XJ(self, q):
        # E = R(axis, q)ᵀ = 1 − sin q (a×) + (1 − cos q)(a×)²  (Rodrigues, transposed)
        q = np.asarray(q)
        c, s = cos_sin(q[..., 0] if q.ndim > 1 else q[0])
        if self._numeric(q):             # the same sum, in one array operation
            w = np.array([1.0, s, c]) if q.ndim == 1 else np.stack([np.ones_like(c), s, c],
                                                                    axis=-1)
            return (w @ self._B).reshape(q.shape[:-1] + (6, 6))
        K, K2 = _exact(self._K, self._K2)
        return plux(np.eye(3, dtype=object) - s * K + (1 - c) * K2)

    def XJ_terms(self, Xtree):
        """The three constant terms of ``XJ(q) @ Xtree = B0 Xtree + sin q · B1 Xtree +
        cos q · B2 Xtree``, flattened as the rows of a 3 x 36 array."""
        return (self._B.reshape(3, 6, 6) @ Xtree).reshape(3, 36)


@dataclass(frozen=True, eq=False)
class Prismatic(_Joint):
    """Translation by ``q`` along ``axis`` (a unit 3-vector in the successor frame)."""
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    nq = 1
    nv = 1

    def __post_init__(self):
        a = _unit_axis(self.axis, "prismatic")
        object.__setattr__(self, "axis", a)
        object.__setattr__(self, "_S", _frozen(np.concatenate([np.zeros(3), a])[:, None]))

    def XJ(self, q):
        q = np.asarray(q)
        a = self.axis if self._numeric(q) else _exact(self.axis)[0]
        return plux(np.eye(3, dtype=a.dtype), q[..., :1] * a)

    def random_q(self, rng):
        return rng.uniform(-0.5, 0.5, 1)


@dataclass(frozen=True, eq=False)
class Spherical(_Joint):
    """Ball joint: q is the unit quaternion (w, x, y, z) of the successor in the
    predecessor frame; v is the angular velocity in successor coordinates."""
    nq = 4
    nv = 3
    _S = _frozen(np.vstack([np.eye(3), np.zeros((3, 3))]))

    def XJ(self, q):
        return plux(quat_to_rot(q).mT)

    def check_q(self, q, what="q"):
        _check_unit_quat(q, what)

    def random_q(self, rng):
        quat = rng.normal(size=4)
        return quat / np.linalg.norm(quat)

    def neutral(self):
        return np.array([1.0, 0.0, 0.0, 0.0])

    def integrate(self, q, v):
        # body-frame angular velocity: R(t+1) = R exp(ω×), i.e. quat ⊗ exp(ω)
        quat = quat_mul(q, quat_exp(v))
        return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class SphericalZYX(_Joint):
    """Ball joint in ZYX Euler angles (seed 000 §2.5.3): q = (q_z, q_y, q_x), and
    the successor's orientation in the predecessor frame is R = Rz(q_z) Ry(q_y) Rx(q_x).

    The order (z, y, x) is Pinocchio's ``JointModelSphericalZYX`` order, so q and v
    pass to Pinocchio unchanged; the seed lists the same angles as [q_x q_y q_z].
    The velocity is the angle rates, v = q̇ (nv = 3), so, unlike the quaternion
    :class:`Spherical` joint, S depends on q and c_J = Ṡ q̇ is not zero. The
    columns of S are the three rotation axes in successor coordinates:

        S(q) = [Rxᵀ Ryᵀ e_z,  Rxᵀ e_y,  e_x ; 0]                        (ZYX-1)

    The seed's J is the same joint velocity in socket (predecessor) coordinates and
    [linear; angular] order, with columns (x, y, z): J = plux(R) S, reordered.

    S loses rank at gimbal lock, q_y = ±π/2, where the z and x axes line up:
    det(SᵀS) = cos² q_y (see :meth:`gram_det`).
    """
    nq = 3
    nv = 3
    S_depends_on_q = True

    def XJ(self, q):
        qz, qy, qx = _scalars(q)
        return plux((rotz(qz) @ roty(qy) @ rotx(qx)).mT)

    def S(self, q):
        _, qy, qx = _scalars(q)
        (cy, sy), (cx, sx) = cos_sin(qy), cos_sin(qx)
        return _assemble([[-sy, 0, 1],                                   # (ZYX-1)
                          [cy * sx, cx, 0],
                          [cy * cx, -sx, 0],
                          [0, 0, 0], [0, 0, 0], [0, 0, 0]],
                         sy, float if self._numeric(q) else object)

    def cJ(self, q, qd):
        # c_J = Ṡ q̇ = Σ_k (∂S/∂q_k q̇_k) q̇, the derivative taken in successor coordinates:
        # only columns z and y depend on q (on q_y and q_x).
        _, qy, qx = _scalars(q)
        (cy, sy), (cx, sx) = cos_sin(qy), cos_sin(qx)
        dz, dy, dx = _scalars(qd)
        return _assemble([-cy * dy * dz,                                  # (ZYX-2)
                          (-sy * sx * dy + cy * cx * dx) * dz - sx * dx * dy,
                          (-sy * cx * dy - cy * sx * dx) * dz - cx * dx * dy,
                          0, 0, 0],
                         cy * dy, float if self._numeric(q) else object)

    def gram_det(self, q):
        """det(SᵀS) = cos² q_y: zero at gimbal lock, q_y = ±π/2, where the joint's
        velocity can no longer reach every angular velocity (the quaternion joint,
        whose S is constant, has no such configuration)."""
        return cos_sin(q[1])[0] ** 2

    def random_q(self, rng):
        # q_y away from gimbal lock (|q_y| ≤ 1.2, cos q_y ≥ 0.36): well-conditioned S
        return np.array([rng.uniform(-np.pi, np.pi), rng.uniform(-1.2, 1.2),
                         rng.uniform(-np.pi, np.pi)])


def zyx_angles(R):
    """The ZYX Euler angles ``(q_z, q_y, q_x)`` of :class:`rbdlearn.SphericalZYX` with
    ``R = Rz(q_z) Ry(q_y) Rx(q_x)``, ``q_y ∈ [−π/2, π/2]``. At gimbal lock
    (``|R_zx| = 1``) only ``q_z ∓ q_x`` is determined; ``q_x = 0`` is returned."""
    R = np.asarray(R, dtype=float)
    qy = math.asin(max(-1.0, min(1.0, -R[2, 0])))          # R_zx = −sin q_y
    if math.hypot(R[2, 1], R[2, 2]) < 1e-12:                # cos q_y = 0
        return np.array([math.atan2(-R[0, 1], R[1, 1]), qy, 0.0])
    return np.array([math.atan2(R[1, 0], R[0, 0]), qy, math.atan2(R[2, 1], R[2, 2])])


@dataclass(frozen=True, eq=False)
class Free(_Joint):
    """Six-DOF joint: q = (position of the successor origin in the predecessor frame,
    quaternion (w, x, y, z)); v = the successor's spatial velocity in its own
    coordinates, [angular; linear]."""
    nq = 7
    nv = 6
    _S = _frozen(np.eye(6))

    def XJ(self, q):
        return plux(quat_to_rot(q[..., 3:]).mT, q[..., :3])

    def check_q(self, q, what="q"):
        _check_unit_quat(q[..., 3:], what + " (free joint quaternion)")

    def random_q(self, rng):
        quat = rng.normal(size=4)
        return np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat)])

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

    def integrate(self, q, v):
        # Exact motion at constant body twist (w, u): T(t+1) = T · exp([w; u]),
        # with exp's translation V(w) u, V = 1 + (1−cos θ)/θ² w× + (θ−sin θ)/θ³ (w×)².
        # (A batch of states: th, b, c are arrays over the batch, [..., None, None] puts
        # each state's scalar on its own 3x3 matrix.)
        v = np.asarray(v, dtype=float)
        w, u = v[..., :3], v[..., 3:]
        th = np.linalg.norm(w, axis=-1)
        W = skew(w)
        small = th < 1e-6
        th_ = np.where(small, 1.0, th)                 # no division by 0 where unused
        b = np.where(small, 0.5 - th**2 / 24.0, (1 - np.cos(th)) / th_**2)
        c = np.where(small, 1.0 / 6.0 - th**2 / 120.0, (th - np.sin(th)) / th_**3)
        V = np.eye(3) + b[..., None, None] * W + c[..., None, None] * (W @ W)
        R = quat_to_rot(q[..., 3:])
        quat = quat_mul(q[..., 3:], quat_exp(w))
        return np.concatenate([q[..., :3] + mv(R, mv(V, u)),
                               quat / np.linalg.norm(quat, axis=-1, keepdims=True)], axis=-1)


@dataclass(frozen=True, eq=False)
class Fixed(_Joint):
    """A rigid attachment: no configuration, no velocity."""
    nq = 0
    nv = 0
    _S = _frozen(np.zeros((6, 0)))

    def XJ(self, q):
        return np.eye(6)


# ---------------------------------------------------------------------------- swing–twist
#
# R is the plug's (successor's) orientation in the socket's (predecessor's) frame. It
# factors uniquely, for θ_swing < π, as
#
#     R = R_swing · Rz(θ_twist),                                                   (ST-1)
#
# R_swing turning the socket's z axis onto the plug's, b = R e_z, about the axis
# e_z × b ⟂ both (in the socket's xy-plane), and Rz a turn about the plug's own z.
# The swing angle is the angle between the two z axes (seed eq. 27):
#
#     θ_swing = arccos(R_zz)                                                        (ST-2)
#
# and the twist follows from the quaternion (w, x, y, z) = (cos(θs/2) cos(θt/2), …,
# cos(θs/2) sin(θt/2)) of (ST-1): R_xx + R_yy = 2(w² − z²), R_yx − R_xy = 4wz and
# 1 + R_zz = 2(w² + z²), so (the corrected seed eq. 29, signed)
#
#     cos θ_twist = (R_xx + R_yy) / (1 + R_zz),  sin θ_twist = (R_yx − R_xy) / (1 + R_zz).   (ST-3)
#
# At θ_swing = π (1 + R_zz = 0) every swing axis in the xy-plane works and the twist
# is undefined: the one singularity of the swing–twist description.

ROT_TOL = 1e-6
"""How far from orthonormal (max |RRᵀ − 1|) a rotation matrix may be before it is rejected."""


def _check_rotation(R, what="R"):
    R = np.asarray(R, dtype=float)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise RbdlearnError(f"{what} must be a finite 3x3 rotation matrix, got {R!r}")
    err = np.abs(R @ R.T - np.eye(3)).max()
    if err > ROT_TOL or np.linalg.det(R) < 0:
        raise RbdlearnError(f"{what} is not a rotation matrix (max |R Rᵀ − 1| = {err:.3g}, "
                            f"det = {np.linalg.det(R):.6g})")
    return R


def _twist_cos_sin(R):
    """(1 + R_zz)·(cos θ_twist, sin θ_twist), eq. (ST-3), refusing θ_swing = π."""
    c, s = R[0, 0] + R[1, 1], R[1, 0] - R[0, 1]
    if 1.0 + R[2, 2] < 1e-12:
        raise RbdlearnError("swing angle is π (the plug's z axis points opposite the socket's): "
                            "the twist angle is undefined there")
    return c, s


def swing_twist(R):
    """``(θ_swing, θ_twist)`` of the rotation ``R`` of the plug relative to the socket:
    θ_swing ∈ [0, π] is the angle between the z axes (ST-2), θ_twist ∈ (−π, π] the
    turn about the plug's z axis left after the swing (ST-3). Raises ``ValueError``
    for a matrix that is not a rotation, or at θ_swing = π where the twist is undefined."""
    R = _check_rotation(R)
    c, s = _twist_cos_sin(R)
    # atan2, not arccos(R_zz): arccos loses half the digits near θ_swing = 0
    swing = math.atan2(math.hypot(R[0, 2], R[1, 2]), R[2, 2])        # (ST-2)
    return swing, math.atan2(s, c)                                  # (ST-3)


def from_swing_twist(phi, swing, twist):
    """The rotation ``R = R_swing · Rz(twist)`` (ST-1) whose plug z axis is tilted by
    ``swing`` towards the azimuth ``phi`` of the socket's xy-plane, i.e.
    ``R e_z = (sin θs cos φ, sin θs sin φ, cos θs)``. The swing axis is
    ``(−sin φ, cos φ, 0)``; ``phi = atan2(R_yz, R_xz)`` recovers φ from R."""
    return exp_so3(swing * np.array([-math.sin(phi), math.cos(phi), 0.0])) @ rotz(float(twist))


def swing_twist_factors(R):
    """``(R_swing, R_twist)`` with ``R = R_swing @ R_twist`` (ST-1)."""
    R_twist = rotz(swing_twist(R)[1])
    return np.asarray(R, dtype=float) @ R_twist.T, R_twist


def swing_twist_limit_violation(R, swing_max, twist_max=math.pi):
    """A cone-and-twist range limit of a ball joint: ``θ_swing ≤ swing_max`` and
    ``|θ_twist| ≤ twist_max`` (the default ``twist_max = π`` means no twist limit).

    Returns ``(g, G)``: ``g = [θ_swing − swing_max, |θ_twist| − twist_max]`` (≤ 0
    inside the limits), and the 2 x 6 matrix ``G`` whose row k is the spatial motion
    direction [angular; linear], in successor coordinates, along which g_k grows:
    ``g(R exp(δ×)) = g + G[:, :3] δ + O(δ²)`` for a small rotation δ of the plug in
    its own frame, so ``ġ = G v_J`` for the joint velocity ``v_J = S q̇``.
    The swing row is the unit vector ``−(e_z × a)/sin θ_swing``, ``a = Rᵀ e_z`` the
    socket's z axis in plug coordinates; at θ_swing = 0, where no direction is
    preferred, it is zero (the swing limit is then inactive for ``swing_max > 0``).
    """
    R = _check_rotation(R)
    if not 0 < swing_max < math.pi:
        raise RbdlearnError(f"swing_max must lie in (0, π), got {swing_max!r}")
    if not 0 <= twist_max <= math.pi:
        raise RbdlearnError(f"twist_max must lie in [0, π], got {twist_max!r}")
    swing, twist = swing_twist(R)
    c, s = _twist_cos_sin(R)
    G = np.zeros((2, 6))
    a = R[2]                                            # Rᵀ e_z
    sin_swing = math.hypot(a[0], a[1])
    if sin_swing > 1e-12:
        # dR_zz = a·(δ × e_z) = −δ·(e_z × a), and dθ = −dR_zz / sin θ
        G[0, :3] = np.array([a[1], -a[0], 0.0]) / sin_swing
    for k in range(3):
        # dR = R (δ×) for δ = e_k; differentiate θ_twist = atan2(s, c) of (ST-3)
        dR = R @ skew(np.eye(3)[k])
        ds, dc = dR[1, 0] - dR[0, 1], dR[0, 0] + dR[1, 1]
        G[1, k] = (c * ds - s * dc) / (c * c + s * s)
    G[1] *= 1.0 if twist >= 0 else -1.0                 # d|θ_twist| = sign(θ_twist) dθ_twist
    return np.array([swing - swing_max, abs(twist) - twist_max]), G


# ------------------------------------------------------------------------------ gears
#
# A gear couples two 1-DOF joints, q̇_driven = γ q̇_driver (Chapter 2 §5, seed 000 §2.6–2.7):
# a description of how two joints move together, read from a URDF's mimic joints and used
# by the geared ABA of ``rbdlearn.gears``.


@dataclass(frozen=True)
class Gear:
    """``q̇_driven = ratio · q̇_driver`` for two 1-DOF joints (revolute or prismatic),
    given by body index or joint name: the driver is the driven joint's parent or its
    child (serial coupling, seed 000 §2.6) or its sibling (parallel coupling, §2.7). A
    driver may itself be driven (a chain of gears). Positions follow
    ``q_driven − q0_driven = ratio · (q_driver − q0_driver) + offset``, see
    :func:`~rbdlearn.geared_q`; with the neutral q0 this is a URDF mimic joint,
    ``q_driven = multiplier · q_driver + offset``. ``gear_matrix`` and ``geared_q``
    accept a gear between any two 1-DOF joints (as URDF mimic joints are);
    :func:`~rbdlearn.aba_geared` needs the driver to be a parent, child or
    sibling."""
    driven: object
    driver: object
    ratio: float
    offset: float = 0.0

    def __post_init__(self):
        for what, r in (("ratio", self.ratio), ("offset", self.offset)):
            if isinstance(r, bool) or not isinstance(r, numbers.Real) or not math.isfinite(r):
                raise RbdlearnError(f"gear {what} must be a finite real number, got {r!r}")
