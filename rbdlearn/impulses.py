"""One point, one impulse (Chapter 2 §5): a point of a body striking the ground
(``contact_impulse``, with restitution and Coulomb friction: separate, stick or slide) and a
ball joint reaching its cone-and-twist limit (``joint_limit_impulse``, the swing–twist
limit functions of seed 000 §2.5.3, eqs. 27–29). The point's inverse inertia is seed 000
§2.8's K = Φ Λ_ii Φᵀ (``articulated.inter_body_inertia``), and the velocity change
Δq̇ = H⁻¹ Jᵀ P is the ABA at rest without gravity (``articulated._impulse_response``),
never a formed or inverted H. ``rbdlearn.contact`` (§6) generalizes both to many contacts.
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .articulated import _articulated_sweep, _impulse_response, _theta, inter_body_inertia
from .errors import RbdlearnError
from .joints import Spherical, swing_twist_limit_violation
from .kinematics import body_pose, forward_kinematics, point_velocity
from .model import check_state, is_body
from .spatial import quat_to_rot, skew

__all__ = ["ContactImpulse", "contact_impulse", "joint_limit_impulse"]

_EYE3 = np.eye(3)


def _Phi(X0, body, p):
    """Φ = R [−p×  1] (3x6): body ``body``'s spatial velocity change → the point's
    velocity change in world axes; Φᵀ maps a point impulse to a spatial impulse."""
    R, _ = body_pose(X0[body])
    return R @ np.hstack([-skew(p), _EYE3])


@dataclass
class ContactImpulse:
    """Result of :func:`.contact_impulse`: the impulse ``P`` on the body at the point
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
    sweep = _articulated_sweep(model, q)              # I^A, U, D⁻¹: for K and for Δq̇
    K = Phi @ inter_body_inertia(model, q, i, i, _theta(model, sweep)) @ Phi.T
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
    dqd = _impulse_response(model, sweep, f_ext={i: Phi.T @ P})
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
    sweep = _articulated_sweep(model, q)
    Y = np.column_stack([_impulse_response(model, sweep, tau=row) for row in J])   # H⁻¹ Jᵀ
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
