"""Inverse dynamics (rbdlearn.inverse_dynamics): against Pinocchio, against physics (linearity in qdd,
a symmetric mass matrix, power balance, the Jacobian-transpose law for external forces), and
against a Lagrangian derivation with sympy."""

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import rbdlearn as rbd
from conftest import random_state as state
from rbdlearn.inverse_dynamics import rnea_flops
from rbdlearn.spatial import mcI, trig_zero

TOL = 1e-9


def random_forces(model, seed):
    rng = np.random.default_rng(seed + 500)
    return [None] + [rng.normal(size=6) for _ in range(model.N)]


# --- Pinocchio --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rnea_matches_pinocchio(tree, seed, assert_rel):
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    model, pm = tree.model, tree.pm
    pd = pm.createData()
    q, qd, qdd = state(model, seed)
    qp, vp, ap = (interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
                  interop.v_to_pin(model, pm, qdd))
    tau = rbd.rnea(model, q, qd, qdd)
    assert_rel(tau, interop.v_from_pin(model, pm, pin.rnea(pm, pd, qp, vp, ap)), TOL, "tau")
    f_ext = random_forces(model, seed)
    tau_f = rbd.rnea(model, q, qd, qdd, f_ext)
    tau_f_pin = pin.rnea(pm, pd, qp, vp, ap, interop.fext_to_pin(model, pm, f_ext))
    assert_rel(tau_f, interop.v_from_pin(model, pm, tau_f_pin), TOL, "tau with f_ext")
    assert np.abs(tau_f - tau).max() > 1e-3            # the forces do matter
    # gravity only (static torques)
    zero = np.zeros(model.nv)
    assert_rel(rbd.rnea(model, q, zero, zero),
               interop.v_from_pin(model, pm, pin.computeGeneralizedGravity(pm, pd, qp)), TOL,
               "gravity")


# --- physics ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def model30():
    return rbd.random_tree(30, seed=11)


@settings(max_examples=15, deadline=None)
@given(st.floats(-3, 3), st.floats(-3, 3), st.integers(0, 2**32 - 1))
def test_rnea_is_affine_in_qdd(model30, a, b, seed):
    q, qd, x = state(model30, seed)
    y = np.random.default_rng(seed + 1).normal(size=model30.nv)
    tau0 = rbd.rnea(model30, q, qd, np.zeros(model30.nv))
    lhs = rbd.rnea(model30, q, qd, a * x + b * y) - tau0
    rhs = a * (rbd.rnea(model30, q, qd, x) - tau0) + b * (rbd.rnea(model30, q, qd, y) - tau0)
    np.testing.assert_allclose(lhs, rhs, atol=1e-9 * max(1.0, np.abs(tau0).max()))


@pytest.mark.parametrize("floating", [False, True])
def test_mass_matrix_from_rnea_is_symmetric_positive_definite(floating):
    model = rbd.random_tree(30, seed=12)
    if floating:
        model = rbd.floating_base(model, mcI(3.0, np.zeros(3), np.diag([0.1, 0.2, 0.25])))
    model = rbd.without_gravity(model)
    q, _, qdd = state(model, 3)
    zero = np.zeros(model.nv)
    H = np.column_stack([rbd.rnea(model, q, zero, e) for e in np.eye(model.nv)])
    np.testing.assert_allclose(H, H.T, atol=1e-12 * np.abs(H).max())
    assert np.linalg.eigvalsh(H).min() > 0
    np.testing.assert_allclose(rbd.rnea(model, q, zero, qdd), H @ qdd,
                               atol=1e-12 * np.abs(H).max() * np.abs(qdd).sum())
    # kinetic energy = ½ qdᵀ H qd = ½ Σ v_iᵀ I_i v_i
    qd = np.random.default_rng(4).normal(size=model.nv)
    V = rbd.body_velocities(model, q, qd)
    ke = 0.5 * sum(V[i] @ model.I[i] @ V[i] for i in range(1, model.N + 1))
    assert 0.5 * qd @ H @ qd == pytest.approx(ke, rel=1e-12)


