"""Conversions between rbdlearn and Pinocchio (rbdlearn.interop)."""

import re

import numpy as np
import pytest

import rbdlearn as rbd
from rbdlearn.joints import Fixed, Free, Revolute, Spherical
from rbdlearn.spatial import inv_X, mcI, plux, rotx, roty, to_linear_angular

pin = pytest.importorskip("pinocchio")
from rbdlearn import interop  # noqa: E402


def test_q_v_round_trips(tree):
    model, pm = tree.model, tree.pm
    rng = np.random.default_rng(tree.seed)
    for _ in range(3):
        q, v = rbd.random_q(model, rng), rng.normal(size=model.nv)
        qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, v)
        assert qp.shape == (pm.nq,) and vp.shape == (pm.nv,)
        np.testing.assert_array_equal(interop.q_from_pin(model, pm, qp), q)
        np.testing.assert_array_equal(interop.v_from_pin(model, pm, vp), v)
        # and the other way round
        back = interop.q_to_pin(model, pm, interop.q_from_pin(model, pm, qp))
        np.testing.assert_array_equal(back, qp)
        back = interop.v_to_pin(model, pm, interop.v_from_pin(model, pm, vp))
        np.testing.assert_array_equal(back, vp)
    # the neutral configurations correspond
    np.testing.assert_array_equal(interop.q_to_pin(model, pm, rbd.neutral_q(model)),
                                  pin.neutral(pm))


def test_block_layout_of_each_joint_type(tree):
    model, pm = tree.model, tree.pm
    rng = np.random.default_rng(0)
    q, v = rbd.random_q(model, rng), rng.normal(size=model.nv)
    qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, v)
    seen = set()
    for i in range(1, model.N + 1):
        j = model.joints[i]
        if isinstance(j, Fixed):
            assert not pm.existJointName(model.names[i])
            continue
        pj = pm.joints[pm.getJointId(model.names[i])]
        qi, vi = q[model.q_slices[i]], v[model.v_slices[i]]
        qpi, vpi = qp[pj.idx_q:pj.idx_q + pj.nq], vp[pj.idx_v:pj.idx_v + pj.nv]
        if isinstance(j, Spherical):                      # (w,x,y,z) -> (x,y,z,w)
            np.testing.assert_array_equal(qpi, [qi[1], qi[2], qi[3], qi[0]])
            np.testing.assert_array_equal(vpi, vi)
        elif isinstance(j, Free):                         # position first, then (x,y,z,w)
            np.testing.assert_array_equal(qpi, np.concatenate([qi[:3], qi[4:], qi[3:4]]))
            np.testing.assert_array_equal(vpi, np.concatenate([vi[3:], vi[:3]]))
        else:
            np.testing.assert_array_equal(qpi, qi)
            np.testing.assert_array_equal(vpi, vi)
        seen.add(type(j))
    assert len(seen) == 4


def test_to_pinocchio_structure(tree):
    model, pm = tree.model, tree.pm
    assert (pm.nq, pm.nv) == (model.nq, model.nv)
    moving = [i for i in range(1, model.N + 1) if model.joints[i].nv > 0]
    assert pm.njoints == len(moving) + 1
    assert sorted(pm.names[1:]) == sorted(model.names[i] for i in moving)
    # each Pinocchio joint hangs from the joint of the body's nearest moving ancestor
    for i in moving:
        k = model.parent[i]
        while k > 0 and model.joints[k].nv == 0:
            k = model.parent[k]
        jid = pm.getJointId(model.names[i])
        assert pm.parents[jid] == (pm.getJointId(model.names[k]) if k > 0 else 0)
    mass = [0.0] + [rbd.spatial.inertia_params(model.I[i])[0] for i in range(1, model.N + 1)]
    assert sum(I.mass for I in pm.inertias) == pytest.approx(sum(mass), rel=1e-12)
    # Pinocchio's total mass leaves out the universe, which carries the bodies welded to
    # the base by fixed joints
    welded = [0]
    for i in range(1, model.N + 1):
        if model.parent[i] in welded and isinstance(model.joints[i], Fixed):
            welded.append(i)
    assert pm.inertias[0].mass == pytest.approx(sum(mass[i] for i in welded), rel=1e-12, abs=0)
    assert pin.computeTotalMass(pm) == pytest.approx(sum(mass) - pm.inertias[0].mass, rel=1e-12)
    for name in model.body_names[1:]:
        assert pm.existFrame(name)
    np.testing.assert_allclose(pm.gravity.vector, [0, 0, -9.81, 0, 0, 0])


