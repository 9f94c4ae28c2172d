"""Closed chains (rbdlearn.closed_chains, Chapter 5, seed 004): the unit-vector forward
dynamics against CRBA + Lagrange multipliers, inverse then forward dynamics, the four-bar
against a symbolic one-coordinate Lagrangian, energy and loop residuals in simulation,
Ḣθ̇_G against finite differences, singular closures, floating bases, and structure
changes (connect with its velocity jump, cut, cut a real joint)."""

import sys

import numpy as np
import pytest

import rbdlearn as rbd
from conftest import random_inertia, rel_err
from rbdlearn import closed_chains as cc
from rbdlearn import viz
from rbdlearn.closed_chains import loops

# Pivoted splits, Newton closure, re-splits along simulations, pseudo-inverses: these
# tests run again under a second floating-point environment (the marker's note in
# pyproject.toml).
pytestmark = pytest.mark.fp_sensitive

X_AXIS = [1.0, 0.0, 0.0]
GEOMETRY = dict(ground=2.0, crank=1.0, coupler=2.0, rocker=1.5)


@pytest.fixture(scope="module")
def four_bar():
    """The four-bar (masses 1, 2, 1.5) assembled at crank angle 1.0, θ_G = the crank."""
    mech = cc.four_bar(**GEOMETRY, mass=[1.0, 2.0, 1.5])
    q = cc.assemble(mech, [1.0, -1.0, -1.5, 1.5], independent=[0])
    return mech, q, cc.choose_split(mech, q, independent=[0])


def four_bar_state(mech, split, crank, rate, guess=(-1.0, -1.5, 1.5)):
    q = cc.assemble(mech, [crank, *guess], split)
    return q, cc.reduction(mech, q, [rate, 0, 0, 0], split).qd


def looped_tree(seed, n_loops, floating=False, joints=(rbd.Spherical(), rbd.Revolute(X_AXIS))):
    """A random 9-body tree (revolute, prismatic, spherical joints; optionally on a free
    floating base) closed by ``n_loops`` loops, each between two bodies whose path through
    the tree has the most joint velocities, the cut joints taken from ``joints``; the
    loops are closed where the random configuration puts them (``add_loop_at``)."""
    model = rbd.random_tree(9, seed=seed, joint_types=("revolute", "prismatic", "spherical"))
    if floating:
        model = rbd.floating_base(model, random_inertia(np.random.default_rng(seed)))
    rng = np.random.default_rng(seed)
    q = rbd.random_q(model, rng)
    mech, used = cc.Mechanism(model), set()

    def path_dof(a, b):
        path = set(model.ancestors(a)) ^ set(model.ancestors(b))
        return sum(model.joints[k].nv for k in path)
    for k in range(n_loops):
        pairs = [(a, b) for a in range(1, model.N + 1) for b in range(0, a)
                 if not {a, b} & used]
        a, b = max(pairs, key=lambda ab: path_dof(*ab))
        used |= {a, b}
        mech, q = cc.add_loop_at(mech, q, a, b, joints[k % len(joints)], name=f"L{k + 1}")
    return mech, q, rng


# ----------------------------------------------------------------- the loop kinematics

def test_four_bar_closure_and_split(four_bar):
    mech, q, split = four_bar
    assert np.abs(cc.loop_residual(mech, q)).max() < 1e-12
    # the tip of the rocker is at the ground pivot: an independent check of the closure
    X0 = rbd.forward_kinematics(mech.model, q)
    R, p = rbd.body_pose(X0[3])
    np.testing.assert_allclose(p + R @ [0, 1.5, 0], [0, 2.0, 0], atol=1e-12)
    assert (split.m, split.NF) == (3, 1)              # N_F = N_J − m = 4 − 3   (8)
    assert mech.real == [-1, -1, -1, -1, 0]           # the virtual link's real pointer
    r = cc.reduction(mech, q, split=split)
    np.testing.assert_allclose(r.JC @ r.W, 0, atol=1e-12)      # every θ̇_G keeps the loop
    np.testing.assert_allclose(r.W[list(split.S)], r.H)
    # the cut joint turns by −(θ1 + θ2 + θ3): the ground link does not rotate
    assert abs(r.W[:, 0].sum()) < 1e-12


def test_hdot_qdot_matches_finite_differences(four_bar):
    mech, q, split = four_bar
    for mech, q, split, rate in [(mech, q, split, np.array([0.8]))] + [
            (m, q_, cc.choose_split(m, q_), rng.normal(size=cc.choose_split(m, q_).NF))
            for m, q_, rng in [looped_tree(7, 2)]]:
        r = cc.reduction(mech, q, split=split)
        qd = r.W @ rate
        h = 1e-6
        Hp = cc.reduction(mech, rbd.integrate_q(mech.model, q, h * qd), split=split).H
        Hm = cc.reduction(mech, rbd.integrate_q(mech.model, q, -h * qd), split=split).H
        expected = (Hp - Hm) / (2 * h) @ rate                              # Ḣ θ̇_G
        assert rel_err(cc.reduction(mech, q, qd, split).Hd_qd, expected) < 1e-7


def test_loop_jdot_qdot_matches_finite_differences():
    # any q̇, also one that breaks the loops: J̇_C q̇ = d/dt (J_C(q ⊕ t q̇) q̇) at t = 0
    mech, q, rng = looped_tree(6, 2, floating=True)
    qd, h = rng.normal(size=mech.model.nv), 1e-6
    JC = [cc.loop_jacobian(mech, rbd.integrate_q(mech.model, q, s * h * qd)) @ qd
          for s in (1, -1)]
    assert rel_err(cc.loop_jdot_qdot(mech, q, qd), (JC[0] - JC[1]) / (2 * h)) < 1e-7


def test_position_closure_tracks_the_loop_and_fails_clearly(four_bar):
    mech, _, split = four_bar
    for crank in np.linspace(0.3, 2.5, 5):
        q = cc.assemble(mech, [crank, -1.0, -1.5, 1.5], split)
        assert q[0] == crank and np.abs(cc.loop_residual(mech, q)).max() < 1e-12
    far = cc.four_bar(ground=10.0)                   # the links cannot reach the pivot
    with pytest.raises(cc.LoopNotClosed, match="four-bar"):
        cc.assemble(far, [1.0, -1.0, -1.5, 1.5], independent=[0])


