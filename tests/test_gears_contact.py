"""Gears (seed 000 §2.6–2.7, rbdlearn.gears), inertia between bodies (§2.8,
rbdlearn.articulated) and impulses (rbdlearn.impulses).

Every result is checked against an independent computation from RNEA and the Jacobians:
the mass matrix H by the unit-vector method, the bias b = rnea(q, q̇, 0), and
    gears:    Gᵀ H G q̈_ind = τ_ind − Gᵀ b                (the reduced equations)
    Θ:        Λ_ji = J_j H⁻¹ J_iᵀ                         (local-frame Jacobians)
    impulses: Δq̇ = H⁻¹ Jᵀ P
"""

import math

import numpy as np
import pytest

import rbdlearn as rbd
from conftest import rel_err
from rbdlearn.joints import from_swing_twist, swing_twist_limit_violation
from rbdlearn.spatial import rot_to_quat

# Impact modes (stick/slide) and the joint limits' LCP active sets: these tests run again
# under a second floating-point environment (the marker's note in pyproject.toml).
pytestmark = pytest.mark.fp_sensitive

TOL = 1e-9
GEAR_JOINTS = ("revolute", "prismatic", "revolute", "spherical", "free", "fixed", "prismatic")


def mass_matrix(model, q):
    """H by the unit-vector method: column k is rnea(q, 0, e_k) with gravity off."""
    still, zero = rbd.without_gravity(model), np.zeros(model.nv)
    return np.column_stack([rbd.rnea(still, q, zero, e) for e in np.eye(model.nv)])


def make_model(n, seed, floating, joint_types=GEAR_JOINTS):
    model = rbd.random_tree(n, seed=seed, joint_types=joint_types)
    if floating:
        model = rbd.floating_base(model, rbd.random_tree(1, seed=seed + 50).I[1])
    return model


def gear_kind(model, g):
    i, j = g.driver, g.driven
    return ("serial" if model.parent[j] == i else "reversed" if model.parent[i] == j
            else "sibling")


def random_gears(model, rng, count):
    """Up to ``count`` random gears between 1-DOF joints: serial, reversed (driver is the
    child), sibling, and chains (a driven driver), without loops or double drives."""
    one = [i for i in range(1, model.N + 1) if model.joints[i].nv == 1]
    par = model.parent
    pairs = [(j, i) for j in one for i in one
             if i != j and (par[j] == i or par[i] == j or par[i] == par[j])]
    rng.shuffle(pairs)
    driver = {}
    for j, i in pairs:
        if j in driver:
            continue
        k = i
        while k in driver and k != j:
            k = driver[k]
        if k == j:                                  # would close a loop of gears
            continue
        driver[j] = i
        if len(driver) == count:
            break
    return [rbd.Gear(driven=j, driver=i, ratio=float(rng.uniform(0.3, 2.0) * rng.choice([-1, 1])))
            for j, i in driver.items()]


# --- gears ------------------------------------------------------------------------------------

GEARED = [(30, 0, False), (30, 1, False), (32, 2, True), (30, 3, True)]


@pytest.fixture(scope="module", params=GEARED, ids=[f"{'float' if f else 'fixed'}-s{s}"
                                                      for _, s, f in GEARED])
def geared(request):
    n, seed, floating = request.param
    model = make_model(n, seed, floating)
    rng = np.random.default_rng(seed)
    gears = random_gears(model, rng, 10)
    kinds = {gear_kind(model, g) for g in gears}
    chains = [g for g in gears if g.driver in {h.driven for h in gears}]
    assert {"serial", "sibling"} <= kinds and chains, (kinds, len(chains))
    return model, gears, rng


def independent_state(model, gears, rng):
    """A random meshing configuration q0, q_ind, q̇_ind, τ_ind and the full q, q̇."""
    G = rbd.gear_matrix(model, gears)
    q0 = rbd.random_q(model, rng)
    driven = {g.driven for g in gears}
    q_ind = np.concatenate([q0[model.q_slices[i]] + (0 if model.joints[i].nq != 1
                                                      else rng.normal(scale=0.3))
                            for i in range(1, model.N + 1) if i not in driven])
    qd_ind, tau_ind = rng.normal(size=G.shape[1]), rng.normal(size=G.shape[1])
    return G, q0, q_ind, qd_ind, tau_ind, rbd.geared_q(model, gears, q_ind, q0), G @ qd_ind


