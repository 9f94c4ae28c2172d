"""Simulation (rbdlearn.integrate): conservation of momentum and energy by a free-floating
body and tree, the convergence order of each integrator, a pendulum against its
closed-form period, RK4 against a hand-written classical RK4 where the configuration
space is flat, unit quaternions, and bad input."""

import math

import numpy as np
import pytest

import rbdlearn as rbd
from rbdlearn.articulated import SingularArticulatedInertia
from rbdlearn.spatial import mcI, quat_to_rot


def slope(dts, errors):
    """Least-squares slope of log(error) against log(dt)."""
    return float(np.polyfit(np.log(dts), np.log(errors), 1)[0])


def max_drift(model, traj, h0, E0):
    """Largest deviation from the initial momentum and energy along a trajectory (every
    saved state at once: momentum and energy take a batch of states)."""
    dh = np.abs(rbd.momentum(model, traj.q, traj.qd) - h0).max()
    dE = np.abs(rbd.energy(model, traj.q, traj.qd) - E0).max()
    return dh, dE


# --- a single free-floating body ------------------------------------------------------

@pytest.fixture(scope="module")
def free_body():
    """An asymmetric body on a free joint, COM off the origin, gravity off, tumbling."""
    model = rbd.Model(parent=[-1, 0], joints=[None, rbd.Free()], Xtree=[None, np.eye(6)],
                      I=[None, mcI(2.0, np.array([0.1, -0.2, 0.05]), np.diag([0.1, 0.2, 0.3]))],
                      gravity=np.zeros(6))
    q0 = rbd.neutral_q(model)
    q0[:3] = [0.3, -0.1, 0.2]
    return model, q0, np.array([1.0, -2.0, 3.0, 0.5, 0.2, -0.3])


def test_momentum_and_energy_of_a_single_body_by_hand(free_body):
    """momentum and energy against their definitions for one body: h = [c×p + R Ic ω; m v_c]
    in base coordinates (p = m v_c, c the COM), E = ½ m |v_c|² + ½ ωᵀ Ic ω."""
    model, _, qd = free_body
    q = rbd.random_q(model, np.random.default_rng(1))
    pos, R = q[:3], quat_to_rot(q[3:])
    m, c_body, Ic = 2.0, np.array([0.1, -0.2, 0.05]), np.diag([0.1, 0.2, 0.3])
    w_body, vO_body = qd[:3], qd[3:]
    w, c = R @ w_body, pos + R @ c_body
    v_c = R @ (vO_body + np.cross(w_body, c_body))
    expected = np.concatenate([np.cross(c, m * v_c) + R @ Ic @ w_body, m * v_c])
    np.testing.assert_allclose(rbd.momentum(model, q, qd), expected, atol=1e-12)
    E = 0.5 * m * v_c @ v_c + 0.5 * w @ (R @ Ic @ R.T) @ w
    assert rbd.energy(model, q, qd) == pytest.approx(E, rel=1e-12)
    # potential energy: m g height of the COM
    model_g = rbd.Model(parent=[-1, 0], joints=model.joints, Xtree=model.Xtree, I=model.I)
    assert rbd.energy(model_g, q, qd) == pytest.approx(E + m * 9.81 * c[2], rel=1e-12)


def test_rk4_conserves_momentum_and_energy_to_fourth_order(free_body):
    model, q0, qd0 = free_body
    h0, E0 = rbd.momentum(model, q0, qd0), rbd.energy(model, q0, qd0)
    dts = [0.1, 0.05, 0.025]
    drifts = np.array([max_drift(model, rbd.simulate(model, q0, qd0, 2.0, dt), h0, E0)
                       for dt in dts])
    # Momentum depends on the orientation: a method that adds the stage velocities in one
    # tangent space (ignoring that rotations do not commute) gives slope 2 here.
    assert 3.5 <= slope(dts, drifts[:, 0]) <= 4.5, drifts
    # Energy depends on the body velocity alone, which obeys Euler's equations (a flat ODE):
    # at least fourth order (measured ≈ 4.8).
    assert slope(dts, drifts[:, 1]) >= 3.5, drifts
    assert drifts[-1, 0] < 2e-5 * np.abs(h0).max() and drifts[-1, 1] < 1e-6 * E0


