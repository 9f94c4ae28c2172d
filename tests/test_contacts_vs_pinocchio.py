"""Constrained dynamics against Pinocchio's own constrained algorithms, on random trees
and on robots of example-robot-data (each URDF parsed by rbdlearn and, independently, by
Pinocchio), fixed and floating:

* Chapter 5 (closed_chains): loops closed by a weld (Fixed cut joint) or a point
  (Spherical cut joint), to the ground or between two bodies, are Pinocchio's
  ``CONTACT_6D`` / ``CONTACT_3D`` ``RigidConstraintModel`` s. ``forward_dynamics`` (and
  ``forward_dynamics_kkt``) against ``pinocchio.constraintDynamics``: q̈, and the
  constraint force implied by rbdlearn's q̈ against Pinocchio's, in the LOCAL and the
  LOCAL_WORLD_ALIGNED frame. ``connect`` (the velocity jump of eqs. 29–33) against
  ``pinocchio.impulseDynamics`` with restitution 0 — with the explicit constraint
  Jacobian, and with the RigidConstraintModels when every constraint is to the world
  (that form ignores joint 2's velocity, see :func:`pinocchio_constrained`): q̇⁺ and
  the impulse.
* Chapter 4 (constrained): a frictionless hand on a floor or a sphere (one scalar
  constraint, which no Pinocchio ContactType is) against Pinocchio's KKT solver
  ``pinocchio.forwardDynamics`` fed with the constraint row built from Pinocchio's own
  frame Jacobian and classical acceleration: q̈, f_n and the normal response A. The
  paper's friction law f_t = K f_n along −ṙ has no Pinocchio counterpart (a bilateral
  CONTACT_3D would stop the sliding), so K = 0 here.
* Chapter 2 (aba): the inter-body inverse inertia Λ_ji (and Θ_c) of seed 000 §2.8
  against J_j H⁻¹ J_iᵀ from ``pinocchio.computeMinverse`` and ``pinocchio.getFrameJacobian``;
  ``contact_impulse`` (its point inverse inertia K, a frictionless and a sticking impact)
  against ``pinocchio.impulseDynamics``.

Pinocchio's multipliers λ are forces on joint 1 of a constraint (M q̈ + b = τ + Jᵀλ),
[linear; angular] in the frame c1 (LOCAL) or at c1 with world axes
(LOCAL_WORLD_ALIGNED); rbdlearn's are [angular; linear] in the virtual link's frame.
"""

import functools
import types
import zlib

import numpy as np
import pytest

import rbdlearn as rbd
from conftest import pin_velocity_map, rel_err
from rbdlearn import closed_chains as cc
from rbdlearn import constrained as ch4
from rbdlearn import interop, urdf
from rbdlearn.spatial import exp_so3, plux, to_angular_linear

pin = pytest.importorskip("pinocchio")

# Pivoted splits, impulses through pseudo-inverses and least squares: these tests run
# again under a second floating-point environment (the marker's note in pyproject.toml).
pytestmark = pytest.mark.fp_sensitive

TOL = 1e-9
KINDS = {rbd.Fixed: "CONTACT_6D", rbd.Spherical: "CONTACT_3D"}   # cut joint -> Pinocchio


# --------------------------------------------------------------------------- models

ROBOTS = {"ur5": "ur_description/urdf/ur5_robot.urdf",
          "panda": "panda_description/urdf/panda.urdf",
          "talos": "talos_data/robots/talos_reduced.urdf"}


@functools.lru_cache(maxsize=None)
def robot(name, floating):
    """(model, Pinocchio model, velocity map P) of an example robot, each package parsing
    the URDF itself (panda's mimic finger joints independent in both)."""
    path = urdf.example_robot_path(ROBOTS[name])
    model = urdf.load(path, floating_base=floating, mimic=False)
    pm = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromUrdf(path))
    assert model.names[1:] == list(pm.names)[1:] and model.nv == pm.nv
    return types.SimpleNamespace(model=model, pm=pm, P=pin_velocity_map(model, pm),
                                 floating=floating)