def kinetic_energy(model, q, qd):
    V = rbd.body_velocities(model, q, qd)
    return 0.5 * sum(V[i] @ model.I[i] @ V[i] for i in range(1, model.N + 1))


@pytest.mark.parametrize("tree_seed, floating", [(13, False), (14, True), (15, False)])
def test_power_balance(tree_seed, floating):
    """With no gravity and no external force, qdᵀ τ = dT/dt. The path is
    q(t) = q ⊕ (t qd + t²/2 qdd), velocity qd + t qdd; on it the true velocity of a
    spherical or free joint differs from qd + t qdd by O(t²), an even term that cancels in
    the central difference."""
    model = rbd.random_tree(30, seed=tree_seed)
    if floating:
        model = rbd.floating_base(model, mcI(3.0, np.array([0.1, 0, 0]), np.eye(3)))
    model = rbd.without_gravity(model)
    q, qd, qdd = state(model, tree_seed)
    h = 1e-5                                 # truncation O(h²) ≈ 1e-9 relative

    def T(t):
        return kinetic_energy(model, rbd.integrate_q(model, q, t * qd + t * t / 2 * qdd),
                              qd + t * qdd)

    dT = (T(h) - T(-h)) / (2 * h)
    power = qd @ rbd.rnea(model, q, qd, qdd)
    assert power == pytest.approx(dT, rel=2e-8, abs=1e-8)
    # the same on a constant-velocity path (qdd = 0): the velocity-product terms alone
    dT0 = (kinetic_energy(model, rbd.integrate_q(model, q, h * qd), qd)
           - kinetic_energy(model, rbd.integrate_q(model, q, -h * qd), qd)) / (2 * h)
    assert qd @ rbd.rnea(model, q, qd, np.zeros(model.nv)) == pytest.approx(dT0, rel=2e-8,
                                                                              abs=1e-8)


@pytest.mark.parametrize("tree_seed, floating", [(16, False), (17, True)])
def test_external_force_is_jacobian_transpose(tree_seed, floating):
    model = rbd.random_tree(30, seed=tree_seed)
    if floating:
        model = rbd.floating_base(model, mcI(3.0, np.zeros(3), np.eye(3)))
    q, qd, qdd = state(model, tree_seed)
    tau = rbd.rnea(model, q, qd, qdd)
    rng = np.random.default_rng(tree_seed)
    total = np.zeros(model.nv)
    forces = {}
    for i in range(1, model.N + 1, 4):
        f = rng.normal(size=6)
        J = rbd.jacobian(model, q, i, frame="local")
        np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, {i: f}), tau - J.T @ f,
                                   atol=1e-9 * max(1.0, np.abs(tau).max()))
        forces[i] = f
        total += J.T @ f
    # superposition over several bodies, list form
    f_list = [forces.get(i) for i in range(model.N + 1)]
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, f_list), tau - total,
                               atol=1e-9 * max(1.0, np.abs(tau).max()))


def test_gravity_is_a_base_acceleration():
    # a body at rest in gravity g needs the same joint forces as one accelerating at −g
    src = rbd.random_tree(10, seed=5, joint_types=("free",))
    model = rbd.Model(parent=[-1] + [0] * 10, joints=src.joints, Xtree=src.Xtree, I=src.I)
    q = rbd.random_q(model, np.random.default_rng(0))
    zero = np.zeros(model.nv)
    tau = rbd.rnea(model, q, zero, zero)
    # each body hangs from the base on its own free joint: τ_i = m_i g in body coordinates
    for i in range(1, model.N + 1):
        R, _ = rbd.body_pose(rbd.forward_kinematics(model, q)[i])
        m, c, _ = rbd.spatial.inertia_params(model.I[i])
        F = R.T @ np.array([0, 0, 9.81 * m])                # the support force, body coords
        np.testing.assert_allclose(tau[model.v_slices[i]],
                                   np.concatenate([np.cross(c, F), F]), atol=1e-12)


# --- symbolic: a two-link planar arm against Euler–Lagrange ------------------------------------

