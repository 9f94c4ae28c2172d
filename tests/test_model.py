"""The kinematic-tree model (rbdlearn.model): validation (BOOK_GUIDE §5), state checks,
pointer view, tree queries and the model builders."""

import dataclasses

import numpy as np
import pytest
import sympy

import rbdlearn as rbd
from rbdlearn.joints import Fixed, Free, Prismatic, Revolute, Spherical
from rbdlearn.model import check_forces, check_inertia, check_state
from rbdlearn.spatial import exp_so3, mcI, plux, rotx

ALL_JOINT_TYPES = (Revolute, Prismatic, Spherical, Free, Fixed)


def good_inertia(m=1.0):
    return mcI(m, np.array([0.1, 0.0, -0.1]), np.diag([0.02, 0.03, 0.04]))


def parts():
    """Keyword arguments of a valid 4-body model: base ─ 1 ─ 2, 1 ─ 3 ─ 4."""
    return dict(parent=[-1, 0, 1, 1, 3],
                joints=[None, Free(), Revolute([0, 0, 1]), Spherical(), Prismatic([1, 0, 0])],
                Xtree=[None] + [plux(rotx(0.1 * k), [0.1 * k, 0, 0]) for k in range(1, 5)],
                I=[None] + [good_inertia(k) for k in range(1, 5)],
                names=["base", "float", "elbow", "wrist", "slider"],
                body_names=["world", "torso", "arm", "hand", "finger"])


def build(**changes):
    kw = parts()
    kw.update(changes)
    return rbd.Model(**kw)


def replaced(name, i, value):
    lst = parts()[name]
    lst[i] = value
    return {name: lst}


def test_valid_model_attributes():
    m = build()
    assert (m.N, m.nq, m.nv) == (4, 7 + 1 + 4 + 1, 6 + 1 + 3 + 1)
    assert m.q_index == [0, 0, 7, 8, 12]
    assert m.v_index == [0, 0, 6, 7, 10]
    assert m.q_slices[3] == slice(8, 12) and m.v_slices[3] == slice(7, 10)
    assert m.parent == [-1, 0, 1, 1, 3]
    np.testing.assert_array_equal(m.gravity, [0, 0, 0, 0, 0, -9.81])
    assert m.manifold_bodies == [1, 3]


# --- model validation (BOOK_GUIDE §5) ------------------------------------------------------

@pytest.mark.parametrize("parent, match", [
    ([-1, 0, 2, 1, 3], r"body 2 \(joint 'elbow'\): parent 2 is not in 0..1"),
    ([-1, 0, 1, 4, 3], r"body 3 \(joint 'wrist'\): parent 4"),
    ([-1, 0, 1, 1, -1], r"body 4 \(joint 'slider'\): parent -1"),
    ([-1, 0, 1, 1, 7], r"body 4 \(joint 'slider'\): parent 7"),
])
def test_not_a_tree_or_wrong_numbering(parent, match):
    with pytest.raises(ValueError, match=match):
        build(parent=parent)


@pytest.mark.parametrize("attr", ["joints", "Xtree", "I", "names", "body_names"])
def test_wrong_list_lengths(attr):
    short = parts()[attr][:-1]
    with pytest.raises(ValueError, match=rf"model.{attr} has length 4, expected N \+ 1 = 5"):
        build(**{attr: short})


def test_empty_parent_array():
    with pytest.raises(ValueError, match="parent array"):
        rbd.Model(parent=[], joints=[], Xtree=[], I=[])


def test_negative_mass():
    with pytest.raises(ValueError, match=r"body 3 \(joint 'wrist'\): negative mass -2"):
        build(**replaced("I", 3, mcI(-2.0, np.zeros(3), np.diag([0.1, 0.1, 0.1]))))


def test_non_symmetric_inertia():
    I = good_inertia()
    I[0, 1] += 0.01
    with pytest.raises(ValueError, match=r"joint 'elbow'.*not symmetric"):
        build(**replaced("I", 2, I))


