"""The 3-D scenes of chapters 4 and 5 (issue 29): the arrays their builders compute in
rbdlearn.widgets (forces at the hand of the sliding arm, frames of a closed chain's run
with its loops) against independent computations."""

import numpy as np
import pytest

import rbdlearn as rbd
import rbdlearn.constrained as cn
from rbdlearn import closed_chains as cc
from rbdlearn import widgets


# ----------------------------------------------------------------- chapter 4: the arm
@pytest.fixture(scope="module")
def arm_run():
    return cn.floor_arm_run((0.0, -1.225), 0.1, 0.966, t_end=0.3, dt=0.02)


def test_floor_arm_contact_is_the_solvers_force(arm_run):
    arm, traj = arm_run
    c = widgets.floor_arm_contact(arm, traj)
    # the floor's normal is e_z: the normal force is [0, 0, f_n] of the run
    assert np.array_equal(c["normal"], np.column_stack([0 * traj.f_n, 0 * traj.f_n,
                                                        traj.f_n]))
    assert np.array_equal(c["friction"], traj.f_t) and np.array_equal(c["r"], traj.r)
    # the hand is on the floor: the contact point is the hand of each posture
    hands = np.array([arm.hand(q) for q in traj.q])
    assert np.allclose(c["r"], hands, atol=1e-14) and np.abs(c["r"][:, 2]).max() < 1e-12
    # at rest (t = 0) no friction; afterwards the hand slides and |f_t| = K f_n,
    # against the hand's motion (central differences of its position)
    assert not c["sliding"][0] and c["sliding"][1:].all()
    assert np.abs(c["friction"][0]).max() == 0.0
    f_t = np.linalg.norm(c["friction"], axis=1)
    assert np.allclose(f_t[1:], 0.1 * traj.f_n[1:], rtol=1e-12)
    velocity = (traj.r[2:] - traj.r[:-2]) / (2 * 0.02)
    assert np.all(np.einsum("ij,ij->i", velocity, c["friction"][1:-1]) < 0)


def test_floor_arm_readout_says_what_the_frame_shows(arm_run):
    arm, traj = arm_run
    c = widgets.floor_arm_contact(arm, traj)
    lines = widgets.floor_arm_readout(c, 0.1, traj.t)
    assert len(lines) == len(traj.t)
    assert "at rest" in lines[0] and "sliding" in lines[3]
    k = 5
    assert f"f_n = {traj.f_n[k]:.3f} N" in lines[k]
    assert f"|f_t| = {np.linalg.norm(traj.f_t[k]):.4f} N" in lines[k]
    assert f"K·f_n = {0.1 * traj.f_n[k]:.4f} N" in lines[k]


# ------------------------------------------------------- chapter 5: a run with a cut
@pytest.fixture(scope="module")
def four_bar_phases():
    """A four-bar swinging under gravity whose loop is cut at 0.2 s: two phases."""
    mech = cc.four_bar()
    q0 = cc.assemble(mech, np.array([1.0, -0.6, 1.9, 0.0]),
                     cc.choose_split(mech, np.array([1.0, -0.6, 1.9, 0.0]),
                                     independent=[0]))
    run = cc.simulate(mech, q0, np.zeros(mech.model.nv), 0.2, 0.01)
    cut, x, v = cc.cut(mech, run.q[-1], run.qd[-1], "four-bar")
    free = rbd.simulate(cut.model, x, v, 0.2, 0.01)
    return [dict(mech=mech, t=run.t, Q=list(run.q), label="closed"),
            dict(mech=cut, t=0.2 + free.t, Q=list(free.q), label="cut")]


def test_swing_frames_follow_the_run_and_its_loops(four_bar_phases):
    closed, cut = four_bar_phases
    fr = widgets.swing_frames(four_bar_phases, step=0.05)
    assert np.allclose(fr["t"], np.arange(0, 0.41, 0.05), atol=1e-12)
    assert fr["label"] == ["closed"] * 5 + ["cut"] * 4
    # the real bodies' coordinates: the first three joints of either model
    k = 2                                                # t = 0.1 s, closed
    assert np.array_equal(fr["q"][k], closed["Q"][10][:3])
    assert np.array_equal(fr["q"][7], cut["Q"][15][:3])  # t = 0.35 s, cut
    # the loop-closure error is the run's loop residual, zero-size after the cut
    assert fr["residual"][k] == np.abs(cc.loop_residual(closed["mech"], closed["Q"][10])).max()
    assert fr["residual"].max() < 1e-9 and np.all(fr["residual"][5:] == 0)
    loop = fr["loops"]["four-bar"]
    assert loop["closed"].tolist() == [True] * 5 + [False] * 4
    # the cut joint: the rocker's tip (a point of link 3, 1.5 m along it) while closed,
    # meeting the ground pivot at y = 2; after the cut the ground pivot stays put
    X0 = rbd.forward_kinematics(closed["mech"].model, closed["Q"][10])
    R, p = rbd.kinematics.body_pose(X0[3])
    assert np.allclose(loop["joint"][k], p + R @ [0, 1.5, 0], atol=1e-12)
    assert np.allclose(loop["real"], [0, 2.0, 0], atol=1e-12)
    assert np.allclose(loop["joint"][:5], loop["real"][:5], atol=1e-9)
    assert np.allclose(loop["anchor"], 0.0)              # the real link is the ground
    X0 = rbd.forward_kinematics(cut["mech"].model, cut["Q"][15])
    R, p = rbd.kinematics.body_pose(X0[3])
    assert np.linalg.norm(p + R @ [0, 1.5, 0] - [0, 2, 0]) > 1e-3   # it has come apart


