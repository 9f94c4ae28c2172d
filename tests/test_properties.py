"""Property-based tests over random models: hypothesis draws a whole kinematic tree (its
shape, joint types, axes, tree transforms, inertias, gravity, fixed or floating base) and
a state, and each test checks an identity that must hold for every such model: ABA
inverts RNEA, H is symmetric positive definite and equals every other way of computing
it, power balance, momentum balance, and the Pinocchio round trip.

The other test files check these algorithms on a few fixed (seeded) trees; here the
trees themselves vary, and hypothesis shrinks a failure to a small tree. Every test is
derandomized, so a run checks the same examples every time (CI is reproducible).
"""

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rbdlearn as rbd
from conftest import rel_err
from rbdlearn.spatial import exp_so3, mcI, plux, quat_exp

# --- the strategy: random trees ---------------------------------------------------------

# Strategies are built once, here: hypothesis validates each new strategy object, which
# costs more than drawing from it.

def vec3(lo, hi):
    """A 3-vector, each component in [lo, hi]."""
    return st.tuples(*[st.floats(lo, hi)] * 3).map(np.array)


def _polar(theta, phi):
    return np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])


def box_inertia(m, sides, R, c):
    """The spatial inertia of a solid box of mass m and the given sides, turned by R, its
    centre at c: principal moments m(b² + c²)/12, ..., positive and obeying the triangle
    inequality, as every physical inertia does."""
    principal = m / 12 * (sides @ sides - sides**2)
    return mcI(m, c, R @ np.diag(principal) @ R.T)


ANGLES = st.floats(-np.pi, np.pi)
ROTATIONS = vec3(-np.pi, np.pi).map(exp_so3)        # exp of any rotation vector, |w_k| ≤ π
# ±e_x, ±e_y, ±e_z (as in most robots), or any direction by its polar and azimuth angles
UNIT_VECTORS = st.one_of(st.builds(lambda k, sign: sign * np.eye(3)[k], st.integers(0, 2),
                                   st.sampled_from([1.0, -1.0])),
                         st.builds(_polar, st.floats(0.0, np.pi), ANGLES))
# any rotation; an offset of length 0 (joint frames at one point, as in a wrist) or 0.05..1
TRANSFORMS = st.builds(lambda E, length, u: plux(E, length * u), ROTATIONS,
                       st.one_of(st.just(0.0), st.floats(0.05, 1.0)), UNIT_VECTORS)
# a box of mass 0.1..10 and sides 0.05..1, any orientation, its centre in [−0.5, 0.5]³
INERTIAS = st.builds(box_inertia, st.floats(0.1, 10.0), vec3(0.05, 1.0), ROTATIONS,
                     vec3(-0.5, 0.5))
# a body on a fixed joint may also be massless: a frame, such as a sensor mount
FIXED_INERTIAS = st.one_of(INERTIAS, st.just(np.zeros((6, 6))))
KINDS = st.sampled_from(("revolute", "prismatic", "spherical", "spherical_zyx", "free",
                         "fixed"))
SHAPES = st.sampled_from(("chain", "star", "branching"))
MAX_BODIES = 8
# linear gravity: none, 9.81 along −z, or any in [−10, 10]³; by the models() argument
NO_GRAVITY, DOWN, ANY_GRAVITY = (st.just((0.0, 0.0, 0.0)), st.just((0.0, 0.0, -9.81)),
                                 st.tuples(*[st.floats(-10.0, 10.0)] * 3))
GRAVITIES = {None: st.one_of(NO_GRAVITY, DOWN, ANY_GRAVITY), False: NO_GRAVITY,
             True: st.one_of(DOWN, ANY_GRAVITY)}
# a configuration of each joint type: angles in [−π, π] (the ZYX joint's pitch in
# [−1.2, 1.2], away from gimbal lock, as SphericalZYX.random_q), slides in [−0.5, 0.5],
# positions in [−1, 1]³, unit quaternions of any rotation vector
QUATERNIONS = vec3(-np.pi, np.pi).map(quat_exp)
JOINT_Q = {rbd.Revolute: st.tuples(ANGLES), rbd.Prismatic: st.tuples(st.floats(-0.5, 0.5)),
           rbd.Spherical: QUATERNIONS,
           rbd.SphericalZYX: st.tuples(ANGLES, st.floats(-1.2, 1.2), ANGLES),
           rbd.Free: st.tuples(vec3(-1.0, 1.0), QUATERNIONS).map(np.concatenate),
           rbd.Fixed: st.just(())}