def test_singular_closure_raises_naming_the_loop():
    # a non-Grashof four-bar: coupler and rocker are aligned (joints 2, 3 and the ground
    # pivot collinear) when |P2 − P4| = coupler + rocker; the crank cannot drive there
    g, a, b, c = 3.0, 1.5, 2.0, 2.0
    mech = cc.four_bar(g, a, b, c)
    crank = np.arccos((a**2 + g**2 - (b + c)**2) / (2 * a * g))
    P2 = a * np.array([np.cos(crank), np.sin(crank)])
    phi = np.arctan2(-P2[1], g - P2[0])              # coupler and rocker direction
    q = np.array([crank, phi - crank, 0.0, -phi])
    assert np.abs(cc.loop_residual(mech, q)).max() < 1e-12
    with pytest.raises(cc.SingularClosure, match="four-bar"):
        cc.choose_split(mech, q, independent=[0])
    with pytest.raises(cc.SingularClosure, match="four-bar"):
        cc.forward_dynamics(mech, q, np.zeros(4), np.zeros(4),
                            split=cc.Split((0, 4, 5), (1, 2, 3), (0,)))
    cc.choose_split(mech, q, independent=[1])        # the coupler can still drive


def test_mechanism_rejects_bad_loops():
    chain = rbd.planar_chain(3)
    with pytest.raises(ValueError, match="mass"):
        cc.Mechanism(chain, [cc.Loop("L", 3, 0)])    # body 3 has mass: not a virtual link
    with pytest.raises(ValueError, match="end link"):
        cc.Mechanism(chain, [cc.Loop("L", 2, 0)])
    with pytest.raises(ValueError, match="degrees of freedom"):
        mech = cc.four_bar()
        cc.choose_split(mech, cc.assemble(mech, [1.0, -1, -1.5, 1.5], independent=[0]),
                        independent=[0, 1])


# ------------------------------------------------------------------ dynamics (§2.1–2.4)

def check_forward_against_kkt(mech, q, rng, f_ext=None):
    split = cc.choose_split(mech, q)
    qd = cc.reduction(mech, q, rng.normal(size=mech.model.nv), split).qd
    tau = rng.normal(size=mech.model.nv)
    qdd = cc.forward_dynamics(mech, q, qd, tau, f_ext, split)
    qdd_kkt = cc.forward_dynamics_kkt(mech, q, qd, tau, f_ext, split)
    assert rel_err(qdd, qdd_kkt) < 1e-9
    # and the loops stay closed at the acceleration level: J_C q̈ + J̇_C q̇ = 0
    r = cc.loop_jacobian(mech, q) @ qdd + cc.loop_jdot_qdot(mech, q, qd)
    assert np.abs(r).max() < 1e-9 * max(1.0, np.abs(qdd).max())
    return split


def test_four_bar_forward_dynamics_equals_kkt(four_bar):
    mech, _, split = four_bar
    rng = np.random.default_rng(0)
    for crank in (0.4, 1.0, 2.0):
        q = cc.assemble(mech, [crank, -1.0, -1.5, 1.5], split)
        check_forward_against_kkt(mech, q, rng)


def test_dynamics_refuse_an_open_loop(four_bar):
    """A configuration that leaves the loop open is refused by name, not integrated."""
    mech, q, _ = four_bar
    loop = mech.loops[0].name
    opened = q + np.array([0.0, 0.0, 1.2, 0.0])            # the rocker turned away
    assert np.abs(cc.loop_residual(mech, opened)).max() > 0.5
    zero = np.zeros(4)
    for forward in (cc.forward_dynamics, cc.forward_dynamics_kkt):
        with pytest.raises(cc.LoopNotClosed, match=rf"loop '{loop}' is open.*assemble"):
            forward(mech, opened, zero, zero)
        forward(mech, q, zero, zero)                          # closed: no error


@pytest.mark.parametrize("seed, n_loops, floating", [(1, 1, False), (2, 2, False),
                                                     (3, 2, False), (4, 1, True),
                                                     (5, 2, True)])
def test_spatial_loops_forward_dynamics_equals_kkt(seed, n_loops, floating):
    mech, q, rng = looped_tree(seed, n_loops, floating)
    f_ext = {2: rng.normal(size=6)}
    split = check_forward_against_kkt(mech, q, rng, f_ext)
    assert split.m > 0 and split.NF > 0


def test_pseudo_closed_chain_free_joint_in_the_loop():
    # §2.5, §4.2: a floating chain whose last link is welded (then pinned by a ball) to the
    # ground; the 6-DOF free joint is part of the loop, treated as one joint
    base = rbd.floating_base(rbd.random_tree(4, seed=8, joint_types=("revolute",)),
                             random_inertia(np.random.default_rng(8)))
    rng = np.random.default_rng(9)
    q = rbd.random_q(base, rng)
    for joint, NF in ((rbd.Fixed(), 4), (rbd.Spherical(), 7)):
        mech, qc = cc.add_loop_at(base, q, 5, 0, joint)
        split = check_forward_against_kkt(mech, qc, rng)
        assert split.NF == NF                         # 6 + 4 − 6 and 6 + 4 + 3 − 6


def test_inverse_then_forward_returns_the_input(four_bar):
    mech, q, split = four_bar
    rng = np.random.default_rng(1)
    cases = [(mech, q, split, [0]), (mech, q, split, [0, 1, 2])]        # redundant: 3 for 1
    m2, q2, _ = looped_tree(2, 2)
    s2 = cc.choose_split(m2, q2)
    real = [k for k in range(m2.model.nv) if k < m2.model.v_index[m2.loops[0].virtual]]
    cases.append((m2, q2, s2, real))
    for mech, q, split, actuated in cases:
        qd = cc.reduction(mech, q, rng.normal(size=mech.model.nv), split).qd
        qdd_G = rng.normal(size=split.NF)
        tau_A = cc.inverse_dynamics(mech, q, qd, qdd_G, actuated, split=split)
        tau = np.zeros(mech.model.nv)
        tau[actuated] = tau_A
        qdd = cc.forward_dynamics(mech, q, qd, tau, split=split)
        assert rel_err(qdd[list(split.G)], qdd_G) < 1e-9


