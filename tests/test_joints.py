"""Joint models (rbdlearn.joints): transforms, motion subspaces and the velocity convention."""

import numpy as np
import pytest
import sympy

import rbdlearn as rbd
from rbdlearn.joints import Fixed, Free, Prismatic, Revolute, Spherical
from rbdlearn.spatial import crm, exp_so3, mcI, plux, quat_to_rot, rotx, rotz


def all_joints():
    rng = np.random.default_rng(7)
    a = rng.normal(size=3)
    return [Revolute(a), Revolute([0.0, 0.0, 1.0]), Prismatic(-a), Prismatic([0.0, 1.0, 0.0]),
            Spherical(), Free(), Fixed()]


JOINTS = all_joints()
IDS = [f"{type(j).__name__}{k}" for k, j in enumerate(JOINTS)]


def one_body_model(joint, name="j"):
    return rbd.Model(parent=[-1, 0], joints=[None, joint], Xtree=[None, np.eye(6)],
                     I=[None, mcI(1.2, np.array([0.1, -0.2, 0.05]), np.diag([0.3, 0.4, 0.5]))],
                     names=["base", name], body_names=["world", "link"])


@pytest.mark.parametrize("joint", JOINTS + [rbd.SphericalZYX()], ids=IDS + ["SphericalZYX"])
def test_returned_arrays_cannot_change_the_joint(joint):
    """What a joint hands out is a value: writing into it raises (read-only) or leaves the
    joint as it was, never changes the next call's answer."""
    rng = np.random.default_rng(3)
    q, qd = joint.random_q(rng), rng.normal(size=joint.nv)
    before = [joint.S(q).copy(), joint.cJ(q, qd).copy(), joint.XJ(q).copy()]
    for out in (joint.S(q), joint.cJ(q, qd), joint.XJ(q),
                *(getattr(joint, "axis", None),)):
        if out is None or out.size == 0:
            continue
        try:
            out *= 2.0
        except ValueError as err:
            assert "read-only" in str(err)
    after = [joint.S(q), joint.cJ(q, qd), joint.XJ(q)]
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    g = rbd.model.GRAVITY
    with pytest.raises(ValueError, match="read-only"):
        g[5] = 0.0


@pytest.mark.parametrize("joint", JOINTS, ids=IDS)
def test_neutral_is_identity_and_S_has_nv_columns(joint):
    q0 = joint.neutral()
    assert q0.shape == (joint.nq,)
    np.testing.assert_allclose(joint.XJ(q0), np.eye(6), atol=1e-15)
    rng = np.random.default_rng(0)
    q = joint.random_q(rng)
    assert q.shape == (joint.nq,)
    assert joint.S(q).shape == (6, joint.nv)
    assert joint.cJ(q, rng.normal(size=joint.nv)).shape == (6,)
    # S has full column rank (independent motion freedoms)
    assert np.linalg.matrix_rank(joint.S(q)) == joint.nv


@pytest.mark.parametrize("joint", JOINTS, ids=IDS)
def test_XJ_is_a_plucker_transform(joint):
    rng = np.random.default_rng(1)
    X = joint.XJ(joint.random_q(rng))
    E = X[:3, :3]
    np.testing.assert_allclose(E @ E.T, np.eye(3), atol=1e-14)
    assert np.linalg.det(E) == pytest.approx(1.0)
    np.testing.assert_array_equal(X[:3, 3:], np.zeros((3, 3)))
    np.testing.assert_allclose(X[3:, 3:], E, atol=1e-15)