def test_non_psd_rotational_inertia():
    with pytest.raises(ValueError, match=r"joint 'slider'.*not positive semi-definite"):
        build(**replaced("I", 4, mcI(1.0, np.zeros(3), np.diag([-0.1, 0.2, 0.2]))))
    # PSD at the origin is not enough: Ic = I_O − m c× c×ᵀ must be PSD
    I = mcI(1.0, np.zeros(3), np.diag([0.01, 0.01, 0.01]))
    I[3:, :3] = rbd.spatial.skew([0, 0, 1.0]).T          # m c× with c = (0, 0, 1) ...
    I[:3, 3:] = rbd.spatial.skew([0, 0, 1.0])            # ... but no c× c×ᵀ in the top left
    with pytest.raises(ValueError, match=r"joint 'slider'.*not positive semi-definite"):
        build(**replaced("I", 4, I))


def test_triangle_inequality_violation():
    R = exp_so3([0.3, -0.2, 0.5])
    Ic = R @ np.diag([0.1, 0.2, 0.5]) @ R.T              # 0.1 + 0.2 < 0.5
    with pytest.raises(ValueError, match=r"joint 'elbow'.*triangle inequality"):
        build(**replaced("I", 2, mcI(1.0, np.array([0.1, 0.2, 0.3]), Ic)))
    # the limiting case (a thin rod) is physical
    build(**replaced("I", 2, mcI(1.0, np.zeros(3), np.diag([0.0, 0.1, 0.1]))))


def test_physical_false_accepts_unrealisable_inertias_only():
    """Some published models have them (Pinocchio accepts them); the structure of a
    spatial inertia is still checked, and the flag travels with the model."""
    bad = mcI(1.0, np.array([0.1, 0.2, 0.3]), np.diag([0.1, 0.2, 0.5]))   # 0.1 + 0.2 < 0.5
    with pytest.raises(ValueError, match=r"triangle inequality.*physical=False accepts it"):
        build(**replaced("I", 2, bad))
    model = build(**replaced("I", 2, bad), physical=False)
    assert np.array_equal(model.I[2], bad) and "physical=False" in repr(model)
    assert "physical" not in repr(build())
    assert not model.replace(gravity=np.zeros(6)).physical
    assert not rbd.floating_base(model, good_inertia()).physical
    with pytest.raises(ValueError, match="negative mass"):
        build(**replaced("I", 2, -bad), physical=False)
    with pytest.raises(ValueError, match="model.physical must be True or False, got 0"):
        build(physical=0)


@pytest.mark.parametrize("bad, match", [
    (np.full((6, 6), np.nan), "NaN"),
    (np.eye(5), "6x6"),
    (None, "6x6"),
])
def test_malformed_inertia(bad, match):
    with pytest.raises(ValueError, match=rf"joint 'wrist'.*{match}"):
        build(**replaced("I", 3, bad))


def test_inertia_with_wrong_structure():
    I = good_inertia(2.0)
    I[3, 3] = 3.0                                         # lower right must be m·1
    with pytest.raises(ValueError, match="lower-right block"):
        check_inertia(I, "body x")
    I = good_inertia(2.0)
    I[0, 3] += 0.5
    I[3, 0] += 0.5                                        # symmetric, but not m c×
    with pytest.raises(ValueError, match="body x.*upper-right block"):
        check_inertia(I, "body x")
    I = np.zeros((6, 6))
    I[:3, 3:] = rbd.spatial.skew([1.0, 0, 0])
    I[3:, :3] = I[:3, 3:].T
    with pytest.raises(ValueError, match="massless body"):
        check_inertia(I, "body x")
    check_inertia(np.zeros((6, 6)), "massless")           # a massless body is allowed


@pytest.mark.parametrize("E", [np.diag([1.0, 1.0, -1.0]), 2 * np.eye(3),
                               np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]])],
                         ids=["reflection", "scaled", "sheared"])
def test_xtree_with_non_rotation_block(E):
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = E
    with pytest.raises(ValueError, match=r"body 2 \(joint 'elbow'\): Xtree's rotation block"):
        build(**replaced("Xtree", 2, X))