def test_redundant_actuation_minimum_norm_and_weighted(four_bar):
    mech, q, split = four_bar
    r = cc.reduction(mech, q, [0.5, 0, 0, 0], split)
    tau_G = cc.generalized_forces(mech, q, r.qd, [1.3], split=split)
    S = r.S([0, 1, 2])
    tau_A = cc.actuator_forces(S, tau_G)
    tau_W = cc.actuator_forces(S, tau_G, weights=[1.0, 10.0, 10.0])
    for t in (tau_A, tau_W):
        np.testing.assert_allclose(S.T @ t, tau_G, rtol=1e-12)        # (2)
    # any other solution is longer: add a null-space direction of Sᵀ
    null = np.linalg.svd(S.T)[2][-1]
    assert np.linalg.norm(tau_A) < np.linalg.norm(tau_A + 0.1 * null)
    assert abs(tau_W[0]) > abs(tau_A[0])              # the cheap actuator takes more
    with pytest.raises(ValueError, match="under-actuated"):
        cc.actuator_forces(np.zeros((1, 1)), tau_G)


def test_four_bar_against_symbolic_lagrangian(four_bar):
    """One coordinate, the crank angle φ1: the loop fixes φ2, φ3 (absolute angles), and
    T = ½ A(φ1) φ̇1², so A φ̈1 + ½ A′ φ̇1² + V′ = τ1 (′ = d/dφ1 along the loop)."""
    sp = pytest.importorskip("sympy")
    mech, _, split = four_bar
    g, a, b, c = (GEOMETRY[k] for k in ("ground", "crank", "coupler", "rocker"))
    m, grav = [1.0, 2.0, 1.5], 9.81
    p = sp.symbols("p1:4")
    u = [sp.Matrix([sp.cos(x), sp.sin(x)]) for x in p]
    F = a * u[0] + b * u[1] + c * u[2] - sp.Matrix([g, 0])
    dep = -F.jacobian(p[1:]).LUsolve(F.diff(p[0]))          # dφ2/dφ1, dφ3/dφ1
    rates = [sp.Integer(1), dep[0], dep[1]]

    def along(expr):                                         # d/dφ1 on the loop
        return sum((expr.diff(x) * r for x, r in zip(p, rates)), 0 * expr)
    coms = [a / 2 * u[0], a * u[0] + b / 2 * u[1], a * u[0] + b * u[1] + c / 2 * u[2]]
    L = [a, b, c]
    A = sum(m[k] * (along(coms[k]).T * along(coms[k]))[0] + m[k] * L[k]**2 / 12 * rates[k]**2
            for k in range(3))
    V = sum(m[k] * grav * coms[k][1] for k in range(3))
    f = sp.lambdify(p, [A, along(A), along(V)])
    rng = np.random.default_rng(3)
    for crank in (0.5, 1.2, 2.2):
        rate, tau1 = rng.normal(), rng.normal()
        q, qd = four_bar_state(mech, split, crank, rate)
        A_, dA, dV = f(*np.cumsum(q[:3]))
        expected = (tau1 - 0.5 * dA * rate**2 - dV) / A_
        qdd = cc.forward_dynamics(mech, q, qd, [tau1, 0, 0, 0], split=split)
        assert abs(qdd[0] - expected) < 1e-9 * max(1.0, abs(expected))


def test_conservative_four_bar_keeps_energy_and_loop(four_bar):
    mech, q, split = four_bar
    qd = cc.reduction(mech, q, [2.0, 0, 0, 0], split).qd
    drift = []
    for dt in (1e-2, 5e-3):           # 0.6 s: the error has its maximum of a 1 s run by then
        traj = cc.simulate(mech, q, qd, 0.6, dt, split=split)
        E = rbd.energy(mech.model, traj.q, traj.qd)               # every saved state at once
        drift.append(np.abs(E - E[0]).max() / abs(E[0]))
        assert max(np.abs(cc.loop_residual(mech, x)).max() for x in traj.q) < 1e-10
        assert np.abs(traj.q[-1, 0] - traj.q[0, 0]) > 0.5          # it did move
    assert drift[1] < 1e-5
    assert drift[0] / drift[1] > 10                  # fourth order: 2⁴ = 16


# ------------------------------------------------------------ structure changes (§4)

def two_floating_chains():
    """Two free-floating 2-link chains (bodies 1–2 and 3–4), no gravity."""
    rng = np.random.default_rng(11)
    joints = [None, rbd.Free(), rbd.Revolute(X_AXIS), rbd.Free(), rbd.Revolute([0, 1.0, 0])]
    Xtree = [None, np.eye(6), rbd.spatial.plux(np.eye(3), [0, 0.5, 0]), np.eye(6),
             rbd.spatial.plux(np.eye(3), [0.4, 0, 0])]
    model = rbd.Model(parent=[-1, 0, 1, 0, 3], joints=joints, Xtree=Xtree,
                      I=[None] + [random_inertia(rng) for _ in range(4)], gravity=np.zeros(6))
    return cc.Mechanism(model), rbd.random_q(model, rng), rng.normal(size=model.nv)


@pytest.mark.parametrize("joint", [rbd.Fixed(), rbd.Revolute(X_AXIS), rbd.Spherical()],
                         ids=["weld", "revolute", "spherical"])