def test_aba_geared_matches_reduced_equations(geared):
    model, gears, rng = geared
    for _ in range(2):
        G, q0, q_ind, qd_ind, tau_ind, q, qd = independent_state(model, gears, rng)
        f_ext = {k: rng.normal(size=6) for k in range(2, model.N + 1, 4)}
        qdd_ind = rbd.aba_geared(model, gears, q_ind, qd_ind, tau_ind, f_ext, q0=q0)
        H, b = mass_matrix(model, q), rbd.rnea(model, q, qd, np.zeros(model.nv), f_ext)
        expected = np.linalg.solve(G.T @ H @ G, tau_ind - G.T @ b)
        err = rel_err(qdd_ind, expected)
        assert err < TOL, f"aba_geared vs reduced equations: {err:.3g}"
        # the joint-torque reading of τ_ind: full torques τ reduce to Gᵀτ
        tau = rng.normal(size=model.nv)
        qdd_tau = rbd.aba_geared(model, gears, q_ind, qd_ind, G.T @ tau, q0=q0)
        b0 = rbd.rnea(model, q, qd, np.zeros(model.nv))
        assert rel_err(qdd_tau, np.linalg.solve(G.T @ H @ G, G.T @ (tau - b0))) < TOL


def test_velocity_products_of_coupled_bodies_matter(geared):
    """With q̇ ≠ 0 the answer differs from the q̇ = 0 one, and both match the reduced
    equations: the Ĉ terms of the coupled bodies (eq. 35) are exercised."""
    model, gears, rng = geared
    G, q0, q_ind, qd_ind, tau_ind, q, qd = independent_state(model, gears, rng)
    H = mass_matrix(model, q)
    for v in (np.zeros_like(qd_ind), 3.0 * qd_ind):
        qdd = rbd.aba_geared(model, gears, q_ind, v, tau_ind, q0=q0)
        b = rbd.rnea(model, q, G @ v, np.zeros(model.nv))
        assert rel_err(qdd, np.linalg.solve(G.T @ H @ G, tau_ind - G.T @ b)) < TOL
    assert np.abs(qdd - rbd.aba_geared(model, gears, q_ind, 0 * v, tau_ind, q0=q0)).max() > 1e-2


def test_no_gears_is_aba(geared):
    model, _, rng = geared
    q, qd = rbd.random_q(model, rng), rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    err = rel_err(rbd.aba_geared(model, [], q, qd, tau), rbd.aba(model, q, qd, tau))
    assert err < 1e-12


def test_gear_matrix_and_geared_q(geared):
    model, gears, rng = geared
    G, q0, q_ind, qd_ind, _, q, qd = independent_state(model, gears, rng)
    for g in gears:
        j, i = model.v_index[g.driven], model.v_index[g.driver]
        assert qd[j] == pytest.approx(g.ratio * qd[i], rel=1e-12, abs=1e-12)
        qj, qi = model.q_index[g.driven], model.q_index[g.driver]
        assert q[qj] - q0[qj] == pytest.approx(g.ratio * (q[qi] - q0[qi]), abs=1e-12)
    # independent joints keep their coordinates; G has one unit entry per independent row
    driven = {g.driven for g in gears}
    ind_rows = [k for i in range(1, model.N + 1) if i not in driven
                for k in range(model.v_slices[i].start, model.v_slices[i].stop)]
    assert np.array_equal(G[ind_rows], np.eye(G.shape[1]))
    assert G.shape == (model.nv, model.nv - len(gears))


def two_link(joint_types=("revolute", "revolute")):
    """base -> 1 -> 2, and 3 a second child of 1; one more child 4 of the base."""
    makers = {"revolute": lambda: rbd.Revolute([0, 0, 1.0]),
              "prismatic": lambda: rbd.Prismatic([1.0, 0, 0]),
              "spherical": rbd.Spherical}
    model = rbd.random_tree(4, seed=7, joint_types=("revolute",))
    joints = [None, *(makers[t]() for t in joint_types), *model.joints[3:]]
    return model.replace(parent=[-1, 0, 1, 1, 0], joints=joints,
                         names=["base", "a", "b", "c", "d"])