def test_to_pinocchio_copies_gravity():
    model = rbd.planar_chain(2, gravity=np.array([0.1, 0.2, 0.3, 1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(interop.to_pinocchio(model).gravity.vector,
                                  [1.0, 2.0, 3.0, 0.1, 0.2, 0.3])


def fixed_body_model():
    """base ─(revolute about y)─ 1 ─(fixed, offset and turned)─ 2."""
    return rbd.Model(parent=[-1, 0, 1], joints=[None, Revolute([0, 1, 0]), Fixed()],
                     Xtree=[None, plux(np.eye(3), [0, 0, 1.0]),
                            plux(rotx(0.4).T @ roty(-0.3).T, [0.5, -0.2, 0.3])],
                     I=[None, mcI(1.0, np.array([0.1, 0, 0]), np.diag([0.1, 0.2, 0.2])),
                        mcI(2.0, np.array([0, 0.2, 0]), np.diag([0.3, 0.2, 0.3]))],
                     names=["base", "hinge", "weld"], body_names=["world", "arm", "tool"])


def test_fext_to_pin_on_a_merged_fixed_body():
    model = fixed_body_model()
    pm = interop.to_pinocchio(model)
    assert pm.njoints == 2 and pm.nv == 1
    f = np.array([0.3, -0.2, 0.5, 1.0, 2.0, -3.0])           # on the tool, tool coordinates
    fp = interop.fext_to_pin(model, pm, {2: f})
    # by hand: the tool is fixed in body 1 by Xtree[2] = ²X₁, so its force in body-1
    # (= joint) coordinates is ²X₁ᵀ f
    np.testing.assert_allclose(fp[1].vector, to_linear_angular(model.Xtree[2].T @ f), atol=1e-14)
    assert not fp[0].vector.any()
    # list form gives the same, and the dynamics agree
    fl = interop.fext_to_pin(model, pm, [None, None, f])
    np.testing.assert_array_equal(fl[1].vector, fp[1].vector)
    q, qd, qdd = np.array([0.7]), np.array([-1.2]), np.array([0.4])
    tau = rbd.rnea(model, q, qd, qdd, {2: f})
    tau_pin = pin.rnea(pm, pm.createData(), q, qd, qdd, fp)
    np.testing.assert_allclose(tau, tau_pin, rtol=1e-12)
    assert abs(tau[0] - rbd.rnea(model, q, qd, qdd)[0]) > 0.1
    assert all(not x.vector.any() for x in interop.fext_to_pin(model, pm, None))


def test_fext_to_pin_rejects_bad_forces():
    model = fixed_body_model()
    pm = interop.to_pinocchio(model)
    with pytest.raises(ValueError, match=r"f_ext\[2\] has shape"):
        interop.fext_to_pin(model, pm, {2: np.zeros(3)})
    with pytest.raises(ValueError, match="f_ext has 2 entries"):
        interop.fext_to_pin(model, pm, [None, None])


def test_body_welded_to_the_base():
    """base ─(fixed)─ 1 ─(revolute)─ 2: body 1 becomes part of Pinocchio's universe."""
    model = rbd.Model(parent=[-1, 0, 1], joints=[None, Fixed(), Revolute([1, 0, 0])],
                      Xtree=[None, plux(rotx(0.3).T, [0, 0, 0.5]), plux(np.eye(3), [0.2, 0, 0])],
                      I=[None, mcI(3.0, np.zeros(3), np.eye(3)),
                         mcI(1.0, np.array([0, 0.3, 0]), np.diag([0.1, 0.05, 0.1]))],
                      names=["base", "mount", "pivot"], body_names=["world", "stand", "arm"])
    pm = interop.to_pinocchio(model)
    assert (pm.njoints, pm.nq, pm.nv) == (2, 1, 1)
    assert pm.inertias[0].mass == pytest.approx(3.0)
    assert pin.computeTotalMass(pm) == pytest.approx(1.0)
    q, qd, qdd = np.array([0.4]), np.array([2.0]), np.array([-1.0])
    f = {1: np.ones(6), 2: np.array([0.1, 0.2, 0.3, -1, 0, 1])}
    tau_pin = pin.rnea(pm, pm.createData(), q, qd, qdd, interop.fext_to_pin(model, pm, f))
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, f), tau_pin, rtol=1e-12)


def test_inertia_to_pin():
    rng = np.random.default_rng(3)
    for _ in range(5):
        m, c = rng.uniform(0.5, 2), rng.normal(size=3)
        R = rbd.spatial.exp_so3(rng.normal(size=3))
        Ic = R @ np.diag([0.2, 0.3, 0.4]) @ R.T
        I = mcI(m, c, Ic)
        Ip = interop.inertia_to_pin(I)
        assert Ip.mass == pytest.approx(m)
        np.testing.assert_allclose(Ip.lever, c, atol=1e-14)
        np.testing.assert_allclose(Ip.inertia, Ic, atol=1e-13)
        np.testing.assert_allclose(Ip.matrix(), to_linear_angular(I, operator=True), atol=1e-13)


def test_inertia_to_pin_clears_round_off_and_names_what_pinocchio_refuses():
    """A point mass's Ic = I_O − m c×c×ᵀ is zero up to round-off, which Pinocchio refuses when
    a diagonal entry is −1e-20; a negative diagonal beyond round-off is named, not passed on."""
    I = mcI(0.7, np.array([0.3, -0.2, 0.9]), np.zeros((3, 3)))
    eps = np.finfo(float).eps * np.abs(I[:3, :3]).max()
    for k in range(3):                              # a point mass, off by a few round-offs
        off = I.copy()
        off[k, k] -= 4 * eps
        Ip = interop.inertia_to_pin(off)
        assert np.linalg.eigvalsh(Ip.inertia)[0] >= 0 and np.diag(Ip.inertia).min() >= 0
        np.testing.assert_allclose(Ip.inertia, np.zeros((3, 3)), atol=8 * eps)
    bad = I.copy()
    bad[0, 0] -= 1e-6                               # far beyond round-off
    with pytest.raises(ValueError, match=r"tool: the rotational inertia about the centre of "
                                         r"mass has principal moments .* negative beyond "
                                         r"round-off .*a negative diagonal entry .*which "
                                         r"Pinocchio refuses"):
        interop.inertia_to_pin(bad, "tool")
    model = rbd.planar_chain(2)
    model = model.replace(I=[None, model.I[1], bad], physical=False)
    with pytest.raises(ValueError, match=r"body 2 \('link2'\): the rotational inertia"):
        interop.to_pinocchio(model)


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("robot", ["icub", "icub_reduced"])
def test_icub_converts_and_agrees_with_pinocchios_urdf_load(robot, floating):
    """icub's point-mass bodies came out of the round trip with principal moments of
    −5e-20, which Pinocchio refused: to_pinocchio now converts it, and the result has the
    dynamics of the model Pinocchio builds from the URDF itself."""
    from conftest import urdf_pair
    model, pm_urdf, rng = urdf_pair(f"icub_description/robots/{robot}.urdf", floating)
    pm = interop.to_pinocchio(model)
    assert pm.nq == pm_urdf.nq and pm.nv == pm_urdf.nv
    q, v, a = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    results = []
    for p in (pm, pm_urdf):
        d = p.createData()
        qp, vp, ap = (interop.q_to_pin(model, p, q), interop.v_to_pin(model, p, v),
                      interop.v_to_pin(model, p, a))
        results.append((interop.v_from_pin(model, p, pin.rnea(p, d, qp, vp, ap)),
                        interop.H_from_pin(model, p, pin.crba(p, d, qp))))
    (tau, H), (tau_urdf, H_urdf) = results
    np.testing.assert_allclose(tau, tau_urdf, atol=1e-10 * (1 + np.abs(tau_urdf).max()))
    np.testing.assert_allclose(H, H_urdf, atol=1e-10 * (1 + np.abs(H_urdf).max()))
    np.testing.assert_allclose(H, rbd.crba(model, q), atol=1e-10 * (1 + np.abs(H_urdf).max()))


def test_to_pinocchio_and_from_pinocchio_name_a_swapped_model():
    model = rbd.planar_chain(2)
    pm = interop.to_pinocchio(model)
    with pytest.raises(TypeError, match=r"model must be an rbdlearn Model, got a "
                                        r"pinocchio.Model; interop.from_pinocchio\(pmodel\)"):
        interop.to_pinocchio(pm)
    with pytest.raises(TypeError, match=r"pmodel must be a pinocchio.Model, got an rbdlearn "
                                        r"Model; interop.to_pinocchio\(model\)"):
        interop.from_pinocchio(model)
    with pytest.raises(TypeError, match=r"model must be an rbdlearn Model, got a pinocchio"):
        interop.q_to_pin(pm, model, np.zeros(2))
    with pytest.raises(TypeError, match=r"pmodel must be a pinocchio.Model, got list"):
        interop.v_from_pin(model, [], np.zeros(2))


def test_conversions_check_their_vectors():
    """Wrong lengths were cut (extra entries dropped) or ended in numpy broadcast errors,
    NaN and non-unit quaternions went straight to Pinocchio."""
    chain = rbd.planar_chain(3)
    model = rbd.floating_base(chain, mcI(2.0, np.zeros(3), np.diag([0.1, 0.2, 0.3])))
    pm = interop.to_pinocchio(model)
    q = rbd.neutral_q(model)
    for name, size, fn in (("q", "nq", interop.q_to_pin),
                           ("qp", "pmodel.nq", interop.q_from_pin),
                           ("v", "nv", interop.v_to_pin),
                           ("vp", "pmodel.nv", interop.v_from_pin)):
        n0 = model.nq if size.endswith("nq") else model.nv
        for n in (n0 - 1, n0 + 2):
            with pytest.raises(ValueError, match=rf"{name} has shape \({n},\), expected "
                                                 rf"\({n0},\) = \({re.escape(size)},\)"):
                fn(model, pm, np.zeros(n))
    for n in (model.nv - 1, model.nv + 2):
        with pytest.raises(ValueError, match=rf"Hp must be pmodel.nv x pmodel.nv = 9 x 9 "
                                             rf"finite numbers, got shape \({n}, {n}\)"):
            interop.H_from_pin(model, pm, np.zeros((n, n)))
    bad = q.copy()
    bad[8] = np.nan
    with pytest.raises(ValueError, match=r"q\[8\] is nan"):
        interop.q_to_pin(model, pm, bad)
    with pytest.raises(ValueError, match=r"qp\[8\] is nan"):
        interop.q_from_pin(model, pm, bad)
    with pytest.raises(ValueError, match=r"vp\[1\] is inf"):
        interop.v_from_pin(model, pm, np.r_[0.0, np.inf, np.zeros(7)])
    with pytest.raises(ValueError, match=r"with NaN or inf"):
        interop.H_from_pin(model, pm, np.full((9, 9), np.nan))
    # a quaternion off unit by more than joints.UNIT_TOL is refused, as everywhere in
    # rbdlearn (check_state), naming the joint and the norm, in either direction
    off = q.copy()
    off[3:7] = [1.0 + 1e-3, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"q of joint 'root_joint' \(free joint quaternion\) "
                                         r"is not a unit quaternion \(w, x, y, z\): norm 1.001"):
        interop.q_to_pin(model, pm, off)
    qp = pin.neutral(pm)
    qp[6] = 2.0                                     # Pinocchio's (x, y, z, w): w = 2
    with pytest.raises(ValueError, match=r"qp, Pinocchio's configuration: q of joint "
                                         r"'root_joint' .*not a unit quaternion.*norm 2"):
        interop.q_from_pin(model, pm, qp)
    # within round-off of unit, both directions convert and agree
    near = q.copy()
    near[3:7] = [1.0 + 1e-12, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(interop.q_from_pin(model, pm, interop.q_to_pin(model, pm, near)),
                                  near)


def test_unbounded_revolute_pair_must_be_unit():
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelRUBX(), pin.SE3.Identity(), "wheel")
    model = interop.from_pinocchio(pm)
    assert model.nq == 1 and pm.nq == 2
    with pytest.raises(ValueError, match=r"qp of joint 'wheel' \(Pinocchio's unbounded "
                                         r"revolute, \(cos θ, sin θ\)\) is not a unit vector: "
                                         r"norm 0.5"):
        interop.q_from_pin(model, pm, np.array([0.5, 0.0]))


def test_se3_from_X():
    rng = np.random.default_rng(4)
    R, p = rbd.spatial.exp_so3(rng.normal(size=3)), rng.normal(size=3)
    X = plux(R.T, p)                                  # ᴮX_A for B at (R, p) in A
    M = interop.se3_from_X(X)                         # ᴬM_B
    np.testing.assert_allclose(M.rotation, R, atol=1e-15)
    np.testing.assert_allclose(M.translation, p, atol=1e-15)
    # ᴬM_B acts on motions from B to A: the inverse of X, in Pinocchio's order
    np.testing.assert_allclose(M.toActionMatrix(), to_linear_angular(inv_X(X), operator=True),
                               atol=1e-13)


def continuous_pair():
    """Our one-revolute arm and a hand-built Pinocchio twin using a continuous joint
    (JointModelRUBX, nq = 2: cos θ, sin θ) with the same joint name."""
    I = mcI(1.5, np.array([0.0, 0.4, 0.1]), np.diag([0.05, 0.02, 0.04]))
    Xtree = plux(rotx(0.2).T, [0.1, 0.0, 0.3])
    model = rbd.Model(parent=[-1, 0], joints=[None, Revolute([1, 0, 0])], Xtree=[None, Xtree],
                      I=[None, I], names=["base", "spin"], body_names=["world", "wheel"])
    pm = pin.Model()
    jid = pm.addJoint(0, pin.JointModelRUBX(), interop.se3_from_X(Xtree), "spin")
    pm.appendBodyToJoint(jid, interop.inertia_to_pin(I), pin.SE3.Identity())
    pm.addFrame(pin.Frame("wheel", jid, pin.SE3.Identity(), pin.FrameType.BODY))
    return model, pm


def test_continuous_joint_conversion():
    model, pm = continuous_pair()
    assert (pm.nq, pm.nv) == (2, 1)
    for th in (0.0, 0.3, -2.9, 3.1):
        qp = interop.q_to_pin(model, pm, [th])
        np.testing.assert_allclose(qp, [np.cos(th), np.sin(th)], atol=1e-15)
        np.testing.assert_allclose(interop.q_from_pin(model, pm, qp), [th], atol=1e-15)
    # an angle outside (−π, π] comes back wrapped
    np.testing.assert_allclose(interop.q_from_pin(model, pm, interop.q_to_pin(model, pm, [4.0])),
                               [4.0 - 2 * np.pi], atol=1e-14)
    # the dynamics agree through the conversion
    pd = pm.createData()
    q, qd, qdd = np.array([0.8]), np.array([1.5]), np.array([-0.7])
    tau = pin.rnea(pm, pd, interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
                   interop.v_to_pin(model, pm, qdd))
    np.testing.assert_allclose(interop.v_from_pin(model, pm, tau), rbd.rnea(model, q, qd, qdd),
                               rtol=1e-12)


def test_mismatched_pinocchio_models_are_rejected():
    model, pm = continuous_pair()
    other = rbd.Model(parent=[-1, 0], joints=[None, Revolute()], Xtree=[None, np.eye(6)],
                      I=[None, mcI(1.0, np.zeros(3), np.eye(3))], names=["base", "elbow"])
    with pytest.raises(ValueError, match="no joint named 'elbow'"):
        interop.q_to_pin(other, pm, [0.0])
    ball = rbd.Model(parent=[-1, 0], joints=[None, Spherical()], Xtree=[None, np.eye(6)],
                     I=[None, mcI(1.0, np.zeros(3), np.eye(3))], names=["base", "spin"])
    with pytest.raises(ValueError, match="joint 'spin': nv 3 here, 1 in Pinocchio"):
        interop.v_to_pin(ball, pm, np.zeros(3))


def test_force_from_pin():
    f = pin.Force(np.array([1.0, 2, 3]), np.array([4.0, 5, 6]))
    np.testing.assert_array_equal(interop.force_from_pin(f), [4, 5, 6, 1, 2, 3])


def test_to_pinocchio_orders_joints_depth_first_so_crba_agrees():
    """parent[i] < i does not make subtrees contiguous (here body 2's subtree is {2} and
    body 1's is {1, 3, 4, 5, 6}); Pinocchio's crba needs them contiguous."""
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    model = rbd.random_tree(6, seed=11, joint_types=("revolute", "prismatic"))
    assert model.parent == [-1, 0, 0, 1, 3, 4, 5]
    model = rbd.without_gravity(model)
    pm = interop.to_pinocchio(model)
    q = rbd.random_q(model, np.random.default_rng(0))
    H = interop.H_from_pin(model, pm, pin.crba(pm, pm.createData(),
                                               interop.q_to_pin(model, pm, q)))
    # our H by the unit-vector method
    H_ours = np.column_stack([rbd.rnea(model, q, np.zeros(model.nv), e)
                              for e in np.eye(model.nv)])
    np.testing.assert_allclose(H, H_ours, atol=1e-12 * np.abs(H_ours).max())


def test_H_from_pin_reorders_a_floating_base_and_reads_the_upper_triangle():
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    model = rbd.floating_base(rbd.random_tree(5, seed=2, joint_types=("revolute", "spherical")),
                              mcI(3.0, [0.1, 0.0, 0.0], np.diag([0.2, 0.3, 0.4])))
    pm = interop.to_pinocchio(model)
    q = rbd.random_q(model, np.random.default_rng(1))
    Hp = pin.crba(pm, pm.createData(), interop.q_to_pin(model, pm, q))
    H = rbd.crba(model, q)
    np.testing.assert_allclose(interop.H_from_pin(model, pm, Hp), H, atol=1e-12 * np.abs(H).max())
    np.testing.assert_array_equal(interop.H_from_pin(model, pm, np.triu(Hp)),
                                  interop.H_from_pin(model, pm, Hp))
    # the free joint's [linear; angular] block is swapped: Pinocchio's H differs from ours
    assert not np.allclose(Hp, H)


def test_massless_and_point_mass_bodies_convert():
    """A massless body (as in human, romeo, the bravo7 grippers) and point masses (icub)
    convert to Pinocchio, and the dynamics agree."""
    model = rbd.random_tree(5, seed=2)
    I = list(model.I)
    I[3] = np.zeros((6, 6))                                              # massless
    I[4] = mcI(0.7, np.array([0.3, -0.2, 0.9]), np.zeros((3, 3)))        # a point mass
    I[5] = mcI(1e-9, np.array([0.11, 0.37, -0.53]), np.zeros((3, 3)))    # a tiny one
    model = model.replace(I=I)
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(1)
    q, qd, qdd = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd)
    tau_pin = pin.rnea(pm, pd, qp, vp, interop.v_to_pin(model, pm, qdd))
    np.testing.assert_allclose(interop.v_to_pin(model, pm, rbd.rnea(model, q, qd, qdd)),
                               tau_pin, atol=1e-12)
    np.testing.assert_allclose(rbd.crba(model, q),
                               interop.H_from_pin(model, pm, pin.crba(pm, pd, qp)), atol=1e-12)