def rng_for(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def body(model, joint_name):
    return model.names.index(joint_name)


def random_frame(rng, size=0.15):
    """A Plücker transform to a random frame near a body's origin."""
    return plux(exp_so3(rng.normal(size=3)), rng.uniform(-size, size, 3))


def anchor(model, pm, i):
    """(Pinocchio joint, placement of body i's frame in it); (0, identity) for the ground.
    Body i is the Pinocchio BODY frame named ``model.body_names[i]`` (``to_pinocchio``
    names its frames so, and a URDF's link frames carry the link names)."""
    if i == 0:
        return 0, pin.SE3.Identity()
    name = model.body_names[i]
    assert pm.existFrame(name, pin.FrameType.BODY), name
    f = pm.frames[pm.getFrameId(name, pin.FrameType.BODY)]
    return f.parentJoint, f.placement


def path(model, a, b):
    """The bodies whose joints lie between bodies a and b (b = 0: the ground)."""
    return set(model.ancestors(a)) ^ (set(model.ancestors(b)) if b else set())


def path_dof(model, a, b):
    return sum(model.joints[k].nv for k in path(model, a, b))


def best_pairs(model, count, to_ground, taken=()):
    """``count`` pairs (a, b), b = 0 if ``to_ground`` else another body, one after the
    other: each with the most joint velocities on its path that no path of an earlier
    pair (or of ``taken``) uses, so that their constraints are independent."""
    out = list(taken)
    while len(out) < len(taken) + count:
        bodies = {x for ab in out for x in ab} - {0}
        joints = set().union(*(path(model, *ab) for ab in out))
        pairs = [(a, b) for a in range(1, model.N + 1)
                 for b in ([0] if to_ground else range(1, a))
                 if a not in bodies and b not in bodies]
        out.append(max(pairs, key=lambda ab: sum(model.joints[k].nv
                                                 for k in path(model, *ab) - joints)))
    return out[len(taken):]


def close_loops(model, q, loops, rng):
    """A closed Mechanism of ``model``: each (joint, a, b) of ``loops`` a loop with cut
    ``joint`` between bodies a and b (0: the ground), closed at q at a random frame
    near a (ground) or b. Returns (mechanism, q with the cut joints' neutral q)."""
    mech, X0 = cc.Mechanism(model), rbd.forward_kinematics(model, q)
    for k, (joint, a, b) in enumerate(loops):
        Xb = random_frame(rng) @ X0[a] if b == 0 else random_frame(rng)
        mech, q = cc.add_loop_at(mech, q, a, b, joint, Xb, name=f"L{k + 1}")
    return mech, q


def consistent_state(mech, model, qm, rng):
    """(q̇ of the mechanism that keeps its loops, a random τ: zero on the cut joints)."""
    qd = cc.reduction(mech, qm, rng.normal(size=mech.model.nv)).qd
    tau = np.concatenate([rng.normal(size=model.nv), np.zeros(mech.model.nv - model.nv)])
    return qd, tau


# ----------------------------------------------------------------------- Pinocchio side

def pin_constraints(model, pm, mech, frame):
    """One RigidConstraintModel per loop of ``mech``: joint 1 carries the virtual link's
    frame (on body a), joint 2 the real link's frame (on b, or the world)."""
    cms = pin.StdVec_RigidConstraintModel()
    for loop in mech.loops:
        v = loop.virtual
        kind = getattr(pin.ContactType, KINDS[type(mech.model.joints[v])])
        j1, M1 = anchor(model, pm, mech.model.parent[v])
        j2, M2 = anchor(model, pm, loop.real)
        cms.append(pin.RigidConstraintModel(
            kind, pm, j1, M1 * interop.se3_from_X(mech.model.Xtree[v]),
            j2, M2 * interop.se3_from_X(loop.Xreal), frame))
    return cms


def split_multipliers(cms, lam):
    """Pinocchio's stacked multipliers, one per constraint: [n; f] (6D) or f (3D)."""
    out, k = [], 0
    for cm in cms:
        if cm.type == pin.ContactType.CONTACT_6D:
            out.append(to_angular_linear(lam[k:k + 6]))
            k += 6
        else:
            out.append(np.array(lam[k:k + 3]))
            k += 3
    return out


def pinocchio_constrained(algorithm, r, mech, q, qd, tau=None, frame=pin.LOCAL):
    """Pinocchio on the loops of ``mech``, in rbdlearn's layout.

    "forward": ``constraintDynamics`` → [(q̈, per-loop λ)].
    "impulse" (restitution 0) → [(q̇⁺, per-loop impulses)] from ``impulseDynamics`` with
    the explicit constraint Jacobian (Pinocchio's KKT impulse) and, when every
    constraint is to the world, also from ``impulseDynamics`` with the
    RigidConstraintModels. (That form takes the pre-impact velocity of c1 alone,
    ``data.ov[joint1_id]``, as the constraint velocity — see impulse-dynamics.hxx — so
    it ignores joint 2's motion: its q̇⁺ breaks a constraint between two moving bodies.)
    Also returns Pinocchio's constraint Jacobian (rbdlearn's velocity columns) and the
    rotations of the frames c1. λ is [n; f] for a 6D, f for a 3D constraint."""
    model, pm = r.model, r.pm
    cms = pin_constraints(model, pm, mech, frame)
    cds = pin.StdVec_RigidConstraintData()
    for cm in cms:
        cds.append(cm.createData())
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    qp = interop.q_to_pin(model, pm, q[:model.nq])
    vp = interop.v_to_pin(model, pm, qd[:model.nv])
    taup = interop.v_to_pin(model, pm, tau[:model.nv]) if tau is not None else 0 * vp
    exact = pin.ProximalSettings(1e-12, 0.0, 1)         # μ = 0: the plain KKT solution
    qdd = pin.constraintDynamics(pm, pd, qp, vp, taup, cms, cds, exact)
    Jp = pin.getConstraintsJacobian(pm, pd, cms, cds)    # valid once the datas are computed
    R = [np.array(cd.oMc1.rotation) for cd in cds]
    if algorithm == "forward":
        lam = [to_angular_linear(cd.contact_force.vector) if cm.type == pin.ContactType.CONTACT_6D
               else np.array(cd.contact_force.linear) for cm, cd in zip(cms, cds)]
        results = [("constraintDynamics", interop.v_from_pin(model, pm, qdd), lam)]
    else:
        pd_kkt = pm.createData()
        v_after = pin.impulseDynamics(pm, pd_kkt, qp, vp, Jp, 0.0)
        results = [("impulseDynamics(J)", interop.v_from_pin(model, pm, v_after),
                    split_multipliers(cms, pd_kkt.impulse_c))]
        if all(cm.joint2_id == 0 for cm in cms):
            v_after = pin.impulseDynamics(pm, pd, qp, vp, cms, cds, 0.0, exact)
            lam = [to_angular_linear(cd.contact_force.vector)
                   if cm.type == pin.ContactType.CONTACT_6D else np.array(cd.contact_force.linear)
                   for cm, cd in zip(cms, cds)]
            results.append(("impulseDynamics(constraints)",
                             interop.v_from_pin(model, pm, v_after), lam))
    return results, Jp @ r.P, R


def implied_multipliers(mech, model, qm, qd, qdd, tau):
    """The constraint forces that rbdlearn's q̈ implies: τ_c = RNEA(q, q̇, q̈) − τ of the
    open tree, written as Σ_k G_kᵀ λ_k with G_k the rows of −J_L (loop_jacobian: the
    virtual link's velocity relative to the real one, virtual-link coordinates) that a
    weld (all 6) or a point (linear 3) constrains. Also returns the residual of that fit
    (zero when τ_c is a pure constraint force)."""
    nv = model.nv
    tau_c = rbd.rnea(model, qm[:model.nq], qd[:nv], qdd[:nv]) - tau[:nv]
    JL = cc.loop_jacobian(mech, qm)[:, :nv]
    rows, sizes = [], []
    for k, loop in enumerate(mech.loops):
        first = 0 if isinstance(mech.model.joints[loop.virtual], rbd.Fixed) else 3
        rows += range(6 * k + first, 6 * k + 6)
        sizes.append(6 - first)
    G = -JL[rows]
    lam = np.linalg.lstsq(G.T, tau_c, rcond=None)[0]
    return np.split(lam, np.cumsum(sizes)[:-1]), rel_err(G.T @ lam, tau_c)


def world_aligned(lam, R):
    """A LOCAL multiplier ([n; f] or f) with its vectors turned into world axes by R."""
    return np.concatenate([R @ lam[:3], R @ lam[3:]]) if lam.size == 6 else R @ lam


def pinocchio_Minv(pm, qp):
    """Pinocchio's H⁻¹ by computeMinverse (its upper triangle, mirrored)."""
    Minv = pin.computeMinverse(pm, pm.createData(), qp)
    return np.triu(Minv) + np.triu(Minv, 1).T


def product_err(actual, A, M, B, norms=None):
    """max |actual − A M Bᵀ| relative to ‖A‖₂‖M‖₂‖B‖₂ (at least 1), the scale of the
    round-off in such a product (``norms``: the three norms, if known). computeMinverse
    is itself off by about cond(H)·ε·‖H⁻¹‖ — 2.6e-10 of 26 on the 40-body chain, where
    H⁻¹ by ABA columns is off by 5e-12 — and J H⁻¹ Jᵀ magnifies that by ‖J‖²."""
    norms = norms or [np.linalg.norm(X, 2) for X in (A, M, B)]
    return float(np.abs(np.asarray(actual) - A @ M @ B.T).max() / max(1.0, np.prod(norms)))


# -------------------------------------------------- (a) chapter 5: loops vs constraintDynamics

def check_forward(r, mech, qm, rng):
    model = r.model
    qd, tau = consistent_state(mech, model, qm, rng)
    split = cc.choose_split(mech, qm)
    rows = sum(6 if isinstance(mech.model.joints[lp.virtual], rbd.Fixed) else 3
               for lp in mech.loops)
    [(_, qdd_local, lam_local)], J, _ = pinocchio_constrained("forward", r, mech, qm, qd, tau)
    # the case is what it claims: independent constraints, motion left, loops at rest
    # (rbdlearn's θ_G count N_F is Pinocchio's nv minus its independent constraint rows)
    assert np.linalg.matrix_rank(J) == rows and split.NF == model.nv - rows > 0, (rows, split)
    assert np.abs(J @ qd[:model.nv]).max() < 1e-10 * max(1.0, np.abs(qd).max())
    assert np.abs(qd).max() > 0.1 and np.abs(tau).max() > 0.1
    qdd = cc.forward_dynamics(mech, qm, qd, tau)
    assert rel_err(qdd[:model.nv], qdd_local) < TOL, "q̈, unit-vector method"
    assert rel_err(cc.forward_dynamics_kkt(mech, qm, qd, tau)[:model.nv], qdd_local) < TOL, \
        "q̈, rbdlearn's KKT"
    lam, residual = implied_multipliers(mech, model, qm, qd, qdd, tau)
    assert residual < TOL, "rbdlearn's q̈ leaves a joint force that is no constraint force"
    for k, (mine, theirs) in enumerate(zip(lam, lam_local)):
        assert rel_err(mine, theirs) < TOL, f"λ of loop {k + 1}, LOCAL"
    # the same motion with the forces reported in world axes at the contact
    [(_, qdd_world, lam_world)], _, R = pinocchio_constrained("forward", r, mech, qm, qd, tau,
                                                              pin.LOCAL_WORLD_ALIGNED)
    assert rel_err(qdd[:model.nv], qdd_world) < TOL
    X0 = rbd.forward_kinematics(mech.model, qm)
    for k, loop in enumerate(mech.loops):
        R_virtual = rbd.body_pose(X0[loop.virtual])[0]           # virtual link → world
        assert rel_err(R_virtual, R[k]) < TOL, f"frame of loop {k + 1}"
        assert rel_err(world_aligned(lam[k], R_virtual), lam_world[k]) < TOL, \
            f"λ of loop {k + 1}, LOCAL_WORLD_ALIGNED"
        assert np.abs(lam[k]).max() > 1e-3                     # the loop does carry force


def test_loop_forward_dynamics_matches_constraint_dynamics_on_random_trees(tree):
    """A weld and a point: both to the ground (even seeds), or each between two bodies
    (odd seeds) — so fixed and floating trees have both."""
    where = ("to-ground", "between-bodies")[tree.seed % 2]
    model, rng = tree.model, rng_for("forward", tree.seed, where)
    q = rbd.random_q(model, rng)
    pairs = best_pairs(model, 2, where == "to-ground")
    loops = [(rbd.Fixed(), *pairs[0]), (rbd.Spherical(), *pairs[1])]
    mech, qm = close_loops(model, q, loops, rng)
    check_forward(tree, mech, qm, rng)


# (robot, floating, [(cut joint, joint of body a, joint of body b or None: the ground)])
ROBOT_LOOPS = [
    ("ur5", False, [(rbd.Spherical(), "wrist_3_joint", None)]),
    ("ur5", True, [(rbd.Fixed(), "wrist_3_joint", None)]),
    ("panda", False, [(rbd.Fixed(), "panda_joint7", None)]),
    ("panda", True, [(rbd.Spherical(), "panda_joint7", None),
                     (rbd.Spherical(), "panda_joint4", None)]),
    ("talos", False, [(rbd.Fixed(), "arm_left_7_joint", None),
                      (rbd.Spherical(), "arm_right_7_joint", None)]),
    ("talos", True, [(rbd.Fixed(), "leg_left_6_joint", None),
                     (rbd.Fixed(), "leg_right_6_joint", None),        # standing on both feet
                     (rbd.Spherical(), "arm_left_7_joint", "arm_right_7_joint")]),  # a bar
]


def robot_id(case):
    return f"{case[0]}-{'floating' if case[1] else 'fixed'}"


@pytest.mark.parametrize("case", ROBOT_LOOPS, ids=[robot_id(c) for c in ROBOT_LOOPS])
def test_loop_forward_dynamics_matches_constraint_dynamics_on_robots(case):
    name, floating, spec = case
    r = robot(name, floating)
    rng = rng_for("forward", name, floating)
    q = rbd.random_q(r.model, rng)
    loops = [(joint, body(r.model, a), body(r.model, b) if b else 0) for joint, a, b in spec]
    mech, qm = close_loops(r.model, q, loops, rng)
    check_forward(r, mech, qm, rng)


# ------------------------------------------------ (b) chapter 5: connect vs impulseDynamics

def check_connection(r, mech, q, rng, joint, a, b):
    """``connect`` a to b (0: the ground) by ``joint`` while ``mech`` moves; Pinocchio's
    impulse with every loop of the new mechanism (old loops at rest) and restitution 0."""
    model = r.model
    qd = cc.reduction(mech, q, rng.normal(size=mech.model.nv)).qd if mech.loops else \
        rng.normal(size=model.nv)
    X0 = rbd.forward_kinematics(mech.model, q)
    Xb = random_frame(rng) @ X0[a] if b == 0 else random_frame(rng)
    con = cc.connect(mech, q, qd, a, b, joint, Xb, name="new")
    results, J, _ = pinocchio_constrained("impulse", r, con.mech, con.q, qd)
    rows_new = 6 if isinstance(joint, rbd.Fixed) else 3
    assert np.linalg.matrix_rank(J) == J.shape[0]              # independent constraints
    assert np.abs(J[-rows_new:] @ qd[:model.nv]).max() > 0.1   # the new loop does close fast
    # rbdlearn's post-impact velocity keeps Pinocchio's constraints
    assert np.abs(J @ con.qd[:model.nv]).max() < 1e-9 * np.abs(qd).max()
    # F₁ follows seed 004 eq. (29): A Δθ̇ = −J₁ᵀ F₁, so link a receives −F₁; Pinocchio's λ
    # is the impulse link a (joint 1) receives. A point connection passes no moment.
    F = -con.F
    if rows_new == 3:
        assert np.abs(F[:3]).max() < 1e-9 * np.abs(F).max()
        F = F[3:]
    assert np.abs(F).max() > 1e-3
    assert len(results) == (2 if b == 0 and all(lp.real == 0 for lp in mech.loops) else 1)
    for algorithm, qd_after, lam in results:
        assert rel_err(con.qd[:model.nv], qd_after) < TOL, f"q̇ after, {algorithm}"
        assert rel_err(F, lam[-1]) < TOL, f"the connection impulse, {algorithm}"


@pytest.mark.parametrize("where", ["weld-to-ground", "point-between-bodies"])
def test_connect_matches_impulse_dynamics_on_random_trees(tree, where):
    """A tree already closed by a point loop connects a weld to the ground, or a point
    between two bodies."""
    model, rng = tree.model, rng_for("impulse", tree.seed, where)
    q = rbd.random_q(model, rng)
    (c, d), = best_pairs(model, 1, to_ground=False)
    mech, qm = close_loops(model, q, [(rbd.Spherical(), c, d)], rng)
    (a, b), = best_pairs(model, 1, where == "weld-to-ground", taken=[(c, d)])
    joint = rbd.Fixed() if where == "weld-to-ground" else rbd.Spherical()
    check_connection(tree, mech, qm, rng, joint, a, b)


# (robot, floating, loops already closed (as in ROBOT_LOOPS), the new connection)
ROBOT_IMPACTS = [
    ("ur5", False, [], (rbd.Spherical(), "wrist_3_joint", None)),         # the tool hits
    ("panda", False, [], (rbd.Fixed(), "panda_joint7", None)),            # a weld catches it
    ("talos", True, [(rbd.Fixed(), "leg_left_6_joint", None)],            # the right foot
     (rbd.Fixed(), "leg_right_6_joint", None)),                           # lands
    ("talos", True, [(rbd.Fixed(), "leg_left_6_joint", None),
                     (rbd.Fixed(), "leg_right_6_joint", None)],            # standing, the
     (rbd.Spherical(), "arm_left_7_joint", "arm_right_7_joint")),         # hands clap
]


@pytest.mark.parametrize("case", ROBOT_IMPACTS,
                         ids=[f"{robot_id(c)}-{c[3][1]}" for c in ROBOT_IMPACTS])
def test_connect_matches_impulse_dynamics_on_robots(case):
    name, floating, spec, (joint, a, b) = case
    r = robot(name, floating)
    rng = rng_for("impulse", name, floating, a)
    q = rbd.random_q(r.model, rng)
    loops = [(j, body(r.model, x), body(r.model, y) if y else 0) for j, x, y in spec]
    mech, qm = close_loops(r.model, q, loops, rng)
    check_connection(r, mech, qm, rng, joint, body(r.model, a),
                     body(r.model, b) if b else 0)


# --------------------------------------- (a) chapter 4: a hand on a surface vs forwardDynamics

def check_hand_on_surface(r, a, point, shape, rng, damping=0.7):
    """The frictionless hand (point ``point`` of body a) on a floor or a sphere through
    it: ``constrained.forward_dynamics`` against ``pinocchio.forwardDynamics`` with the
    unit-normal row n̂ᵀJ_p and the drift ((d∇C/dt)·ṙ + ∇C·J̇_p q̇)/|∇C| (eq. 22) from
    Pinocchio's frame Jacobian and classical acceleration."""
    model = r.model
    q = rbd.random_q(model, rng)
    R, o = rbd.body_pose(rbd.forward_kinematics(model, q)[a])
    hand = o + R @ point
    if shape == "floor":
        surface = ch4.floor(hand[2])
    else:
        centre = hand - rng.uniform(0.3, 1.0) * exp_so3(rng.normal(size=3))[:, 0]
        surface = ch4.sphere(centre, np.linalg.norm(hand - centre))
    arm = ch4.ConstrainedArm(model, a, point, surface, damping=damping, friction=0.0)
    qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    g = ch4.contact_state(arm, q, qd)
    row = g.grad @ g.J
    qd = qd - row * (row @ qd) / (row @ row)                  # sliding along the surface
    fd = ch4.forward_dynamics(arm, q, qd, tau)

    pm = r.pm.copy()                                          # a frame at the hand
    joint, placement = anchor(model, pm, a)
    fid = pm.addFrame(pin.Frame("hand", joint, placement * pin.SE3(np.eye(3), point),
                                pin.FrameType.OP_FRAME))
    pd = pm.createData()
    qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd)
    pin.forwardKinematics(pm, pd, qp, vp, np.zeros(pm.nv))
    pin.computeJointJacobians(pm, pd, qp)
    pin.updateFramePlacements(pm, pd)
    Jp = pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
    acc = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED).linear
    r_p, rd_p = pd.oMf[fid].translation, Jp @ vp
    assert rel_err(r_p, hand) < TOL
    grad = surface.grad(r_p)
    norm = np.linalg.norm(grad)
    row_p = (grad @ Jp / norm)[None, :]
    drift = np.array([(surface.grad_dot(r_p, rd_p) @ rd_p + grad @ acc) / norm])
    assert abs(row_p @ vp).max() < 1e-10 and np.abs(rd_p).max() > 0.1   # slides, on it
    taup = interop.v_to_pin(model, pm, tau - arm.damping * qd)           # D q̇ (eq. 9)
    qdd_p = interop.v_from_pin(model, pm, pin.forwardDynamics(pm, pd, qp, vp, taup,
                                                              row_p, drift))
    assert rel_err(fd.qdd, qdd_p) < TOL, "q̈"
    assert rel_err(fd.f_n, pd.lambda_c[0]) < TOL and abs(fd.f_n) > 1e-3, "f_n"
    assert rel_err(ch4.forward_dynamics_kkt(arm, q, qd, tau)[0], qdd_p) < TOL
    # the normal response A = ∇Cᵀ J_p H⁻¹ J_pᵀ ∇C (eq. 20 with K = 0), by Pinocchio's H⁻¹
    row = (grad @ Jp)[None, :]
    assert product_err([[fd.A]], row, pinocchio_Minv(pm, qp), row) < TOL, "A"