def test_semi_implicit_euler_is_first_order_on_a_free_body(free_body):
    """In body coordinates the free body's velocity obeys Euler's equations, on which the
    semi-implicit step is explicit Euler: energy grows by O(h²) a step, O(h) overall."""
    model, q0, qd0 = free_body
    qd0 = qd0 / 4                                      # slow enough for explicit Euler
    h0, E0 = rbd.momentum(model, q0, qd0), rbd.energy(model, q0, qd0)
    dts = [0.02, 0.01, 0.005]
    drifts = np.array([max_drift(model, rbd.simulate(model, q0, qd0, 1.0, dt,
                                                     method="semi_implicit_euler"), h0, E0)
                       for dt in dts])
    assert 0.8 <= slope(dts, drifts[:, 0]) <= 1.2, drifts
    assert 0.8 <= slope(dts, drifts[:, 1]) <= 1.2, drifts
    assert drifts[-1, 1] < 0.01 * E0


# --- a free-floating tree ---------------------------------------------------------------

@pytest.fixture(scope="module")
def floating_tree():
    """A floating base carrying a random 8-body tree of revolute and spherical joints."""
    base = rbd.random_tree(8, seed=3, joint_types=("revolute", "spherical"))
    model = rbd.without_gravity(
        rbd.floating_base(base, mcI(3.0, np.zeros(3), np.diag([0.1, 0.2, 0.25]))))
    rng = np.random.default_rng(0)
    return model, rbd.random_q(model, rng), rng.normal(size=model.nv)


def test_free_floating_tree_conserves_momentum_and_energy(floating_tree):
    model, q0, qd0 = floating_tree
    assert {type(j) for j in model.joints[1:]} == {rbd.Free, rbd.Revolute, rbd.Spherical}
    h0, E0 = rbd.momentum(model, q0, qd0), rbd.energy(model, q0, qd0)
    traj = rbd.simulate(model, q0, qd0, 0.5, 0.0025)
    dh, dE = max_drift(model, traj, h0, E0)
    assert dh < 1e-9 * np.abs(h0).max(), dh
    assert dE < 1e-9 * E0, dE
    # the motion is not trivial: the configuration moved and momentum is not zero
    assert np.abs(traj.q[-1] - q0).max() > 0.1 and np.abs(h0).max() > 0.1
    # every quaternion (the free joint's and the spherical joints') stays unit
    for i in model.manifold_bodies:
        quat = traj.q[:, model.q_slices[i]][:, -4:]
        np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0, atol=1e-13)


def test_torques_break_conservation(floating_tree):
    """The checks above can fail: internal joint torques keep the momentum but change the
    energy; an external force changes the momentum."""
    model, q0, qd0 = floating_tree
    h0, E0 = rbd.momentum(model, q0, qd0), rbd.energy(model, q0, qd0)
    tau = np.zeros(model.nv)
    tau[6:] = 1.0                                       # internal joints only
    dh, dE = max_drift(model, rbd.simulate(model, q0, qd0, 0.1, 0.005, tau=tau), h0, E0)
    assert dh < 1e-8 * np.abs(h0).max() and dE > 1e-3
    push = {3: np.array([0, 0, 0, 1.0, 0, 0])}
    dh, _ = max_drift(model, rbd.simulate(model, q0, qd0, 0.1, 0.005, f_ext=push), h0, E0)
    assert dh > 1e-2


# --- flat configuration spaces ------------------------------------------------------------

def test_rk4_is_classical_rk4_on_revolute_joints():
    model = rbd.planar_chain(3)
    q0, qd0 = np.array([0.3, -0.5, 1.0]), np.array([0.2, 0.0, -0.7])
    tau = np.array([1.0, -2.0, 0.5])
    h = 0.01

    def f(x):
        return np.concatenate([x[3:], rbd.aba(model, x[:3], x[3:], tau)])

    x = np.concatenate([q0, qd0])
    for _ in range(5):
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    traj = rbd.simulate(model, q0, qd0, 5 * h, h, tau=tau)
    np.testing.assert_allclose(np.concatenate([traj.q[-1], traj.qd[-1]]), x, rtol=0,
                               atol=1e-13)
    np.testing.assert_allclose(traj.t, h * np.arange(6), atol=1e-15)