def joint(kind, axis):
    makers = {"revolute": lambda: rbd.Revolute(axis), "prismatic": lambda: rbd.Prismatic(axis),
              "spherical": rbd.Spherical, "spherical_zyx": rbd.SphericalZYX,
              "free": rbd.Free, "fixed": rbd.Fixed}
    return makers[kind]()


@st.composite
def models(draw, floating=None, gravity=None):
    """A random kinematic tree, built through ``rbd.Model``.

    * 1..8 bodies; shape: a chain (parent i − 1), a star (every body on the base) or a
      branching tree (each parent drawn among the earlier bodies);
    * each joint revolute, prismatic (about / along an axis-aligned or arbitrary unit axis),
      spherical (quaternion), spherical ZYX (Euler angles), free or fixed — every type that
      ``interop.to_pinocchio`` converts (rbdlearn has no helical joint); at least one
      joint moves;
    * tree transforms: any rotation, offsets of length 0 or 0.05..1;
    * inertias: boxes of mass 0.1..10 and sides 0.05..1, centre of mass in [−0.5, 0.5]³;
      a body on a fixed joint may be massless; every body on a moving joint has mass and a
      positive-definite rotational inertia, so H is positive definite;
    * gravity: none, 9.81 along −z, or any linear acceleration in [−10, 10]³
      (``gravity=False``: none; ``True``: one of the other two);
    * a fixed base, or (``floating_base``) a free-floating root body with a drawn inertia
      (``floating``, a boolean, forces the choice).
    """
    n = draw(st.integers(1, MAX_BODIES))
    shape = draw(SHAPES)
    parent = [-1]
    for i in range(1, n + 1):
        parent.append({"chain": i - 1, "star": 0}[shape] if shape != "branching"
                      else draw(st.integers(0, i - 1)))
    kinds = [draw(KINDS) for _ in range(n)]
    if all(k == "fixed" for k in kinds):
        kinds[0] = "revolute"
    joints, Xtree, I = [None], [None], [None]
    for kind in kinds:
        joints.append(joint(kind, draw(UNIT_VECTORS)))
        Xtree.append(draw(TRANSFORMS))
        I.append(draw(FIXED_INERTIAS if kind == "fixed" else INERTIAS))
    g = draw(GRAVITIES[gravity])
    model = rbd.Model(parent=parent, joints=joints, Xtree=Xtree, I=I,
                      gravity=np.concatenate([np.zeros(3), g]))
    if floating is None:
        floating = draw(st.booleans())
    if floating:
        model = rbd.floating_base(model, draw(INERTIAS))
    return model


def vectors(n, bound):
    return st.lists(st.floats(-bound, bound), min_size=n, max_size=n)


@dataclass(frozen=True)
class Case:
    """A model and a state: velocities |q̇_k| ≤ 2, accelerations |q̈_k| ≤ 5, joint forces
    |τ_k| ≤ 10, and external forces (|f_k| ≤ 5 per component, body coordinates) or None."""
    model: rbd.Model
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    f_ext: list

    def __repr__(self):      # pytest's view of a failing case (hypothesis prints every field)
        m = self.model
        return (f"Case(parent={m.parent[1:]}, joints={[type(j).__name__ for j in m.joints[1:]]}, "
                f"gravity={m.gravity[3:]}, q={self.q!r}, qd={self.qd!r}, qdd={self.qdd!r}, "
                f"tau={self.tau!r}, f_ext={'yes' if self.f_ext else None})")


@st.composite
def cases(draw, floating=None, gravity=None, forces=None):
    """A model from ``models`` and a state of it (see :class:`Case`); ``forces``
    (boolean) forces the choice of external forces when given."""
    model = draw(models(floating=floating, gravity=gravity))
    q = np.concatenate([np.zeros(0)] + [np.asarray(draw(JOINT_Q[type(j)]), float)
                                        for j in model.joints[1:]])
    if forces is None:
        forces = draw(st.booleans())
    f_ext = None
    if forces:
        f_ext = [None] + [np.array(draw(vectors(6, 5.0))) for _ in range(model.N)]
    qd, qdd, tau = (np.array(draw(vectors(model.nv, bound)), dtype=float)
                    for bound in (2.0, 5.0, 10.0))
    return Case(model, q, qd, qdd, tau, f_ext)


# --- helpers ------------------------------------------------------------------------------

def frequency(qd, qdd):
    """ν = Σ|q̇_k| + √(Σ|q̈_k|) (1/s, at least 1): a rough upper scale of how fast the
    state's functions (energy, momentum) vary, the time scale of the finite differences."""
    return max(1.0, np.abs(qd).sum() + np.sqrt(np.abs(qdd).sum()))