def test_connection_velocity_jump(joint):
    mech, q, qd = two_floating_chains()
    con = cc.connect(mech, q, qd, 2, 4, joint, name="grip")
    new = con.mech
    # the new loop holds after the jump
    assert np.abs(cc.loop_jacobian(new, con.q) @ con.qd).max() < 1e-10
    # momentum of the two free chains is conserved; kinetic energy does not increase
    assert rel_err(rbd.momentum(new.model, con.q, con.qd), rbd.momentum(mech.model, q, qd)) < 1e-10
    KE0, KE1 = rbd.energy(mech.model, q, qd), rbd.energy(new.model, con.q, con.qd)
    assert KE1 < KE0
    # the impulse has no component along the new joint's free directions (23)
    assert np.abs(joint.S(joint.neutral()).T @ con.F).max(initial=0) < 1e-9 * np.abs(con.F).max()
    # independently: Gauss — the post-jump velocity is the closest, in the kinetic-energy
    # metric, that satisfies the new loop: [H J_Cᵀ; J_C 0] [q̇⁺; λ] = [H q̇⁻; 0]
    H, J = rbd.crba(new.model, con.q), cc.loop_jacobian(new, con.q)
    rows = list(cc.choose_split(new, con.q).rows)
    J = J[rows]
    qd_minus = np.concatenate([qd, np.zeros(joint.nv)])
    K = np.block([[H, J.T], [J, np.zeros((len(rows), len(rows)))]])
    qd_plus = np.linalg.solve(K, np.concatenate([H @ qd_minus, np.zeros(len(rows))]))
    assert rel_err(con.qd, qd_plus[:new.model.nv]) < 1e-9


def test_connection_within_one_mechanism_to_the_ground():
    # a looped tree hits the ground with one of its links: the existing loop stays closed
    mech, q, rng = looped_tree(4, 1, floating=True)
    qd = cc.reduction(mech, q, rng.normal(size=mech.model.nv)).qd
    con = cc.connect(mech, q, qd, 3, 0, rbd.Spherical(), name="touch")
    assert np.abs(cc.loop_jacobian(con.mech, con.q) @ con.qd).max() < 1e-9
    assert rbd.energy(con.mech.model, con.q, con.qd) < rbd.energy(mech.model, q, qd)


def test_connect_then_cut_restores_the_structure():
    mech, q, qd = two_floating_chains()
    con = cc.connect(mech, q, qd, 2, 4, rbd.Spherical(), name="grip")
    back, q2, qd2 = cc.cut(con.mech, con.q, con.qd, "grip")
    assert back.model.parent == mech.model.parent and back.loops == ()
    assert back.model.names == mech.model.names
    assert all(np.array_equal(x, y) for x, y in zip(back.model.Xtree[1:], mech.model.Xtree[1:]))
    np.testing.assert_array_equal(q2, q)
    np.testing.assert_array_equal(qd2, con.qd[:mech.model.nv])
    with pytest.raises(ValueError, match="no loop named"):
        cc.cut(back, q2, qd2, "grip")


def test_cut_real_joint_reattaches_with_a_free_joint(four_bar):
    # §4.4, Fig. 12: cut the joint between crank and coupler; the coupler (and the rocker)
    # hang from the ground by a free joint, the virtual link keeps rocker and ground joined
    mech, q, split = four_bar
    qd = cc.reduction(mech, q, [1.5, 0, 0, 0], split).qd
    new, q2, qd2 = cc.cut_joint(mech, q, qd, 2)
    assert isinstance(new.model.joints[2], rbd.Free) and new.model.parent[2] == 0
    for X, Y in zip(rbd.forward_kinematics(mech.model, q), rbd.forward_kinematics(new.model, q2)):
        np.testing.assert_allclose(X, Y, atol=1e-12)
    v_old, v_new = rbd.body_velocities(mech.model, q, qd), rbd.body_velocities(new.model, q2, qd2)
    for v, w in zip(v_old, v_new):
        np.testing.assert_allclose(v, w, atol=1e-12)
    assert np.abs(cc.loop_residual(new, q2)).max() < 1e-12
    assert cc.choose_split(new, q2).NF == 3     # crank; rocker, and coupler on its pin


def test_bad_dynamics_input(four_bar):
    mech, q, split = four_bar
    with pytest.raises(ValueError, match="qdd_G has shape"):
        cc.generalized_forces(mech, q, np.zeros(4), [1.0, 2.0], split=split)
    with pytest.raises(ValueError, match="tau has shape"):
        cc.forward_dynamics(mech, q, np.zeros(4), np.zeros(3), split=split)
    with pytest.raises(ValueError, match="dt"):
        cc.simulate(mech, q, np.zeros(4), 1.0, 0.0)


def planar_floating_chains():
    """Two 2-link chains floating in the y-z plane (prismatic y, z and revolute x on
    massless links, then a revolute link), no gravity: relative motion has 3 DOF."""
    rng = np.random.default_rng(12)
    joints, Xtree, I, parent = [None], [None], [None], [-1]
    for start in (0, 4):
        for k, joint in enumerate([rbd.Prismatic([0, 1.0, 0]), rbd.Prismatic([0, 0, 1.0]),
                                   rbd.Revolute(X_AXIS), rbd.Revolute(X_AXIS)]):
            parent.append(start + k)
            joints.append(joint)
            Xtree.append(rbd.spatial.plux(np.eye(3), [0, 0.6 if k == 3 else 0, 0]))
            m, c = rng.uniform(0.5, 2), [0, rng.uniform(0.1, 0.5), 0]
            I.append(rbd.spatial.mcI(m, c, np.diag([m * 0.05, 0, m * 0.05])) if k >= 2
                     else np.zeros((6, 6)))
    model = rbd.Model(parent=parent, joints=joints, Xtree=Xtree, I=I, gravity=np.zeros(6))
    return cc.Mechanism(model), rng.normal(size=model.nq), rng.normal(size=model.nv)


@pytest.mark.parametrize("joint", [rbd.Fixed(), rbd.Revolute(X_AXIS), rbd.Spherical()],
                         ids=["weld", "revolute", "spherical"])