def test_symbolic_rnea_equals_lagrangian_two_link_arm():
    l1, l2, m1, m2, g = sympy.symbols("l1 l2 m1 m2 g", positive=True)
    model = rbd.planar_chain(2, length=[l1, l2], mass=[m1, m2],
                             gravity=np.array([0, 0, 0, 0, 0, -g], dtype=object))
    q = np.array(sympy.symbols("q1 q2"), dtype=object)
    qd = np.array(sympy.symbols("qd1 qd2"), dtype=object)
    qdd = np.array(sympy.symbols("qdd1 qdd2"), dtype=object)
    tau = rbd.rnea(model, q, qd, qdd)
    assert tau.dtype == object and tau.shape == (2,)

    # Independent derivation: joints rotate about +x, links along +y at q = 0, so link k
    # points along (y, z) = (cos φ_k, sin φ_k) with φ1 = q1, φ2 = q1 + q2.
    t = sympy.Symbol("t")
    th1, th2 = sympy.Function("th1")(t), sympy.Function("th2")(t)
    phi1, phi2 = th1, th1 + th2
    c1 = sympy.Matrix([l1 / 2 * sympy.cos(phi1), l1 / 2 * sympy.sin(phi1)])
    c2 = (sympy.Matrix([l1 * sympy.cos(phi1), l1 * sympy.sin(phi1)])
          + sympy.Matrix([l2 / 2 * sympy.cos(phi2), l2 / 2 * sympy.sin(phi2)]))
    v1, v2 = c1.diff(t), c2.diff(t)
    T = (m1 * v1.dot(v1) / 2 + m1 * l1**2 / 12 * phi1.diff(t) ** 2 / 2
         + m2 * v2.dot(v2) / 2 + m2 * l2**2 / 12 * phi2.diff(t) ** 2 / 2)
    V = g * (m1 * c1[1] + m2 * c2[1])
    L = T - V
    subs = {th1.diff(t, 2): qdd[0], th2.diff(t, 2): qdd[1]}
    subs2 = {th1.diff(t): qd[0], th2.diff(t): qd[1]}
    subs3 = {th1: q[0], th2: q[1]}
    for k, th in enumerate((th1, th2)):
        eq = L.diff(th.diff(t)).diff(t) - L.diff(th)
        eq = eq.xreplace(subs).xreplace(subs2).xreplace(subs3)   # q̈, then q̇, then q
        # zero as a trigonometric identity (sin(q1 + q2) expanded): spatial.trig_zero
        assert trig_zero(sympy.expand_trig(tau[k] - eq), q), (k, tau[k], eq)
    # and the result is exact: no floating-point numbers crept in
    assert not any(isinstance(a, sympy.Float) for e in tau for a in sympy.preorder_traversal(e))


def test_symbolic_rnea_matches_numeric():
    l1, l2, m1, m2 = sympy.symbols("l1 l2 m1 m2", positive=True)
    sym = rbd.planar_chain(2, length=[l1, l2], mass=[m1, m2])
    num = rbd.planar_chain(2, length=[0.7, 1.3], mass=[2.0, 0.5])
    q, qd, qdd = [0.3, -1.1], [0.4, 2.0], [-0.5, 0.8]
    vals = {l1: 0.7, l2: 1.3, m1: 2.0, m2: 0.5}
    tau_sym = [float(e.subs(vals)) for e in rbd.rnea(sym, q, qd, qdd)]
    np.testing.assert_allclose(tau_sym, rbd.rnea(num, q, qd, qdd), rtol=1e-12)


# --- bad input --------------------------------------------------------------------------------