@pytest.mark.parametrize("gears, message", [
    ([rbd.Gear(2, 1, 2.0), rbd.Gear(2, 3, 1.0)], "'b' is driven by two gears"),
    ([rbd.Gear(2, 3, 2.0), rbd.Gear(3, 2, 0.5)], "loop"),
    ([rbd.Gear(2, 2, 2.0)], "cannot drive itself"),
    ([rbd.Gear("x", "a", 2.0)], "'x', which is not in the model"),
    ([rbd.Gear(9, 1, 2.0)], "body index in 1..4"),
    ([(2, 1, 2.0)], "Gear objects"),
])
def test_bad_gears(gears, message):
    model = two_link()
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rbd.gear_matrix(model, gears)
    with pytest.raises(ValueError):
        rbd.aba_geared(model, gears, np.zeros(3), np.zeros(3), np.zeros(3))


def test_bad_gear_joint_type_and_ratio():
    model = two_link(("revolute", "spherical"))
    with pytest.raises(ValueError, match="joint 'b' is a Spherical joint; gears couple 1-DOF"):
        rbd.gear_matrix(model, [rbd.Gear("b", "a", 1.0)])
    for bad in (math.inf, math.nan, "2", True):
        with pytest.raises(ValueError, match="ratio must be a finite real number"):
            rbd.Gear(2, 1, bad)
        with pytest.raises(ValueError, match="offset must be a finite real number"):
            rbd.Gear(2, 1, 1.0, offset=bad)


def test_gear_between_any_two_joints():
    """A gear between joints that are neither parent/child nor siblings (URDF mimic
    joints may be anywhere): G, geared_q and the reduced equations hold; aba_geared,
    whose O(N) form needs adjacent joints (seed 000 §2.6–2.7), says so and names them."""
    model = two_link()                               # d (body 4) is b's (body 2) uncle
    gears = [rbd.Gear("b", "d", -2.0, offset=0.3)]
    G = rbd.gear_matrix(model, gears)
    assert G.shape == (4, 3) and G[1, 2] == -2.0 and G[3, 2] == 1.0
    q = rbd.geared_q(model, gears, [0.1, 0.2, 0.4])  # q_ind: joints a, c, d
    assert np.allclose(q, [0.1, -2.0 * 0.4 + 0.3, 0.2, 0.4], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="joint 'b' is geared to 'd', which is not its "
                                         "parent, child or sibling.*gear_matrix"):
        rbd.aba_geared(model, gears, np.zeros(3), np.zeros(3), np.zeros(3))


def test_offsets_add_along_a_chain_of_gears():
    """q_j − q0_j = r_j (q_k − q0_k) + o_j with q_k driven in turn: the offsets compose."""
    model = two_link()
    gears = [rbd.Gear("c", "b", 3.0, offset=0.5), rbd.Gear("b", "a", -2.0, offset=0.1)]
    q = rbd.geared_q(model, gears, [0.2, 0.7], q0=[0.0, 0.0, 0.0, 0.0])
    assert np.allclose(q, [0.2, -0.4 + 0.1, 3.0 * (-0.4 + 0.1) + 0.5, 0.7], rtol=0, atol=1e-15)


def test_bad_geared_vectors():
    model = two_link()
    gears = [rbd.Gear(2, 1, 2.0)]                        # nv_ind = 3
    with pytest.raises(ValueError, match=r"q_ind has shape \(2,\), expected \(3,\)"):
        rbd.geared_q(model, gears, np.zeros(2))
    with pytest.raises(ValueError, match="qd_ind must be 3 finite numbers"):
        rbd.aba_geared(model, gears, np.zeros(3), np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match="tau_ind must be 3 finite numbers"):
        rbd.aba_geared(model, gears, np.zeros(3), np.zeros(3), [0, np.nan, 0])


# --- inertia between bodies (Θ) ---------------------------------------------------------------

def relation(model, i, j):
    up_i, up_j = model.ancestors(i), model.ancestors(j)
    if i == j:
        return "same"
    if i in up_j:
        return "i upstream of j"
    if j in up_i:
        return "i downstream of j"
    return "different branches"


