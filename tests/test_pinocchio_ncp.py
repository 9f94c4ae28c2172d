"""Checks of tests/pinocchio_ncp.py — Pinocchio's ADMM (and PGS) constraint solvers as a
reference for contact impulses — against answers known independently: sticking
(P = -K⁻¹v), separating (P = 0), sliding on an isotropic K (closed form), frictionless
contacts (brute-force enumeration of the LCP's active sets), and random problems checked
against the Coulomb conditions themselves. Everything in world axes, normals off the axes.
"""

import itertools

import numpy as np
import pytest

from pinocchio_ncp import coulomb_residuals, pinocchio_ncp

# Iterative NCP solvers (PGS, ADMM): these tests run again under a second floating-point
# environment (the marker's note in pyproject.toml).
pytestmark = pytest.mark.fp_sensitive

SOLVERS = ["admm", "pgs"]


def unit(x):
    return np.asarray(x, float) / np.linalg.norm(x)


def tangent(n, rng):
    """A random unit vector orthogonal to n."""
    x = rng.normal(size=3)
    return unit(x - (x @ n) * n)


def random_spd(rng, size):
    A = rng.normal(size=(size, size))
    return A @ A.T + 0.1 * np.eye(size)


PGS_FAILS_STICK = pytest.mark.xfail(strict=True, reason=(
    "Pinocchio's PGS steps the tangential impulse by -v_t/min(K_t1t1, K_t2t2), too far for "
    "this K's anisotropic tangential block (eigenvalues up to 3.7, diagonal down to 0.86): "
    "while sticking, its sweep amplifies errors by 3.3 and never converges (nor for mu = 1)"))


@pytest.mark.parametrize("solver", ["admm", pytest.param("pgs", marks=PGS_FAILS_STICK)])
@pytest.mark.parametrize("mu", [10.0, 1e3, 1e6])
def test_stick(solver, mu):
    """Approaching along n, no tangential velocity, μ huge: the contact sticks, v⁺ = 0
    (this K needs μ ≥ |P_t|/n·P = 0.49)."""
    rng = np.random.default_rng(1)
    K, n = random_spd(rng, 3), unit([0.3, -0.5, 0.8])
    v_free = -0.7 * n
    P, info = pinocchio_ncp(K, v_free, [n], [mu], solver=solver)
    assert info["converged"]
    np.testing.assert_allclose(P[0], -np.linalg.solve(K, v_free), rtol=0, atol=1e-10)
    np.testing.assert_allclose(v_free + K @ P[0], 0, atol=1e-10)


@pytest.mark.parametrize("solver", SOLVERS)
def test_separating(solver):
    """Leaving the surface (n·v_free > 0), sliding or not: no impulse."""
    rng = np.random.default_rng(2)
    K, n = random_spd(rng, 3), unit([-0.6, 0.2, 0.7])
    v_free = 0.4 * n + 1.3 * tangent(n, rng)
    P, info = pinocchio_ncp(K, v_free, [n], [0.8], solver=solver)
    assert info["converged"]
    np.testing.assert_array_equal(P, 0)


def sliding_case():
    """K = k·I, v_free = -a n + s t: normal and tangential decouple, so n·v⁺ = 0 needs
    P_n = a/k, and sliding (s > k μ P_n) needs P_t = -μ P_n t, leaving v⁺ = (s - μ a) t."""
    rng = np.random.default_rng(3)
    k, a, s, mu = 2.5, 0.8, 3.0, 0.3
    n = unit([0.2, 0.9, -0.4])
    t = tangent(n, rng)
    return k * np.eye(3), -a * n + s * t, n, t, k, a, s, mu


@pytest.mark.parametrize("solver", SOLVERS)
def test_sliding(solver):
    K, v_free, n, t, k, a, s, mu = sliding_case()
    P, info = pinocchio_ncp(K, v_free, [n], [mu], solver=solver)
    assert info["converged"]
    np.testing.assert_allclose(P[0], a / k * n - mu * a / k * t, rtol=0, atol=1e-10)
    np.testing.assert_allclose(v_free + K @ P[0], (s - mu * a) * t, rtol=0, atol=1e-10)


def test_solve_ncp_flag():
    """solve_ncp=False makes the ADMM solve the CCP (Anitescu) relaxation: with K = k·I,
    P is the projection of -v_free/k on the cone, and the sliding contact lifts off with
    n·v⁺ = μ|v⁺_t| — not a Coulomb solution. The PGS ignores the flag: always the NCP."""
    K, v_free, n, t, k, a, s, mu = sliding_case()
    P, info = pinocchio_ncp(K, v_free, [n], [mu], solve_ncp=False)
    assert info["converged"]
    Pn = (a + mu * s) / (k * (1 + mu**2))
    np.testing.assert_allclose(P[0], Pn * n - mu * Pn * t, rtol=0, atol=1e-10)
    v = v_free + K @ P[0]
    np.testing.assert_allclose(v, (s - mu * a) / (1 + mu**2) * (t + mu * n), atol=1e-10)
    assert coulomb_residuals(K, v_free, [n], [mu], P)["complementarity"] > 1e-2

    P, info = pinocchio_ncp(K, v_free, [n], [mu], solver="pgs", solve_ncp=False)
    np.testing.assert_allclose(P[0], a / k * n - mu * a / k * t, rtol=0, atol=1e-10)