@pytest.mark.parametrize("where", ["upper right", "lower right", "lower left"])
def test_xtree_that_is_not_a_plucker_transform(where):
    """A rotation in the corner is not enough: the rest must be [E 0; −E r× E]."""
    X = plux(rotx(0.3), [0.1, 0.2, 0.3])
    block = {"upper right": (slice(0, 3), slice(3, 6)), "lower right": (slice(3, 6), slice(3, 6)),
             "lower left": (slice(3, 6), slice(0, 3))}[where]
    X[block] += np.diag([0.5, 0.0, 0.0])      # lower left: E·(not skew) instead of −E r×
    with pytest.raises(ValueError, match=r"body 2 \(joint 'elbow'\): Xtree is not a Plücker"):
        build(**replaced("Xtree", 2, X))


@pytest.mark.parametrize("parent", [[-1, 0, 1.9, 1, 3], [-1, 0, "1", 1, 3], [-1, 0, True, 1, 3]])
def test_parent_must_be_an_integer(parent):
    with pytest.raises(ValueError, match=r"body 2: parent must be an integer body index"):
        build(parent=parent)


def test_xtree_wrong_shape():
    with pytest.raises(ValueError, match=r"joint 'wrist'.*Xtree must be 6x6"):
        build(**replaced("Xtree", 3, np.eye(3)))


@pytest.mark.parametrize("joint", ["revolute", object(), None, Revolute],
                         ids=["string", "object", "None", "class"])
def test_unknown_joint_object(joint):
    with pytest.raises(ValueError, match=r"body 2 \(joint 'elbow'\): unknown joint type"):
        build(**replaced("joints", 2, joint))


def test_duplicate_joint_names():
    with pytest.raises(ValueError, match=r"model.names: duplicate names \['elbow'\]"):
        build(names=["base", "float", "elbow", "elbow", "slider"])


def test_duplicate_body_names():
    with pytest.raises(ValueError, match=r"model.body_names: duplicate names \['arm'\]"):
        build(body_names=["world", "torso", "arm", "arm", "finger"])


def test_bad_gravity():
    with pytest.raises(ValueError, match="gravity"):
        build(gravity=np.array([0.0, 0.0, -9.81]))


@pytest.mark.parametrize("bad", [np.nan, -np.inf, np.inf])
def test_gravity_must_be_finite(bad):
    """A NaN or infinite gravity made rnea and aba return NaN."""
    g = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -9.81])
    g[5] = bad
    with pytest.raises(ValueError, match=r"model.gravity must be finite, got \[.*(nan|inf)"):
        build(gravity=g)
    with pytest.raises(ValueError, match=r"model.gravity must be finite"):
        build().replace(gravity=np.full(6, bad))


def test_gravity_must_be_real():
    """A complex gravity lost its imaginary part silently."""
    with pytest.raises(ValueError, match=r"model.gravity must hold real numbers, got dtype "
                                         r"complex"):
        build().replace(gravity=np.array([0, 0, 0, 0, 0, -9.81 + 1j]))
    with pytest.raises(ValueError, match=r"model.gravity must hold real numbers"):
        build(gravity=["0", "0", "0", "0", "0", "-9.81"])


@pytest.mark.parametrize("attr", ["names", "body_names"])
def test_names_must_be_strings(attr):
    names = list(parts()[attr])
    names[2] = 7
    with pytest.raises(TypeError, match=rf"model.{attr}\[2\] must be a string, got int 7"):
        build().replace(**{attr: names})
    with pytest.raises(ValueError, match=rf"model.{attr}\[2\]"):     # and a ValueError too
        build(**{attr: names})