@pytest.mark.parametrize("seed, floating", [(0, False), (1, True)])
def test_inter_body_inertia_is_J_Hinv_JT(seed, floating):
    model = make_model(30, seed, floating, joint_types=("revolute", "prismatic", "spherical",
                                                        "free", "fixed"))
    q = rbd.random_q(model, np.random.default_rng(seed))
    Hinv = np.linalg.inv(mass_matrix(model, q))
    J = [None] + [rbd.jacobian(model, q, i, frame="local") for i in range(1, model.N + 1)]
    T_Theta = rbd.theta_recursion(model, q)
    seen, worst = set(), 0.0
    for i in range(1, model.N + 1):
        for j in range(1, model.N + 1):
            L = rbd.inter_body_inertia(model, q, i, j, T_Theta)
            expected = J[j] @ Hinv @ J[i].T
            worst = max(worst, rel_err(L, expected))
            seen.add(relation(model, i, j))
    assert seen == {"same", "i upstream of j", "i downstream of j", "different branches"}
    assert worst < TOL, f"Λ vs J H⁻¹ Jᵀ: {worst:.3g}"
    if floating:                                   # the seed's Θ_0 = −Î_0⁻¹ for the root
        Theta_root = T_Theta[1][1]
        assert rel_err(Theta_root, -Hinv[:6, :6]) < TOL
    else:                                          # branches off the fixed base: decoupled
        roots = [i for i in range(1, model.N + 1) if model.parent[i] == 0]
        assert len(roots) >= 2
        assert np.abs(rbd.inter_body_inertia(model, q, roots[0], roots[1], T_Theta)).max() == 0


def test_inter_body_inertia_is_the_ABA_response():
    """δA_j = Λ_ji δf is the change of body j's acceleration when aba gets δf on body i."""
    model = make_model(12, 4, True)
    rng = np.random.default_rng(4)
    q, qd, tau = rbd.random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    i, j, df = 9, 5, rng.normal(size=6)
    a = [rbd.body_accelerations(model, q, qd, rbd.aba(model, q, qd, tau, f))[j]
         for f in (None, {i: df})]
    assert rel_err(a[1] - a[0], rbd.inter_body_inertia(model, q, i, j) @ df) < TOL


def test_inter_body_inertia_bad_body():
    model = make_model(5, 0, False)
    with pytest.raises(ValueError, match="body index must be an integer in 1..5"):
        rbd.inter_body_inertia(model, rbd.neutral_q(model), 0, 2)


# --- impulses ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def impact():
    model = make_model(12, 3, True, joint_types=("revolute", "prismatic", "spherical",
                                                 "free", "fixed"))
    rng = np.random.default_rng(3)
    q, qd = rbd.random_q(model, rng), rng.normal(size=model.nv)
    return model, q, qd, mass_matrix(model, q)


@pytest.mark.parametrize("body", [1, 6, 12])
@pytest.mark.parametrize("mu, mode", [(0.0, "normal"), (0.2, "slide"), (5.0, "stick")])
@pytest.mark.parametrize("e", [0.0, 0.5])
def test_contact_impulse(impact, body, mu, mode, e):
    model, q, qd, H = impact
    p = np.array([0.1, -0.2, 0.3])
    Jp = rbd.point_jacobian(model, q, body, p, frame="world")
    v = Jp @ qd
    w = np.cross(v, [0.3, -0.5, 1.0])
    n = -v / np.linalg.norm(v) + 0.6 * w / np.linalg.norm(w)     # approaching, with slip
    n /= np.linalg.norm(n)
    r = rbd.contact_impulse(model, q, qd, body, p, n, e=e, mu=mu)
    assert r.mode == mode
    assert rel_err(r.K, Jp @ np.linalg.solve(H, Jp.T)) < TOL
    assert rel_err(r.dqd, np.linalg.solve(H, Jp.T @ r.P)) < TOL
    v_after = Jp @ (qd + r.dqd)
    assert rel_err(r.v_after, v_after) < TOL and rel_err(r.v_before, v) < TOL
    vn = n @ v
    assert vn < 0 and n @ v_after == pytest.approx(-e * vn, rel=1e-9)
    Pn, Pt = r.P @ n, r.P - (r.P @ n) * n
    assert Pn > 0
    if mode == "normal":
        assert np.linalg.norm(Pt) < 1e-12 * Pn
    elif mode == "stick":
        assert np.linalg.norm(v_after - (n @ v_after) * n) < 1e-9
        assert np.linalg.norm(Pt) <= mu * Pn
    else:
        vt = v - vn * n
        assert np.linalg.norm(Pt) == pytest.approx(mu * Pn, rel=1e-12)
        assert Pt @ vt == pytest.approx(-np.linalg.norm(Pt) * np.linalg.norm(vt), rel=1e-12)