def test_time_dependent_torque_against_closed_form():
    """One link, no gravity: J q̈ = A sin(ωt) gives q(t) = A/J (t/ω − sin(ωt)/ω²)."""
    model = rbd.planar_chain(1, length=1.0, mass=3.0, gravity=np.zeros(6))
    J = 3.0 / 3.0                                    # m l²/3 about the pivot
    A, w = 2.0, 3.0
    traj = rbd.simulate(model, [0.0], [0.0], 2.0, 0.01, tau=lambda t, q, qd: [A * np.sin(w * t)])
    exact = A / J * (traj.t / w - np.sin(w * traj.t) / w**2)
    np.testing.assert_allclose(traj.q[:, 0], exact, atol=1e-9)
    np.testing.assert_allclose(traj.qd[:, 0], A / J * (1 - np.cos(w * traj.t)) / w, atol=1e-9)


def test_pendulum_small_angle_period():
    """A uniform rod of length L on a pivot: T = 2π √(I/(m g d)) = 2π √(2L/(3g))."""
    L = 0.8
    model = rbd.planar_chain(1, length=L)       # rotates about x; q = 0 is horizontal
    down = -np.pi / 2
    traj = rbd.simulate(model, [down + 1e-3], [0.0], 3.0, 2e-3)
    x = traj.q[:, 0] - down
    k = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))   # downward zero crossings
    crossings = traj.t[k] + x[k] / (x[k] - x[k + 1]) * (traj.t[k + 1] - traj.t[k])
    assert len(crossings) >= 2
    T = 2 * np.pi * math.sqrt(2 * L / (3 * 9.81))
    np.testing.assert_allclose(np.diff(crossings), T, rtol=1e-5)