def test_a_huge_mass_is_checked_without_overflow():
    """m = 1e300 at 0.4 m: the check formed (m c)² = inf and ended in 'Eigenvalues did not
    converge'. The inertia itself is finite, and the algorithms run on it."""
    c = np.array([0.1, 0.2, 0.3])
    with np.errstate(over="raise", invalid="raise"):
        check_inertia(mcI(1e300, c, np.diag([1e299, 2e299, 2.5e299])), "body")
        with pytest.raises(ValueError, match="body: rotational inertia about the COM is "
                                             "not positive semi-definite"):
            check_inertia(mcI(1e300, c, np.diag([-1e299, 2e299, 2.5e299])), "body")
    chain = rbd.planar_chain(3)
    m = chain.replace(I=[None, chain.I[1], mcI(1e300, c, np.eye(3)), chain.I[3]])
    q, qd = np.array([0.3, 0.2, 0.1]), np.ones(3)
    assert np.all(np.isfinite(rbd.rnea(m, q, qd, qd)))
    assert np.all(np.isfinite(rbd.aba(m, q, qd, qd)))


def test_default_names():
    kw = parts()
    del kw["names"], kw["body_names"]
    m = rbd.Model(**kw)
    assert m.names == ["base", "joint1", "joint2", "joint3", "joint4"]
    assert m.body_names == ["base", "body1", "body2", "body3", "body4"]


# --- check_state / check_forces --------------------------------------------------------------

@pytest.fixture
def model():
    return build()


def valid_state(m):
    return rbd.neutral_q(m), np.zeros(m.nv), np.zeros(m.nv)


@pytest.mark.parametrize("which", ["q", "qd", "qdd"])
@pytest.mark.parametrize("delta", [-1, 1])
def test_check_state_wrong_length(model, which, delta):
    state = dict(zip(["q", "qd", "qdd"], valid_state(model)))
    n = len(state[which]) + delta
    state[which] = np.zeros(n)
    want = model.nq if which == "q" else model.nv
    with pytest.raises(ValueError, match=rf"{which} has shape \({n},\), expected \({want},\)"):
        check_state(model, **state)
    with pytest.raises(ValueError, match=rf"{which} has shape"):
        rbd.rnea(model, state["q"], state["qd"], state["qdd"])


def test_check_state_2d_input(model):
    with pytest.raises(ValueError, match=r"qd has shape \(1, 11\)"):
        check_state(model, qd=np.zeros((1, model.nv)))