# ------------------------------------------------------------ shapes of the book's models
def test_box_of_inertia_inverts_a_uniform_box():
    model, _ = rbd.models.box(3.0, (0.6, 0.4, 0.2))
    size, centre = widgets.box_of_inertia(model.I[1])
    assert np.allclose(size, [0.6, 0.4, 0.2], atol=1e-12) and np.allclose(centre, 0)
    shifted = rbd.spatial.mcI(2.0, [0.1, 0, 0.3], 2.0 / 12 * np.diag([0.05, 0.1, 0.13]))
    size, centre = widgets.box_of_inertia(shifted)
    assert np.allclose(size ** 2, [0.09, 0.04, 0.01]) and np.allclose(centre, [0.1, 0, 0.3])
    tilted = rbd.spatial.mcI(1.0, [0, 0, 0], rbd.spatial.rotz(0.3) @ np.diag([1, 2, 2.5])
                             @ rbd.spatial.rotz(0.3).T)
    with pytest.raises(rbd.RbdlearnError, match="not diagonal"):
        widgets.box_of_inertia(tilted)


def test_tree_shapes_follow_the_segments():
    arm = cn.PlanarArmOnFloor(2)                      # links of 0.5 m and 1 kg, along y
    shapes = widgets.tree_shapes(arm.model, tips={2: arm.point}, joints=True)
    capsule, joint = shapes[1]
    r = np.sqrt(1.0 / (1000 * np.pi * 0.5))          # water: 1 kg over 0.5 m
    assert capsule["type"] == "capsule" and np.isclose(capsule["radius"], r)
    # from joint 1 to joint 2: centred at 0.25 m along y, its ends rounded on the joints
    assert np.isclose(capsule["length"] + 2 * r, 0.5)
    R = rbd.spatial.quat_to_rot(np.array(capsule["origin"][3:]))
    assert np.allclose(capsule["origin"][:3], [0, 0.25, 0]) and np.allclose(R[:, 2], [0, 1, 0])
    # a revolute joint: a cylinder along its axis (x)
    R = rbd.spatial.quat_to_rot(np.array(joint["origin"][3:]))
    assert joint["type"] == "cylinder" and np.allclose(np.abs(R[:, 2]), [1, 0, 0])
    assert shapes[2][0]["origin"][:3] == pytest.approx([0, 0.25, 0])   # to the hand point
    # the figure: boxes where asked, ball joints as spheres, massless links markers only
    triples, tips = rbd.models.human_figure_40(spherical=False)
    shapes = widgets.tree_shapes(triples, tips, boxes=("pelvis", "chest"), joints=True)
    pelvis = triples.body_names.index("pelvis")
    assert [s["type"] for s in shapes[pelvis]] == ["box"]
    link = triples.body_names.index("l_upper_arm_z_link")
    assert [s["type"] for s in shapes[link]] == ["cylinder"]
    assert not any(s["type"] == "sphere" for v in shapes.values() for s in v)


# ----------------------------------------------------------------------- the scenes
def test_floor_arm_scene_runs_and_forces():
    scene, runs = widgets.floor_arm_scene(frictions=(0.0, 0.2), t_end=0.2, dt=0.02,
                                          every=2, index=0)
    assert scene.R == 2 and scene.F == 6 and list(scene.param[1]) == [0.0, 0.2]
    names = [b["name"] for b in scene.bodies]
    for r, (arm, traj, contact) in enumerate(runs):
        assert arm.friction == [0.0, 0.2][r]
        poses, scales = scene.poses(r), scene.scales(r)
        b = names.index("friction force f_t")
        drawn = rbd.spatial.quat_to_rot(poses[:, b, 3:])[:, :, 2] * scales[:, b, 2:]
        assert np.allclose(drawn, 0.1 * traj.f_t[::2], atol=1e-12)
        b = names.index("normal force n̂ f_n")
        assert np.allclose(scales[:, b, 2], 0.03 * traj.f_n[::2])
        # the links where forward kinematics puts them
        X0 = rbd.forward_kinematics(arm.model, traj.q[::2])
        assert np.allclose(poses[:, names.index("link2"), :3],
                           rbd.kinematics.body_pose(X0[2])[1], atol=1e-12)
    assert np.abs(runs[0][1].f_t).max() == 0 < np.abs(runs[1][1].f_t).max()
    json_runs = scene.to_json()["runs"]
    assert [len(r["readout"]) for r in json_runs] == [6, 6]