def test_planar_connection_velocity_jump(joint):
    # B̃ = (J1 − J2) A⁻¹ (J1 − J2)ᵀ has rank 3 here: eq. (30) as printed cannot be used
    mech, q, qd = planar_floating_chains()
    con = cc.connect(mech, q, qd, 4, 8, joint, name="grip")
    new = con.mech
    assert np.abs(cc.loop_jacobian(new, con.q) @ con.qd).max() < 1e-10
    P0, P1 = rbd.momentum(mech.model, q, qd), rbd.momentum(new.model, con.q, con.qd)
    assert rel_err(P1, P0) < 1e-10 and np.abs(P0[[0, 4, 5]]).min() > 1e-3   # in-plane parts
    assert rbd.energy(new.model, con.q, con.qd) < rbd.energy(mech.model, q, qd)
    # Gauss: the closest velocity in the kinetic-energy metric that keeps the new loop
    H, J = rbd.crba(new.model, con.q), cc.loop_jacobian(new, con.q)
    J = J[list(cc.choose_split(new, con.q).rows)]
    k = len(J)
    K = np.block([[H, J.T], [J, np.zeros((k, k))]])
    qd_minus = np.concatenate([qd, np.zeros(joint.nv)])
    qd_plus = np.linalg.solve(K, np.concatenate([H @ qd_minus, np.zeros(k)]))[:new.model.nv]
    assert rel_err(con.qd, qd_plus) < 1e-9


def test_planar_pendulum_caught_by_the_ground():
    # within one mechanism, to the ground: a triple pendulum's tip is pinned (p = 1)
    chain = cc.Mechanism(rbd.planar_chain(3, [1.0, 0.8, 0.6], [1.0, 0.8, 0.6]))
    q, qd = np.array([-1.2, 0.5, 0.4]), np.array([1.0, -2.0, 1.5])
    con = cc.connect(chain, q, qd, 3, 0, rbd.Revolute(X_AXIS),
                     Xb=rbd.spatial.plux(np.eye(3), [0, 0.0, 0.0]), name="pin")
    assert np.abs(cc.loop_jacobian(con.mech, con.q) @ con.qd).max() < 1e-10
    assert rbd.energy(con.mech.model, con.q, con.qd) < rbd.energy(chain.model, q, qd)
    assert cc.choose_split(con.mech, con.q).NF == 1            # a four-bar now


def test_velocity_jump_equals_the_printed_formula_when_B_is_invertible():
    # eqs. (30)–(33) literally, B̃⁻¹ and C̃ = Jn (Jnᵀ B̃⁻¹ Jn)⁻¹ Jnᵀ B̃⁻¹, on a 3-D case
    rng = np.random.default_rng(5)
    n = 9
    L = rng.normal(size=(n, n))
    A, J1, J2, qd = L @ L.T + n * np.eye(n), rng.normal(size=(6, n)), rng.normal(size=(6, n)), \
        rng.normal(size=n)
    for Jn in (np.zeros((6, 0)), rng.normal(size=(6, 1)), rng.normal(size=(6, 3))):
        J = J1 - J2
        Binv = np.linalg.inv(J @ np.linalg.solve(A, J.T))
        C = Jn @ np.linalg.solve(Jn.T @ Binv @ Jn, Jn.T @ Binv) if Jn.shape[1] else 0 * Binv
        F = Binv @ (np.eye(6) - C) @ J @ qd
        dqd, F_pkg = cc.velocity_jump(A, J1, J2, Jn, qd)
        assert rel_err(F_pkg, F) < 1e-10
        assert rel_err(dqd, -np.linalg.solve(A, J.T @ F)) < 1e-10


# ------------------------------------------------------------- the human figure (§5.1)

def test_human_figure_structure_and_mass():
    for spherical, N in ((True, 9), (False, 17)):
        fig = cc.human_figure(1.75, 70.0, spherical=spherical)
        model = fig.model
        assert (model.N, model.nv) == (N, 22)                 # 6 + 4 limbs x 4 DOF
        assert abs(sum(I[5, 5] for I in model.I[1:]) - 70.0) < 1e-9
    with pytest.raises(ValueError, match="positive height"):
        cc.human_figure(height=-1.0)
    with pytest.raises(ValueError, match="unknown limb"):
        cc.figure_q(fig, [0, 0, 1], np.eye(3), bends={"tail": 0.3})


def test_human_figure_ball_joints_equal_revolute_triples():
    """The same physical state in both models: the same motion of every limb (world
    spatial accelerations of the hands and feet), the couples mapped by τ = S_ωᵀ n."""
    rng = np.random.default_rng(3)
    sph, rev = cc.human_figure(spherical=True), cc.human_figure(spherical=False)
    Rs = {k: rbd.spatial.exp_so3(rng.normal(size=3) * 0.7) for k in sph.limbs}
    bends = {k: rng.uniform(-1, 1) for k in sph.limbs}
    R0, p0 = rbd.spatial.exp_so3(rng.normal(size=3)), rng.normal(size=3)
    qs, qr = (cc.figure_q(f, p0, R0, Rs, bends) for f in (sph, rev))
    v0, couples, bend_rates = rng.normal(size=6), {k: rng.normal(size=3) for k in sph.limbs}, \
        {k: rng.normal() for k in sph.limbs}
    omegas = {k: rng.normal(size=3) for k in sph.limbs}       # limb relative to torso, limb coords
    vd, td = {}, {}
    for f, q in ((sph, qs), (rev, qr)):
        m = f.model
        qd, tau = np.zeros(m.nv), np.zeros(m.nv)
        qd[:6], tau[:6] = v0, 0.0
        for k, (upper, lower) in f.limbs.items():
            if f is sph:
                qd[m.v_slices[upper]], tau[m.v_slices[upper]] = omegas[k], couples[k]
            else:
                zyx = [m.q_index[i] for i in (upper - 2, upper - 1, upper)]
                Sw = rbd.SphericalZYX().S(q[zyx])[:3]
                vs = [m.v_index[i] for i in (upper - 2, upper - 1, upper)]
                qd[vs], tau[vs] = np.linalg.solve(Sw, omegas[k]), Sw.T @ couples[k]
            qd[m.v_index[lower]], tau[m.v_index[lower]] = bend_rates[k], 0.4
        qdd = rbd.aba(m, q, qd, tau)
        X0 = rbd.forward_kinematics(m, q)
        a = rbd.body_accelerations(m, q, qd, qdd)
        v = rbd.body_velocities(m, q, qd)
        ends = [lower for _, lower in f.limbs.values()]
        vd[f is sph] = np.concatenate([rbd.spatial.inv_X(X0[i]) @ a[i] for i in ends])
        td[f is sph] = np.concatenate([rbd.spatial.inv_X(X0[i]) @ v[i] for i in ends])
    assert rel_err(td[True], td[False]) < 1e-10
    assert rel_err(vd[True], vd[False]) < 1e-9


