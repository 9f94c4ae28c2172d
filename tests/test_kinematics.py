"""Kinematics (rbdlearn.kinematics) against Pinocchio on random trees (n >= 30, every joint
type, fixed and floating base), and against finite differences independent of Pinocchio."""

import numpy as np
import pytest

import rbdlearn as rbd
from conftest import random_state as state
from rbdlearn.spatial import crm, inv_X, to_linear_angular, unskew

pin = pytest.importorskip("pinocchio")
from rbdlearn import interop  # noqa: E402

TOL = 1e-9


def points(model, seed):
    rng = np.random.default_rng(seed + 1000)
    return [None] + [rng.uniform(-0.5, 0.5, 3) for _ in range(model.N)]


def with_point_frames(tree, pts):
    """A copy of the Pinocchio twin with an OP_FRAME "pt<i>" at point pts[i] of body i."""
    pm = tree.pm.copy()
    for i in range(1, tree.model.N + 1):
        body = pm.frames[pm.getFrameId(tree.model.body_names[i])]
        pm.addFrame(pin.Frame(f"pt{i}", body.parentJoint,
                              body.placement * pin.SE3(np.eye(3), pts[i]), pin.FrameType.OP_FRAME))
    return pm


@pytest.mark.parametrize("seed", [0, 1])
def test_forward_kinematics_velocities_accelerations(tree, seed, assert_rel):
    model, pm = tree.model, tree.pm
    pd = pm.createData()
    q, qd, qdd = state(model, seed)
    pin.forwardKinematics(pm, pd, interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
                          interop.v_to_pin(model, pm, qdd))
    pin.updateFramePlacements(pm, pd)
    X0 = rbd.forward_kinematics(model, q)
    V = rbd.body_velocities(model, q, qd)
    A = rbd.body_accelerations(model, q, qd, qdd)
    R, p, Rp, pp, v, vp, a, ap = ([] for _ in range(8))
    for i in range(1, model.N + 1):
        fid = pm.getFrameId(model.body_names[i])
        Ri, pi = rbd.body_pose(X0[i])
        R.append(Ri), p.append(pi)
        Rp.append(pd.oMf[fid].rotation), pp.append(pd.oMf[fid].translation)
        v.append(V[i]), a.append(A[i])
        vp.append(pin.getFrameVelocity(pm, pd, fid, pin.LOCAL).vector)
        ap.append(pin.getFrameAcceleration(pm, pd, fid, pin.LOCAL).vector)
    assert_rel(np.array(R), np.array(Rp), TOL, "orientation")
    assert_rel(np.array(p), np.array(pp), TOL, "position")
    assert_rel(to_linear_angular(np.array(v).T), np.array(vp).T, TOL, "velocity")
    assert_rel(to_linear_angular(np.array(a).T), np.array(ap).T, TOL, "acceleration")
    # X0[0] is the identity, v/a of the base vanish
    np.testing.assert_array_equal(X0[0], np.eye(6))
    assert not V[0].any() and not A[0].any()


@pytest.mark.parametrize("seed", [2])
def test_jacobians_and_jdot_qdot(tree, seed, assert_rel):
    model, P = tree.model, tree.P
    pts = points(model, seed)
    pm = with_point_frames(tree, pts)
    pd = pm.createData()
    q, qd, _ = state(model, seed)
    qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd)
    pin.computeJointJacobians(pm, pd, qp)
    pin.computeJointJacobiansTimeVariation(pm, pd, qp, vp)
    pin.forwardKinematics(pm, pd, qp, vp, np.zeros(pm.nv))
    pin.updateFramePlacements(pm, pd)
    ours, theirs = {}, {}

    def add(key, a, b):
        ours.setdefault(key, []).append(a)
        theirs.setdefault(key, []).append(b)

    for i in range(1, model.N + 1):
        fid = pm.getFrameId(model.body_names[i])
        pid = pm.getFrameId(f"pt{i}")
        for frame, ref in (("local", pin.LOCAL), ("world", pin.WORLD)):
            add(f"J {frame}", to_linear_angular(rbd.jacobian(model, q, i, frame=frame)),
                pin.getFrameJacobian(pm, pd, fid, ref) @ P)
            add(f"Jdot qd {frame}", to_linear_angular(rbd.jdot_qdot(model, q, qd, i, frame=frame)),
                pin.getFrameJacobianTimeVariation(pm, pd, fid, ref) @ vp)
        for frame, ref in (("local", pin.LOCAL), ("world", pin.LOCAL_WORLD_ALIGNED)):
            add(f"point J {frame}", rbd.point_jacobian(model, q, i, pts[i], frame=frame),
                (pin.getFrameJacobian(pm, pd, pid, ref) @ P)[:3])
            add(f"point Jdot qd {frame}", rbd.jdot_qdot(model, q, qd, i, pts[i], frame=frame),
                (pin.getFrameJacobianTimeVariation(pm, pd, pid, ref) @ vp)[:3])
        # the world point case is the classical acceleration of the point at qdd = 0
        add("point classical acc", rbd.jdot_qdot(model, q, qd, i, pts[i], frame="world"),
            pin.getFrameClassicalAcceleration(pm, pd, pid, pin.LOCAL_WORLD_ALIGNED).linear)
        add("point velocity", rbd.point_velocity(model, q, qd, i, pts[i], frame="world"),
            pin.getFrameVelocity(pm, pd, pid, pin.LOCAL_WORLD_ALIGNED).linear)
        add("point velocity local", rbd.point_velocity(model, q, qd, i, pts[i], frame="local"),
            pin.getFrameVelocity(pm, pd, pid, pin.LOCAL).linear)
    for key in ours:
        assert_rel(np.array(ours[key]), np.array(theirs[key]), TOL, key)