def rate_along_motion(model, f, q, qd, qdd):
    """d/dt f(q(t), q̇(t)) at t = 0 along a motion through the state (q, q̇) with
    acceleration q̈: q(t) = q ⊕ t q̇ (on the configuration manifold, ``integrate_q``),
    q̇(t) = q̇ + t q̈. The derivative at t = 0 depends only on q(0), q'(0) = q̇, q̇(0) and
    q̇'(0) = q̈, so this path gives the rate of f along the true motion.

    Central differences D(h) = f'(0) + c₂h² + c₄h⁴ + …, with c_k of order ν^(k+1)·|f|
    (ν from :func:`frequency`); Richardson's (4 D(h/2) − D(h))/3 cancels the h² term. With
    h = 0.01/ν the truncation is at most of order (νh)⁴ = 1e-8 of ν|f|, the round-off about
    1e-16/(νh) = 1e-14 of it; measured over 1000 random trees: below 2e-11 of ν|f|."""
    h = 0.01 / frequency(qd, qdd)

    def at(t):
        return np.asarray(f(model, rbd.integrate_q(model, q, t * qd), qd + t * qdd))

    def central(s):
        return (at(s) - at(-s)) / (2 * s)

    return (4 * central(h / 2) - central(h)) / 3


def velocity_map(model, other, pm):
    """T with v_other = T v_model, both models' velocities going through Pinocchio's
    layout of ``pm`` (joints matched by name): a permutation, so T⁻¹ = Tᵀ."""
    from rbdlearn import interop
    return np.column_stack([interop.v_from_pin(other, pm, interop.v_to_pin(model, pm, e))
                            for e in np.eye(model.nv)])


# --- ABA inverts RNEA ----------------------------------------------------------------------

def qdd_tolerance(model, q):
    """The bound on q̈'s relative error: 1e-9, or more where H is ill-conditioned — a
    forward-dynamics answer is only as good as ε cond(H) (the drawn boxes of 0.1..10 kg and
    0.05..1 m give cond(H) up to ~10⁶, ε cond(H) ~ 2e-10; 16 ε cond(H) leaves room for
    the growth of round-off along the tree)."""
    return max(1e-9, 16 * np.finfo(float).eps * np.linalg.cond(rbd.crba(model, q)))


@pytest.mark.fp_sensitive
@settings(max_examples=40, deadline=None, derandomize=True)
@given(cases())
def test_aba_inverts_rnea(case):
    """aba(q, q̇, rnea(q, q̇, q̈, f), f) = q̈ and rnea(q, q̇, aba(q, q̇, τ, f), f) = τ."""
    model, q, qd, f_ext = case.model, case.q, case.qd, case.f_ext
    tau = rbd.rnea(model, q, qd, case.qdd, f_ext)
    err = rel_err(rbd.aba(model, q, qd, tau, f_ext), case.qdd)
    assert err <= qdd_tolerance(model, q), f"aba(rnea(qdd)) vs qdd: relative error {err:.3g}"
    qdd = rbd.aba(model, q, qd, case.tau, f_ext)
    err = rel_err(rbd.rnea(model, q, qd, qdd, f_ext), case.tau)
    assert err <= 1e-9, f"rnea(aba(tau)) vs tau: relative error {err:.3g}"


# --- the joint-space inertia matrix --------------------------------------------------------

@settings(max_examples=40, deadline=None, derandomize=True)
@given(cases())
def test_H_is_symmetric_positive_definite_and_the_kinetic_energy_metric(case):
    """Every body on a moving joint has mass and a positive-definite rotational inertia,
    so H = crba(q) is symmetric positive definite; and ½ q̇ᵀ H q̇ is the kinetic energy
    ½ Σ v_iᵀ I_i v_i that ``rbd.energy`` computes from the body velocities."""
    model, q, qd = case.model, case.q, case.qd
    H = rbd.crba(model, q)
    scale = np.abs(H).max()
    np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-13 * scale)
    assert np.linalg.eigvalsh(H).min() > 0
    kinetic = rbd.energy(rbd.without_gravity(model), q, qd)
    assert 0.5 * qd @ H @ qd == pytest.approx(kinetic, rel=1e-12, abs=1e-12)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(cases())