@pytest.mark.parametrize("spherical", [True, False], ids=["ball", "triples"])
def test_figure_springs_are_conservative(spherical):
    # the joint forces are −∂V/∂q along any velocity: dV/dt = −τᵀ q̇ (finite differences)
    fig = cc.human_figure(spherical=spherical)
    rng = np.random.default_rng(4)
    q_ref = cc.figure_q(fig, [0, 0, 1], np.eye(3),
                        {k: rbd.spatial.exp_so3(rng.normal(size=3) * 0.5) for k in fig.limbs})
    tau, V = cc.figure_springs(fig, q_ref)
    q = rbd.integrate_q(fig.model, q_ref, rng.normal(size=fig.model.nv))
    qd, h = rng.normal(size=fig.model.nv), 1e-6
    moved = [rbd.integrate_q(fig.model, q, s * h * qd) for s in (1, -1)]
    dV = (V(moved[0]) - V(moved[1])) / (2 * h)
    assert abs(dV + tau(0.0, q, qd) @ qd) < 1e-6 * max(1.0, abs(dV))
    assert V(q_ref) == 0.0 and np.all(tau(0.0, q_ref, qd) == 0) and V(q) > 1.0


def test_inverse_dynamics_at_an_open_loop_says_by_how_much(four_bar):
    """At a q off the loops, J_C has another rank, and inverse_dynamics blamed
    under-actuation (or answered for another mechanism)."""
    mech, q, split = four_bar
    q_open = np.array([1.0, -1.0, -1.5, 1.5])              # the guess, before assemble
    e = np.abs(cc.loop_residual(mech, q_open)).max()
    assert e > 0.1
    match = (rf"loop 'four-bar' is open at this q: its residual \[log R; p\] is .*, max "
             rf"{e:.3g} \(more than loop_tol = 1e-06\).*q = assemble\(mech, q\) first")
    with pytest.raises(cc.LoopNotClosed, match=match):
        cc.inverse_dynamics(mech, q_open, np.zeros(4), [1.0], [0])
    with pytest.raises(cc.LoopNotClosed, match=match):
        cc.generalized_forces(mech, q_open, np.zeros(4), [1.0])
    off = q.copy()
    off[3] += 1e-5                                         # the cut joint turned: 1e-5 rad
    with pytest.raises(cc.LoopNotClosed, match=r"max 1e-05 \(more than loop_tol = 1e-06\)"):
        cc.inverse_dynamics(mech, off, np.zeros(4), [1.0], [0], split=split)
    assert cc.inverse_dynamics(mech, off, np.zeros(4), [1.0], [0], split=split,
                               loop_tol=1e-4).shape == (1,)


def test_simulate_refuses_an_unassembled_start(four_bar):
    """An open q0 was assembled silently, by Newton's method from wherever it was (angles
    wound by turns); now the start must be closed to max(tol, round-off)."""
    mech, q, split = four_bar
    with pytest.raises(cc.LoopNotClosed, match=r"loop 'four-bar' is open at this q0: .*more "
                                               r"than max\(tol, round-off\) = 1e-12\).*q0 = "
                                               r"assemble\(mech, q0\) first"):
        cc.simulate(mech, [1.0, -1.0, -1.5, 1.5], np.zeros(4), 0.02, 0.01)
    off = q.copy()
    off[3] += 3e-12                                        # the cut joint: residual 3e-12
    with pytest.raises(cc.LoopNotClosed, match=r"max 3e-12 \(more than max\(tol, round-off\) "
                                               r"= 1e-12\)"):
        cc.simulate(mech, off, np.zeros(4), 0.02, 0.01)
    assert len(cc.simulate(mech, off, np.zeros(4), 0.02, 0.01, tol=1e-11).t) == 3
    # a four-bar 100 times larger: the round-off of its kinematics, 16 (N + 1) eps (1 + P)
    # with P ≈ 300 m its farthest frame, is 5e-12, above tol, and sets the bar
    big = cc.four_bar(*(100 * np.array([2.0, 1.0, 2.0, 1.5])))
    qb = cc.assemble(big, [0.3, 1.0, 0.5, 1.0], independent=[0])
    off = qb.copy()
    off[3] += 3e-12
    assert len(cc.simulate(big, off, np.zeros(4), 0.02, 0.01).t) == 3
    off[3] += 1e-9
    with pytest.raises(cc.LoopNotClosed, match=r"more than max\(tol, round-off\) = 5.3\de-12"):
        cc.simulate(big, off, np.zeros(4), 0.02, 0.01)


def test_simulate_refuses_a_run_too_long_for_memory(four_bar):
    mech, q, split = four_bar
    with pytest.raises(ValueError, match=r"closed_chains.simulate: 1e\+12 steps from t = 0 to "
                                         r"1e\+06 by dt = 1e-06 would store 1e\+12 states of 9 "
                                         r"numbers"):
        cc.simulate(mech, q, np.zeros(4), 1e6, 1e-6)


def test_simulate_takes_time_as_t_end_dt_and_the_rest_by_keyword(four_bar):
    """The convention of every simulate: the system, q0, q̇0, t_end, dt, then keywords."""
    mech, q, split = four_bar
    with pytest.raises(TypeError):
        cc.simulate(mech, q, np.zeros(4), 0.02, 0.01, np.ones(4))
    traj = cc.simulate(mech, q, np.zeros(4), 0.02, 0.01, tau=np.ones(4))
    assert isinstance(traj, rbd.Trajectory) and np.allclose(traj.t, [0.0, 0.01, 0.02])


