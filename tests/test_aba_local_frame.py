"""Seed 000's local-frame ABA (eqs. 10–26, [linear; angular], centre-of-mass frames)
against rbdlearn's Featherstone-form `aba` and against Pinocchio's `aba`."""

import numpy as np
import pytest
from conftest import make_tree, random_state

import rbdlearn as rbd
from rbdlearn.articulated import local_X
from rbdlearn.spatial import exp_so3, plux, to_linear_angular


def _inputs(model, seed):
    q, qd, tau = random_state(model, seed)
    rng = np.random.default_rng(seed + 1)
    f_ext = [None] + [rng.normal(size=6) for _ in range(model.N)]
    return q, qd, tau, f_ext


def test_equals_aba_on_random_trees(tree, assert_rel):
    q, qd, tau, f_ext = _inputs(tree.model, tree.seed)
    assert_rel(rbd.aba_local_frame(tree.model, q, qd, tau).qdd, rbd.aba(tree.model, q, qd, tau),
               1e-10, "no external force")
    assert_rel(rbd.aba_local_frame(tree.model, q, qd, tau, f_ext=f_ext).qdd,
               rbd.aba(tree.model, q, qd, tau, f_ext=f_ext), 1e-10, "with f_ext")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("floating", [False, True])
def test_equals_aba_on_small_trees(seed, floating, assert_rel):
    model = make_tree(5, seed, 0.5, floating)
    q, qd, tau, f_ext = _inputs(model, seed)
    assert_rel(rbd.aba_local_frame(model, q, qd, tau, f_ext=f_ext).qdd,
               rbd.aba(model, q, qd, tau, f_ext=f_ext), 1e-10)


def test_equals_pinocchio(assert_rel):
    pin = pytest.importorskip("pinocchio")
    from rbdlearn import interop
    model = make_tree(20, 9, 0.6, floating=True)
    pm = interop.to_pinocchio(model)
    q, qd, tau, _ = _inputs(model, 9)
    qdd_pin = pin.aba(pm, pm.createData(), interop.q_to_pin(model, pm, q),
                      interop.v_to_pin(model, pm, qd), interop.v_to_pin(model, pm, tau))
    assert_rel(rbd.aba_local_frame(model, q, qd, tau).qdd,
               interop.v_from_pin(model, pm, qdd_pin),
               1e-9)


def test_articulated_relation_holds_at_a_leaf():
    # A leaf: Î = diag(m1, J) and Ẑ = −(F + F_ext) (eqs. 18, 19) — the rigid body's own law.
    model = rbd.planar_chain(2, length=[1.0, 0.5], mass=[2.0, 1.0])
    q, qd, tau = np.array([0.3, -0.4]), np.array([1.0, 2.0]), np.zeros(2)
    result = rbd.aba_local_frame(model, q, qd, tau)
    I_hat, Z_hat = result.I_hat, result.Z_hat
    assert np.allclose(result.qdd, rbd.aba(model, q, qd, tau), rtol=1e-12, atol=1e-12)
    assert np.allclose(I_hat[2], np.diag([1.0, 1.0, 1.0, 0.5**2 / 12, 0.0, 0.5**2 / 12]))
    assert np.allclose(Z_hat[2], 0.0)            # ω ∥ x, a principal axis: ω × Jω = 0
    assert not np.allclose(I_hat[1][:3, :3], 2.0 * np.eye(3))   # the child is felt


def test_local_X_is_the_swapped_plux():
    rng = np.random.default_rng(0)
    R, r = exp_so3(rng.normal(size=3)), rng.normal(size=3)
    assert np.allclose(local_X(R, r), to_linear_angular(plux(R.T, r), operator=True))
    R2, r2 = exp_so3(rng.normal(size=3)), rng.normal(size=3)
    assert np.allclose(local_X(R, r) @ local_X(R2, r2), local_X(R2 @ R, r2 + R2 @ r))   # (5)
    assert np.allclose(np.linalg.inv(local_X(R, r)), local_X(R.T, -R.T @ r))           # (6)


def test_bad_tau_length():
    model = rbd.planar_chain(2)
    with pytest.raises(ValueError, match="tau"):
        rbd.aba_local_frame(model, np.zeros(2), np.zeros(2), np.zeros(3))
