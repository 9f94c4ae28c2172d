"""CRBA (rbdlearn.crb) against Pinocchio's crba, the unit-vector method and ABA; the
3-vector composite form, the unit-vector and Jacobian methods; operation counts."""


import numpy as np
import pytest

import rbdlearn as rbd
from conftest import URDF_ROBOTS, rel_err, random_state, urdf_pair
from rbdlearn import crb
from rbdlearn.spatial import inertia_params, mcI, plux, trig_zero

pin = pytest.importorskip("pinocchio")
from rbdlearn import interop  # noqa: E402

METHODS = [crb.crba, crb.crba_3vector, crb.unit_vector_method, crb.jacobian_method]


def pin_crba(model, pm, q):
    """Pinocchio's H (symmetrised) in rbdlearn's velocity layout."""
    return interop.H_from_pin(model, pm, pin.crba(pm, pm.createData(),
                                                  interop.q_to_pin(model, pm, q)))


def test_crba_matches_pinocchio(tree, assert_rel):
    model, pm = tree.model, tree.pm
    q, _, _ = random_state(model, 0)
    assert_rel(rbd.crba(model, q), pin_crba(model, pm, q), 1e-9, "H")


def test_crba_equals_unit_vector_method_and_is_spd(tree):
    model = tree.model
    q, qd, qdd = random_state(model, 1)
    H = rbd.crba(model, q)
    b = rbd.rnea(model, q, qd, np.zeros(model.nv))
    np.testing.assert_allclose(H @ qdd + b, rbd.rnea(model, q, qd, qdd),
                               atol=1e-9 * np.abs(b).max())
    # entry by entry, both triangles: the unit-vector method computes every column on its
    # own (round-off between the two: at most 2e-15 of max H on these 30-40-body trees)
    H_unit = crb.unit_vector_method(model, q)
    np.testing.assert_allclose(H, H_unit, rtol=0, atol=1e-12 * np.abs(H_unit).max())
    # its columns are independent RNEA runs, so their symmetry is a fact of mechanics
    # (Maxwell's reciprocity), not of the code: a wrong term in RNEA or in the model
    # would break it (crba fills one triangle and mirrors it, symmetric by construction)
    np.testing.assert_allclose(H_unit, H_unit.T, rtol=0, atol=1e-12 * np.abs(H_unit).max())
    # and the walk reaches only the joints on each path: H is zero across branches
    mask = crb.support_mask(model)
    assert np.all(H[~(mask | mask.T)] == 0) and np.all(np.abs(H_unit[~(mask | mask.T)])
                                                      < 1e-12 * np.abs(H_unit).max())
    assert np.linalg.eigvalsh(H).min() > 0


@pytest.mark.fp_sensitive
def test_forward_dynamics_crb_equals_aba(tree):
    model = tree.model
    q, qd, tau = random_state(model, 2)
    f_ext = [None] + [np.random.default_rng(i).normal(size=6) for i in range(1, model.N + 1)]
    expected = rbd.aba(model, q, qd, tau, f_ext)
    np.testing.assert_allclose(rbd.forward_dynamics_crb(model, q, qd, tau, f_ext), expected,
                               atol=1e-9 * np.abs(expected).max())


def test_bad_input():
    model = rbd.planar_chain(3)
    for f in METHODS + [crb.composite_3vector]:
        with pytest.raises(ValueError, match="q has shape"):
            f(model, np.zeros(2))
    with pytest.raises(ValueError, match="tau has shape"):
        rbd.forward_dynamics_crb(model, np.zeros(3), np.zeros(3), np.zeros(4))


# --- the other methods: equal to each other and to Pinocchio ---------------------------------

@pytest.mark.parametrize("method", METHODS[1:], ids=lambda f: f.__name__)
def test_methods_match_pinocchio(tree, method, assert_rel):
    model, pm = tree.model, tree.pm
    q, _, _ = random_state(model, 3)
    H = method(model, q)
    assert_rel(H, pin_crba(model, pm, q), 1e-9, method.__name__)
    assert_rel(H, rbd.crba(model, q), 1e-9, f"{method.__name__} vs crba")
    np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-12 * np.abs(H).max())
    assert np.linalg.eigvalsh((H + H.T) / 2).min() > 0




