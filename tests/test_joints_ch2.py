"""Chapter 2 joints (seed 000 §2.5): the ZYX Euler-angle ball joint and swing–twist angles."""

import math

import numpy as np
import pytest
import sympy

import rbdlearn as rbd
from rbdlearn.articulated import SingularArticulatedInertia
from rbdlearn.joints import (SphericalZYX, from_swing_twist, swing_twist, swing_twist_factors,
                             swing_twist_limit_violation)
from rbdlearn.spatial import (crm, exp_so3, log_so3, mcI, plux, rot_to_quat, rotx, roty, rotz,
                              skew, to_angular_linear, trig_zero)

from conftest import random_state, rel_err

ZYX = SphericalZYX()
ALL_TYPES = ("revolute", "prismatic", "spherical", "spherical_zyx", "free", "fixed")


def one_body(joint=ZYX):
    I = mcI(1.3, np.array([0.1, -0.2, 0.25]), np.array([[0.3, 0.02, 0.0],
                                                        [0.02, 0.4, 0.01],
                                                        [0.0, 0.01, 0.5]]))
    return rbd.Model(parent=[-1, 0], joints=[None, joint], Xtree=[None, np.eye(6)],
                     I=[None, I], names=["base", "ball"], body_names=["world", "link"])


def random_rotations(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        quat = rng.normal(size=4)
        out.append(rbd.spatial.quat_to_rot(quat / np.linalg.norm(quat)))
    return out


# ------------------------------------------------------------------ SphericalZYX, on its own

def test_XJ_is_Rz_Ry_Rx_and_neutral_is_identity():
    q = np.array([0.4, -0.7, 1.9])
    R = rotz(0.4) @ roty(-0.7) @ rotx(1.9)
    np.testing.assert_allclose(ZYX.XJ(q), plux(R.T), atol=1e-15)
    np.testing.assert_allclose(ZYX.XJ(ZYX.neutral()), np.eye(6), atol=1e-15)
    np.testing.assert_array_equal(ZYX.integrate(q, np.array([0.1, 0.2, 0.3])),
                                  q + [0.1, 0.2, 0.3])
    assert (ZYX.nq, ZYX.nv) == (3, 3)


def test_S_qd_is_the_successor_velocity_and_cJ_is_dS_dt_qd():
    """Finite differences: d/dt XJ = −(S q̇)× XJ, and c_J = (d/dt S) q̇ along q + t q̇."""
    rng = np.random.default_rng(2)
    h = 1e-5
    for _ in range(5):
        q, qd = ZYX.random_q(rng), rng.normal(size=3)
        dX = (ZYX.XJ(q + h * qd) - ZYX.XJ(q - h * qd)) / (2 * h)
        np.testing.assert_allclose(dX, -crm(ZYX.S(q) @ qd) @ ZYX.XJ(q), atol=1e-8)
        dS = (ZYX.S(q + h * qd) - ZYX.S(q - h * qd)) / (2 * h)
        np.testing.assert_allclose(ZYX.cJ(q, qd), dS @ qd, atol=1e-8)
        assert np.abs(ZYX.cJ(q, qd)).max() > 1e-3            # c_J is not zero here


def test_symbolic_S_cJ_and_gram_det():
    """sympy: Rᵀ Ṙ = (S q̇)× (S is the body angular velocity map), c_J = (∂S/∂q · q̇) q̇,
    det(SᵀS) = cos² q_y; and the symbolic results are exact (no floats)."""
    qz, qy, qx = sympy.symbols("q_z q_y q_x", real=True)
    dz, dy, dx = sympy.symbols("qd_z qd_y qd_x", real=True)
    q, qd = np.array([qz, qy, qx], dtype=object), np.array([dz, dy, dx], dtype=object)
    t = sympy.Symbol("t")
    path = {qz: sympy.Function("z")(t), qy: sympy.Function("y")(t), qx: sympy.Function("x")(t)}
    R = sympy.Matrix(ZYX.XJ(q)[:3, :3]).T
    Rt = R.subs(path)
    rates = {sympy.diff(path[s], t): d for s, d in zip((qz, qy, qx), (dz, dy, dx))}
    W = (Rt.T * Rt.diff(t)).subs(rates).subs({v: k for k, v in path.items()})
    S = ZYX.S(q)
    w = S[:3] @ qd
    angles = [qz, qy, qx]
    assert trig_zero(W - sympy.Matrix(skew(w)), angles)
    dS = sum((sympy.Matrix(S).diff(s) * d for s, d in zip((qz, qy, qx), (dz, dy, dx))),
             sympy.zeros(6, 3))
    assert sympy.expand(dS * sympy.Matrix(qd) - sympy.Matrix(ZYX.cJ(q, qd))) == sympy.zeros(6, 1)
    G = sympy.Matrix(S).T * sympy.Matrix(S)
    assert trig_zero(G.det() - ZYX.gram_det(q), angles)
    assert trig_zero(ZYX.gram_det(q) - sympy.cos(qy) ** 2, angles)
    for e in np.concatenate([ZYX.XJ(q).ravel(), S.ravel(), ZYX.cJ(q, qd)]):
        assert not sympy.sympify(e).atoms(sympy.Float)


def test_symbolic_rnea_through_a_zyx_joint():
    """RNEA runs on sympy arrays through the joint and agrees with the float run."""
    model = one_body()
    syms = [np.array(sympy.symbols(f"{n}_z {n}_y {n}_x", real=True), dtype=object)
            for n in ("q", "u", "a")]
    tau = rbd.rnea(model, *syms)
    x = [np.array([0.3, -0.4, 0.9]), np.array([0.5, 0.1, -0.7]), np.array([1.0, 2.0, -3.0])]
    vals = {s: v for sym, val in zip(syms, x) for s, v in zip(sym, val)}
    np.testing.assert_allclose([float(e.subs(vals)) for e in tau], rbd.rnea(model, *x),
                               atol=1e-13)


def test_seed_J_is_the_predecessor_frame_S():
    """Seed 000 §2.5.3 writes J ([linear; angular], columns for q = [q_x q_y q_z]). It is
    the joint velocity in the socket (predecessor) frame: J = plux(R) S after reordering,
    not the successor-frame S that Featherstone's algorithm uses."""
    rng = np.random.default_rng(4)
    for _ in range(5):
        qz, qy, qx = q = ZYX.random_q(rng)
        cy, sy, cz, sz = np.cos(qy), np.sin(qy), np.cos(qz), np.sin(qz)
        J_seed = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 0],
                           [cy * cz, -sz, 0], [cy * sz, cz, 0], [-sy, 0, 1]])
        J = to_angular_linear(J_seed)[:, ::-1]                # [ang; lin], columns (z, y, x)
        R = rotz(qz) @ roty(qy) @ rotx(qx)
        np.testing.assert_allclose(J, plux(R) @ ZYX.S(q), atol=1e-14)
        assert np.abs(J - ZYX.S(q)).max() > 1e-3


