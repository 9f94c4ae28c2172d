"""Batches of states through rnea, aba, crba, the kinematics they use, integrate_q,
simulate, energy and momentum: the same functions, answering state by state. Each batched
result is checked against a loop of single calls, and against Pinocchio, on random trees
with every joint type (fixed and floating base) and on the talos_reduced robot."""

import re

import numpy as np
import pytest
import sympy

import rbdlearn as rbd
from conftest import make_tree, urdf_pair

# A batch adds the same products as single calls, in an order the machine's BLAS and SIMD
# choose: these tests run again under a second floating-point environment (the marker's
# note in pyproject.toml).
pytestmark = pytest.mark.fp_sensitive

JOINT_TYPES = ("revolute", "prismatic", "spherical", "spherical_zyx", "free", "fixed")
K = 5


def every_joint_tree(floating):
    model = rbd.random_tree(14, seed=7, joint_types=JOINT_TYPES)
    if floating:
        model = rbd.floating_base(model, model.I[1])
    assert {type(j).__name__ for j in model.joints[1:]} >= {
        "Revolute", "Prismatic", "Spherical", "SphericalZYX", "Free"}
    return model


def talos():
    return urdf_pair("talos_data/robots/talos_reduced.urdf", floating=True)[0]


MODELS = {"every-joint-fixed": lambda: every_joint_tree(False),
          "every-joint-floating": lambda: every_joint_tree(True),
          "tree30-floating": lambda: make_tree(30, 3, floating=True),
          "talos": talos}


@pytest.fixture(scope="module", params=list(MODELS), ids=list(MODELS))
def model(request):
    return MODELS[request.param]()


def states(model, shape, seed=0):
    """Random q (*shape, nq), qd, x (*shape, nv)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    q = np.array([rbd.random_q(model, rng) for _ in range(n)]).reshape(shape + (model.nq,))
    return q, rng.normal(size=shape + (model.nv,)), rng.normal(size=shape + (model.nv,))


def loop(fn, *batched):
    """fn applied state by state to arrays (*shape, n): results stacked as (*shape, ...)."""
    shape = batched[0].shape[:-1]
    out = [fn(*(b[idx] for b in batched)) for idx in np.ndindex(shape)]
    return np.array(out).reshape(shape + np.shape(out[0]))


@pytest.mark.parametrize("shape", [(K,), (2, 3)])
def test_rnea_aba_crba_batch_equal_a_loop(model, shape):
    q, qd, x = states(model, shape)
    tau = rbd.rnea(model, q, qd, x)
    assert tau.shape == shape + (model.nv,)
    np.testing.assert_allclose(tau, loop(lambda *s: rbd.rnea(model, *s), q, qd, x),
                               rtol=1e-12, atol=1e-10)
    qdd = rbd.aba(model, q, qd, x)
    assert qdd.shape == shape + (model.nv,)
    np.testing.assert_allclose(qdd, loop(lambda *s: rbd.aba(model, *s), q, qd, x),
                               rtol=1e-10, atol=1e-9)
    H = rbd.crba(model, q)
    assert H.shape == shape + (model.nv, model.nv)
    np.testing.assert_allclose(H, loop(lambda q: rbd.crba(model, q), q), rtol=1e-12,
                               atol=1e-10)
    # and the three agree with each other state by state: H q̈ + b = τ
    b = rbd.rnea(model, q, qd, np.zeros(model.nv))
    np.testing.assert_allclose(np.einsum("...ij,...j->...i", H, qdd) + b, x, atol=1e-8)


def test_crba_batch_larger_than_a_block_equals_a_loop():
    """crba takes a large batch in blocks of states (about 8 MB of arrays each): a
    batch of 3 x 150 talos states (204 per block) crosses two block boundaries, in the
    middle of the batch's first axis; every state equals its single call."""
    model = MODELS["talos"]()
    q = states(model, (3, 150))[0]
    H = rbd.crba(model, q)
    assert H.shape == (3, 150, model.nv, model.nv)
    np.testing.assert_allclose(H, loop(lambda q: rbd.crba(model, q), q), rtol=1e-12,
                               atol=1e-10)


