"""Spatial vector algebra (rbdlearn.spatial): identities of seed 001, checked numerically,
with hypothesis, and symbolically with sympy."""

import math

import numpy as np
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rbdlearn.spatial import (crf, crm, cross_force, cross_motion, exp_so3, force_X,
                              inertia_params, inv_X, log_so3, mcI, plux, plux_parts,
                              quat_exp, quat_mul, quat_to_rot, rot_to_quat, rotx, roty,
                              rotz, skew, to_angular_linear, to_linear_angular, trig_zero,
                              unskew)

TOL = 1e-12
HYP = settings(max_examples=60, deadline=None)

# --- strategies -------------------------------------------------------------------------

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)
vec6 = st.tuples(*[finite] * 6).map(np.array)
unit3 = (st.tuples(*[st.floats(-1, 1)] * 3).map(np.array)
         .filter(lambda a: np.linalg.norm(a) > 0.1).map(lambda a: a / np.linalg.norm(a)))
# angles concentrated near the difficult values 0 and π as well as spread over [0, π]
angle = st.one_of(st.floats(0, 1e-5), st.floats(math.pi - 1e-5, math.pi), st.floats(0, math.pi),
                  st.sampled_from([0.0, 1e-12, 1e-8, math.pi, math.pi - 1e-12, math.pi - 1e-4]))
rotvec = st.builds(lambda a, th: a * th, unit3, angle)
rotation = st.tuples(finite, finite, finite).map(lambda w: exp_so3(np.array(w)))
transform = st.builds(plux, rotation, vec3)


def rng_seed():
    return np.random.default_rng(20240601)


# --- 3-D rotations ----------------------------------------------------------------------

@HYP
@given(vec3, vec3)
def test_skew_is_the_cross_product_and_unskew_inverts_it(p, u):
    S = skew(p)
    np.testing.assert_allclose(S @ u, np.cross(p, u), atol=1e-12)
    np.testing.assert_array_equal(S, -S.T)
    np.testing.assert_array_equal(unskew(S), p)


def test_elementary_rotations_are_proper_and_match_exp_so3():
    for th in np.linspace(-4, 4, 17):
        for rot, axis in ((rotx, 0), (roty, 1), (rotz, 2)):
            R = rot(th)
            np.testing.assert_allclose(R @ R.T, np.eye(3), atol=TOL)
            assert np.linalg.det(R) == pytest.approx(1.0, abs=TOL)
            np.testing.assert_allclose(R, exp_so3(np.eye(3)[axis] * th), atol=TOL)


def test_elementary_rotations_are_active():
    # a quarter turn about x carries y onto z, about y carries z onto x, about z x onto y
    e = np.eye(3)
    np.testing.assert_allclose(rotx(np.pi / 2) @ e[1], e[2], atol=TOL)
    np.testing.assert_allclose(roty(np.pi / 2) @ e[2], e[0], atol=TOL)
    np.testing.assert_allclose(rotz(np.pi / 2) @ e[0], e[1], atol=TOL)


@HYP
@given(rotvec)
@example(np.zeros(3))
@example(np.array([0.0, 0.0, math.pi]))
@example(np.array([math.pi, 0.0, 0.0]) * (1 - 1e-15))
def test_exp_log_round_trip(w):
    R = exp_so3(w)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=TOL)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=TOL)
    w2 = log_so3(R)
    assert np.linalg.norm(w2) <= math.pi + 1e-12
    # exp ∘ log is the identity on rotations, to round-off, also at θ = 0 and θ = π
    np.testing.assert_allclose(exp_so3(w2), R, atol=1e-12)
    th = np.linalg.norm(w)
    if th < math.pi - 1e-6:
        # below π the rotation vector is unique; its direction comes from sin θ·axis, so
        # round-off is amplified by 1/sin θ as θ → π
        np.testing.assert_allclose(w2, w, atol=1e-12 + 1e-14 / (math.pi - th))
    else:                            # at π, w and −w are the same rotation
        assert min(np.linalg.norm(w2 - w), np.linalg.norm(w2 + w)) < 1e-9