@pytest.mark.fp_sensitive
def test_gimbal_lock():
    rng = np.random.default_rng(5)
    for qy in (np.pi / 2, -np.pi / 2):
        q = np.array([rng.uniform(-3, 3), qy, rng.uniform(-3, 3)])
        assert ZYX.gram_det(q) < 1e-30
        S = ZYX.S(q)
        sv = np.linalg.svd(S, compute_uv=False)
        # rank 2: z and x axes align. Zero to round-off: an SVD finds σ_min only to about
        # ε σ_max, so the bound is numpy's matrix_rank threshold, max(m, n) ε σ_max
        assert sv[-1] < max(S.shape) * np.finfo(float).eps * sv[0] and sv[0] > 1.0
    # det(SᵀS) falls to 0 as cos² q_y
    for qy in (0.0, 0.5, 1.0, 1.5, 1.57):
        q = np.array([0.3, qy, -0.8])
        S = ZYX.S(q)
        assert np.linalg.det(S.T @ S) == pytest.approx(np.cos(qy) ** 2, abs=1e-14)


@pytest.mark.fp_sensitive
def test_aba_raises_at_gimbal_lock():
    model = one_body()
    for qy in (np.pi / 2, -np.pi / 2):
        with pytest.raises(SingularArticulatedInertia, match="ball"):
            rbd.aba(model, [0.3, qy, -0.2], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    # just off the lock the solution exists and matches RNEA
    q, qd, qdd = np.array([0.3, np.pi / 2 - 1e-3, -0.2]), np.ones(3), np.array([0.5, -1, 2])
    tau = rbd.rnea(model, q, qd, qdd)
    np.testing.assert_allclose(rbd.aba(model, q, qd, tau), qdd, rtol=1e-6)


@pytest.mark.fp_sensitive
def test_aba_raises_at_gimbal_lock_in_a_tree():
    model = rbd.random_tree(4, seed=2, joint_types=("spherical_zyx", "revolute"))
    q, qd, tau = random_state(model, 0)
    i = next(i for i in range(1, model.N + 1) if isinstance(model.joints[i], SphericalZYX))
    q[model.q_index[i] + 1] = np.pi / 2
    with pytest.raises(SingularArticulatedInertia):
        rbd.aba(model, q, qd, tau)


# ------------------------------------------------------------------ against Pinocchio

pin = pytest.importorskip("pinocchio")
from rbdlearn import interop  # noqa: E402


def test_single_joint_against_pinocchio():
    """XJ, S and c_J of SphericalZYX against pin.JointModelSphericalZYX, which takes
    q = (z, y, x) and v = q̇ unchanged."""
    model = one_body()
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(6)
    for _ in range(5):
        q, qd = ZYX.random_q(rng), rng.normal(size=3)
        np.testing.assert_array_equal(interop.q_to_pin(model, pm, q), q)
        pin.forwardKinematics(pm, pd, q, qd, np.zeros(3))
        np.testing.assert_allclose(ZYX.XJ(q)[:3, :3], pd.oMi[1].rotation.T, atol=1e-14)
        np.testing.assert_allclose(ZYX.S(q), to_angular_linear(pd.joints[1].S), atol=1e-14)
        # a body on the base at q̈ = 0 accelerates by c_J + vJ × vJ = c_J
        np.testing.assert_allclose(ZYX.cJ(q, qd), to_angular_linear(pd.a[1].vector),
                                   atol=1e-13)


def test_body_accelerations_against_pinocchio():
    """c_J inside a tree: body velocities and accelerations (gravity excluded) of a tree
    without fixed joints, where every body is its Pinocchio joint's frame."""
    model = rbd.random_tree(12, seed=7, joint_types=("spherical_zyx", "revolute",
                                                     "spherical", "prismatic"))
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    q, qd, qdd = random_state(model, 7)
    pin.forwardKinematics(pm, pd, interop.q_to_pin(model, pm, q),
                          interop.v_to_pin(model, pm, qd), interop.v_to_pin(model, pm, qdd))
    a = rbd.body_accelerations(model, q, qd, qdd)
    v = rbd.body_velocities(model, q, qd)
    for i in range(1, model.N + 1):
        jid = pm.getJointId(model.names[i])
        assert rel_err(v[i], to_angular_linear(pd.v[jid].vector)) < 1e-12
        assert rel_err(a[i], to_angular_linear(pd.a[jid].vector)) < 1e-12


@pytest.mark.parametrize("floating", [False, True], ids=["fixed-base", "floating-base"])
def test_rnea_aba_of_a_tree_with_zyx_joints_against_pinocchio(floating, assert_rel):
    model = rbd.random_tree(30, seed=11, joint_types=ALL_TYPES)
    if floating:
        model = rbd.floating_base(model, mcI(3.0, np.array([0.05, 0, -0.1]),
                                             np.diag([0.2, 0.3, 0.4])))
    assert sum(isinstance(j, SphericalZYX) for j in model.joints[1:]) == 5
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    for seed in range(2):
        q, qd, qdd = random_state(model, seed)
        qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd)
        tau = rbd.rnea(model, q, qd, qdd)
        tau_pin = pin.rnea(pm, pd, qp, vp, interop.v_to_pin(model, pm, qdd))
        assert_rel(tau, interop.v_from_pin(model, pm, tau_pin), what="rnea")
        qdd_pin = pin.aba(pm, pd, qp, vp, interop.v_to_pin(model, pm, tau))
        assert_rel(rbd.aba(model, q, qd, tau), interop.v_from_pin(model, pm, qdd_pin),
                   what="aba")
        np.testing.assert_array_equal(interop.q_from_pin(model, pm, qp), q)