# ------------------------------------------------ singular closures during a simulation

NON_GRASHOF = (3.0, 1.5, 2.0, 2.0)          # ground, crank, coupler, rocker: no link turns fully


def swinging_non_grashof():
    mech = cc.four_bar(*NON_GRASHOF)
    q = cc.assemble(mech, [1.0, 0.5, 0.5, -1.5], independent=[0])
    split = cc.choose_split(mech, q)
    return mech, q, split, cc.reduction(mech, q, np.eye(4)[split.G[0]], split).qd


def test_pivoting_takes_the_first_of_columns_equal_to_round_off():
    """A symmetric mechanism has columns of J_C that are equal but for their last bits,
    which differ from one machine's BLAS to another's: such ties go to the first column,
    so the split (and every simulation on it) does not depend on the machine. A real
    difference still decides."""
    for tiny in (1e-14, -1e-14, 0.0):
        M = np.diag([1.0, 1.0 + tiny, 0.5])
        assert loops._pivots(M, 1) == [0] and loops._pivots(M, 2) == [0, 1]
    assert loops._pivots(np.diag([1.0, 1.0 + 1e-6, 0.5]), 1) == [1]
    # the swing's figure is symmetric, and so is J_C: its split must survive J_C changed
    # in the last bits, as another machine would compute it (argmax alone did not: 16 of
    # these 20 perturbations changed θ_S)
    sw = cc.swing(cc.human_figure())
    split = cc.choose_split(sw.mech, sw.q)
    JC = cc.loop_jacobian(sw.mech, sw.q)[list(split.rows)]
    rng = np.random.default_rng(0)
    for _ in range(20):
        noisy = JC * (1 + 1e-15 * rng.uniform(-1, 1, JC.shape))
        assert loops._pivots(noisy, split.m) == list(split.S)


def test_simulate_rechooses_the_split_through_dead_points():
    mech, q, split, qd = swinging_non_grashof()
    traj = cc.simulate(mech, q, qd, 2.0, 1e-2)
    E = rbd.energy(mech.model, traj.q, traj.qd)                   # every saved state at once
    assert np.abs(E - E[0]).max() < 1e-3 * abs(E[0])
    assert max(np.abs(cc.loop_residual(mech, x)).max() for x in traj.q) < 1e-10
    assert max(np.abs(cc.loop_jacobian(mech, x) @ v).max() for x, v in zip(traj.q, traj.qd)) < 1e-9
    # the run passed where the first split cannot drive the loop (near t = 0.94 s)...
    conds = [np.linalg.cond(cc.loop_jacobian(mech, x)[np.ix_(split.rows, split.S)]) for x in traj.q]
    assert max(conds) > 1e3
    # ...and with that split held it fails there, saying why: started from the run's state
    # at t = 0.7 s, where that split is still well conditioned (cond(J_S) < 10)
    k = int(np.argmin(np.abs(traj.t - 0.7)))
    assert conds[k] < 10
    with pytest.raises(cc.LoopNotClosed, match="singular"):
        cc.simulate(mech, traj.q[k], traj.qd[k], 2.0, 1e-2, split=split)
    with pytest.raises(cc.LoopNotClosed, match="singular"):
        cc.simulate(mech, traj.q[k], traj.qd[k], 2.0, 1e-2, split=split, resplit=False)


def test_assemble_past_a_dead_point_says_the_closure_is_singular():
    g, a, b, c = NON_GRASHOF
    mech = cc.four_bar(*NON_GRASHOF)
    dead = np.arccos((a**2 + g**2 - (b + c)**2) / (2 * a * g))    # crank's extreme angle
    with pytest.raises(cc.LoopNotClosed, match=r"singular.*joint2.*rank < m = 3"):
        cc.assemble(mech, [dead + 1e-3, 0.5, 0.5, -1.5], independent=[0])


def test_singular_inertia_raises_singular_closure_not_linalg_error():
    # a massless last link: A = WᵀHW (here H itself) is singular
    mech = cc.Mechanism(rbd.planar_chain(2, mass=[1.0, 0.0]))
    zero = np.zeros(2)
    with pytest.raises(cc.SingularClosure, match=r"A = WᵀHW.*joint2"):
        cc.forward_dynamics(mech, zero, zero, zero)
    with pytest.raises(cc.SingularClosure, match="KKT"):
        cc.forward_dynamics_kkt(mech, zero, zero, zero)


# ------------------------------------------------------ the pointer recursions of §3.1

@pytest.mark.parametrize("seed", range(6))
def test_pointer_recursions_visit_every_body_once_in_a_valid_order(seed):
    model = rbd.random_tree(3 + 7 * seed, seed=seed,
                            joint_types=("revolute", "prismatic", "spherical", "free"))
    P = rbd.pointers(model)
    down, up = list(cc.outward(P)), list(cc.inward(P))
    assert sorted(down) == sorted(up) == list(range(1, model.N + 1))
    seen = {0}
    for i in down:                                   # outward: the parent comes first
        assert model.parent[i] in seen
        seen.add(i)
    seen = set()
    for i in up:                                     # inward: every child comes first
        assert all(k in seen for k in range(1, model.N + 1) if model.parent[k] == i)
        seen.add(i)
    # the recursion from a body walks that body, its younger brothers and their subtrees
    k = P.child[0]
    assert list(cc.outward(P, k))[0] == k and list(cc.inward(P, k))[-1] == k


@pytest.mark.parametrize("seed", range(6))
def test_rnea_over_pointers_equals_the_parent_array_form(seed):
    model = rbd.random_tree(4 + 6 * seed, seed=seed,
                            joint_types=("revolute", "prismatic", "spherical", "free"))
    rng = np.random.default_rng(seed)
    q, qd, qdd = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    f_ext = {model.N: rng.normal(size=6)}
    tau = rbd.rnea(model, q, qd, qdd, f_ext)
    assert rel_err(cc.rnea_pointers(model, q, qd, qdd, f_ext), tau) < 1e-13