def test_rnea_bad_input(model30):
    q, qd, qdd = state(model30, 0)
    with pytest.raises(ValueError, match="q has shape"):
        rbd.rnea(model30, q[:-1], qd, qdd)
    with pytest.raises(ValueError, match="qd has shape"):
        rbd.rnea(model30, q, np.append(qd, 0.0), qdd)
    with pytest.raises(ValueError, match=r"qdd\[3\] is nan"):
        bad = qdd.copy()
        bad[3] = np.nan
        rbd.rnea(model30, q, qd, bad)
    with pytest.raises(ValueError, match="qd must hold real numbers"):
        rbd.rnea(model30, q, ["fast"] * model30.nv, qdd)
    with pytest.raises(ValueError, match=r"f_ext has 3 entries"):
        rbd.rnea(model30, q, qd, qdd, f_ext=[np.zeros(6)] * 3)
    with pytest.raises(ValueError, match=r"f_ext\[1\] has shape \(5,\)"):
        rbd.rnea(model30, q, qd, qdd, f_ext={1: np.zeros(5)})
    bad_q = q.copy()
    i = model30.manifold_bodies[0]
    bad_q[model30.q_slices[i]][-1] += 0.5                 # break a quaternion
    with pytest.raises(ValueError, match=rf"joint '{model30.names[i]}'.*unit quaternion"):
        rbd.rnea(model30, bad_q, qd, qdd)


@pytest.mark.parametrize("floating", [False, True])
def test_returned_joint_forces_obey_newton_euler_per_body(floating):
    """Each body's net force — its joint force minus what it passes to its children plus
    its external force and weight — equals the rate of change of its momentum,
    computed here from body_accelerations (gravity excluded) instead of the recursion."""
    model = rbd.random_tree(20, seed=21)
    if floating:
        model = rbd.floating_base(model, mcI(2.0, np.zeros(3), np.eye(3)))
    q, qd, qdd = state(model, 21)
    f_ext = random_forces(model, 21)
    forces = rbd.rnea_forces(model, q, qd, qdd, f_ext)
    tau, f = forces.tau, forces.f
    assert isinstance(forces, rbd.JointForces)
    np.testing.assert_array_equal(tau, rbd.rnea(model, q, qd, qdd, f_ext))
    X0 = rbd.forward_kinematics(model, q)
    V = rbd.body_velocities(model, q, qd)
    A = rbd.body_accelerations(model, q, qd, qdd)
    for i in range(1, model.N + 1):
        I = model.I[i]
        weight = I @ X0[i] @ model.gravity                       # gravity as a force on body i
        passed = sum(((X0[c] @ rbd.spatial.inv_X(X0[i])).T @ f[c]      # ⁱX_c* = (ᶜX_i)ᵀ
                      for c in range(1, model.N + 1) if model.parent[c] == i), np.zeros(6))
        net = f[i] - passed + f_ext[i] + weight
        expected = I @ A[i] + rbd.spatial.cross_force(V[i], I @ V[i])
        np.testing.assert_allclose(net, expected, atol=1e-9 * max(1.0, np.abs(expected).max()))
        np.testing.assert_allclose(tau[model.v_slices[i]], model.joints[i].S(q[model.q_slices[i]]).T @ f[i],
                                   atol=1e-12 * max(1.0, np.abs(f[i]).max()))


# --- operation count ------------------------------------------------------------------------

def test_rnea_flops_of_a_one_body_arm_by_hand():
    # Xup = XJ Xtree: 6·6·11; v = Xup v_λ + S q̇: 66 + 6 + 6; a: 66 + 6 + 30 (v × vJ) + 3·6;
    # f = I a + v ×* I v: 2·66 + 30 + 6; τ = Sᵀ f: 11 (a 6-term dot product)
    assert rnea_flops(rbd.planar_chain(1)) == 396 + 78 + 120 + 168 + 11


def test_rnea_flops_are_linear_whatever_the_shape():
    # a body below another also passes its force on: f_λ += Xupᵀ f, 66 + 6 flops
    one, below = rnea_flops(rbd.planar_chain(1)), 72
    for n in (1, 2, 7, 40):
        assert rnea_flops(rbd.planar_chain(n)) == one * n + below * (n - 1)
        tree = rbd.random_tree(n, seed=n, joint_types=("revolute", "prismatic"), p_chain=0.3)
        roots = tree.parent.count(0)
        assert rnea_flops(tree) == one * n + below * (n - roots)    # no depth term
    # a ball joint (3 columns in S) costs more than a hinge, a free joint more still
    ball = rbd.random_tree(1, joint_types=("spherical",))
    free = rbd.random_tree(1, joint_types=("free",))
    assert one < rnea_flops(ball) < rnea_flops(free)