def test_hand_on_surface_matches_pinocchio_on_random_trees(tree):
    """The deepest body's point on a floor (even seeds) or a sphere (odd seeds)."""
    shape = ("floor", "sphere")[tree.seed % 2]
    model = tree.model
    a = max(range(1, model.N + 1), key=lambda i: path_dof(model, i, 0))
    rng = rng_for("hand", tree.seed, shape)
    check_hand_on_surface(tree, a, rng.uniform(-0.3, 0.3, 3), shape, rng)


@pytest.mark.parametrize("n_links", [2, 3])
def test_chapter_arm_on_the_floor_matches_pinocchio(n_links):
    """The chapter's own arms (PlanarArmOnFloor: its damping, gravity 9.8, the hand at the
    tip of the last link); the floor through the hand."""
    arm = ch4.PlanarArmOnFloor(n_links)
    pm = interop.to_pinocchio(arm.model)
    r = types.SimpleNamespace(model=arm.model, pm=pm, P=pin_velocity_map(arm.model, pm))
    check_hand_on_surface(r, arm.body, arm.point, "floor", rng_for("arm", n_links),
                          damping=arm.damping)


ROBOT_HANDS = [("ur5", False, "wrist_3_joint"), ("ur5", True, "wrist_3_joint"),
               ("panda", False, "panda_joint7"), ("talos", True, "arm_left_7_joint")]


