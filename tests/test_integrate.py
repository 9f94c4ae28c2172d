"""Simulation (rbdlearn.integrate): conservation of momentum and energy by a free-floating
body and tree, the convergence order of each integrator, a pendulum against its
closed-form period, RK4 against a hand-written classical RK4 where the configuration
space is flat, unit quaternions, and bad input."""

import math

import numpy as np
import pytest

import rbdlearn as rbd
from rbdlearn.spatial import mcI, quat_to_rot


def slope(dts, errors):
    """Least-squares slope of log(error) against log(dt)."""
    return float(np.polyfit(np.log(dts), np.log(errors), 1)[0])


def max_drift(model, traj, h0, E0):
    """Largest deviation from the initial momentum and energy along a trajectory."""
    dh = max(np.abs(rbd.momentum(model, q, v) - h0).max() for q, v in zip(traj.q, traj.qd))
    dE = max(abs(rbd.energy(model, q, v) - E0) for q, v in zip(traj.q, traj.qd))
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
    E = np.array([rbd.energy(model, q, v) for q, v in zip(traj.q, traj.qd)])
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
