"""Forward kinematics, body velocities and accelerations, Jacobians and J̇q̇ (Chapter 1:
"Spatial vectors" and "Inverse dynamics", the velocity and acceleration recursions
RNEA-1 and RNEA-2; Jacobians as in chapter 3's eq. crb-jacobian-form).

All spatial quantities are in the [angular; linear] order. "local" means
expressed in the body's own frame; "world" means expressed in the base frame
(for a 6-D quantity: Plücker coordinates at the base origin).

Every function that can answer in either frame (``jacobian``, ``point_jacobian``,
``point_velocity``, ``jdot_qdot``) takes ``frame`` as a required keyword, with no
default: a product such as ``point_jacobian(..., frame=f) @ qdd + jdot_qdot(..., frame=f)``
is a point acceleration only when both use the same frame, so every call says which.

Per-body results are stacked: one array whose first axis is the body, 0..N (``X0[i]``,
``v[i]``). ``forward_kinematics``, ``body_velocities`` and ``body_accelerations`` also
take a batch of states, q (..., nq), qd and qdd (..., nv): the transforms are then
(N+1, ..., 6, 6) and the velocities (N+1, ..., 6), the same lines computing every state
at once (see ``spatial.mv``).

The pieces the algorithms share are here too: the joint transforms of every body
(``rnea``, ``aba``, ``crba``), the motion subspaces side by side, in joint and in base
coordinates, and the inertias stacked (``crba``, ``closed_chains.loop_jacobian``).
"""

import math

import numpy as np

from .errors import RbdlearnError
from .model import batch_shape, body_index, check_state
from .spatial import cross3, cross_motion, inv_X, mm, mv, plux_parts, skew

__all__ = ["joint_transforms", "base_transforms", "base_subspaces", "forward_kinematics", "body_pose",
           "body_velocities", "body_accelerations", "jacobian", "point_jacobian", "jdot_qdot",
           "point_velocity"]

_FRAMES = ("local", "world")
_EYE6 = np.eye(6)


def joint_transforms(model, q):
    """``Xup[i] = XJ(q_i) Xtree[i]``: the parent-to-body transforms, stacked (N+1, ..., 6, 6)
    (Xup[0] = 1).

    Speed trick: the N products do not depend on each other, and for a revolute joint
    XJ(q) Xtree = B0 Xtree + sin q · B1 Xtree + cos q · B2 Xtree with constant terms
    (``Revolute.XJ_terms``, kept in ``model.revolute_terms``). So all revolute joints,
    for all states of a batch, are evaluated by one product of the weights (1, sin q,
    cos q) with those terms, instead of one small product per joint. When the revolute
    bodies are consecutive, that product writes straight into its place in the result: a
    slice of a fresh array (N+1, states, 36) holding each 6x6 as 36 numbers (a slice is
    always a view), shaped into 6x6 matrices only once every product is written."""
    q = np.asarray(q)
    batch, numeric = q.shape[:-1], q.dtype != object
    bodies, at, terms, others = model.revolute_terms
    if not numeric:
        bodies, others = bodies[:0], range(1, model.N + 1)
    one_by_one = {i: mm(model.joints[i].XJ(q[..., model.q_slices[i]]), model.Xtree[i])
                  for i in others}
    dtype = object if any(X.dtype == object for X in one_by_one.values()) else float
    states = math.prod(batch)
    Xup = np.empty((model.N + 1, states, 36), dtype=dtype)     # each 6x6 as 36 numbers
    Xup[0] = _EYE6.ravel()
    if len(bodies):
        angle = q[..., at].reshape(-1, len(bodies)).T           # (joint, state)
        w = np.empty(angle.shape + (3,))                         # (joint, state, weight)
        w[..., 0], w[..., 1], w[..., 2] = 1.0, np.sin(angle), np.cos(angle)
        if bodies[-1] - bodies[0] == len(bodies) - 1:            # consecutive bodies:
            np.matmul(w, terms, out=Xup[bodies[0]:bodies[-1] + 1])   # written in place
        else:
            Xup[bodies] = w @ terms
    Xup = Xup.reshape((model.N + 1,) + batch + (6, 6))          # the same numbers, as 6x6
    for i, X in one_by_one.items():
        Xup[i] = X
    return Xup


