"""Forward dynamics (rbdlearn.articulated): against Pinocchio's ABA on random trees and on URDFs
(loaded by rbdlearn and, independently, by Pinocchio), against RNEA (ABA inverts it), the
inverse mass matrix column by column against the unit-vector method, and bad input."""


import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rbdlearn as rbd
from conftest import URDF_ROBOTS, rel_err, random_state, urdf_pair
from rbdlearn import interop
from rbdlearn.articulated import SingularArticulatedInertia, aba_flops
from rbdlearn.spatial import mcI

TOL = 1e-9


def random_forces(model, seed):
    rng = np.random.default_rng(seed + 700)
    return [None] + [rng.normal(size=6) for _ in range(model.N)]


def pin_aba(model, pm, q, qd, tau, f_ext=None):
    """Pinocchio's ABA on rbdlearn's inputs, the result in rbdlearn's layout."""
    args = [pm, pm.createData(), interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd),
            interop.v_to_pin(model, pm, tau)]
    if f_ext is not None:
        args.append(interop.fext_to_pin(model, pm, f_ext))
    return interop.v_from_pin(model, pm, pin.aba(*args))


# --- Pinocchio: random trees ------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1])
def test_aba_matches_pinocchio_on_random_trees(tree, seed, assert_rel):
    model, pm = tree.model, tree.pm
    q, qd, tau = random_state(model, seed)
    qdd = rbd.aba(model, q, qd, tau)
    assert_rel(qdd, pin_aba(model, pm, q, qd, tau), TOL, "qdd")
    f_ext = random_forces(model, seed)
    qdd_f = rbd.aba(model, q, qd, tau, f_ext)
    assert_rel(qdd_f, pin_aba(model, pm, q, qd, tau, f_ext), TOL, "qdd with f_ext")
    assert np.abs(qdd_f - qdd).max() > 1e-3            # the forces do matter


# --- Pinocchio: URDFs, each package parsing the file itself -------------------------------------



@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("relpath", URDF_ROBOTS, ids=[r.split("/")[-1] for r in URDF_ROBOTS])
def test_aba_matches_pinocchio_on_urdfs(relpath, floating):
    model, pm, rng = urdf_pair(relpath, floating)
    q = rbd.random_q(model, rng)
    qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    expected = pin_aba(model, pm, q, qd, tau)
    err = rel_err(rbd.aba(model, q, qd, tau), expected)
    assert err <= TOL, f"qdd: relative error {err:.3g}"
    f_ext = {i: rng.normal(size=6) for i in range(1, model.N + 1, 2)}
    expected_f = pin_aba(model, pm, q, qd, tau, f_ext)
    err = rel_err(rbd.aba(model, q, qd, tau, f_ext), expected_f)
    assert err <= TOL, f"qdd with f_ext: relative error {err:.3g}"
    assert np.abs(expected_f - expected).max() > 1e-6


# --- ABA inverts RNEA --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def floating30():
    model = rbd.floating_base(rbd.random_tree(30, seed=31),
                              mcI(3.0, np.array([0.1, 0.0, -0.1]), np.diag([0.1, 0.2, 0.25])))
    assert {type(j) for j in model.joints[1:]} == {rbd.Revolute, rbd.Prismatic, rbd.Spherical,
                                                   rbd.Free, rbd.Fixed}
    return model


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_aba_inverts_rnea(floating30, seed, with_forces):
    model = floating30
    q, qd, qdd = random_state(model, seed)
    f_ext = random_forces(model, seed) if with_forces else None
    tau = rbd.rnea(model, q, qd, qdd, f_ext)
    assert rel_err(rbd.aba(model, q, qd, tau, f_ext), qdd) < 1e-9
    tau2 = np.random.default_rng(seed + 1).normal(size=model.nv)
    assert rel_err(rbd.rnea(model, q, qd, rbd.aba(model, q, qd, tau2, f_ext), f_ext), tau2) < 1e-9


@pytest.mark.parametrize("floating", [False, True])
def test_aba_columns_are_the_inverse_mass_matrix(floating, floating30):
    """With gravity and velocity zero, aba(q, 0, e_k) is column k of H⁻¹; H comes from RNEA
    by the unit-vector method (column k of H is rnea(q, 0, e_k))."""
    model = floating30 if floating else rbd.random_tree(30, seed=32)
    model = rbd.Model(parent=model.parent, joints=model.joints, Xtree=model.Xtree, I=model.I,
                      names=model.names, gravity=np.zeros(6))
    q, _, _ = random_state(model, 5)
    zero = np.zeros(model.nv)
    E = np.eye(model.nv)
    H = np.column_stack([rbd.rnea(model, q, zero, e) for e in E])
    Minv = np.column_stack([rbd.aba(model, q, zero, e) for e in E])
    np.testing.assert_allclose(Minv, Minv.T, rtol=0, atol=1e-9 * np.abs(Minv).max())
    assert rel_err(H @ Minv, E) < 1e-9
    assert rel_err(Minv, np.linalg.inv(H)) < 1e-9 * np.linalg.cond(H)