def test_random_tree_defaults_exclude_zyx():
    model = rbd.random_tree(30, seed=0)
    assert not any(isinstance(j, SphericalZYX) for j in model.joints[1:])
    with pytest.raises(ValueError, match="spherical_zyx"):
        rbd.random_tree(3, joint_types=("ball",))


# ------------------------------------------------------------------ swing and twist

def test_swing_twist_against_their_definitions():
    """θ_swing = angle between the z axes; R = R_swing Rz(θ_twist) with R_swing about an
    axis in the xy-plane; θ_twist = 2 atan2(q_z, q_w) of the quaternion (independent)."""
    for R in random_rotations(200, 8):
        swing, twist = swing_twist(R)
        assert swing == pytest.approx(math.acos(np.clip(R[:, 2] @ [0, 0, 1], -1, 1)), abs=1e-7)
        R_swing, R_twist = swing_twist_factors(R)
        np.testing.assert_allclose(R_swing @ R_twist, R, atol=1e-14)
        np.testing.assert_allclose(R_twist, rotz(twist), atol=1e-15)
        w = log_so3(R_swing)
        assert abs(w[2]) < 1e-12 and np.linalg.norm(w) == pytest.approx(swing, abs=1e-9)
        np.testing.assert_allclose(R_swing @ [0, 0, 1], R[:, 2], atol=1e-14)
        qw, _, _, qz = rot_to_quat(R)
        expected = math.remainder(2 * math.atan2(qz, qw), 2 * math.pi)
        assert math.remainder(twist - expected, 2 * math.pi) == pytest.approx(0, abs=1e-9)
        assert -math.pi < twist <= math.pi