@pytest.mark.parametrize("floating", [False, True])
def test_from_pinocchio_round_trip(floating):
    """rbdlearn → Pinocchio → rbdlearn gives a model with the same dynamics."""
    model = rbd.random_tree(9, seed=5)            # revolute, prismatic, spherical, ZYX, ...
    if floating:
        model = rbd.floating_base(model, mcI(2.0, np.zeros(3), np.diag([0.1, 0.2, 0.3])))
    pm = interop.to_pinocchio(model)
    back = interop.from_pinocchio(pm)
    rng = np.random.default_rng(2)
    q, qd, qdd = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    # the round trip may renumber bodies (Pinocchio's depth-first order): convert by name
    qb = interop.q_from_pin(back, pm, interop.q_to_pin(model, pm, q))
    qdb = interop.v_from_pin(back, pm, interop.v_to_pin(model, pm, qd))
    qddb = interop.v_from_pin(back, pm, interop.v_to_pin(model, pm, qdd))
    tau = interop.v_to_pin(model, pm, rbd.rnea(model, q, qd, qdd))
    np.testing.assert_allclose(interop.v_to_pin(back, pm, rbd.rnea(back, qb, qdb, qddb)), tau,
                               atol=1e-11)


@pytest.mark.parametrize("robot", ["ur_description/urdf/ur5_robot.urdf",
                                   "talos_data/robots/talos_reduced.urdf",
                                   "romeo_description/urdf/romeo_small.urdf"])