def test_swing_scene_on_a_four_bar(four_bar_phases):
    """The swing's builder needs a figure; its frames and loops are tested above. Here
    the model of the real bodies it draws: the virtual open chain without its virtual
    links, posed by the first coordinates of every phase."""
    mech = four_bar_phases[0]["mech"]
    real = widgets.real_bodies(mech)
    assert real.N == mech.model.N - 1 == 3 and real.nq == 3
    q = four_bar_phases[1]["Q"][5]
    X_real = rbd.forward_kinematics(real, q[:3])
    X_cut = rbd.forward_kinematics(four_bar_phases[1]["mech"].model, q)
    assert all(np.allclose(X_real[i], X_cut[i]) for i in range(1, 4))


def test_posture_path_and_revolute_triples():
    model, tips = rbd.models.human_figure_40()
    triples, _ = rbd.models.human_figure_40(spherical=False)
    q1 = rbd.random_q(model, np.random.default_rng(4))
    s, Q = widgets.posture_path(model, q1, 5)
    assert np.allclose(s, [0, 0.25, 0.5, 0.75, 1])
    assert np.allclose(Q[0], rbd.neutral_q(model))
    # the ends: neutral and q1 (a quaternion or its negative: the same rotation)
    X1, Xq = rbd.forward_kinematics(model, Q[-1]), rbd.forward_kinematics(model, q1)
    assert all(np.allclose(a, b, atol=1e-12) for a, b in zip(X1[1:], Xq[1:]))
    # half-way: each ball joint turned by half its rotation vector
    i = model.names.index("l_shoulder")
    w1 = rbd.spatial.log_so3(rbd.spatial.quat_to_rot(q1[model.q_slices[i]]))
    w_half = rbd.spatial.log_so3(rbd.spatial.quat_to_rot(Q[2][model.q_slices[i]]))
    assert np.allclose(w_half, w1 / 2, atol=1e-12)
    k = model.names.index("r_knee")
    assert np.isclose(Q[2][model.q_slices[k]][0], q1[model.q_slices[k]][0] / 2)
    # the revolute triples put every body where the ball joints do
    Qt = widgets.as_revolute_triples(model, triples, Q)
    for q, qt in zip(Q, Qt):
        A, B = rbd.forward_kinematics(model, q), rbd.forward_kinematics(triples, qt)
        for b in range(1, model.N + 1):
            j = triples.body_names.index(model.body_names[b])
            assert np.allclose(A[b], B[j], atol=1e-12)
    with pytest.raises(rbd.RbdlearnError, match="free, ball and revolute"):
        widgets.posture_path(rbd.models.planar_biped()[0], rbd.neutral_q(
            rbd.models.planar_biped()[0]), 3)


def test_figure13_scene_marks_each_joint():
    model, tips = rbd.models.human_figure_40()
    triples, _ = rbd.models.human_figure_40(spherical=False)
    q1 = rbd.neutral_q(model)
    q1[model.q_slices[model.names.index("r_elbow")]] = 1.0
    scene, s, Q, Qt = widgets.figure13_scene(model, triples, tips, q1, n=3, apart=0.9)
    assert scene.F == 3 and len(scene.models) == 2 and np.allclose(s, [1, 0.5, 0])
    feet = [scene.bodies.index(b) for b in scene.bodies
            if b.get("model") == 0 and b["name"].endswith("foot")]
    # the pose first, standing on the ground last: the lowest tip at z = 0
    assert np.allclose(Q[0][7:], q1[7:]) and np.allclose(Q[-1][7:], rbd.neutral_q(model)[7:])
    X0 = rbd.forward_kinematics(model, Q[-1])
    low = min((rbd.kinematics.body_pose(X0[i])[1]
               + rbd.kinematics.body_pose(X0[i])[0] @ t)[2] for i, t in tips.items())
    assert abs(low) < 1e-12 and len(feet) == 2
    # the twin figure 0.9 m to the side (−x), body for body
    poses = scene.poses(0)
    for b, body in enumerate(scene.bodies):
        if body.get("model") == 0:
            twin = next(c for c, o in enumerate(scene.bodies)
                        if o.get("model") == 1 and o["name"] == body["name"])
            assert np.allclose(poses[:, b, :3] - poses[:, twin, :3], [0.9, 0, 0])
    assert "twin bodies" in scene.readout[0][0][2]