@pytest.mark.parametrize("shape", ["floor", "sphere"])
@pytest.mark.parametrize("case", ROBOT_HANDS, ids=[robot_id(c) for c in ROBOT_HANDS])
def test_hand_on_surface_matches_pinocchio_on_robots(case, shape):
    name, floating, joint = case
    r = robot(name, floating)
    rng = rng_for("hand", name, floating, shape)
    check_hand_on_surface(r, body(r.model, joint), rng.uniform(-0.1, 0.1, 3), shape, rng)


# ------------------------------------- (c) chapter 2: Λ_ji = J_j H⁻¹ J_iᵀ vs computeMinverse

def pinocchio_responses(r, q):
    """(H⁻¹ in rbdlearn's layout, local body Jacobians J_i [angular; linear]) by
    Pinocchio's computeMinverse and getFrameJacobian(LOCAL)."""
    model, pm = r.model, r.pm
    pd = pm.createData()
    qp = interop.q_to_pin(model, pm, q)
    Minv = pinocchio_Minv(pm, qp)
    pin.computeJointJacobians(pm, pd, qp)
    pin.updateFramePlacements(pm, pd)
    J = [None]
    for i in range(1, model.N + 1):
        anchor(model, pm, i)                                       # the frame exists
        fid = pm.getFrameId(model.body_names[i], pin.FrameType.BODY)
        Jp = pin.getFrameJacobian(pm, pd, fid, pin.LOCAL) @ r.P
        J.append(np.vstack([Jp[3:], Jp[:3]]))
    assert np.array_equal(r.P.T @ r.P, np.eye(model.nv))       # P is a signed permutation
    return r.P.T @ Minv @ r.P, J