def test_semi_implicit_euler_energy_stays_bounded_on_a_pendulum():
    """On a single pendulum the semi-implicit step is symplectic: the energy error
    oscillates with amplitude O(h) and does not drift, over many periods."""
    model = rbd.planar_chain(1)
    traj = rbd.simulate(model, [-np.pi / 2 + 0.5], [0.0], 40.0, 0.01,
                        method="semi_implicit_euler")
    E = rbd.energy(model, traj.q, traj.qd)                  # every saved state at once
    err = np.abs(E - E[0])
    first, last = err[: len(E) // 4].max(), err[-len(E) // 4:].max()
    assert 1e-4 < first < 0.01 * abs(E[0])          # an O(h) error, visible...
    assert last < 1.1 * first                        # ...that does not grow


def test_trajectory_ends_at_t_end():
    model = rbd.planar_chain(2)
    traj = rbd.simulate(model, [0.1, 0.2], [0.0, 0.0], 0.25, 0.1)
    np.testing.assert_allclose(traj.t, [0.0, 0.1, 0.2, 0.25])
    assert traj.q.shape == (4, 2) and traj.qd.shape == (4, 2)
    assert rbd.simulate(model, [0.1, 0.2], [0.0, 0.0], 0.0, 0.1).t.tolist() == [0.0]
    assert len(rbd.simulate(model, [0.1, 0.2], [0.0, 0.0], 0.3, 0.1).t) == 4   # 0.3/0.1 ≈ 3
    with pytest.raises(ValueError, match="read-only"):
        traj.q[0, 0] = 1.0


# --- bad input ----------------------------------------------------------------------------

def test_bad_input(floating_tree):
    model, q0, qd0 = floating_tree
    sim = rbd.simulate
    for dt in (0.0, -0.1, np.nan, "fast"):
        with pytest.raises(ValueError, match="dt must be"):
            sim(model, q0, qd0, 1.0, dt)
    for t_end in (-1.0, np.inf):
        with pytest.raises(ValueError, match="t_end must be finite and >= 0"):
            sim(model, q0, qd0, t_end, 0.1)
    with pytest.raises(ValueError, match="method must be one of"):
        sim(model, q0, qd0, 1.0, 0.1, method="euler")
    with pytest.raises(ValueError, match=r"initial state.*q has shape"):
        sim(model, q0[:-1], qd0, 1.0, 0.1)
    with pytest.raises(ValueError, match=r"initial state.*qd has shape"):
        sim(model, q0, np.append(qd0, 0.0), 1.0, 0.1)
    bad = q0.copy()
    bad[3] += 0.5                                       # the free joint's quaternion
    with pytest.raises(ValueError, match=r"initial state.*root_joint.*unit quaternion"):
        sim(model, bad, qd0, 1.0, 0.1)
    with pytest.raises(ValueError, match="tau has shape"):
        sim(model, q0, qd0, 1.0, 0.1, tau=np.zeros(3))
    with pytest.raises(ValueError, match=r"tau\(t, q, qd\) at t = 0: tau has shape"):
        sim(model, q0, qd0, 1.0, 0.1, tau=lambda t, q, qd: np.zeros(3))
    with pytest.raises(ValueError, match=r"tau\(t, q, qd\) at t = 0.05: tau\[0\] is nan"):
        sim(model, q0, qd0, 1.0, 0.1, tau=lambda t, q, qd: np.full(model.nv, np.nan if t else 0))
    with pytest.raises(ValueError, match=r"f_ext\[1\] has shape"):
        sim(model, q0, qd0, 1.0, 0.1, f_ext={1: np.zeros(3)})
    with pytest.raises(ValueError, match="forward dynamics at t = 0 returned"):
        sim(model, q0, qd0, 1.0, 0.1, forward=lambda m, q, qd, tau: np.full(m.nv, np.inf))
    with pytest.raises(ValueError, match="Trajectory needs"):
        rbd.Trajectory(np.zeros(3), np.zeros((2, 1)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="uniform gravity"):
        odd = rbd.planar_chain(1, gravity=np.array([1.0, 0, 0, 0, 0, -9.81]))
        rbd.energy(odd, [0.0], [0.0])


def test_a_diverging_simulation_says_so():
    """Ball joints with a far too long step: the state blows up. The error names the
    divergence and the time, never a bare 'math domain error' from deep inside."""
    model = rbd.random_tree(4, seed=1, joint_types=("spherical",))
    q0 = rbd.random_q(model, np.random.default_rng(0))
    for method in ("semi_implicit_euler", "rk4"):
        with np.errstate(invalid="ignore"), pytest.raises(
                ValueError, match=r"simulate diverged between t = [\d.]+ and [\d.]+: the "
                                  r"state overflowed.*smaller dt"):
            rbd.simulate(model, q0, np.zeros(model.nv), 200.0, 0.5, method=method)


# --- the variational integrator -------------------------------------------------------------

from rbdlearn.integrate import kinetic_terms, right_jacobian  # noqa: E402


@pytest.mark.parametrize("method", ["variational", "rk4", "semi_implicit_euler"])
def test_a_singular_mass_matrix_says_when_and_which_joint(method):
    """A massless last link: H is singular. The variational integrator ended in numpy's
    bare LinAlgError; every method now names the step, the model and the joint."""
    model = rbd.planar_chain(3, mass=[1.0, 1.0, 0.0], inertia=[0.1, 0.1, 0.0])
    with pytest.raises(SingularArticulatedInertia,
                       match=r"simulate: in the step from t = 0 to 0.01, the mass matrix H\(q\) "
                             r"of Model\(N=3 bodies.*\) is singular: .*joint 'joint3'"):
        rbd.simulate(model, np.zeros(3), np.zeros(3), 0.1, 0.01, method=method)
    # the same with crba's forward dynamics, whose Cholesky names the joint too
    if method != "variational":
        with pytest.raises(ValueError, match=r"from t = 0 to 0.01.*H is not positive definite: "
                                             r"at v\[2\], a coordinate of joint 'joint3'"):
            rbd.simulate(model, np.zeros(3), np.zeros(3), 0.1, 0.01, method=method,
                         forward=rbd.forward_dynamics_crb)


def test_a_run_too_long_for_memory_is_refused_up_front():
    """t_end = 1e6, dt = 1e-6: 1e12 steps tried to allocate 7 TiB (numpy's MemoryError)."""
    chain = rbd.planar_chain(3)
    zero = np.zeros(3)
    for method in ("rk4", "variational"):
        with pytest.raises(ValueError, match=r"simulate: 1e\+12 steps from t = 0 to 1e\+06 by "
                                             r"dt = 1e-06 would store 1e\+12 states of 7 numbers, "
                                             r"5.215e\+04 GiB, more than the 4 GiB of "
                                             r"integrate.MAX_TRAJECTORY_BYTES"):
            rbd.simulate(chain, zero, zero, 1e6, 1e-6, method=method)
    # a batch stores each of its states: 3 x (3 + 3) numbers and the time
    with pytest.raises(ValueError, match=r"states of 19 numbers"):
        rbd.simulate(chain, np.zeros((3, 3)), np.zeros((3, 3)), 1e6, 1e-6)
    with pytest.raises(ValueError, match=r"time_grid: inf steps from t = 0 to 1e\+300 by "
                                         r"dt = 1e-300"):
        rbd.integrate.time_grid(1e300, 1e-300)


def test_the_memory_limit_is_the_stored_states(monkeypatch):
    """The limit counts (steps + 1) x (1 + nq + nv) floats: at 20 steps of a 3-link chain,
    21 x 7 x 8 = 1176 bytes."""
    chain = rbd.planar_chain(3)
    zero = np.zeros(3)
    monkeypatch.setattr(rbd.integrate, "MAX_TRAJECTORY_BYTES", 1176)
    assert len(rbd.simulate(chain, zero, zero, 0.2, 0.01).t) == 21
    with pytest.raises(ValueError, match=r"21 steps .* 22 states of 7 numbers, 1.147e-06 GiB"):
        rbd.simulate(chain, zero, zero, 0.21, 0.01)


@pytest.fixture(scope="module")
def every_joint_tree():
    """A floating base on a random tree with every joint type the integrator takes."""
    base = rbd.random_tree(10, seed=5)            # revolute, prismatic, spherical, free, fixed
    model = rbd.floating_base(base, mcI(2.0, np.array([0.1, 0.0, 0.2]),
                                        np.diag([0.1, 0.2, 0.3])))
    assert {type(j) for j in model.joints[1:]} == {rbd.Free, rbd.Revolute, rbd.Prismatic,
                                                   rbd.Spherical, rbd.Fixed}
    return model


def test_kinetic_terms_against_crba_and_finite_differences(every_joint_tree):
    """(VI-4): H q̇ against crba, and ∂T/∂η against central differences of
    T(q ⊕ ε e_i) = ½ q̇ᵀ H(q ⊕ ε e_i) q̇ — every joint type, floating base, random states."""
    model = every_joint_tree
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, qd = rbd.random_q(model, rng), rng.normal(size=model.nv)
        Hqd, dT = kinetic_terms(model, q, qd)
        np.testing.assert_allclose(Hqd, rbd.crba(model, q) @ qd, atol=1e-12)

        def T(q):
            return 0.5 * qd @ rbd.crba(model, q) @ qd
        eps = 1e-5
        fd = np.array([(T(rbd.integrate_q(model, q, eps * e))
                        - T(rbd.integrate_q(model, q, -eps * e))) / (2 * eps)
                       for e in np.eye(model.nv)])
        assert np.abs(fd).max() > 1.0                       # not trivially zero
        np.testing.assert_allclose(dT, fd, atol=1e-7 * np.abs(fd).max())


def test_kinetic_terms_need_the_parent_velocity():
    """On a ball joint v_λ(j) and v_j differ by S_j q̇_j, and (VI-4) needs v_λ(j): one body
    on a ball joint with a fixed pivot has T = ½ ωᵀ I ω in body coordinates whatever its
    orientation, so ∂T/∂η = 0; the same formula with v_j in place of v_λ(j) gives
    −ω × (I ω) ≠ 0."""
    model = rbd.Model(parent=[-1, 0], joints=[None, rbd.Spherical()], Xtree=[None, np.eye(6)],
                      I=[None, mcI(1.0, np.array([0.3, 0.0, 0.0]), np.diag([0.1, 0.2, 0.3]))])
    q, qd = rbd.neutral_q(model), np.array([0.5, -1.0, 2.0])
    _, dT = kinetic_terms(model, q, qd)
    np.testing.assert_allclose(dT, 0.0, atol=1e-15)    # v_λ = 0: T(q ⊕ η) = T(q) exactly
    v = np.r_[qd, 0, 0, 0]                              # v_j (v_λ = 0)
    assert np.abs(rbd.spatial.cross_force(v, model.I[1] @ v)[:3]).max() > 0.1


@pytest.mark.parametrize("joint", [rbd.Revolute([0.0, 0.6, 0.8]), rbd.Prismatic([1.0, 0, 0]),
                                   rbd.Spherical(), rbd.Free()], ids=lambda j: type(j).__name__)
def test_right_jacobian_against_the_joints_integrate(joint):
    """(VI-3): (q ⊕ φ) ⊕ εη = q ⊕ (φ + ε J_r⁻¹(φ) η) + O(ε²), by central differences, at
    small and large φ (both branches of the closed forms); J_r = Σ (−ad)ⁿ/(n+1)!."""
    rng = np.random.default_rng(7)
    S = joint.S(joint.neutral())
    for scale in (1e-3, 0.05, 0.5, 2.0):
        q, phi = joint.random_q(rng), rng.normal(size=joint.nv) * scale
        Jinv = right_jacobian(joint, phi, inverse=True)
        ad = S.T @ rbd.spatial.crm(S @ phi) @ S                 # ad restricted by S
        series = sum(np.linalg.matrix_power(-ad, n) / math.factorial(n + 1) for n in range(40))
        np.testing.assert_allclose(right_jacobian(joint, phi), series, atol=1e-14)
        np.testing.assert_allclose(Jinv @ series, np.eye(joint.nv), atol=1e-13)
        eps = 1e-6
        for eta in np.eye(joint.nv):
            lhs = joint.integrate(joint.integrate(q, phi), eps * eta)
            rhs = joint.integrate(q, phi + eps * Jinv @ eta)
            assert np.abs(lhs - rhs).max() < 1e-10          # O(ε²)
            if joint.nv > 1 and scale > 0.1:                # the uncorrected φ + εη is O(ε) off
                assert np.abs(lhs - joint.integrate(q, phi + eps * eta)).max() > 1e-8


def one_step_map(model, method, h):
    """(q, p) → (q', p') of one step of ``simulate`` on a vector-space model, p = H q̇."""
    def step(x):
        q, p = x[:model.nq], x[model.nq:]
        tr = rbd.simulate(model, q, np.linalg.solve(rbd.crba(model, q), p), h, h,
                          method=method)
        return np.r_[tr.q[-1], rbd.crba(model, tr.q[-1]) @ tr.qd[-1]]
    return step


@pytest.mark.fp_sensitive
def test_variational_step_is_symplectic():
    """Mᵀ J M = J for the Jacobian M of (q, p) → (q', p') (central differences) on a
    three-link chain; semi-implicit Euler's map in (q, H q̇) fails the same check."""
    model = rbd.planar_chain(3)
    q, qd = np.array([0.3, -0.8, 1.1]), np.array([1.0, -2.0, 3.0])
    x = np.r_[q, rbd.crba(model, q) @ qd]
    n = model.nv
    J = np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])
    defect = {}
    for method in ("variational", "semi_implicit_euler"):
        f, eps = one_step_map(model, method, 0.02), 1e-5
        M = np.column_stack([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                             for e in np.eye(2 * n)])
        assert np.abs(M - np.eye(2 * n)).max() > 0.01          # the step does something
        defect[method] = np.abs(M.T @ J @ M - J).max() / np.abs(M).max() ** 2
    assert defect["variational"] < 1e-7, defect
    assert defect["semi_implicit_euler"] > 1e-3, defect


