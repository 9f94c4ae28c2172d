"""Several contacts with friction (rbdlearn.contact): the Delassus operator by the Θ
recursion against J H⁻¹ Jᵀ (dense, and from Pinocchio), Lemke and PGS against each other,
against a brute-force enumeration of active sets and against Pinocchio's impulse dynamics;
the box dropped on the floor; bad input."""

import itertools
import warnings

import numpy as np
import pytest

import rbdlearn as rbd
from rbdlearn import contact as ct
from rbdlearn import lcp
from rbdlearn import interop
from rbdlearn.articulated import SingularArticulatedInertia
from rbdlearn.contact import plane_contacts
from rbdlearn.models import box

pin = pytest.importorskip("pinocchio")

# Lemke's pivots and PGS's sweeps on degenerate LCPs (redundant corners): these tests run
# again under a second floating-point environment (the marker's note in pyproject.toml).
pytestmark = pytest.mark.fp_sensitive


def moving_bodies(model):
    return [i for i in range(1, model.N + 1)
            if any(model.joints[k].nv for k in model.ancestors(i))]


def random_contacts(model, q, rng, pairs, mu=0.4):
    """One contact per (a, b) pair; b = 0 the ground. For two bodies the points coincide
    in space (b's point is a's point in b's coordinates)."""
    X0 = rbd.forward_kinematics(model, q)
    out = []
    for k, (a, b) in enumerate(pairs):
        pa = rng.uniform(-0.3, 0.3, 3)
        R, o = rbd.body_pose(X0[a])
        x = o + R @ pa
        pb = x
        if b:
            Rb, ob = rbd.body_pose(X0[b])
            pb = Rb.T @ (x - ob)
        out.append(ct.Contact(a, pa, normal=rng.normal(size=3), mu=mu, other=b,
                              other_point=pb, name=f"c{k}"))
    return out


