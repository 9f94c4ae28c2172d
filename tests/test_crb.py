"""CRBA (rbdlearn.crb) against Pinocchio's crba, the unit-vector method and ABA."""

import numpy as np
import pytest

import rbdlearn as rbd
from conftest import random_state

pin = pytest.importorskip("pinocchio")
from rbdlearn import interop  # noqa: E402


def test_crba_matches_pinocchio(tree, assert_rel):
    model, pm = tree.model, tree.pm
    q, _, _ = random_state(model, 0)
    Hp = pin.crba(pm, pm.createData(), interop.q_to_pin(model, pm, q))
    Hp = np.triu(Hp) + np.triu(Hp, 1).T          # Pinocchio fills the upper triangle
    P = np.column_stack([interop.v_from_pin(model, pm, e) for e in np.eye(model.nv)])
    assert_rel(rbd.crba(model, q), P @ Hp @ P.T, 1e-9, "H")


def test_crba_equals_unit_vector_method_and_is_spd(tree):
    model = tree.model
    q, qd, qdd = random_state(model, 1)
    H = rbd.crba(model, q)
    b = rbd.rnea(model, q, qd, np.zeros(model.nv))
    np.testing.assert_allclose(H @ qdd + b, rbd.rnea(model, q, qd, qdd),
                               atol=1e-9 * np.abs(b).max())
    np.testing.assert_array_equal(H, H.T)
    assert np.linalg.eigvalsh(H).min() > 0


def test_forward_dynamics_crb_equals_aba(tree):
    model = tree.model
    q, qd, tau = random_state(model, 2)
    f_ext = [None] + [np.random.default_rng(i).normal(size=6) for i in range(1, model.N + 1)]
    expected = rbd.aba(model, q, qd, tau, f_ext)
    np.testing.assert_allclose(rbd.forward_dynamics_crb(model, q, qd, tau, f_ext), expected,
                               atol=1e-9 * np.abs(expected).max())


def test_bad_input():
    model = rbd.planar_chain(3)
    with pytest.raises(ValueError, match="q has shape"):
        rbd.crba(model, np.zeros(2))
    with pytest.raises(ValueError, match="tau has shape"):
        rbd.forward_dynamics_crb(model, np.zeros(3), np.zeros(3), np.zeros(4))