@pytest.mark.fp_sensitive
def test_variational_keeps_the_momentum_of_a_free_floating_tree(floating_tree):
    """Discrete Noether: without gravity the free joint's left-invariance keeps the total
    spatial momentum to the solver's tolerance; RK4 at the same step drifts."""
    model, q0, qd0 = floating_tree
    h0 = rbd.momentum(model, q0, qd0)
    drift = {}
    for method in ("variational", "rk4"):
        traj = rbd.simulate(model, q0, qd0, 1.0, 0.02, method=method)
        drift[method] = (np.abs(rbd.momentum(model, traj.q, traj.qd) - h0).max(axis=-1)
                         / np.abs(h0).max())                       # every saved state
        assert np.abs(traj.q[-1] - q0).max() > 0.1         # the tree moved
    # the solver's tolerance: 50 steps, each solved to a correction below 1e-13 |ξ|, can
    # leave ≲ 50 · 1e-13 = 5e-12 of the momentum (RK4 drifts by its truncation error)
    assert drift["variational"].max() < 1e-11, drift
    rk4 = drift["rk4"]
    assert rk4[-1] > 1e4 * drift["variational"].max() and rk4[-1] > 10 * rk4[1], rk4  # drifts


def energy_errors(model, traj):
    E = rbd.energy(model, traj.q, traj.qd)                  # every saved state at once
    return np.abs(E - E[0])