def test_from_swing_twist_round_trip():
    rng = np.random.default_rng(9)
    for _ in range(100):
        phi, th, psi = rng.uniform(-np.pi, np.pi), rng.uniform(0.01, 3.1), rng.uniform(-3.1, 3.1)
        R = from_swing_twist(phi, th, psi)
        np.testing.assert_allclose(R[:, 2], [np.sin(th) * np.cos(phi),
                                             np.sin(th) * np.sin(phi), np.cos(th)], atol=1e-14)
        assert swing_twist(R) == pytest.approx((th, psi), abs=1e-9)
        assert math.atan2(R[1, 2], R[0, 2]) == pytest.approx(phi, abs=1e-9)
    assert swing_twist(np.eye(3)) == (0.0, 0.0)
    assert swing_twist(rotz(0.7)) == pytest.approx((0.0, 0.7), abs=1e-15)


def _seed_eq28(R):
    """Seed 000 eq. (28), from the third row (R_zx, R_zy, R_zz) of R."""
    zx, zy, zz = R[2, 0], R[2, 1], R[2, 2]
    return sympy.Matrix([[zy**2 / (1 + zz) + zz, -zy * zx / (1 + zz), -zx],
                         [-zy * zx / (1 + zz), zx**2 / (1 + zz) + zz, -zy],
                         [zx, zy, zz]])


def _trig_identity(M, angles):
    """Every entry of M, a rational expression in the sines and cosines of ``angles``,
    is identically zero (where its denominator is not): its numerator over a common
    denominator is reduced by ``spatial.trig_zero``, a decision procedure."""
    entries = M if isinstance(M, sympy.MatrixBase) else [M]
    return all(trig_zero(sympy.fraction(sympy.together(e))[0], angles) for e in entries)


def _sym_swing_twist():
    """R = Rz(ψ) · W with W = Rz(φ) Ry(θ) Rz(−φ), a swing by θ about (−sin φ, cos φ, 0)."""
    phi, th, psi = sympy.symbols("phi theta psi", real=True)
    W = sympy.Matrix(rotz(phi) @ roty(th) @ rotz(-phi))
    return phi, th, psi, W, sympy.Matrix(rotz(psi)) * W


def test_seed_eq28_is_the_swing_after_the_twist():
    """sympy: eq. (28) built from R's third row equals the swing W in R = Rz(ψ)·W (twist
    about the socket's z first); it takes (R_zx, R_zy, R_zz) — the socket's z axis in plug
    coordinates — to e_z, so it is the transpose of the rotation taking e_z to that axis.
    The swing in R = R_swing·Rz(ψ) (socket coordinates, taking socket z to plug z) is
    Rz(ψ) W Rz(−ψ)."""
    phi, th, psi, W, R = _sym_swing_twist()
    M = _seed_eq28(R)
    angles = [phi, th, psi]
    assert _trig_identity(M - W, angles)
    assert _trig_identity(M * R[2, :].T - sympy.Matrix([0, 0, 1]), angles)
    R_swing = sympy.Matrix(rotz(psi)) * W * sympy.Matrix(rotz(-psi))
    assert _trig_identity(R_swing * sympy.Matrix([0, 0, 1]) - R[:, 2], angles)
    # numerically: swing_twist_factors returns that R_swing, not M
    vals = {phi: 0.7, th: 1.1, psi: -2.0}
    Rn = np.array(R.subs(vals), dtype=float)
    np.testing.assert_allclose(swing_twist_factors(Rn)[0],
                               np.array(R_swing.subs(vals), dtype=float), atol=1e-14)
    assert np.abs(np.array(M.subs(vals), dtype=float) - swing_twist_factors(Rn)[0]).max() > 0.1