def motion_subspaces(model, q):
    """``S = [S_1 … S_N]``: every joint's motion subspace side by side, a 6 x nv array whose
    columns ``v_slices[i]`` are S_i; (..., 6, nv) for a batch when some S_i depends on q.

    Speed trick: when no joint's S depends on q (every joint type but ``SphericalZYX``),
    S is a constant, built once with the model (``model.S_constant``)."""
    q = np.asarray(q)
    if model.S_constant is not None and q.dtype != object:
        return model.S_constant
    batch = q.shape[:-1]
    blocks = [model.joints[i].S(q[..., model.q_slices[i]]) for i in range(1, model.N + 1)]
    return np.concatenate([np.zeros(batch + (6, 0))]
                          + [np.broadcast_to(b, batch + b.shape[-2:]) for b in blocks], axis=-1)


_PI = [3, 4, 5, 0, 1, 2]                # Π: [angular; linear] ↔ [linear; angular]


def base_subspaces(model, q, X0):
    """Every joint's motion subspace in base coordinates, one column per joint velocity k,
    ⁰S_k = ⁰X_i S_k with i = ``model.velocity_body[k]``, given X0 = ``base_transforms``
    at q; as rows, (nv, ..., 6).

    No transform is inverted: ⁰X_i = (ⁱX₀)⁻¹ = Π ⁱX₀ᵀ Π, with Π swapping a vector's
    angular and linear halves (X⁻¹ = (X*)ᵀ and X* = Π X Π)."""
    S = motion_subspaces(model, q)
    cols = np.moveaxis(S, -1, 0) if S.ndim > 2 else S.T.reshape(
        (model.nv,) + (1,) * (np.ndim(q) - 1) + (6,))                  # S's columns
    rows = cols[..., None, _PI] @ X0[model.velocity_body]       # (Π S_k)ᵀ ⁱX₀ = (Π ⁰S_k)ᵀ
    return rows[..., 0, _PI]


def stacked_inertias(model, batch):
    """The bodies' inertias I_i stacked (N+1, 1.., 6, 6), shaped to pair with every state
    of a batch of shape ``batch`` (I_0 = 0)."""
    return np.array([np.zeros((6, 6))] + list(model.I[1:])).reshape(
        (model.N + 1,) + (1,) * len(batch) + (6, 6))


def base_transforms(model, Xup):
    """``X0[i] = ⁱX₀`` from the parent-to-body transforms ``Xup``, stacked as they are
    (X0[0] = 1)."""
    X0 = np.empty_like(Xup)
    X0[0] = _EYE6
    for i in range(1, model.N + 1):
        X0[i] = mm(Xup[i], X0[model.parent[i]])  # ⁱX₀ = ⁱX_λ(i) · λ(i)X₀
    return X0


def forward_kinematics(model, q):
    """``X0[i] = ⁱX₀``: the transform from base to body-i coordinates, stacked
    (N+1, ..., 6, 6) (X0[0] = 1)."""
    (q,) = check_state(model, batch=True, q=q)
    return base_transforms(model, joint_transforms(model, q))


def body_pose(X0_i):
    """``(R, p)``: body orientation and origin in the base frame, from ``ⁱX₀``."""
    E, r = plux_parts(X0_i)
    return E.mT, r


def _stacked(per_body, core, batch):
    """A list of per-body entries (each of shape ``core``, or a batch of them) as one array
    (N+1, ..., *core): an entry that holds for every state (the base's, a body welded to
    it) is repeated over the batch."""
    if not batch:
        return np.array(per_body)
    return np.stack([np.broadcast_to(x, batch + core) for x in per_body])


def _velocities(model, q, qd, qdd=None):
    """Shared forward pass: Xup, and body velocities / accelerations (no gravity)."""
    Xup = joint_transforms(model, q)
    v = [np.zeros(6)] + [None] * model.N
    a = [np.zeros(6)] + [None] * model.N
    for i in range(1, model.N + 1):
        j, p = model.joints[i], model.parent[i]
        qi, qdi = q[..., model.q_slices[i]], qd[..., model.v_slices[i]]
        S = j.S(qi)
        vJ = mv(S, qdi)
        v[i] = mv(Xup[i], v[p]) + vJ
        if qdd is not None:
            a[i] = (mv(Xup[i], a[p]) + mv(S, qdd[..., model.v_slices[i]]) + j.cJ(qi, qdi)
                    + cross_motion(v[i], vJ))
    return Xup, v, a


def body_velocities(model, q, qd):
    """Spatial velocity of every body in its own coordinates, stacked (N+1, ..., 6)
    (v[0] = 0)."""
    q, qd = check_state(model, batch=True, q=q, qd=qd)
    return _stacked(_velocities(model, q, qd)[1], (6,), batch_shape(q, qd))