@HYP
@given(unit3, st.floats(0.01, 3.1))
def test_log_of_large_angle_wraps_into_ball_of_radius_pi(a, th):
    w = a * (th + 2 * math.pi)           # the same rotation as a·th
    np.testing.assert_allclose(log_so3(exp_so3(w)), a * th, atol=1e-10)


def test_exp_so3_first_order_near_identity():
    # exp(w) = 1 + w× + ½ (w×)² + O(|w|³): checks the Taylor branch for tiny angles
    w = np.array([3e-7, -2e-7, 1e-7])
    W = skew(w)
    np.testing.assert_allclose(exp_so3(w), np.eye(3) + W + W @ W / 2, atol=1e-20)
    np.testing.assert_allclose(log_so3(exp_so3(w)), w, rtol=1e-9)


@pytest.mark.parametrize("bad", [np.zeros(2), np.zeros((3, 1)), np.zeros(4)])
def test_exp_so3_rejects_bad_shapes(bad):
    with pytest.raises(ValueError, match="3-vector"):
        exp_so3(bad)


def test_log_so3_rejects_bad_shapes():
    with pytest.raises(ValueError, match="3x3"):
        log_so3(np.eye(4))


# --- quaternions --------------------------------------------------------------------------

@HYP
@given(rotvec)
def test_quat_exp_matches_exp_so3(w):
    quat = quat_exp(w)
    assert np.linalg.norm(quat) == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(quat_to_rot(quat), exp_so3(w), atol=TOL)


@HYP
@given(rotvec, rotvec)
def test_quat_mul_is_the_rotation_product(w1, w2):
    p, q = quat_exp(w1), quat_exp(w2)
    np.testing.assert_allclose(quat_to_rot(quat_mul(p, q)),
                               quat_to_rot(p) @ quat_to_rot(q), atol=TOL)


def test_quat_mul_hamilton_basis():
    one, i, j, k = np.eye(4)
    np.testing.assert_array_equal(quat_mul(i, j), k)
    np.testing.assert_array_equal(quat_mul(j, k), i)
    np.testing.assert_array_equal(quat_mul(k, i), j)
    np.testing.assert_array_equal(quat_mul(i, i), -one)


@HYP
@given(rotvec)
def test_rot_to_quat_inverts_quat_to_rot(w):
    R = exp_so3(w)
    quat = rot_to_quat(R)
    assert quat[0] >= 0
    assert np.linalg.norm(quat) == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(quat_to_rot(quat), R, atol=TOL)
    q0 = quat_exp(w)
    assert min(np.abs(quat - q0).max(), np.abs(quat + q0).max()) < 1e-12


def test_quat_to_rot_meaning():
    # (cos 45°, sin 45° x): a quarter turn about x
    s = math.sqrt(0.5)
    np.testing.assert_allclose(quat_to_rot([s, s, 0, 0]), rotx(np.pi / 2), atol=TOL)
    np.testing.assert_allclose(quat_to_rot([s, 0, 0, s]), rotz(np.pi / 2), atol=TOL)


# --- Plücker transforms -------------------------------------------------------------------

@HYP
@given(rotation, vec3)
def test_plux_parts_round_trip(E, r):
    E2, r2 = plux_parts(plux(E, r))
    np.testing.assert_allclose(E2, E, atol=TOL)
    np.testing.assert_allclose(r2, r, atol=1e-11)


def test_plux_meaning_on_a_motion_vector():
    # B: rotated by R and displaced by r in A. A rigid motion with angular velocity w and
    # velocity v_O at A's origin has velocity v_O + w × r at B's origin; in B-coordinates
    # both vectors are rotated by E = Rᵀ.
    rng = rng_seed()
    for _ in range(10):
        R, r = exp_so3(rng.normal(size=3)), rng.normal(size=3)
        w, vO = rng.normal(size=3), rng.normal(size=3)
        vB = plux(R.T, r) @ np.concatenate([w, vO])
        np.testing.assert_allclose(vB[:3], R.T @ w, atol=TOL)
        np.testing.assert_allclose(vB[3:], R.T @ (vO + np.cross(w, r)), atol=1e-11)