@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("relpath", URDF_ROBOTS, ids=[r.split("/")[-1] for r in URDF_ROBOTS])
def test_methods_match_pinocchio_on_urdfs(relpath, floating):
    model, pm, rng = urdf_pair(relpath, floating)
    q, qd, qdd = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    expected = pin_crba(model, pm, q)
    for method in METHODS:
        err = rel_err(method(model, q), expected)
        assert err <= 1e-9, f"{method.__name__}: relative error {err:.3g}"
    H = rbd.crba(model, q)
    b = rbd.rnea(model, q, qd, np.zeros(model.nv))
    assert rel_err(H @ qdd + b, rbd.rnea(model, q, qd, qdd)) <= 1e-9
    assert np.linalg.eigvalsh(H).min() > 0


def test_unit_vector_method_leaves_gravity_alone():
    model = rbd.planar_chain(3)
    g = model.gravity.copy()
    H = crb.unit_vector_method(model, np.array([0.3, -0.2, 0.5]))
    np.testing.assert_array_equal(model.gravity, g)
    assert np.abs(g).max() > 0
    np.testing.assert_allclose(H, rbd.crba(model, np.array([0.3, -0.2, 0.5])), atol=1e-12)


# --- composite bodies: the 3-vector recursion against direct sums ----------------------------

def test_composite_3vector_equals_direct_sums(tree):
    """Each composite's (m, c, Ic) against the spatial sum Σ_k ᵏX₀ᵀ I_k ᵏX₀ over its subtree
    (base coordinates); the root composite of a floating tree against Pinocchio's COM."""
    model, pm = tree.model, tree.pm
    q, _, _ = random_state(model, 4)
    C = crb.composite_3vector(model, q)
    X0 = rbd.forward_kinematics(model, q)
    for i in range(1, model.N + 1):
        m, c, Ic = inertia_params(sum(X0[k].T @ model.I[k] @ X0[k] for k in model.subtree(i)))
        assert abs(C.m[i] - m) <= 1e-12 * m
        np.testing.assert_allclose(C.c[i], c, atol=1e-10 * max(1.0, np.abs(c).max()))
        np.testing.assert_allclose(C.Ic[i], Ic, atol=1e-10 * np.abs(Ic).max())
    if tree.floating:                          # body 1 carries the whole tree
        total = sum(model.I[k][5, 5] for k in range(1, model.N + 1))
        assert abs(C.m[1] - total) <= 1e-12 * total
        com = pin.centerOfMass(pm, pm.createData(), interop.q_to_pin(model, pm, q))
        np.testing.assert_allclose(C.c[1], com, atol=1e-10)


def test_composite_of_a_two_body_chain_by_hand():
    """Two point-like bodies on a line: m = 3, COM at the weighted mean, Ic = Σ m d²."""
    I1 = mcI(1.0, np.zeros(3), np.zeros((3, 3)))
    I2 = mcI(2.0, np.zeros(3), np.zeros((3, 3)))
    model = rbd.Model(parent=[-1, 0, 1], joints=[None, rbd.Prismatic([1.0, 0, 0]),
                                                  rbd.Prismatic([1.0, 0, 0])],
                      Xtree=[None, np.eye(6), plux(np.eye(3), [3.0, 0, 0])], I=[None, I1, I2])
    C = crb.composite_3vector(model, np.array([1.0, 0.0]))      # bodies at x = 1 and x = 4
    assert C.m[1] == 3.0 and C.m[2] == 2.0
    np.testing.assert_allclose(C.c[1], [3.0, 0, 0])
    np.testing.assert_allclose(C.Ic[1], np.diag([0.0, 6.0, 6.0]))   # 1·2² + 2·1²


# --- operation counts ---------------------------------------------------------------------

def star(n):
    """n revolute bodies all hinged to the base: H is diagonal, every path has length 1."""
    return rbd.Model(parent=[-1] + [0] * n, joints=[None] + [rbd.Revolute()] * n,
                     Xtree=[None] + [plux(np.eye(3), [0.1 * k, 0, 0]) for k in range(n)],
                     I=[None] + [mcI(1.0, np.array([0, 0.1, 0]), np.eye(3) * 0.01)] * n)