def _recursion(P, i, inward):
    """§3.1's recursions as the source writes them (a function calling itself on the
    brother and on the child), for trees shallow enough for Python's call stack."""
    if i < 0:
        return []
    others = _recursion(P, P.brother[i], inward) + _recursion(P, P.child[i], inward)
    return others + [i] if inward else [i] + others


@pytest.mark.parametrize("seed", range(4))
def test_pointer_walks_visit_bodies_in_the_order_of_the_recursions(seed):
    model = rbd.random_tree(5 + 9 * seed, seed=seed, joint_types=("revolute", "spherical"))
    P = rbd.pointers(model)
    for k in (P.child[0], P.child[P.child[0]], model.N):
        assert list(cc.outward(P, k)) == _recursion(P, k, inward=False)
        assert list(cc.inward(P, k)) == _recursion(P, k, inward=True)
    assert list(cc.outward(P)) == _recursion(P, P.child[0], inward=False)
    assert list(cc.inward(P)) == _recursion(P, P.child[0], inward=True)


def test_rnea_over_pointers_on_a_chain_deeper_than_the_call_stack():
    """The walks keep their own stack: a 2,000-body chain, deeper than Python's recursion
    limit, goes through (a recursive walk raised RecursionError at 1,100 bodies)."""
    chain = rbd.random_tree(2000, seed=7, joint_types=("revolute", "prismatic", "spherical"),
                            p_chain=1.0)
    assert chain.parent[1:] == list(range(chain.N)) and chain.N > sys.getrecursionlimit()
    rng = np.random.default_rng(7)
    q, qd, qdd = rbd.random_q(chain, rng), rng.normal(size=chain.nv), rng.normal(size=chain.nv)
    tau = rbd.rnea(chain, q, qd, qdd)
    assert rel_err(cc.rnea_pointers(chain, q, qd, qdd), tau) < 1e-13
    P = rbd.pointers(chain)
    assert list(cc.inward(P)) == list(range(chain.N, 0, -1))


def test_a_chain_visited_in_the_same_order_either_way():
    chain = rbd.planar_chain(5)
    P = rbd.pointers(chain)
    assert list(cc.outward(P)) == [1, 2, 3, 4, 5] and list(cc.inward(P)) == [5, 4, 3, 2, 1]


def test_rnea_rejects_a_bad_order():
    model = rbd.random_tree(6, seed=1, p_chain=0.3)
    q, z = rbd.neutral_q(model), np.zeros(model.nv)
    down = list(range(1, 7))
    k = next(i for i in range(2, 7) if model.parent[i] > 0)
    bad_out = [k] + [i for i in down if i != k]               # k before its parent
    cases = [((bad_out, down[::-1]), "before its parent"),
             ((down, down), "before its children"),
             ((down[:-1], down[::-1]), "misses bodies"),
             ((down + [1], down[::-1]), "not yet visited"),
             (([0] + down, down[::-1]), "not a body"),
             ((down,), "pair")]
    for order, message in cases:
        with pytest.raises(ValueError, match=message):
            rbd.rnea(model, q, z, z, order=order)


# ------------------------------------------------------------- the swing of §5.2

def test_swing_structure_dof_and_closure():
    sw = cc.swing(cc.human_figure())
    model = sw.mech.model
    assert [lp.name for lp in sw.mech.loops] == ["board-left", "left hand", "right hand",
                                                 "l thigh", "r thigh"]
    assert model.nv - 6 == 30                          # the source's count (§5.2)
    assert np.abs(cc.loop_residual(sw.mech, sw.q)).max() < 1e-12
    split = cc.choose_split(sw.mech, sw.q)
    assert (split.m, split.NF) == (29, 7)              # one weld row repeats the pivots
    # the thighs sit symmetrically on the board, inside its ends
    xs = [sw.thigh_x(sw.mech, sw.q, n) for n in ("l thigh", "r thigh")]
    assert xs[0] == pytest.approx(-xs[1]) and 0 < xs[0] < sw.half
    # turned by 0.6 rad about the pivots, at rest: the rods' ball joints hold the angle
    R = rbd.spatial.quat_to_rot(sw.q[model.q_slices[sw.bodies["left rod"]]])
    np.testing.assert_allclose(R, rbd.spatial.rotx(0.6), atol=1e-12)
    # the unit-vector forward dynamics agree with CRBA + multipliers
    tau = np.zeros(model.nv)
    assert rel_err(cc.forward_dynamics(sw.mech, sw.q, tau, tau, split=split),
                   cc.forward_dynamics_kkt(sw.mech, sw.q, tau, tau, split=split)) < 1e-9
    # breaking the board off the left rod frees 5 motions
    broken, q2, _ = cc.cut(sw.mech, sw.q, tau, "board-left")
    assert cc.choose_split(broken, q2).NF == 12


def test_swing_rejects_bad_parameters():
    fig = cc.human_figure()
    with pytest.raises(ValueError, match="rod mass"):
        cc.swing(fig, rod_mass=0.0)
    with pytest.raises(ValueError, match="board"):
        cc.swing(fig, board=(3.0, -0.6, 0.25, 0.03))
    with pytest.raises(ValueError, match="pivots"):
        cc.swing(fig, top=-1.0)


def test_four_bar_sweep_closes_the_loop_on_one_branch():
    mech = cc.four_bar()
    angles = np.linspace(0.0, 2 * np.pi, 61)
    sweep = cc.four_bar_sweep(mech, angles)
    assert np.allclose(sweep["q"][:, 0], angles)                # the crank is held
    for q in sweep["q"]:
        origins, targets = viz.loop_geometry(mech, q)
        assert np.allclose(origins[mech.loops[0].virtual], targets[0], atol=1e-9)
    assert np.abs(np.diff(sweep["q"], axis=0)).max() < 0.5      # no jump to the other branch
    n = np.arange(len(angles))
    assert np.allclose(sweep["cond_pivoted"], sweep["cond"][n, sweep["G_pivoted"]])
    assert len(cc.FOUR_BAR_JOINTS) == mech.model.nv == 4