def test_variational_energy_error_stays_bounded_on_a_chain():
    """The triple pendulum released horizontally, Δt = 5 ms, 10 s: semi-implicit Euler's
    energy error more than doubles from one half of the run to the next, to over 5 J; the
    variational integrator's stays below 1 J (the links' weights times their lengths
    add up to m g l (1/2 + 3/2 + 5/2) ≈ 44 J). Chapter 2 §3 runs it for 20 s."""
    model = rbd.planar_chain(3)
    halves = {}
    for method in ("variational", "semi_implicit_euler"):
        err = energy_errors(model, rbd.simulate(model, np.zeros(3), np.zeros(3), 10.0, 0.005,
                                                method=method))
        halves[method] = [part.max() for part in np.array_split(err, 2)]
    assert max(halves["variational"]) < 1.0, halves
    first, second = halves["semi_implicit_euler"]
    assert second > 2 * first and second > 5.0, halves


def test_variational_stays_bounded_where_euler_diverges_on_ball_joints():
    """Three ball joints in a chain under gravity, Δt = 10 ms: semi-implicit Euler blows
    up within 5 s; the variational integrator's energy error stays small. (Chapter 2 §3
    runs another chain at Δt = 5 ms.)"""
    model = rbd.random_tree(3, seed=3, joint_types=("spherical",), p_chain=1.0)
    q0 = rbd.random_q(model, np.random.default_rng(3))
    with np.errstate(invalid="ignore"), pytest.raises(ValueError, match="diverged"):
        rbd.simulate(model, q0, np.zeros(model.nv), 5.0, 0.01, method="semi_implicit_euler")
    traj = rbd.simulate(model, q0, np.zeros(model.nv), 5.0, 0.01, method="variational")
    assert np.abs(traj.qd).max() > 10                     # a fast motion
    assert energy_errors(model, traj).max() < 0.6, energy_errors(model, traj).max()