def test_contact_impulse_separating_and_bad_input(impact):
    model, q, qd, _ = impact
    p = np.zeros(3)
    v = rbd.point_velocity(model, q, qd, 5, p, frame="world")
    r = rbd.contact_impulse(model, q, qd, 5, p, v)           # moving away along n
    assert r.mode == "none" and not r.P.any() and not r.dqd.any()
    with pytest.raises(ValueError, match="contact normal must be a finite non-zero 3-vector"):
        rbd.contact_impulse(model, q, qd, 5, p, np.zeros(3))
    with pytest.raises(ValueError, match=r"restitution e must be a number in \[0, 1.0\]"):
        rbd.contact_impulse(model, q, qd, 5, p, e=1.5)
    with pytest.raises(ValueError, match="friction mu must be a number"):
        rbd.contact_impulse(model, q, qd, 5, p, mu=-0.1)


def limit_state(impact, swing, twist, rate):
    """The impact state with the first ball joint set to (swing, twist) and its velocity
    set to ``rate`` along the limit directions."""
    model, q, qd, _ = impact
    i = next(k for k in range(1, model.N + 1) if isinstance(model.joints[k], rbd.Spherical))
    R = from_swing_twist(0.3, swing, twist)
    q, qd = q.copy(), qd.copy()
    q[model.q_slices[i]] = rot_to_quat(R)
    qd[model.v_slices[i]] = np.asarray(rate) @ swing_twist_limit_violation(R, 0.7, 0.4)[1][:, :3]
    return model, i, q, qd


@pytest.mark.parametrize("swing, twist, rate, e, active", [
    (0.8, 0.5, [2.0, 1.5], 0.3, [0, 1]),      # beyond both limits, approaching both
    (0.8, 0.1, [2.0, 1.5], 0.0, [0]),         # beyond the swing limit only
    (0.8, 0.5, [-1.0, -1.0], 0.3, []),        # beyond both limits but leaving: no impulse
    (0.5, 0.1, [2.0, 1.5], 0.3, []),          # inside the limits
])
def test_joint_limit_impulse(impact, swing, twist, rate, e, active):
    model, i, q, qd = limit_state(impact, swing, twist, rate)
    R = rbd.spatial.quat_to_rot(q[model.q_slices[i]])
    g, Gm = swing_twist_limit_violation(R, 0.7, 0.4)
    J = np.zeros((2, model.nv))
    J[:, model.v_slices[i]] = Gm[:, :3]          # S of a ball joint picks the angular part
    lam, dqd = rbd.joint_limit_impulse(model, q, qd, i, 0.7, 0.4, e=e)
    H = mass_matrix(model, q)
    assert rel_err(dqd, -np.linalg.solve(H, J.T @ lam)) < TOL
    gd, gd_after = J @ qd, J @ (qd + dqd)
    assert np.all(lam >= 0) and list(np.flatnonzero(lam > 1e-12)) == active
    for k in active:
        assert gd_after[k] == pytest.approx(-e * gd[k], rel=1e-9)
    if not active:
        assert not dqd.any()


def test_joint_limit_impulse_bad_joint(impact):
    model, q, qd, _ = impact
    revolute = next(k for k in range(1, model.N + 1) if isinstance(model.joints[k], rbd.Revolute))
    with pytest.raises(ValueError, match="spherical joint"):
        rbd.joint_limit_impulse(model, q, qd, revolute, 0.7)


# --- Θ with gears (seed 000 §2.8, last sentence) -------------------------------------------------