def test_operation_counts_grow_as_expected():
    count = {n: crb.operation_counts(rbd.planar_chain(n)) for n in (32, 64, 128)}
    growth = {k: count[128][k] / count[64][k] for k in count[32]}
    assert 2.0 < growth["crba"] < 4.0                 # O(N) pass plus an O(N²) fill
    assert 3.8 < growth["unit_vector_method"] < 4.05  # nv RNEA passes of O(N): O(N²)
    assert 4.0 < growth["jacobian_method"] < 8.0      # O(N²) kinematics plus O(N·nv²)
    for n in count:                                   # the ordering the source reports
        assert count[n]["crba"] < count[n]["unit_vector_method"] < count[n]["jacobian_method"]
    # a star has depth 1: CRBA is exactly linear there, the unit-vector method is not
    s64, s128 = crb.operation_counts(star(64)), crb.operation_counts(star(128))
    assert s128["crba"] == 2 * s64["crba"]
    assert s128["unit_vector_method"] > 3.8 * s64["unit_vector_method"]


def test_forward_dynamics_crb_count_and_its_growth_against_aba():
    from rbdlearn.articulated import aba_flops
    from rbdlearn.inverse_dynamics import rnea_flops
    for n in (1, 5, 30):
        model = rbd.random_tree(n, seed=n, joint_types=("revolute", "spherical"))
        c, nv = crb.operation_counts(model), model.nv
        # b by RNEA, H by CRBA, τ − b, H = LᵀL, the two triangular solves
        assert c["forward_dynamics_crb"] == rnea_flops(model) + c["crba"] + nv + c["ltl"] \
            + c["ltl_solve"]
    fd = {n: crb.operation_counts(rbd.planar_chain(n))["forward_dynamics_crb"]
          for n in (16, 32, 64, 128)}
    aba = {n: aba_flops(rbd.planar_chain(n)) for n in fd}
    assert 1.99 < aba[128] / aba[64] < 2.01                    # linear
    assert fd[128] / fd[64] > 4 > fd[32] / fd[16] > 2          # the cubic term takes over
    ratio = [fd[n] / aba[n] for n in fd]
    assert all(np.diff(ratio) > 0) and ratio[-1] > 4


class Counted(float):
    """A number that counts the arithmetic done on it (one flop per +, −, ×, /), for
    counting the work of a run of the code, not of its cost model."""
    flops = 0

    def _op(f):
        def op(a, b):
            if not isinstance(b, (int, float)):
                return NotImplemented                  # an array: numpy goes entry by entry
            Counted.flops += 1
            return Counted(f(float(a), float(b)))
        return op

    __add__, __radd__ = _op(lambda a, b: a + b), _op(lambda a, b: b + a)
    __sub__, __rsub__ = _op(lambda a, b: a - b), _op(lambda a, b: b - a)
    __mul__, __rmul__ = _op(lambda a, b: a * b), _op(lambda a, b: b * a)
    __truediv__, __rtruediv__ = _op(lambda a, b: a / b), _op(lambda a, b: b / a)


def counted(a):
    return np.vectorize(Counted, otypes=[object])(np.asarray(a, dtype=float))