def test_kinematics_batch_equal_a_loop(model):
    q, qd, qdd = states(model, (K,), seed=1)
    X0 = rbd.forward_kinematics(model, q)
    v = rbd.body_velocities(model, q, qd)
    a = rbd.body_accelerations(model, q, qd, qdd)
    for k in range(K):
        X0k = rbd.forward_kinematics(model, q[k])
        vk = rbd.body_velocities(model, q[k], qd[k])
        ak = rbd.body_accelerations(model, q[k], qd[k], qdd[k])
        for i in range(1, model.N + 1):
            np.testing.assert_allclose(X0[i][k], X0k[i], atol=1e-12)
            np.testing.assert_allclose(v[i][k], vk[i], atol=1e-11)
            np.testing.assert_allclose(a[i][k], ak[i], atol=1e-10)


def test_energy_and_momentum_batch_equal_a_loop(model):
    """energy and momentum along a batch of states (a stored trajectory, say): a loop of
    single calls; the kinetic part is ½ q̇ᵀ H q̇ with H from crba; shapes broadcast."""
    q, qd, _ = states(model, (2, 3), seed=6)
    E, h = rbd.energy(model, q, qd), rbd.momentum(model, q, qd)
    assert E.shape == (2, 3) and h.shape == (2, 3, 6)
    assert isinstance(rbd.energy(model, q[0, 0], qd[0, 0]), float)
    np.testing.assert_allclose(E, loop(lambda q, qd: rbd.energy(model, q, qd), q, qd),
                               rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(h, loop(lambda q, qd: rbd.momentum(model, q, qd), q, qd),
                               rtol=1e-12, atol=1e-9)
    still = rbd.without_gravity(model)
    T = 0.5 * np.einsum("...i,...ij,...j->...", qd, rbd.crba(model, q), qd)
    np.testing.assert_allclose(rbd.energy(still, q, qd), T, rtol=1e-10)
    assert rbd.energy(model, q[0, 0], qd).shape == (2, 3)        # one q, many velocities
    with pytest.raises(ValueError, match="do not broadcast"):
        rbd.energy(model, q, qd[0, :2])


def test_integrate_q_batch_equal_a_loop(model):
    q, v, _ = states(model, (K,), seed=2)
    out = rbd.integrate_q(model, q, 0.3 * v)
    np.testing.assert_allclose(out, loop(lambda q, v: rbd.integrate_q(model, q, 0.3 * v),
                                         q, v), atol=1e-13)


def test_broadcasting_one_q_many_velocities(model):
    """q single, qd and qdd a batch: the configuration is shared by every state."""
    q, qd, qdd = states(model, (K,), seed=3)
    tau = rbd.rnea(model, q[0], qd, qdd)
    np.testing.assert_allclose(tau, [rbd.rnea(model, q[0], qd[k], qdd[k]) for k in range(K)],
                               atol=1e-10)
    qdd_b = rbd.aba(model, q[0], qd[0], qdd)
    np.testing.assert_allclose(qdd_b, [rbd.aba(model, q[0], qd[0], x) for x in qdd],
                               atol=1e-9)


def test_batch_with_external_forces(model):
    q, qd, x = states(model, (K,), seed=4)
    rng = np.random.default_rng(4)
    f = {model.N: rng.normal(size=(K, 6)), 1: rng.normal(size=6)}
    tau = rbd.rnea(model, q, qd, x, f_ext=f)
    qdd = rbd.aba(model, q, qd, x, f_ext=f)
    for k in range(K):
        fk = {model.N: f[model.N][k], 1: f[1]}
        np.testing.assert_allclose(tau[k], rbd.rnea(model, q[k], qd[k], x[k], f_ext=fk),
                                   atol=1e-10)
        np.testing.assert_allclose(qdd[k], rbd.aba(model, q[k], qd[k], x[k], f_ext=fk),
                                   atol=1e-9)


def test_batched_external_forces_must_fit_the_batch():
    """A force per state for another batch, or a batch of forces for one state, passed the
    check and failed inside with numpy's broadcast errors."""
    m = every_joint_tree(False)
    q, qd, x = states(m, (K,), seed=5)
    name = m.body_names[2]
    for forward in (rbd.rnea, rbd.aba):
        for bad in ((4, 6), (K, 1, 6), (2, K, 6), (K, 3)):
            with pytest.raises(ValueError, match=rf"f_ext\[2\] has shape {re.escape(str(bad))}, "
                                                 rf"expected "
                                                 rf"\(6,\), the same force in every state, or "
                                                 rf"\(5, 6\), one per state of the batch "
                                                 rf"\(the force on body 2, '{name}'\)"):
                forward(m, q, qd, x, f_ext={2: np.ones(bad)})
        with pytest.raises(ValueError, match=rf"f_ext\[2\] has shape \(5, 6\), expected a "
                                             rf"spatial force \(6,\) for one state "
                                             rf"\(the force on body 2, '{name}'\)"):
            forward(m, q[0], qd[0], x[0], f_ext={2: np.ones((K, 6))})
    # a (1, 6) force broadcasts to every state of the batch, as a (6,) one does
    f = np.random.default_rng(5).normal(size=6)
    np.testing.assert_allclose(rbd.rnea(m, q, qd, x, f_ext={2: f[None]}),
                               rbd.rnea(m, q, qd, x, f_ext={2: f}), atol=1e-12)
    # a (2, 1, 6) force over a (2, 3) batch: one force per row of states
    q2, qd2, x2 = states(m, (2, 3), seed=6)
    f2 = np.random.default_rng(6).normal(size=(2, 1, 6))
    tau = rbd.rnea(m, q2, qd2, x2, f_ext={2: f2})
    np.testing.assert_allclose(tau[1, 2], rbd.rnea(m, q2[1, 2], qd2[1, 2], x2[1, 2],
                                                   f_ext={2: f2[1, 0]}), atol=1e-10)


def test_batch_against_pinocchio(model):
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    q, qd, x = states(model, (K,), seed=5)
    tau, qdd, H = rbd.rnea(model, q, qd, x), rbd.aba(model, q, qd, x), rbd.crba(model, q)
    for k in range(K):
        qp, vp, xp = (interop.q_to_pin(model, pm, q[k]), interop.v_to_pin(model, pm, qd[k]),
                      interop.v_to_pin(model, pm, x[k]))
        np.testing.assert_allclose(interop.v_to_pin(model, pm, tau[k]),
                                   pin.rnea(pm, pd, qp, vp, xp), atol=1e-9)
        np.testing.assert_allclose(interop.v_to_pin(model, pm, qdd[k]),
                                   pin.aba(pm, pd, qp, vp, xp), rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(H[k], interop.H_from_pin(model, pm, pin.crba(pm, pd, qp)),
                                   atol=1e-9)


def test_single_calls_unchanged_in_shape_and_symbolic():
    """One state in, one answer out; sympy object arrays still work state by state."""
    m = rbd.without_gravity(rbd.planar_chain(2))
    q = np.zeros(2)
    assert rbd.rnea(m, q, q, q).shape == (2,) and rbd.crba(m, q).shape == (2, 2)
    t = sympy.symbols("t0:2")
    tau = rbd.rnea(m, np.array(t, dtype=object), np.zeros(2), np.array([1, 0]))
    assert tau.dtype == object
    assert sympy.simplify(tau[0].subs({t[0]: 0, t[1]: 0}) - rbd.crba(m, q)[0, 0]) == 0


def test_batch_shape_errors():
    m = every_joint_tree(False)
    q, qd, x = states(m, (K,))
    with pytest.raises(ValueError, match=rf"qd has shape \(5, {m.nv + 1}\), expected "
                                         rf"\({m.nv},\) = \(nv,\), or \(\.\.\., {m.nv}\)"):
        rbd.rnea(m, q, np.zeros((K, m.nv + 1)), x)
    with pytest.raises(ValueError, match=r"batch axes .* do not broadcast together: "
                                         r"q has shape \(5, \d+\), qd has shape \(4, \d+\)"):
        rbd.aba(m, q, qd[:4], x)
    bad = q.copy()
    i = m.manifold_bodies[0]
    bad[3, m.q_slices[i]] *= 2
    with pytest.raises(ValueError, match=r"of state \(3,\) is not a unit quaternion"):
        rbd.crba(m, bad)
    bad = qd.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"qd\[2, 1\] is nan"):
        rbd.rnea(m, q, bad, x)
    with pytest.raises(ValueError, match=r"f_ext\[2\] has shape \(5, 3\)"):
        rbd.rnea(m, q, qd, x, f_ext={2: np.zeros((K, 3))})
    sym = np.array([sympy.Symbol("a")] * (2 * m.nv), dtype=object).reshape(2, m.nv)
    with pytest.raises(ValueError, match="a batch of states .* must be numeric"):
        rbd.rnea(m, q[:2], sym, x[:2])


@pytest.mark.parametrize("method", ["rk4", "semi_implicit_euler"])
def test_simulate_a_batch_of_initial_states_equals_a_loop(method):
    m = every_joint_tree(True)
    q0, qd0, _ = states(m, (3,), seed=6)
    qd0 *= 0.3
    tau = lambda t, q, qd: -0.5 * qd                        # noqa: E731  (damping, batched)
    traj = rbd.simulate(m, q0, qd0, 0.05, 0.01, tau=tau, method=method)
    assert traj.q.shape == (6, 3, m.nq) and traj.qd.shape == (6, 3, m.nv)
    for k in range(3):
        one = rbd.simulate(m, q0[k], qd0[k], 0.05, 0.01, tau=tau, method=method)
        np.testing.assert_allclose(traj.q[:, k], one.q, atol=1e-11)
        np.testing.assert_allclose(traj.qd[:, k], one.qd, atol=1e-10)


def test_simulate_batch_errors():
    m = rbd.planar_chain(2)
    with pytest.raises(ValueError, match=r"initial state .*qd has shape \(3, 3\)"):
        rbd.simulate(m, np.zeros((3, 2)), np.zeros((3, 3)), 0.1, 0.01)
    with pytest.raises(ValueError, match=r"Trajectory needs .* got shapes \(2,\), "
                                         r"\(2, 3, 2\), \(2, 4, 2\)"):
        rbd.Trajectory(np.zeros(2), np.zeros((2, 3, 2)), np.zeros((2, 4, 2)))


def test_symbolic_poses_stay_sympy_scalars():
    """A symbolic pose's pieces are sympy expressions, not 0-d arrays (which sympy's
    diff and Matrix cannot take)."""
    t = sympy.symbols("t")
    q = [sympy.Function("q_1")(t), sympy.Function("q_2")(t)]
    R, p = rbd.body_pose(rbd.forward_kinematics(rbd.planar_chain(2), q)[2])
    w = rbd.spatial.unskew(R.T)
    assert all(isinstance(x, sympy.Expr) for x in list(p) + list(w))
    assert sympy.simplify(sympy.diff(p[1], t).subs({q[0]: 0, q[1]: 0})) == 0


def test_single_state_functions_refuse_a_batch():
    """Functions that answer for one state say so, instead of mixing the axes up."""
    m = rbd.planar_chain(2)
    Q = np.zeros((6, 2))
    with pytest.raises(ValueError, match=r"q has shape \(6, 2\), expected \(2,\)"):
        rbd.point_velocity(m, Q, Q, 2, np.zeros(3), frame="world")
    with pytest.raises(ValueError, match=r"q has shape \(6, 2\)"):
        rbd.jacobian(m, Q, 2, frame="world")


def test_stacked_machinery_equals_body_by_body(model):
    """The pieces that act on every body at once (kinematics.joint_transforms,
    motion_subspaces, stacked_inertias and crb.support_mask) against the per-body
    definitions they replace, for one state and for a batch."""
    from rbdlearn import kinematics as K_
    q, _, _ = states(model, (3,), seed=5)
    for qs in (q[0], q):
        batch = qs.shape[:-1]
        S = K_.motion_subspaces(model, qs)
        Xup = K_.joint_transforms(model, qs)
        I = K_.stacked_inertias(model, batch)
        assert Xup.shape == (model.N + 1,) + batch + (6, 6)
        for i in range(1, model.N + 1):
            j, sl = model.joints[i], model.v_slices[i]
            S_i = j.S(qs[..., model.q_slices[i]])
            full = batch + S_i.shape[-2:]
            assert np.array_equal(np.broadcast_to(S_i, full), np.broadcast_to(S[..., sl], full))
            X_i = rbd.spatial.mm(j.XJ(qs[..., model.q_slices[i]]), model.Xtree[i])
            np.testing.assert_allclose(Xup[i], np.broadcast_to(X_i, batch + (6, 6)),
                                       atol=1e-14)
            assert np.array_equal(I[i].reshape(6, 6), model.I[i])
    # H's support: velocity k's joint on the path of velocity l's joint, from ancestors()
    body = model.velocity_body
    want = np.array([[body[k] in model.ancestors(body[l]) for l in range(model.nv)]
                     for k in range(model.nv)])
    assert np.array_equal(rbd.crb.support_mask(model), want)
    assert np.array_equal(body, [i for i in range(1, model.N + 1)
                                 for _ in range(model.joints[i].nv)])
    assert not body.flags.writeable
    constant = not any(j.S_depends_on_q for j in model.joints[1:])
    assert (model.S_constant is not None) == constant