@pytest.mark.parametrize("joint", JOINTS, ids=IDS)
def test_S_qd_is_the_successor_velocity(joint):
    """Central difference along q ⊕ t·v: d/dt XJ = −(S v)× XJ, the joint velocity S v
    being in successor coordinates (body-frame velocity for spherical and free)."""
    rng = np.random.default_rng(2)
    h = 1e-5
    for _ in range(5):
        q, v = joint.random_q(rng), rng.normal(size=joint.nv)
        dX = (joint.XJ(joint.integrate(q, h * v)) - joint.XJ(joint.integrate(q, -h * v))) / (2 * h)
        np.testing.assert_allclose(dX, -crm(joint.S(q) @ v) @ joint.XJ(q), atol=1e-8)
        # and the first-order form of the brief, with its O(h²) error
        Xp = joint.XJ(joint.integrate(q, h * v))
        np.testing.assert_allclose(Xp, (np.eye(6) - h * crm(joint.S(q) @ v)) @ joint.XJ(q),
                                   atol=50 * h * h * (1 + np.max(np.abs(v), initial=0.0)) ** 2)


@pytest.mark.parametrize("joint", JOINTS, ids=IDS)
def test_integrate_zero_and_composition(joint):
    rng = np.random.default_rng(3)
    q, v = joint.random_q(rng), rng.normal(size=joint.nv)
    np.testing.assert_allclose(joint.integrate(q, np.zeros(joint.nv)), q, atol=1e-15)
    # constant velocity: moving for time 1 in two halves equals moving once
    half = joint.integrate(joint.integrate(q, v / 2), v / 2)
    np.testing.assert_allclose(joint.XJ(half), joint.XJ(joint.integrate(q, v)), atol=1e-12)


def test_joint_transform_meaning():
    th = 0.7
    np.testing.assert_allclose(Revolute([0, 0, 1]).XJ([th]), plux(rotz(th).T), atol=1e-15)
    np.testing.assert_allclose(Revolute([0, 0, -2]).XJ([th]), plux(rotz(-th).T), atol=1e-15)
    np.testing.assert_allclose(Revolute([1, 0, 0]).XJ([th]), plux(rotx(th).T), atol=1e-15)
    a = np.array([1.0, 2.0, 2.0]) / 3
    np.testing.assert_allclose(Revolute(a).XJ([th]), plux(exp_so3(a * th).T), atol=1e-15)
    np.testing.assert_allclose(Prismatic(a).XJ([th]), plux(np.eye(3), a * th), atol=1e-15)
    quat = np.array([0.5, 0.5, -0.5, 0.5])
    np.testing.assert_allclose(Spherical().XJ(quat), plux(quat_to_rot(quat).T), atol=1e-15)
    p = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(Free().XJ(np.concatenate([p, quat])),
                               plux(quat_to_rot(quat).T, p), atol=1e-15)
    # S: the axis as a rotation / translation direction
    np.testing.assert_allclose(Revolute(a).S(np.zeros(1))[:, 0], np.concatenate([a, np.zeros(3)]))
    np.testing.assert_allclose(Prismatic(a).S(np.zeros(1))[:, 0], np.concatenate([np.zeros(3), a]))


@pytest.mark.parametrize("joint", [Spherical(), Free()], ids=["Spherical", "Free"])
def test_integrate_keeps_quaternions_unit(joint):
    rng = np.random.default_rng(4)
    q = joint.random_q(rng)
    for _ in range(200):
        q = joint.integrate(q, rng.normal(size=joint.nv) * 3)
        assert abs(np.linalg.norm(q[-4:]) - 1.0) < 1e-14


def test_free_integrate_is_the_exponential_of_the_body_twist():
    # constant body twist (w, u) with w ∥ u: a screw motion; after time 1 the body has
    # turned by |w| about w and advanced by u along it (in the body's initial frame)
    q = Free().neutral()
    w = np.array([0.0, 0.0, 1.3])
    u = np.array([0.0, 0.0, 0.4])
    q1 = Free().integrate(q, np.concatenate([w, u]))
    np.testing.assert_allclose(q1[:3], u, atol=1e-15)
    np.testing.assert_allclose(quat_to_rot(q1[3:]), rotz(1.3), atol=1e-15)
    # a pure rotation with a body-frame linear velocity perpendicular to w: circular path
    q1 = Free().integrate(q, np.array([0, 0, np.pi, 1.0, 0, 0]))     # half a turn
    np.testing.assert_allclose(q1[:3], [0, 2 / np.pi, 0], atol=1e-15)