def body_accelerations(model, q, qd, qdd):
    """Spatial acceleration of every body in its own coordinates, gravity excluded,
    stacked (N+1, ..., 6)."""
    q, qd, qdd = check_state(model, batch=True, q=q, qd=qd, qdd=qdd)
    return _stacked(_velocities(model, q, qd, qdd)[2], (6,), batch_shape(q, qd, qdd))


def _check_frame(frame):
    if frame not in _FRAMES:
        raise RbdlearnError(f"frame must be one of {_FRAMES}, got {frame!r}")


def jacobian(model, q, i, *, frame):
    """The 6 x nv Jacobian J with ``v_i = J qd`` (body i's spatial velocity).

    Column block of joint k (an ancestor of i) is ``ⁱX_k S_k`` in the local frame
    and ``⁰X_k S_k`` in the world frame; other columns are zero.
    """
    i = body_index(model, i, "i")
    _check_frame(frame)
    (q,) = check_state(model, q=q)
    return _jacobian(model, q, forward_kinematics(model, q), i, frame)


def _jacobian(model, q, X0, i, frame):
    """:func:`jacobian` from the base transforms ``X0`` at ``q``, for callers that have them."""
    J = np.zeros((6, model.nv), dtype=q.dtype)
    for k in model.ancestors(i):
        Xk = inv_X(X0[k]) if frame == "world" else X0[i] @ inv_X(X0[k])
        J[:, model.v_slices[k]] = Xk @ model.joints[k].S(q[model.q_slices[k]])
    return J


def _point_in(model, p):
    p = np.asarray(p, dtype=float)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise RbdlearnError(f"point must be a finite 3-vector in body coordinates, got {p!r}")
    return p


def point_jacobian(model, q, i, p, *, frame):
    """The 3 x nv Jacobian of the velocity of point ``p`` (body-i coordinates).

    ``local``: the velocity in body-i coordinates, ``v_O + ω × p = v_O − p× ω``;
    ``world``: the same vector rotated into base coordinates.
    """
    i = body_index(model, i, "i")
    p = _point_in(model, p)
    _check_frame(frame)
    J = jacobian(model, q, i, frame="local")
    Jp = J[3:] - skew(p) @ J[:3]
    if frame == "local":
        return Jp
    R, _ = body_pose(forward_kinematics(model, q)[i])
    return R @ Jp


def point_velocity(model, q, qd, i, p, *, frame):
    """Velocity of the point ``p`` (body-i coordinates) of body i."""
    i = body_index(model, i, "i")
    p = _point_in(model, p)
    _check_frame(frame)
    q, qd = check_state(model, q=q, qd=qd)             # one state (no batch)
    X0 = forward_kinematics(model, q) if frame == "world" else None
    return _point_velocity(X0, body_velocities(model, q, qd), i, p, frame)


def _point_velocity(X0, v, i, p, frame):
    """:func:`point_velocity` from the body velocities ``v`` at the state (and, for the
    world frame, the base transforms ``X0``), for callers that have them: v_O + ω × p."""
    vp = v[i][3:] + cross3(v[i][:3], p)
    return vp if frame == "local" else body_pose(X0[i])[0] @ vp


def jdot_qdot(model, q, qd, i, p=None, *, frame):
    """``J̇ qd``: the acceleration of body i (or of point p on it) when qdd = 0.

    Body (p None): the spatial acceleration ``a_i`` at qdd = 0, in body or base
    coordinates — in either set of coordinates d(J qd)/dt is the spatial
    acceleration, because ``v_i × v_i = 0``.
    Point (3-vector): for ``frame="world"`` the classical acceleration of the
    point in base coordinates, ``R (a_O + ω̇×p + ω × v_p)`` at qdd = 0; for
    ``frame="local"`` the derivative of the local point Jacobian, which is
    ``a_O + ω̇×p`` (the term ``ω × v_p`` cancels against the rotating frame).
    """
    i = body_index(model, i, "i")
    _check_frame(frame)
    q, qd = check_state(model, q=q, qd=qd)
    Xup, v, a = _velocities(model, q, qd, np.zeros(model.nv))
    if p is None:
        if frame == "local":
            return a[i]
        return inv_X(base_transforms(model, Xup)[i]) @ a[i]
    p = _point_in(model, p)
    ap = a[i][3:] + cross3(a[i][:3], p)               # spatial acceleration at p
    if frame == "local":
        return ap
    vp = v[i][3:] + cross3(v[i][:3], p)
    R, _ = body_pose(base_transforms(model, Xup)[i])
    return R @ (ap + cross3(v[i][:3], vp))