def tree_case(seed, floating, n=9):
    model = rbd.random_tree(n, seed=seed)
    if floating:
        model = rbd.floating_base(model, rbd.random_tree(1, seed=seed + 100).I[1])
    rng = np.random.default_rng(seed)
    q = rbd.random_q(model, rng)
    b = moving_bodies(model)
    pairs = [(b[-1], 0), (b[len(b) // 2], b[0]), (b[1], 0), (b[-1], b[-2]), (b[-1], 0)]
    return model, q, random_contacts(model, q, rng, pairs)


# ------------------------------------------------------------------- Delassus operator

@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_delassus_by_theta_is_dense_J_Hinv_JT(seed, floating):
    model, q, contacts = tree_case(seed, floating)
    K, K_dense = ct.delassus(model, q, contacts), ct.delassus_dense(model, q, contacts)
    assert np.abs(K_dense).max() > 0.1
    coupled = np.abs(K_dense[:3, 9:12]).max() if floating else 1.0   # ground–ground blocks
    assert coupled > 1e-3
    assert np.abs(K - K_dense).max() < 1e-10 * np.abs(K_dense).max()
    assert np.allclose(K, K.T, atol=1e-14) and np.linalg.eigvalsh(K).min() > -1e-10
    # the impulses' velocity change H⁻¹ Jᵀ P (one ABA) and the velocities after it
    qd = np.random.default_rng(seed).normal(size=model.nv)
    sol = ct.solve_contacts(model, q, qd, contacts)
    J = ct._jacobian(model, q, lcp._check_contacts(model, contacts))
    assert np.abs(sol.P).max() > 0.01
    assert np.allclose(sol.dqd, np.linalg.solve(rbd.crba(model, q), J.T @ sol.P.ravel()),
                       rtol=1e-9, atol=1e-10)
    assert np.allclose(sol.v_after.ravel(), J @ (qd + sol.dqd), atol=1e-10)


def _anchor(model, pm, i, p):
    if i == 0:
        return 0, pin.SE3(np.eye(3), np.asarray(p, dtype=float))
    f = pm.frames[pm.getFrameId(model.body_names[i], pin.FrameType.BODY)]
    return f.parentJoint, f.placement * pin.SE3(np.eye(3), np.asarray(p, dtype=float))


def pinocchio_contacts(model, pm, contacts):
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for c in contacts:
        j1, M1 = _anchor(model, pm, c.body, c.point)
        j2, M2 = _anchor(model, pm, c.other, c.other_point)
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, j1, M1, j2, M2,
                                      pin.LOCAL_WORLD_ALIGNED)
        cms.append(cm)
        cds.append(cm.createData())
    return cms, cds


def pinocchio_J_Minv(model, pm, q, contacts):
    """Pinocchio's contact Jacobian (world axes at the points) and M⁻¹, in rbdlearn's
    velocity coordinates."""
    P = np.column_stack([interop.v_to_pin(model, pm, e) for e in np.eye(model.nv)])
    qp = interop.q_to_pin(model, pm, q)
    cms, cds = pinocchio_contacts(model, pm, contacts)
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    zero = np.zeros(pm.nv)
    pin.constraintDynamics(pm, pd, qp, zero, zero, cms, cds, pin.ProximalSettings(1e-12, 0, 1))
    J = pin.getConstraintsJacobian(pm, pd, cms, cds) @ P
    Minv = pin.computeMinverse(pm, pm.createData(), qp)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    return J, P.T @ Minv @ P


def test_delassus_matches_pinocchio(tree):
    """On conftest's random trees (30+ bodies, every joint type, fixed and floating):
    against Pinocchio's J M⁻¹ Jᵀ for ground and body–body contacts, and against
    ``pinocchio.computeDelassusMatrix`` (which answers in each contact's local frame)
    for the ground contacts."""
    model, pm = tree.model, tree.pm
    rng = np.random.default_rng(tree.seed)
    q = rbd.random_q(model, rng)
    b = moving_bodies(model)
    contacts = random_contacts(model, q, rng, [(b[-1], 0), (b[5], b[2]), (b[10], 0)])
    K = ct.delassus(model, q, contacts)
    J, Minv = pinocchio_J_Minv(model, pm, q, contacts)
    assert np.abs(K - J @ Minv @ J.T).max() < 1e-9 * np.abs(K).max()
    ground = [contacts[0], contacts[2]]
    cms, cds = pinocchio_contacts(model, pm, ground)
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    qp = interop.q_to_pin(model, pm, q)
    K_local = pin.computeDelassusMatrix(pm, pd, qp, cms, cds, 0.0)
    pin.forwardKinematics(pm, pd, qp)
    R = np.zeros((6, 6))
    for k, cm in enumerate(cms):
        R[3 * k:3 * k + 3, 3 * k:3 * k + 3] = (pd.oMi[cm.joint1_id] * cm.joint1_placement).rotation
    K_ground = ct.delassus(model, q, ground)
    assert np.abs(R @ K_local @ R.T - K_ground).max() < 1e-9 * np.abs(K_ground).max()


# -------------------------------------------------------------------- Lemke and PGS

def check_lcp(sol, contacts, h=None, tol=1e-9):
    """Complementarity of the Lemke solution: z ≥ 0, w ≥ 0, z·w = 0 and the friction
    bound Σβ ≤ μ P_n, to ``tol`` relative to the problem's size."""
    z, w = sol.z, sol.w
    scale = max(1.0, np.abs(z).max(), np.abs(w).max())
    assert z.min() >= -tol * scale and w.min() >= -tol * scale
    assert np.abs(z * w).max() <= tol * scale ** 2
    m = len(contacts)
    d = (len(z) - 2 * m) // m
    beta = z[m:m * (d + 1)].reshape(m, d)
    mu = np.array([c.mu for c in contacts])
    assert np.all(beta.sum(axis=1) <= mu * sol.P_n + tol * scale)
    check_impulses(sol, contacts, h, tol * scale)


def check_impulses(sol, contacts, h, tol, friction="pyramid", d=4):
    """Physical conditions on P, for any solver: P_n ≥ 0, no penetration, P_n (n·v⁺ + φ/h)
    = 0, |P_t| within the friction set (the pyramid's polygon lies inside the circle)."""
    for k, c in enumerate(contacts):
        n = np.asarray(c.normal) / np.linalg.norm(c.normal)
        Pn, vn = sol.P[k] @ n, sol.v_after[k] @ n + (c.gap / h if h else 0.0)
        Pt = sol.P[k] - Pn * n
        assert Pn >= -tol and vn >= -tol and abs(Pn * vn) <= tol * max(1.0, Pn, abs(vn))
        bound = c.mu * Pn * (np.cos(np.pi / d) if friction == "pyramid" else 1.0)
        assert np.linalg.norm(Pt) <= c.mu * Pn + tol
        if friction == "pyramid":             # |P_t| within the inscribed d-gon
            assert np.linalg.norm(Pt) * min_cos(Pt, n, d) <= bound + tol


def min_cos(Pt, n, d):
    """cos of the angle between P_t and the nearest edge normal of the d-gon: the polygon
    is {x: x·u_j ≤ r cos(π/d)}, u_j at angles (2j+1)π/d in the tangent plane."""
    T = lcp._tangents(n)
    x = T.T @ Pt
    if np.linalg.norm(x) == 0:
        return 1.0
    a = (2 * np.arange(d) + 1) * np.pi / d
    return max(np.cos(np.arctan2(x[1], x[0]) - a))


def unique_problem(seed, mu=0.3):
    """A chain of 8 bodies on a fixed base with 3 ground contacts on different bodies
    (K positive definite), each point approaching the ground: velocity −n plus a random
    tangential part."""
    model = rbd.random_tree(8, seed=seed, joint_types=("spherical", "revolute", "prismatic"),
                            p_chain=1.0)
    rng = np.random.default_rng(seed)
    q = rbd.random_q(model, rng)
    b = moving_bodies(model)
    contacts = random_contacts(model, q, rng, [(b[-1], 0), (b[-3], 0), (b[-5], 0)], mu=mu)
    J = ct._jacobian(model, q, lcp._check_contacts(model, contacts))
    v = [-c.normal / np.linalg.norm(c.normal) + 0.5 * rng.normal(size=3) for c in contacts]
    qd = np.linalg.lstsq(J, np.concatenate(v), rcond=None)[0]
    return model, q, qd, contacts


@pytest.mark.parametrize("seed", [4, 5, 6, 7])
def test_lemke_and_pgs_agree_where_the_solution_is_unique(seed):
    model, q, qd, contacts = unique_problem(seed)
    K = ct.delassus(model, q, contacts)
    assert np.linalg.eigvalsh(K).min() > 1e-3 * np.linalg.eigvalsh(K).max()
    lem = ct.solve_contacts(model, q, qd, contacts, solver="lemke")
    gs = ct.solve_contacts(model, q, qd, contacts, solver="pgs", tol=1e-12)
    assert np.abs(lem.P).max() > 1e-2
    check_lcp(lem, contacts)
    check_impulses(gs, contacts, None, 1e-9)
    assert gs.residual <= 1e-12
    assert np.abs(lem.P - gs.P).max() < 1e-8 * np.abs(lem.P).max()
    # the velocity change is H⁻¹ Jᵀ P (dense), and the contact velocities follow
    J, Minv = pinocchio_J_Minv(model, interop.to_pinocchio(model), q, contacts)
    assert np.allclose(lem.dqd, Minv @ J.T @ lem.P.ravel(), atol=1e-10)
    assert np.allclose(lem.v_after.ravel(), J @ (qd + lem.dqd), atol=1e-10)
    modes = {("stick" if np.linalg.norm(v - (v @ c.normal) * np.asarray(c.normal)
                                        / np.dot(c.normal, c.normal)) < 1e-9 else "slide")
             for v, c, P in zip(lem.v_after, contacts, lem.P) if np.linalg.norm(P) > 1e-9}
    assert modes, "no contact is pressed"


@pytest.mark.parametrize("friction", ["pyramid", "cone"])
def test_pgs_stops_only_when_friction_has_converged_too(friction):
    """A coarse tolerance: when PGS stops, each friction impulse maximizes the
    dissipation −v_t·P_t over its friction set to that tolerance (the residual measures
    the friction condition, not only the normal one)."""
    model, q, qd, contacts = unique_problem(6, mu=0.3)
    tol = 1e-4
    sol = ct.solve_contacts(model, q, qd, contacts, solver="pgs", friction=friction, tol=tol,
                            accept=1e-3)
    assert sol.residual <= tol and sol.iterations > 1
    dirs = lcp.friction_directions(4) if friction == "pyramid" else None
    for c, P, v in zip(lcp._check_contacts(model, contacts), sol.P, sol.v_after):
        Pn, Pt, vt = c.n @ P, c.T.T @ P, c.T.T @ v
        best = (-c.mu * Pn * np.linalg.norm(vt) if dirs is None
                else min(c.mu * Pn * dirs @ vt))      # min of v_t·x over the set
        assert vt @ Pt <= best + 10 * tol * max(1.0, np.abs(P).max())


def test_pgs_residual_measures_the_friction_condition():
    """One contact under the centre of a long box: the normal direction is decoupled
    from the tangential ones (K_nt = 0), so the normal impulse is exact after one
    sweep, while the friction impulse, with K_tt anisotropic, needs several. PGS must
    go on until the point sticks."""
    model, _ = box(size=(1.0, 0.1, 0.2))
    q = rbd.neutral_q(model)
    c = ct.Contact(1, (0.0, 0.0, -0.1), mu=2.0, name="centre")
    qd = np.array([0.0, 0.0, 0.0, 0.7, -0.4, -1.0])
    sol = ct.solve_contacts(model, q, qd, [c], solver="pgs", tol=1e-10)
    assert sol.iterations > 3 and np.abs(sol.v_after).max() < 1e-9


def brute_force_frictionless(K, b):
    """The LCP w = A x + b (A = NᵀKN) by trying every active set: the independent
    reference for frictionless problems."""
    m = len(b)
    for size in range(m + 1):
        for S in itertools.combinations(range(m), size):
            x = np.zeros(m)
            if S:
                S = list(S)
                x[S] = np.linalg.solve(K[np.ix_(S, S)], -b[S])
            w = K @ x + b
            if x.min() >= -1e-12 and w.min() >= -1e-12:
                return x
    raise AssertionError("no active set solves the LCP")


@pytest.mark.parametrize("seed", [8, 9])
def test_frictionless_agrees_with_enumeration_of_active_sets(seed):
    model, q, qd, contacts = unique_problem(seed, mu=0.0)
    more = random_contacts(model, q, np.random.default_rng(seed + 1),
                           [(moving_bodies(model)[-2], 0), (moving_bodies(model)[-4], 0)],
                           mu=0.0)
    contacts = contacts + more
    K = ct.delassus_dense(model, q, contacts)
    N = np.zeros((3 * len(contacts), len(contacts)))
    for k, c in enumerate(contacts):
        N[3 * k:3 * k + 3, k] = np.asarray(c.normal) / np.linalg.norm(c.normal)
    v = ct.contact_velocities(model, q, qd, contacts).ravel()
    x = brute_force_frictionless(N.T @ K @ N, N.T @ v)
    assert 0 < np.count_nonzero(x > 1e-9) < len(contacts)       # some press, some lift
    for solver in ("lemke", "pgs"):
        sol = ct.solve_contacts(model, q, qd, contacts, solver=solver, tol=1e-12)
        assert np.abs(sol.P_n - x).max() < 1e-8 * np.abs(x).max(), solver


def pinocchio_impulse(model, q, qd, contacts):
    """Pinocchio's impulse dynamics with every contact a bilateral CONTACT_3D (the
    point stops): q̇⁺ and the impulses (world axes, on ``body``)."""
    pm = interop.to_pinocchio(model)
    cms, cds = pinocchio_contacts(model, pm, contacts)
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd)
    v_after = pin.impulseDynamics(pm, pd, qp, vp, cms, cds, 0.0,
                                  pin.ProximalSettings(1e-12, 0.0, 1))
    return interop.v_from_pin(model, pm, v_after), np.array([cd.contact_force.linear
                                                              for cd in cds])


@pytest.mark.parametrize("seed", [10, 11])
def test_sticking_contacts_agree_with_pinocchio_impulse_dynamics(seed):
    """With enough friction every approaching contact sticks: the LCP's solution is
    Pinocchio's bilateral impulse. (Ground contacts only: Pinocchio's impulseDynamics
    ignores the velocity of a constraint's second joint, see
    test_contacts_vs_pinocchio.py; body–body contacts are checked through the Delassus
    operator above.)"""
    model, q, _, contacts = unique_problem(seed, mu=5.0)
    J = np.vstack([sum(s * rbd.point_jacobian(model, q, body, p, frame="world")
                       for body, p, s in c.sides) for c in lcp._check_contacts(model, contacts)])
    n = [np.asarray(c.normal) / np.linalg.norm(c.normal) for c in contacts]
    rng = np.random.default_rng(seed)
    for _ in range(50):               # approach speeds at which every contact is pressed
        speeds = rng.uniform(0.2, 2.0, len(contacts))
        qd = np.linalg.lstsq(J, np.concatenate([-s * nk for s, nk in zip(speeds, n)]),
                             rcond=None)[0]
        qd_pin, P_pin = pinocchio_impulse(model, q, qd, contacts)
        if all(P @ nk > 0.05 for P, nk in zip(P_pin, n)):
            break
    assert all(P @ nk > 0.05 for P, nk in zip(P_pin, n))
    for solver in ("lemke", "pgs"):
        sol = ct.solve_contacts(model, q, qd, contacts, solver=solver, tol=1e-12)
        assert np.abs(sol.P - P_pin).max() < 1e-8 * np.abs(P_pin).max(), solver
        assert np.abs(qd + sol.dqd - qd_pin).max() < 1e-8 * np.abs(qd_pin).max(), solver
        assert np.abs(sol.v_after).max() < 1e-8


def test_frictionless_agrees_with_pinocchio():
    """All contacts pressing, μ = 0: Pinocchio's impulse dynamics with the normal rows."""
    model, q, _, contacts = unique_problem(12, mu=0.0)
    J = ct._jacobian(model, q, lcp._check_contacts(model, contacts))
    N = np.array([np.asarray(c.normal) / np.linalg.norm(c.normal) for c in contacts])
    rows = np.vstack([N[k] @ J[3 * k:3 * k + 3] for k in range(len(contacts))])
    qd = np.linalg.lstsq(rows, -np.ones(len(contacts)), rcond=None)[0]
    pm = interop.to_pinocchio(model)
    pd = pm.createData()
    P = np.column_stack([interop.v_to_pin(model, pm, e) for e in np.eye(model.nv)])
    vp = pin.impulseDynamics(pm, pd, interop.q_to_pin(model, pm, q),
                             interop.v_to_pin(model, pm, qd), rows @ P.T, 0.0)
    assert np.all(pd.impulse_c > 0.05)
    for solver in ("lemke", "pgs"):
        sol = ct.solve_contacts(model, q, qd, contacts, solver=solver, tol=1e-12)
        assert np.abs(sol.P_n - pd.impulse_c).max() < 1e-8 * pd.impulse_c.max(), solver
        assert np.abs(qd + sol.dqd - interop.v_from_pin(model, pm, vp)).max() < 1e-8


def test_cone_and_pyramid_differ_only_when_sliding_off_the_pyramid_edges():
    """One contact sliding along t1 + t2 (between the pyramid's directions for d = 4):
    the cone opposes the slip, the pyramid pulls towards a corner of its square."""
    model, q, _, contacts = unique_problem(4, mu=0.2)
    c = contacts[0]
    J = ct._jacobian(model, q, lcp._check_contacts(model, [c]))
    n = np.asarray(c.normal) / np.linalg.norm(c.normal)
    T = lcp._tangents(n)
    qd = np.linalg.lstsq(J, -0.2 * n + 3 * (T[:, 0] + T[:, 1]), rcond=None)[0]
    cone = ct.solve_contacts(model, q, qd, [c], solver="pgs", friction="cone", tol=1e-12)
    pyr = ct.solve_contacts(model, q, qd, [c], solver="pgs", friction="pyramid", tol=1e-12)
    lem = ct.solve_contacts(model, q, qd, [c], solver="lemke")
    assert np.abs(pyr.P - lem.P).max() < 1e-8 * np.abs(lem.P).max()
    for s, bound in ((cone, 1.0), (pyr, np.cos(np.pi / 4))):
        Pt = s.P[0] - (s.P[0] @ n) * n
        assert np.linalg.norm(Pt) <= c.mu * s.P_n[0] * (1 + 1e-9)
        vt = s.v_after[0] - (s.v_after[0] @ n) * n
        assert np.linalg.norm(vt) > 0.1                        # it slides
        assert np.linalg.norm(Pt) > 0.99 * bound * c.mu * s.P_n[0] - 1e-12
    vt = cone.v_after[0] - (cone.v_after[0] @ n) * n
    Pt = cone.P[0] - (cone.P[0] @ n) * n
    assert np.allclose(Pt / np.linalg.norm(Pt), -vt / np.linalg.norm(vt), atol=1e-7)


# ------------------------------------------------------- solvers: failures reported

def test_lemke_reports_a_ray_and_the_pivot_cap():
    with pytest.raises(lcp.LCPRayTermination, match=r"my problem: .*ray \(z\[0\] can grow"):
        lcp.lemke([[-1.0]], [-1.0], what="my problem")       # w = −z − 1 ≥ 0: infeasible
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert np.allclose(lcp.lemke(M, [-1.0, -1.0]).z, [1 / 3, 1 / 3])
    with pytest.raises(lcp.LCPRayTermination, match="after 1 pivots"):
        lcp.lemke(M, [-1.0, -1.0], max_pivots=1)
    with pytest.raises(ValueError, match="finite n x n"):
        lcp.lemke(M, [np.nan, 1.0])


def test_lemke_degenerate_start():
    """All entries of b equal (as for a box resting on four corners): z0 must enter at
    the *last* of the tied rows for the tableau to stay lexicographically positive;
    with the first, Lemke ends on a ray for this problem."""
    M, b = np.array([[0.0, 1.0], [2.0, 1.0]]), np.array([-1.0, -1.0])
    z = lcp.lemke(M, b).z
    w = M @ z + b
    assert z.min() >= 0 and w.min() >= -1e-12 and abs(z @ w) < 1e-12 and z.max() > 0


def resting_box(mu=0.5):
    model, corners = box()
    q = rbd.neutral_q(model)
    q[2] = corners[0][2] * -1.0                               # corners on z = 0
    contacts = [ct.Contact(1, p, mu=mu, name=f"corner {k}") for k, p in enumerate(corners)]
    qd_free = np.zeros(6)
    qd_free[5] = -9.81 * 0.01                                 # one step of gravity (body z)
    return model, q, qd_free, contacts


def test_pgs_reports_non_convergence_with_the_residual():
    model, q, qd, contacts = resting_box()
    with pytest.warns(lcp.ContactWarning, match=r"residual [0-9.e-]+ > tol 1e-09 \(relative to "
                                               r"the speed [0-9.e-]+ m/s\), largest at contact \d \('corner \d'\)"):
        sol = ct.solve_contacts(model, q, qd, contacts, solver="pgs", max_iter=2)
    assert sol.residual > 1e-9 and sol.iterations == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = ct.solve_contacts(model, q, qd, contacts, solver="pgs")
    assert sol.residual <= 1e-9


# ------------------------------------------------------------------------- the box

def test_box_dropped_on_the_floor_comes_to_rest_on_four_corners():
    model, corners = box()
    mass, h = model.I[1][5, 5], 0.01
    q0 = rbd.neutral_q(model)
    q0[:3] = [0.0, 0.0, 0.4]
    q0[3:] = [np.cos(0.15), np.sin(0.15) * 0.6, np.sin(0.15) * 0.8, 0.0]   # tilted
    qd0 = np.array([0.0, 0.0, 0.0, 0.8, 0.0, 0.0])
    contacts = plane_contacts(model, [(1, p) for p in corners], mu=0.6, margin=0.1)
    for solver in ("lemke", "pgs"):
        run = ct.simulate(model, q0, qd0, 120 * h, h, contacts=contacts, solver=solver,
                          tol=1e-10)
        impacts = 0
        for q, qd, sol, used in zip(run.q[:-1], run.qd[1:], run.solutions, run.contacts):
            if sol is None:
                continue
            tol = 1e-9 if solver == "lemke" else 1e-7
            if solver == "lemke":
                check_lcp(sol, used, h)
            check_impulses(sol, used, h, tol)
            # the impulse never adds kinetic energy (zero restitution)
            qd_free = qd - sol.dqd
            E_free, E_after = rbd.energy(model, q, qd_free), rbd.energy(model, q, qd)
            assert E_after <= E_free + 1e-12 * abs(E_free)
            impacts += np.abs(sol.P_n).max() > 3 * mass * 9.81 * h
        # q moves with the new velocity (on the Lie group): the corners never sink in
        for k in range(len(run.t) - 1):
            assert np.allclose(run.q[k + 1], rbd.integrate_q(model, run.q[k], h * run.qd[k + 1]))
        lowest = min((rbd.body_pose(rbd.forward_kinematics(model, q)[1])[1]
                      + rbd.body_pose(rbd.forward_kinematics(model, q)[1])[0] @ p)[2]
                     for q in run.q for p in corners)
        assert lowest > -1e-3, solver
        assert impacts >= 1                                  # there was an impact
        last = run.solutions[-1]
        assert len(run.contacts[-1]) == 4 and np.abs(run.qd[-1]).max() < 1e-8, solver
        assert abs(last.P_n.sum() - mass * 9.81 * h) < 1e-9 * mass * 9.81 * h, solver
        assert np.all(last.P_n >= -1e-12)


def test_the_box_at_rest_has_many_solutions():
    """Four corners, six velocities: the normal impulses are not unique. Lemke and PGS
    find different ones, both exact."""
    model, q, qd, contacts = resting_box()
    lem = ct.solve_contacts(model, q, qd, contacts, solver="lemke")
    gs = ct.solve_contacts(model, q, qd, contacts, solver="pgs", tol=1e-12)
    total = model.I[1][5, 5] * 9.81 * 0.01
    for sol in (lem, gs):
        assert abs(sol.P_n.sum() - total) < 1e-9 * total
        assert np.abs(sol.v_after).max() < 1e-8
    assert np.abs(lem.P_n - gs.P_n).max() > 0.1 * total


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("change, message", [
    (dict(mu=-0.1), r"contact 0 \('bad'\): friction mu must be a finite number ≥ 0"),
    (dict(mu=float("nan")), r"contact 0 \('bad'\): friction mu"),
    (dict(point=(0.0, 1.0)), r"contact 0 \('bad'\): body point must be a finite 3-vector"),
    (dict(point=(0.0, np.inf, 0.0)), r"contact 0 \('bad'\): body point"),
    (dict(normal=(0.0, 0.0, 0.0)), r"contact 0 \('bad'\): normal must be non-zero"),
    (dict(body=0), r"contact 0 \('bad'\): body must be a body index in 1\.\.4"),
    (dict(other=7), r"contact 0 \('bad'\): other must be a body index in 0\.\.4"),
    (dict(gap=-0.1), r"contact 0 \('bad'\): gap must be a finite number ≥ 0"),
    (dict(body=2), r"contact 0 \('bad'\): body 2 \('massless'\) is massless"),
    (dict(body=4), r"contact 0 \('bad'\): body 4 \('welded'\) cannot move .* inside a "
                   r"fixed body"),
])
def test_bad_contacts_are_named(change, message):
    mcI = rbd.spatial.mcI
    model = rbd.Model(parent=[-1, 0, 1, 2, 0],
                      joints=[None] + [rbd.Revolute([1.0, 0, 0])] * 3 + [rbd.Fixed()],
                      Xtree=[None, np.eye(6), rbd.spatial.plux(np.eye(3), [0, 1.0, 0]),
                             rbd.spatial.plux(np.eye(3), [0, 1.0, 0]), np.eye(6)],
                      I=[None, mcI(1.0, np.array([0, 0.5, 0]), np.eye(3) * 0.1),
                         np.zeros((6, 6)), mcI(1.0, np.array([0, 0.5, 0]), np.eye(3) * 0.1),
                         mcI(1.0, np.zeros(3), np.eye(3))],
                      names=["base", "j1", "j2", "j3", "weld"],
                      body_names=["base", "link", "massless", "tip", "welded"])
    good = dict(body=1, point=(0.0, 1.0, 0.0), mu=0.2, name="bad")
    q, qd = np.zeros(3), np.array([0.0, -1.0, 0.5])
    ct.solve_contacts(model, q, qd, [ct.Contact(**good)])          # the good one works
    with pytest.raises(ct.ContactError, match=message):
        ct.solve_contacts(model, q, qd, [ct.Contact(**{**good, **change})])


def test_other_bad_input():
    model, q, qd, contacts = resting_box()
    with pytest.raises(ct.ContactError, match="no contacts"):
        ct.solve_contacts(model, q, qd, [])
    with pytest.raises(ct.ContactError, match="solver must be 'lemke' or 'pgs'"):
        ct.solve_contacts(model, q, qd, contacts, solver="dantzig")
    with pytest.raises(ct.ContactError, match="friction must be 'pyramid' or 'cone'"):
        ct.solve_contacts(model, q, qd, contacts, solver="pgs", friction="ellipse")
    with pytest.raises(ct.ContactError, match="d ≥ 3"):
        ct.solve_contacts(model, q, qd, contacts, d=2)
    with pytest.raises(ct.ContactError, match="time step h must be a finite number > 0"):
        ct.step(model, q, qd, np.zeros(6), 0.0, contacts)
    with pytest.raises(ValueError, match=r"qd\[1\] is nan"):
        ct.solve_contacts(model, q, [0, np.nan, 0, 0, 0, 0], contacts)
    with pytest.raises(ValueError, match=r"qd has shape \(5,\)"):
        ct.solve_contacts(model, q, np.zeros(5), contacts)
    with pytest.raises(ct.ContactError, match=r"2 contacts need K of shape \(6, 6\)"):
        lcp.pgs(np.eye(6), np.zeros(3), contacts[:2])
    with pytest.raises(ct.ContactError, match="K and v must be finite"):
        ct.contact_lcp(np.full((6, 6), np.nan), np.zeros((2, 3)), contacts[:2])
    with pytest.raises(ct.ContactError, match=r"contact 1 \('corner 1'\): the point "
                                              r"cannot move along its normal"):
        lcp.pgs(np.diag([1.0, 1, 1, 1, 1, 0]), np.zeros((2, 3)), contacts[:2])
    with pytest.raises(ct.ContactError, match="expected a Contact"):
        ct.solve_contacts(model, q, qd, [(1, (0, 0, 0))])
    # a point that cannot move along its normal: a slider moving sideways only
    slider = rbd.Model(parent=[-1, 0], joints=[None, rbd.Prismatic([1.0, 0, 0])],
                       Xtree=[None, np.eye(6)],
                       I=[None, rbd.spatial.mcI(1.0, np.zeros(3), np.eye(3))])
    with pytest.raises(ct.ContactError, match=r"contact 0 \('rail'\): the point cannot "
                                              r"move along its normal"):
        ct.solve_contacts(slider, [0.0], [0.0], [ct.Contact(1, (0, 0, 0), name="rail")])


def box_problem():
    """The resting box's contact problem at the solver level: K, v, the contacts."""
    model, q, qd, contacts = resting_box()
    return (ct.delassus(model, q, contacts), ct.contact_velocities(model, q, qd, contacts),
            contacts)


@pytest.mark.parametrize("h", [0.0, -0.01, np.nan, np.inf, True])
@pytest.mark.parametrize("solver", ["contact_lcp", "pgs", "contact_residuals"])
def test_a_bad_time_step_is_named_by_every_solver_function(solver, h):
    K, v, contacts = box_problem()
    call = {"contact_lcp": lambda: ct.contact_lcp(K, v, contacts, h),
            "pgs": lambda: lcp.pgs(K, v, contacts, h),
            "contact_residuals": lambda: lcp.contact_residuals(K, v, contacts,
                                                              np.zeros((4, 3)), h)}[solver]
    with pytest.raises(ct.ContactError, match=r"time step h must be a finite number > 0"):
        call()


def test_a_matrix_that_is_no_delassus_operator_is_refused():
    K, v, contacts = box_problem()
    skew = K.copy()
    skew[0, 1] += 0.1 * np.abs(K).max()
    for call in (ct.contact_lcp, lcp.pgs):
        with pytest.raises(ct.ContactError, match=r"K must be symmetric .* max \|K − Kᵀ\|"):
            call(skew, v, contacts)
        with pytest.raises(ct.ContactError, match="K must be positive semi-definite"):
            call(-K, v, contacts)


@pytest.mark.parametrize("call, message", [
    (lambda m, q, qd, cs: lcp.lemke(np.eye(2), [-1.0, -1.0], max_pivots=0),
     "max_pivots must be an integer ≥ 1, got 0"),
    (lambda m, q, qd, cs: lcp.lemke(np.eye(2), [-1.0, -1.0], max_pivots=2.5),
     "max_pivots must be an integer ≥ 1, got 2.5"),
    (lambda m, q, qd, cs: ct.solve_contacts(m, q, qd, cs, solver="pgs", max_iter=0),
     "max_iter must be an integer ≥ 1, got 0"),
    (lambda m, q, qd, cs: ct.solve_contacts(m, q, qd, cs, solver="pgs", max_iter=2.5),
     "max_iter must be an integer ≥ 1, got 2.5"),
    (lambda m, q, qd, cs: ct.solve_contacts(m, q, qd, cs, solver="pgs", tol=-1.0),
     "tol must be a finite number ≥ 0"),
    (lambda m, q, qd, cs: ct.solve_contacts(m, q, qd, cs, friction="cone"),
     "Lemke solves the friction pyramid's LCP, not friction='cone': use solver='pgs'"),
], ids=["max_pivots=0", "max_pivots=2.5", "max_iter=0", "max_iter=2.5", "tol<0",
        "lemke+cone"])
def test_solver_options_are_checked(call, message):
    model, q, qd, contacts = resting_box()
    with pytest.raises(ct.ContactError, match=message):
        call(model, q, qd, contacts)


def test_plane_contacts_checks_its_arguments_when_it_is_made():
    model, corners = box()
    points = [(1, p) for p in corners]
    for kwargs, message in ((dict(normal=(0.0, 0.0, 0.0)), "plane normal must be non-zero"),
                            (dict(margin=-0.1), "margin must be a finite number ≥ 0"),
                            (dict(mu=np.nan), "friction mu must be a finite number"),
                            (dict(names=["a"]), "4 points need as many names, got 1")):
        with pytest.raises(ct.ContactError, match=message):
            plane_contacts(model, points, **kwargs)
    with pytest.raises(ct.ContactError, match=r"contact 1 \('point 1'\): body must be a "
                                              r"body index in 1\.\.1 .*got 5"):
        plane_contacts(model, [(1, corners[0]), (5, corners[1])])
    with pytest.raises(ct.ContactError, match=r"contact 0 \('point 0'\): body point must "
                                              r"be a finite 3-vector"):
        plane_contacts(model, [(1, (0.0, 0.0))])


def test_contacts_come_as_a_list_a_generator_one_contact_or_a_function():
    """Every accepted form gives the same impulses as the list; None and a bare body
    index are named."""
    model, q, qd, contacts = resting_box()
    ref = ct.solve_contacts(model, q, qd, contacts).P
    for form in (tuple(contacts), (c for c in contacts), lambda q_: contacts,
                 lambda q_: (c for c in contacts)):
        assert np.array_equal(ct.solve_contacts(model, q, qd, form).P, ref)
    one = ct.solve_contacts(model, q, qd, contacts[1])
    assert np.array_equal(one.P, ct.solve_contacts(model, q, qd, [contacts[1]]).P)
    for empty in (None, [], lambda q_: None):
        with pytest.raises(ct.ContactError, match="no contacts given"):
            ct.solve_contacts(model, q, qd, empty)
    with pytest.raises(ct.ContactError, match="contacts must be a Contact or a list of "
                                              "them, got int"):
        ct.solve_contacts(model, q, qd, 3)
    # step: a function giving one Contact or None; None is a step without contact
    tau = np.zeros(6)
    q1, qd1, sol = ct.step(model, q, qd, tau, 0.01, lambda q_: contacts[1])
    assert sol.P.shape == (1, 3) and sol.P_n[0] > 0
    q2, qd2, sol = ct.step(model, q, qd, tau, 0.01, lambda q_: None)
    assert sol is None and np.allclose(qd2, qd + 0.01 * rbd.aba(model, q, qd, tau))


def test_a_body_cannot_touch_itself():
    model, q, qd, contacts = resting_box()
    with pytest.raises(ct.ContactError, match=r"contact 0 \('self'\): body 1 \('box'\) "
                                              r"touches itself"):
        ct.solve_contacts(model, q, qd, [ct.Contact(1, (0.0, 0, 0), other=1, name="self")])


@pytest.mark.parametrize("t_end, dt, message", [
    (-1.0, 0.01, r"t_end must be finite and >= 0, got -1.0"),
    (1.0, 0.0, r"dt must be finite and > 0, got 0.0"),
    (np.nan, 0.01, r"t_end must be finite and >= 0, got nan"),
    ("soon", 0.01, r"t_end must be a real number, got 'soon'"),
])
def test_simulate_takes_its_times_as_every_simulate_does(t_end, dt, message):
    model, q, qd, contacts = resting_box()
    with pytest.raises(rbd.RbdlearnError, match=message):
        ct.simulate(model, q, qd, t_end, dt, contacts=contacts)


def test_simulate_ends_at_t_end_and_needs_its_contacts_by_name():
    """The time grid of integrate.time_grid: steps of dt, the last one shortened to end at
    t_end; the contacts are a keyword argument (None: no contact)."""
    model, q, qd, contacts = resting_box()
    run = ct.simulate(model, q, qd, 0.025, 0.01, contacts=contacts)
    assert isinstance(run, rbd.Trajectory) and np.allclose(run.t, [0.0, 0.01, 0.02, 0.025])
    assert len(run.q) == len(run.qd) == 4 and len(run.solutions) == len(run.contacts) == 3
    with pytest.raises(TypeError):
        ct.simulate(model, q, qd, 0.02, 0.01, contacts)          # contacts by name only
    assert len(ct.simulate(model, q, qd, 0.02, 0.01, contacts=None).solutions) == 2


def test_a_gap_too_large_for_the_step_is_named():
    model, q, qd, contacts = resting_box()
    far = ct.Contact(1, contacts[0].point, gap=1e308, name="far")
    with pytest.raises(ct.ContactError, match=r"contact 0 \('far'\): n·v \+ gap/h = inf "
                                              r"is not finite"):
        ct.solve_contacts(model, q, qd, [far], h=0.01)


def test_a_diverging_contact_simulation_says_when():
    model, q, qd, contacts = resting_box()

    def runaway(t, q, qd):                     # feeds energy in faster and faster
        return 1e3 * np.abs(qd).max() * np.r_[qd[3:], qd[:3]]
    with pytest.raises(ValueError, match=r"simulate diverged between t = [0-9.]+ and "
                                         r"[0-9.]+: the state overflowed"):
        ct.simulate(model, q, np.ones(6), 5.0, 0.01,
                    contacts=plane_contacts(model, [(1, p) for p in box()[1]], mu=0.5),
                    tau=runaway)


def test_a_run_too_long_for_memory_is_refused_up_front(monkeypatch):
    """The same limit as rbdlearn.simulate's (integrate.check_run_size), counting t, q and
    q̇ of every step: 1 + 7 + 6 = 14 numbers, 112 bytes, for the box. (The limit is lowered
    so that a run that is not refused ends quickly.)"""
    model, q, qd, contacts = resting_box()
    monkeypatch.setattr(rbd.integrate, "MAX_TRAJECTORY_BYTES", 8 * 112)
    assert len(ct.simulate(model, q, qd, 0.07, 0.01, contacts=contacts).t) == 8
    with pytest.raises(ValueError, match=r"contact.simulate: 8 steps from t = 0 to 0.08 by "
                                         r"dt = 0.01 would store 9 states of 14 numbers, "
                                         r"9.388e-07 GiB, more than the 8.34465e-07 GiB of "
                                         r"integrate.MAX_TRAJECTORY_BYTES"):
        ct.simulate(model, q, qd, 0.08, 0.01, contacts=contacts)


def test_a_singular_mass_matrix_in_a_contact_simulation_says_when():
    model = rbd.planar_chain(2, mass=[1.0, 0.0], inertia=[0.1, 0.0])
    zero = np.zeros(2)
    with pytest.raises(SingularArticulatedInertia, match=r"simulate: in the step from t = 0 to "
                                                         r"0.01, the mass matrix H\(q\) of "
                                                         r"Model.* is singular: body 2"):
        ct.simulate(model, zero, zero, 0.03, 0.01, contacts=[])


def test_a_huge_friction_coefficient_is_solved_or_named():
    """μ = 1e12 (the old Lemke ended on a ray): the resting and the sliding box are
    solved, and the answer meets the contact conditions with the true μ."""
    model, q, qd, contacts = resting_box(mu=1e12)
    for push in (np.zeros(6), np.array([0, 0, 0, 1.0, 0.5, 0.0])):
        sol = ct.solve_contacts(model, q, qd + push, contacts, h=0.01)
        assert sol.residuals.worst < 1e-9
        pressed = sol.P_n > 1e-9                         # infinite friction: these stick
        assert pressed.any() and np.abs(sol.v_after[pressed]).max() < 1e-9