def test_inter_body_inertia_geared_is_J_G_reduced_inverse(geared):
    """Λ_ji on a geared tree equals J_j G (Gᵀ H G)⁻¹ Gᵀ J_iᵀ (H by the unit-vector method)
    for every pair, including two members of one gear group (the coupling term)."""
    model, gears, rng = geared
    G, q0, q_ind, qd_ind, tau_ind, q, qd = independent_state(model, gears, rng)
    J = [None] + [rbd.jacobian(model, q, k, frame="local") for k in range(1, model.N + 1)]
    JG = [None] + [J[k] @ G for k in range(1, model.N + 1)]
    Minv = np.linalg.inv(G.T @ mass_matrix(model, q) @ G)
    th = rbd.theta_recursion_geared(model, q, gears)
    worst, coupled = 0.0, 0
    for i in range(1, model.N + 1):
        for j in range(1, model.N + 1):
            L = rbd.inter_body_inertia_geared(model, q, gears, i, j, theta=th)
            worst = max(worst, rel_err(L, JG[j] @ Minv @ JG[i].T))
            coupled += (th.parent[i] == th.parent[j] and th.group[i] == th.group[j]
                        and i != j)
    assert coupled > 0                  # pairs that meet inside a gear group were tested
    assert worst < TOL, f"geared Λ vs J G (GᵀHG)⁻¹ Gᵀ Jᵀ: {worst:.3g}"


def test_inter_body_inertia_geared_is_the_geared_ABA_response():
    """δA_j = Λ_ji δf: the geared ABA at rest, without gravity, with δf on body i."""
    model = two_link()
    gears = [rbd.Gear("b", "a", -0.5), rbd.Gear("d", "a", 2.0)]     # serial and sibling
    G = rbd.gear_matrix(model, gears)
    q_ind, df = np.array([0.4, -0.3]), np.array([0.3, -1.0, 0.5, 2.0, -0.7, 1.1])
    q = rbd.geared_q(model, gears, q_ind)
    still, zero = rbd.without_gravity(model), np.zeros(G.shape[1])
    for i in range(1, model.N + 1):
        qdd = rbd.aba_geared(still, gears, q_ind, zero, zero, f_ext={i: df})
        a = rbd.body_accelerations(still, q, np.zeros(model.nv), G @ qdd)
        for j in range(1, model.N + 1):
            L = rbd.inter_body_inertia_geared(model, q, gears, i, j)
            assert rel_err(L @ df, a[j]) < TOL, (i, j)
    # the gear couples the two branches that leave the fixed base (b and d are driven by
    # a): without gears those blocks are exactly zero, with them they are not
    L_free = rbd.inter_body_inertia(model, q, 1, 4)
    L_geared = rbd.inter_body_inertia_geared(model, q, gears, 1, 4)
    assert np.abs(L_free).max() == 0 and np.abs(L_geared).max() > 1e-3


def test_theta_recursion_geared_without_gears_is_theta_recursion():
    model = make_model(12, 5, True)
    q = rbd.random_q(model, np.random.default_rng(5))
    T, Theta = rbd.theta_recursion(model, q)
    th = rbd.theta_recursion_geared(model, q, [])
    assert th.parent == model.parent
    assert max(rel_err(th.Theta[k], Theta[k]) for k in range(1, model.N + 1)) < 1e-12
    assert max(rel_err(th.T[k], T[k]) for k in range(1, model.N + 1)) < 1e-12


def test_theta_geared_bad_input():
    model = two_link()
    q = rbd.neutral_q(model)
    with pytest.raises(ValueError, match="theta_recursion_geared: joint 'b' is geared to "
                                         "'d', which is not its parent, child or sibling"):
        rbd.theta_recursion_geared(model, q, [rbd.Gear("b", "d", 2.0)])
    with pytest.raises(ValueError, match="body index must be an integer in 1..4"):
        rbd.inter_body_inertia_geared(model, q, [rbd.Gear(2, 1, 2.0)], 5, 1)
    with pytest.raises(ValueError, match="theta must be theta_recursion_geared"):
        rbd.inter_body_inertia_geared(model, q, [], 1, 2, theta=rbd.theta_recursion(model, q))
    with pytest.raises(ValueError, match=r"q has shape \(2,\), expected \(4,\)"):
        rbd.theta_recursion_geared(model, q[:2], [])