@pytest.mark.parametrize("which", ["q", "qd", "qdd"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_check_state_nan(model, which, bad):
    state = dict(zip(["q", "qd", "qdd"], valid_state(model)))
    state[which][7] = bad                                  # q[7] is the revolute angle
    with pytest.raises(ValueError, match=rf"{which}\[7\] is {bad}"):
        check_state(model, **state)
    with pytest.raises(ValueError, match=rf"{which}\[7\]"):
        rbd.body_accelerations(model, state["q"], state["qd"], state["qdd"])


def test_check_state_non_unit_quaternion(model):
    q = rbd.neutral_q(model)
    q[8:12] = [1.0, 0.1, 0.0, 0.0]                         # the wrist's quaternion
    with pytest.raises(ValueError, match=r"q of joint 'wrist' is not a unit quaternion"):
        check_state(model, q=q)
    q = rbd.neutral_q(model)
    q[3:7] = [0.5, 0.5, 0.5, 0.0]                          # the floating joint's
    with pytest.raises(ValueError, match=r"q of joint 'float' \(free joint quaternion\)"):
        check_state(model, q=q)


@pytest.mark.parametrize("bad", [["a"] * 13, [None] * 13, [1j] * 13, [True] * 13,
                                 [{}] + [0.0] * 12, "abcdefghijklm"],
                         ids=["str", "None", "complex", "bool", "dict", "string"])
def test_check_state_non_numeric(model, bad):
    with pytest.raises(ValueError, match="q must hold real numbers"):
        check_state(model, q=bad)
    with pytest.raises(ValueError, match="q must hold real numbers"):
        rbd.forward_kinematics(model, bad)


def test_check_state_accepts_lists_ints_and_sympy(model):
    q, qd = check_state(model, q=list(rbd.neutral_q(model)), qd=[0] * model.nv)
    assert q.dtype == float and qd.dtype == float
    qd_sym = np.array(sympy.symbols(f"u0:{model.nv}"), dtype=object)
    (out,) = check_state(model, qd=qd_sym)
    assert out.dtype == object


def test_check_state_returns_in_order(model):
    q, qd, qdd = valid_state(model)
    qdd = qdd + 2.0
    out = check_state(model, q=q, qd=qd, qdd=qdd)
    np.testing.assert_array_equal(out[0], q)
    np.testing.assert_array_equal(out[2], qdd)


def test_f_ext_checks(model):
    q, qd, qdd = valid_state(model)
    with pytest.raises(ValueError, match=r"f_ext has 4 entries, expected N \+ 1 = 5"):
        rbd.rnea(model, q, qd, qdd, f_ext=[np.zeros(6)] * 4)
    f = [np.zeros(6)] * 5
    f[2] = np.zeros(3)
    with pytest.raises(ValueError, match=r"f_ext\[2\] has shape \(3,\)"):
        rbd.rnea(model, q, qd, qdd, f_ext=f)
    f[2] = np.array([0, 0, np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match=r"f_ext\[2\] contains NaN"):
        rbd.rnea(model, q, qd, qdd, f_ext=f)
    f[2] = ["x"] * 6
    with pytest.raises(ValueError, match=r"f_ext\[2\] must hold real numbers"):
        rbd.rnea(model, q, qd, qdd, f_ext=f)
    with pytest.raises(ValueError, match=r"f_ext: body index must be an integer in 1..4 "
                                         r"\(or a name of model.body_names\), got int 5"):
        rbd.rnea(model, q, qd, qdd, f_ext={5: np.ones(6)})
    with pytest.raises(ValueError, match=r"f_ext: body index .* got int 0"):
        rbd.rnea(model, q, qd, qdd, f_ext={0: np.ones(6)})
    with pytest.raises(ValueError, match=r"f_ext\[3\] has shape \(6, 1\)"):
        rbd.rnea(model, q, qd, qdd, f_ext={3: np.ones((6, 1))})
    with pytest.raises(ValueError, match=r"f_ext names body 'elbow'.*joint of body 2, "
                                         r"'arm'.*bodies: \['torso', 'arm'"):
        rbd.rnea(model, q, qd, qdd, f_ext={"elbow": np.ones(6)})
    with pytest.raises(ValueError, match=r"f_ext names body 'world', which is not a body"):
        rbd.rnea(model, q, qd, qdd, f_ext={"world": np.ones(6)})
    with pytest.raises(ValueError, match=r"f_ext: body index .* got float 2.0"):
        rbd.rnea(model, q, qd, qdd, f_ext={2.0: np.ones(6)})


def test_f_ext_gives_each_body_once(model):
    """{2: f, 'arm': g} named body 2 twice and silently kept g."""
    q, qd, qdd = valid_state(model)
    for forward in (lambda f: rbd.rnea(model, q, qd, qdd, f_ext=f),
                    lambda f: rbd.aba(model, q, qd, qdd, f_ext=f)):
        with pytest.raises(ValueError, match=r"f_ext gives body 2 \('arm'\) twice, as 2 and "
                                             r"as 'arm'"):
            forward({2: np.ones(6), "arm": np.zeros(6)})


@pytest.mark.parametrize("bad", [0, 1.5, {1, 2}, {1, 2, 3, 4, 5}, "arm", np.float64(0.0),
                                 np.array(0.0)])
def test_f_ext_must_be_a_mapping_or_a_list(model, bad):
    """f_ext=0 or a set ended in a bare TypeError (no len, not subscriptable)."""
    q, qd, qdd = valid_state(model)
    with pytest.raises(TypeError, match=r"f_ext must be None, a mapping \{body: spatial force\} "
                                        r".* or a list of N \+ 1 = 5 spatial forces, got "):
        rbd.rnea(model, q, qd, qdd, f_ext=bad)
    with pytest.raises(ValueError, match=r"f_ext must be None, a mapping"):
        check_forces(model, bad)


def test_check_forces_dict_and_list_agree(model):
    f = check_forces(model, {3: np.arange(6.0)})
    assert len(f) == 5
    np.testing.assert_array_equal(f[3], np.arange(6.0))
    by_name = check_forces(model, {model.body_names[3]: np.arange(6.0)})
    for a, b in zip(f, by_name):
        np.testing.assert_array_equal(a, b)
    assert all(not fi.any() for k, fi in enumerate(f) if k != 3)
    f2 = check_forces(model, [None, None, None, np.arange(6.0), None])
    for a, b in zip(f, f2):
        np.testing.assert_array_equal(a, b)
    assert check_forces(model, None) is None


# --- pointers, subtree, ancestors --------------------------------------------------------------

def hand_tree():
    #        0
    #       / \
    #      1   5
    #     / \
    #    2   3
    #    |   |
    #    4   6
    parent = [-1, 0, 1, 1, 2, 0, 3]
    n = len(parent) - 1
    return rbd.Model(parent=parent, joints=[None] + [Revolute() for _ in range(n)],
                     Xtree=[None] + [np.eye(6)] * n, I=[None] + [good_inertia()] * n)


def test_pointers_on_a_hand_built_tree():
    p = rbd.pointers(hand_tree())
    assert p.parent == [-1, 0, 1, 1, 2, 0, 3]
    assert p.child == [1, 2, 4, 6, -1, -1, -1]
    assert p.brother == [-1, 5, 3, -1, -1, -1, -1]


def test_subtree_and_ancestors_on_a_hand_built_tree():
    m = hand_tree()
    assert m.subtree(1) == [1, 2, 3, 4, 6]
    assert m.subtree(3) == [3, 6]
    assert m.subtree(5) == [5]
    assert m.ancestors(6) == [6, 3, 1]
    assert m.ancestors(4) == [4, 2, 1]
    assert m.ancestors(5) == [5]


@pytest.mark.parametrize("seed", range(8))
def test_pointers_visit_every_body_once(seed):
    m = rbd.random_tree(25, seed=seed, p_chain=0.3 + 0.1 * (seed % 4))
    p = rbd.pointers(m)
    visited = []

    def walk(i):                       # depth first through child / brother pointers
        k = p.child[i]
        while k != -1:
            assert p.parent[k] == i
            visited.append(k)
            walk(k)
            k = p.brother[k]

    walk(0)
    assert sorted(visited) == list(range(1, m.N + 1))
    assert len(visited) == m.N
    # siblings are listed in increasing order
    for i in range(m.N + 1):
        k = p.child[i]
        while k != -1 and p.brother[k] != -1:
            assert p.brother[k] > k
            k = p.brother[k]


@pytest.mark.parametrize("seed", range(4))
def test_subtree_and_ancestors_are_dual(seed):
    m = rbd.random_tree(20, seed=seed)
    for k in range(1, m.N + 1):
        sub = m.subtree(k)
        assert sub == sorted(sub) and sub[0] == k
        for i in range(1, m.N + 1):
            assert (i in sub) == (k in m.ancestors(i))
        anc = m.ancestors(k)
        assert anc[0] == k and m.parent[anc[-1]] == 0
        assert all(m.parent[a] == b for a, b in zip(anc, anc[1:]))


# --- builders ---------------------------------------------------------------------------------

def test_planar_chain_attributes():
    m = rbd.planar_chain(3, length=[1.0, 0.5, 2.0], mass=[2.0, 1.0, 3.0])
    assert (m.N, m.nq, m.nv) == (3, 3, 3)
    assert m.parent == [-1, 0, 1, 2]
    assert m.names == ["base", "joint1", "joint2", "joint3"]
    assert m.body_names == ["base", "link1", "link2", "link3"]
    for i, (L, mass, prev) in enumerate(zip([1.0, 0.5, 2.0], [2.0, 1.0, 3.0],
                                            [0.0, 1.0, 0.5]), start=1):
        assert isinstance(m.joints[i], Revolute)
        np.testing.assert_array_equal(m.joints[i].axis, [1, 0, 0])
        np.testing.assert_allclose(m.Xtree[i], plux(np.eye(3), [0, prev, 0]))
        mi, c, Ic = rbd.spatial.inertia_params(m.I[i])
        assert mi == mass
        np.testing.assert_allclose(c, [0, L / 2, 0])
        np.testing.assert_allclose(Ic, np.diag([mass * L**2 / 12, 0, mass * L**2 / 12]))
    # the tip of link 3 at q = 0 is at y = 3.5; with q1 = π/2 the arm points along +z
    X0 = rbd.forward_kinematics(m, [np.pi / 2, 0, 0])
    R, p = rbd.body_pose(X0[3])
    np.testing.assert_allclose(p + R @ [0, 2.0, 0], [0, 0, 3.5], atol=1e-12)


def test_planar_chain_scalar_params_and_bad_input():
    m = rbd.planar_chain(4)
    assert m.N == 4 and all(rbd.spatial.inertia_params(m.I[i])[0] == 1.0 for i in range(1, 5))
    with pytest.raises(ValueError, match="n >= 1"):
        rbd.planar_chain(0)
    with pytest.raises(ValueError, match="length has 2 entries, expected 3"):
        rbd.planar_chain(3, length=[1.0, 1.0])
    with pytest.raises(ValueError, match="negative mass"):
        rbd.planar_chain(2, mass=[1.0, -1.0])


def joint_kinds(model):
    return [type(j) for j in model.joints[1:]]


@pytest.mark.parametrize("n", [5, 6, 9, 30])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_tree_contains_every_joint_type(n, seed):
    m = rbd.random_tree(n, seed=seed)
    assert m.N == n
    assert set(joint_kinds(m)) == set(ALL_JOINT_TYPES)
    assert all(0 <= m.parent[i] < i for i in range(1, n + 1))


def test_random_tree_is_reproducible():
    a, b = rbd.random_tree(12, seed=42), rbd.random_tree(12, seed=42)
    c = rbd.random_tree(12, seed=43)
    assert a.parent == b.parent and joint_kinds(a) == joint_kinds(b)
    for i in range(1, 13):
        np.testing.assert_array_equal(a.Xtree[i], b.Xtree[i])
        np.testing.assert_array_equal(a.I[i], b.I[i])
        if hasattr(a.joints[i], "axis"):
            np.testing.assert_array_equal(a.joints[i].axis, b.joints[i].axis)
    assert not all(np.array_equal(a.Xtree[i], c.Xtree[i]) for i in range(1, 13))
    assert not all(np.array_equal(a.I[i], c.I[i]) for i in range(1, 13))


def test_random_tree_options_and_bad_input():
    m = rbd.random_tree(10, seed=0, joint_types=("revolute",))
    assert set(joint_kinds(m)) == {Revolute} and m.nq == m.nv == 10
    chain = rbd.random_tree(10, seed=0, p_chain=1.0)
    assert chain.parent == list(range(-1, 10))
    with pytest.raises(ValueError, match="unknown joint type 'hinge'"):
        rbd.random_tree(5, joint_types=("hinge",))
    with pytest.raises(ValueError, match="n >= 1"):
        rbd.random_tree(0)


def test_floating_base_structure():
    base = rbd.random_tree(8, seed=3)
    I0 = good_inertia(4.0)
    fb = rbd.floating_base(base, I0, name="root_joint", body_name="pelvis")
    assert (fb.N, fb.nq, fb.nv) == (base.N + 1, base.nq + 7, base.nv + 6)
    assert isinstance(fb.joints[1], Free) and fb.parent[1] == 0
    np.testing.assert_array_equal(fb.Xtree[1], np.eye(6))
    np.testing.assert_array_equal(fb.I[1], I0)
    assert fb.names == ["base", "root_joint"] + base.names[1:]
    assert fb.body_names == ["base", "pelvis"] + base.body_names[1:]
    for i in range(1, base.N + 1):
        want = 1 if base.parent[i] == 0 else base.parent[i] + 1
        assert fb.parent[i + 1] == want
        assert fb.joints[i + 1] is base.joints[i]
    assert fb.subtree(1) == list(range(1, fb.N + 1))
    # with the free joint at the identity, every body is where it was
    q = rbd.random_q(base, np.random.default_rng(0))
    X_base = rbd.forward_kinematics(base, q)
    X_fb = rbd.forward_kinematics(fb, np.concatenate([Free().neutral(), q]))
    for i in range(1, base.N + 1):
        np.testing.assert_allclose(X_fb[i + 1], X_base[i], atol=1e-12)


def test_floating_base_rejects_bad_inertia():
    with pytest.raises(ValueError, match="floating base body 'pelvis': negative mass"):
        rbd.floating_base(rbd.planar_chain(2), mcI(-1.0, np.zeros(3), np.eye(3)),
                          body_name="pelvis")


def test_neutral_random_and_integrate_q():
    m = build()
    q0 = rbd.neutral_q(m)
    np.testing.assert_array_equal(q0, [0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0])
    rng = np.random.default_rng(1)
    q = rbd.random_q(m, rng)
    check_state(m, q=q)                                   # valid: unit quaternions
    # a seed works as numpy's default_rng takes it, and gives that generator's draw
    np.testing.assert_array_equal(rbd.random_q(m, 1), q)
    for seed in (0, np.int64(0)):                          # 0 too (it is falsy)
        np.testing.assert_array_equal(rbd.random_q(m, seed),
                                      rbd.random_q(m, np.random.default_rng(0)))
    assert not np.array_equal(rbd.random_q(m, 2), q)
    v = rng.normal(size=m.nv)
    q1 = rbd.integrate_q(m, q, v)
    check_state(m, q=q1)
    assert q1[7] == pytest.approx(q[7] + v[6])            # revolute: plain addition
    assert q1[12] == pytest.approx(q[12] + v[10])         # prismatic
    with pytest.raises(ValueError, match="v has shape"):
        rbd.integrate_q(m, q, v[:-1])


# --- a model is a value ----------------------------------------------------------------------

def test_a_model_does_not_change_after_it_is_built():
    kw = parts()
    m = rbd.Model(**kw)
    H = rbd.crba(m, rbd.neutral_q(m))
    # editing what it was built from does not reach it
    kw["parent"][2] = 0
    kw["Xtree"][1][0, 0] = 5.0
    kw["I"][1][5, 5] = 100.0
    assert m.parent == [-1, 0, 1, 1, 3]
    np.testing.assert_array_equal(rbd.crba(m, rbd.neutral_q(m)), H)
    # and it cannot be edited in place: each attempt names what to do instead
    for edit in (lambda: m.parent.__setitem__(2, 0), lambda: m.joints.append(None),
                 lambda: m.names.__setitem__(1, "x")):
        with pytest.raises(TypeError, match=r"model.replace"):
            edit()
    for edit in (lambda: m.Xtree[1].__setitem__((0, 0), 2.0),
                 lambda: m.I[2].__imul__(2.0), lambda: m.gravity.__setitem__(5, 0.0)):
        with pytest.raises(ValueError, match="read-only"):
            edit()
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.gravity = np.zeros(6)
    np.testing.assert_array_equal(rbd.crba(m, rbd.neutral_q(m)), H)


def test_replace_and_without_gravity_make_new_checked_models():
    m = build()
    still = rbd.without_gravity(m)
    assert not np.any(still.gravity) and m.gravity[5] == -9.81
    assert rbd.without_gravity(m) is still                 # built once per model
    assert still.gravity.dtype == float and not still.gravity.flags.writeable
    assert still.parent == m.parent and still.joints[1] is m.joints[1]
    moved = m.replace(names=["base", "a", "b", "c", "d"])
    assert moved.names[1] == "a" and m.names[1] == "float"
    with pytest.raises(ValueError, match=r"parent 4"):
        m.replace(parent=[-1, 0, 1, 4, 3])


def test_repr_is_a_short_summary():
    text = repr(build())
    assert text.startswith("Model(N=4 bodies, nq=") and "joints:" in text
    assert "\n" not in text and len(text) < 200