def test_plux_without_r_is_a_pure_rotation():
    E = rotz(0.3)
    X = plux(E)
    np.testing.assert_array_equal(X[3:, :3], np.zeros((3, 3)))
    np.testing.assert_array_equal(X, plux(E, np.zeros(3)))


@HYP
@given(transform)
def test_inv_X(X):
    np.testing.assert_allclose(inv_X(X) @ X, np.eye(6), atol=1e-10)
    np.testing.assert_allclose(X @ inv_X(X), np.eye(6), atol=1e-10)


@HYP
@given(rotation, vec3, rotation, vec3)
def test_composition(E1, r1, E2, r2):
    # ᶜX_B ᴮX_A = ᶜX_A: C is at r1 + E1ᵀ r2 in A, with orientation E2 E1
    np.testing.assert_allclose(plux(E2, r2) @ plux(E1, r1), plux(E2 @ E1, r1 + E1.T @ r2),
                               atol=1e-10)


@HYP
@given(transform)
def test_force_X_is_the_inverse_transpose(X):
    np.testing.assert_allclose(force_X(X), np.linalg.inv(X).T, atol=1e-9)


@HYP
@given(transform, vec6, vec6)
def test_power_is_invariant(X, v, f):
    # (X v) · (X⁻ᵀ f) = v · f
    assert (X @ v) @ (force_X(X) @ f) == pytest.approx(v @ f, abs=1e-9 * (1 + np.abs(v).max()
                                                                       * np.abs(f).max()))


# --- cross products -----------------------------------------------------------------------

@HYP
@given(vec6, vec6)
def test_cross_products(v, m):
    # v×* from its block form [[ω×, u×], [0, ω×]] (seed 001), the 3x3 blocks built from
    # numpy's cross product of the basis vectors: independent of crm, whose transpose crf is
    w, u = v[:3], v[3:]
    wx, ux = (np.column_stack([np.cross(a, e) for e in np.eye(3)]) for a in (w, u))
    np.testing.assert_allclose(crf(v), np.block([[wx, ux], [np.zeros((3, 3)), wx]]),
                               atol=1e-12 * (1 + np.abs(v).max()))
    np.testing.assert_allclose(crm(v) @ m, cross_motion(v, m), atol=1e-11)
    np.testing.assert_allclose(crf(v) @ m, cross_force(v, m), atol=1e-11)
    np.testing.assert_allclose(crm(v) @ v, np.zeros(6), atol=1e-11)
    # the 3-D meaning: v × m = [w × a; w × b + u × a]
    w, u, a, b = v[:3], v[3:], m[:3], m[3:]
    np.testing.assert_allclose(cross_motion(v, m),
                               np.concatenate([np.cross(w, a), np.cross(w, b) + np.cross(u, a)]),
                               atol=1e-11)
    np.testing.assert_allclose(cross_force(v, m),
                               np.concatenate([np.cross(w, a) + np.cross(u, b), np.cross(w, b)]),
                               atol=1e-11)


@HYP
@given(transform, vec6)
def test_cross_product_transforms_like_an_operator(X, v):
    # X (v×) X⁻¹ = (X v)×  and the force version with X⁻ᵀ
    np.testing.assert_allclose(X @ crm(v) @ inv_X(X), crm(X @ v), atol=1e-8)
    Xf = force_X(X)
    np.testing.assert_allclose(Xf @ crf(v) @ np.linalg.inv(Xf), crf(X @ v), atol=1e-8)


# --- rigid-body inertia -------------------------------------------------------------------

def random_body(rng):
    m = rng.uniform(0.1, 3)
    second = rng.uniform(0.01, 1, 3)
    R = exp_so3(rng.normal(size=3))
    Ic = R @ np.diag(second.sum() - second) @ R.T
    return m, rng.normal(size=3), Ic


def test_mcI_inertia_params_round_trip():
    rng = rng_seed()
    for _ in range(20):
        m, c, Ic = random_body(rng)
        I = mcI(m, c, Ic)
        np.testing.assert_allclose(I, I.T, atol=1e-14)
        m2, c2, Ic2 = inertia_params(I)
        assert m2 == pytest.approx(m, rel=1e-14)
        np.testing.assert_allclose(c2, c, atol=1e-12)
        np.testing.assert_allclose(Ic2, Ic, atol=1e-12)