def test_massless_intermediate_body_is_fine():
    """A massless link inside a chain is not singular: its child's inertia reaches it."""
    model = rbd.planar_chain(3, mass=[1.0, 0.0, 2.0], inertia=[0.1, 0.0, 0.2])
    q, qd, qdd = np.array([0.3, -0.2, 0.9]), np.array([1.0, 0.5, -0.4]), np.array([0.1, 2.0, -1.0])
    np.testing.assert_allclose(rbd.aba(model, q, qd, rbd.rnea(model, q, qd, qdd)), qdd,
                               rtol=1e-10)


# --- bad input ---------------------------------------------------------------------------------

def test_aba_bad_input(floating30):
    model = floating30
    q, qd, tau = random_state(model, 0)
    with pytest.raises(ValueError, match=r"tau has shape \(\d+,\), expected"):
        rbd.aba(model, q, qd, tau[:-1])
    with pytest.raises(ValueError, match=r"tau\[4\] is nan"):
        bad = tau.copy()
        bad[4] = np.nan
        rbd.aba(model, q, qd, bad)
    with pytest.raises(ValueError, match="qd has shape"):
        rbd.aba(model, q, np.append(qd, 0.0), tau)
    with pytest.raises(ValueError, match="q has shape"):
        rbd.aba(model, q[:-1], qd, tau)
    for i in model.manifold_bodies[:2]:                 # the free joint and a spherical one
        bad_q = q.copy()
        bad_q[model.q_slices[i]][-1] += 0.5
        with pytest.raises(ValueError, match=rf"joint '{model.names[i]}'.*unit quaternion"):
            rbd.aba(model, bad_q, qd, tau)
    with pytest.raises(ValueError, match=r"f_ext\[2\] has shape \(3,\)"):
        rbd.aba(model, q, qd, tau, {2: np.zeros(3)})
    with pytest.raises(ValueError, match=r"f_ext has 5 entries"):
        rbd.aba(model, q, qd, tau, [np.zeros(6)] * 5)
    with pytest.raises(ValueError, match=r"f_ext\[1\] contains NaN"):
        rbd.aba(model, q, qd, tau, {1: np.full(6, np.nan)})


@pytest.mark.fp_sensitive
def test_massless_leaf_is_a_singular_articulated_inertia():
    model = rbd.planar_chain(3, mass=[1.0, 1.0, 0.0], inertia=[0.1, 0.1, 0.0])
    with pytest.raises(SingularArticulatedInertia, match="joint 'joint3'"):
        rbd.aba(model, [0.1, 0.2, 0.3], [0.0] * 3, [0.0] * 3)
    # a massless subtree: body 2 and body 3 welded to it, both massless
    chain = rbd.planar_chain(3, mass=[1.0, 0.0, 0.0], inertia=[0.1, 0.0, 0.0])
    model = rbd.Model(parent=chain.parent, joints=chain.joints[:3] + [rbd.Fixed()],
                      Xtree=chain.Xtree, I=chain.I, names=["base", "shoulder", "elbow", "weld"])
    with pytest.raises(SingularArticulatedInertia, match="body 2 .joint 'elbow'.*singular"):
        rbd.aba(model, [0.1, 0.2], [0.0] * 2, [0.0] * 2)
    assert issubclass(SingularArticulatedInertia, ValueError)


@pytest.mark.fp_sensitive
def test_point_mass_on_a_ball_joint_is_singular():
    """A point mass at the centre of a spherical joint has no rotational inertia about it."""
    model = rbd.Model(parent=[-1, 0, 1], joints=[None, rbd.Revolute(), rbd.Spherical()],
                      Xtree=[None, np.eye(6), rbd.spatial.plux(np.eye(3), [1.0, 0, 0])],
                      I=[None, mcI(1.0, np.zeros(3), 0.1 * np.eye(3)),
                         mcI(2.0, np.zeros(3), np.zeros((3, 3)))],
                      names=["base", "hip", "ball"])
    q = rbd.neutral_q(model)
    with pytest.raises(SingularArticulatedInertia, match="joint 'ball'"):
        rbd.aba(model, q, np.zeros(4), np.zeros(4))


# --- operation count ------------------------------------------------------------------------

def test_aba_flops_are_exactly_linear():
    # one revolute body: Xup = XJ Xtree 396; vJ, v, c 6 + 72 + 36; pA = v ×* I v 66 + 30;
    # U, D, D⁻¹ 66 + 11 + 1; u 11 + 1; a' 66 + 6; q̈ 11 + 1 + 1; a 6 + 6
    one = 396 + 114 + 96 + 78 + 12 + 72 + 13 + 12
    # a body below another also passes I^a, p^a inwards: Ia 6 + 36 + 36; pa 66 + 1 + 6 + 12;
    # IA_λ += Xupᵀ Ia Xup 2·396 + 36; pA_λ += Xupᵀ pa 66 + 6
    below = 78 + 85 + 828 + 72
    assert aba_flops(rbd.planar_chain(1)) == one
    counts = [aba_flops(rbd.planar_chain(n)) for n in range(1, 65)]
    assert counts == [one * n + below * (n - 1) for n in range(1, 65)]
    # the same for any tree of hinges: no term depends on the depth (unlike CRBA's)
    for n in (3, 20, 64):
        tree = rbd.random_tree(n, seed=n, joint_types=("revolute", "prismatic"), p_chain=0.3)
        assert aba_flops(tree) == one * n + below * (n - tree.parent.count(0))