def order_errors(model, q0, qd0, t_end, dts, **kwargs):
    ref = rbd.simulate(model, q0, qd0, t_end, 2e-3, **kwargs)          # RK4
    return [np.abs(np.r_[tr.q[-1] - ref.q[-1], tr.qd[-1] - ref.qd[-1]]).max()
            for tr in (rbd.simulate(model, q0, qd0, t_end, dt, method="variational",
                                    **kwargs) for dt in dts)]


def test_variational_is_second_order(floating_tree):
    """Against an RK4 reference: halving Δt divides the error by 4 — on the chain with a
    time- and velocity-dependent torque, and on the floating tree (free and ball joints)
    pushed by a time-dependent external force."""
    dts = [0.02, 0.01, 0.005]
    model, q0, qd0 = floating_tree
    cases = [(rbd.planar_chain(3), [0.3, -0.5, 1.0], [0.2, 0.0, -0.7],
              {"tau": lambda t, q, qd: np.array([np.sin(3 * t), 0.0, 1.0]) - 0.5 * qd}),
             (model, q0, qd0,
              {"f_ext": lambda t, q, qd: {3: np.array([0, 0, 1.0, np.cos(2 * t), 0, 0])}})]
    for model, q0, qd0, kwargs in cases:
        errors = order_errors(model, q0, qd0, 0.2, dts, **kwargs)
        assert 1.8 <= slope(dts, errors) <= 2.2, (kwargs, errors)


def test_variational_bad_input():
    zyx = rbd.random_tree(3, seed=1, joint_types=("revolute", "spherical_zyx"))
    q0 = rbd.random_q(zyx, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"variational.*joint '\w+' \(SphericalZYX\)"):
        rbd.simulate(zyx, q0, np.zeros(zyx.nv), 1.0, 0.01, method="variational")
    with pytest.raises(ValueError, match="SphericalZYX"):
        kinetic_terms(zyx, q0, np.zeros(zyx.nv))
    chain = rbd.planar_chain(3)
    with pytest.raises(ValueError, match="does not use forward dynamics"):
        rbd.simulate(chain, np.zeros(3), np.zeros(3), 1.0, 0.01, method="variational",
                     forward=rbd.forward_dynamics_crb)
    with pytest.raises(ValueError, match=r"f_ext\[1\] has shape"):
        rbd.simulate(chain, np.zeros(3), np.zeros(3), 1.0, 0.01, method="variational",
                     f_ext={1: np.zeros(3)})
    with pytest.raises(ValueError, match=r"the variational step at t = [0-9.]+ did not converge in "
                                         r"50 quasi-Newton iterations .*try a smaller dt"):
        rbd.simulate(chain, np.zeros(3), [40.0, -60.0, 80.0], 1.0, 0.2, method="variational")