def test_inertia_params_rejects_non_positive_mass():
    with pytest.raises(ValueError, match="mass"):
        inertia_params(np.zeros((6, 6)))


def test_mcI_is_the_parallel_axis_form():
    # seed 001: I_O = [[1, c×], [0, 1]] diag(Ic, m1) [[1, 0], [c×ᵀ, 1]]
    rng = rng_seed()
    for _ in range(10):
        m, c, Ic = random_body(rng)
        A = np.block([[np.eye(3), skew(c)], [np.zeros((3, 3)), np.eye(3)]])
        IC = np.block([[Ic, np.zeros((3, 3))], [np.zeros((3, 3)), m * np.eye(3)]])
        np.testing.assert_allclose(mcI(m, c, Ic), A @ IC @ A.T, atol=1e-12)


def test_mcI_momentum_meaning():
    # h = I v: linear momentum m·(velocity of the COM), angular momentum about O
    # Ic ω + c × m v_C
    rng = rng_seed()
    m, c, Ic = random_body(rng)
    w, vO = rng.normal(size=3), rng.normal(size=3)
    h = mcI(m, c, Ic) @ np.concatenate([w, vO])
    vC = vO + np.cross(w, c)
    np.testing.assert_allclose(h[3:], m * vC, atol=1e-12)
    np.testing.assert_allclose(h[:3], Ic @ w + np.cross(c, m * vC), atol=1e-12)


@HYP
@given(transform, vec6, st.integers(0, 2**32 - 1))
def test_inertia_transform_preserves_kinetic_energy(X, vA, seed):
    # X = ᴮX_A; I_B = X⁻ᵀ I_A X⁻¹; the body's kinetic energy is frame independent
    IA = mcI(*random_body(np.random.default_rng(seed)))
    IB = force_X(X) @ IA @ inv_X(X)
    vB = X @ vA
    assert 0.5 * vB @ IB @ vB == pytest.approx(0.5 * vA @ IA @ vA, rel=1e-9, abs=1e-9)
    # and I_B is again of the mcI form: the COM moves as a point, Ic rotates
    m, c, Ic = inertia_params(IA)
    E, r = plux_parts(X)
    mB, cB, IcB = inertia_params(IB)
    assert mB == pytest.approx(m, rel=1e-12)
    np.testing.assert_allclose(cB, E @ (c - r), atol=1e-9)
    np.testing.assert_allclose(IcB, E @ Ic @ E.T, atol=1e-8)


# --- [angular; linear] <-> [linear; angular] ---------------------------------------------

def test_order_conversion_of_vectors_and_stacks():
    v = np.arange(6.0)
    np.testing.assert_array_equal(to_linear_angular(v), [3, 4, 5, 0, 1, 2])
    np.testing.assert_array_equal(to_angular_linear(to_linear_angular(v)), v)
    J = np.arange(6.0 * 4).reshape(6, 4)
    np.testing.assert_array_equal(to_linear_angular(J), np.vstack([J[3:], J[:3]]))
    np.testing.assert_array_equal(to_angular_linear(to_linear_angular(J)), J)


def test_order_conversion_of_operators():
    rng = rng_seed()
    X = plux(exp_so3(rng.normal(size=3)), rng.normal(size=3))
    v = rng.normal(size=6)
    XL = to_linear_angular(X, operator=True)
    # converting the operator and the vector commutes with applying it
    np.testing.assert_allclose(XL @ to_linear_angular(v), to_linear_angular(X @ v), atol=1e-12)
    np.testing.assert_array_equal(to_angular_linear(XL, operator=True), X)
    # [linear; angular] Plücker transform has its off-diagonal block top right
    np.testing.assert_array_equal(XL[:3, 3:], X[3:, :3])
    np.testing.assert_array_equal(XL[3:, :3], np.zeros((3, 3)))