def count(f, *args):
    Counted.flops = 0
    result = f(*args)
    return Counted.flops, result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_operation_counts_count_the_work_crba_and_ltl_do(seed):
    """Run crba, ltl and ltl_solve on numbers that count every operation done on them:
    the counts of operation_counts are the operations of the code (the cost model is not
    checked against itself). Every joint type; a tree, so that the walks stop early."""
    model = rbd.random_tree(9, seed=seed, p_chain=0.4,
                            joint_types=("revolute", "prismatic", "spherical", "free", "fixed",
                                         "spherical_zyx"))
    q = rbd.random_q(model, seed)
    c = crb.operation_counts(model)
    # the inertias count; the transforms Xup = XJ Xtree and ⁱX₀ (2 N 6x6 products) and the
    # subspaces ⁰S_j (a 6x6 times S_j per joint), which the count includes, come from q in
    # floats, so they are added by hand
    heavy = model.replace(I=[None] + [counted(I) for I in model.I[1:]])
    done, H = count(crb.crba, heavy, q)
    by_hand = 2 * model.N * 396 + sum(66 * j.nv for j in model.joints[1:])
    assert done + by_hand == c["crba"]
    np.testing.assert_allclose(np.asarray(H, dtype=float), crb.crba(model, q), atol=1e-12)
    # H = LᵀL: one square root per coordinate (math.sqrt, not seen by Counted) besides
    H = crb.crba(model, q)
    done, L = count(crb.ltl, model, counted(H))
    assert done + model.nv == c["ltl"]
    L = np.asarray(L, dtype=float)
    np.testing.assert_allclose(L.T @ L, H, atol=1e-12 * np.abs(H).max())
    across = ~(crb.support_mask(model) | crb.support_mask(model).T)   # other branches
    assert np.array_equal(L, np.tril(L)) and np.all(L[across] == 0)     # no fill-in
    assert np.all(H[across] == 0) and across.any()
    x = np.random.default_rng(seed).normal(size=model.nv)
    done, y = count(crb.ltl_solve, model, counted(L), counted(x))
    assert done == c["ltl_solve"]
    np.testing.assert_allclose(H @ np.asarray(y, dtype=float), x, atol=1e-10)
    # and the walk reaches fewer pairs than a dense H would have: the tree's zeros
    assert np.count_nonzero(H) < model.nv ** 2


def test_branching_makes_crba_cheaper():
    chain = rbd.random_tree(64, seed=0, joint_types=("revolute",), p_chain=1.0)
    tree = rbd.random_tree(64, seed=0, joint_types=("revolute",), p_chain=0.3)
    assert chain.parent == list(range(-1, 64)) and tree.parent != chain.parent
    c, t = crb.operation_counts(chain), crb.operation_counts(tree)
    assert t["crba"] < 0.9 * c["crba"]
    # the fill term is 11 flops per structurally non-zero entry of H's upper triangle
    fill = {m: crb.support_mask(m).sum() * 11 for m in (chain, tree)}
    assert c["crba"] - t["crba"] >= fill[chain] - fill[tree] > 0
    # RNEA does not see the branching: the unit-vector method costs about the same
    assert abs(t["unit_vector_method"] / c["unit_vector_method"] - 1) < 0.05


@pytest.mark.parametrize("method", [crb.unit_vector_method, rbd.crba])
def test_symbolic_two_link_matrix_is_the_textbook_one(method):
    """Symbolic 2-link planar arm: the classical H (e.g. Spong, Hutchinson & Vidyasagar),
    by the unit-vector method and by CRBA on sympy object arrays."""
    import sympy as sp
    q1, q2, l1, l2, m1, m2, I1, I2 = sp.symbols("q1 q2 l1 l2 m1 m2 I1 I2", real=True)
    model = rbd.planar_chain(2, length=[l1, l2], mass=[m1, m2], inertia=[I1, I2])
    H = sp.Matrix(method(model, np.array([q1, q2], dtype=object)))
    c1, c2 = l1 / 2, l2 / 2                               # COMs at the middle of each link
    H12 = I2 + m2 * (c2**2 + l1 * c2 * sp.cos(q2))
    expected = sp.Matrix([[I1 + I2 + m1 * c1**2 + m2 * (l1**2 + c2**2 + 2 * l1 * c2 * sp.cos(q2)),
                           H12], [H12, I2 + m2 * c2**2]])
    assert trig_zero(H - expected, [q1, q2])          # an identity in sin, cos (exactly)


@pytest.mark.fp_sensitive
def test_singular_H_is_reported_by_joint():
    """A last link without mass: H is singular; the error names the joint (the bare
    LinAlgError of Cholesky said nothing), as the ABA's does."""
    model = rbd.planar_chain(3, mass=[1.0, 1.0, 0.0], inertia=[0.1, 0.1, 0.0])
    zero = np.zeros(3)
    with pytest.raises(rbd.SingularMassMatrix, match=r"H is not positive definite: at v\[2\], a "
                                                  r"coordinate of joint 'joint3' \(body 3\)"):
        rbd.forward_dynamics_crb(model, zero, zero, zero)
    assert issubclass(rbd.SingularMassMatrix, rbd.SingularArticulatedInertia)