def test_jacobian_structure(tree):
    """Columns of joints that are not ancestors of i are zero; J qd is the body velocity."""
    model = tree.model
    q, qd, _ = state(model, 3)
    V = rbd.body_velocities(model, q, qd)
    X0 = rbd.forward_kinematics(model, q)
    for i in range(1, model.N + 1, 3):
        J = rbd.jacobian(model, q, i, frame="local")
        Jw = rbd.jacobian(model, q, i, frame="world")
        np.testing.assert_allclose(J @ qd, V[i], atol=1e-12 * max(1, np.abs(V[i]).max()))
        np.testing.assert_allclose(Jw, inv_X(X0[i]) @ J, atol=1e-11)
        anc = set(model.ancestors(i))
        for k in range(1, model.N + 1):
            if k not in anc:
                assert not J[:, model.v_slices[k]].any()


@pytest.mark.parametrize("tree_seed, floating", [(7, False), (8, True)])
def test_finite_differences(tree_seed, floating):
    """J and J̇q̇ against central differences along q(t) = q ⊕ t·qd (constant joint
    velocity qd, so qdd = 0) — no Pinocchio involved."""
    model = rbd.random_tree(12, seed=tree_seed)
    if floating:
        model = rbd.floating_base(model, rbd.spatial.mcI(2.0, np.zeros(3), np.eye(3)))
    rng = np.random.default_rng(tree_seed)
    q, qd = rbd.random_q(model, rng), rng.normal(size=model.nv)
    h = 1e-5
    qp, qm = rbd.integrate_q(model, q, h * qd), rbd.integrate_q(model, q, -h * qd)

    def fd(f):
        return (f(qp) - f(qm)) / (2 * h)

    X0 = rbd.forward_kinematics(model, q)
    for i in range(1, model.N + 1):
        p = rng.uniform(-0.5, 0.5, 3)
        # body velocity: d/dt ⁱX₀ = −(v_i×) ⁱX₀
        dX = fd(lambda x: rbd.forward_kinematics(model, x)[i])
        vx = -dX @ inv_X(X0[i])
        v_fd = np.concatenate([unskew(vx[:3, :3]), unskew(vx[3:, :3])])
        np.testing.assert_allclose(vx, crm(v_fd), atol=1e-8)
        np.testing.assert_allclose(rbd.jacobian(model, q, i, frame="local") @ qd, v_fd, atol=1e-7)
        # point velocity: derivative of its position in the base frame
        pos = fd(lambda x: rbd.body_pose(rbd.forward_kinematics(model, x)[i])[0] @ p
                 + rbd.body_pose(rbd.forward_kinematics(model, x)[i])[1])
        np.testing.assert_allclose(rbd.point_jacobian(model, q, i, p, frame="world") @ qd, pos,
                                   atol=1e-7)
        # J̇ qd = d/dt (J(q(t)) qd) for every frame and for body and point Jacobians
        for frame in ("local", "world"):
            np.testing.assert_allclose(
                rbd.jdot_qdot(model, q, qd, i, frame=frame),
                fd(lambda x: rbd.jacobian(model, x, i, frame=frame) @ qd), atol=1e-6)
            np.testing.assert_allclose(
                rbd.jdot_qdot(model, q, qd, i, p, frame=frame),
                fd(lambda x: rbd.point_jacobian(model, x, i, p, frame=frame) @ qd), atol=1e-6)


@pytest.fixture(scope="module")
def small():
    return rbd.random_tree(6, seed=1)