def lcp_by_enumeration(A, b):
    """The solution of 0 ≤ x ⊥ A x + b ≥ 0 (A positive definite), trying every active set."""
    found = []
    for active in itertools.product([False, True], repeat=len(b)):
        x = np.zeros(len(b))
        idx = np.flatnonzero(active)
        x[idx] = np.linalg.solve(A[np.ix_(idx, idx)], -b[idx])
        if (x >= -1e-12).all() and (A @ x + b >= -1e-12).all():
            found.append(x)
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_frictionless_matches_lcp(solver):
    """μ = 0, 3 contacts: P = n P_n with P_n the LCP's 0 ≤ P_n ⊥ NᵀKN P_n + Nᵀv ≥ 0."""
    active_counts = set()
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        K = random_spd(rng, 9)
        normals = [unit(rng.normal(size=3)) for _ in range(3)]
        v_free = np.concatenate([-rng.uniform(-0.5, 1) * n + rng.normal(size=3)
                                 for n in normals])
        N = np.zeros((9, 3))
        for k, n in enumerate(normals):
            N[3 * k:3 * k + 3, k] = n
        Pn = lcp_by_enumeration(N.T @ K @ N, N.T @ v_free)
        P, info = pinocchio_ncp(K, v_free, normals, [0.0] * 3, solver=solver)
        assert info["converged"]
        np.testing.assert_allclose(P, Pn[:, None] * np.array(normals), rtol=0, atol=1e-9)
        active_counts.add(int((Pn > 0).sum()))
    assert {1, 2} <= active_counts                  # mixed active sets were exercised


def random_problem(seed, m=3):
    """A random SPD K, random normals and μ ∈ [0.1, 2] (so some are solved through the
    μ > 1 rescaling); each contact approaching or leaving, sliding sideways."""
    rng = np.random.default_rng(seed)
    K = random_spd(rng, 3 * m)
    normals = np.array([unit(rng.normal(size=3)) for _ in range(m)])
    v_free = np.array([-rng.uniform(-0.3, 1) * n + rng.uniform(0, 1.5) * tangent(n, rng)
                       for n in normals])
    return K, v_free, normals, rng.uniform(0.1, 2, m)


def coulomb_modes(K, v_free, normals, mus, P, rtol=1e-9):
    """Checks the Coulomb conditions at each contact, to rtol times the data's scales
    (velocity: max|v_free|; impulse: max(|P|, |v_free|/|K|)), and names its mode."""
    v = v_free + (K @ P.reshape(-1)).reshape(P.shape)
    v_tol = rtol * abs(v_free).max()
    p_tol = rtol * max(abs(P).max(), abs(v_free).max() / np.linalg.norm(K, 2))
    modes = []
    for n, mu, Pk, vk in zip(normals, mus, P, v):
        Pn, vn = Pk @ n, vk @ n
        Pt, vt = Pk - Pn * n, vk - vn * n
        assert Pn >= -p_tol and vn >= -v_tol                           # no pulling, no sinking
        assert abs(Pn * vn) <= p_tol * abs(v_free).max()               # complementarity
        assert np.linalg.norm(Pt) <= mu * Pn + p_tol                   # inside the disc
        if np.linalg.norm(vt) > 1e3 * v_tol:                           # sliding: max dissipation
            np.testing.assert_allclose(Pt, -mu * Pn * vt / np.linalg.norm(vt), atol=p_tol)
        modes.append("separate" if Pn <= p_tol else
                     "slide" if np.linalg.norm(vt) > 1e3 * v_tol else "stick")
    return modes


def test_random_problems_satisfy_coulomb():
    """The ADMM's P meets every Coulomb condition; so does the PGS's where it converges
    (not always), and the two P agree."""
    modes, pgs_converged = [], 0
    for seed in range(20):
        K, v_free, normals, mus = random_problem(200 + seed)
        P, info = pinocchio_ncp(K, v_free, normals, mus)
        assert info["converged"] and info["residual"] < 1e-10, (seed, info)
        modes += zip(coulomb_modes(K, v_free, normals, mus, P), mus > 1)

        P_pgs, info_pgs = pinocchio_ncp(K, v_free, normals, mus, solver="pgs")
        if info_pgs["converged"]:
            pgs_converged += 1
            coulomb_modes(K, v_free, normals, mus, P_pgs)
            np.testing.assert_allclose(P_pgs, P, rtol=0, atol=1e-9 * abs(P).max())
    # every mode was exercised, with μ below and above 1
    assert set(modes) == set(itertools.product(["separate", "stick", "slide"], [False, True]))
    assert pgs_converged >= 10


def test_residuals_flag_wrong_impulses():
    """coulomb_residuals (used for info["residual"]) notices a reversed friction impulse
    and a missing normal impulse."""
    K, v_free, n, t, k, a, s, mu = sliding_case()
    P = (a / k * n - mu * a / k * t)[None]
    assert max(coulomb_residuals(K, v_free, [n], [mu], P).values()) < 1e-14
    reversed_friction = (a / k * n + mu * a / k * t)[None]
    assert coulomb_residuals(K, v_free, [n], [mu], reversed_friction)["dissipation"] > 0.1
    assert coulomb_residuals(K, v_free, [n], [mu], 0 * P)["normal_v"] > 0.1