def test_crba_equals_the_other_ways_to_compute_H(case):
    """CRBA against the unit-vector method (n RNEAs with gravity off), the 3-vector
    composite-body method and the Jacobian method; and column k of H is
    rnea(q, q̇, e_k, f) − rnea(q, q̇, 0, f) at any q̇, with gravity and external forces on
    (RNEA is affine in q̈: the velocity, gravity and force terms cancel)."""
    model, q, qd, f_ext = case.model, case.q, case.qd, case.f_ext
    H = rbd.crba(model, q)
    for method in (rbd.unit_vector_method, rbd.crba_3vector, rbd.jacobian_method):
        err = rel_err(method(model, q), H)
        assert err <= 1e-12, f"{method.__name__} vs crba: relative error {err:.3g}"
    b = rbd.rnea(model, q, qd, np.zeros(model.nv), f_ext)
    columns = np.column_stack([rbd.rnea(model, q, qd, e, f_ext) - b for e in np.eye(model.nv)])
    # the subtraction loses digits in proportion to |b| / |H|
    err = rel_err(columns, H) / max(1.0, np.abs(b).max() / max(1.0, np.abs(H).max()))
    assert err <= 1e-12, f"rnea columns vs crba: relative error {err:.3g}"


# --- power balance and momentum balance, along the motion ABA computes ----------------------

@settings(max_examples=40, deadline=None, derandomize=True)
@given(cases())
def test_energy_changes_by_the_power_of_the_joint_and_external_forces(case):
    """Along the motion q̈ = aba(q, q̇, τ, f), the total energy E = T + V (kinetic plus
    gravitational, ``rbd.energy``) changes at the rate of the power put in:
        dE/dt = q̇ᵀ τ + Σ_i v_iᵀ f_i
    (gravity is in V, and an external force f_i on body i, at body velocity v_i, both in
    body coordinates, does the work v_iᵀ f_i). dE/dt is a finite difference along the
    motion (``rate_along_motion``): an independent check of ABA, the energy, body
    velocities and the configuration update on every joint type. (It cannot see a term
    that does no work, such as the gyroscopic v ×* I v: the momentum tests can.)"""
    model, q, qd, tau, f_ext = case.model, case.q, case.qd, case.tau, case.f_ext
    qdd = rbd.aba(model, q, qd, tau, f_ext)
    dE = rate_along_motion(model, rbd.energy, q, qd, qdd)
    power = qd @ tau
    terms = np.abs(qd * tau)
    if f_ext is not None:
        v = rbd.body_velocities(model, q, qd)
        work = np.array([v[i] @ f_ext[i] for i in range(1, model.N + 1)])
        power, terms = power + work.sum(), np.concatenate([terms, np.abs(work)])
    # the scale of the rates in play: the largest power term, and ν (T + |V|), the rate at
    # which kinetic and potential energy can trade (the finite difference's own scale); a
    # wrong term in the dynamics is off by a sizeable fraction of it, the finite difference
    # by less than 2e-11 of it (see rate_along_motion)
    kinetic = rbd.energy(rbd.without_gravity(model), q, qd)
    potential = rbd.energy(model, q, qd) - kinetic
    scale = max(1.0, terms.max(), frequency(qd, qdd) * (kinetic + abs(potential)))
    assert abs(dE - power) <= 1e-9 * scale, \
        f"dE/dt = {dE:.12g}, power = {power:.12g} (scale {scale:.3g})"


def momentum_rate(case):
    """(dh/dt, scale) of a free-floating tree along q̈ = aba(q, q̇, τ, f) with the drawn τ
    on every joint but the root's free joint, where τ would be a wrench from the world.
    dh/dt is a finite difference along the motion (``rate_along_motion``) of the spatial
    momentum h = Σ_i ⁱX₀ᵀ I_i v_i (``rbd.momentum``: world coordinates, about the world
    origin); its scale is ν |h| (see ``rate_along_motion``)."""
    model, q, qd = case.model, case.q, case.qd
    assert isinstance(model.joints[1], rbd.Free) and model.parent.count(0) == 1
    tau = case.tau.copy()
    tau[model.v_slices[1]] = 0.0
    qdd = rbd.aba(model, q, qd, tau, case.f_ext)
    dh = rate_along_motion(model, rbd.momentum, q, qd, qdd)
    return dh, max(1.0, frequency(qd, qdd) * np.abs(rbd.momentum(model, q, qd)).max())


@settings(max_examples=25, deadline=None, derandomize=True)
@given(cases(floating=True, gravity=False, forces=False))
def test_momentum_of_a_free_floating_tree_is_conserved(case):
    """Without gravity and external forces, a free-floating tree's spatial momentum is
    constant, dh/dt = 0, whatever the joint forces between its bodies (internal: each
    acts on two bodies with opposite signs). ABA's gyroscopic terms v ×* I v do no work,
    so the energy test cannot see them; this one can."""
    dh, scale = momentum_rate(case)
    assert np.abs(dh).max() <= 1e-9 * scale, f"dh/dt = {dh} (scale {scale:.3g})"