def test_seed_eq29_corrected():
    """sympy: with the parenthesis moved, (1+R_zz)R_zx R_xz, the argument of eq. (29)'s
    arccos is cos ψ, and equals (R_xx + R_yy)/(1 + R_zz); the printed form is not cos ψ."""
    phi, th, psi, W, R = _sym_swing_twist()
    x, y, z = 0, 1, 2
    c = 1 + R[z, z]
    fixed = (R[z, y]**2 * R[x, x] + c * R[z, z] * R[x, x] - R[z, y] * R[z, x] * R[x, y]
             - c * R[z, x] * R[x, z]) / c
    printed = (R[z, y]**2 * R[x, x] + c * R[z, z] * R[x, x] - R[z, y] * R[z, x] * R[x, y]
               - (1 + R[z, z] * R[z, x] * R[x, z])) / c
    angles = [phi, th, psi]
    assert _trig_identity(fixed - sympy.cos(psi), angles)
    assert _trig_identity((R[x, x] + R[y, y]) / c - sympy.cos(psi), angles)
    assert _trig_identity((R[y, x] - R[x, y]) / c - sympy.sin(psi), angles)
    vals = {phi: 0.4, th: 0.9, psi: 1.3}
    assert abs(float((printed - sympy.cos(psi)).subs(vals))) > 0.1


def test_swing_twist_bad_input():
    for bad in (2 * np.eye(3), np.diag([1.0, 1.0, -1.0]), np.eye(4), np.full((3, 3), np.nan),
                rotx(0.3) + 1e-3):
        with pytest.raises(ValueError, match="rotation"):
            swing_twist(bad)
    with pytest.raises(ValueError, match="twist angle is undefined"):
        swing_twist(rotx(np.pi))
    with pytest.raises(ValueError, match="swing_max"):
        swing_twist_limit_violation(np.eye(3), swing_max=0.0)
    with pytest.raises(ValueError, match="twist_max"):
        swing_twist_limit_violation(np.eye(3), swing_max=1.0, twist_max=4.0)


# ------------------------------------------------------------------ cone-and-twist limit

def test_limit_violation_values():
    R = from_swing_twist(0.3, 0.8, -0.5)
    g, G = swing_twist_limit_violation(R, swing_max=0.6, twist_max=0.4)
    np.testing.assert_allclose(g, [0.8 - 0.6, 0.5 - 0.4], atol=1e-12)
    g, _ = swing_twist_limit_violation(R, swing_max=1.0)          # no twist limit
    np.testing.assert_allclose(g, [0.8 - 1.0, 0.5 - np.pi], atol=1e-12)
    g, G = swing_twist_limit_violation(np.eye(3), swing_max=0.5)
    np.testing.assert_array_equal(G[0], np.zeros(6))              # no direction at swing 0
    assert G.shape == (2, 6)


def test_limit_gradient_by_finite_differences():
    """g(R exp(δ×)) − g(R) ≈ G[:, :3] δ for body-frame rotations δ; linear part zero;
    the swing row is a unit vector; and ġ = G S q̇ along a moving ZYX joint."""
    h = 1e-6
    rng = np.random.default_rng(10)
    for R in random_rotations(30, 11):
        if swing_twist(R)[0] > 3.0:
            continue
        _, G = swing_twist_limit_violation(R, swing_max=1.0, twist_max=1.0)
        for k in range(3):
            e = np.eye(3)[k] * h
            gp, _ = swing_twist_limit_violation(R @ exp_so3(e), 1.0, 1.0)
            gm, _ = swing_twist_limit_violation(R @ exp_so3(-e), 1.0, 1.0)
            np.testing.assert_allclose((gp - gm) / (2 * h), G[:, k], atol=1e-6)
        np.testing.assert_array_equal(G[:, 3:], np.zeros((2, 3)))
        assert np.linalg.norm(G[0]) == pytest.approx(1.0)
    q, qd = ZYX.random_q(rng), rng.normal(size=3)
    R_of = lambda q: ZYX.XJ(q)[:3, :3].T                          # noqa: E731
    g_dot = (swing_twist_limit_violation(R_of(q + h * qd), 1.0, 1.0)[0]
             - swing_twist_limit_violation(R_of(q - h * qd), 1.0, 1.0)[0]) / (2 * h)
    np.testing.assert_allclose(g_dot, swing_twist_limit_violation(R_of(q), 1.0, 1.0)[1]
                               @ ZYX.S(q) @ qd, atol=1e-6)