def check_inter_body_inertia(r, q):
    model = r.model
    Hinv, J = pinocchio_responses(r, q)
    T_Theta = rbd.theta_recursion(model, q)
    norm_H = np.linalg.norm(Hinv, 2)
    norm_J = [None] + [np.linalg.norm(Ji, 2) for Ji in J[1:]]
    worst, scale, coupled = 0.0, 0.0, 0
    for i in range(1, model.N + 1):
        for j in range(1, model.N + 1):
            norms = [norm_J[j], norm_H, norm_J[i]]
            Lambda = rbd.inter_body_inertia(model, q, i, j, T_Theta)
            worst = max(worst, product_err(Lambda, J[j], Hinv, J[i], norms))
            expected = J[j] @ Hinv @ J[i].T
            scale = max(scale, np.abs(expected).max())
            coupled += i != j and np.abs(expected).max() > 1e-6
        # Θ_i is body i's response to its own bias force δẐ_i = −δf: Θ_i = −Λ_ii
        worst = max(worst, product_err(-T_Theta[1][i], J[i], Hinv, J[i],
                                       [norm_J[i], norm_H, norm_J[i]]))
    assert scale > 1e-3 and coupled > model.N
    assert worst < TOL, f"Λ_ji vs Pinocchio's J_j H⁻¹ J_iᵀ: {worst:.3g}"