def test_from_pinocchio_of_a_urdf_model_matches_pinocchio(robot):
    """A model Pinocchio built from a URDF (its own joint types: RX, RZ, ...), brought
    over, gives Pinocchio's RNEA, ABA and CRBA; romeo_small, whose arm links are not
    physical rigid bodies, only with physical=False."""
    from rbdlearn.urdf import example_robot_path
    pm = pin.buildModelFromUrdf(example_robot_path(robot), pin.JointModelFreeFlyer())
    pd = pm.createData()
    physical = "romeo" not in robot
    if not physical:
        with pytest.raises(ValueError, match="joint 'RShoulderYaw'.*physical=False accepts"):
            interop.from_pinocchio(pm)
    model = interop.from_pinocchio(pm, physical=physical)
    assert model.nv == pm.nv and model.names[1:] == list(pm.names)[1:]
    rng = np.random.default_rng(3)
    q, qd, x = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    qp, vp, xp = (interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
                  interop.v_to_pin(model, pm, x))
    np.testing.assert_allclose(interop.v_to_pin(model, pm, rbd.rnea(model, q, qd, x)),
                               pin.rnea(pm, pd, qp, vp, xp), atol=1e-10)
    np.testing.assert_allclose(interop.v_to_pin(model, pm, rbd.aba(model, q, qd, x)),
                               pin.aba(pm, pd, qp, vp, xp), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(rbd.crba(model, q),
                               interop.H_from_pin(model, pm, pin.crba(pm, pd, qp)), atol=1e-10)


def test_from_pinocchio_names_an_unsupported_joint():
    pm = pin.Model()
    j = pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "shoulder")
    pm.addJoint(j, pin.JointModelPlanar(), pin.SE3.Identity(), "table")
    with pytest.raises(ValueError, match=r"joint 'table' is a Pinocchio JointModelPlanar"):
        interop.from_pinocchio(pm)