@pytest.mark.parametrize("joint", [Free(), Spherical()], ids=["Free", "Spherical"])
def test_integrate_matches_pinocchio(joint):
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    model = one_body_model(joint)
    pm = interop.to_pinocchio(model)
    rng = np.random.default_rng(5)
    for scale in (1e-3, 1.0, 3.0):
        q, v = rbd.random_q(model, rng), rng.normal(size=model.nv) * scale
        ours = rbd.integrate_q(model, q, v)
        theirs = interop.q_from_pin(model, pm, pin.integrate(pm, interop.q_to_pin(model, pm, q),
                                                             interop.v_to_pin(model, pm, v)))
        quat_ours, quat_theirs = ours[-4:], theirs[-4:]
        # a quaternion and its negative are one rotation
        sign = 1.0 if quat_ours @ quat_theirs >= 0 else -1.0
        np.testing.assert_allclose(ours[:-4], theirs[:-4], atol=1e-12)
        np.testing.assert_allclose(quat_ours, sign * quat_theirs, atol=1e-12)


@pytest.mark.parametrize("joint, nq_at", [(Spherical(), 0), (Free(), 3)],
                         ids=["Spherical", "Free"])
def test_check_q_rejects_non_unit_quaternions_naming_the_joint(joint, nq_at):
    model = one_body_model(joint, name="shoulder_ball")
    q = rbd.neutral_q(model)
    q[nq_at] = 1.01                       # the w component
    with pytest.raises(ValueError, match="shoulder_ball.*not a unit quaternion"):
        rbd.forward_kinematics(model, q)
    with pytest.raises(ValueError, match="my q.*norm 1.01"):
        joint.check_q(q, "my q")
    q[nq_at] = 0.0                        # zero quaternion
    with pytest.raises(ValueError, match="shoulder_ball"):
        rbd.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    # a unit quaternion with w < 0 is fine
    q[nq_at] = -1.0
    joint.check_q(q)
    rbd.forward_kinematics(model, q)


@pytest.mark.parametrize("kind", [Revolute, Prismatic])
@pytest.mark.parametrize("axis", [[0.0, 0.0, 0.0], [np.nan, 0.0, 1.0], [np.inf, 0.0, 0.0],
                                  [1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [[1.0, 0.0, 0.0]], 1e-13 *
                                  np.ones(3)],
                         ids=["zero", "nan", "inf", "len2", "len4", "2d", "tiny"])
def test_bad_axes_rejected(kind, axis):
    with pytest.raises(ValueError, match=f"{kind.__name__.lower()} joint axis"):
        kind(axis)


def test_axes_are_normalised():
    assert np.linalg.norm(Revolute([0.0, 3.0, 4.0]).axis) == pytest.approx(1.0)
    np.testing.assert_allclose(Prismatic([0.0, 3.0, 4.0]).axis, [0, 0.6, 0.8])


def test_symbolic_joint_transforms():
    th = sympy.Symbol("theta")
    for joint, expected in [(Revolute([0, 0, 1]), plux(rotz(th).T)),
                            (Revolute([1, 0, 0]), plux(rotx(th).T)),
                            (Prismatic([0, 1, 0]), plux(np.eye(3, dtype=int),
                                                        np.array([0, th, 0], dtype=object)))]:
        X = joint.XJ(np.array([th], dtype=object))
        assert X.dtype == object
        assert all(sympy.simplify(e) == 0 for e in (X - expected).ravel()), joint
        S = joint.S(np.array([th], dtype=object))
        assert S.dtype == object and S.shape == (6, 1)
        # exact: no floats in the symbolic result
        assert not any(isinstance(e, sympy.Float) for e in np.concatenate([X.ravel(), S.ravel()]))