@pytest.mark.parametrize("bad, operator", [
    (np.zeros(5), False), (np.zeros(7), False), (np.zeros((3, 6)), False),
    (np.zeros((6, 2, 2)), False), (np.zeros((6, 5)), True), (np.zeros(6), True),
    (np.zeros((5, 5)), True)])
def test_order_conversion_rejects_bad_shapes(bad, operator):
    for f in (to_linear_angular, to_angular_linear):
        with pytest.raises(ValueError, match="expected .*got shape"):
            f(bad, operator=operator)


# --- symbolic -----------------------------------------------------------------------------

def test_symbolic_cross_products():
    v = np.array(sympy.symbols("w1:4 v1:4"), dtype=object)
    m = np.array(sympy.symbols("a1:7"), dtype=object)
    assert crm(v).dtype == object
    assert all(sympy.expand(e) == 0 for e in crm(v) @ v)
    assert all(sympy.expand(e) == 0 for e in crm(v) @ m - cross_motion(v, m))
    assert all(sympy.expand(e) == 0 for e in crf(v) @ m - cross_force(v, m))
    # power of v ×* f against v vanishes: v · (v ×* f) = 0
    assert sympy.expand(v @ cross_force(v, m)) == 0


def test_symbolic_transforms():
    th = sympy.Symbol("theta")
    r = np.array(sympy.symbols("x y z"), dtype=object)
    X = plux(rotz(th), r)
    assert X.dtype == object
    assert all(sympy.simplify(e) == 0 for e in (inv_X(X) @ X - np.eye(6, dtype=int)).ravel())
    E, r2 = plux_parts(X)
    assert all(sympy.simplify(e) == 0 for e in r2 - r)
    # force_X(X) X = ... = X⁻ᵀ X: check (X v)·(X⁻ᵀ f) = v·f symbolically
    v = np.array(sympy.symbols("v1:7"), dtype=object)
    f = np.array(sympy.symbols("f1:7"), dtype=object)
    assert sympy.simplify((X @ v) @ (force_X(X) @ f) - v @ f) == 0


def test_symbolic_inertia():
    m = sympy.Symbol("m", positive=True)
    c = np.array(sympy.symbols("cx cy cz"), dtype=object)
    Ic = np.array(sympy.Matrix(3, 3, lambda i, j: sympy.Symbol(f"I{min(i, j)}{max(i, j)}")))
    I = mcI(m, c, Ic)
    m2, c2, Ic2 = inertia_params(I)
    assert sympy.simplify(m2 - m) == 0
    assert all(sympy.simplify(e) == 0 for e in c2 - c)
    assert all(sympy.simplify(e) == 0 for e in (Ic2 - Ic).ravel())


# --- symbolic identities ------------------------------------------------------------------

def test_trig_zero_decides_trigonometric_identities():
    a, b, x = sympy.symbols("alpha beta x", real=True)
    t = sympy.symbols("t", real=True)
    theta = sympy.Function("theta")(t)
    E = rotz(a) @ rotx(b)
    assert trig_zero(sympy.Matrix(E.T @ E) - sympy.eye(3), [a, b])             # Eᵀ E = 1
    assert trig_zero(sympy.sin(a) ** 4 - sympy.cos(a) ** 4 - sympy.sin(a) ** 2 + sympy.cos(a) ** 2, [a])
    assert not trig_zero(sympy.Matrix(E) - sympy.eye(3), [a, b])
    assert not trig_zero(sympy.sin(a) ** 2 + sympy.cos(a) ** 2 - 1 + x * sympy.sin(b), [a, b])
    # functions of time and their derivatives count as free symbols
    w = sympy.diff(theta, t)
    assert trig_zero(w * (sympy.sin(theta) ** 2 + sympy.cos(theta) ** 2) - w, [theta])
    assert not trig_zero(w * sympy.sin(theta), [theta])
    # anything but a polynomial in the symbols, sines and cosines is refused by name
    for bad in (1 / x + sympy.sin(a), sympy.sin(2 * a), sympy.sqrt(x) * sympy.cos(a)):
        with pytest.raises(ValueError, match="not a polynomial"):
            trig_zero(bad, [a])