def test_inter_body_inertia_matches_pinocchio_on_random_trees(tree):
    check_inter_body_inertia(tree, rbd.random_q(tree.model, rng_for("theta", tree.seed)))


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_inter_body_inertia_matches_pinocchio_on_robots(name, floating):
    r = robot(name, floating)
    check_inter_body_inertia(r, rbd.random_q(r.model, rng_for("theta", name, floating)))


# ------------------------------ (b) chapter 2: contact_impulse vs impulseDynamics (point)

def check_contact_impulse(r, i, p, rng):
    """A frictionless impact (restitution 0 and 0.5) against the legacy
    ``impulseDynamics`` with the row n̂ᵀJ_p, and a sticking one (μ large, e = 0) against a
    CONTACT_3D impulse; the point's inverse inertia K against J_p H⁻¹ J_pᵀ."""
    model, pm = r.model, r.pm
    q, qd = rbd.random_q(model, rng), rng.normal(size=model.nv)
    v = rbd.point_velocity(model, q, qd, i, p, frame="world")
    n = -v / np.linalg.norm(v) + 0.4 * rng.normal(size=3)     # approaching the ground
    n /= np.linalg.norm(n)
    assert n @ v < -0.1
    qp, vp = interop.q_to_pin(model, pm, q), interop.v_to_pin(model, pm, qd)
    joint, placement = anchor(model, pm, i)
    R, o = rbd.body_pose(rbd.forward_kinematics(model, q)[i])
    contact = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, joint,
                                       placement * pin.SE3(np.eye(3), p), 0,
                                       pin.SE3(R, o + R @ p), pin.LOCAL_WORLD_ALIGNED)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    cms.append(contact)
    cds.append(contact.createData())
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, cms, cds)
    exact = pin.ProximalSettings(1e-12, 0.0, 1)
    pin.constraintDynamics(pm, pd, qp, vp, 0 * vp, cms, cds, exact)
    Jp = pin.getConstraintsJacobian(pm, pd, cms, cds)          # world axes, at the point
    vp_stick = pin.impulseDynamics(pm, pd, qp, vp, cms, cds, 0.0, exact)

    stick = rbd.contact_impulse(model, q, qd, i, p, n, e=0.0, mu=1e6)
    assert stick.mode == "stick"
    assert product_err(stick.K, Jp, pinocchio_Minv(pm, qp), Jp) < TOL, "K"
    assert rel_err(qd + stick.dqd, interop.v_from_pin(model, pm, vp_stick)) < TOL
    assert rel_err(stick.P, np.array(cds[0].contact_force.linear)) < TOL
    for e in (0.0, 0.5):
        normal = rbd.contact_impulse(model, q, qd, i, p, n, e=e, mu=0.0)
        assert normal.mode == "normal"
        pd = pm.createData()
        vp_after = pin.impulseDynamics(pm, pd, qp, vp, (n @ Jp)[None, :], e)
        assert rel_err(qd + normal.dqd, interop.v_from_pin(model, pm, vp_after)) < TOL
        assert rel_err(normal.P, n * pd.impulse_c[0]) < TOL and pd.impulse_c[0] > 1e-3


def test_contact_impulse_matches_pinocchio_on_random_trees(tree):
    model, rng = tree.model, rng_for("contact", tree.seed)
    i = max(range(1, model.N + 1), key=lambda k: path_dof(model, k, 0))
    check_contact_impulse(tree, i, rng.uniform(-0.3, 0.3, 3), rng)


@pytest.mark.parametrize("case", [("ur5", False, "wrist_3_joint"),
                                  ("talos", True, "leg_right_6_joint")],
                         ids=["ur5-fixed-tool", "talos-floating-foot"])
def test_contact_impulse_matches_pinocchio_on_robots(case):
    name, floating, joint = case
    r = robot(name, floating)
    rng = rng_for("contact", name, floating)
    check_contact_impulse(r, body(r.model, joint), np.array([0.05, -0.03, -0.1]), rng)
