"""Joint models: the joint transform, motion subspace and velocity-product term.

A joint connects a predecessor frame (the parent body's frame moved by the tree
transform ``Xtree``) to the successor frame (the child body's frame). Each joint
model gives, for its slice ``q`` of the configuration and ``qd`` of the velocity:

* ``XJ(q)``   — the Plücker transform from predecessor to successor coordinates,
* ``S(q)``    — the motion subspace (6 x nv): the joint velocity is ``vJ = S qd``
  in successor coordinates,
* ``cJ(q, qd)`` — the velocity-product term ``Ṡ qd`` (zero for every joint here,
  whose ``S`` is constant in successor coordinates; Chapter 2 adds a joint where
  it is not),
* ``integrate(q, v)`` — the configuration reached from ``q`` by moving with the
  velocity ``v`` for unit time (``v`` is ``qd·dt``),
* ``neutral()``, ``random_q(rng)``, ``check_q(q)``.

Quaternions are ``(w, x, y, z)``; see the conventions appendix of the book.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from .spatial import cos_sin, plux, quat_exp, quat_mul, quat_to_rot, skew

__all__ = ["Revolute", "Prismatic", "Spherical", "Free", "Fixed", "UNIT_TOL"]

UNIT_TOL = 1e-6
"""How far from 1 the norm of a numeric quaternion may be before it is rejected."""

_ZERO6 = np.zeros(6)


def _unit_axis(axis, kind):
    a = np.asarray(axis, dtype=float)
    n = np.linalg.norm(a) if a.shape == (3,) else 0.0
    if not np.isfinite(n) or n < 1e-12:
        raise ValueError(f"{kind} joint axis must be a finite non-zero 3-vector, got {axis!r}")
    return a / n


def _check_unit_quat(quat, what):
    if quat.dtype == object:   # symbolic: the caller is responsible
        return
    n = math.sqrt(float(quat @ quat))
    if abs(n - 1.0) > UNIT_TOL:
        raise ValueError(f"{what} is not a unit quaternion (w, x, y, z): norm {n:.9g}")


def _exact(*arrays):
    """Float arrays as sympy rationals, so symbolic results read 'sin(q)', not '1.0*sin(q)'."""
    import sympy
    return [np.vectorize(sympy.nsimplify, otypes=[object])(a) for a in arrays]


class _Joint:
    """Shared behaviour: a constant motion subspace and a zero velocity-product term."""

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
        object.__setattr__(self, "_K", skew(a))
        object.__setattr__(self, "_K2", skew(a) @ skew(a))
        # XJ(q) = B0 + sin q · B1 + cos q · B2, stacked as a 6x6x3 array (see XJ)
        B = [plux(np.eye(3) + self._K2), plux(-self._K), plux(-self._K2)]
        object.__setattr__(self, "_B", np.stack(B, axis=-1))
        object.__setattr__(self, "_S", np.concatenate([a, np.zeros(3)])[:, None])

    def XJ(self, q):
        # E = R(axis, q)ᵀ = 1 − sin q (a×) + (1 − cos q)(a×)²  (Rodrigues, transposed)
        c, s = cos_sin(q[0])
        if isinstance(c, float):         # the same sum, in one array operation
            return self._B @ np.array([1.0, s, c])
        K, K2 = _exact(self._K, self._K2)
        return plux(np.eye(3, dtype=object) - s * K + (1 - c) * K2)


@dataclass(frozen=True, eq=False)
class Prismatic(_Joint):
    """Translation by ``q`` along ``axis`` (a unit 3-vector in the successor frame)."""
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    nq = 1
    nv = 1

    def __post_init__(self):
        a = _unit_axis(self.axis, "prismatic")
        object.__setattr__(self, "axis", a)
        object.__setattr__(self, "_S", np.concatenate([np.zeros(3), a])[:, None])

    def XJ(self, q):
        a = self.axis if isinstance(q[0], float) else _exact(self.axis)[0]
        return plux(np.eye(3, dtype=a.dtype), a * q[0])

    def random_q(self, rng):
        return rng.uniform(-0.5, 0.5, 1)


@dataclass(frozen=True, eq=False)
class Spherical(_Joint):
    """Ball joint: q is the unit quaternion (w, x, y, z) of the successor in the
    predecessor frame; v is the angular velocity in successor coordinates."""
    nq = 4
    nv = 3
    _S = np.vstack([np.eye(3), np.zeros((3, 3))])

    def XJ(self, q):
        return plux(quat_to_rot(q).T)

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
        return quat / np.linalg.norm(quat)


@dataclass(frozen=True, eq=False)
class Free(_Joint):
    """Six-DOF joint: q = (position of the successor origin in the predecessor frame,
    quaternion (w, x, y, z)); v = the successor's spatial velocity in its own
    coordinates, [angular; linear]."""
    nq = 7
    nv = 6
    _S = np.eye(6)

    def XJ(self, q):
        return plux(quat_to_rot(q[3:]).T, q[:3])

    def check_q(self, q, what="q"):
        _check_unit_quat(q[3:], what + " (free joint quaternion)")

    def random_q(self, rng):
        quat = rng.normal(size=4)
        return np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat)])

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

    def integrate(self, q, v):
        # Exact motion at constant body twist (w, u): T(t+1) = T · exp([w; u]),
        # with exp's translation V(w) u, V = 1 + (1−cos θ)/θ² w× + (θ−sin θ)/θ³ (w×)².
        w, u = np.asarray(v[:3], dtype=float), np.asarray(v[3:], dtype=float)
        th = np.linalg.norm(w)
        W = skew(w)
        if th < 1e-6:
            b, c = 0.5 - th**2 / 24.0, 1.0 / 6.0 - th**2 / 120.0
        else:
            b, c = (1 - np.cos(th)) / th**2, (th - np.sin(th)) / th**3
        V = np.eye(3) + b * W + c * (W @ W)
        R = quat_to_rot(q[3:])
        quat = quat_mul(q[3:], quat_exp(w))
        return np.concatenate([q[:3] + R @ (V @ u), quat / np.linalg.norm(quat)])


@dataclass(frozen=True, eq=False)
class Fixed(_Joint):
    """A rigid attachment: no configuration, no velocity."""
    nq = 0
    nv = 0
    _S = np.zeros((6, 0))

    def XJ(self, q):
        return np.eye(6)