@pytest.mark.parametrize("i", [0, 7, -1, 1.0, "1", None, True, np.True_, [2], np.array(2)])
def test_bad_body_index(small, i):
    """Anything but a body (an integer 1..N, not a bool, or a body's name) is refused by
    every function that takes one, naming the argument (True once ended in a numpy
    broadcasting error, a point velocity took it as body 1)."""
    q, qd = rbd.neutral_q(small), np.zeros(small.nv)
    calls = (lambda: rbd.jacobian(small, q, i, frame="local"),
             lambda: rbd.point_jacobian(small, q, i, np.zeros(3), frame="world"),
             lambda: rbd.point_velocity(small, q, qd, i, np.zeros(3), frame="world"),
             lambda: rbd.jdot_qdot(small, q, qd, i, frame="local"))
    want = (r"i names body '1', which is not a body of the model" if isinstance(i, str)
            else rf"i: body index must be an integer in 1..6 .*got {type(i).__name__}")
    for call in calls:
        with pytest.raises(rbd.RbdlearnError, match=want):
            call()


def test_a_body_by_name(small):
    q = rbd.random_q(small, 0)
    name = small.body_names[3]
    np.testing.assert_array_equal(rbd.jacobian(small, q, name, frame="world"),
                                  rbd.jacobian(small, q, 3, frame="world"))
    np.testing.assert_array_equal(rbd.jacobian(small, q, np.int64(3), frame="world"),
                                  rbd.jacobian(small, q, 3, frame="world"))


def test_frame_must_be_named(small):
    """No default frame: a call that does not say which frame is refused, by name."""
    q, qd = rbd.neutral_q(small), np.zeros(small.nv)
    for call in (lambda: rbd.jacobian(small, q, 2),
                 lambda: rbd.point_jacobian(small, q, 2, np.zeros(3)),
                 lambda: rbd.point_velocity(small, q, qd, 2, np.zeros(3)),
                 lambda: rbd.jdot_qdot(small, q, qd, 2),
                 lambda: rbd.jdot_qdot(small, q, qd, 2, np.zeros(3))):
        with pytest.raises(TypeError, match="frame"):
            call()


def test_point_acceleration_as_a_user_writes_it():
    """J_p q̈ + J̇_p q̇ with both calls in the world frame is the classical acceleration of
    the point: the second difference of its position along q(t) = q + q̇ t + q̈ t²/2."""
    model = rbd.random_tree(7, seed=4, joint_types=("revolute", "prismatic"))
    rng = np.random.default_rng(5)
    q, qd, qdd = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    i, p = 6, np.array([0.3, -0.2, 0.5])

    def position(t):
        R, o = rbd.body_pose(rbd.forward_kinematics(model, q + qd * t + qdd * t**2 / 2)[i])
        return o + R @ p

    h = 1e-4
    fd = (position(h) - 2 * position(0.0) + position(-h)) / h**2
    acc = (rbd.point_jacobian(model, q, i, p, frame="world") @ qdd
           + rbd.jdot_qdot(model, q, qd, i, p, frame="world"))
    np.testing.assert_allclose(acc, fd, atol=1e-5 * (1 + np.abs(fd).max()))


@pytest.mark.parametrize("frame", ["global", "LOCAL", None, "body"])
def test_bad_frame(small, frame):
    q, qd = rbd.neutral_q(small), np.zeros(small.nv)
    for call in (lambda: rbd.jacobian(small, q, 2, frame=frame),
                 lambda: rbd.point_jacobian(small, q, 2, np.zeros(3), frame=frame),
                 lambda: rbd.point_velocity(small, q, qd, 2, np.zeros(3), frame=frame),
                 lambda: rbd.jdot_qdot(small, q, qd, 2, frame=frame),
                 lambda: rbd.jdot_qdot(small, q, qd, 2, np.zeros(3), frame=frame)):
        with pytest.raises(ValueError, match="frame must be one of"):
            call()


@pytest.mark.parametrize("p", [np.zeros(2), np.zeros(4), np.zeros((3, 1)),
                               np.array([0.0, np.nan, 0.0]), np.array([np.inf, 0, 0])])
def test_bad_point(small, p):
    q, qd = rbd.neutral_q(small), np.zeros(small.nv)
    for call in (lambda: rbd.point_jacobian(small, q, 2, p, frame="world"),
                 lambda: rbd.point_velocity(small, q, qd, 2, p, frame="world"),
                 lambda: rbd.jdot_qdot(small, q, qd, 2, p, frame="world")):
        with pytest.raises(ValueError, match="point must be a finite 3-vector"):
            call()


def test_bad_state_in_kinematics(small):
    q = rbd.neutral_q(small)
    with pytest.raises(ValueError, match="q has shape"):
        rbd.jacobian(small, q[:-1], 2, frame="local")
    with pytest.raises(ValueError, match="qd has shape"):
        rbd.body_velocities(small, q, np.zeros(small.nv + 1))