@settings(max_examples=25, deadline=None, derandomize=True)
@given(cases(floating=True, gravity=True, forces=True))
def test_momentum_of_a_floating_tree_changes_by_the_external_wrenches(case):
    """With gravity g and external forces f_i (body coordinates), the momentum changes by
    the total external wrench, in world coordinates about the world origin:
        dh/dt = Σ_i ⁱX₀ᵀ (I_i ⁱX₀ g + f_i)
    (gravity acts on body i as the force of its inertia under the acceleration g)."""
    model, f_ext = case.model, case.f_ext
    dh, scale = momentum_rate(case)
    X0 = rbd.forward_kinematics(model, case.q)
    g = np.asarray(model.gravity)
    wrenches = [X0[i].T @ (model.I[i] @ X0[i] @ g + f_ext[i]) for i in range(1, model.N + 1)]
    expected = np.sum(wrenches, axis=0)
    scale = max(scale, np.abs(wrenches).max())
    assert np.abs(dh - expected).max() <= 1e-9 * scale, \
        f"dh/dt = {dh}, expected {expected} (scale {scale:.3g})"


# --- Pinocchio: rbdlearn → Pinocchio → rbdlearn ---------------------------------------------

@settings(max_examples=25, deadline=None, derandomize=True)
@given(cases())
def test_pinocchio_round_trip_keeps_the_dynamics(case):
    """pm = to_pinocchio(model) and back = from_pinocchio(pm) (fixed joints merged,
    bodies renumbered depth-first, state converted by joint name): Pinocchio's RNEA,
    CRBA and ABA on pm, and rbdlearn's on back, equal rbdlearn's on the original model."""
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    model, q, qd, qdd, tau, f_ext = (case.model, case.q, case.qd, case.qdd, case.tau,
                                     case.f_ext)
    pm = interop.to_pinocchio(model)
    back = interop.from_pinocchio(pm)
    assert back.nv == model.nv and back.N == sum(j.nv > 0 for j in model.joints[1:])
    T = velocity_map(model, back, pm)
    np.testing.assert_array_equal(T @ T.T, np.eye(model.nv))           # a permutation
    qb = interop.q_from_pin(back, pm, interop.q_to_pin(model, pm, q))
    # forces on merged (fixed-joint) bodies: Pinocchio's per-joint forces carry them
    fb = None if f_ext is None else [None] + [
        interop.force_from_pin(f) for f in interop.fext_to_pin(model, pm, f_ext)[1:]]

    tau_ref, H_ref, qdd_ref = (rbd.rnea(model, q, qd, qdd, f_ext), rbd.crba(model, q),
                               rbd.aba(model, q, qd, tau, f_ext))
    # back, in rbdlearn's layout of the original model (T⁻¹ = Tᵀ)
    err = rel_err(T.T @ rbd.rnea(back, qb, T @ qd, T @ qdd, fb), tau_ref)
    assert err <= 1e-9, f"rnea of the round-tripped model: relative error {err:.3g}"
    err = rel_err(T.T @ rbd.crba(back, qb) @ T, H_ref)
    assert err <= 1e-9, f"crba of the round-tripped model: relative error {err:.3g}"
    err = rel_err(T.T @ rbd.aba(back, qb, T @ qd, T @ tau, fb), qdd_ref)
    assert err <= qdd_tolerance(model, q), \
        f"aba of the round-tripped model: relative error {err:.3g}"

    # Pinocchio's own algorithms on pm, inputs and results converted by interop
    data = pm.createData()
    qp, (vp, ap, taup) = (interop.q_to_pin(model, pm, q),
                          (interop.v_to_pin(model, pm, x) for x in (qd, qdd, tau)))
    fp = interop.fext_to_pin(model, pm, f_ext)
    err = rel_err(interop.v_from_pin(model, pm, pin.rnea(pm, data, qp, vp, ap, fp)), tau_ref)
    assert err <= 1e-9, f"pinocchio.rnea: relative error {err:.3g}"
    err = rel_err(interop.H_from_pin(model, pm, pin.crba(pm, data, qp)), H_ref)
    assert err <= 1e-9, f"pinocchio.crba: relative error {err:.3g}"
    err = rel_err(interop.v_from_pin(model, pm, pin.aba(pm, data, qp, vp, taup, fp)), qdd_ref)
    assert err <= qdd_tolerance(model, q), f"pinocchio.aba: relative error {err:.3g}"
